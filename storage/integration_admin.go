package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.AdminIntegrationStore = (*DB)(nil)

// ListProviderSettings returns the appliance-wide provider settings by slug.
// The table is appliance-wide (no organization owns a provider).
func (db *DB) ListProviderSettings(ctx context.Context) (map[string]app.ProviderSettings, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT provider_slug, is_active, client_id, sealed_client_secret, custom_scopes,
		custom_settings, credentials_updated_at, updated_by, updated_at FROM integration_provider_settings`)
	if err != nil {
		return nil, fmt.Errorf("list provider settings: %w", err)
	}
	defer rows.Close()
	out := map[string]app.ProviderSettings{}
	for rows.Next() {
		var s app.ProviderSettings
		var active int
		var clientID, credAt sql.NullString
		var scopes, settings, at string
		if err := rows.Scan(&s.ProviderSlug, &active, &clientID, &s.SealedClientSecret, &scopes, &settings, &credAt, &s.UpdatedBy, &at); err != nil {
			return nil, fmt.Errorf("list provider settings: %w", err)
		}
		s.IsActive = active == 1
		if clientID.Valid {
			s.ClientID = &clientID.String
		}
		if err := json.Unmarshal([]byte(scopes), &s.CustomScopes); err != nil {
			return nil, fmt.Errorf("provider settings %s: scopes: %w", s.ProviderSlug, err)
		}
		if err := json.Unmarshal([]byte(settings), &s.CustomSettings); err != nil {
			return nil, fmt.Errorf("provider settings %s: settings: %w", s.ProviderSlug, err)
		}
		s.CredentialsUpdatedAt = parseTSPtr(credAt)
		s.UpdatedAt = parseTS(at)
		out[s.ProviderSlug] = s
	}
	return out, rows.Err()
}

// PutProviderSettings writes a provider's settings (insert or replace).
func (db *DB) PutProviderSettings(ctx context.Context, s *app.ProviderSettings) error {
	scopes, err := integJSON(s.CustomScopes, "[]")
	if err != nil {
		return err
	}
	settings, err := integJSON(s.CustomSettings, "{}")
	if err != nil {
		return err
	}
	active := 0
	if s.IsActive {
		active = 1
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO integration_provider_settings (provider_slug, is_active, client_id,
		sealed_client_secret, custom_scopes, custom_settings, credentials_updated_at, updated_by, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (provider_slug) DO UPDATE SET is_active = excluded.is_active, client_id = excluded.client_id,
		sealed_client_secret = excluded.sealed_client_secret, custom_scopes = excluded.custom_scopes,
		custom_settings = excluded.custom_settings, credentials_updated_at = excluded.credentials_updated_at,
		updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		s.ProviderSlug, active, nullStr(s.ClientID), s.SealedClientSecret, scopes, settings, tsPtr(s.CredentialsUpdatedAt), s.UpdatedBy, ts(s.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put provider settings %s: %w", s.ProviderSlug, mapErr(err))
	}
	return nil
}

// CountConnectionsByProvider counts connections per provider over every
// organization (the operator's view; no organization's data is returned).
func (db *DB) CountConnectionsByProvider(ctx context.Context) (map[string]int, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT provider_slug, count(*) FROM integration_connections GROUP BY provider_slug`)
	if err != nil {
		return nil, fmt.Errorf("count connections by provider: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var slug string
		var n int
		if err := rows.Scan(&slug, &n); err != nil {
			return nil, err
		}
		out[slug] = n
	}
	return out, rows.Err()
}
