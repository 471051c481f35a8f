package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	// ChangesJSON and HashInput, when set, are Changes encoded and the
	// record's canonical form rendered ahead of the write transaction
	// (prepare); the store uses them instead of encoding again.
	ChangesJSON []byte          `json:"-"`
	HashInput   *AuditHashInput `json:"-"`
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
	pm, err := a.prepare(ctx, m)
	if err != nil {
		return err
	}
	return a.recordPrepared(ctx, pm)
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
	c.Seq, c.Hash, c.PrevHash, c.ChangesJSON, c.HashInput = 0, "", prev, nil, nil
	raw, _ := json.Marshal(struct {
		Prev string `json:"prev"`
		*AuditRecord
	}{prev, &c})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
