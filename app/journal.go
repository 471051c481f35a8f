package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"time"
)

// Event is a domain event written to the outbox in the same transaction as
// the change that caused it. Delivery reads the outbox.
type Event struct {
	ID             string
	OrganizationID string
	Type           string
	Data           any
	OccurredAt     time.Time
}

// Change is one field's old and new value in an audit record.
type Change struct {
	Old any `json:"old"`
	New any `json:"new"`
}

// AuditRecord is one append-only entry of the audit trail.
type AuditRecord struct {
	Seq            int64             `json:"seq"`
	ID             string            `json:"id"`
	OrganizationID string            `json:"organizationId"`
	OccurredAt     time.Time         `json:"occurredAt"`
	ActorType      string            `json:"actorType"`
	ActorID        string            `json:"actorId"`
	Action         string            `json:"action"`
	ResourceType   string            `json:"resourceType"`
	ResourceID     string            `json:"resourceId"`
	Changes        map[string]Change `json:"changes"`
	RequestID      string            `json:"requestId,omitempty"`
	PrevHash       string            `json:"prevHash"`
	Hash           string            `json:"hash"`
}

// JournalStore appends events and audit records inside the current transaction.
type JournalStore interface {
	AppendEvent(ctx context.Context, e Event) error
	AppendAudit(ctx context.Context, r *AuditRecord) error
}

// Mutation describes one write for the journal: the audit record it leaves
// and the events it raises.
type Mutation struct {
	Action       string // created, updated, deleted, archived, ...
	ResourceType string // vendor, person, ...
	ResourceID   string
	Before       any // nil on create
	After        any // nil on delete
	Events       []Event
}

// record writes the audit record and events of m for the principal in ctx.
// It must run inside InTx so that the change and its journal commit together.
func (a *App) record(ctx context.Context, m Mutation) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	now := a.Now()
	rec := &AuditRecord{
		ID:             NewID(PrefixAudit),
		OrganizationID: p.OrgID,
		OccurredAt:     now,
		ActorType:      p.ActorType(),
		ActorID:        p.ActorID(),
		Action:         m.Action,
		ResourceType:   m.ResourceType,
		ResourceID:     m.ResourceID,
		Changes:        Diff(m.Before, m.After),
		RequestID:      RequestIDFrom(ctx),
	}
	if err := a.store.AppendAudit(ctx, rec); err != nil {
		return fmt.Errorf("append audit %s %s: %w", m.ResourceType, m.Action, err)
	}
	for _, e := range m.Events {
		if e.ID == "" {
			e.ID = NewID(PrefixEvent)
		}
		if e.OrganizationID == "" {
			e.OrganizationID = p.OrgID
		}
		if e.OccurredAt.IsZero() {
			e.OccurredAt = now
		}
		if err := a.store.AppendEvent(ctx, e); err != nil {
			return fmt.Errorf("append event %s: %w", e.Type, err)
		}
	}
	return nil
}

// ResourceEvent builds the event named resource + "." + verb carrying the
// resource as the API returns it.
func ResourceEvent(resource, verb string, data any) Event {
	return Event{Type: resource + "." + verb, Data: data}
}

// Diff compares the JSON forms of two values field by field. Either may be
// nil (create or delete).
func Diff(before, after any) map[string]Change {
	b := toMap(before)
	a := toMap(after)
	out := map[string]Change{}
	for k, nv := range a {
		ov, ok := b[k]
		if !ok || !jsonEqual(ov, nv) {
			out[k] = Change{Old: ov, New: nv}
		}
	}
	for k, ov := range b {
		if _, ok := a[k]; !ok {
			out[k] = Change{Old: ov, New: nil}
		}
	}
	delete(out, "updatedAt")
	return out
}

func toMap(v any) map[string]any {
	if v == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil
	}
	return m
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// AuditHash is the chain hash of a record: SHA-256 over the previous hash
// and the record's canonical JSON form (without seq and hash).
func AuditHash(prev string, r *AuditRecord) string {
	c := *r
	c.Seq, c.Hash, c.PrevHash = 0, "", prev
	raw, _ := json.Marshal(struct {
		Prev string `json:"prev"`
		*AuditRecord
	}{prev, &c})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
