package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.AssistantActionStore = (*DB)(nil)

// The writes the assistant proposed (migration 1130). Every query names
// the organization; reads of one action also its owner and session.

const assistantActionColumns = `id, owner_id, session_id, message_id, tool, arguments, summary, status, result_type, result_id,
	created_at, expires_at, decided_at`

func scanAssistantAction(row interface{ Scan(...any) error }) (*app.AssistantAction, error) {
	var a app.AssistantAction
	var args, created, expires string
	var decided sql.NullString
	if err := row.Scan(&a.ID, &a.OwnerID, &a.SessionID, &a.MessageID, &a.Tool, &args, &a.Summary, &a.Status, &a.ResultType, &a.ResultID,
		&created, &expires, &decided); err != nil {
		return nil, mapErr(err)
	}
	if err := json.Unmarshal([]byte(args), &a.Arguments); err != nil {
		return nil, fmt.Errorf("assistant action %s arguments: %w", a.ID, err)
	}
	a.CreatedAt, a.ExpiresAt, a.DecidedAt = parseTS(created), parseTS(expires), parseTSPtr(decided)
	a.ResultLink = assistantResultLink(a.ResultType, a.ResultID)
	return &a, nil
}

// assistantResultLink is the page of the record a confirmation created.
func assistantResultLink(typ, id string) string {
	switch typ {
	case "finding":
		return "/findings/" + id
	case "task":
		return "/tasks/" + id
	}
	return ""
}

// CreateAssistantAction stores a proposed write.
func (db *DB) CreateAssistantAction(ctx context.Context, orgID string, a *app.AssistantAction) error {
	args, err := json.Marshal(a.Arguments)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO assistant_actions (id, organization_id, owner_id, session_id, message_id, tool, arguments,
		summary, status, result_type, result_id, created_at, expires_at, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, orgID, a.OwnerID, a.SessionID, a.MessageID, a.Tool, string(args), a.Summary, a.Status, a.ResultType, a.ResultID,
		ts(a.CreatedAt), ts(a.ExpiresAt), tsPtr(a.DecidedAt))
	return mapErr(err)
}

// GetAssistantAction returns an action of the owner in the session.
func (db *DB) GetAssistantAction(ctx context.Context, orgID, ownerID, sessionID, id string) (*app.AssistantAction, error) {
	return scanAssistantAction(db.rd(ctx).QueryRowContext(ctx, `SELECT `+assistantActionColumns+` FROM assistant_actions
		WHERE organization_id = ? AND owner_id = ? AND session_id = ? AND id = ?`, orgID, ownerID, sessionID, id))
}

// UpdateAssistantAction writes an action's decision and result.
func (db *DB) UpdateAssistantAction(ctx context.Context, orgID string, a *app.AssistantAction) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE assistant_actions SET status = ?, result_type = ?, result_id = ?, decided_at = ?
		WHERE organization_id = ? AND id = ?`, a.Status, a.ResultType, a.ResultID, tsPtr(a.DecidedAt), orgID, a.ID)
	if err != nil {
		return mapErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.ErrNotFound
	}
	return nil
}

// ListAssistantActions lists a session's actions, oldest first.
func (db *DB) ListAssistantActions(ctx context.Context, orgID, sessionID string) ([]app.AssistantAction, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+assistantActionColumns+` FROM assistant_actions
		WHERE organization_id = ? AND session_id = ? ORDER BY created_at, id`, orgID, sessionID)
	if err != nil {
		return nil, fmt.Errorf("list assistant actions: %w", err)
	}
	defer rows.Close()
	out := []app.AssistantAction{}
	for rows.Next() {
		a, err := scanAssistantAction(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}
