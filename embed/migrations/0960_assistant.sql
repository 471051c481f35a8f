-- The assistant: chat sessions and their messages, kept per organization
-- and per person (owner_id is the person, or the API key for a key acting
-- for nobody). A session of kind 'history' is the one conversation the
-- history routes read and replace; 'chat' sessions are started and ended
-- explicitly. sources is the JSON array of the records an answer cites.
CREATE TABLE assistant_sessions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    owner_id TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'chat' CHECK (kind IN ('chat', 'history')),
    title TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended')),
    message_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    ended_at TEXT
) STRICT;

CREATE INDEX assistant_sessions_owner ON assistant_sessions (organization_id, owner_id, kind, updated_at DESC);

-- A message's id is unique within its session (the history routes store
-- the ids the client gives).
CREATE TABLE assistant_messages (
    id TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    session_id TEXT NOT NULL REFERENCES assistant_sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    text TEXT NOT NULL,
    mode TEXT NOT NULL DEFAULT '',
    intent TEXT NOT NULL DEFAULT '',
    notice TEXT NOT NULL DEFAULT '',
    sources TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, id),
    UNIQUE (session_id, seq)
) STRICT;
