-- Device compliance checks reported by the device agent, the agent's
-- per-device tokens and the enrolment tokens of unattended installs.

ALTER TABLE devices ADD COLUMN hardware_model TEXT;
ALTER TABLE devices ADD COLUMN agent_version TEXT;
ALTER TABLE devices ADD COLUMN compliance_changed_at TEXT;

-- One row per reported check result; the latest row of each check type is
-- the device's current state, the rest its history.
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
CREATE INDEX device_checks_device ON device_checks(organization_id, device_id, check_type, checked_at);

-- The agent's credential: one per device, stored as a SHA-256 hash. The
-- device id is not a foreign key: a token outlives its deleted device so
-- that the agent learns the device is gone (404) rather than a bad token.
CREATE TABLE device_agent_tokens (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    device_id TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at TEXT
) STRICT;
CREATE INDEX device_agent_tokens_device ON device_agent_tokens(organization_id, device_id);

-- Enrolment tokens let an unattended install register a device.
CREATE TABLE device_enrolment_tokens (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    max_uses INTEGER,
    uses INTEGER NOT NULL DEFAULT 0,
    person_id TEXT REFERENCES users(id),
    expires_at TEXT NOT NULL,
    created_by TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT
) STRICT;
CREATE INDEX device_enrolment_tokens_org ON device_enrolment_tokens(organization_id, id);
