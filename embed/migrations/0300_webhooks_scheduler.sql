-- Webhook subscriptions, their durable deliveries and attempts, the
-- dispatcher's cursor over the event outbox, and the scheduler's run log.

CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    url TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    events TEXT NOT NULL,            -- JSON array of event names, "*" or "resource.*"
    active INTEGER NOT NULL DEFAULT 1,
    paused_reason TEXT CHECK (paused_reason IS NULL OR paused_reason IN ('manual', 'failing')),
    paused_at TEXT,
    failing_since TEXT,              -- first failed attempt since the last success
    last_success_at TEXT,
    last_failure_at TEXT,
    secret_ciphertext BLOB NOT NULL, -- the signing secret, sealed with the data dir's key
    secret_hint TEXT NOT NULL,       -- the secret's first characters, for display
    start_seq INTEGER NOT NULL,      -- events at or below this seq predate the subscription
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX webhooks_org ON webhooks(organization_id, id);

CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    body TEXT NOT NULL,              -- the exact bytes sent and signed
    status TEXT NOT NULL CHECK (status IN ('pending', 'held', 'delivering', 'succeeded', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    claim_token TEXT,
    claimed_until TEXT,
    last_attempt_at TEXT,
    last_status_code INTEGER,
    last_error TEXT,
    redelivery_of TEXT,
    expires_at TEXT NOT NULL,        -- retries stop here (24 h after the first scheduling)
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_deliveries_org ON webhook_deliveries(organization_id, webhook_id, id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
CREATE INDEX webhook_deliveries_claimed ON webhook_deliveries(status, claimed_until);
-- One original delivery per subscription and event: the dispatcher may run
-- an event twice after a crash without sending it twice as new.
CREATE UNIQUE INDEX webhook_deliveries_event ON webhook_deliveries(webhook_id, event_id) WHERE redelivery_of IS NULL;

CREATE TABLE webhook_delivery_attempts (
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    organization_id TEXT NOT NULL,
    started_at TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    status_code INTEGER,
    response_snippet TEXT NOT NULL DEFAULT '',
    error TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (delivery_id, attempt)
) STRICT;
CREATE INDEX webhook_delivery_attempts_org ON webhook_delivery_attempts(organization_id, delivery_id);

-- The dispatcher's position in the outbox: events above last_seq are not yet
-- fanned out to subscriptions.
CREATE TABLE webhook_cursor (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    last_seq INTEGER NOT NULL
) STRICT;
INSERT INTO webhook_cursor (id, last_seq) SELECT 1, coalesce(max(seq), 0) FROM events;

-- One row per scheduled slot of a job: a slot runs once to completion; a run
-- left "running" by a crash is marked interrupted and the slot runs again.
CREATE TABLE job_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job TEXT NOT NULL,
    slot TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'interrupted')),
    tries INTEGER NOT NULL DEFAULT 1,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    duration_ms INTEGER,
    error TEXT NOT NULL DEFAULT '',
    UNIQUE (job, slot)
) STRICT;
CREATE INDEX job_runs_job ON job_runs(job, id);
