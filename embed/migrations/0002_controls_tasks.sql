-- The organization's controls and tasks. Frameworks, requirements, evidence
-- and their links extend these in later migrations.

CREATE TABLE controls (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    code TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'not_started'
        CHECK (status IN ('not_started', 'in_progress', 'implemented', 'not_applicable')),
    owner_id TEXT,
    justification TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX controls_org ON controls(organization_id, id);
CREATE INDEX controls_org_status ON controls(organization_id, status);

CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'todo'
        CHECK (status IN ('todo', 'in_progress', 'in_review', 'done', 'not_relevant', 'failed')),
    assignee_id TEXT,
    control_id TEXT REFERENCES controls(id),
    due_date TEXT,
    recurrence TEXT CHECK (recurrence IS NULL OR recurrence IN ('monthly', 'quarterly', 'yearly')),
    completed_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX tasks_org ON tasks(organization_id, id);
CREATE INDEX tasks_org_control ON tasks(organization_id, control_id);
CREATE INDEX tasks_org_assignee ON tasks(organization_id, assignee_id);
