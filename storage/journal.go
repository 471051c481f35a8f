package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

// AppendEvent writes an event to the outbox in the current transaction.
func (db *DB) AppendEvent(ctx context.Context, e app.Event) error {
	payload, ok := e.Data.(json.RawMessage) // rendered ahead of the transaction
	if !ok {
		var err error
		if payload, err = json.Marshal(e.Data); err != nil {
			return fmt.Errorf("encode event %s: %w", e.Type, err)
		}
	}
	_, err := db.wr(ctx).ExecContext(ctx,
		`INSERT INTO events (id, organization_id, type, payload, occurred_at) VALUES (?, ?, ?, ?, ?)`,
		e.ID, e.OrganizationID, e.Type, string(payload), ts(e.OccurredAt))
	return mapErr(err)
}

// AppendAudit chains r to the last record and appends it. The single writer
// connection serializes appends, so the chain has no forks.
func (db *DB) AppendAudit(ctx context.Context, r *app.AuditRecord) error {
	q := db.wr(ctx)
	var prev string
	err := q.QueryRowContext(ctx, `SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1`).Scan(&prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read audit chain head: %w", err)
	}
	r.PrevHash = prev
	if r.HashInput != nil {
		r.Hash = r.HashInput.Hash(prev)
	} else {
		r.Hash = app.AuditHash(prev, r)
	}
	changes := r.ChangesJSON
	if changes == nil {
		if changes, err = json.Marshal(r.Changes); err != nil {
			return fmt.Errorf("encode audit changes: %w", err)
		}
	}
	if db.pg {
		// A PostgreSQL sequence is not rolled back with its transaction:
		// numbered from it, a rolled-back append would leave a gap that
		// verification reports as removed records. The writer lock every
		// write transaction holds makes the head's seq + 1 gapless.
		err = q.QueryRowContext(ctx, `INSERT INTO audit_log (seq, id, organization_id, occurred_at, actor_type, actor_id, action,
			resource_type, resource_id, changes, request_id, prev_hash, hash)
			VALUES ((SELECT coalesce(max(seq), 0) + 1 FROM audit_log), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
			r.ID, r.OrganizationID, ts(r.OccurredAt), r.ActorType, r.ActorID, r.Action, r.ResourceType, r.ResourceID,
			string(changes), r.RequestID, r.PrevHash, r.Hash).Scan(&r.Seq)
		return mapErr(err)
	}
	err = q.QueryRowContext(ctx, `INSERT INTO audit_log (id, organization_id, occurred_at, actor_type, actor_id, action,
		resource_type, resource_id, changes, request_id, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
		r.ID, r.OrganizationID, ts(r.OccurredAt), r.ActorType, r.ActorID, r.Action, r.ResourceType, r.ResourceID,
		string(changes), r.RequestID, r.PrevHash, r.Hash).Scan(&r.Seq)
	return mapErr(err)
}
