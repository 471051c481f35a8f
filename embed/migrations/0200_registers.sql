-- The registers: risks, findings and their templates, corrective actions,
-- comments, attachments and CSRD/ESG data points.

CREATE TABLE risks (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    category TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'pending', 'closed')),
    inherent_probability TEXT NOT NULL,
    inherent_impact TEXT NOT NULL,
    residual_probability TEXT,
    residual_impact TEXT,
    score INTEGER NOT NULL CHECK (score BETWEEN 1 AND 25),
    treatment TEXT CHECK (treatment IS NULL OR treatment IN ('mitigate', 'accept', 'transfer', 'avoid')),
    treatment_description TEXT,
    owner_id TEXT,
    archived_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX risks_org ON risks(organization_id, id);
CREATE INDEX risks_org_status ON risks(organization_id, status, id);
CREATE INDEX risks_org_owner ON risks(organization_id, owner_id);
CREATE INDEX risks_org_score ON risks(organization_id, score);

CREATE TABLE risk_controls (
    organization_id TEXT NOT NULL,
    risk_id TEXT NOT NULL REFERENCES risks(id) ON DELETE CASCADE,
    control_id TEXT NOT NULL REFERENCES controls(id),
    PRIMARY KEY (risk_id, control_id)
) STRICT;
CREATE INDEX risk_controls_org_control ON risk_controls(organization_id, control_id);

CREATE TABLE finding_templates (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    title TEXT NOT NULL,
    content TEXT NOT NULL DEFAULT '',
    category TEXT NOT NULL DEFAULT '',
    type TEXT,
    severity TEXT,
    finding_class TEXT,
    sort_order INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX finding_templates_org ON finding_templates(organization_id, sort_order, id);

CREATE TABLE findings (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    type TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'in_review', 'resolved', 'closed')),
    severity TEXT NOT NULL CHECK (severity IN ('critical', 'high', 'medium', 'low', 'informational')),
    finding_class TEXT,
    content TEXT NOT NULL,
    title TEXT,
    description TEXT,
    source TEXT,
    task_id TEXT,
    scope TEXT,
    template_id TEXT,
    cvss REAL,
    due_date TEXT,
    revision_note TEXT,
    created_by_type TEXT NOT NULL,
    created_by_id TEXT NOT NULL,
    closed_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX findings_org ON findings(organization_id, id);
CREATE INDEX findings_org_status ON findings(organization_id, status, severity, id);
CREATE INDEX findings_org_severity ON findings(organization_id, severity, id);
CREATE INDEX findings_org_type ON findings(organization_id, type, id);
CREATE INDEX findings_org_task ON findings(organization_id, task_id, id);

CREATE TABLE finding_controls (
    organization_id TEXT NOT NULL,
    finding_id TEXT NOT NULL REFERENCES findings(id) ON DELETE CASCADE,
    control_id TEXT NOT NULL REFERENCES controls(id),
    PRIMARY KEY (finding_id, control_id)
) STRICT;
CREATE INDEX finding_controls_org_control ON finding_controls(organization_id, control_id, finding_id);

CREATE TABLE corrective_actions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    finding_id TEXT NOT NULL REFERENCES findings(id),
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('open', 'in_progress', 'resolved', 'overdue')),
    priority TEXT NOT NULL CHECK (priority IN ('critical', 'high', 'medium', 'low')),
    owner_id TEXT,
    due_date TEXT,
    closure_note TEXT,
    closure_attachment_ids TEXT NOT NULL DEFAULT '[]',
    resolved_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX corrective_actions_org_finding ON corrective_actions(organization_id, finding_id, id);
CREATE INDEX corrective_actions_due ON corrective_actions(status, due_date);

CREATE TABLE comments (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    entity_type TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    content TEXT NOT NULL,
    author_type TEXT NOT NULL,
    author_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX comments_org_entity ON comments(organization_id, entity_type, entity_id, id);

CREATE TABLE attachments (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    entity_type TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    name TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    uploaded_by_type TEXT NOT NULL,
    uploaded_by_id TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX attachments_org_entity ON attachments(organization_id, entity_type, entity_id, id);

CREATE TABLE esg_data_points (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    esrs_code TEXT NOT NULL,
    standard TEXT NOT NULL,
    data_point_id TEXT NOT NULL DEFAULT '',
    value REAL NOT NULL,
    unit TEXT NOT NULL DEFAULT '',
    period TEXT NOT NULL,
    methodology TEXT NOT NULL DEFAULT '',
    notes TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (organization_id, esrs_code, data_point_id, period)
) STRICT;
CREATE INDEX esg_data_points_org ON esg_data_points(organization_id, standard, period, id);
