package storage

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// BackupRun is one recorded backup or restore drill of the appliance.
// Unlike the app's records it belongs to no organization: backups are the
// operator's business, read by the CLI (`backup list`, `doctor`).
type BackupRun struct {
	ID            int64     `json:"id"`
	Kind          string    `json:"kind"`    // "backup" or "drill"
	Trigger       string    `json:"trigger"` // "scheduled", "manual" or "pre-migration"
	Status        string    `json:"status"`  // "succeeded" or "failed"
	Archive       string    `json:"archive"`
	ArchiveSize   int64     `json:"archiveSize"`
	ArchiveSHA256 string    `json:"archiveSha256"`
	Encrypted     bool      `json:"encrypted"`
	SchemaVersion int       `json:"schemaVersion"`
	FileCount     int       `json:"fileCount"`
	RowCount      int64     `json:"rowCount"`
	Integrity     string    `json:"integrity,omitempty"`
	EvidenceID    *string   `json:"evidenceId,omitempty"`
	Error         string    `json:"error,omitempty"`
	StartedAt     time.Time `json:"startedAt"`
	FinishedAt    time.Time `json:"finishedAt"`
	DurationMS    int64     `json:"durationMs"`
}

// Backup run kinds, triggers and statuses.
const (
	BackupKindBackup = "backup"
	BackupKindDrill  = "drill"

	BackupTriggerScheduled    = "scheduled"
	BackupTriggerManual       = "manual"
	BackupTriggerPreMigration = "pre-migration"

	BackupSucceeded = "succeeded"
	BackupFailed    = "failed"
)

// RecordBackupRun stores a backup or drill and returns its id.
func (db *DB) RecordBackupRun(ctx context.Context, r BackupRun) (int64, error) {
	var id int64
	err := db.w.QueryRowContext(ctx, `INSERT INTO backup_runs (kind, trigger, status, archive, archive_size, archive_sha256,
		encrypted, schema_version, file_count, row_count, integrity, evidence_id, error, started_at, finished_at, duration_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		r.Kind, r.Trigger, r.Status, r.Archive, r.ArchiveSize, r.ArchiveSHA256, boolInt(r.Encrypted), r.SchemaVersion,
		r.FileCount, r.RowCount, r.Integrity, nullStr(r.EvidenceID), r.Error, ts(r.StartedAt), ts(r.FinishedAt),
		r.DurationMS).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("record backup run: %w", err)
	}
	return id, nil
}

// ListBackupRuns returns the last n runs of kind ("" for both), newest
// first; with status set, only runs of that status.
func (db *DB) ListBackupRuns(ctx context.Context, kind, status string, n int) ([]BackupRun, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, kind, trigger, status, archive, archive_size, archive_sha256, encrypted,
		schema_version, file_count, row_count, integrity, evidence_id, error, started_at, finished_at, duration_ms
		FROM backup_runs WHERE (? = '' OR kind = ?) AND (? = '' OR status = ?) ORDER BY id DESC LIMIT ?`,
		kind, kind, status, status, n)
	if err != nil {
		return nil, fmt.Errorf("list backup runs: %w", err)
	}
	defer rows.Close()
	out := []BackupRun{}
	for rows.Next() {
		var r BackupRun
		var enc int
		var ev sql.NullString
		var started, finished string
		if err := rows.Scan(&r.ID, &r.Kind, &r.Trigger, &r.Status, &r.Archive, &r.ArchiveSize, &r.ArchiveSHA256, &enc,
			&r.SchemaVersion, &r.FileCount, &r.RowCount, &r.Integrity, &ev, &r.Error, &started, &finished, &r.DurationMS); err != nil {
			return nil, fmt.Errorf("list backup runs: %w", err)
		}
		r.Encrypted, r.EvidenceID = enc == 1, strPtr(ev)
		r.StartedAt, r.FinishedAt = parseTS(started), parseTS(finished)
		out = append(out, r)
	}
	return out, rows.Err()
}
