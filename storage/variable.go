package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.VariableStore = (*DB)(nil)

const variableColumns = `id, name, value, description, created_at, updated_at`

func scanVariable(row interface{ Scan(...any) error }) (*app.Variable, error) {
	var v app.Variable
	var created, updated string
	if err := row.Scan(&v.ID, &v.Name, &v.Value, &v.Description, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	v.Placeholder = "{{" + v.Name + "}}"
	v.CreatedAt, v.UpdatedAt = parseTS(created), parseTS(updated)
	return &v, nil
}

// CreateVariable inserts a variable; a taken name is ErrConflict.
func (db *DB) CreateVariable(ctx context.Context, orgID string, v *app.Variable) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO variables (organization_id, `+variableColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		orgID, v.ID, v.Name, v.Value, v.Description, ts(v.CreatedAt), ts(v.UpdatedAt))
	return mapErr(err)
}

// UpdateVariable writes a variable's name, value and description.
func (db *DB) UpdateVariable(ctx context.Context, orgID string, v *app.Variable) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE variables SET name = ?, value = ?, description = ?, updated_at = ?
		WHERE organization_id = ? AND id = ?`, v.Name, v.Value, v.Description, ts(v.UpdatedAt), orgID, v.ID)
	return affected(res, err)
}

// DeleteVariable removes a variable.
func (db *DB) DeleteVariable(ctx context.Context, orgID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM variables WHERE organization_id = ? AND id = ?`, orgID, id)
	return affected(res, err)
}

// GetVariable returns one variable.
func (db *DB) GetVariable(ctx context.Context, orgID, id string) (*app.Variable, error) {
	return scanVariable(db.rd(ctx).QueryRowContext(ctx, `SELECT `+variableColumns+` FROM variables WHERE organization_id = ? AND id = ?`, orgID, id))
}

// ListVariables returns a page of variables ordered by name.
func (db *DB) ListVariables(ctx context.Context, orgID string, f app.VariableFilter) (app.List[app.Variable], error) {
	cond, args := "organization_id = ?", []any{orgID}
	if f.Search != "" {
		cond += " AND instr(name, ?) > 0"
		args = append(args, strings.ToLower(f.Search))
	}
	out := app.List[app.Variable]{Items: []app.Variable{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM variables WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count variables: %w", err)
	}
	if f.Page.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+variableColumns+` FROM variables WHERE `+cond+` ORDER BY name LIMIT ? OFFSET ?`,
		append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list variables: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scanVariable(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *v)
	}
	return out, rows.Err()
}

// VariableValues returns every variable of the organization by name.
func (db *DB) VariableValues(ctx context.Context, orgID string) (map[string]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT name, value FROM variables WHERE organization_id = ?`, orgID)
	if err != nil {
		return nil, fmt.Errorf("read variables: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var n, v string
		if err := rows.Scan(&n, &v); err != nil {
			return nil, err
		}
		out[n] = v
	}
	return out, rows.Err()
}

// CountVariables counts the organization's variables.
func (db *DB) CountVariables(ctx context.Context, orgID string) (int, error) {
	var n int
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM variables WHERE organization_id = ?`, orgID).Scan(&n)
	return n, err
}
