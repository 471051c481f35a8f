package app

import (
	"context"
	"errors"
	"fmt"
)

// Write-ahead idempotent requests. Under Idempotent the whole handler runs
// inside the transaction that stores its response, so the single writer
// also spends the handler's time: decoding, validation, reads, encoding
// and sealing the response. A create whose response is fully known before
// its write (every value it shows is assigned before the transaction)
// instead runs its handler first, outside the writer, with its one write
// transaction held back (createTx); the writer then only checks the key
// again, runs the held-back write and stores the sealed response, all in
// one transaction.
//
// Anything the held-back path cannot answer exactly falls back to
// Idempotent, which runs the handler again inside the writer as before:
// the held-back write failed (a reference was deleted meanwhile, a
// constraint), the handler wrote more than once, or it answered an error
// after its write was held back. The first run wrote nothing, so running
// again is as if it had not happened.

// writeAhead holds back the write transaction of a handler run by
// IdempotentAhead.
type writeAhead struct {
	fn     func(ctx context.Context) error
	writes int
}

type writeAheadKey struct{}

var (
	// errWriteAheadTwice fails a second write of a held-back handler (it
	// is then run again under Idempotent).
	errWriteAheadTwice = errors.New("a write-ahead request wrote twice")
	// errWriteAheadFailed rolls back the storing transaction when the
	// held-back write failed.
	errWriteAheadFailed = errors.New("held-back write failed")
)

// createTx runs fn in a write transaction, like store.InTx, except in a
// handler run by IdempotentAhead: there fn is held back and runs later in
// the transaction that stores the response, and createTx returns nil. The
// caller must have assigned, before createTx, every value its result shows,
// and fn must not change them; a caller makes at most one createTx call
// and no other write.
func (a *App) createTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if w, ok := ctx.Value(writeAheadKey{}).(*writeAhead); ok {
		w.writes++
		if w.writes > 1 {
			return errWriteAheadTwice
		}
		w.fn = fn
		return nil
	}
	return a.store.InTx(ctx, fn)
}

// IdempotentAhead is Idempotent for a handler whose writes go through one
// createTx call: run executes before the write transaction, outside the
// single writer, and the transaction re-checks the key, runs the held-back
// write and stores the response. A replay, a conflicting request and two
// concurrent requests with one key behave as under Idempotent: the key is
// checked again inside the transaction, so the second of two concurrent
// requests replays the first's stored response and its own held-back write
// is dropped.
func (a *App) IdempotentAhead(ctx context.Context, key, requestHash string, run func(ctx context.Context) *StoredResponse) (resp *StoredResponse, replayed bool, err error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, false, err
	}
	if len(key) > 255 {
		return nil, false, Invalid("Idempotency-Key", CodeTooLong, nil, "Idempotency-Key must be at most 255 characters")
	}
	if prev, err := a.storedResponse(ctx, p.OrgID, key, requestHash); err != nil || prev != nil {
		return prev, prev != nil, err
	}
	w := &writeAhead{}
	resp = run(context.WithValue(ctx, writeAheadKey{}, w))
	if w.writes > 1 || (w.fn != nil && (resp.Status < 200 || resp.Status > 299)) {
		return a.Idempotent(ctx, key, requestHash, run)
	}
	if resp.Status >= 500 {
		// Nothing was written; a 5xx is not stored.
		return resp, false, nil
	}
	stored := *resp
	stored.Body = a.sealIdempotentBody(p.OrgID, key, resp.Body)
	record := &IdempotencyRecord{RequestHash: requestHash, Response: stored, CreatedAt: a.Now()}
	var prev *StoredResponse
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		var err error
		if prev, err = a.storedResponse(ctx, p.OrgID, key, requestHash); err != nil || prev != nil {
			return err
		}
		if w.fn != nil {
			if err := w.fn(ctx); err != nil {
				return fmt.Errorf("%w: %w", errWriteAheadFailed, err)
			}
		}
		return a.store.PutIdempotency(ctx, p.OrgID, key, record)
	})
	switch {
	case errors.Is(err, errWriteAheadFailed):
		return a.Idempotent(ctx, key, requestHash, run)
	case err != nil:
		return nil, false, fmt.Errorf("idempotent request: %w", err)
	case prev != nil:
		return prev, true, nil
	}
	return resp, false, nil
}
