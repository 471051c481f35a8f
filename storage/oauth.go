package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.OAuthStore = (*DB)(nil)

const oauthClientColumns = `id, organization_id, name, description, client_uri, redirect_uris, grant_types, response_types, scope,
	token_endpoint_auth_method, secret_hash, secret_prefix, created_by_id, created_at, updated_at, deleted_at`

func scanOAuthClient(row interface{ Scan(...any) error }) (*app.OAuthClient, error) {
	var c app.OAuthClient
	var org, uri, createdBy, deleted sql.NullString
	var redirects, grants, responses, scope, created, updated string
	if err := row.Scan(&c.ID, &org, &c.Name, &c.Description, &uri, &redirects, &grants, &responses, &scope,
		&c.TokenEndpointAuthMethod, &c.SecretHash, &c.SecretPrefix, &createdBy, &created, &updated, &deleted); err != nil {
		return nil, mapErr(err)
	}
	c.OrganizationID, c.ClientURI, c.CreatedByID = strPtr(org), strPtr(uri), strPtr(createdBy)
	if err := json.Unmarshal([]byte(redirects), &c.RedirectURIs); err != nil {
		return nil, fmt.Errorf("client %s redirect uris: %w", c.ID, err)
	}
	c.GrantTypes = strings.Fields(grants)
	c.ResponseTypes = strings.Fields(responses)
	c.Scopes = strings.Fields(scope)
	c.CreatedAt, c.UpdatedAt = parseTS(created), parseTS(updated)
	c.DeletedAt = parseTSPtr(deleted)
	return &c, nil
}

// CreateOAuthClient stores a client.
func (db *DB) CreateOAuthClient(ctx context.Context, c *app.OAuthClient) error {
	redirects, err := json.Marshal(c.RedirectURIs)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO oauth_clients (`+oauthClientColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
		c.ID, nullStr(c.OrganizationID), c.Name, c.Description, nullStr(c.ClientURI), string(redirects),
		strings.Join(c.GrantTypes, " "), strings.Join(c.ResponseTypes, " "), strings.Join(c.Scopes, " "),
		c.TokenEndpointAuthMethod, c.SecretHash, c.SecretPrefix, nullStr(c.CreatedByID), ts(c.CreatedAt), ts(c.UpdatedAt))
	return mapErr(err)
}

// GetOAuthClient returns a client that is not deleted.
func (db *DB) GetOAuthClient(ctx context.Context, id string) (*app.OAuthClient, error) {
	return scanOAuthClient(db.rd(ctx).QueryRowContext(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients
		WHERE id = ? AND deleted_at IS NULL`, id))
}

// ListOAuthClients lists an organization's apps.
func (db *DB) ListOAuthClients(ctx context.Context, orgID string) ([]app.OAuthClient, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients
		WHERE organization_id = ? AND deleted_at IS NULL ORDER BY id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list oauth clients: %w", err)
	}
	defer rows.Close()
	out := []app.OAuthClient{}
	for rows.Next() {
		c, err := scanOAuthClient(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
	}
	return out, rows.Err()
}

// UpdateOAuthClient writes a client's changeable fields.
func (db *DB) UpdateOAuthClient(ctx context.Context, c *app.OAuthClient) error {
	redirects, err := json.Marshal(c.RedirectURIs)
	if err != nil {
		return err
	}
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE oauth_clients SET name = ?, description = ?, client_uri = ?, redirect_uris = ?,
		scope = ?, secret_hash = ?, secret_prefix = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`,
		c.Name, c.Description, nullStr(c.ClientURI), string(redirects), strings.Join(c.Scopes, " "), c.SecretHash, c.SecretPrefix,
		ts(c.UpdatedAt), c.ID)
	return affected(res, err)
}

// DeleteOAuthClient marks an organization's app deleted.
func (db *DB) DeleteOAuthClient(ctx context.Context, orgID, id string, at time.Time) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE oauth_clients SET deleted_at = ?, secret_hash = '' WHERE organization_id = ? AND id = ? AND deleted_at IS NULL`,
		ts(at), orgID, id)
	return affected(res, err)
}

