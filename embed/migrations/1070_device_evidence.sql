-- Device compliance as control evidence: per organization and control,
-- the task and the two evidence files (Markdown summary, JSON detail) the
-- device_compliance_evidence job keeps; replaced on every refresh.
CREATE TABLE device_evidence (
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    control_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    summary_evidence_id TEXT,
    detail_evidence_id TEXT,
    compliant INTEGER NOT NULL DEFAULT 0,
    total INTEGER NOT NULL DEFAULT 0,
    refreshed_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, control_id)
) STRICT;

-- The device agent's browser sign-in: a signed-in person approves a
-- one-time code for an agent; the agent exchanges it (single use, short
-- expiry, with the verifier whose SHA-256 it sent first) for its device
-- credential. Only hashes of the code and the verifier are stored.
CREATE TABLE device_agent_auth_codes (
    id TEXT PRIMARY KEY,
    code_hash TEXT NOT NULL UNIQUE,
    challenge TEXT NOT NULL,
    callback_port INTEGER NOT NULL,
    state TEXT NOT NULL,
    user_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    -- the short-lived sign-in token the exchange returned: it lists the
    -- person's organizations and registers one device, once
    session_hash TEXT UNIQUE,
    session_expires_at TEXT,
    session_used_at TEXT
) STRICT;
CREATE INDEX device_agent_auth_codes_expiry ON device_agent_auth_codes(expires_at);
