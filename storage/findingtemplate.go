package storage

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.FindingTemplateStore = (*DB)(nil)

const findingTemplateColumns = `id, title, content, category, type, severity, finding_class, sort_order, created_at, updated_at`

func scanFindingTemplate(row interface{ Scan(...any) error }) (*app.FindingTemplate, error) {
	var t app.FindingTemplate
	var typ, sev, class sql.NullString
	var created, updated string
	if err := row.Scan(&t.ID, &t.Title, &t.Content, &t.Category, &typ, &sev, &class, &t.Order, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	t.Type, t.Severity, t.FindingClass = strPtr(typ), strPtr(sev), strPtr(class)
	t.CreatedAt, t.UpdatedAt = parseTS(created), parseTS(updated)
	return &t, nil
}

// CreateFindingTemplate inserts a template.
func (db *DB) CreateFindingTemplate(ctx context.Context, orgID string, t *app.FindingTemplate) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO finding_templates (organization_id, `+findingTemplateColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, t.ID, t.Title, t.Content, t.Category, nullStr(t.Type),
		nullStr(t.Severity), nullStr(t.FindingClass), t.Order, ts(t.CreatedAt), ts(t.UpdatedAt))
	return mapErr(err)
}

// UpdateFindingTemplate writes every mutable column.
func (db *DB) UpdateFindingTemplate(ctx context.Context, orgID string, t *app.FindingTemplate) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE finding_templates SET title = ?, content = ?, category = ?, type = ?,
		severity = ?, finding_class = ?, sort_order = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		t.Title, t.Content, t.Category, nullStr(t.Type), nullStr(t.Severity), nullStr(t.FindingClass), t.Order,
		ts(t.UpdatedAt), orgID, t.ID)
	return affected(res, err)
}

// DeleteFindingTemplate removes a template.
func (db *DB) DeleteFindingTemplate(ctx context.Context, orgID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM finding_templates WHERE organization_id = ? AND id = ?`, orgID, id)
	return affected(res, err)
}

// GetFindingTemplate returns one template.
func (db *DB) GetFindingTemplate(ctx context.Context, orgID, id string) (*app.FindingTemplate, error) {
	return scanFindingTemplate(db.rd(ctx).QueryRowContext(ctx, `SELECT `+findingTemplateColumns+` FROM finding_templates
		WHERE organization_id = ? AND id = ?`, orgID, id))
}

// ListFindingTemplates returns a page of templates by order, then id.
func (db *DB) ListFindingTemplates(ctx context.Context, orgID string, p app.Page) (app.List[app.FindingTemplate], error) {
	out := app.List[app.FindingTemplate]{Items: []app.FindingTemplate{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM finding_templates WHERE organization_id = ?`, orgID).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count finding templates: %w", err)
	}
	if p.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+findingTemplateColumns+` FROM finding_templates WHERE organization_id = ?
		ORDER BY sort_order, id LIMIT ? OFFSET ?`, orgID, p.PerPage, p.Offset())
	if err != nil {
		return out, fmt.Errorf("list finding templates: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanFindingTemplate(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *t)
	}
	return out, rows.Err()
}
