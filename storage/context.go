package storage

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.ContextStore = (*DB)(nil)

const contextColumns = `id, version, document, change_note, saved_by_type, saved_by_id, saved_at`

func scanContext(row interface{ Scan(...any) error }) (*app.OrgContext, error) {
	var c app.OrgContext
	var id, doc, savedAt string
	var by app.ActorRef
	if err := row.Scan(&id, &c.Version, &doc, &c.ChangeNote, &by.Type, &by.ID, &savedAt); err != nil {
		return nil, mapErr(err)
	}
	var d app.ContextDocument
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return nil, fmt.Errorf("decode context version %s: %w", id, err)
	}
	c.SetDocument(d)
	at := parseTS(savedAt)
	c.ID, c.SavedBy, c.SavedAt = &id, &by, &at
	return &c, nil
}

// CurrentContext returns the newest saved version or ErrNotFound.
func (db *DB) CurrentContext(ctx context.Context, orgID string) (*app.OrgContext, error) {
	return scanContext(db.rd(ctx).QueryRowContext(ctx, `SELECT `+contextColumns+` FROM context_versions
		WHERE organization_id = ? ORDER BY version DESC LIMIT 1`, orgID))
}

// SaveContext inserts a new version; versions are never rewritten.
func (db *DB) SaveContext(ctx context.Context, orgID string, c *app.OrgContext) error {
	doc, err := json.Marshal(c.Document())
	if err != nil {
		return fmt.Errorf("encode context: %w", err)
	}
	if c.ID == nil || c.SavedBy == nil || c.SavedAt == nil {
		return fmt.Errorf("save context: id, savedBy and savedAt are required")
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO context_versions (organization_id, `+contextColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		orgID, *c.ID, c.Version, string(doc), c.ChangeNote, c.SavedBy.Type, c.SavedBy.ID, ts(*c.SavedAt))
	return mapErr(err)
}

// GetContextVersion returns a version by id, or by number when id is empty.
func (db *DB) GetContextVersion(ctx context.Context, orgID, id string, number int) (*app.OrgContext, error) {
	if id != "" {
		return scanContext(db.rd(ctx).QueryRowContext(ctx, `SELECT `+contextColumns+` FROM context_versions
			WHERE organization_id = ? AND id = ?`, orgID, id))
	}
	return scanContext(db.rd(ctx).QueryRowContext(ctx, `SELECT `+contextColumns+` FROM context_versions
		WHERE organization_id = ? AND version = ?`, orgID, number))
}

// ListContextVersions returns a page of saved versions, newest first.
func (db *DB) ListContextVersions(ctx context.Context, orgID string, pg app.Page) (app.List[app.OrgContext], error) {
	out := app.List[app.OrgContext]{Items: []app.OrgContext{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM context_versions WHERE organization_id = ?`, orgID).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count context versions: %w", err)
	}
	if pg.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+contextColumns+` FROM context_versions WHERE organization_id = ?
		ORDER BY version DESC LIMIT ? OFFSET ?`, orgID, pg.PerPage, pg.Offset())
	if err != nil {
		return out, fmt.Errorf("list context versions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanContext(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *c)
	}
	return out, rows.Err()
}
