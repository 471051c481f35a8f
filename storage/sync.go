package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// GetSyncSettings returns the organization's sync settings (all unset when
// never saved).
func (db *DB) GetSyncSettings(ctx context.Context, orgID string) (*app.SyncSettings, error) {
	var emp, dev, tf sql.NullString
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT employee_provider, device_provider, two_factor_source
		FROM sync_settings WHERE organization_id = ?`, orgID).Scan(&emp, &dev, &tf)
	if err == sql.ErrNoRows {
		return &app.SyncSettings{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get sync settings: %w", err)
	}
	return &app.SyncSettings{EmployeeProvider: strPtr(emp), DeviceProvider: strPtr(dev), TwoFactorSource: strPtr(tf)}, nil
}

// SaveSyncSettings writes the organization's sync settings.
func (db *DB) SaveSyncSettings(ctx context.Context, orgID string, s *app.SyncSettings, at time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO sync_settings (organization_id, employee_provider, device_provider, two_factor_source, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (organization_id) DO UPDATE SET employee_provider = excluded.employee_provider,
		device_provider = excluded.device_provider, two_factor_source = excluded.two_factor_source, updated_at = excluded.updated_at`,
		orgID, nullStr(s.EmployeeProvider), nullStr(s.DeviceProvider), nullStr(s.TwoFactorSource), ts(at))
	if err != nil {
		return fmt.Errorf("save sync settings: %w", err)
	}
	return nil
}

const syncRunColumns = `id, organization_id, connection_id, provider_slug, sync_type, trigger, dry_run, status, error,
	found, created, updated, deactivated, reactivated, unchanged, skipped, errors, requested_by, started_at, finished_at`

func scanSyncRun(row interface{ Scan(...any) error }) (*app.SyncRun, error) {
	var r app.SyncRun
	var dry int
	var errMsg, finished sql.NullString
	var started string
	if err := row.Scan(&r.ID, &r.OrganizationID, &r.ConnectionID, &r.ProviderSlug, &r.SyncType, &r.Trigger, &dry, &r.Status, &errMsg,
		&r.Found, &r.Created, &r.Updated, &r.Deactivated, &r.Reactivated, &r.Unchanged, &r.Skipped, &r.Errors,
		&r.RequestedBy, &started, &finished); err != nil {
		return nil, mapErr(err)
	}
	r.SyncRunID = r.ID
	r.DryRun = dry == 1
	r.Success = r.Status == app.RunSucceeded
	r.Error = strPtr(errMsg)
	r.StartedAt = parseTS(started)
	r.FinishedAt = parseTSPtr(finished)
	return &r, nil
}

// CreateSyncRun inserts a running run; the partial unique index refuses a
// second running run of one connection.
func (db *DB) CreateSyncRun(ctx context.Context, orgID string, r *app.SyncRun) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO sync_runs (id, organization_id, connection_id, provider_slug, sync_type, trigger,
		dry_run, status, requested_by, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, orgID, r.ConnectionID, r.ProviderSlug, r.SyncType, r.Trigger, boolInt(r.DryRun), r.Status, r.RequestedBy, ts(r.StartedAt))
	if err != nil {
		return fmt.Errorf("insert sync run: %w", mapErr(err))
	}
	return nil
}

