package storage

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// GetSAMLSettings returns the protocol and SAML part of an organization's
// single sign-on settings.
func (db *DB) GetSAMLSettings(ctx context.Context, orgID string) (string, *app.SAMLSettings, error) {
	s := &app.SAMLSettings{}
	var proto string
	var read sql.NullString
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT protocol, metadata_url, metadata_xml, metadata_read_at, email_attribute,
		name_attribute, groups_attribute, sp_key, sp_certificate FROM saml_settings WHERE organization_id = ?`, orgID).
		Scan(&proto, &s.MetadataURL, &s.MetadataXML, &read, &s.EmailAttribute, &s.NameAttribute, &s.GroupsAttribute,
			&s.SealedKey, &s.SPCertificate)
	if err != nil {
		return "", nil, mapErr(err)
	}
	s.MetadataReadAt = parseTSPtr(read)
	return proto, s, nil
}

// PutSAMLSettings inserts or replaces the SAML settings row.
func (db *DB) PutSAMLSettings(ctx context.Context, orgID, protocol string, s *app.SAMLSettings) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO saml_settings (organization_id, protocol, metadata_url, metadata_xml,
		metadata_read_at, email_attribute, name_attribute, groups_attribute, sp_key, sp_certificate)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (organization_id) DO UPDATE SET protocol = excluded.protocol, metadata_url = excluded.metadata_url,
		metadata_xml = excluded.metadata_xml, metadata_read_at = excluded.metadata_read_at,
		email_attribute = excluded.email_attribute, name_attribute = excluded.name_attribute,
		groups_attribute = excluded.groups_attribute, sp_key = excluded.sp_key, sp_certificate = excluded.sp_certificate`,
		orgID, protocol, s.MetadataURL, s.MetadataXML, tsPtr(s.MetadataReadAt), s.EmailAttribute, s.NameAttribute,
		s.GroupsAttribute, s.SealedKey, s.SPCertificate)
	return mapErr(err)
}

// CreateSAMLRequest stores an AuthnRequest in flight.
func (db *DB) CreateSAMLRequest(ctx context.Context, r *app.SAMLRequest) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO saml_requests (request_id, organization_id, next, expires_at)
		VALUES (?, ?, ?, ?)`, r.ID, r.OrganizationID, r.Next, ts(r.ExpiresAt))
	return mapErr(err)
}

// TakeSAMLRequest deletes the organization's request and returns it: a
// request is answered once.
func (db *DB) TakeSAMLRequest(ctx context.Context, orgID, id string) (*app.SAMLRequest, error) {
	r := &app.SAMLRequest{ID: id, OrganizationID: orgID}
	var exp string
	err := db.wr(ctx).QueryRowContext(ctx, `DELETE FROM saml_requests WHERE request_id = ? AND organization_id = ?
		RETURNING next, expires_at`, id, orgID).Scan(&r.Next, &exp)
	if err != nil {
		return nil, mapErr(err)
	}
	r.ExpiresAt = parseTS(exp)
	return r, nil
}

// SAMLAssertionSeen says whether an assertion id is in the replay cache.
func (db *DB) SAMLAssertionSeen(ctx context.Context, orgID, id string) (bool, error) {
	var n int
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT COUNT(*) FROM saml_assertions WHERE organization_id = ? AND assertion_id = ?`,
		orgID, id).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("saml replay cache: %w", err)
	}
	return n > 0, nil
}

// AddSAMLAssertion stores an accepted assertion id until it expires.
func (db *DB) AddSAMLAssertion(ctx context.Context, orgID, id string, expires time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO saml_assertions (organization_id, assertion_id, expires_at)
		VALUES (?, ?, ?)`, orgID, id, ts(expires))
	return mapErr(err)
}

// PurgeSAML deletes requests and replay entries that expired before t.
func (db *DB) PurgeSAML(ctx context.Context, t time.Time) error {
	if _, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM saml_requests WHERE expires_at < ?`, ts(t)); err != nil {
		return err
	}
	_, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM saml_assertions WHERE expires_at < ?`, ts(t))
	return err
}
