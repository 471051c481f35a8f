package storage

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.SessionStore = (*DB)(nil)

func scanUser(row interface{ Scan(...any) error }) (*app.User, error) {
	var u app.User
	var last sql.NullString
	if err := row.Scan(&u.ID, &u.Email, &u.Name, &last, &u.PasswordHash); err != nil {
		return nil, mapErr(err)
	}
	u.LastLoginAt = parseTSPtr(last)
	return &u, nil
}

// GetUserByEmail returns the login identity with this email.
func (db *DB) GetUserByEmail(ctx context.Context, email string) (*app.User, error) {
	return scanUser(db.rd(ctx).QueryRowContext(ctx, `SELECT id, email, name, last_login_at, password_hash FROM users WHERE email = ?`, email))
}

// GetUser returns a login identity by id.
func (db *DB) GetUser(ctx context.Context, id string) (*app.User, error) {
	return scanUser(db.rd(ctx).QueryRowContext(ctx, `SELECT id, email, name, last_login_at, password_hash FROM users WHERE id = ?`, id))
}

// ListMemberships returns the user's active memberships.
func (db *DB) ListMemberships(ctx context.Context, userID string) ([]app.Membership, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT o.id, o.name, o.slug, o.plan, m.role FROM memberships m
		JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = ? AND m.is_active = 1 ORDER BY o.name, o.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("list memberships: %w", err)
	}
	defer rows.Close()
	out := []app.Membership{}
	for rows.Next() {
		var m app.Membership
		if err := rows.Scan(&m.OrganizationID, &m.Name, &m.Slug, &m.Plan, &m.Role); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// SetLastLogin records a successful sign-in.
func (db *DB) SetLastLogin(ctx context.Context, userID string, at time.Time) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE users SET last_login_at = ? WHERE id = ?`, ts(at), userID)
	return affected(res, err)
}

// CreateSession stores a new session.
func (db *DB) CreateSession(ctx context.Context, s *app.Session) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO sessions (id, user_id, created_at, last_seen_at, expires_at, ip, user_agent)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, s.ID, s.UserID, ts(s.CreatedAt), ts(s.LastSeenAt), ts(s.ExpiresAt), s.IP, s.UserAgent)
	return mapErr(err)
}

// GetSession returns a session by its hashed id.
func (db *DB) GetSession(ctx context.Context, id string) (*app.Session, error) {
	var s app.Session
	var created, seen, expires string
	var revoked sql.NullString
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT id, user_id, created_at, last_seen_at, expires_at, revoked_at, ip, user_agent
		FROM sessions WHERE id = ?`, id).Scan(&s.ID, &s.UserID, &created, &seen, &expires, &revoked, &s.IP, &s.UserAgent)
	if err != nil {
		return nil, mapErr(err)
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = parseTS(created), parseTS(seen), parseTS(expires)
	s.RevokedAt = parseTSPtr(revoked)
	return &s, nil
}

// TouchSession records activity on a session.
func (db *DB) TouchSession(ctx context.Context, id string, at time.Time) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE sessions SET last_seen_at = ? WHERE id = ?`, ts(at), id)
	return affected(res, err)
}

// RevokeSession ends a session.
func (db *DB) RevokeSession(ctx context.Context, id string, at time.Time) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, ts(at), id)
	return affected(res, err)
}

// RevokeUserSessions ends every session of a user.
func (db *DB) RevokeUserSessions(ctx context.Context, userID string, at time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL`, ts(at), userID)
	return mapErr(err)
}

// PurgeSessions deletes sessions that expired, were revoked before before,
// or were last used before idleBefore.
func (db *DB) PurgeSessions(ctx context.Context, before, idleBefore time.Time) (int, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM sessions WHERE expires_at < ? OR revoked_at < ? OR last_seen_at < ?`,
		ts(before), ts(before), ts(idleBefore))
	if err != nil {
		return 0, fmt.Errorf("purge sessions: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
