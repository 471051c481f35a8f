package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.IntegrationOAuthStore = (*DB)(nil)
var _ app.FindingTaskStore = (*DB)(nil)

const oauthAppCols = `provider_slug, client_id, sealed_client_secret, custom_scopes, created_by, created_at, updated_at`

func scanIntegrationOAuthApp(sc interface{ Scan(...any) error }) (*app.IntegrationOAuthApp, error) {
	var o app.IntegrationOAuthApp
	var scopes, created, updated string
	if err := sc.Scan(&o.ProviderSlug, &o.ClientID, &o.SealedClientSecret, &scopes, &o.CreatedBy, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(scopes), &o.CustomScopes); err != nil {
		return nil, fmt.Errorf("OAuth app %s: scopes: %w", o.ProviderSlug, err)
	}
	if o.CustomScopes == nil {
		o.CustomScopes = []string{}
	}
	o.IsActive = true
	o.CreatedAt, o.UpdatedAt = parseTS(created), parseTS(updated)
	return &o, nil
}

// ListIntegrationOAuthApps lists an organization's OAuth apps by provider.
func (db *DB) ListIntegrationOAuthApps(ctx context.Context, orgID string) ([]app.IntegrationOAuthApp, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+oauthAppCols+` FROM integration_oauth_apps WHERE organization_id = ? ORDER BY provider_slug`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list OAuth apps: %w", err)
	}
	defer rows.Close()
	out := []app.IntegrationOAuthApp{}
	for rows.Next() {
		o, err := scanIntegrationOAuthApp(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *o)
	}
	return out, rows.Err()
}

// GetIntegrationOAuthApp returns an organization's OAuth app of a provider.
func (db *DB) GetIntegrationOAuthApp(ctx context.Context, orgID, slug string) (*app.IntegrationOAuthApp, error) {
	o, err := scanIntegrationOAuthApp(db.rd(ctx).QueryRowContext(ctx, `SELECT `+oauthAppCols+` FROM integration_oauth_apps
		WHERE organization_id = ? AND provider_slug = ?`, orgID, slug))
	if err != nil {
		return nil, mapErr(err)
	}
	return o, nil
}

