package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.WebhookStore = (*DB)(nil)

const webhookColumns = `id, organization_id, url, description, events, active, paused_reason, paused_at, failing_since,
	last_success_at, last_failure_at, secret_ciphertext, secret_hint, start_seq, created_at, updated_at`

func scanWebhook(row interface{ Scan(...any) error }) (*app.Webhook, error) {
	var w app.Webhook
	var events string
	var active int
	var reason, paused, failing, success, failure sql.NullString
	var created, updated string
	if err := row.Scan(&w.ID, &w.OrganizationID, &w.URL, &w.Description, &events, &active, &reason, &paused, &failing,
		&success, &failure, &w.SealedSecret, &w.SecretHint, &w.StartSeq, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	w.Events = []string{}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, fmt.Errorf("decode events of webhook %s: %w", w.ID, err)
	}
	w.Active = active == 1
	w.PausedReason, w.PausedAt, w.FailingSince = strPtr(reason), parseTSPtr(paused), parseTSPtr(failing)
	w.LastSuccessAt, w.LastFailureAt = parseTSPtr(success), parseTSPtr(failure)
	w.CreatedAt, w.UpdatedAt = parseTS(created), parseTS(updated)
	return &w, nil
}

// CreateWebhook inserts a subscription.
func (db *DB) CreateWebhook(ctx context.Context, w *app.Webhook) error {
	events, err := json.Marshal(w.Events)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO webhooks (`+webhookColumns+`) VALUES (`+placeholders(16)+`)`,
		w.ID, w.OrganizationID, w.URL, w.Description, string(events), boolInt(w.Active), nullStr(w.PausedReason),
		tsPtr(w.PausedAt), tsPtr(w.FailingSince), tsPtr(w.LastSuccessAt), tsPtr(w.LastFailureAt), w.SealedSecret,
		w.SecretHint, w.StartSeq, ts(w.CreatedAt), ts(w.UpdatedAt))
	return mapErr(err)
}

// UpdateWebhook writes every mutable column.
func (db *DB) UpdateWebhook(ctx context.Context, w *app.Webhook) error {
	events, err := json.Marshal(w.Events)
	if err != nil {
		return err
	}
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE webhooks SET url = ?, description = ?, events = ?, active = ?,
		paused_reason = ?, paused_at = ?, failing_since = ?, last_success_at = ?, last_failure_at = ?,
		secret_ciphertext = ?, secret_hint = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		w.URL, w.Description, string(events), boolInt(w.Active), nullStr(w.PausedReason), tsPtr(w.PausedAt),
		tsPtr(w.FailingSince), tsPtr(w.LastSuccessAt), tsPtr(w.LastFailureAt), w.SealedSecret, w.SecretHint,
		ts(w.UpdatedAt), w.OrganizationID, w.ID)
	return affected(res, err)
}

// SetWebhookHealth writes the health and pause fields only, so a
// concurrent edit of url or events is not undone.
func (db *DB) SetWebhookHealth(ctx context.Context, w *app.Webhook) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE webhooks SET active = ?, paused_reason = ?, paused_at = ?,
		failing_since = ?, last_success_at = ?, last_failure_at = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		boolInt(w.Active), nullStr(w.PausedReason), tsPtr(w.PausedAt), tsPtr(w.FailingSince), tsPtr(w.LastSuccessAt),
		tsPtr(w.LastFailureAt), ts(w.UpdatedAt), w.OrganizationID, w.ID)
	return affected(res, err)
}

// DeleteWebhook removes a subscription; its deliveries and attempts go
// with it (ON DELETE CASCADE).
func (db *DB) DeleteWebhook(ctx context.Context, orgID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM webhooks WHERE organization_id = ? AND id = ?`, orgID, id)
	return affected(res, err)
}

// GetWebhook returns one subscription.
func (db *DB) GetWebhook(ctx context.Context, orgID, id string) (*app.Webhook, error) {
	return scanWebhook(db.rd(ctx).QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE organization_id = ? AND id = ?`, orgID, id))
}

// ListWebhooks returns a page of subscriptions, oldest first.
func (db *DB) ListWebhooks(ctx context.Context, orgID string, p app.Page) (app.List[app.Webhook], error) {
	out := app.List[app.Webhook]{Items: []app.Webhook{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM webhooks WHERE organization_id = ?`, orgID).Scan(&out.Total); err != nil {
		return out, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE organization_id = ? ORDER BY id LIMIT ? OFFSET ?`,
		orgID, p.PerPage, p.Offset())
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *w)
	}
	return out, rows.Err()
}

// ActiveWebhooks returns the organization's active subscriptions.
func (db *DB) ActiveWebhooks(ctx context.Context, orgID string) ([]app.Webhook, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE organization_id = ? AND active = 1 ORDER BY id`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []app.Webhook
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *w)
	}
	return out, rows.Err()
}

