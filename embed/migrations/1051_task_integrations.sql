-- Task integrations: the checks a person disconnected from a task (their
-- results no longer attach evidence to it), the runs requested for a task,
-- and the evidence a check keeps on a task (replaced by each passing run).
CREATE TABLE integration_task_disabled_checks (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    connection_id TEXT NOT NULL REFERENCES integration_connections(id) ON DELETE CASCADE,
    check_id TEXT NOT NULL,
    disabled_by TEXT NOT NULL,
    disabled_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, task_id, connection_id, check_id)
) STRICT;

CREATE TABLE integration_task_runs (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    run_id TEXT NOT NULL REFERENCES integration_check_runs(id) ON DELETE CASCADE,
    PRIMARY KEY (organization_id, task_id, run_id)
) STRICT;

CREATE TABLE integration_task_evidence (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    connection_id TEXT NOT NULL REFERENCES integration_connections(id) ON DELETE CASCADE,
    check_id TEXT NOT NULL,
    evidence_id TEXT NOT NULL,
    PRIMARY KEY (organization_id, task_id, connection_id, check_id)
) STRICT;
