-- Findings bound to tasks: a finding a failing check opened (or keeps
-- open) is linked to the tasks the check is mapped to (the newest task of
-- each series of the check's controls, unless the task disconnected the
-- check). A link table, so the findings table stays as it is. No foreign
-- key to findings: a finding is never deleted while its links matter, and
-- the link goes with its task.
CREATE TABLE finding_tasks (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    finding_id TEXT NOT NULL,
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    connection_id TEXT NOT NULL DEFAULT '',
    check_id TEXT NOT NULL DEFAULT '',
    linked_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, finding_id, task_id)
) STRICT;
CREATE INDEX finding_tasks_task ON finding_tasks(organization_id, task_id);
