package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

func TestErrorBodyCarriesBothForms(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)

	rec := e.do("POST", "/v1/vendors", key, map[string]any{"name": "V", "country": "XX"}, "X-Request-Id", "client-chosen-1")
	errObj := wantError(t, rec, http.StatusBadRequest, "validation_error")
	d := errObj["details"].(map[string]any)
	if d["field"] != "country" || d["value"] != "XX" {
		t.Fatalf("details must name the field and value: %v", d)
	}
	if rec.Header().Get("X-Request-Id") != "client-chosen-1" {
		t.Fatalf("a sane client request id is kept: %q", rec.Header().Get("X-Request-Id"))
	}
	if !strings.Contains(obj(t, rec)["message"].(string), "country") {
		t.Fatalf("message must name the field: %s", rec.Body.String())
	}
	// Several failing fields are all listed.
	rec = e.do("POST", "/v1/vendors", key, map[string]any{"name": "", "category": "nope", "website": "ftp://x"})
	d = wantError(t, rec, http.StatusBadRequest, "validation_error")["details"].(map[string]any)
	fields, _ := d["fields"].(map[string]any)
	for _, f := range []string{"name", "category", "website"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("details.fields must list %s: %v", f, d)
		}
	}
	// An unsafe request id is replaced.
	rec = e.do("GET", "/v1/nothing", "", nil, "X-Request-Id", "bad id\nwith newline")
	wantError(t, rec, http.StatusNotFound, "not_found")
	if strings.Contains(rec.Header().Get("X-Request-Id"), " ") {
		t.Fatal("unsafe request ids must be replaced")
	}
}

