package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.CorrectiveActionStore = (*DB)(nil)

const correctiveColumns = `id, finding_id, title, description, status, priority, owner_id, due_date, closure_note,
	closure_attachment_ids, resolved_at, created_at, updated_at`

func scanCorrective(row interface{ Scan(...any) error }) (*app.CorrectiveAction, error) {
	var c app.CorrectiveAction
	var owner, due, note, resolved sql.NullString
	var atts, created, updated string
	if err := row.Scan(&c.ID, &c.FindingID, &c.Title, &c.Description, &c.Status, &c.Priority, &owner, &due, &note,
		&atts, &resolved, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	c.OwnerID, c.DueDate, c.ClosureNote = strPtr(owner), strPtr(due), strPtr(note)
	c.ClosureAttachmentIDs = []string{}
	if err := json.Unmarshal([]byte(atts), &c.ClosureAttachmentIDs); err != nil {
		return nil, fmt.Errorf("decode closure attachments of %s: %w", c.ID, err)
	}
	c.ResolvedAt = parseTSPtr(resolved)
	c.CreatedAt, c.UpdatedAt = parseTS(created), parseTS(updated)
	return &c, nil
}

func correctiveArgs(c *app.CorrectiveAction) ([]any, error) {
	ids := c.ClosureAttachmentIDs
	if ids == nil {
		ids = []string{}
	}
	atts, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	return []any{c.FindingID, c.Title, c.Description, c.Status, c.Priority, nullStr(c.OwnerID), nullStr(c.DueDate),
		nullStr(c.ClosureNote), string(atts), tsPtr(c.ResolvedAt), ts(c.CreatedAt), ts(c.UpdatedAt)}, nil
}

// CreateCorrectiveAction inserts a corrective action.
func (db *DB) CreateCorrectiveAction(ctx context.Context, orgID string, c *app.CorrectiveAction) error {
	args, err := correctiveArgs(c)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO corrective_actions (organization_id, `+correctiveColumns+`)
		VALUES (?, ?, `+placeholders(len(args))+`)`, append([]any{orgID, c.ID}, args...)...)
	return mapErr(err)
}

// UpdateCorrectiveAction writes every mutable column.
func (db *DB) UpdateCorrectiveAction(ctx context.Context, orgID string, c *app.CorrectiveAction) error {
	args, err := correctiveArgs(c)
	if err != nil {
		return err
	}
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE corrective_actions SET finding_id = ?, title = ?, description = ?,
		status = ?, priority = ?, owner_id = ?, due_date = ?, closure_note = ?, closure_attachment_ids = ?, resolved_at = ?,
		created_at = ?, updated_at = ? WHERE organization_id = ? AND id = ?`, append(args, orgID, c.ID)...)
	return affected(res, err)
}

// GetCorrectiveAction returns one action of a finding.
func (db *DB) GetCorrectiveAction(ctx context.Context, orgID, findingID, id string) (*app.CorrectiveAction, error) {
	return scanCorrective(db.rd(ctx).QueryRowContext(ctx, `SELECT `+correctiveColumns+` FROM corrective_actions
		WHERE organization_id = ? AND finding_id = ? AND id = ?`, orgID, findingID, id))
}

// ListCorrectiveActions returns a page of a finding's actions, optionally
// only those owned by ownerID.
func (db *DB) ListCorrectiveActions(ctx context.Context, orgID, findingID, ownerID string, p app.Page) (app.List[app.CorrectiveAction], error) {
	cond := `organization_id = ? AND finding_id = ?`
	args := []any{orgID, findingID}
	if ownerID != "" {
		cond += ` AND owner_id = ?`
		args = append(args, ownerID)
	}
	out := app.List[app.CorrectiveAction]{Items: []app.CorrectiveAction{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM corrective_actions WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count corrective actions: %w", err)
	}
	if p.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+correctiveColumns+` FROM corrective_actions WHERE `+cond+` ORDER BY id LIMIT ? OFFSET ?`,
		append(args, p.PerPage, p.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list corrective actions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanCorrective(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *c)
	}
	return out, rows.Err()
}

// DueCorrectiveActions returns open or in-progress actions of every
// organization due before the date (YYYY-MM-DD).
func (db *DB) DueCorrectiveActions(ctx context.Context, before string, limit int) ([]app.OrgCorrectiveAction, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT organization_id, `+correctiveColumns+` FROM corrective_actions
		WHERE status IN ('open', 'in_progress') AND due_date IS NOT NULL AND due_date < ? ORDER BY due_date, id LIMIT ?`, before, limit)
	if err != nil {
		return nil, fmt.Errorf("due corrective actions: %w", err)
	}
	defer rows.Close()
	var out []app.OrgCorrectiveAction
	for rows.Next() {
		var org string
		c, err := scanCorrective(prefixScan{rows, &org})
		if err != nil {
			return nil, err
		}
		out = append(out, app.OrgCorrectiveAction{OrgID: org, Action: *c})
	}
	return out, rows.Err()
}

// prefixScan scans one leading column into first, the rest into the args.
type prefixScan struct {
	row   interface{ Scan(...any) error }
	first any
}

func (p prefixScan) Scan(dest ...any) error { return p.row.Scan(append([]any{p.first}, dest...)...) }
