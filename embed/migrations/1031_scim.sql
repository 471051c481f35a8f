-- The SCIM 2.0 provisioning token of an organization: one at a time (a new
-- one replaces the old), stored as its SHA-256 hash with a short hint.
CREATE TABLE scim_tokens (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    hint TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL DEFAULT ''
) STRICT;
