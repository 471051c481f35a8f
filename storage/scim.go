package storage

import (
	"context"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// PutSCIMToken replaces the organization's SCIM token.
func (db *DB) PutSCIMToken(ctx context.Context, orgID, hash, hint, createdBy string, at time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO scim_tokens (organization_id, token_hash, hint, created_at, created_by)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (organization_id) DO UPDATE SET token_hash = excluded.token_hash,
		hint = excluded.hint, created_at = excluded.created_at, created_by = excluded.created_by`,
		orgID, hash, hint, ts(at), createdBy)
	return mapErr(err)
}

// GetSCIMToken returns the token's hint and creation time.
func (db *DB) GetSCIMToken(ctx context.Context, orgID string) (string, time.Time, error) {
	var hint, at string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT hint, created_at FROM scim_tokens WHERE organization_id = ?`, orgID).Scan(&hint, &at)
	if err != nil {
		return "", time.Time{}, mapErr(err)
	}
	return hint, parseTS(at), nil
}

// DeleteSCIMToken removes the organization's token.
func (db *DB) DeleteSCIMToken(ctx context.Context, orgID string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM scim_tokens WHERE organization_id = ?`, orgID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.ErrNotFound
	}
	return nil
}

// SCIMTokenOrganization returns the organization of a token hash.
func (db *DB) SCIMTokenOrganization(ctx context.Context, hash string) (string, error) {
	var id string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT organization_id FROM scim_tokens WHERE token_hash = ?`, hash).Scan(&id)
	return id, mapErr(err)
}

// SCIMTokenCreator returns who created the organization's token.
func (db *DB) SCIMTokenCreator(ctx context.Context, orgID string) (string, error) {
	var by string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT created_by FROM scim_tokens WHERE organization_id = ?`, orgID).Scan(&by)
	if err != nil {
		return "", mapErr(err)
	}
	return by, nil
}
