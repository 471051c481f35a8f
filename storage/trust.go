package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.TrustStore = (*DB)(nil)

const trustSettingsColumns = `enabled, slug, title, overview, contact_email, primary_color, logo_url, frameworks, show_controls,
	nda_version, nda_text, created_at, updated_at`

func scanTrustSettings(row interface{ Scan(...any) error }, extra ...any) (*app.TrustSettings, error) {
	var s app.TrustSettings
	var enabled, show int
	var email, color, logo sql.NullString
	var fws, created, updated string
	dst := append(extra, &enabled, &s.Slug, &s.Title, &s.Overview, &email, &color, &logo, &fws, &show, &s.NDAVersion, &s.NDAText, &created, &updated)
	if err := row.Scan(dst...); err != nil {
		return nil, mapErr(err)
	}
	s.Enabled, s.ShowControls = enabled == 1, show == 1
	s.ContactEmail, s.PrimaryColor, s.LogoURL = strPtr(email), strPtr(color), strPtr(logo)
	s.Frameworks = []string{}
	if err := json.Unmarshal([]byte(fws), &s.Frameworks); err != nil {
		return nil, fmt.Errorf("decode trust frameworks: %w", err)
	}
	s.CreatedAt, s.UpdatedAt = parseTS(created), parseTS(updated)
	return &s, nil
}

// GetTrustSettings returns the stored portal settings or ErrNotFound.
func (db *DB) GetTrustSettings(ctx context.Context, orgID string) (*app.TrustSettings, error) {
	return scanTrustSettings(db.rd(ctx).QueryRowContext(ctx, `SELECT `+trustSettingsColumns+` FROM trust_settings WHERE organization_id = ?`, orgID))
}

// GetTrustSettingsBySlug returns the organization and settings of a portal slug.
func (db *DB) GetTrustSettingsBySlug(ctx context.Context, slug string) (string, *app.TrustSettings, error) {
	var orgID string
	s, err := scanTrustSettings(db.rd(ctx).QueryRowContext(ctx, `SELECT organization_id, `+trustSettingsColumns+` FROM trust_settings WHERE slug = ?`, slug), &orgID)
	return orgID, s, err
}

// PutTrustSettings inserts or replaces the portal settings.
func (db *DB) PutTrustSettings(ctx context.Context, orgID string, s *app.TrustSettings) error {
	fws, err := json.Marshal(s.Frameworks)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO trust_settings (organization_id, `+trustSettingsColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (organization_id) DO UPDATE SET enabled = excluded.enabled, slug = excluded.slug, title = excluded.title,
		overview = excluded.overview, contact_email = excluded.contact_email, primary_color = excluded.primary_color,
		logo_url = excluded.logo_url, frameworks = excluded.frameworks, show_controls = excluded.show_controls,
		nda_version = excluded.nda_version, nda_text = excluded.nda_text, updated_at = excluded.updated_at`,
		orgID, boolInt(s.Enabled), s.Slug, s.Title, s.Overview, nullStr(s.ContactEmail), nullStr(s.PrimaryColor), nullStr(s.LogoURL),
		string(fws), boolInt(s.ShowControls), s.NDAVersion, s.NDAText, ts(s.CreatedAt), ts(s.UpdatedAt))
	return mapErr(err)
}

const trustDocColumns = `id, name, description, access, file_name, content_type, size, sha256, created_at, updated_at`

func scanTrustDocument(row interface{ Scan(...any) error }) (*app.TrustDocument, error) {
	var d app.TrustDocument
	var created, updated string
	if err := row.Scan(&d.ID, &d.Name, &d.Description, &d.Access, &d.FileName, &d.ContentType, &d.Size, &d.SHA256, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	d.CreatedAt, d.UpdatedAt = parseTS(created), parseTS(updated)
	return &d, nil
}

// CreateTrustDocument inserts a portal document.
func (db *DB) CreateTrustDocument(ctx context.Context, orgID string, d *app.TrustDocument) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO trust_documents (organization_id, `+trustDocColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		orgID, d.ID, d.Name, d.Description, d.Access, d.FileName, d.ContentType, d.Size, d.SHA256, ts(d.CreatedAt), ts(d.UpdatedAt))
	return mapErr(err)
}

// UpdateTrustDocument writes a document's name, description and access.
func (db *DB) UpdateTrustDocument(ctx context.Context, orgID string, d *app.TrustDocument) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE trust_documents SET name = ?, description = ?, access = ?, updated_at = ?
		WHERE organization_id = ? AND id = ?`, d.Name, d.Description, d.Access, ts(d.UpdatedAt), orgID, d.ID)
	return affected(res, err)
}

