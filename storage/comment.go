package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

var (
	_ app.CommentStore = (*DB)(nil)
	_ app.EntityStore  = (*DB)(nil)
)

// entityQueries is the fixed allowlist of resources comments and
// attachments attach to: one existence query per type, and the same query
// narrowed to what is assigned to (owned by, or is) a person. Add a type
// here and in app's entity lists together.
var entityQueries = map[string]struct{ any, assigned string }{
	app.EntityVendor: {
		`SELECT 1 FROM vendors WHERE organization_id = ? AND id = ?`,
		`SELECT 1 FROM vendors WHERE organization_id = ? AND id = ? AND assignee_id = ?`},
	app.EntityPerson: {
		`SELECT 1 FROM memberships WHERE organization_id = ? AND user_id = ?`,
		`SELECT 1 FROM memberships WHERE organization_id = ? AND user_id = ? AND user_id = ?`},
	app.EntityControl: {
		`SELECT 1 FROM controls WHERE organization_id = ? AND id = ?`,
		`SELECT 1 FROM controls WHERE organization_id = ? AND id = ? AND owner_id = ?`},
	app.EntityTask: {
		`SELECT 1 FROM tasks WHERE organization_id = ? AND id = ?`,
		`SELECT 1 FROM tasks WHERE organization_id = ? AND id = ? AND assignee_id = ?`},
	app.EntityRisk: {
		`SELECT 1 FROM risks WHERE organization_id = ? AND id = ?`,
		`SELECT 1 FROM risks WHERE organization_id = ? AND id = ? AND owner_id = ?`},
	app.EntityFinding: {
		`SELECT 1 FROM findings WHERE organization_id = ? AND id = ?`,
		`SELECT 1 FROM findings f JOIN tasks t ON t.id = f.task_id AND t.organization_id = f.organization_id
			WHERE f.organization_id = ? AND f.id = ? AND t.assignee_id = ?`},
	app.EntityCorrectiveAction: {
		`SELECT 1 FROM corrective_actions WHERE organization_id = ? AND id = ?`,
		`SELECT 1 FROM corrective_actions WHERE organization_id = ? AND id = ? AND owner_id = ?`},
	app.EntityComment: {
		`SELECT 1 FROM comments WHERE organization_id = ? AND id = ?`,
		`SELECT 1 FROM comments WHERE organization_id = ? AND id = ? AND author_type = 'person' AND author_id = ?`},
	app.EntityPolicy: {
		`SELECT 1 FROM policies WHERE organization_id = ? AND id = ?`,
		`SELECT 1 FROM policies WHERE organization_id = ? AND id = ? AND assignee_id = ?`},
	// Evidence is visible to the owner of its control and the assignee of
	// its task (App.seesEvidence).
	app.EntityEvidence: {
		`SELECT 1 FROM evidence WHERE organization_id = ? AND id = ?`,
		`SELECT 1 FROM evidence e
			LEFT JOIN controls c ON c.id = e.control_id AND c.organization_id = e.organization_id
			LEFT JOIN tasks t ON t.id = e.task_id AND t.organization_id = e.organization_id
			WHERE e.organization_id = ?1 AND e.id = ?2 AND (c.owner_id = ?3 OR t.assignee_id = ?3)`},
	// Frameworks are not assigned to people: employees and contractors
	// never match (?3 is never empty here).
	app.EntityFramework: {
		`SELECT 1 FROM organization_frameworks WHERE organization_id = ?1 AND framework_id = ?2
			UNION ALL SELECT 1 FROM custom_frameworks WHERE organization_id = ?1 AND id = ?2 LIMIT 1`,
		`SELECT 1 FROM organization_frameworks WHERE organization_id = ?1 AND framework_id = ?2 AND ?3 = ''`},
	app.EntityRequirement: {
		`SELECT 1 FROM requirement_controls WHERE organization_id = ?1 AND requirement_id = ?2
			UNION ALL SELECT 1 FROM custom_requirements WHERE organization_id = ?1 AND id = ?2 LIMIT 1`,
		`SELECT 1 FROM requirement_controls rc JOIN controls c ON c.id = rc.control_id AND c.organization_id = rc.organization_id
			WHERE rc.organization_id = ? AND rc.requirement_id = ? AND c.owner_id = ? LIMIT 1`},
	app.EntityDevice: {
		`SELECT 1 FROM devices WHERE organization_id = ? AND id = ?`,
		`SELECT 1 FROM devices WHERE organization_id = ? AND id = ? AND person_id = ?`},
	app.EntityESGDataPoint: {
		`SELECT 1 FROM esg_data_points WHERE organization_id = ? AND id = ?`,
		`SELECT 1 FROM esg_data_points WHERE organization_id = ?1 AND id = ?2 AND ?3 = ''`},
	// An employee or contractor sees the incidents they reported.
	app.EntityIncident: {
		`SELECT 1 FROM incidents WHERE organization_id = ? AND id = ?`,
		`SELECT 1 FROM incidents WHERE organization_id = ? AND id = ? AND reported_by_id = ?`},
}