const oauthGrantColumns = `g.id, g.organization_id, g.user_id, g.client_id, c.name, g.scope, g.created_at, g.last_used_at, g.revoked_at`

func scanOAuthGrant(row interface{ Scan(...any) error }) (*app.OAuthGrant, error) {
	var g app.OAuthGrant
	var scope, created string
	var used, revoked sql.NullString
	if err := row.Scan(&g.ID, &g.OrganizationID, &g.UserID, &g.ClientID, &g.ClientName, &scope, &created, &used, &revoked); err != nil {
		return nil, mapErr(err)
	}
	g.Scopes = strings.Fields(scope)
	g.CreatedAt = parseTS(created)
	g.LastUsedAt, g.RevokedAt = parseTSPtr(used), parseTSPtr(revoked)
	return &g, nil
}

// FindActiveGrant returns a person's unrevoked grant to a client in an organization.
func (db *DB) FindActiveGrant(ctx context.Context, orgID, userID, clientID string) (*app.OAuthGrant, error) {
	return scanOAuthGrant(db.rd(ctx).QueryRowContext(ctx, `SELECT `+oauthGrantColumns+` FROM oauth_grants g
		JOIN oauth_clients c ON c.id = g.client_id
		WHERE g.organization_id = ? AND g.user_id = ? AND g.client_id = ? AND g.revoked_at IS NULL`, orgID, userID, clientID))
}

// CreateOAuthGrant stores a grant.
func (db *DB) CreateOAuthGrant(ctx context.Context, g *app.OAuthGrant) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO oauth_grants (id, organization_id, user_id, client_id, scope, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, g.ID, g.OrganizationID, g.UserID, g.ClientID, strings.Join(g.Scopes, " "), ts(g.CreatedAt))
	return mapErr(err)
}

// UpdateOAuthGrantScopes replaces a grant's scopes.
func (db *DB) UpdateOAuthGrantScopes(ctx context.Context, id string, scopes []string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE oauth_grants SET scope = ? WHERE id = ?`, strings.Join(scopes, " "), id)
	return affected(res, err)
}

// GetOAuthGrant returns a grant of the organization, revoked or not.
func (db *DB) GetOAuthGrant(ctx context.Context, orgID, id string) (*app.OAuthGrant, error) {
	return scanOAuthGrant(db.rd(ctx).QueryRowContext(ctx, `SELECT `+oauthGrantColumns+` FROM oauth_grants g
		JOIN oauth_clients c ON c.id = g.client_id WHERE g.organization_id = ? AND g.id = ?`, orgID, id))
}

// ListOAuthGrants lists a person's active grants in the organization.
func (db *DB) ListOAuthGrants(ctx context.Context, orgID, userID string) ([]app.OAuthGrant, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+oauthGrantColumns+` FROM oauth_grants g
		JOIN oauth_clients c ON c.id = g.client_id
		WHERE g.organization_id = ? AND g.user_id = ? AND g.revoked_at IS NULL ORDER BY g.id`, orgID, userID)
	if err != nil {
		return nil, fmt.Errorf("list oauth grants: %w", err)
	}
	defer rows.Close()
	out := []app.OAuthGrant{}
	for rows.Next() {
		g, err := scanOAuthGrant(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *g)
	}
	return out, rows.Err()
}

// RevokeOAuthGrant marks a grant revoked.
func (db *DB) RevokeOAuthGrant(ctx context.Context, orgID, id string, at time.Time) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE oauth_grants SET revoked_at = ? WHERE organization_id = ? AND id = ? AND revoked_at IS NULL`,
		ts(at), orgID, id)
	return affected(res, err)
}

// RevokeClientGrants revokes every grant to a client.
func (db *DB) RevokeClientGrants(ctx context.Context, clientID string, at time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `UPDATE oauth_grants SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL`, ts(at), clientID)
	return mapErr(err)
}