// PutIntegrationOAuthApp inserts or replaces an organization's OAuth app.
func (db *DB) PutIntegrationOAuthApp(ctx context.Context, orgID string, o *app.IntegrationOAuthApp) error {
	scopes, err := integJSON(o.CustomScopes, "[]")
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO integration_oauth_apps (organization_id, `+oauthAppCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (organization_id, provider_slug) DO UPDATE SET client_id = excluded.client_id,
		sealed_client_secret = excluded.sealed_client_secret, custom_scopes = excluded.custom_scopes, updated_at = excluded.updated_at`,
		orgID, o.ProviderSlug, o.ClientID, o.SealedClientSecret, scopes, o.CreatedBy, ts(o.CreatedAt), ts(o.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put OAuth app %s: %w", o.ProviderSlug, mapErr(err))
	}
	return nil
}

// DeleteIntegrationOAuthApp removes an organization's OAuth app of a provider.
func (db *DB) DeleteIntegrationOAuthApp(ctx context.Context, orgID, slug string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM integration_oauth_apps WHERE organization_id = ? AND provider_slug = ?`, orgID, slug)
	if err != nil {
		return fmt.Errorf("delete OAuth app %s: %w", slug, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.ErrNotFound
	}
	return nil
}

// CreateOAuthState stores a pending flow.
func (db *DB) CreateOAuthState(ctx context.Context, orgID string, s *app.OAuthState) error {
	req, err := json.Marshal(s.Request)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO integration_oauth_states (state_hash, organization_id, person_id, provider_slug,
		connection_id, app_source, sealed_verifier, request, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.StateHash, orgID, s.PersonID, s.ProviderSlug, nullStr(s.ConnectionID), s.AppSource, s.SealedVerifier, string(req),
		ts(s.ExpiresAt), ts(s.CreatedAt))
	if err != nil {
		return fmt.Errorf("create OAuth state: %w", mapErr(err))
	}
	return nil
}

// TakeOAuthState deletes a pending flow by its state's hash and returns
// it; the state is looked up over every organization (the callback is
// the provider's redirect) and used once.
func (db *DB) TakeOAuthState(ctx context.Context, hash string) (*app.OAuthState, error) {
	var s app.OAuthState
	var conn sql.NullString
	var req, exp, created string
	err := db.wr(ctx).QueryRowContext(ctx, `DELETE FROM integration_oauth_states WHERE state_hash = ?
		RETURNING state_hash, organization_id, person_id, provider_slug, connection_id, app_source, sealed_verifier, request, expires_at, created_at`, hash).
		Scan(&s.StateHash, &s.OrganizationID, &s.PersonID, &s.ProviderSlug, &conn, &s.AppSource, &s.SealedVerifier, &req, &exp, &created)
	if err != nil {
		return nil, mapErr(err)
	}
	if conn.Valid {
		s.ConnectionID = &conn.String
	}
	if err := json.Unmarshal([]byte(req), &s.Request); err != nil {
		return nil, fmt.Errorf("OAuth state: request: %w", err)
	}
	s.ExpiresAt, s.CreatedAt = parseTS(exp), parseTS(created)
	return &s, nil
}

// DeleteExpiredOAuthStates removes flows past their expiry, over every
// organization.
func (db *DB) DeleteExpiredOAuthStates(ctx context.Context, now time.Time) (int, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM integration_oauth_states WHERE expires_at <= ?`, ts(now))
	if err != nil {
		return 0, fmt.Errorf("delete expired OAuth states: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// CreateOAuthError records an OAuth error.
func (db *DB) CreateOAuthError(ctx context.Context, orgID string, e *app.OAuthErrorRecord) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO integration_oauth_errors (id, organization_id, provider_slug, source, error,
		error_description, person_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, orgID, e.ProviderSlug, e.Source, e.Error, e.ErrorDescription, e.PersonID, ts(e.CreatedAt))
	if err != nil {
		return fmt.Errorf("record OAuth error: %w", mapErr(err))
	}
	return nil
}

// ListOAuthErrors lists an organization's newest OAuth errors.
func (db *DB) ListOAuthErrors(ctx context.Context, orgID string, limit int) ([]app.OAuthErrorRecord, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT id, provider_slug, source, error, error_description, person_id, created_at
		FROM integration_oauth_errors WHERE organization_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, orgID, limit)
	if err != nil {
		return nil, fmt.Errorf("list OAuth errors: %w", err)
	}
	defer rows.Close()
	out := []app.OAuthErrorRecord{}
	for rows.Next() {
		var e app.OAuthErrorRecord
		var at string
		if err := rows.Scan(&e.ID, &e.ProviderSlug, &e.Source, &e.Error, &e.ErrorDescription, &e.PersonID, &at); err != nil {
			return nil, err
		}
		e.CreatedAt = parseTS(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// LinkFindingTask links a finding to a task; an existing link is kept.
func (db *DB) LinkFindingTask(ctx context.Context, orgID string, l app.FindingTaskLink) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO finding_tasks (organization_id, finding_id, task_id, connection_id, check_id, linked_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (organization_id, finding_id, task_id) DO NOTHING`,
		orgID, l.FindingID, l.TaskID, l.ConnectionID, l.CheckID, ts(l.LinkedAt))
	if err != nil {
		return fmt.Errorf("link finding %s to task %s: %w", l.FindingID, l.TaskID, mapErr(err))
	}
	return nil
}

// TaskFindingLinks lists a task's finding links, newest first.
func (db *DB) TaskFindingLinks(ctx context.Context, orgID, taskID string, limit int) ([]app.FindingTaskLink, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT finding_id, task_id, connection_id, check_id, linked_at FROM finding_tasks
		WHERE organization_id = ? AND task_id = ? ORDER BY linked_at DESC, finding_id DESC LIMIT ?`, orgID, taskID, limit)
	if err != nil {
		return nil, fmt.Errorf("findings of task %s: %w", taskID, err)
	}
	defer rows.Close()
	var out []app.FindingTaskLink
	for rows.Next() {
		var l app.FindingTaskLink
		var at string
		if err := rows.Scan(&l.FindingID, &l.TaskID, &l.ConnectionID, &l.CheckID, &at); err != nil {
			return nil, err
		}
		l.LinkedAt = parseTS(at)
		out = append(out, l)
	}
	return out, rows.Err()
}

// FindingTaskIDs lists the tasks a finding is linked to.
func (db *DB) FindingTaskIDs(ctx context.Context, orgID, findingID string) ([]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT task_id FROM finding_tasks WHERE organization_id = ? AND finding_id = ? ORDER BY task_id`, orgID, findingID)
	if err != nil {
		return nil, fmt.Errorf("tasks of finding %s: %w", findingID, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
