package httpx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"

	"github.com/compliance-appliance/compliance/app"
)

// handlerFunc is a handler that returns its error to the adapter.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// access says who may call a route.
type Access struct {
	public bool           // no credential needed
	cap    app.Capability // required capability otherwise
	// outsideTx: under an Idempotency-Key the handler runs outside the
	// idempotency transaction (it waits on something slow, such as a
	// language model, and stores its own writes).
	outsideTx bool
	// writeAhead: under an Idempotency-Key the handler runs before the
	// idempotency transaction, its write held back (see WriteAhead).
	writeAhead bool
	// prepare, when set, runs before the handler and outside any write
	// transaction (see Prepare).
	prepare PrepareFunc
}

// PrepareFunc is the part of a handler's work that needs no write
// transaction: parsing a large body, storing an uploaded file. It returns
// the request the handler then sees (carrying what it prepared in its
// context) and a function releasing what it holds.
type PrepareFunc func(w http.ResponseWriter, r *http.Request) (*http.Request, func(), error)

// Prepare marks a route whose handler starts with work that needs no
// write transaction. Under an Idempotency-Key the handler runs inside the
// transaction that stores its response, on the single writer; fn runs
// before that, so the writer does not wait on it (an upload's file is
// written and flushed to disk first; a file stored for a request that then
// fails or is replayed is unreferenced, and the files sweep removes it).
func (a Access) Prepare(fn PrepareFunc) Access {
	a.prepare = fn
	return a
}

// OutsideTransaction marks a route whose handler runs, under an
// Idempotency-Key, outside the transaction that stores the response: the
// key is reserved first, the handler runs without holding the writer, and
// its response is stored after (app.IdempotentOutsideTx).
func (a Access) OutsideTransaction() Access {
	a.outsideTx = true
	return a
}

// WriteAhead marks a create route whose handler makes its one write
// through the app's held-back write transaction and whose response is
// known before that write: under an Idempotency-Key the handler runs
// outside the single writer and the writer only runs the write and stores
// the response (app.IdempotentAhead).
func (a Access) WriteAhead() Access {
	a.writeAhead = true
	return a
}

var (
	Public     = Access{public: true}
	CanRead    = Access{cap: app.CapRead}
	CanManage  = Access{cap: app.CapManage}
	CanKeys    = Access{cap: app.CapManageKeys}
	CanOwn     = Access{cap: app.CapTransferOwnership}
	CanReview  = Access{cap: app.CapReview}
	CanSelf    = Access{cap: app.CapSelfService}
	CanAuditRd = Access{cap: app.CapReadAudit}
)

// wrap adapts a handlerFunc: authentication, rate limit, capability,
// idempotency, then the handler; errors go to writeError.
func (s *Server) Wrap(acc Access, h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.Authenticate(r)
		if err != nil {
			s.Limit(w, r, nil)
			s.writeError(w, r, err)
			return
		}
		if !s.Limit(w, r, p) {
			return
		}
		if p == nil && !acc.public {
			s.writeError(w, r, app.ErrUnauthenticated)
			return
		}
		if p != nil {
			if hd, ok := r.Context().Value(HolderKey{}).(*PrincipalHolder); ok {
				hd.Principal = p
			}
			r = r.WithContext(app.WithPrincipal(r.Context(), p))
			if !acc.public {
				if err := p.Require(acc.cap); err != nil {
					s.writeError(w, r, err)
					return
				}
			}
		}
		if key := r.Header.Get("Idempotency-Key"); key != "" && r.Method == http.MethodPost && p != nil {
			s.idempotent(w, r, key, h, acc)
			return
		}
		if acc.prepare != nil {
			pr, release, err := acc.prepare(w, r)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			defer release()
			r = pr
		}
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// recorder buffers a response so it can be stored and replayed.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (rc *recorder) Header() http.Header { return rc.header }
func (rc *recorder) WriteHeader(code int) {
	if rc.status == 0 {
		rc.status = code
	}
}
func (rc *recorder) Write(b []byte) (int, error) {
	if rc.status == 0 {
		rc.status = http.StatusOK
	}
	return rc.body.Write(b)
}

// bodyRequestID returns the top-level requestId of a JSON object body.
func bodyRequestID(body []byte) string {
	var v struct {
		RequestID string `json:"requestId"`
	}
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &v) != nil {
		return ""
	}
	return v.RequestID
}

// idempotent runs a POST at most once per Idempotency-Key (DECISIONS:
// Limits). The request hash covers method, path, query and body.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, key string, h HandlerFunc, acc Access) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sum := sha256.New()
	io.WriteString(sum, r.Method+" "+r.URL.RequestURI()+"\n"+r.Header.Get("Content-Type")+"\n")
	sum.Write(body)
	hash := hex.EncodeToString(sum.Sum(nil))
	pr := r
	if acc.prepare != nil {
		// The preparation reads its own copy of the body; the handler
		// still gets the whole body (the request hash covers it).
		r.Body = io.NopCloser(bytes.NewReader(body))
		var release func()
		if pr, release, err = acc.prepare(w, r); err != nil {
			s.writeError(w, r, err)
			return
		}
		defer release()
	}
	var rec *recorder
	run := s.app.Idempotent
	switch {
	case acc.outsideTx:
		run = s.app.IdempotentOutsideTx
	case acc.writeAhead:
		run = s.app.IdempotentAhead
	}
	resp, replayed, err := run(pr.Context(), key, hash, func(ctx context.Context) *app.StoredResponse {
		rec = &recorder{header: http.Header{}}
		rr := pr.WithContext(ctx)
		rr.Body = io.NopCloser(bytes.NewReader(body))
		if err := h(rec, rr); err != nil {
			s.writeError(rec, rr, err)
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		return &app.StoredResponse{Status: rec.status, ContentType: rec.header.Get("Content-Type"), Body: rec.body.Bytes()}
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if rec != nil && !replayed {
		for k, v := range rec.header {
			w.Header()[k] = v
		}
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
		// The replayed body is the first response's; when it names a
		// requestId, the header names the same one (DECISIONS: X-Request-Id
		// equals requestId).
		if id := bodyRequestID(resp.Body); id != "" {
			w.Header().Set("X-Request-Id", id)
		}
	}
	if resp.ContentType != "" {
		w.Header().Set("Content-Type", resp.ContentType)
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}
