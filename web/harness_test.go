package web

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/storage/storagetest"
)

// fakeClock is a settable clock shared by the app and the rate limiter.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testEnv is the real router over a migrated SQLite file in t.TempDir().
type testEnv struct {
	t     *testing.T
	db    *storage.DB
	app   *app.App
	srv   *Server
	clock *fakeClock
	dir   string
	// location is the database: a SQLite path or a PostgreSQL URL.
	location string

	rawOnce sync.Once
	rawPool *sql.DB // raw's pool, opened on first use
}

func newTestServer(t *testing.T) *testEnv {
	t.Helper()
	return newTestServerWith(t, nil)
}

// newTestServerWith is newTestServer with Options changed by configure.
func newTestServerWith(t *testing.T, configure func(*Options)) *testEnv {
	t.Helper()
	return newTestServerLogged(t, configure, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// newTestServerLogged is newTestServerWith writing its logs to log.
func newTestServerLogged(t *testing.T, configure func(*Options), log *slog.Logger) *testEnv {
	t.Helper()
	return newTestServerFiles(t, configure, log, nil)
}

// newTestServerFiles is newTestServerLogged keeping uploaded files in
// files (nil: a directory store in the test's temporary directory).
func newTestServerFiles(t *testing.T, configure func(*Options), log *slog.Logger, files app.FileStore) *testEnv {
	t.Helper()
	dir := t.TempDir()
	var db *storage.DB
	var location string
	if storagetest.Postgres() {
		ctx := context.Background()
		location = storagetest.PostgresURL(t)
		var err error
		if db, err = storage.OpenURL(ctx, location); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if _, err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	} else {
		location = filepath.Join(dir, "test.db")
		db = openMigrated(t, location)
	}
	clock := &fakeClock{t: time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)}
	if files == nil {
		fs, err := storage.NewFiles(filepath.Join(dir, "files"))
		if err != nil {
			t.Fatal(err)
		}
		files = fs
	}
	a := app.NewWithFiles(db, files, clock.Now, log, app.Config{})
	opts := Options{Version: "test", Health: db.Ping, Now: clock.Now, MaxUploadBytes: 2 << 20}
	if configure != nil {
		configure(&opts)
	}
	srv, err := New(a, log, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{t: t, db: db, app: a, srv: srv, clock: clock, dir: dir, location: location}
}

// org creates an organization on a plan and returns its id.
func (e *testEnv) org(name, plan string) string {
	e.t.Helper()
	o, err := e.app.CreateOrganization(context.Background(), name, plan)
	if err != nil {
		e.t.Fatal(err)
	}
	return o.ID
}

// key creates an API key of a role in an organization.
func (e *testEnv) key(orgID string, role app.Role) string {
	e.t.Helper()
	k, err := e.app.CreateAPIKey(app.SystemContext(context.Background(), orgID), app.APIKeyCreate{Name: "test " + string(role), Role: string(role)})
	if err != nil {
		e.t.Fatal(err)
	}
	return k.Key
}

// person creates a person in an organization and returns their id.
func (e *testEnv) person(orgID, email string, role app.Role) string {
	e.t.Helper()
	p, err := e.app.CreatePerson(app.SystemContext(context.Background(), orgID), app.PersonCreate{Name: email, Email: email, Role: string(role)})
	if err != nil {
		e.t.Fatal(err)
	}
	return p.ID
}

// ctx returns a context acting as the system in an organization.
func (e *testEnv) ctx(orgID string) context.Context {
	return app.SystemContext(context.Background(), orgID)
}

// do sends a request through the full handler chain. body may be nil, a
// string (sent as is) or a value encoded as JSON. hdr is name, value pairs.
func (e *testEnv) do(method, path, key string, body any, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return rec
}

// obj decodes a JSON object response.
func obj(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("response is not a JSON object (%d): %s", rec.Code, rec.Body.String())
	}
	return m
}

// wantStatus fails unless the response has the status.
func wantStatus(t *testing.T, rec *httptest.ResponseRecorder, status int) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d: %s", rec.Code, status, rec.Body.String())
	}
}

// wantError checks status, error code and both documented error forms.
func wantError(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) map[string]any {
	t.Helper()
	wantStatus(t, rec, status)
	m := obj(t, rec)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object: %s", rec.Body.String())
	}
	if e["code"] != code {
		t.Fatalf("error code %v, want %s: %s", e["code"], code, rec.Body.String())
	}
	if msg, _ := m["message"].(string); msg == "" || e["message"] != msg {
		t.Fatalf("message and error.message must be set and equal: %s", rec.Body.String())
	}
	if _, ok := e["details"].(map[string]any); !ok {
		t.Fatalf("error.details must be an object: %s", rec.Body.String())
	}
	if rid, _ := m["requestId"].(string); rid == "" || rid != rec.Header().Get("X-Request-Id") {
		t.Fatalf("requestId %q must equal X-Request-Id %q", rid, rec.Header().Get("X-Request-Id"))
	}
	return e
}

// wantField checks a validation error names the field.
func wantField(t *testing.T, rec *httptest.ResponseRecorder, field string) {
	t.Helper()
	e := wantError(t, rec, http.StatusBadRequest, "validation_error")
	d := e["details"].(map[string]any)
	if d["field"] == field {
		return
	}
	if fs, ok := d["fields"].(map[string]any); ok {
		if _, ok := fs[field]; ok {
			return
		}
	}
	t.Fatalf("validation error does not name %s: %s", field, rec.Body.String())
}
