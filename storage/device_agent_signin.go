package storage

import (
	"context"
	"database/sql"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// Agent sign-in codes belong to a person (a login identity), not to an
// organization: the organization is chosen after the exchange.

const agentCodeColumns = `id, code_hash, challenge, callback_port, state, user_id, created_at, expires_at, used_at,
	session_hash, session_expires_at, session_used_at`

func scanAgentCode(row interface{ Scan(...any) error }) (*app.AgentAuthCode, error) {
	var c app.AgentAuthCode
	var created, expires string
	var used, sess, sessExp, sessUsed sql.NullString
	if err := row.Scan(&c.ID, &c.CodeHash, &c.Challenge, &c.CallbackPort, &c.State, &c.UserID, &created, &expires, &used,
		&sess, &sessExp, &sessUsed); err != nil {
		return nil, mapErr(err)
	}
	c.CreatedAt, c.ExpiresAt, c.UsedAt = parseTS(created), parseTS(expires), parseTSPtr(used)
	c.SessionHash, c.SessionExpiresAt, c.SessionUsedAt = strPtr(sess), parseTSPtr(sessExp), parseTSPtr(sessUsed)
	return &c, nil
}

// CreateAgentAuthCode stores an approved agent sign-in.
func (db *DB) CreateAgentAuthCode(ctx context.Context, c *app.AgentAuthCode) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO device_agent_auth_codes (id, code_hash, challenge, callback_port, state, user_id,
		created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.CodeHash, c.Challenge, c.CallbackPort, c.State, c.UserID, ts(c.CreatedAt), ts(c.ExpiresAt))
	return mapErr(err)
}

// AgentAuthCodeByHash finds a code by its hash.
func (db *DB) AgentAuthCodeByHash(ctx context.Context, codeHash string) (*app.AgentAuthCode, error) {
	return scanAgentCode(db.rd(ctx).QueryRowContext(ctx, `SELECT `+agentCodeColumns+` FROM device_agent_auth_codes WHERE code_hash = ?`, codeHash))
}

// UseAgentAuthCode marks an unused code used, with its sign-in token.
func (db *DB) UseAgentAuthCode(ctx context.Context, id string, at time.Time, sessionHash string, sessionExpires time.Time) (bool, error) {
	var hash, exp any
	if sessionHash != "" {
		hash, exp = sessionHash, ts(sessionExpires)
	}
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE device_agent_auth_codes SET used_at = ?, session_hash = ?, session_expires_at = ?
		WHERE id = ? AND used_at IS NULL`, ts(at), hash, exp, id)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// AgentSessionByHash finds a sign-in token by its hash.
func (db *DB) AgentSessionByHash(ctx context.Context, sessionHash string) (*app.AgentAuthCode, error) {
	return scanAgentCode(db.rd(ctx).QueryRowContext(ctx, `SELECT `+agentCodeColumns+` FROM device_agent_auth_codes WHERE session_hash = ?`, sessionHash))
}

// EndAgentSession marks a sign-in token used.
func (db *DB) EndAgentSession(ctx context.Context, id string, at time.Time) (bool, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE device_agent_auth_codes SET session_used_at = ? WHERE id = ? AND session_used_at IS NULL`, ts(at), id)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// PurgeAgentAuthCodes deletes codes that expired before a time.
func (db *DB) PurgeAgentAuthCodes(ctx context.Context, before time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM device_agent_auth_codes WHERE expires_at < ?`, ts(before))
	return mapErr(err)
}
