package storage

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.EvidenceStore = (*DB)(nil)

const evidenceColumns = `id, control_id, task_id, filename, content_type, size, sha256, description, expires_at, uploaded_by, uploaded_at`

func scanEvidence(row interface{ Scan(...any) error }) (*app.Evidence, error) {
	var e app.Evidence
	var task, expires sql.NullString
	var uploaded string
	if err := row.Scan(&e.ID, &e.ControlID, &task, &e.Filename, &e.ContentType, &e.Size, &e.SHA256, &e.Description,
		&expires, &e.UploadedBy, &uploaded); err != nil {
		return nil, mapErr(err)
	}
	e.TaskID, e.ExpiresAt, e.UploadedAt = strPtr(task), parseTSPtr(expires), parseTS(uploaded)
	return &e, nil
}

// CreateEvidence inserts an evidence record.
func (db *DB) CreateEvidence(ctx context.Context, orgID string, e *app.Evidence) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO evidence (organization_id, `+evidenceColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, e.ID, e.ControlID, nullStr(e.TaskID), e.Filename, e.ContentType,
		e.Size, e.SHA256, e.Description, tsPtr(e.ExpiresAt), e.UploadedBy, ts(e.UploadedAt))
	return mapErr(err)
}

// getEvidenceSQL returns one evidence record.
func (db *DB) getEvidenceSQL(ctx context.Context, orgID, id string) (*app.Evidence, error) {
	return scanEvidence(db.rd(ctx).QueryRowContext(ctx, `SELECT `+evidenceColumns+` FROM evidence WHERE organization_id = ? AND id = ?`, orgID, id))
}

// DeleteEvidence removes an evidence record.
func (db *DB) DeleteEvidence(ctx context.Context, orgID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM evidence WHERE organization_id = ? AND id = ?`, orgID, id)
	return affected(res, err)
}

// SetEvidenceTask links evidence to a task (or unlinks it).
func (db *DB) SetEvidenceTask(ctx context.Context, orgID, id string, taskID *string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE evidence SET task_id = ? WHERE organization_id = ? AND id = ?`, nullStr(taskID), orgID, id)
	return affected(res, err)
}

// listEvidenceSQL returns a page of evidence, newest first.
func (db *DB) listEvidenceSQL(ctx context.Context, orgID string, f app.EvidenceFilter) (app.List[app.Evidence], error) {
	where := []string{"organization_id = ?"}
	args := []any{orgID}
	if f.ControlID != "" {
		where = append(where, "control_id = ?")
		args = append(args, f.ControlID)
	}
	if f.TaskID != "" {
		where = append(where, "task_id = ?")
		args = append(args, f.TaskID)
	}
	if f.OnlyCurrent {
		where = append(where, "(expires_at IS NULL OR expires_at > ?)")
		args = append(args, ts(f.Now))
	}
	order := "id DESC"
	if f.ExpiringBy != nil {
		where = append(where, "expires_at IS NOT NULL AND expires_at > ? AND expires_at <= ?")
		args = append(args, ts(f.Now), ts(*f.ExpiringBy))
		order = "expires_at, id"
	}
	if f.ControlOwnerID != "" {
		where = append(where, "control_id IN (SELECT id FROM controls WHERE organization_id = ? AND owner_id = ?)")
		args = append(args, orgID, f.ControlOwnerID)
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.Evidence]{Items: []app.Evidence{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM evidence WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, err
	}
	if f.Page.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+evidenceColumns+` FROM evidence WHERE `+cond+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
		append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEvidence(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *e)
	}
	return out, rows.Err()
}

func (db *DB) expiringQuery(ctx context.Context, cond string, args ...any) ([]app.ExpiringEvidence, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT organization_id, `+evidenceColumns+` FROM evidence WHERE `+cond+` ORDER BY expires_at, id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []app.ExpiringEvidence
	for rows.Next() {
		var x app.ExpiringEvidence
		var task, expires sql.NullString
		var uploaded string
		if err := rows.Scan(&x.OrganizationID, &x.ID, &x.ControlID, &task, &x.Filename, &x.ContentType, &x.Size, &x.SHA256,
			&x.Description, &expires, &x.UploadedBy, &uploaded); err != nil {
			return nil, err
		}
		x.TaskID, x.ExpiresAt, x.UploadedAt = strPtr(task), parseTSPtr(expires), parseTS(uploaded)
		out = append(out, x)
	}
	return out, rows.Err()
}

// EvidenceEnteringWarning lists unannounced evidence expiring in (now, until].
func (db *DB) EvidenceEnteringWarning(ctx context.Context, now, until time.Time) ([]app.ExpiringEvidence, error) {
	return db.expiringQuery(ctx, `expires_at IS NOT NULL AND expires_at > ? AND expires_at <= ? AND expiring_notified_at IS NULL`,
		ts(now), ts(until))
}

// MarkEvidenceWarned records that evidence.expiring was raised.
func (db *DB) MarkEvidenceWarned(ctx context.Context, orgID, id string, at time.Time) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE evidence SET expiring_notified_at = ? WHERE organization_id = ? AND id = ?`, ts(at), orgID, id)
	return affected(res, err)
}

// EvidenceNewlyExpired lists evidence expired at now and not yet processed.
func (db *DB) EvidenceNewlyExpired(ctx context.Context, now time.Time) ([]app.ExpiringEvidence, error) {
	return db.expiringQuery(ctx, `expires_at IS NOT NULL AND expires_at <= ? AND expired_processed_at IS NULL`, ts(now))
}

// MarkEvidenceExpiredProcessed records that the expiry of evidence was acted on.
func (db *DB) MarkEvidenceExpiredProcessed(ctx context.Context, orgID, id string, at time.Time) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE evidence SET expired_processed_at = ? WHERE organization_id = ? AND id = ?`, ts(at), orgID, id)
	return affected(res, err)
}
