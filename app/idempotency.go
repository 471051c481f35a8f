package app

import (
	"bytes"
	"context"
	"crypto/rand"
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
		return a.storedResponse(ctx, p.OrgID, key, requestHash)
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
		stored := *resp
		stored.Body = a.sealIdempotentBody(p.OrgID, key, resp.Body)
		return a.store.PutIdempotency(ctx, p.OrgID, key, &IdempotencyRecord{RequestHash: requestHash, Response: stored, CreatedAt: a.Now()})
	})
	if errors.Is(err, errServerFailure) {
		return resp, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("idempotent request: %w", err)
	}
	return resp, replayed, nil
}

// storedResponse is the live stored response for key, nil when there is
// none; ErrConflict when the key was used with another request or its
// response can no longer be read.
func (a *App) storedResponse(ctx context.Context, orgID, key, requestHash string) (*StoredResponse, error) {
	rec, err := a.store.GetIdempotency(ctx, orgID, key)
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
	body, err := a.openIdempotentBody(orgID, key, rec.Response.Body)
	if err != nil {
		// The request was carried out, but its stored answer can no
		// longer be read (the data directory's key changed): running
		// it again would apply it twice, so the retry is refused.
		a.log.ErrorContext(ctx, "stored idempotent response unreadable", "organization_id", orgID, "error", err)
		return nil, Errorf(ErrConflict, "the request with Idempotency-Key %q was already carried out, but its stored response can no longer be read; "+
			"check the result before repeating it under a new key", key)
	}
	rec.Response.Body = body
	return &rec.Response, nil
}

// idempotencyPendingTTL is how long a reservation of IdempotentOutsideTx
// holds its key; an older one (the appliance stopped mid-request) is
// taken over by a retry.
const idempotencyPendingTTL = 10 * time.Minute

// IdempotentOutsideTx is Idempotent for a request that waits on something
// slow (a language model's answer) and stores its own writes: the key is
// reserved in a short transaction (a pending record), run executes outside
// any transaction, so other writes go on meanwhile, and its response is
// stored after. A retry while the first is under way is ErrConflict; a 5xx
// response releases the key. Unlike Idempotent, run's writes and the
// stored response are two commits: a stop between them leaves the
// reservation, which a retry takes over after idempotencyPendingTTL.
func (a *App) IdempotentOutsideTx(ctx context.Context, key, requestHash string, run func(ctx context.Context) *StoredResponse) (resp *StoredResponse, replayed bool, err error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, false, err
	}
	if len(key) > 255 {
		return nil, false, Invalid("Idempotency-Key", CodeTooLong, nil, "Idempotency-Key must be at most 255 characters")
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		rec, err := a.store.GetIdempotency(ctx, p.OrgID, key)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		case rec.Response.Status == 0 && a.Now().Sub(rec.CreatedAt) < idempotencyPendingTTL:
			if rec.RequestHash != requestHash {
				return Errorf(ErrConflict, "the Idempotency-Key %q was already used with a different request", key)
			}
			return Errorf(ErrConflict, "the request with Idempotency-Key %q is still being carried out; retry when it has finished", key)
		case rec.Response.Status != 0 && a.Now().Sub(rec.CreatedAt) < IdempotencyTTL:
			if rec.RequestHash != requestHash {
				return Errorf(ErrConflict, "the Idempotency-Key %q was already used with a different request", key)
			}
			body, err := a.openIdempotentBody(p.OrgID, key, rec.Response.Body)
			if err != nil {
				return Errorf(ErrConflict, "the request with Idempotency-Key %q was already carried out, but its stored response can no longer be read; "+
					"check the result before repeating it under a new key", key)
			}
			rec.Response.Body = body
			resp, replayed = &rec.Response, true
			return nil
		}
		return a.store.PutIdempotency(ctx, p.OrgID, key, &IdempotencyRecord{RequestHash: requestHash, Response: StoredResponse{Body: []byte{}}, CreatedAt: a.Now()})
	})
	if err != nil || replayed {
		return resp, replayed, err
	}
	resp = run(ctx)
	sctx := context.WithoutCancel(ctx)
	if resp.Status >= 500 {
		// Released: a record older than both time limits counts as absent.
		err = a.store.InTx(sctx, func(ctx context.Context) error {
			return a.store.PutIdempotency(ctx, p.OrgID, key, &IdempotencyRecord{RequestHash: requestHash, Response: StoredResponse{Body: []byte{}}, CreatedAt: time.Unix(0, 0).UTC()})
		})
		if err != nil {
			a.log.ErrorContext(ctx, "release idempotency key", "organization_id", p.OrgID, "error", err)
		}
		return resp, false, nil
	}
	stored := *resp
	stored.Body = a.sealIdempotentBody(p.OrgID, key, resp.Body)
	err = a.store.InTx(sctx, func(ctx context.Context) error {
		return a.store.PutIdempotency(ctx, p.OrgID, key, &IdempotencyRecord{RequestHash: requestHash, Response: stored, CreatedAt: a.Now()})
	})
	if err != nil {
		return nil, false, fmt.Errorf("idempotent request: %w", err)
	}
	return resp, false, nil
}

// sealedBodyMagic starts every sealed stored body. A JSON body never starts
// with a NUL byte, so a record written before bodies were sealed still reads.
var sealedBodyMagic = []byte("\x00idem1")

// idempotencyAAD binds a sealed body to its organization and key, so a
// sealed body copied to another row does not open.
func idempotencyAAD(orgID, key string) []byte {
	return []byte("idempotency\x00" + orgID + "\x00" + key)
}

// sealIdempotentBody encrypts a stored response body with the data-dir key
// that also seals webhook secrets (XChaCha20-Poly1305, random nonce): bodies
// can carry secrets shown once (API keys, webhook and OAuth app secrets) and
// must not sit in the database in plaintext for 24 hours.
func (a *App) sealIdempotentBody(orgID, key string, body []byte) []byte {
	aead := a.secretAEAD()
	out := make([]byte, 0, len(sealedBodyMagic)+aead.NonceSize()+len(body)+aead.Overhead())
	out = append(out, sealedBodyMagic...)
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	out = append(out, nonce...)
	return aead.Seal(out, nonce, body, idempotencyAAD(orgID, key))
}

// openIdempotentBody decrypts a sealed stored body; a body stored in
// plaintext (before sealing existed) is returned as is.
func (a *App) openIdempotentBody(orgID, key string, stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, sealedBodyMagic) {
		return stored, nil
	}
	aead := a.secretAEAD()
	sealed := stored[len(sealedBodyMagic):]
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("open idempotent response: truncated")
	}
	body, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], idempotencyAAD(orgID, key))
	if err != nil {
		return nil, fmt.Errorf("open idempotent response (wrong data-dir key?): %w", err)
	}
	return body, nil
}

// PurgeIdempotency removes records older than IdempotencyTTL.
func (a *App) PurgeIdempotency(ctx context.Context) (int64, error) {
	return a.store.PurgeIdempotency(ctx, a.Now().Add(-IdempotencyTTL))
}
