package web

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// registersBenchEnv is the real router over a migrated SQLite file, with enterprise
// organizations whose rate limit does not interfere.
type registersBenchEnv struct {
	db   *storage.DB
	app  *app.App
	srv  *Server
	dir  string
	orgs []string
	keys []string
}

func newRegistersBenchEnv(b *testing.B, orgs int) *registersBenchEnv {
	b.Helper()
	dir := b.TempDir()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(dir, "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	files, err := storage.NewFiles(filepath.Join(dir, "files"))
	if err != nil {
		b.Fatal(err)
	}
	a := app.NewWithFiles(db, files, nil, log, app.Config{EnterpriseRate: 1 << 30, EnterpriseBurst: 1 << 30})
	srv, err := New(a, log, Options{Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	e := &registersBenchEnv{db: db, app: a, srv: srv, dir: dir}
	for i := 0; i < orgs; i++ {
		o, err := a.CreateOrganization(ctx, fmt.Sprintf("Org %d", i), app.PlanEnterprise)
		if err != nil {
			b.Fatal(err)
		}
		k, err := a.CreateAPIKey(app.SystemContext(ctx, o.ID), app.APIKeyCreate{Name: "bench", Role: "admin"})
		if err != nil {
			b.Fatal(err)
		}
		e.orgs = append(e.orgs, o.ID)
		e.keys = append(e.keys, k.Key)
	}
	return e
}

// registersCPUTime is the process's user plus system CPU time.
func registersCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureCPU reports CPU time per operation next to wall time: on a shared
// machine the wall time includes waiting for a core.
func measureCPU(b *testing.B) func() {
	start := registersCPUTime()
	return func() { b.ReportMetric(float64(registersCPUTime()-start)/float64(b.N), "cpu-ns/op") }
}

func (e *registersBenchEnv) do(b *testing.B, method, path, key, body string, hdr ...string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-Key", key)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return rec
}

// BenchmarkFindingListTwoFilters lists one page of 50 findings filtered by
// status and severity, over 100,000 findings in 100 organizations.
func BenchmarkFindingListTwoFilters(b *testing.B) {
	const orgs, perOrg = 100, 1000
	e := newRegistersBenchEnv(b, orgs)
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(e.dir, "bench.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	// 1000 findings per organization: status cycles open, open, in_review,
	// resolved, closed; severity changes every 5 rows.
	for _, org := range e.orgs {
		if _, err := raw.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO findings (organization_id, id, type, status, severity, content, title, scope, created_by_type,
				created_by_id, created_at, updated_at)
			SELECT ?, 'fnd_' || substr(?, 5) || printf('%06d', i), 'soc2',
				CASE i % 5 WHEN 0 THEN 'open' WHEN 1 THEN 'open' WHEN 2 THEN 'in_review' WHEN 3 THEN 'resolved' ELSE 'closed' END,
				CASE (i / 5) % 5 WHEN 0 THEN 'critical' WHEN 1 THEN 'high' WHEN 2 THEN 'medium' WHEN 3 THEN 'low' ELSE 'informational' END,
				'finding ' || i || ' found by the nightly scan of the production network', 'finding ' || i, 'security',
				'system', 'system', '2026-01-15T10:00:00.000Z', '2026-01-15T10:00:00.000Z' FROM n`, perOrg-1, org, org); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := raw.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
	// Each organization has 80 open findings of severity high.
	rec := e.do(b, "GET", "/v1/findings?status=open&severity=high&perPage=50", e.keys[0], "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"total":80`) {
		b.Fatalf("%d %s", rec.Code, rec.Body.String()[:200])
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer measureCPU(b)()
	for i := 0; i < b.N; i++ {
		rec := e.do(b, "GET", "/v1/findings?status=open&severity=high&perPage=50", e.keys[i%orgs], "")
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

// BenchmarkFindingCreateIdempotent creates findings with an Idempotency-Key
// each, every request a durable commit (synchronous=FULL).
func BenchmarkFindingCreateIdempotent(b *testing.B) {
	e := newRegistersBenchEnv(b, 1)
	body := `{"title":"CVE-2026-0001 on host","cvss":9.8,"source":"scanner","description":"found by the nightly scan"}`
	b.ReportAllocs()
	b.ResetTimer()
	defer measureCPU(b)()
	for i := 0; i < b.N; i++ {
		rec := e.do(b, "POST", "/v1/findings", e.keys[0], body, "Idempotency-Key", fmt.Sprintf("scanner:%d", i))
		if rec.Code != http.StatusCreated {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
}

// BenchmarkDurableCommitFloor is one synchronous=FULL commit of a single
// outbox row: the disk's floor under the create benchmark.
func BenchmarkDurableCommitFloor(b *testing.B) {
	e := newRegistersBenchEnv(b, 1)
	ctx := context.Background()
	b.ResetTimer()
	defer measureCPU(b)()
	for i := 0; i < b.N; i++ {
		err := e.db.InTx(ctx, func(ctx context.Context) error {
			return e.db.AppendEvent(ctx, app.Event{ID: app.NewID(app.PrefixEvent), OrganizationID: e.orgs[0], Type: "bench", Data: i, OccurredAt: e.app.Now()})
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
