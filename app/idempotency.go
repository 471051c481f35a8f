package app

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// IdempotencyTTL is how long a response is kept for replay (spec: 24 hours).
const IdempotencyTTL = 24 * time.Hour

// StoredResponse is a response kept for replay.
type StoredResponse struct {
	Status      int
	ContentType string
	Body        []byte
}

// IdempotencyRecord is a stored response with the hash of its request.
type IdempotencyRecord struct {
	RequestHash string
	Response    StoredResponse
	CreatedAt   time.Time
}

// IdempotencyStore persists idempotency records.
type IdempotencyStore interface {
	GetIdempotency(ctx context.Context, orgID, key string) (*IdempotencyRecord, error)
	PutIdempotency(ctx context.Context, orgID, key string, r *IdempotencyRecord) error
	PurgeIdempotency(ctx context.Context, before time.Time) (int64, error)
}

// errServerFailure rolls back a request that answered 5xx.
var errServerFailure = errors.New("request failed; not stored")

// Idempotent runs a create request once per key. A repeat with the same
// request hash within IdempotencyTTL returns the stored response (replayed is
// true); a repeat with a different hash is ErrConflict. run executes inside
// the same transaction that stores its response, so the write and its
// idempotency record commit together. 5xx responses are rolled back and not
// stored.
func (a *App) Idempotent(ctx context.Context, key, requestHash string, run func(ctx context.Context) *StoredResponse) (resp *StoredResponse, replayed bool, err error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, false, err
	}
	if len(key) > 255 {
		return nil, false, Invalid("Idempotency-Key", CodeTooLong, nil, "Idempotency-Key must be at most 255 characters")
	}
	check := func(ctx context.Context) (*StoredResponse, error) {
		rec, err := a.store.GetIdempotency(ctx, p.OrgID, key)
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if a.Now().Sub(rec.CreatedAt) >= IdempotencyTTL {
			return nil, nil
		}
		if rec.RequestHash != requestHash {
			return nil, Errorf(ErrConflict, "the Idempotency-Key %q was already used with a different request", key)
		}
		return &rec.Response, nil
	}
	if prev, err := check(ctx); err != nil || prev != nil {
		return prev, prev != nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		prev, err := check(ctx)
		if err != nil {
			return err
		}
		if prev != nil {
			resp, replayed = prev, true
			return nil
		}
		resp = run(ctx)
		if resp.Status >= 500 {
			return errServerFailure
		}
		return a.store.PutIdempotency(ctx, p.OrgID, key, &IdempotencyRecord{RequestHash: requestHash, Response: *resp, CreatedAt: a.Now()})
	})
	if errors.Is(err, errServerFailure) {
		return resp, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("idempotent request: %w", err)
	}
	return resp, replayed, nil
}

// PurgeIdempotency removes records older than IdempotencyTTL.
func (a *App) PurgeIdempotency(ctx context.Context) (int64, error) {
	return a.store.PurgeIdempotency(ctx, a.Now().Add(-IdempotencyTTL))
}