// LastEventSeq is the highest outbox sequence number.
func (db *DB) LastEventSeq(ctx context.Context) (int64, error) {
	var n int64
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&n)
	return n, err
}

// WebhookCursor is the last outbox sequence fanned out.
func (db *DB) WebhookCursor(ctx context.Context) (int64, error) {
	var n int64
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT last_seq FROM webhook_cursor WHERE id = 1`).Scan(&n)
	return n, mapErr(err)
}

// SetWebhookCursor moves the cursor.
func (db *DB) SetWebhookCursor(ctx context.Context, seq int64) error {
	_, err := db.wr(ctx).ExecContext(ctx, `UPDATE webhook_cursor SET last_seq = ? WHERE id = 1`, seq)
	return err
}

// EventsAfter returns up to limit events above seq in order.
func (db *DB) EventsAfter(ctx context.Context, seq int64, limit int) ([]app.StoredEvent, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT seq, id, organization_id, type, payload, occurred_at FROM events
		WHERE seq > ? ORDER BY seq LIMIT ?`, seq, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []app.StoredEvent
	for rows.Next() {
		var e app.StoredEvent
		var payload, at string
		if err := rows.Scan(&e.Seq, &e.ID, &e.OrganizationID, &e.Type, &payload, &at); err != nil {
			return nil, err
		}
		e.Payload, e.OccurredAt = []byte(payload), parseTS(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// InsertDeliveries adds deliveries; an original delivery of an event the
// subscription already has is skipped.
func (db *DB) InsertDeliveries(ctx context.Context, ds []app.Delivery) error {
	q := db.wr(ctx)
	for _, d := range ds {
		_, err := q.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, organization_id, webhook_id, event_id, event_type, body,
			status, attempts, next_attempt_at, redelivery_of, expires_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			d.ID, d.OrganizationID, d.WebhookID, d.EventID, d.Event, string(d.Payload), d.Status, tsPtr(d.NextAttemptAt),
			nullStr(d.RedeliveryOf), ts(d.ExpiresAt), ts(d.CreatedAt), ts(d.UpdatedAt))
		if err != nil {
			return fmt.Errorf("insert delivery %s: %w", d.ID, mapErr(err))
		}
	}
	return nil
}

const deliveryColumns = `id, organization_id, webhook_id, event_id, event_type, body, status, attempts, next_attempt_at,
	last_attempt_at, last_status_code, last_error, redelivery_of, expires_at, created_at, updated_at`

func scanDelivery(row interface{ Scan(...any) error }) (*app.Delivery, error) {
	var d app.Delivery
	var body, next, expires, created, updated string
	var last, lastErr, redelivery sql.NullString
	var code sql.NullInt64
	if err := row.Scan(&d.ID, &d.OrganizationID, &d.WebhookID, &d.EventID, &d.Event, &body, &d.Status, &d.AttemptCount,
		&next, &last, &code, &lastErr, &redelivery, &expires, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	d.Payload = json.RawMessage(body)
	if d.Status == app.DeliveryPending || d.Status == app.DeliveryHeld {
		t := parseTS(next)
		d.NextAttemptAt = &t
	}
	d.LastAttemptAt, d.LastError, d.RedeliveryOf = parseTSPtr(last), strPtr(lastErr), strPtr(redelivery)
	if code.Valid {
		d.LastStatusCode = app.Ptr(int(code.Int64))
	}
	d.ExpiresAt, d.CreatedAt, d.UpdatedAt = parseTS(expires), parseTS(created), parseTS(updated)
	d.Attempts = []app.DeliveryAttempt{}
	return &d, nil
}

// GetDelivery returns one delivery of a subscription with its attempts.
func (db *DB) GetDelivery(ctx context.Context, orgID, webhookID, id string) (*app.Delivery, error) {
	d, err := scanDelivery(db.rd(ctx).QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE organization_id = ? AND webhook_id = ? AND id = ?`, orgID, webhookID, id))
	if err != nil {
		return nil, err
	}
	if err := db.loadAttempts(ctx, orgID, []*app.Delivery{d}); err != nil {
		return nil, err
	}
	return d, nil
}

// ListDeliveries returns a page of a subscription's deliveries, newest
// first, with their attempts.
func (db *DB) ListDeliveries(ctx context.Context, orgID, webhookID string, f app.DeliveryFilter) (app.List[app.Delivery], error) {
	where := []string{"organization_id = ?", "webhook_id = ?"}
	args := []any{orgID, webhookID}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if f.Event != "" {
		where, args = append(where, "event_type = ?"), append(args, f.Event)
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.Delivery]{Items: []app.Delivery{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM webhook_deliveries WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE `+cond+` ORDER BY id DESC LIMIT ? OFFSET ?`,
		append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	var ptrs []*app.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return out, err
		}
		ptrs = append(ptrs, d)
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	if err := db.loadAttempts(ctx, orgID, ptrs); err != nil {
		return out, err
	}
	for _, d := range ptrs {
		out.Items = append(out.Items, *d)
	}
	return out, nil
}

func (db *DB) loadAttempts(ctx context.Context, orgID string, ds []*app.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	byID := map[string]*app.Delivery{}
	args := []any{orgID}
	for _, d := range ds {
		byID[d.ID] = d
		args = append(args, d.ID)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT delivery_id, attempt, started_at, duration_ms, status_code, response_snippet, error
		FROM webhook_delivery_attempts WHERE organization_id = ? AND delivery_id IN (`+placeholders(len(ds))+`) ORDER BY delivery_id, attempt`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var at app.DeliveryAttempt
		var started string
		var code sql.NullInt64
		if err := rows.Scan(&at.DeliveryID, &at.Attempt, &started, &at.DurationMS, &code, &at.ResponseSnippet, &at.Error); err != nil {
			return err
		}
		at.StartedAt = parseTS(started)
		if code.Valid {
			at.StatusCode = app.Ptr(int(code.Int64))
		}
		if d := byID[at.DeliveryID]; d != nil {
			d.Attempts = append(d.Attempts, at)
		}
	}
	return rows.Err()
}

// SetDeliveriesHeld holds a subscription's pending deliveries while it is
// paused (held true), or makes its held deliveries pending again. Pings and
// redeliveries, asked for explicitly, are never held.
func (db *DB) SetDeliveriesHeld(ctx context.Context, orgID, webhookID string, held bool) error {
	from, to := "pending", "held"
	if !held {
		from, to = "held", "pending"
	}
	_, err := db.wr(ctx).ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?
		WHERE organization_id = ? AND webhook_id = ? AND status = ? AND event_type != 'ping' AND redelivery_of IS NULL`,
		to, orgID, webhookID, from)
	return err
}

// NextDeliveryDue is the earliest time a delivery becomes claimable.
func (db *DB) NextDeliveryDue(ctx context.Context) (*time.Time, error) {
	var pending, stale sql.NullString
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending'`).Scan(&pending); err != nil {
		return nil, err
	}
	if err := q.QueryRowContext(ctx, `SELECT min(claimed_until) FROM webhook_deliveries WHERE status = 'delivering'`).Scan(&stale); err != nil {
		return nil, err
	}
	var out *time.Time
	for _, s := range []sql.NullString{pending, stale} {
		if t := parseTSPtr(s); t != nil && (out == nil || t.Before(*out)) {
			out = t
		}
	}
	return out, nil
}

// ClaimDeliveries marks up to limit due deliveries, in due order, as
// delivering under token until the lease ends, and returns them. The
// lookups walk an index and stop at the limit, so a long backlog costs
// nothing per claim.
func (db *DB) ClaimDeliveries(ctx context.Context, now, until time.Time, token string, limit int) ([]app.ClaimedDelivery, error) {
	q := db.wr(ctx)
	// Claims whose lease ran out go back to pending (already due), or to
	// held when their subscription was paused meanwhile.
	if _, err := q.ExecContext(ctx, `UPDATE webhook_deliveries SET claim_token = NULL, claimed_until = NULL,
		status = CASE WHEN event_type = 'ping' OR redelivery_of IS NOT NULL
			OR (SELECT active FROM webhooks w WHERE w.id = webhook_id) = 1 THEN 'pending' ELSE 'held' END
		WHERE status = 'delivering' AND claimed_until <= ?`, ts(now)); err != nil {
		return nil, fmt.Errorf("release expired claims: %w", err)
	}
	ids, err := queryIDs(ctx, q, `SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ?
		ORDER BY next_attempt_at LIMIT ?`, ts(now), limit)
	if err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{token, ts(until)}
	for _, id := range ids {
		args = append(args, id)
	}
	if _, err := q.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'delivering', claim_token = ?, claimed_until = ?
		WHERE id IN (`+placeholders(len(ids))+`)`, args...); err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	rows, err := q.QueryContext(ctx, `SELECT d.id, d.organization_id, d.webhook_id, d.event_id, d.event_type, d.body, d.attempts,
		d.expires_at, d.redelivery_of IS NOT NULL, w.url, w.secret_ciphertext FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
		WHERE d.id IN (`+placeholders(len(ids))+`) ORDER BY d.next_attempt_at, d.id`, args[2:]...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []app.ClaimedDelivery
	for rows.Next() {
		var c app.ClaimedDelivery
		var body, expires string
		var redelivery int
		if err := rows.Scan(&c.ID, &c.OrganizationID, &c.WebhookID, &c.EventID, &c.EventType, &body, &c.AttemptCount,
			&expires, &redelivery, &c.URL, &c.SealedSecret); err != nil {
			return nil, err
		}
		c.Body, c.ExpiresAt, c.Redelivery = []byte(body), parseTS(expires), redelivery == 1
		out = append(out, c)
	}
	return out, rows.Err()
}

// queryIDs runs a query of ids and returns them in order.
func queryIDs(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// FinishAttempt records an attempt and the delivery's new state, provided
// the claim is still the caller's.
func (db *DB) FinishAttempt(ctx context.Context, token string, at app.DeliveryAttempt, next app.DeliveryState) error {
	q := db.wr(ctx)
	res, err := q.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_attempt_at = ?,
		last_attempt_at = ?, last_status_code = ?, last_error = ?, claim_token = NULL, claimed_until = NULL, updated_at = ?
		WHERE id = ? AND claim_token = ? AND status = 'delivering'`,
		next.Status, ts(next.NextAttemptAt), ts(next.LastAttemptAt), intPtr(next.LastStatusCode), nullStr(next.LastError),
		ts(next.LastAttemptAt), at.DeliveryID, token)
	if err := affected(res, err); err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, organization_id, started_at,
		duration_ms, status_code, response_snippet, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		at.DeliveryID, at.Attempt, at.OrganizationID, ts(at.StartedAt), at.DurationMS, intPtr(at.StatusCode),
		at.ResponseSnippet, at.Error)
	return mapErr(err)
}