// TouchOAuthGrant records a grant's use.
func (db *DB) TouchOAuthGrant(ctx context.Context, id string, at time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `UPDATE oauth_grants SET last_used_at = ? WHERE id = ?`, ts(at), id)
	return mapErr(err)
}

// CreateOAuthToken stores a code, PKCE record or token by its signature.
func (db *DB) CreateOAuthToken(ctx context.Context, t *app.OAuthToken) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO oauth_tokens (signature, kind, request_id, grant_id, client_id,
		organization_id, user_id, active, request, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.Signature, t.Kind, t.RequestID, t.GrantID, t.ClientID, t.OrganizationID, t.UserID, boolInt(t.Active), string(t.Request),
		ts(t.ExpiresAt), ts(t.CreatedAt))
	return mapErr(err)
}

// GetOAuthToken returns a stored code, PKCE record or token.
func (db *DB) GetOAuthToken(ctx context.Context, kind, signature string) (*app.OAuthToken, error) {
	var t app.OAuthToken
	var active int
	var req, expires, created string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT signature, kind, request_id, grant_id, client_id, organization_id, user_id,
		active, request, expires_at, created_at FROM oauth_tokens WHERE kind = ? AND signature = ?`, kind, signature).
		Scan(&t.Signature, &t.Kind, &t.RequestID, &t.GrantID, &t.ClientID, &t.OrganizationID, &t.UserID, &active, &req, &expires, &created)
	if err != nil {
		return nil, mapErr(err)
	}
	t.Active = active == 1
	t.Request = []byte(req)
	t.ExpiresAt, t.CreatedAt = parseTS(expires), parseTS(created)
	return &t, nil
}

// DeactivateOAuthToken marks one active code or token used. An already
// inactive one is ErrNotFound, so of two concurrent uses only one wins.
func (db *DB) DeactivateOAuthToken(ctx context.Context, kind, signature string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE oauth_tokens SET active = 0 WHERE kind = ? AND signature = ? AND active = 1`, kind, signature)
	return affected(res, err)
}

// DeleteOAuthToken removes one code, PKCE record or token.
func (db *DB) DeleteOAuthToken(ctx context.Context, kind, signature string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM oauth_tokens WHERE kind = ? AND signature = ?`, kind, signature)
	return affected(res, err)
}

// DeactivateOAuthTokens marks every token of a kind in a request family inactive.
func (db *DB) DeactivateOAuthTokens(ctx context.Context, kind, requestID string) error {
	_, err := db.wr(ctx).ExecContext(ctx, `UPDATE oauth_tokens SET active = 0 WHERE kind = ? AND request_id = ?`, kind, requestID)
	return mapErr(err)
}

// DeleteOAuthTokensOfGrant removes every code and token issued under a grant.
func (db *DB) DeleteOAuthTokensOfGrant(ctx context.Context, grantID string) error {
	_, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM oauth_tokens WHERE grant_id = ?`, grantID)
	return mapErr(err)
}

// DeleteOAuthTokensOfClient removes every code and token of a client.
func (db *DB) DeleteOAuthTokensOfClient(ctx context.Context, clientID string) error {
	_, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM oauth_tokens WHERE client_id = ?`, clientID)
	return mapErr(err)
}

// PurgeUnusedOAuthClients deletes clients registered anonymously (RFC 7591:
// no organization, no secret) before the cut-off that never got a grant
// or a code or token.
func (db *DB) PurgeUnusedOAuthClients(ctx context.Context, before time.Time) (int, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM oauth_clients WHERE organization_id IS NULL AND secret_hash = ''
		AND created_at < ? AND id NOT IN (SELECT client_id FROM oauth_grants) AND id NOT IN (SELECT client_id FROM oauth_tokens)`, ts(before))
	if err != nil {
		return 0, fmt.Errorf("purge oauth clients: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// PurgeOAuthTokens deletes codes and tokens that expired before before.
func (db *DB) PurgeOAuthTokens(ctx context.Context, before time.Time) (int, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM oauth_tokens WHERE expires_at < ?`, ts(before))
	if err != nil {
		return 0, fmt.Errorf("purge oauth tokens: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
