package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// benchServer is a server whose enterprise plan never rate limits, so the
// benchmarks measure the work and not 429s.
func benchServer(b *testing.B) (*Server, string) {
	b.Helper()
	return benchServerWith(b, nil)
}

// benchServerWith is benchServer with an optional request observer.
func benchServerWith(b *testing.B, obs httpx.RequestObserver) (*Server, string) {
	b.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := app.New(db, nil, log, app.Config{EnterpriseRate: 1 << 30, EnterpriseBurst: 1 << 30})
	srv, err := New(a, log, Options{Version: "bench", Health: db.Ping, Observer: obs})
	if err != nil {
		b.Fatal(err)
	}
	o, err := a.CreateOrganization(ctx, "Bench", app.PlanEnterprise)
	if err != nil {
		b.Fatal(err)
	}
	k, err := a.CreateAPIKey(app.SystemContext(ctx, o.ID), app.APIKeyCreate{Name: "bench", Role: "admin"})
	if err != nil {
		b.Fatal(err)
	}
	return srv, k.Key
}

// BenchmarkAuthenticate is what every request pays before its handler: the
// key lookup (hash, cache) and the rate limit.
func BenchmarkAuthenticate(b *testing.B) {
	srv, key := benchServer(b)
	req := httptest.NewRequest("GET", "/v1/vendors", nil)
	req.Header.Set("X-API-Key", key)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuTime(b)()
	for b.Loop() {
		p, err := srv.Authenticate(req)
		if err != nil || p == nil {
			b.Fatal(err)
		}
		if !srv.Limit(w, req, p) {
			b.Fatal("rate limited")
		}
	}
}

// BenchmarkMiddlewareChain is a whole request through every middleware
// (recover, request id, access log, headers, body limit, routing,
// authentication, rate limit, capability) to a handler that does nothing.
func BenchmarkMiddlewareChain(b *testing.B) {
	srv, key := benchServer(b)
	srv.Router().Handle("/v1/bench-noop", srv.Wrap(httpx.CanRead, func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(http.StatusNoContent)
		return nil
	})).Methods("GET")
	req := httptest.NewRequest("GET", "/v1/bench-noop", nil)
	req.Header.Set("X-API-Key", key)
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuTime(b)()
	for b.Loop() {
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code != http.StatusNoContent {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}
