-- The mail outbox: every e-mail the appliance sends is written here in the
-- transaction that decided to send it, then delivered by a background job
-- with retries (like webhook deliveries), so a crash or an SMTP server that
-- is down loses nothing and sends nothing twice once the server accepted it.
CREATE TABLE mail_outbox (
    id TEXT PRIMARY KEY,
    -- the organization the message is about; NULL for the appliance's own
    -- mail (a test message from the CLI)
    organization_id TEXT REFERENCES organizations(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    recipient TEXT NOT NULL,
    subject TEXT NOT NULL,
    body_text TEXT NOT NULL,
    body_html TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sending', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    -- a claimed message whose lease ran out (the process died while
    -- sending) is claimed again
    lease_until TEXT,
    last_error TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    sent_at TEXT
) STRICT;
CREATE INDEX mail_outbox_due ON mail_outbox(status, next_attempt_at);
CREATE INDEX mail_outbox_org ON mail_outbox(organization_id, created_at);
