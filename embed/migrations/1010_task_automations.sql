-- Task automations: sandboxed Starlark scripts that collect a task's
-- evidence, their immutable script versions and their runs.
CREATE TABLE task_automations (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    is_enabled INTEGER NOT NULL DEFAULT 1 CHECK (is_enabled IN (0, 1)),
    evaluation_criteria TEXT NOT NULL DEFAULT '',
    schedule_frequency TEXT CHECK (schedule_frequency IN ('daily', 'weekly', 'monthly', 'quarterly', 'yearly')),
    hosts TEXT NOT NULL DEFAULT '[]',
    template_id TEXT,
    pinned_version INTEGER,
    latest_version INTEGER NOT NULL DEFAULT 0,
    last_run_at TEXT,
    last_run_status TEXT,
    next_run_at TEXT,
    evidence_id TEXT,
    finding_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX task_automations_task ON task_automations(organization_id, task_id, created_at);
CREATE INDEX task_automations_due ON task_automations(next_run_at) WHERE next_run_at IS NOT NULL AND is_enabled = 1;

CREATE TABLE task_automation_versions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    automation_id TEXT NOT NULL REFERENCES task_automations(id) ON DELETE CASCADE,
    version INTEGER NOT NULL CHECK (version >= 1),
    script TEXT NOT NULL,
    changelog TEXT NOT NULL DEFAULT '',
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (automation_id, version)
) STRICT;
CREATE INDEX task_automation_versions_org ON task_automation_versions(organization_id, automation_id, version);

CREATE TABLE task_automation_runs (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    automation_id TEXT NOT NULL REFERENCES task_automations(id) ON DELETE CASCADE,
    task_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    trigger TEXT NOT NULL CHECK (trigger IN ('manual', 'scheduled')),
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed', 'interrupted')),
    evaluation_status TEXT CHECK (evaluation_status IN ('pass', 'fail')),
    evaluation_reason TEXT,
    stop_reason TEXT,
    error TEXT,
    result TEXT NOT NULL DEFAULT '{}',
    logs TEXT NOT NULL DEFAULT '[]',
    steps INTEGER NOT NULL DEFAULT 0,
    http_requests INTEGER NOT NULL DEFAULT 0,
    duration_ms INTEGER NOT NULL DEFAULT 0,
    evidence_id TEXT,
    finding_id TEXT,
    requested_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT
) STRICT;
CREATE INDEX task_automation_runs_task ON task_automation_runs(organization_id, task_id, created_at);
CREATE INDEX task_automation_runs_auto ON task_automation_runs(organization_id, automation_id, created_at);
CREATE INDEX task_automation_runs_status ON task_automation_runs(status, created_at);
-- One pending or running run per automation at a time.
CREATE UNIQUE INDEX task_automation_runs_one_active ON task_automation_runs(automation_id)
    WHERE status IN ('pending', 'running');
