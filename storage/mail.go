package storage

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

const mailCols = `id, organization_id, kind, recipient, subject, body_text, body_html, status, attempts, next_attempt_at,
	last_error, created_at, sent_at`

// EnqueueMail writes a message to the outbox (in the transaction of ctx
// when there is one).
func (db *DB) EnqueueMail(ctx context.Context, m *app.QueuedMail) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO mail_outbox (`+mailCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, nullStr(m.OrganizationID), m.Kind, m.To, m.Subject, m.Text, m.HTML, m.Status, m.Attempts, ts(m.NextAttemptAt),
		m.LastError, ts(m.CreatedAt), tsPtr(m.SentAt))
	if err != nil {
		return fmt.Errorf("enqueue mail: %w", mapErr(err))
	}
	return nil
}

// ClaimMail marks due messages as sending until leaseUntil.
func (db *DB) ClaimMail(ctx context.Context, now, leaseUntil time.Time, limit int) ([]app.QueuedMail, error) {
	var out []app.QueuedMail
	err := db.InTx(ctx, func(ctx context.Context) error {
		rows, err := db.wr(ctx).QueryContext(ctx, `UPDATE mail_outbox SET status = 'sending', lease_until = ?
			WHERE id IN (SELECT id FROM mail_outbox
				WHERE (status = 'queued' AND next_attempt_at <= ?) OR (status = 'sending' AND lease_until < ?)
				ORDER BY next_attempt_at, id LIMIT ?)
			RETURNING `+mailCols, ts(leaseUntil), ts(now), ts(now), limit)
		if err != nil {
			return err
		}
		out, err = scanMail(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim mail: %w", err)
	}
	return out, nil
}

// FinishMail records an attempt's outcome.
func (db *DB) FinishMail(ctx context.Context, m *app.QueuedMail) error {
	return db.InTx(ctx, func(ctx context.Context) error {
		_, err := db.wr(ctx).ExecContext(ctx, `UPDATE mail_outbox SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?,
			sent_at = ?, lease_until = NULL WHERE id = ?`,
			m.Status, m.Attempts, ts(m.NextAttemptAt), m.LastError, tsPtr(m.SentAt), m.ID)
		if err != nil {
			return fmt.Errorf("finish mail %s: %w", m.ID, err)
		}
		return nil
	})
}

// ListMail returns the newest messages, of one organization or all.
func (db *DB) ListMail(ctx context.Context, orgID string, limit int) ([]app.QueuedMail, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+mailCols+` FROM mail_outbox
		WHERE (? = '' OR organization_id = ?) ORDER BY created_at DESC, id DESC LIMIT ?`, orgID, orgID, limit)
	if err != nil {
		return nil, fmt.Errorf("list mail: %w", err)
	}
	out, err := scanMail(rows)
	if err != nil {
		return nil, fmt.Errorf("list mail: %w", err)
	}
	return out, nil
}

func scanMail(rows *sql.Rows) ([]app.QueuedMail, error) {
	defer rows.Close()
	out := []app.QueuedMail{}
	for rows.Next() {
		var m app.QueuedMail
		var org, sent sql.NullString
		var next, created string
		if err := rows.Scan(&m.ID, &org, &m.Kind, &m.To, &m.Subject, &m.Text, &m.HTML, &m.Status, &m.Attempts, &next,
			&m.LastError, &created, &sent); err != nil {
			return nil, err
		}
		if org.Valid {
			m.OrganizationID = &org.String
		}
		m.NextAttemptAt, m.CreatedAt = parseTS(next), parseTS(created)
		if sent.Valid {
			t := parseTS(sent.String)
			m.SentAt = &t
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
