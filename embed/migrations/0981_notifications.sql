-- Notifications: what each person was told (their list on the
-- notifications page), how they want each kind (mail at once, a daily
-- digest, or only the list), and the notify job's cursor over the event
-- log, which starts at the newest event so an upgrade tells nobody about
-- the past.
CREATE TABLE notifications (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    person_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    event_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    link TEXT NOT NULL DEFAULT '',
    delivery TEXT NOT NULL CHECK (delivery IN ('immediate', 'digest', 'off')),
    -- the outbox message that carried it ('' when a digest skipped an
    -- inactive person); NULL while not mailed
    mail_id TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (person_id, event_id)
) STRICT;
CREATE INDEX notifications_person ON notifications(organization_id, person_id, created_at);
CREATE INDEX notifications_digest ON notifications(created_at) WHERE delivery = 'digest' AND mail_id IS NULL;

CREATE TABLE notification_preferences (
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    person_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    delivery TEXT NOT NULL CHECK (delivery IN ('immediate', 'digest', 'off')),
    PRIMARY KEY (organization_id, person_id, kind)
) WITHOUT ROWID, STRICT;

CREATE TABLE notify_cursor (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    last_seq INTEGER NOT NULL
) STRICT;
INSERT INTO notify_cursor (id, last_seq) SELECT 1, coalesce(max(seq), 0) FROM events;
