-- Integrations: an organization's connections to the systems it runs, the
-- check runs the appliance makes against them with one result per check
-- and resource, the findings and evidence those results keep up to date,
-- and the organization's exceptions to a check for one resource.

CREATE TABLE integration_connections (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    provider_slug TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'paused', 'error', 'disconnected')),
    sync_frequency TEXT NOT NULL,
    -- Non-secret settings (JSON object of strings) and the enabled
    -- services (JSON array; empty means every service).
    variables TEXT NOT NULL DEFAULT '{}',
    services TEXT NOT NULL DEFAULT '[]',
    -- The credentials as one JSON object sealed with the data-dir key
    -- (XChaCha20-Poly1305, bound to the connection id); the keys that are
    -- set, in clear, so the API can say which fields hold a value.
    sealed_credentials BLOB,
    credential_keys TEXT NOT NULL DEFAULT '[]',
    -- SHA-256 of the push token (custom provider) and the sealed secret
    -- inbound provider webhooks are verified with.
    push_token_hash TEXT UNIQUE,
    push_token_hint TEXT,
    webhook_secret_sealed BLOB,
    metadata TEXT NOT NULL DEFAULT '{}',
    last_run_at TEXT,
    last_run_status TEXT,
    next_run_at TEXT,
    error_message TEXT,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX integration_connections_org ON integration_connections(organization_id, id);
CREATE INDEX integration_connections_due ON integration_connections(status, next_run_at);

CREATE TABLE integration_check_runs (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    connection_id TEXT NOT NULL REFERENCES integration_connections(id) ON DELETE CASCADE,
    -- The one check run, or NULL for every check of the connection.
    check_id TEXT,
    trigger TEXT NOT NULL CHECK (trigger IN ('manual', 'schedule', 'webhook', 'push')),
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'interrupted')),
    error TEXT,
    passed INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    excepted INTEGER NOT NULL DEFAULT 0,
    errored INTEGER NOT NULL DEFAULT 0,
    findings_opened INTEGER NOT NULL DEFAULT 0,
    findings_resolved INTEGER NOT NULL DEFAULT 0,
    evidence_attached INTEGER NOT NULL DEFAULT 0,
    logs TEXT NOT NULL DEFAULT '[]',
    requested_by TEXT NOT NULL,
    queued_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT
) STRICT;
CREATE INDEX integration_check_runs_conn ON integration_check_runs(organization_id, connection_id, queued_at);
CREATE INDEX integration_check_runs_status ON integration_check_runs(status, queued_at);
-- One queued or running run per connection at a time.
CREATE UNIQUE INDEX integration_check_runs_one_active ON integration_check_runs(connection_id)
    WHERE status IN ('queued', 'running');

CREATE TABLE integration_check_results (
    id INTEGER PRIMARY KEY,
    organization_id TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES integration_check_runs(id) ON DELETE CASCADE,
    connection_id TEXT NOT NULL,
    check_id TEXT NOT NULL,
    resource_type TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    resource_name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pass', 'fail', 'error', 'excepted')),
    message TEXT NOT NULL DEFAULT '',
    details TEXT,
    finding_id TEXT,
    exception_id TEXT
) STRICT;
CREATE INDEX integration_check_results_run ON integration_check_results(organization_id, run_id, id);
CREATE INDEX integration_check_results_check ON integration_check_results(organization_id, connection_id, check_id, id);

-- The finding each failing (connection, check, resource) keeps open.
CREATE TABLE integration_check_findings (
    organization_id TEXT NOT NULL,
    connection_id TEXT NOT NULL REFERENCES integration_connections(id) ON DELETE CASCADE,
    check_id TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    finding_id TEXT NOT NULL,
    PRIMARY KEY (organization_id, connection_id, check_id, resource_id)
) STRICT;

-- The evidence a passing check keeps on each mapped control (the latest).
CREATE TABLE integration_check_evidence (
    organization_id TEXT NOT NULL,
    connection_id TEXT NOT NULL REFERENCES integration_connections(id) ON DELETE CASCADE,
    check_id TEXT NOT NULL,
    control_id TEXT NOT NULL,
    evidence_id TEXT NOT NULL,
    PRIMARY KEY (organization_id, connection_id, check_id, control_id)
) STRICT;

CREATE TABLE integration_check_exceptions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    connection_id TEXT NOT NULL REFERENCES integration_connections(id) ON DELETE CASCADE,
    check_id TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    reviewer_id TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX integration_check_exceptions_conn ON integration_check_exceptions(organization_id, connection_id, check_id, resource_id);
