-- Security-awareness training: the organization's own modules (the
-- built-in catalog lives in the binary), the rules that make a module
-- required for everyone or a role, one assignment per person and module,
-- every attempt (passed, failed or acknowledged) and the evidence a
-- module's completions keep on the controls it maps to.

CREATE TABLE training_modules (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    title TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL CHECK (kind IN ('text', 'video', 'pdf')),
    version INTEGER NOT NULL,
    pass_mark INTEGER NOT NULL,
    duration_minutes INTEGER NOT NULL DEFAULT 0,
    -- sections, quiz (with its answer key) and mapped control ids, as JSON
    content TEXT NOT NULL,
    file_sha256 TEXT,
    file_name TEXT,
    file_type TEXT,
    file_size INTEGER,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX training_modules_org ON training_modules(organization_id, id);

-- A rule makes a module required for everyone (role '') or one role: new
-- people get it on joining and completions are renewed yearly.
CREATE TABLE training_rules (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    module_id TEXT NOT NULL,
    role TEXT NOT NULL,
    due_days INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, module_id, role)
) STRICT;

CREATE TABLE training_assignments (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    person_id TEXT NOT NULL REFERENCES users(id),
    module_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('assigned', 'overdue', 'completed')),
    due_date TEXT,
    required INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL,
    assigned_by TEXT NOT NULL,
    assigned_at TEXT NOT NULL,
    completed_at TEXT,
    completion_id TEXT,
    reminded_at TEXT,
    updated_at TEXT NOT NULL,
    UNIQUE (organization_id, person_id, module_id)
) STRICT;
CREATE INDEX training_assignments_org_module ON training_assignments(organization_id, module_id, status);
CREATE INDEX training_assignments_org_status ON training_assignments(organization_id, status, due_date);

-- Attempts are never changed: a failed attempt stays on record.
CREATE TABLE training_completions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    person_id TEXT NOT NULL REFERENCES users(id),
    module_id TEXT NOT NULL,
    module_title TEXT NOT NULL,
    module_version INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'acknowledged')),
    score INTEGER,
    pass_mark INTEGER NOT NULL,
    answers TEXT NOT NULL DEFAULT '[]',
    verification_code TEXT UNIQUE,
    completed_at TEXT NOT NULL
) STRICT;
CREATE INDEX training_completions_org_person ON training_completions(organization_id, person_id, completed_at);
CREATE INDEX training_completions_org_module ON training_completions(organization_id, module_id, completed_at);
CREATE TRIGGER training_completions_no_update BEFORE UPDATE ON training_completions
BEGIN SELECT RAISE(ABORT, 'training completions are immutable'); END;

-- The task and evidence that carry a module's completion summary on one
-- control; replaced when completion coverage changes.
CREATE TABLE training_evidence (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    module_id TEXT NOT NULL,
    control_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    evidence_id TEXT,
    refreshed_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, module_id, control_id)
) STRICT;