// DeleteTrustDocument removes a document (its file stays in the
// content-addressed store, which other records may share).
func (db *DB) DeleteTrustDocument(ctx context.Context, orgID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM trust_documents WHERE organization_id = ? AND id = ?`, orgID, id)
	return affected(res, err)
}

// GetTrustDocument returns one document.
func (db *DB) GetTrustDocument(ctx context.Context, orgID, id string) (*app.TrustDocument, error) {
	return scanTrustDocument(db.rd(ctx).QueryRowContext(ctx, `SELECT `+trustDocColumns+` FROM trust_documents WHERE organization_id = ? AND id = ?`, orgID, id))
}

// ListTrustDocuments lists documents by name; access may narrow it.
func (db *DB) ListTrustDocuments(ctx context.Context, orgID, access string) ([]app.TrustDocument, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+trustDocColumns+` FROM trust_documents WHERE organization_id = ?
		AND (? = '' OR access = ?) ORDER BY name, id`, orgID, access, access)
	if err != nil {
		return nil, fmt.Errorf("list trust documents: %w", err)
	}
	defer rows.Close()
	out := []app.TrustDocument{}
	for rows.Next() {
		d, err := scanTrustDocument(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, rows.Err()
}

const trustRequestColumns = `id, organization_id, name, email, company, reason, status, token_hash, token_expires_at, nda_signed_at,
	decided_at, decided_by, decision_reason, access_expires_at, ip_address, user_agent, created_at, updated_at`

func scanTrustRequest(row interface{ Scan(...any) error }) (*app.TrustAccessRequest, error) {
	var r app.TrustAccessRequest
	var tokExp, created, updated string
	var signed, decided, by, reason, accExp sql.NullString
	if err := row.Scan(&r.ID, &r.OrganizationID, &r.Name, &r.Email, &r.Company, &r.Reason, &r.Status, &r.TokenHash, &tokExp, &signed,
		&decided, &by, &reason, &accExp, &r.IPAddress, &r.UserAgent, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	r.TokenExpiresAt, r.NDASignedAt, r.DecidedAt = parseTS(tokExp), parseTSPtr(signed), parseTSPtr(decided)
	r.DecidedBy, r.DecisionReason, r.AccessExpiresAt = strPtr(by), strPtr(reason), parseTSPtr(accExp)
	r.CreatedAt, r.UpdatedAt = parseTS(created), parseTS(updated)
	return &r, nil
}

// CreateTrustRequest inserts an access request.
func (db *DB) CreateTrustRequest(ctx context.Context, orgID string, r *app.TrustAccessRequest) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO trust_access_requests (`+trustRequestColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, orgID, r.Name, r.Email, r.Company, r.Reason, r.Status, r.TokenHash, ts(r.TokenExpiresAt), tsPtr(r.NDASignedAt),
		tsPtr(r.DecidedAt), nullStr(r.DecidedBy), nullStr(r.DecisionReason), tsPtr(r.AccessExpiresAt), r.IPAddress, r.UserAgent,
		ts(r.CreatedAt), ts(r.UpdatedAt))
	return mapErr(err)
}

// GetTrustRequest returns one access request.
func (db *DB) GetTrustRequest(ctx context.Context, orgID, id string) (*app.TrustAccessRequest, error) {
	return scanTrustRequest(db.rd(ctx).QueryRowContext(ctx, `SELECT `+trustRequestColumns+` FROM trust_access_requests
		WHERE organization_id = ? AND id = ?`, orgID, id))
}

// GetTrustRequestByToken finds a request by the hash of its visitor token.
func (db *DB) GetTrustRequestByToken(ctx context.Context, tokenHash string) (*app.TrustAccessRequest, error) {
	return scanTrustRequest(db.rd(ctx).QueryRowContext(ctx, `SELECT `+trustRequestColumns+` FROM trust_access_requests
		WHERE token_hash = ?`, tokenHash))
}

