package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.MailSettingsStore = (*DB)(nil)

// GetMailSettings returns the operator's SMTP settings (appliance-wide: no
// organization owns them), ErrNotFound without any.
func (db *DB) GetMailSettings(ctx context.Context) (*app.StoredMailSettings, error) {
	var s app.StoredMailSettings
	var at string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT smtp_host, smtp_port, tls, username, sealed_password, from_address, updated_by, updated_at
		FROM mail_settings WHERE id = 1`).Scan(&s.Host, &s.Port, &s.TLS, &s.Username, &s.SealedPassword, &s.From, &s.UpdatedBy, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("mail settings: %w", app.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get mail settings: %w", err)
	}
	s.UpdatedAt = parseTS(at)
	return &s, nil
}

// PutMailSettings writes the settings (insert or replace).
func (db *DB) PutMailSettings(ctx context.Context, s *app.StoredMailSettings) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO mail_settings (id, smtp_host, smtp_port, tls, username, sealed_password,
		from_address, updated_by, updated_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET smtp_host = excluded.smtp_host, smtp_port = excluded.smtp_port, tls = excluded.tls,
			username = excluded.username, sealed_password = excluded.sealed_password, from_address = excluded.from_address,
			updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		s.Host, s.Port, s.TLS, s.Username, s.SealedPassword, s.From, s.UpdatedBy, ts(s.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put mail settings: %w", mapErr(err))
	}
	return nil
}

// DeleteMailSettings removes the settings.
func (db *DB) DeleteMailSettings(ctx context.Context) (bool, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM mail_settings WHERE id = 1`)
	if err != nil {
		return false, fmt.Errorf("delete mail settings: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// MailOutboxStats counts the whole outbox (the operator's view over every
// organization): queued or being sent now, sent and failed since, and the
// newest error.
func (db *DB) MailOutboxStats(ctx context.Context, since time.Time) (app.MailOutboxStats, error) {
	var s app.MailOutboxStats
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT
		COUNT(*) FILTER (WHERE status IN ('queued', 'sending')),
		COUNT(*) FILTER (WHERE status = 'sent' AND sent_at >= ?),
		COUNT(*) FILTER (WHERE status = 'failed' AND created_at >= ?)
		FROM mail_outbox`, ts(since), ts(since)).Scan(&s.Queued, &s.Sent24h, &s.Failed24h)
	if err != nil {
		return s, fmt.Errorf("mail outbox stats: %w", err)
	}
	err = db.rd(ctx).QueryRowContext(ctx, `SELECT last_error, id FROM mail_outbox WHERE last_error != ''
		ORDER BY created_at DESC, id DESC LIMIT 1`).Scan(&s.LastError, &s.LastErrorID)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("mail outbox last error: %w", err)
	}
	return s, nil
}