// PurgeDeliveries deletes finished deliveries last updated before the
// cut-off, with their attempts.
func (db *DB) PurgeDeliveries(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE status IN ('succeeded', 'failed') AND updated_at < ?`, ts(before))
	if err != nil {
		return 0, mapErr(err)
	}
	return res.RowsAffected()
}

func intPtr(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// purgeEventsBatch bounds one purge transaction, so the writer is never held
// for long.
const purgeEventsBatch = 5000

// PurgeEvents deletes outbox events that occurred before the cut-off and
// that the dispatcher has already fanned out (deliveries carry their own
// copy of the body). The newest event is always kept. It walks the outbox
// in sequence order and stops at the first event to keep, so a run reads
// only what it deletes.
func (db *DB) PurgeEvents(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	cut := ts(before)
	for {
		var cursor, newest int64
		// Events are kept until both readers of the log, webhook dispatch
		// and the notify job, are past them.
		if err := db.w.QueryRowContext(ctx, `SELECT min((SELECT last_seq FROM webhook_cursor WHERE id = 1),
			coalesce((SELECT last_seq FROM notify_cursor WHERE id = 1), 0)),
			(SELECT coalesce(max(seq), 0) FROM events)`).Scan(&cursor, &newest); err != nil {
			return total, fmt.Errorf("purge events: %w", mapErr(err))
		}
		upTo := min(cursor, newest-1)
		rows, err := db.w.QueryContext(ctx, `SELECT seq, occurred_at FROM events WHERE seq <= ? ORDER BY seq LIMIT ?`, upTo, purgeEventsBatch)
		if err != nil {
			return total, fmt.Errorf("purge events: %w", err)
		}
		var last int64
		n := 0
		for rows.Next() {
			var seq int64
			var at string
			if err := rows.Scan(&seq, &at); err != nil {
				rows.Close()
				return total, fmt.Errorf("purge events: %w", err)
			}
			if at >= cut {
				break
			}
			last, n = seq, n+1
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return total, fmt.Errorf("purge events: %w", err)
		}
		if n == 0 {
			return total, nil
		}
		res, err := db.w.ExecContext(ctx, `DELETE FROM events WHERE seq <= ?`, last)
		if err != nil {
			return total, fmt.Errorf("purge events: %w", mapErr(err))
		}
		k, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += k
		if n < purgeEventsBatch {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// CountOpenDeliveries counts the deliveries per open status (pending,
// delivering, held) across organizations, through the status index.
func (db *DB) CountOpenDeliveries(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	for _, st := range []string{app.DeliveryPending, app.DeliveryDelivering, app.DeliveryHeld} {
		var n int64
		if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status = ?`, st).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s deliveries: %w", st, err)
		}
		out[st] = n
	}
	return out, nil
}
