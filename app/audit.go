package app

import (
	"context"
	"fmt"
	"time"
)

// AuditRetention is how long audit records are kept at the least (spec:
// Limits). Nothing in the appliance deletes them: there is no route or
// command for it, and the table's triggers refuse UPDATE and DELETE.
const AuditRetention = 5 * 365 * 24 * time.Hour

// AuditFilter narrows the audit log; filters combine with AND.
type AuditFilter struct {
	ResourceType string
	ResourceID   string
	ActorID      string
	Action       string
	From         *time.Time // inclusive
	To           *time.Time // exclusive
	Page         Page
}

// AuditStore reads the audit trail.
type AuditStore interface {
	ListAudit(ctx context.Context, orgID string, f AuditFilter) (List[AuditRecord], error)
	// ScanAudit calls fn for every record of every organization in chain
	// order.
	ScanAudit(ctx context.Context, fn func(r *AuditRecord) error) error
	// AuditSequence returns the highest seq present and the highest seq
	// ever assigned (the AUTOINCREMENT counter).
	AuditSequence(ctx context.Context) (present, assigned int64, err error)
}

// ListAuditLog returns the organization's audit records, newest first.
func (a *App) ListAuditLog(ctx context.Context, f AuditFilter) (List[AuditRecord], error) {
	p, err := authorize(ctx, CapReadAudit)
	if err != nil {
		return List[AuditRecord]{}, err
	}
	if f.From != nil && f.To != nil && !f.From.Before(*f.To) {
		return List[AuditRecord]{}, Invalid("to", CodeInvalid, nil, "to must be after from")
	}
	return a.store.ListAudit(ctx, p.OrgID, f)
}

// AuditBreak names the first record where the chain does not hold.
type AuditBreak struct {
	Seq    int64  `json:"seq"`
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// AuditVerification is the result of checking the whole chain.
type AuditVerification struct {
	OK          bool        `json:"ok"`
	Checked     int64       `json:"checked"`
	LastSeq     int64       `json:"lastSeq"`
	LastHash    string      `json:"lastHash"`
	FirstBroken *AuditBreak `json:"firstBroken"`
}

// VerifyAuditChain recomputes every record's hash in chain order and checks
// that each names its predecessor's hash, and that no record is missing
// (inside the chain or at its end). It stops at the first broken record.
func (a *App) VerifyAuditChain(ctx context.Context) (*AuditVerification, error) {
	v := &AuditVerification{OK: true}
	prev := ""
	var prevSeq int64
	err := a.store.ScanAudit(ctx, func(r *AuditRecord) error {
		v.Checked++
		fail := func(reason string) error {
			v.OK = false
			v.FirstBroken = &AuditBreak{Seq: r.Seq, ID: r.ID, Reason: reason}
			return errStopScan
		}
		if r.Seq != prevSeq+1 {
			return fail(fmt.Sprintf("records %d to %d are missing", prevSeq+1, r.Seq-1))
		}
		if r.PrevHash != prev {
			return fail("prevHash does not match the previous record's hash")
		}
		if h := AuditHash(prev, r); h != r.Hash {
			return fail("the record's content does not match its hash (modified)")
		}
		prev, prevSeq = r.Hash, r.Seq
		v.LastSeq, v.LastHash = r.Seq, r.Hash
		return nil
	})
	if err != nil && err != errStopScan {
		return nil, fmt.Errorf("verify audit chain: %w", err)
	}
	if v.OK {
		_, assigned, err := a.store.AuditSequence(ctx)
		if err != nil {
			return nil, fmt.Errorf("verify audit chain: %w", err)
		}
		if assigned > v.LastSeq {
			v.OK = false
			v.FirstBroken = &AuditBreak{Seq: v.LastSeq + 1,
				Reason: fmt.Sprintf("records %d to %d were removed from the end of the chain", v.LastSeq+1, assigned)}
		}
	}
	return v, nil
}

type stopScan struct{}

func (stopScan) Error() string { return "stop" }

var errStopScan error = stopScan{}
