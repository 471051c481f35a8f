-- Device sync: devices listed by a directory (Google Workspace, Microsoft
-- Intune through Entra ID, Okta) land in the device register.
--
-- devices gains the directory's fields and the platforms a directory
-- lists (phones, Chromebooks); sync_runs gains the device sync type. Both
-- need their CHECK constraints changed, which SQLite does only by
-- rebuilding the table. A table another one references (device_checks,
-- sync_run_results, both ON DELETE CASCADE) cannot be dropped without
-- losing the referencing rows, so those are set aside first and restored
-- after. The read model's triggers on devices are recreated after the
-- migrations.

-- Devices.
CREATE TEMP TABLE device_checks_keep AS SELECT * FROM device_checks;
DROP TABLE device_checks;

CREATE TABLE devices_new (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    person_id TEXT REFERENCES users(id),
    name TEXT NOT NULL,
    hostname TEXT NOT NULL,
    platform TEXT NOT NULL CHECK (platform IN ('macos', 'windows', 'linux', 'ios', 'android', 'chromeos', 'other')),
    os_version TEXT,
    serial_number TEXT,
    is_compliant INTEGER NOT NULL DEFAULT 0,
    last_check_in_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    hardware_model TEXT,
    agent_version TEXT,
    compliance_changed_at TEXT,
    -- Who registered the device: manual (an administrator), or the slug of
    -- the directory provider that listed it. A device the agent reports
    -- is "agent" whatever this says (agent_version or a check-in).
    source TEXT NOT NULL DEFAULT 'manual',
    -- What the directory last listed, for a device it owns or, beside an
    -- agent-reported or manually registered device matched by serial
    -- number, without changing that device's own fields.
    directory_connection_id TEXT,
    directory_provider TEXT,
    directory_external_id TEXT,
    directory_owner_email TEXT,
    directory_model TEXT,
    directory_status TEXT,
    directory_compliance TEXT,
    directory_encrypted INTEGER CHECK (directory_encrypted IN (0, 1)),
    directory_last_sync_at TEXT,
    directory_removed_at TEXT,
    directory_updated_at TEXT
) STRICT;
INSERT INTO devices_new (id, organization_id, person_id, name, hostname, platform, os_version, serial_number, is_compliant,
    last_check_in_at, created_at, updated_at, hardware_model, agent_version, compliance_changed_at)
SELECT id, organization_id, person_id, name, hostname, platform, os_version, serial_number, is_compliant,
    last_check_in_at, created_at, updated_at, hardware_model, agent_version, compliance_changed_at FROM devices;
DROP TABLE devices;
ALTER TABLE devices_new RENAME TO devices;
CREATE INDEX devices_org ON devices(organization_id, id);
CREATE INDEX devices_org_person ON devices(organization_id, person_id);
CREATE INDEX devices_org_serial ON devices(organization_id, serial_number);
CREATE UNIQUE INDEX devices_directory ON devices(organization_id, directory_connection_id, directory_external_id)
    WHERE directory_external_id IS NOT NULL;

CREATE TABLE device_checks (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    check_type TEXT NOT NULL CHECK (check_type IN ('disk_encryption', 'antivirus', 'password_policy', 'screen_lock', 'os_updates', 'firewall')),
    passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
    method TEXT NOT NULL,
    raw TEXT NOT NULL,
    message TEXT NOT NULL,
    exception TEXT,
    checked_at TEXT NOT NULL,
    received_at TEXT NOT NULL
) STRICT;
INSERT INTO device_checks SELECT * FROM device_checks_keep;
DROP TABLE device_checks_keep;
CREATE INDEX device_checks_device ON device_checks(organization_id, device_id, check_type, checked_at);

-- Sync runs.
CREATE TEMP TABLE sync_run_results_keep AS SELECT * FROM sync_run_results;
DROP TABLE sync_run_results;

CREATE TABLE sync_runs_new (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    connection_id TEXT NOT NULL REFERENCES integration_connections(id) ON DELETE CASCADE,
    provider_slug TEXT NOT NULL,
    sync_type TEXT NOT NULL CHECK (sync_type IN ('employee', 'device')),
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
INSERT INTO sync_runs_new SELECT * FROM sync_runs;
DROP TABLE sync_runs;
ALTER TABLE sync_runs_new RENAME TO sync_runs;
CREATE INDEX sync_runs_org ON sync_runs(organization_id, started_at, id);
CREATE INDEX sync_runs_connection ON sync_runs(organization_id, connection_id, started_at);
CREATE UNIQUE INDEX sync_runs_one_running ON sync_runs(connection_id) WHERE status = 'running';

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
    -- The device a device sync's result is about.
    device_id TEXT,
    PRIMARY KEY (run_id, seq)
) STRICT;
INSERT INTO sync_run_results (organization_id, run_id, seq, action, person_id, email, name, role, fields, reason)
SELECT organization_id, run_id, seq, action, person_id, email, name, role, fields, reason FROM sync_run_results_keep;
DROP TABLE sync_run_results_keep;