// EntityExists reports whether entityType/id is a resource of the
// organization (and, with assignee set, assigned to that person).
func (db *DB) EntityExists(ctx context.Context, orgID, entityType, id, assignee string) (bool, error) {
	q, ok := entityQueries[entityType]
	if !ok {
		return false, nil
	}
	query, args := q.any, []any{orgID, id}
	if assignee != "" {
		query, args = q.assigned, append(args, assignee)
	}
	var one int
	err := db.rd(ctx).QueryRowContext(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up %s %s: %w", entityType, id, err)
	}
	return true, nil
}

const commentColumns = `id, entity_type, entity_id, content, author_type, author_id, created_at, updated_at`

func scanComment(row interface{ Scan(...any) error }) (*app.Comment, error) {
	var c app.Comment
	var created, updated string
	if err := row.Scan(&c.ID, &c.EntityType, &c.EntityID, &c.Content, &c.AuthorType, &c.AuthorID, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	c.CreatedAt, c.UpdatedAt = parseTS(created), parseTS(updated)
	return &c, nil
}

// CreateComment inserts a comment.
func (db *DB) CreateComment(ctx context.Context, orgID string, c *app.Comment) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO comments (organization_id, `+commentColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		orgID, c.ID, c.EntityType, c.EntityID, c.Content, c.AuthorType, c.AuthorID, ts(c.CreatedAt), ts(c.UpdatedAt))
	return mapErr(err)
}

// UpdateComment writes the content.
func (db *DB) UpdateComment(ctx context.Context, orgID string, c *app.Comment) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE comments SET content = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		c.Content, ts(c.UpdatedAt), orgID, c.ID)
	return affected(res, err)
}

// DeleteComment removes a comment.
func (db *DB) DeleteComment(ctx context.Context, orgID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM comments WHERE organization_id = ? AND id = ?`, orgID, id)
	return affected(res, err)
}

// GetComment returns one comment.
func (db *DB) GetComment(ctx context.Context, orgID, id string) (*app.Comment, error) {
	return scanComment(db.rd(ctx).QueryRowContext(ctx, `SELECT `+commentColumns+` FROM comments WHERE organization_id = ? AND id = ?`, orgID, id))
}

// ListComments returns a page of one resource's comments, oldest first.
func (db *DB) ListComments(ctx context.Context, orgID, entityType, entityID string, p app.Page) (app.List[app.Comment], error) {
	out := app.List[app.Comment]{Items: []app.Comment{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM comments WHERE organization_id = ? AND entity_type = ? AND entity_id = ?`,
		orgID, entityType, entityID).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count comments: %w", err)
	}
	if p.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+commentColumns+` FROM comments WHERE organization_id = ? AND entity_type = ? AND entity_id = ?
		ORDER BY id LIMIT ? OFFSET ?`, orgID, entityType, entityID, p.PerPage, p.Offset())
	if err != nil {
		return out, fmt.Errorf("list comments: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanComment(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *c)
	}
	return out, rows.Err()
}
