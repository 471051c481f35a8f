package storage

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.ControlStore = (*DB)(nil)

const controlColumns = `id, code, name, description, status, owner_id, justification, status_changed_at, created_at, updated_at`

func scanControl(row interface{ Scan(...any) error }) (*app.Control, error) {
	var c app.Control
	var owner, just, changed sql.NullString
	var created, updated string
	if err := row.Scan(&c.ID, &c.Code, &c.Name, &c.Description, &c.Status, &owner, &just, &changed, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	c.OwnerID, c.Justification = strPtr(owner), strPtr(just)
	c.StatusChangedAt = parseTSPtr(changed)
	c.CreatedAt, c.UpdatedAt = parseTS(created), parseTS(updated)
	c.Requirements = []app.RequirementLink{}
	return &c, nil
}

const insertControl = `INSERT INTO controls (organization_id, ` + controlColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func controlArgs(orgID string, c *app.Control) []any {
	return []any{orgID, c.ID, c.Code, c.Name, c.Description, c.Status, nullStr(c.OwnerID), nullStr(c.Justification),
		tsPtr(c.StatusChangedAt), ts(c.CreatedAt), ts(c.UpdatedAt)}
}

// CreateControl inserts a control.
func (db *DB) CreateControl(ctx context.Context, orgID string, c *app.Control) error {
	_, err := db.wr(ctx).ExecContext(ctx, insertControl, controlArgs(orgID, c)...)
	return mapErr(err)
}

// CreateControls inserts many controls with one prepared statement.
func (db *DB) CreateControls(ctx context.Context, orgID string, cs []*app.Control) error {
	if len(cs) == 0 {
		return nil
	}
	return db.InTx(ctx, func(ctx context.Context) error {
		tx := ctx.Value(txKey{}).(*txState).tx
		stmt, err := tx.PrepareContext(ctx, insertControl)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, c := range cs {
			if _, err := stmt.ExecContext(ctx, controlArgs(orgID, c)...); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
}

// UpdateControl writes every mutable column.
func (db *DB) UpdateControl(ctx context.Context, orgID string, c *app.Control) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE controls SET code = ?, name = ?, description = ?, status = ?, owner_id = ?,
		justification = ?, status_changed_at = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		c.Code, c.Name, c.Description, c.Status, nullStr(c.OwnerID), nullStr(c.Justification), tsPtr(c.StatusChangedAt),
		ts(c.UpdatedAt), orgID, c.ID)
	return affected(res, err)
}

// GetControl returns one control.
func (db *DB) GetControl(ctx context.Context, orgID, id string) (*app.Control, error) {
	return scanControl(db.rd(ctx).QueryRowContext(ctx, `SELECT `+controlColumns+` FROM controls WHERE organization_id = ? AND id = ?`, orgID, id))
}

// ListControls returns a page of controls matching every filter.
func (db *DB) ListControls(ctx context.Context, orgID string, f app.ControlFilter) (app.List[app.Control], error) {
	where := []string{"organization_id = ?"}
	args := []any{orgID}
	if f.FrameworkID != "" {
		where = append(where, `id IN (SELECT control_id FROM requirement_controls WHERE organization_id = ? AND framework_id = ?)`)
		args = append(args, orgID, f.FrameworkID)
	}
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	if f.OwnerID != "" {
		where = append(where, "owner_id = ?")
		args = append(args, f.OwnerID)
	}
	if f.Search != "" {
		where = append(where, "instr(lower(code || ' ' || name), ?) > 0")
		args = append(args, strings.ToLower(f.Search))
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.Control]{Items: []app.Control{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM controls WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, err
	}
	if f.Page.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+controlColumns+` FROM controls WHERE `+cond+` ORDER BY id LIMIT ? OFFSET ?`,
		append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanControl(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *c)
	}
	return out, rows.Err()
}

// ValidEvidenceCounts counts each control's evidence not expired at now.
func (db *DB) ValidEvidenceCounts(ctx context.Context, orgID string, ids []string, now time.Time) (map[string]int, error) {
	out := map[string]int{}
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{orgID, ts(now)}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT control_id, count(*) FROM evidence WHERE organization_id = ?
		AND (expires_at IS NULL OR expires_at > ?) AND control_id IN (`+placeholders(len(ids))+`) GROUP BY control_id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}

// MissingControls returns the ids that are not controls of the organization.
func (db *DB) MissingControls(ctx context.Context, orgID string, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{orgID}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT id FROM controls WHERE organization_id = ? AND id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		found[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var missing []string
	for _, id := range ids {
		if !found[id] {
			missing = append(missing, id)
		}
	}
	return missing, nil
}

// Raw returns the read-only pool, for tests and diagnostics.
func (db *DB) Raw() *sql.DB { return db.r }
