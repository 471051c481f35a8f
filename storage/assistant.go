package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.AssistantStore = (*DB)(nil)

// The assistant's conversations (migration 0960). Every query names the
// organization, and sessions also their owner.

const assistantSessionColumns = `id, owner_id, kind, title, status, message_count, created_at, updated_at, ended_at`

func scanAssistantSession(row interface{ Scan(...any) error }) (*app.AssistantSession, error) {
	var s app.AssistantSession
	var created, updated string
	var ended sql.NullString
	if err := row.Scan(&s.ID, &s.OwnerID, &s.Kind, &s.Title, &s.Status, &s.MessageCount, &created, &updated, &ended); err != nil {
		return nil, mapErr(err)
	}
	s.CreatedAt, s.UpdatedAt, s.EndedAt = parseTS(created), parseTS(updated), parseTSPtr(ended)
	return &s, nil
}

// CreateAssistantSession stores a new session.
func (db *DB) CreateAssistantSession(ctx context.Context, orgID string, s *app.AssistantSession) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO assistant_sessions (id, organization_id, owner_id, kind, title, status, message_count,
		created_at, updated_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, orgID, s.OwnerID, s.Kind, s.Title, s.Status, s.MessageCount, ts(s.CreatedAt), ts(s.UpdatedAt), tsPtr(s.EndedAt))
	return mapErr(err)
}

// GetAssistantSession returns a chat session of the owner.
func (db *DB) GetAssistantSession(ctx context.Context, orgID, ownerID, id string) (*app.AssistantSession, error) {
	return scanAssistantSession(db.rd(ctx).QueryRowContext(ctx, `SELECT `+assistantSessionColumns+` FROM assistant_sessions
		WHERE organization_id = ? AND owner_id = ? AND id = ? AND kind = 'chat'`, orgID, ownerID, id))
}

// AssistantHistorySession returns the owner's history session.
func (db *DB) AssistantHistorySession(ctx context.Context, orgID, ownerID string) (*app.AssistantSession, error) {
	return scanAssistantSession(db.rd(ctx).QueryRowContext(ctx, `SELECT `+assistantSessionColumns+` FROM assistant_sessions
		WHERE organization_id = ? AND owner_id = ? AND kind = 'history' ORDER BY created_at LIMIT 1`, orgID, ownerID))
}

// ListAssistantSessions lists the owner's chat sessions, latest first.
func (db *DB) ListAssistantSessions(ctx context.Context, orgID, ownerID string, pg app.Page) (app.List[app.AssistantSession], error) {
	out := app.List[app.AssistantSession]{Items: []app.AssistantSession{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM assistant_sessions WHERE organization_id = ? AND owner_id = ? AND kind = 'chat'`,
		orgID, ownerID).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count assistant sessions: %w", err)
	}
	if pg.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+assistantSessionColumns+` FROM assistant_sessions
		WHERE organization_id = ? AND owner_id = ? AND kind = 'chat' ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?`,
		orgID, ownerID, pg.PerPage, pg.Offset())
	if err != nil {
		return out, fmt.Errorf("list assistant sessions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanAssistantSession(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *s)
	}
	return out, rows.Err()
}

// UpdateAssistantSession writes a session's title, state and counts.
func (db *DB) UpdateAssistantSession(ctx context.Context, orgID string, s *app.AssistantSession) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE assistant_sessions SET title = ?, status = ?, message_count = ?, updated_at = ?, ended_at = ?
		WHERE organization_id = ? AND id = ?`, s.Title, s.Status, s.MessageCount, ts(s.UpdatedAt), tsPtr(s.EndedAt), orgID, s.ID)
	if err != nil {
		return mapErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.ErrNotFound
	}
	return nil
}

// AppendAssistantMessages adds messages after the session's last one.
func (db *DB) AppendAssistantMessages(ctx context.Context, orgID, sessionID string, msgs []app.AssistantMessage) error {
	w := db.wr(ctx)
	var seq int
	if err := w.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM assistant_messages WHERE organization_id = ? AND session_id = ?`,
		orgID, sessionID).Scan(&seq); err != nil {
		return fmt.Errorf("assistant message seq: %w", err)
	}
	for _, m := range msgs {
		seq++
		srcs := m.Sources
		if srcs == nil {
			srcs = []app.AssistantSource{}
		}
		raw, err := json.Marshal(srcs)
		if err != nil {
			return err
		}
		if _, err := w.ExecContext(ctx, `INSERT INTO assistant_messages (id, organization_id, session_id, seq, role, text, mode, intent, notice,
			sources, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, orgID, sessionID, seq, m.Role, m.Text, m.Mode, m.Intent, m.Notice, string(raw), ts(m.CreatedAt)); err != nil {
			return mapErr(err)
		}
	}
	return nil
}

// ListAssistantMessages returns the session's last limit messages (all
// when limit <= 0), oldest first.
func (db *DB) ListAssistantMessages(ctx context.Context, orgID, sessionID string, limit int) ([]app.AssistantMessage, error) {
	if limit <= 0 {
		limit = math.MaxInt32
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT * FROM (SELECT id, session_id, seq, role, text, mode, intent, notice, sources, created_at
		FROM assistant_messages WHERE organization_id = ? AND session_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`, orgID, sessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("list assistant messages: %w", err)
	}
	defer rows.Close()
	out := []app.AssistantMessage{}
	for rows.Next() {
		var m app.AssistantMessage
		var seq int
		var srcs, created string
		if err := rows.Scan(&m.ID, &m.SessionID, &seq, &m.Role, &m.Text, &m.Mode, &m.Intent, &m.Notice, &srcs, &created); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(srcs), &m.Sources); err != nil {
			return nil, fmt.Errorf("assistant message %s sources: %w", m.ID, err)
		}
		m.CreatedAt = parseTS(created)
		out = append(out, m)
	}
	return out, rows.Err()
}

// DeleteAssistantMessages deletes a session's messages.
func (db *DB) DeleteAssistantMessages(ctx context.Context, orgID, sessionID string) error {
	_, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM assistant_messages WHERE organization_id = ? AND session_id = ?`, orgID, sessionID)
	return err
}