// UpdateTrustRequest writes the mutable columns of a request.
func (db *DB) UpdateTrustRequest(ctx context.Context, orgID string, r *app.TrustAccessRequest) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE trust_access_requests SET status = ?, token_expires_at = ?, nda_signed_at = ?,
		decided_at = ?, decided_by = ?, decision_reason = ?, access_expires_at = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		r.Status, ts(r.TokenExpiresAt), tsPtr(r.NDASignedAt), tsPtr(r.DecidedAt), nullStr(r.DecidedBy), nullStr(r.DecisionReason),
		tsPtr(r.AccessExpiresAt), ts(r.UpdatedAt), orgID, r.ID)
	return affected(res, err)
}

// ListTrustRequests returns a page of requests, newest first.
func (db *DB) ListTrustRequests(ctx context.Context, orgID, status string, p app.Page) (app.List[app.TrustAccessRequest], error) {
	out := app.List[app.TrustAccessRequest]{Items: []app.TrustAccessRequest{}}
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM trust_access_requests WHERE organization_id = ? AND (? = '' OR status = ?)`,
		orgID, status, status).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count trust requests: %w", err)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+trustRequestColumns+` FROM trust_access_requests WHERE organization_id = ?
		AND (? = '' OR status = ?) ORDER BY id DESC LIMIT ? OFFSET ?`, orgID, status, status, p.PerPage, p.Offset())
	if err != nil {
		return out, fmt.Errorf("list trust requests: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanTrustRequest(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *r)
	}
	return out, rows.Err()
}

// CreateNDASignature records a signature.
func (db *DB) CreateNDASignature(ctx context.Context, orgID string, s *app.NDASignature) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO trust_nda_signatures (id, organization_id, request_id, name, email, company,
		nda_version, nda_sha256, ip_address, user_agent, signed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, orgID, s.RequestID, s.Name, s.Email, s.Company, s.NDAVersion, s.NDASHA256, s.IPAddress, s.UserAgent, ts(s.SignedAt))
	return mapErr(err)
}

// ListNDASignatures returns a page of signatures, newest first.
func (db *DB) ListNDASignatures(ctx context.Context, orgID string, p app.Page) (app.List[app.NDASignature], error) {
	out := app.List[app.NDASignature]{Items: []app.NDASignature{}}
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM trust_nda_signatures WHERE organization_id = ?`, orgID).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count NDA signatures: %w", err)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT id, request_id, name, email, company, nda_version, nda_sha256, ip_address,
		user_agent, signed_at FROM trust_nda_signatures WHERE organization_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`, orgID, p.PerPage, p.Offset())
	if err != nil {
		return out, fmt.Errorf("list NDA signatures: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s app.NDASignature
		var signed string
		if err := rows.Scan(&s.ID, &s.RequestID, &s.Name, &s.Email, &s.Company, &s.NDAVersion, &s.NDASHA256, &s.IPAddress, &s.UserAgent, &signed); err != nil {
			return out, err
		}
		s.SignedAt = parseTS(signed)
		out.Items = append(out.Items, s)
	}
	return out, rows.Err()
}

// LogTrustDownload records a download.
func (db *DB) LogTrustDownload(ctx context.Context, orgID string, d *app.TrustDownload) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO trust_downloads (id, organization_id, document_id, request_id, ip_address,
		user_agent, downloaded_at) VALUES (?, ?, ?, ?, ?, ?, ?)`, d.ID, orgID, d.DocumentID, nullStr(d.RequestID), d.IPAddress, d.UserAgent, ts(d.DownloadedAt))
	return mapErr(err)
}

// ListTrustDownloads returns a page of downloads, newest first.
func (db *DB) ListTrustDownloads(ctx context.Context, orgID, requestID string, p app.Page) (app.List[app.TrustDownload], error) {
	out := app.List[app.TrustDownload]{Items: []app.TrustDownload{}}
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM trust_downloads WHERE organization_id = ? AND (? = '' OR request_id = ?)`,
		orgID, requestID, requestID).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count trust downloads: %w", err)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT id, document_id, request_id, ip_address, user_agent, downloaded_at FROM trust_downloads
		WHERE organization_id = ? AND (? = '' OR request_id = ?) ORDER BY id DESC LIMIT ? OFFSET ?`, orgID, requestID, requestID, p.PerPage, p.Offset())
	if err != nil {
		return out, fmt.Errorf("list trust downloads: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d app.TrustDownload
		var req sql.NullString
		var at string
		if err := rows.Scan(&d.ID, &d.DocumentID, &req, &d.IPAddress, &d.UserAgent, &at); err != nil {
			return out, err
		}
		d.RequestID, d.DownloadedAt = strPtr(req), parseTS(at)
		out.Items = append(out.Items, d)
	}
	return out, rows.Err()
}
