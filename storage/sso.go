package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// GetSSOSettings returns an organization's single sign-on settings.
func (db *DB) GetSSOSettings(ctx context.Context, orgID string) (*app.SSOSettings, error) {
	s := &app.SSOSettings{OrganizationID: orgID}
	var mapping, updated string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT enabled, display_name, issuer, client_id, client_secret, groups_claim,
		role_mapping, sso_required, owner_break_glass, updated_at FROM sso_settings WHERE organization_id = ?`, orgID).
		Scan(&s.Enabled, &s.DisplayName, &s.Issuer, &s.ClientID, &s.SealedSecret, &s.GroupsClaim, &mapping,
			&s.SSORequired, &s.OwnerBreakGlass, &updated)
	if err != nil {
		return nil, mapErr(err)
	}
	if err := json.Unmarshal([]byte(mapping), &s.RoleMapping); err != nil {
		return nil, fmt.Errorf("sso role mapping: %w", err)
	}
	if s.RoleMapping == nil {
		s.RoleMapping = []app.SSORoleMapping{}
	}
	t := parseTS(updated)
	s.UpdatedAt = &t
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT domain FROM sso_domains WHERE organization_id = ? ORDER BY domain`, orgID)
	if err != nil {
		return nil, fmt.Errorf("sso domains: %w", err)
	}
	defer rows.Close()
	s.AllowedDomains = []string{}
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		s.AllowedDomains = append(s.AllowedDomains, d)
	}
	return s, rows.Err()
}

// PutSSOSettings inserts or replaces the settings row (domains are set by
// SetSSODomains).
func (db *DB) PutSSOSettings(ctx context.Context, s *app.SSOSettings) error {
	mapping, err := json.Marshal(s.RoleMapping)
	if err != nil {
		return err
	}
	var updated time.Time
	if s.UpdatedAt != nil {
		updated = *s.UpdatedAt
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO sso_settings (organization_id, enabled, display_name, issuer, client_id,
		client_secret, groups_claim, role_mapping, sso_required, owner_break_glass, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (organization_id) DO UPDATE SET enabled = excluded.enabled, display_name = excluded.display_name,
		issuer = excluded.issuer, client_id = excluded.client_id, client_secret = excluded.client_secret,
		groups_claim = excluded.groups_claim, role_mapping = excluded.role_mapping, sso_required = excluded.sso_required,
		owner_break_glass = excluded.owner_break_glass, updated_at = excluded.updated_at`,
		s.OrganizationID, s.Enabled, s.DisplayName, s.Issuer, s.ClientID, s.SealedSecret, s.GroupsClaim, string(mapping),
		s.SSORequired, s.OwnerBreakGlass, ts(updated))
	return mapErr(err)
}

// SetSSODomains replaces the organization's single sign-on domains.
func (db *DB) SetSSODomains(ctx context.Context, orgID string, domains []string) error {
	if _, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM sso_domains WHERE organization_id = ?`, orgID); err != nil {
		return fmt.Errorf("clear sso domains: %w", err)
	}
	for _, d := range domains {
		if _, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO sso_domains (domain, organization_id) VALUES (?, ?)`, d, orgID); err != nil {
			return mapErr(err)
		}
	}
	return nil
}

// SSODomainOrganization returns the organization holding a domain.
func (db *DB) SSODomainOrganization(ctx context.Context, domain string) (string, error) {
	var id string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT organization_id FROM sso_domains WHERE domain = ?`, domain).Scan(&id)
	return id, mapErr(err)
}

// CreateSSOFlow stores a sign-in in flight.
func (db *DB) CreateSSOFlow(ctx context.Context, f *app.SSOFlow) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO sso_flows (state_hash, organization_id, nonce, verifier, next, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`, f.StateHash, f.OrganizationID, f.Nonce, f.Verifier, f.Next, ts(f.ExpiresAt))
	return mapErr(err)
}

// TakeSSOFlow deletes a flow and returns it: a state is used once.
func (db *DB) TakeSSOFlow(ctx context.Context, stateHash string) (*app.SSOFlow, error) {
	f := &app.SSOFlow{StateHash: stateHash}
	var exp string
	err := db.wr(ctx).QueryRowContext(ctx, `DELETE FROM sso_flows WHERE state_hash = ?
		RETURNING organization_id, nonce, verifier, next, expires_at`, stateHash).
		Scan(&f.OrganizationID, &f.Nonce, &f.Verifier, &f.Next, &exp)
	if err != nil {
		return nil, mapErr(err)
	}
	f.ExpiresAt = parseTS(exp)
	return f, nil
}

// PurgeSSOFlows deletes flows that expired before the time.
func (db *DB) PurgeSSOFlows(ctx context.Context, before time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM sso_flows WHERE expires_at < ?`, ts(before))
	return err
}
