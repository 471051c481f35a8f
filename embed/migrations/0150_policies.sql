-- Policies with their immutable published versions, acknowledgements and
-- control links; organization variables substituted on publish; the
-- organization's context (ISO/IEC 27001 clause 4) with every saved version.

CREATE TABLE policies (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    content TEXT NOT NULL DEFAULT '',
    frequency TEXT CHECK (frequency IS NULL OR frequency IN ('monthly', 'quarterly', 'yearly')),
    department TEXT,
    is_required_to_sign INTEGER NOT NULL DEFAULT 1,
    review_date TEXT,
    assignee_id TEXT,
    approver_id TEXT,
    current_version_id TEXT,
    current_version INTEGER NOT NULL DEFAULT 0,
    last_published_at TEXT,
    has_unpublished_changes INTEGER NOT NULL DEFAULT 1,
    archived_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX policies_org ON policies(organization_id, id);
CREATE INDEX policies_org_assignee ON policies(organization_id, assignee_id);

-- A published version never changes: the triggers refuse updates and deletes.
CREATE TABLE policy_versions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    policy_id TEXT NOT NULL REFERENCES policies(id),
    version INTEGER NOT NULL CHECK (version >= 1),
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    source TEXT NOT NULL,
    content TEXT NOT NULL,
    content_sha256 TEXT NOT NULL,
    variables TEXT NOT NULL DEFAULT '{}',
    unresolved_variables TEXT NOT NULL DEFAULT '[]',
    changelog TEXT NOT NULL DEFAULT '',
    published_by_type TEXT NOT NULL,
    published_by_id TEXT NOT NULL,
    published_at TEXT NOT NULL,
    UNIQUE (policy_id, version)
) STRICT;
CREATE INDEX policy_versions_org_policy ON policy_versions(organization_id, policy_id, version);
CREATE TRIGGER policy_versions_no_update BEFORE UPDATE ON policy_versions
BEGIN SELECT RAISE(ABORT, 'a published policy version is immutable'); END;
CREATE TRIGGER policy_versions_no_delete BEFORE DELETE ON policy_versions
BEGIN SELECT RAISE(ABORT, 'a published policy version is immutable'); END;

CREATE TABLE policy_acknowledgements (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    policy_id TEXT NOT NULL REFERENCES policies(id),
    version_id TEXT NOT NULL REFERENCES policy_versions(id),
    version INTEGER NOT NULL,
    person_id TEXT NOT NULL,
    acknowledged_at TEXT NOT NULL,
    UNIQUE (version_id, person_id)
) STRICT;
CREATE INDEX policy_acks_org_policy_person ON policy_acknowledgements(organization_id, policy_id, person_id, version);

CREATE TABLE policy_controls (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    policy_id TEXT NOT NULL REFERENCES policies(id),
    control_id TEXT NOT NULL REFERENCES controls(id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, policy_id, control_id)
) WITHOUT ROWID, STRICT;
CREATE INDEX policy_controls_org_control ON policy_controls(organization_id, control_id);

CREATE TABLE variables (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (organization_id, name)
) STRICT;

-- Every saved version of the context; the highest version is the current one.
CREATE TABLE context_versions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    version INTEGER NOT NULL CHECK (version >= 1),
    document TEXT NOT NULL,
    change_note TEXT NOT NULL DEFAULT '',
    saved_by_type TEXT NOT NULL,
    saved_by_id TEXT NOT NULL,
    saved_at TEXT NOT NULL,
    UNIQUE (organization_id, version)
) STRICT;
CREATE TRIGGER context_versions_no_update BEFORE UPDATE ON context_versions
BEGIN SELECT RAISE(ABORT, 'a saved context version is immutable'); END;