func TestUnknownRouteAndMethodAreJSON(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	key := e.key(e.org("Acme", app.PlanProfessional), app.RoleAdmin)
	wantError(t, e.do("GET", "/v1/no-such-thing", key, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/no-such-thing", "", nil), http.StatusNotFound, "not_found")
	rec := e.do("PUT", "/v1/vendors", key, map[string]any{})
	wantError(t, rec, http.StatusMethodNotAllowed, "method_not_allowed")
	if rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("405 must be JSON: %q", rec.Header().Get("Content-Type"))
	}
	if got := rec.Header().Get("Allow"); got != "GET, POST" {
		t.Fatalf("Allow %q, want GET, POST", got)
	}
	rec = e.do("POST", "/v1/vendors/vnd_x", key, map[string]any{})
	wantError(t, rec, http.StatusMethodNotAllowed, "method_not_allowed")
	if got := rec.Header().Get("Allow"); got != "GET, PATCH, DELETE" {
		t.Fatalf("Allow %q, want GET, PATCH, DELETE", got)
	}
}

func TestMalformedBodies(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	key := e.key(e.org("Acme", app.PlanProfessional), app.RoleAdmin)
	cases := []struct {
		name, body, field string
		hdr               []string
	}{
		{"syntax", `{"name": "x",}`, "body", nil},
		{"not an object", `["x"]`, "body", nil},
		{"empty", ``, "body", nil},
		{"trailing data", `{"name":"x"} {"name":"y"}`, "body", nil},
		{"truncated", `{"name": "x"`, "body", nil},
		{"wrong type", `{"name": 12}`, "name", nil},
		{"wrong type in a nullable field", `{"name": "x", "website": 5}`, "website", nil},
		{"wrong type in a boolean", `{"name": "x", "ictService": "yes"}`, "ictService", nil},
		{"wrong type in an array", `{"name": "x", "subProcessors": {"a": 1}}`, "subProcessors", nil},
		{"wrong content type", `{"name":"x"}`, "Content-Type", []string{"Content-Type", "text/plain"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", "/v1/vendors", key, tc.body, tc.hdr...)
			wantField(t, rec, tc.field)
		})
	}
	// Unknown fields are ignored; server-owned fields never take effect.
	rec := e.do("POST", "/v1/vendors", key, `{"name":"x","id":"vnd_mine","createdAt":"2000-01-01T00:00:00Z","riskScore":99,"futureField":true}`)
	wantStatus(t, rec, http.StatusCreated)
	v := obj(t, rec)
	if v["id"] == "vnd_mine" || v["createdAt"] == "2000-01-01T00:00:00Z" || v["riskScore"] == float64(99) {
		t.Fatalf("server-owned fields must not be settable: %s", rec.Body.String())
	}
	// A JSON body over 1 MiB is 413 with the error body.
	big := `{"name":"x","description":"` + strings.Repeat("a", 1<<20) + `"}`
	wantError(t, e.do("POST", "/v1/vendors", key, big), http.StatusRequestEntityTooLarge, "payload_too_large")
}

func TestPaginationEdges(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	for i := range 7 {
		if _, err := e.app.CreateVendor(e.ctx(org), app.VendorInput{Name: app.Ptr(fmt.Sprintf("V%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	type want struct{ n, total, page, perPage, pages int }
	ok := []struct {
		query string
		want  want
	}{
		{"", want{7, 7, 1, 50, 1}},
		{"?perPage=3", want{3, 7, 1, 3, 3}},
		{"?perPage=3&page=3", want{1, 7, 3, 3, 3}},
		{"?perPage=3&page=4", want{0, 7, 4, 3, 3}},
		{"?page=99", want{0, 7, 99, 50, 1}},
		{"?limit=2", want{2, 7, 1, 2, 4}},
		{"?limit=2&page=2", want{2, 7, 2, 2, 4}},
		{"?perPage=200", want{7, 7, 1, 200, 1}},
		{"?perPage=1", want{1, 7, 1, 1, 7}},
	}
	for _, tc := range ok {
		for _, path := range []string{"/v1/vendors"} {
			rec := e.do("GET", path+tc.query, key, nil)
			wantStatus(t, rec, http.StatusOK)
			m := obj(t, rec)
			meta := m["meta"].(map[string]any)
			got := want{len(m["data"].([]any)), int(meta["total"].(float64)), int(meta["page"].(float64)),
				int(meta["perPage"].(float64)), int(meta["totalPages"].(float64))}
			if got != tc.want {
				t.Errorf("%s%s: got %+v, want %+v", path, tc.query, got, tc.want)
			}
		}
	}
	bad := []struct{ query, field string }{
		{"?perPage=201", "perPage"},
		{"?perPage=0", "perPage"},
		{"?perPage=-1", "perPage"},
		{"?perPage=ten", "perPage"},
		{"?limit=201", "limit"},
		{"?limit=0", "limit"},
		{"?page=0", "page"},
		{"?page=x", "page"},
	}
	for _, tc := range bad {
		for _, path := range []string{"/v1/vendors", "/v1/people", "/v1/devices"} {
			wantField(t, e.do("GET", path+tc.query, key, nil), tc.field)
		}
	}
	// An empty organization still has one page and an empty array.
	empty := e.key(e.org("Empty", app.PlanProfessional), app.RoleAdmin)
	rec := e.do("GET", "/v1/vendors", empty, nil)
	if !strings.Contains(rec.Body.String(), `"data":[]`) || !strings.Contains(rec.Body.String(), `"totalPages":1`) {
		t.Fatalf("empty list: %s", rec.Body.String())
	}
}

func TestRateLimitHeadersAndFreePlan429(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	free := e.org("Tiny", app.PlanFree)
	key := e.key(free, app.RoleAdmin)
	other := e.key(free, app.RoleAdmin)

	// Health is the one /v1 response without the headers.
	rec := e.do("GET", "/v1/health", "", nil)
	wantStatus(t, rec, http.StatusOK)
	if rlHeader(rec, "X-RateLimit-Limit") != "" {
		t.Fatal("health is not rate limited")
	}
	for _, path := range []string{"/v1/openapi.json", "/v1/nope", "/v1/vendors"} {
		rec := e.do("GET", path, "", nil)
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			if rlHeader(rec, h) == "" {
				t.Errorf("GET %s (%d) lacks %s", path, rec.Code, h)
			}
		}
	}

	// Free: 30 per minute, burst 60.
	for i := range 60 {
		rec := e.do("GET", "/v1/organization", key, nil)
		wantStatus(t, rec, http.StatusOK)
		if rlHeader(rec, "X-RateLimit-Limit") != "30" {
			t.Fatalf("X-RateLimit-Limit %q, want 30", rlHeader(rec, "X-RateLimit-Limit"))
		}
		if got := rlHeader(rec, "X-RateLimit-Remaining"); got != strconv.Itoa(59-i) {
			t.Fatalf("request %d: X-RateLimit-Remaining %s, want %d", i, got, 59-i)
		}
		reset, err := strconv.ParseInt(rlHeader(rec, "X-RateLimit-Reset"), 10, 64)
		if err != nil || reset < e.clock.Now().Unix() {
			t.Fatalf("X-RateLimit-Reset must be epoch seconds not in the past: %q", rlHeader(rec, "X-RateLimit-Reset"))
		}
	}
	rec = e.do("GET", "/v1/organization", key, nil)
	wantError(t, rec, http.StatusTooManyRequests, "rate_limited")
	if rec.Header().Get("Retry-After") != "2" {
		t.Fatalf("Retry-After %q, want 2 (one token per 2 s)", rec.Header().Get("Retry-After"))
	}
	if rlHeader(rec, "X-RateLimit-Remaining") != "0" {
		t.Fatalf("remaining on 429: %q", rlHeader(rec, "X-RateLimit-Remaining"))
	}
	// Limits are per key.
	wantStatus(t, e.do("GET", "/v1/organization", other, nil), http.StatusOK)
	e.clock.Advance(2 * time.Second)
	wantStatus(t, e.do("GET", "/v1/organization", key, nil), http.StatusOK)
	wantError(t, e.do("GET", "/v1/organization", key, nil), http.StatusTooManyRequests, "rate_limited")

	// Other plans get their own limits.
	for plan, limit := range map[string]string{app.PlanStarter: "60", app.PlanProfessional: "300", app.PlanEnterprise: "3000"} {
		rec := e.do("GET", "/v1/organization", e.key(e.org(plan, plan), app.RoleAdmin), nil)
		if rlHeader(rec, "X-RateLimit-Limit") != limit {
			t.Errorf("%s: X-RateLimit-Limit %q, want %s", plan, rlHeader(rec, "X-RateLimit-Limit"), limit)
		}
	}
}

func TestIdempotentCreate(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	body := map[string]any{"name": "Once", "category": "cloud"}

	first := e.do("POST", "/v1/vendors", key, body, "Idempotency-Key", "sync-42")
	wantStatus(t, first, http.StatusCreated)
	if first.Header().Get("Idempotent-Replayed") != "" {
		t.Fatal("the first response is not a replay")
	}
	// Another key of the same organization shares the idempotency space.
	second := e.do("POST", "/v1/vendors", e.key(org, app.RoleAdmin), body, "Idempotency-Key", "sync-42")
	wantStatus(t, second, http.StatusCreated)
	if second.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatal("a repeat must carry Idempotent-Replayed: true")
	}
	if second.Body.String() != first.Body.String() {
		t.Fatalf("replay must return the same body:\n%s\n%s", first.Body.String(), second.Body.String())
	}
	rec := e.do("GET", "/v1/vendors", key, nil)
	if n := obj(t, rec)["meta"].(map[string]any)["total"]; n != float64(1) {
		t.Fatalf("a replay must not create a duplicate: total %v", n)
	}
	// Same key, different body: 409.
	wantError(t, e.do("POST", "/v1/vendors", key, map[string]any{"name": "Twice"}, "Idempotency-Key", "sync-42"), http.StatusConflict, "conflict")
	// Keys are per organization.
	other := e.key(e.org("Other", app.PlanProfessional), app.RoleAdmin)
	rec = e.do("POST", "/v1/vendors", other, body, "Idempotency-Key", "sync-42")
	wantStatus(t, rec, http.StatusCreated)
	if rec.Header().Get("Idempotent-Replayed") != "" || obj(t, rec)["id"] == obj(t, first)["id"] {
		t.Fatal("another organization's identical key is a new request")
	}
	// After 24 hours the key is forgotten.
	e.clock.Advance(24*time.Hour + time.Second)
	rec = e.do("POST", "/v1/vendors", key, body, "Idempotency-Key", "sync-42")
	wantStatus(t, rec, http.StatusCreated)
	if rec.Header().Get("Idempotent-Replayed") != "" {
		t.Fatal("a key older than 24 h must not replay")
	}
	// Records survive a restart: they live in SQLite, not memory.
	srv2, err := New(e.app, e.srv.Logger(), e.srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv2
	rec = e.do("POST", "/v1/vendors", key, body, "Idempotency-Key", "sync-42")
	if rec.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatal("replay must work from the stored record")
	}
}

func TestIdempotencyDoesNotStoreServerErrors(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	fail := true
	e.srv.Router().Handle("/v1/test-flaky", e.srv.Wrap(httpx.CanManage, func(w http.ResponseWriter, r *http.Request) error {
		if fail {
			return fmt.Errorf("database on fire")
		}
		httpx.WriteJSON(w, http.StatusCreated, map[string]string{"ok": "yes"})
		return nil
	})).Methods("POST")
	rec := e.do("POST", "/v1/test-flaky", key, map[string]any{}, "Idempotency-Key", "k1")
	e500 := wantError(t, rec, http.StatusInternalServerError, "internal_error")
	if strings.Contains(fmt.Sprint(e500), "fire") {
		t.Fatal("a 500 must not leak the internal error")
	}
	fail = false
	rec = e.do("POST", "/v1/test-flaky", key, map[string]any{}, "Idempotency-Key", "k1")
	wantStatus(t, rec, http.StatusCreated)
	if rec.Header().Get("Idempotent-Replayed") != "" {
		t.Fatal("a 5xx must not be stored for replay")
	}
	rec = e.do("POST", "/v1/test-flaky", key, map[string]any{}, "Idempotency-Key", "k1")
	if rec.Header().Get("Idempotent-Replayed") != "true" || rec.Code != http.StatusCreated {
		t.Fatal("the success is stored")
	}
}

func TestPanicReturnsJSON500(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	key := e.key(e.org("Acme", app.PlanProfessional), app.RoleAdmin)
	e.srv.Router().Handle("/v1/test-panic", e.srv.Wrap(httpx.CanRead, func(w http.ResponseWriter, r *http.Request) error {
		panic("boom")
	})).Methods("GET")
	rec := e.do("GET", "/v1/test-panic", key, nil)
	wantError(t, rec, http.StatusInternalServerError, "internal_error")
	if strings.Contains(rec.Body.String(), "boom") {
		t.Fatal("the panic value must not reach the client")
	}
	// The server keeps serving.
	wantStatus(t, e.do("GET", "/v1/organization", key, nil), http.StatusOK)
	// A panic inside an idempotent create rolls back and is not stored.
	e.srv.Router().Handle("/v1/test-panic", e.srv.Wrap(httpx.CanManage, func(w http.ResponseWriter, r *http.Request) error {
		panic("boom")
	})).Methods("POST")
	wantError(t, e.do("POST", "/v1/test-panic", key, map[string]any{}, "Idempotency-Key", "p"), http.StatusInternalServerError, "internal_error")
}

func TestHealthAndOpenAPIArePublic(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	rec := e.do("GET", "/v1/health", "", nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["status"] != "ok" || m["version"] != "test" {
		t.Fatalf("health body: %s", rec.Body.String())
	}
	e.db.Close()
	wantStatus(t, e.do("GET", "/v1/health", "", nil), http.StatusServiceUnavailable)
}

// rlHeader reads a rate-limit header by its exact documented spelling.
func rlHeader(rec *httptest.ResponseRecorder, name string) string {
	v := rec.Header()[name]
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
