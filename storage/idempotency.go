package storage

import (
	"context"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// GetIdempotency returns the stored response for a key.
func (db *DB) GetIdempotency(ctx context.Context, orgID, key string) (*app.IdempotencyRecord, error) {
	var r app.IdempotencyRecord
	var created string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT request_hash, status, content_type, body, created_at
		FROM idempotency_keys WHERE organization_id = ? AND key = ?`, orgID, key).
		Scan(&r.RequestHash, &r.Response.Status, &r.Response.ContentType, &r.Response.Body, &created)
	if err != nil {
		return nil, mapErr(err)
	}
	r.CreatedAt = parseTS(created)
	return &r, nil
}

// PutIdempotency stores (or replaces an expired) response for a key.
func (db *DB) PutIdempotency(ctx context.Context, orgID, key string, r *app.IdempotencyRecord) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO idempotency_keys
		(organization_id, key, request_hash, status, content_type, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (organization_id, key) DO UPDATE SET request_hash = excluded.request_hash, status = excluded.status,
		content_type = excluded.content_type, body = excluded.body, created_at = excluded.created_at`,
		orgID, key, r.RequestHash, r.Response.Status, r.Response.ContentType, r.Response.Body, ts(r.CreatedAt))
	return mapErr(err)
}

// PurgeIdempotency deletes records created before the cut-off.
func (db *DB) PurgeIdempotency(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < ?`, ts(before))
	if err != nil {
		return 0, mapErr(err)
	}
	return res.RowsAffected()
}
