package storage

import (
	"context"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.AttachmentStore = (*DB)(nil)

const attachmentColumns = `id, entity_type, entity_id, name, content_type, size, sha256, description, uploaded_by_type,
	uploaded_by_id, created_at`

func scanAttachment(row interface{ Scan(...any) error }) (*app.Attachment, error) {
	var a app.Attachment
	var created string
	if err := row.Scan(&a.ID, &a.EntityType, &a.EntityID, &a.Name, &a.Type, &a.Size, &a.SHA256, &a.Description,
		&a.UploadedByType, &a.UploadedByID, &created); err != nil {
		return nil, mapErr(err)
	}
	a.CreatedAt = parseTS(created)
	return &a, nil
}

// CreateAttachment inserts an attachment record.
func (db *DB) CreateAttachment(ctx context.Context, orgID string, a *app.Attachment) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO attachments (organization_id, `+attachmentColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, a.ID, a.EntityType, a.EntityID, a.Name, a.Type, a.Size,
		a.SHA256, a.Description, a.UploadedByType, a.UploadedByID, ts(a.CreatedAt))
	return mapErr(err)
}

// GetAttachment returns one attachment record.
func (db *DB) GetAttachment(ctx context.Context, orgID, id string) (*app.Attachment, error) {
	return scanAttachment(db.rd(ctx).QueryRowContext(ctx, `SELECT `+attachmentColumns+` FROM attachments
		WHERE organization_id = ? AND id = ?`, orgID, id))
}

// ListAttachments returns a page of one resource's attachments, oldest first.
func (db *DB) ListAttachments(ctx context.Context, orgID, entityType, entityID string, p app.Page) (app.List[app.Attachment], error) {
	out := app.List[app.Attachment]{Items: []app.Attachment{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM attachments WHERE organization_id = ? AND entity_type = ? AND entity_id = ?`,
		orgID, entityType, entityID).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count attachments: %w", err)
	}
	if p.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+attachmentColumns+` FROM attachments WHERE organization_id = ? AND entity_type = ?
		AND entity_id = ? ORDER BY id LIMIT ? OFFSET ?`, orgID, entityType, entityID, p.PerPage, p.Offset())
	if err != nil {
		return out, fmt.Errorf("list attachments: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		a, err := scanAttachment(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *a)
	}
	return out, rows.Err()
}
