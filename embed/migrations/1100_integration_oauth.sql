-- Integration OAuth: an organization's own OAuth apps per provider (they
-- take precedence over the operator's platform app), the pending
-- authorization requests (state stored as a hash, single use, bound to the
-- organization and the person, with an expiry; PKCE verifier sealed), and
-- the errors providers or the browser reported.
CREATE TABLE integration_oauth_apps (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    provider_slug TEXT NOT NULL,
    client_id TEXT NOT NULL,
    sealed_client_secret BLOB NOT NULL,
    custom_scopes TEXT NOT NULL DEFAULT '[]',
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, provider_slug)
) STRICT;

CREATE TABLE integration_oauth_states (
    state_hash TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    person_id TEXT NOT NULL,
    provider_slug TEXT NOT NULL,
    connection_id TEXT,
    app_source TEXT NOT NULL,
    sealed_verifier BLOB NOT NULL,
    request TEXT NOT NULL DEFAULT '{}',
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX integration_oauth_states_expiry ON integration_oauth_states(expires_at);

CREATE TABLE integration_oauth_errors (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    provider_slug TEXT NOT NULL,
    source TEXT NOT NULL,
    error TEXT NOT NULL,
    error_description TEXT NOT NULL DEFAULT '',
    person_id TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX integration_oauth_errors_org ON integration_oauth_errors(organization_id, created_at);
