-- Sign-in sessions, OAuth 2.0 clients, grants and tokens.

-- A browser session. id is the SHA-256 of the random token the (signed and
-- encrypted) cookie carries, so a database copy cannot be replayed.
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    revoked_at TEXT,
    ip TEXT NOT NULL DEFAULT '',
    user_agent TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX sessions_user ON sessions(user_id);
CREATE INDEX sessions_expires ON sessions(expires_at);

-- OAuth clients: public clients from dynamic registration (no organization)
-- and confidential apps an organization registers (secret stored hashed).
CREATE TABLE oauth_clients (
    id TEXT PRIMARY KEY,
    organization_id TEXT REFERENCES organizations(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    client_uri TEXT,
    redirect_uris TEXT NOT NULL,
    grant_types TEXT NOT NULL,
    response_types TEXT NOT NULL,
    scope TEXT NOT NULL,
    token_endpoint_auth_method TEXT NOT NULL,
    secret_hash TEXT NOT NULL DEFAULT '',
    secret_prefix TEXT NOT NULL DEFAULT '',
    created_by_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted_at TEXT
) STRICT;
CREATE INDEX oauth_clients_org ON oauth_clients(organization_id, id);

-- A person's consent: client X may act as them in organization Y.
CREATE TABLE oauth_grants (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    client_id TEXT NOT NULL REFERENCES oauth_clients(id),
    scope TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at TEXT
) STRICT;
CREATE INDEX oauth_grants_org ON oauth_grants(organization_id, id);
CREATE INDEX oauth_grants_user ON oauth_grants(user_id, id);
CREATE INDEX oauth_grants_client ON oauth_grants(client_id);

-- Authorization codes, PKCE records, access and refresh tokens. signature
-- is the HMAC signature of the token; the token itself is never stored.
-- request_id is shared by every token of one authorization (the family
-- that refresh-token reuse revokes).
CREATE TABLE oauth_tokens (
    signature TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('code', 'pkce', 'access', 'refresh')),
    request_id TEXT NOT NULL,
    grant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    request TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (kind, signature)
) STRICT;
CREATE INDEX oauth_tokens_request ON oauth_tokens(request_id);
CREATE INDEX oauth_tokens_grant ON oauth_tokens(grant_id);
CREATE INDEX oauth_tokens_org ON oauth_tokens(organization_id);
CREATE INDEX oauth_tokens_expires ON oauth_tokens(expires_at);
