-- Frameworks, requirement-to-control links, evidence, task extensions,
-- evidence-task templates and the Statement of Applicability.
-- Built-in framework catalogs are compiled into the binary; these tables hold
-- what belongs to an organization.

-- Custom frameworks of an organization.
CREATE TABLE custom_frameworks (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    slug TEXT NOT NULL,
    name TEXT NOT NULL,
    short_name TEXT NOT NULL DEFAULT '',
    version TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (organization_id, slug)
) STRICT;
CREATE INDEX custom_frameworks_org ON custom_frameworks(organization_id, id);

-- Requirements an organization added: to its custom frameworks, or to a
-- built-in outline (MaRisk, NEN 7510) to extend it.
CREATE TABLE custom_requirements (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    framework_id TEXT NOT NULL,
    ref TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    parent_ref TEXT NOT NULL DEFAULT '',
    assessable INTEGER NOT NULL DEFAULT 1,
    position INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (organization_id, framework_id, ref)
) STRICT;
CREATE INDEX custom_requirements_org_fw ON custom_requirements(organization_id, framework_id, position);

-- Frameworks an organization has enabled.
CREATE TABLE organization_frameworks (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    framework_id TEXT NOT NULL,
    enabled_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, framework_id)
) STRICT;

-- Which control serves which requirement. A control serves requirements of
-- several frameworks (cross-framework mapping).
CREATE TABLE requirement_controls (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    framework_id TEXT NOT NULL,
    requirement_id TEXT NOT NULL,
    control_id TEXT NOT NULL REFERENCES controls(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, requirement_id, control_id)
) STRICT;
CREATE INDEX requirement_controls_org_fw ON requirement_controls(organization_id, framework_id, requirement_id);
CREATE INDEX requirement_controls_org_control ON requirement_controls(organization_id, control_id);

ALTER TABLE controls ADD COLUMN status_changed_at TEXT;

-- Evidence files; the content lives in the content-addressed file store.
CREATE TABLE evidence (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    control_id TEXT NOT NULL REFERENCES controls(id),
    task_id TEXT REFERENCES tasks(id) ON DELETE SET NULL,
    filename TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    expires_at TEXT,
    uploaded_by TEXT NOT NULL DEFAULT '',
    uploaded_at TEXT NOT NULL,
    expiring_notified_at TEXT,
    expired_processed_at TEXT
) STRICT;
CREATE INDEX evidence_org_control ON evidence(organization_id, control_id, id);
CREATE INDEX evidence_org_task ON evidence(organization_id, task_id);
CREATE INDEX evidence_expires ON evidence(expires_at);

ALTER TABLE tasks ADD COLUMN series_id TEXT;
ALTER TABLE tasks ADD COLUMN template_id TEXT;
ALTER TABLE tasks ADD COLUMN department TEXT;
ALTER TABLE tasks ADD COLUMN not_relevant_justification TEXT;
CREATE INDEX tasks_org_status ON tasks(organization_id, status);
CREATE INDEX tasks_org_due ON tasks(organization_id, due_date);

-- Evidence-task templates per requirement (Framework Editor Task Templates).
CREATE TABLE task_templates (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    framework_id TEXT NOT NULL,
    requirement_id TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    frequency TEXT CHECK (frequency IS NULL OR frequency IN ('monthly', 'quarterly', 'yearly')),
    department TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX task_templates_org_fw ON task_templates(organization_id, framework_id, id);

-- Statement of Applicability decisions; a requirement without a row is applicable.
CREATE TABLE soa_entries (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    framework_id TEXT NOT NULL,
    requirement_id TEXT NOT NULL,
    applicable INTEGER NOT NULL,
    justification TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, requirement_id)
) STRICT;
CREATE INDEX soa_entries_org_fw ON soa_entries(organization_id, framework_id);
