-- SAML 2.0 sign-in per organization, next to OpenID Connect: which
-- protocol the organization's single sign-on speaks, the identity
-- provider's metadata (fetched from a URL or pasted), the attribute names,
-- and the service provider's own key pair (the private key sealed with the
-- data-dir key, like the OpenID Connect client secret). The allowed
-- domains, role mapping and "SSO required" stay in sso_settings/sso_domains.
CREATE TABLE saml_settings (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    protocol TEXT NOT NULL DEFAULT 'oidc' CHECK (protocol IN ('oidc', 'saml')),
    metadata_url TEXT NOT NULL DEFAULT '',
    metadata_xml TEXT NOT NULL DEFAULT '',
    metadata_read_at TEXT,
    email_attribute TEXT NOT NULL DEFAULT '',
    name_attribute TEXT NOT NULL DEFAULT '',
    groups_attribute TEXT NOT NULL DEFAULT '',
    sp_key BLOB,
    sp_certificate TEXT NOT NULL DEFAULT ''
) STRICT;

-- AuthnRequests this appliance sent, each answered once (InResponseTo).
CREATE TABLE saml_requests (
    request_id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    next TEXT NOT NULL DEFAULT '',
    expires_at TEXT NOT NULL
) STRICT;
CREATE INDEX saml_requests_expiry ON saml_requests(expires_at);

-- The replay cache: the ids of assertions accepted, kept until the
-- assertion could no longer be accepted anyway.
CREATE TABLE saml_assertions (
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    assertion_id TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, assertion_id)
) STRICT;
CREATE INDEX saml_assertions_expiry ON saml_assertions(expires_at);
