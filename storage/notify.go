package storage

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

// NotifyCursor is the last event the notify job handled.
func (db *DB) NotifyCursor(ctx context.Context) (int64, error) {
	var n int64
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT last_seq FROM notify_cursor WHERE id = 1`).Scan(&n)
	return n, mapErr(err)
}

// SetNotifyCursor moves the cursor.
func (db *DB) SetNotifyCursor(ctx context.Context, seq int64) error {
	_, err := db.wr(ctx).ExecContext(ctx, `UPDATE notify_cursor SET last_seq = ? WHERE id = 1`, seq)
	return err
}

// InsertNotification records n unless the person has one for the event.
func (db *DB) InsertNotification(ctx context.Context, n *app.Notification, mailID string) (bool, error) {
	var mail any
	if mailID != "" {
		mail = mailID
	}
	res, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO notifications (id, organization_id, person_id, kind, event_id, subject, body,
		link, delivery, mail_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (person_id, event_id) DO NOTHING`,
		n.ID, n.OrganizationID, n.PersonID, n.Kind, n.EventID, n.Subject, n.Body, n.Link, n.Delivery, mail, ts(n.CreatedAt))
	if err != nil {
		return false, fmt.Errorf("insert notification: %w", err)
	}
	k, err := res.RowsAffected()
	return k == 1, err
}

// NotificationPreferences returns a person's chosen delivery by kind.
func (db *DB) NotificationPreferences(ctx context.Context, orgID, personID string) (map[string]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT kind, delivery FROM notification_preferences
		WHERE organization_id = ? AND person_id = ?`, orgID, personID)
	if err != nil {
		return nil, fmt.Errorf("notification preferences: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, d string
		if err := rows.Scan(&k, &d); err != nil {
			return nil, err
		}
		out[k] = d
	}
	return out, rows.Err()
}

// SetNotificationPreferences upserts a person's delivery per kind.
func (db *DB) SetNotificationPreferences(ctx context.Context, orgID, personID string, prefs map[string]string) error {
	for k, d := range prefs {
		if _, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO notification_preferences (organization_id, person_id, kind, delivery)
			VALUES (?, ?, ?, ?) ON CONFLICT (organization_id, person_id, kind) DO UPDATE SET delivery = excluded.delivery`,
			orgID, personID, k, d); err != nil {
			return fmt.Errorf("set notification preference: %w", err)
		}
	}
	return nil
}

const notificationCols = `id, organization_id, person_id, kind, event_id, subject, body, link, delivery, mail_id, created_at`

// ListNotifications returns a person's newest notifications.
func (db *DB) ListNotifications(ctx context.Context, orgID, personID string, limit int) ([]app.Notification, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+notificationCols+` FROM notifications
		WHERE organization_id = ? AND person_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, orgID, personID, limit)
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	return scanNotifications(rows)
}

// PendingDigests returns unmailed digest notifications, oldest first.
func (db *DB) PendingDigests(ctx context.Context, limit int) ([]app.Notification, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+notificationCols+` FROM notifications
		WHERE delivery = 'digest' AND mail_id IS NULL ORDER BY created_at, id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("pending digests: %w", err)
	}
	return scanNotifications(rows)
}

// MarkNotificationsMailed records the message that carried notifications.
func (db *DB) MarkNotificationsMailed(ctx context.Context, ids []string, mailID string) error {
	for _, id := range ids {
		if _, err := db.wr(ctx).ExecContext(ctx, `UPDATE notifications SET mail_id = ? WHERE id = ?`, mailID, id); err != nil {
			return fmt.Errorf("mark notification mailed: %w", err)
		}
	}
	return nil
}

func scanNotifications(rows *sql.Rows) ([]app.Notification, error) {
	defer rows.Close()
	out := []app.Notification{}
	for rows.Next() {
		var n app.Notification
		var mail sql.NullString
		var at string
		if err := rows.Scan(&n.ID, &n.OrganizationID, &n.PersonID, &n.Kind, &n.EventID, &n.Subject, &n.Body, &n.Link, &n.Delivery,
			&mail, &at); err != nil {
			return nil, err
		}
		n.Mailed = mail.Valid && mail.String != ""
		n.CreatedAt = parseTS(at)
		out = append(out, n)
	}
	return out, rows.Err()
}
