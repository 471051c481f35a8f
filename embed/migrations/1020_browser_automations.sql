-- Browser automations on the appliance's local headless Chromium: the
-- organization's browser context (its persistent profile directory), auth
-- profiles (sealed credentials), automations of a task (declarative steps),
-- their runs with the screenshots each took, and drafts. Documents are kept
-- as JSON beside the columns queries filter on.

CREATE TABLE browser_contexts (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id),
    id TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE browser_auth_profiles (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    hostname TEXT NOT NULL,
    doc TEXT NOT NULL,
    -- sealed holds the username, password, TOTP seed and extra fields,
    -- encrypted with the data-dir key (never returned).
    sealed BLOB,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX browser_auth_profiles_org ON browser_auth_profiles(organization_id, id);

CREATE TABLE browser_automations (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    doc TEXT NOT NULL,
    -- next_run_at is when the scheduler runs it next (NULL: not scheduled).
    next_run_at TEXT,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX browser_automations_org ON browser_automations(organization_id, task_id, id);
CREATE INDEX browser_automations_due ON browser_automations(next_run_at) WHERE next_run_at IS NOT NULL;

CREATE TABLE browser_automation_runs (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    automation_id TEXT REFERENCES browser_automations(id) ON DELETE CASCADE,
    task_id TEXT,
    status TEXT NOT NULL,
    doc TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX browser_automation_runs_org ON browser_automation_runs(organization_id, automation_id, id);
CREATE INDEX browser_automation_runs_task ON browser_automation_runs(organization_id, task_id, id);
CREATE INDEX browser_automation_runs_status ON browser_automation_runs(status);

CREATE TABLE browser_run_screenshots (
    run_id TEXT NOT NULL REFERENCES browser_automation_runs(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    seq INTEGER NOT NULL,
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
) STRICT;
CREATE INDEX browser_run_screenshots_org ON browser_run_screenshots(organization_id, run_id);

CREATE TABLE browser_automation_drafts (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    doc TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX browser_automation_drafts_org ON browser_automation_drafts(organization_id, task_id, id);
