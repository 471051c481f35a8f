package storage

import (
	"context"
	"database/sql"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

const apiKeyColumns = `id, organization_id, name, role, prefix, hash, created_by_id, created_at, expires_at, last_used_at, revoked_at`

func scanAPIKey(row interface{ Scan(...any) error }, extra ...any) (*app.APIKey, error) {
	var k app.APIKey
	var createdBy, expires, lastUsed, revoked sql.NullString
	var created string
	dest := append([]any{&k.ID, &k.OrganizationID, &k.Name, &k.Role, &k.Prefix, &k.Hash, &createdBy, &created, &expires, &lastUsed, &revoked}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, mapErr(err)
	}
	k.CreatedByID = strPtr(createdBy)
	k.CreatedAt = parseTS(created)
	k.ExpiresAt, k.LastUsedAt, k.RevokedAt = parseTSPtr(expires), parseTSPtr(lastUsed), parseTSPtr(revoked)
	return &k, nil
}

// CreateAPIKey inserts a key (hash only).
func (db *DB) CreateAPIKey(ctx context.Context, k *app.APIKey) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO api_keys (`+apiKeyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.OrganizationID, k.Name, string(k.Role), k.Prefix, k.Hash, nullStr(k.CreatedByID), ts(k.CreatedAt),
		tsPtr(k.ExpiresAt), tsPtr(k.LastUsedAt), tsPtr(k.RevokedAt))
	return mapErr(err)
}

// ListAPIKeys returns the organization's keys.
func (db *DB) ListAPIKeys(ctx context.Context, orgID string) ([]app.APIKey, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE organization_id = ? ORDER BY id`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []app.APIKey{}
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *k)
	}
	return out, rows.Err()
}

// GetAPIKey returns one key of the organization.
func (db *DB) GetAPIKey(ctx context.Context, orgID, id string) (*app.APIKey, error) {
	return scanAPIKey(db.rd(ctx).QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE organization_id = ? AND id = ?`, orgID, id))
}

// FindAPIKeyByID returns a key of any organization.
func (db *DB) FindAPIKeyByID(ctx context.Context, id string) (*app.APIKey, error) {
	return scanAPIKey(db.rd(ctx).QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE id = ?`, id))
}

// FindAPIKeyByHash returns the key with this hash and its organization's plan.
func (db *DB) FindAPIKeyByHash(ctx context.Context, hash string) (*app.APIKey, string, error) {
	var plan string
	k, err := scanAPIKey(db.rd(ctx).QueryRowContext(ctx, `SELECT `+prefixed("k.", apiKeyColumns)+`, o.plan
		FROM api_keys k JOIN organizations o ON o.id = k.organization_id WHERE k.hash = ?`, hash), &plan)
	return k, plan, err
}

// RevokeAPIKey marks a key revoked.
func (db *DB) RevokeAPIKey(ctx context.Context, orgID, id string, at time.Time) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE organization_id = ? AND id = ? AND revoked_at IS NULL`, ts(at), orgID, id)
	return affected(res, err)
}

// TouchAPIKeys records last-used times in one transaction.
func (db *DB) TouchAPIKeys(ctx context.Context, used map[string]time.Time) error {
	return db.InTx(ctx, func(ctx context.Context) error {
		q := db.wr(ctx)
		for id, at := range used {
			if _, err := q.ExecContext(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`, ts(at), id, ts(at)); err != nil {
				return err
			}
		}
		return nil
	})
}
