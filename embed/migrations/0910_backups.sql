-- Backups and restore drills of the whole appliance (not of one
-- organization): each archive written (scheduled, by the CLI, or before a
-- migration) and each drill that restored one into a scratch directory and
-- checked it. `compliance backup list` and `compliance doctor` read it.
CREATE TABLE backup_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('backup', 'drill')),
    trigger TEXT NOT NULL CHECK (trigger IN ('scheduled', 'manual', 'pre-migration')),
    status TEXT NOT NULL CHECK (status IN ('succeeded', 'failed')),
    archive TEXT NOT NULL,
    archive_size INTEGER NOT NULL DEFAULT 0,
    archive_sha256 TEXT NOT NULL DEFAULT '',
    encrypted INTEGER NOT NULL DEFAULT 0 CHECK (encrypted IN (0, 1)),
    schema_version INTEGER NOT NULL DEFAULT 0,
    file_count INTEGER NOT NULL DEFAULT 0,
    row_count INTEGER NOT NULL DEFAULT 0,
    -- drills: "ok" or what PRAGMA integrity_check reported
    integrity TEXT NOT NULL DEFAULT '',
    -- the evidence a drill's report was uploaded as, if any
    evidence_id TEXT,
    error TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    duration_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX backup_runs_kind ON backup_runs(kind, id);
