package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.AuditStore = (*DB)(nil)

const auditColumns = `seq, id, organization_id, occurred_at, actor_type, actor_id, action, resource_type, resource_id,
	changes, request_id, prev_hash, hash`

func scanAudit(row interface{ Scan(...any) error }) (*app.AuditRecord, error) {
	var r app.AuditRecord
	var at, changes string
	if err := row.Scan(&r.Seq, &r.ID, &r.OrganizationID, &at, &r.ActorType, &r.ActorID, &r.Action, &r.ResourceType,
		&r.ResourceID, &changes, &r.RequestID, &r.PrevHash, &r.Hash); err != nil {
		return nil, mapErr(err)
	}
	r.OccurredAt = parseTS(at)
	r.Changes = map[string]app.Change{}
	if err := json.Unmarshal([]byte(changes), &r.Changes); err != nil {
		return nil, fmt.Errorf("decode changes of audit record %d: %w", r.Seq, err)
	}
	return &r, nil
}

// ListAudit returns a page of an organization's audit records, newest first.
func (db *DB) ListAudit(ctx context.Context, orgID string, f app.AuditFilter) (app.List[app.AuditRecord], error) {
	where := []string{"organization_id = ?"}
	args := []any{orgID}
	add := func(cond string, v any) {
		where, args = append(where, cond), append(args, v)
	}
	if f.ResourceType != "" {
		add("resource_type = ?", f.ResourceType)
	}
	if f.ResourceID != "" {
		add("resource_id = ?", f.ResourceID)
	}
	if f.ActorID != "" {
		add("actor_id = ?", f.ActorID)
	}
	if f.Action != "" {
		add("action = ?", f.Action)
	}
	if f.From != nil {
		add("occurred_at >= ?", ts(*f.From))
	}
	if f.To != nil {
		add("occurred_at < ?", ts(*f.To))
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.AuditRecord]{Items: []app.AuditRecord{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM audit_log WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_log WHERE `+cond+` ORDER BY seq DESC LIMIT ? OFFSET ?`,
		append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanAudit(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *r)
	}
	return out, rows.Err()
}

// ScanAudit streams every record in chain order from one read snapshot.
func (db *DB) ScanAudit(ctx context.Context, fn func(r *app.AuditRecord) error) error {
	rows, err := db.r.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_log ORDER BY seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanAudit(rows)
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// AuditSequence returns the highest seq present and the AUTOINCREMENT
// counter (the highest seq ever assigned).
func (db *DB) AuditSequence(ctx context.Context) (present, assigned int64, err error) {
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM audit_log`).Scan(&present); err != nil {
		return 0, 0, err
	}
	counter := `SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'`
	if db.pg {
		// The identity's sequence; last_value is NULL before its first use.
		counter = `SELECT last_value FROM pg_sequences WHERE last_value IS NOT NULL AND schemaname || '.' || sequencename = pg_get_serial_sequence('audit_log', 'seq')`
	}
	err = q.QueryRowContext(ctx, counter).Scan(&assigned)
	if errors.Is(err, sql.ErrNoRows) {
		return present, present, nil
	}
	return present, assigned, err
}