// FinishSyncRun writes a run's outcome.
func (db *DB) FinishSyncRun(ctx context.Context, orgID string, r *app.SyncRun) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE sync_runs SET status = ?, error = ?, found = ?, created = ?, updated = ?,
		deactivated = ?, reactivated = ?, unchanged = ?, skipped = ?, errors = ?, finished_at = ?
		WHERE organization_id = ? AND id = ?`,
		r.Status, nullStr(r.Error), r.Found, r.Created, r.Updated, r.Deactivated, r.Reactivated, r.Unchanged, r.Skipped, r.Errors,
		tsPtr(r.FinishedAt), orgID, r.ID)
	if err != nil {
		return fmt.Errorf("finish sync run: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.ErrNotFound
	}
	return nil
}

// InterruptRunningSyncRuns marks every running run interrupted.
func (db *DB) InterruptRunningSyncRuns(ctx context.Context, now time.Time, reason string) (int, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE sync_runs SET status = 'interrupted', error = ?, finished_at = ? WHERE status = 'running'`,
		reason, ts(now))
	if err != nil {
		return 0, fmt.Errorf("interrupt sync runs: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// GetSyncRun returns one run.
func (db *DB) GetSyncRun(ctx context.Context, orgID, id string) (*app.SyncRun, error) {
	return scanSyncRun(db.rd(ctx).QueryRowContext(ctx, `SELECT `+syncRunColumns+` FROM sync_runs WHERE organization_id = ? AND id = ?`, orgID, id))
}

// LastSyncRun is the connection's latest employee sync that was not a dry run.
func (db *DB) LastSyncRun(ctx context.Context, orgID, connectionID string) (*app.SyncRun, error) {
	return scanSyncRun(db.rd(ctx).QueryRowContext(ctx, `SELECT `+syncRunColumns+` FROM sync_runs
		WHERE organization_id = ? AND connection_id = ? AND dry_run = 0 AND sync_type = 'employee' ORDER BY started_at DESC, id DESC LIMIT 1`, orgID, connectionID))
}

// ListSyncRuns lists runs, newest first.
func (db *DB) ListSyncRuns(ctx context.Context, orgID string, f app.SyncRunFilter) (app.List[app.SyncRun], error) {
	where := `organization_id = ?`
	args := []any{orgID}
	if f.ConnectionID != "" {
		where += ` AND connection_id = ?`
		args = append(args, f.ConnectionID)
	}
	if f.Status != "" {
		where += ` AND status = ?`
		args = append(args, f.Status)
	}
	out := app.List[app.SyncRun]{Items: []app.SyncRun{}}
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM sync_runs WHERE `+where, args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count sync runs: %w", err)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+syncRunColumns+` FROM sync_runs WHERE `+where+`
		ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?`, append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list sync runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanSyncRun(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *r)
	}
	return out, rows.Err()
}

// InsertSyncRunResults appends per-person results.
func (db *DB) InsertSyncRunResults(ctx context.Context, orgID, runID string, rs []app.SyncRunResult) error {
	q := db.wr(ctx)
	for _, r := range rs {
		fields, err := json.Marshal(r.Fields)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO sync_run_results (organization_id, run_id, seq, action, person_id, email, name, role, fields, reason, device_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, runID, r.Seq, r.Action, nullStr(r.PersonID), r.Email, r.Name, nullStr(r.Role),
			string(fields), r.Reason, nullStr(r.DeviceID)); err != nil {
			return fmt.Errorf("insert sync run result: %w", err)
		}
	}
	return nil
}

// ListSyncRunResults lists a run's results in order.
func (db *DB) ListSyncRunResults(ctx context.Context, orgID, runID string, p app.Page) (app.List[app.SyncRunResult], error) {
	out := app.List[app.SyncRunResult]{Items: []app.SyncRunResult{}}
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM sync_run_results WHERE organization_id = ? AND run_id = ?`,
		orgID, runID).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count sync run results: %w", err)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT seq, action, person_id, email, name, role, fields, reason, device_id FROM sync_run_results
		WHERE organization_id = ? AND run_id = ? ORDER BY seq LIMIT ? OFFSET ?`, orgID, runID, p.PerPage, p.Offset())
	if err != nil {
		return out, fmt.Errorf("list sync run results: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r app.SyncRunResult
		var pid, role, dev sql.NullString
		var fields string
		if err := rows.Scan(&r.Seq, &r.Action, &pid, &r.Email, &r.Name, &role, &fields, &r.Reason, &dev); err != nil {
			return out, err
		}
		r.PersonID, r.Role, r.DeviceID = strPtr(pid), strPtr(role), strPtr(dev)
		r.Fields = map[string]string{}
		_ = json.Unmarshal([]byte(fields), &r.Fields)
		out.Items = append(out.Items, r)
	}
	return out, rows.Err()
}

// SyncMembers lists every member with their directory state.
func (db *DB) SyncMembers(ctx context.Context, orgID string) ([]app.SyncMemberState, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT u.id, u.email, u.name, coalesce(m.department, ''), m.role, m.is_active,
		d.source, d.connection_id, d.external_id, d.two_factor, d.two_factor_checked_at
		FROM memberships m JOIN users u ON u.id = m.user_id
		LEFT JOIN person_directory d ON d.organization_id = m.organization_id AND d.user_id = m.user_id
		WHERE m.organization_id = ?`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list sync members: %w", err)
	}
	defer rows.Close()
	var out []app.SyncMemberState
	for rows.Next() {
		var m app.SyncMemberState
		var active int
		var src, conn, ext, checked sql.NullString
		var tf sql.NullInt64
		if err := rows.Scan(&m.PersonID, &m.Email, &m.Name, &m.Department, &m.Role, &active, &src, &conn, &ext, &tf, &checked); err != nil {
			return nil, err
		}
		m.Active = active == 1
		m.Source = app.PersonSourceManual
		if src.Valid {
			m.Source = src.String
			m.Directory = &app.PersonDirectory{UserID: m.PersonID, Source: src.String, ConnectionID: strPtr(conn), ExternalID: strPtr(ext),
				TwoFactor: boolPtr(tf), TwoFactorCheckedAt: parseTSPtr(checked)}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func boolPtr(v sql.NullInt64) *bool {
	if !v.Valid {
		return nil
	}
	b := v.Int64 == 1
	return &b
}

func nullBool(b *bool) any {
	if b == nil {
		return nil
	}
	return boolInt(*b)
}

// SetPersonDirectory records a person's directory state.
func (db *DB) SetPersonDirectory(ctx context.Context, orgID string, d *app.PersonDirectory, at time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO person_directory (organization_id, user_id, source, connection_id, external_id,
		two_factor, two_factor_checked_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (organization_id, user_id) DO UPDATE SET source = excluded.source, connection_id = excluded.connection_id,
		external_id = excluded.external_id, two_factor = excluded.two_factor, two_factor_checked_at = excluded.two_factor_checked_at,
		updated_at = excluded.updated_at`,
		orgID, d.UserID, d.Source, nullStr(d.ConnectionID), nullStr(d.ExternalID), nullBool(d.TwoFactor), tsPtr(d.TwoFactorCheckedAt), ts(at))
	if err != nil {
		return fmt.Errorf("set person directory: %w", err)
	}
	return nil
}

// PersonSyncInfo gives people's source and two-factor status; a status is
// checked as of the latest successful sync of its connection.
func (db *DB) PersonSyncInfo(ctx context.Context, orgID string, ids []string) (map[string]app.PersonSyncView, error) {
	out := map[string]app.PersonSyncView{}
	for len(ids) > 0 {
		n := min(len(ids), 500)
		chunk := ids[:n]
		ids = ids[n:]
		args := []any{orgID}
		for _, id := range chunk {
			args = append(args, id)
		}
		rows, err := db.rd(ctx).QueryContext(ctx, `SELECT d.user_id, d.source, d.connection_id, d.two_factor, d.two_factor_checked_at,
			(SELECT max(r.finished_at) FROM sync_runs r WHERE r.organization_id = d.organization_id AND r.connection_id = d.connection_id
				AND r.status = 'succeeded' AND r.dry_run = 0)
			FROM person_directory d WHERE d.organization_id = ? AND d.user_id IN (`+placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("person sync info: %w", err)
		}
		for rows.Next() {
			var id, src string
			var conn, checked, last sql.NullString
			var tf sql.NullInt64
			if err := rows.Scan(&id, &src, &conn, &tf, &checked, &last); err != nil {
				rows.Close()
				return nil, err
			}
			v := app.PersonSyncView{Source: app.PersonSource{Type: src, ConnectionID: strPtr(conn)}}
			v.TwoFactor.Enrolled = boolPtr(tf)
			if v.TwoFactor.Enrolled != nil {
				v.TwoFactor.CheckedAt = parseTSPtr(checked)
				if l := parseTSPtr(last); l != nil && (v.TwoFactor.CheckedAt == nil || l.After(*v.TwoFactor.CheckedAt)) {
					v.TwoFactor.CheckedAt = l
				}
			}
			out[id] = v
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return nil, err
		}
		rows.Close()
	}
	return out, nil
}

// SyncedOrganizations lists organizations with an employee sync provider.
func (db *DB) SyncedOrganizations(ctx context.Context) (map[string]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT organization_id, employee_provider FROM sync_settings WHERE employee_provider IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("synced organizations: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var org, slug string
		if err := rows.Scan(&org, &slug); err != nil {
			return nil, err
		}
		out[org] = slug
	}
	return out, rows.Err()
}
