-- Appliance-wide settings of the integration providers, kept by the
-- appliance operator: whether organizations are offered the provider, and
-- its platform OAuth app (client id; client secret sealed with the data
-- directory's key, never returned). No row: active, no platform app.
CREATE TABLE integration_provider_settings (
    provider_slug TEXT PRIMARY KEY,
    is_active INTEGER NOT NULL DEFAULT 1,
    client_id TEXT,
    sealed_client_secret BLOB,
    custom_scopes TEXT NOT NULL DEFAULT '[]',
    custom_settings TEXT NOT NULL DEFAULT '{}',
    credentials_updated_at TEXT,
    updated_by TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL
) STRICT;
