-- Directory sync: an organization's sync settings, the sync runs made
-- against its directory connections with the per-person changes of each,
-- and where each person of the register comes from (entered by hand or
-- managed by a directory) with their two-factor status.

CREATE TABLE sync_settings (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id),
    -- Provider slugs (NULL: none chosen).
    employee_provider TEXT,
    device_provider TEXT,
    two_factor_source TEXT,
    updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE sync_runs (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    connection_id TEXT NOT NULL REFERENCES integration_connections(id) ON DELETE CASCADE,
    provider_slug TEXT NOT NULL,
    sync_type TEXT NOT NULL CHECK (sync_type IN ('employee')),
    trigger TEXT NOT NULL CHECK (trigger IN ('manual', 'schedule')),
    dry_run INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'interrupted')),
    error TEXT,
    found INTEGER NOT NULL DEFAULT 0,
    created INTEGER NOT NULL DEFAULT 0,
    updated INTEGER NOT NULL DEFAULT 0,
    deactivated INTEGER NOT NULL DEFAULT 0,
    reactivated INTEGER NOT NULL DEFAULT 0,
    unchanged INTEGER NOT NULL DEFAULT 0,
    skipped INTEGER NOT NULL DEFAULT 0,
    errors INTEGER NOT NULL DEFAULT 0,
    requested_by TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT
) STRICT;
CREATE INDEX sync_runs_org ON sync_runs(organization_id, started_at, id);
CREATE INDEX sync_runs_connection ON sync_runs(organization_id, connection_id, started_at);
-- One run at a time per connection: a second one conflicts.
CREATE UNIQUE INDEX sync_runs_one_running ON sync_runs(connection_id) WHERE status = 'running';

-- The people a run changed, skipped or could not handle, in the order the
-- run met them (an unchanged person is only counted).
CREATE TABLE sync_run_results (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    run_id TEXT NOT NULL REFERENCES sync_runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    action TEXT NOT NULL,
    person_id TEXT,
    email TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    role TEXT,
    fields TEXT NOT NULL DEFAULT '{}',
    reason TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, seq)
) STRICT;

-- A person managed by a directory connection, and two-factor status as
-- the two-factor source last reported it. No row: entered by hand, status
-- unknown.
CREATE TABLE person_directory (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    source TEXT NOT NULL CHECK (source IN ('manual', 'directory')),
    connection_id TEXT,
    external_id TEXT,
    two_factor INTEGER,
    two_factor_checked_at TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, user_id)
) STRICT;
CREATE INDEX person_directory_connection ON person_directory(organization_id, connection_id);
