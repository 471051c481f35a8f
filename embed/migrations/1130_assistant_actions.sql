-- Writes the assistant's model proposed in a conversation: a pending action
-- waits for the person to confirm or cancel it; nothing is created before
-- the confirmation. arguments is the validated JSON the tool will run with;
-- result_type and result_id name the record a confirmation created.
CREATE TABLE assistant_actions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    owner_id TEXT NOT NULL,
    session_id TEXT NOT NULL REFERENCES assistant_sessions(id) ON DELETE CASCADE,
    message_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    summary TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'confirmed', 'cancelled')),
    result_type TEXT NOT NULL DEFAULT '',
    result_id TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    decided_at TEXT
) STRICT;

CREATE INDEX assistant_actions_session ON assistant_actions (organization_id, session_id, created_at);
