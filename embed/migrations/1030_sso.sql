-- Single sign-on per organization: the OpenID Connect settings (the client
-- secret sealed with the data-dir key, like connection credentials), the
-- e-mail domains that route sign-in to the organization's identity
-- provider (one organization per domain), and the sign-in flows in flight
-- (state, nonce and PKCE verifier kept server-side, used once).
CREATE TABLE sso_settings (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    enabled INTEGER NOT NULL DEFAULT 0,
    display_name TEXT NOT NULL DEFAULT '',
    issuer TEXT NOT NULL DEFAULT '',
    client_id TEXT NOT NULL DEFAULT '',
    client_secret BLOB,
    groups_claim TEXT NOT NULL DEFAULT 'groups',
    -- [{"group": "...", "role": "..."}]
    role_mapping TEXT NOT NULL DEFAULT '[]',
    sso_required INTEGER NOT NULL DEFAULT 0,
    owner_break_glass INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE sso_domains (
    domain TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE
) STRICT;
CREATE INDEX sso_domains_org ON sso_domains(organization_id);

CREATE TABLE sso_flows (
    state_hash TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    nonce TEXT NOT NULL,
    verifier TEXT NOT NULL,
    next TEXT NOT NULL DEFAULT '',
    expires_at TEXT NOT NULL
) STRICT;
CREATE INDEX sso_flows_expiry ON sso_flows(expires_at);
