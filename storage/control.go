package storage

import (
	"context"
	"database/sql"

	"github.com/compliance-appliance/compliance/app"
)

const controlColumns = `id, code, name, description, status, owner_id, justification, created_at, updated_at`

func scanControl(row interface{ Scan(...any) error }) (*app.Control, error) {
	var c app.Control
	var owner, just sql.NullString
	var created, updated string
	if err := row.Scan(&c.ID, &c.Code, &c.Name, &c.Description, &c.Status, &owner, &just, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	c.OwnerID, c.Justification = strPtr(owner), strPtr(just)
	c.CreatedAt, c.UpdatedAt = parseTS(created), parseTS(updated)
	return &c, nil
}

// CreateControl inserts a control.
func (db *DB) CreateControl(ctx context.Context, orgID string, c *app.Control) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO controls (organization_id, `+controlColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		orgID, c.ID, c.Code, c.Name, c.Description, c.Status, nullStr(c.OwnerID), nullStr(c.Justification), ts(c.CreatedAt), ts(c.UpdatedAt))
	return mapErr(err)
}

// GetControl returns one control.
func (db *DB) GetControl(ctx context.Context, orgID, id string) (*app.Control, error) {
	return scanControl(db.rd(ctx).QueryRowContext(ctx, `SELECT `+controlColumns+` FROM controls WHERE organization_id = ? AND id = ?`, orgID, id))
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
