package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// The journal's encoding work done ahead of the write transaction. A
// write's audit record and events are known, except for the audit chain's
// previous hash, before the transaction starts: their JSON (the changes,
// each event's payload, the record's canonical form for the chain hash)
// is rendered first, so the single writer only reads the chain head,
// hashes and inserts.

// AuditHashInput is a record's canonical JSON for AuditHash split around
// the previous hash, which appears twice: Hash(prev) equals AuditHash(prev,
// r) for the record it was made from.
type AuditHashInput struct {
	head, mid, tail []byte
}

// hashPlaceholder stands for the previous hash while the canonical form is
// rendered; it cannot occur in a JSON-escaped value (a raw NUL would be
// escaped as \u0000).
const hashPlaceholder = "\x00prev\x00"

// NewAuditHashInput renders r's canonical form (PrevHash and Hash ignored).
func NewAuditHashInput(r *AuditRecord) (*AuditHashInput, error) {
	c := *r
	c.Seq, c.Hash, c.PrevHash, c.HashInput, c.ChangesJSON = 0, "", hashPlaceholder, nil, nil
	raw, err := json.Marshal(struct {
		Prev string `json:"prev"`
		*AuditRecord
	}{hashPlaceholder, &c})
	if err != nil {
		return nil, err
	}
	// json.Marshal escapes the NUL bytes of the placeholder.
	ph, _ := json.Marshal(hashPlaceholder)
	ph = ph[1 : len(ph)-1]
	parts := splitAll(raw, ph)
	if len(parts) != 3 {
		return nil, fmt.Errorf("audit hash input: %d placeholders", len(parts)-1)
	}
	return &AuditHashInput{head: parts[0], mid: parts[1], tail: parts[2]}, nil
}

// Hash is the chain hash of the record after prev.
func (h *AuditHashInput) Hash(prev string) string {
	s := sha256.New()
	s.Write(h.head)
	s.Write([]byte(prev)) // a hex hash needs no escaping
	s.Write(h.mid)
	s.Write([]byte(prev))
	s.Write(h.tail)
	return hex.EncodeToString(s.Sum(nil))
}

func splitAll(b, sep []byte) [][]byte {
	var out [][]byte
	for {
		i := indexOf(b, sep)
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i])
		b = b[i+len(sep):]
	}
}

func indexOf(b, sep []byte) int {
	for i := 0; i+len(sep) <= len(b); i++ {
		if string(b[i:i+len(sep)]) == string(sep) {
			return i
		}
	}
	return -1
}

// PreparedMutation is a Mutation whose audit record and events are
// rendered: recordPrepared only writes them.
type PreparedMutation struct {
	rec    *AuditRecord
	events []Event
}

// prepare renders m's journal entries for the principal in ctx at the
// current time. Nothing is written.
func (a *App) prepare(ctx context.Context, m Mutation) (*PreparedMutation, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
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
	if rec.ChangesJSON, err = json.Marshal(rec.Changes); err != nil {
		return nil, fmt.Errorf("encode audit changes: %w", err)
	}
	// A value holding the placeholder itself leaves the hash to the store.
	rec.HashInput, _ = NewAuditHashInput(rec)
	pm := &PreparedMutation{rec: rec}
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
		if _, ok := e.Data.(json.RawMessage); !ok {
			raw, err := json.Marshal(e.Data)
			if err != nil {
				return nil, fmt.Errorf("encode event %s: %w", e.Type, err)
			}
			e.Data = json.RawMessage(raw)
		}
		pm.events = append(pm.events, e)
	}
	return pm, nil
}

// recordPrepared writes a prepared mutation's audit record and events. It
// must run inside InTx, like record.
func (a *App) recordPrepared(ctx context.Context, pm *PreparedMutation) error {
	rec := *pm.rec
	if err := a.store.AppendAudit(ctx, &rec); err != nil {
		return fmt.Errorf("append audit %s %s: %w", rec.ResourceType, rec.Action, err)
	}
	for _, e := range pm.events {
		if err := a.store.AppendEvent(ctx, e); err != nil {
			return fmt.Errorf("append event %s: %w", e.Type, err)
		}
	}
	return nil
}
