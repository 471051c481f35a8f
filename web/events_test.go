package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage/storagetest"
	"github.com/compliance-appliance/compliance/webhook"
)

// receiver is a webhook endpoint that records every request and answers
// with the status its policy picks.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	status func(n int) int // n counts requests from 0
}

type received struct {
	body []byte
	hdr  http.Header
}

func newReceiver(t *testing.T, status func(n int) int) *receiver {
	rc := &receiver{t: t, status: status}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, received{body: body, hdr: r.Header.Clone()})
		rc.mu.Unlock()
		code := http.StatusOK
		if rc.status != nil {
			code = rc.status(n)
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"received":true}`)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// deliverer drives delivery by hand on the test clock; jitter 0.5 makes
// every delay exactly its base.
func (e *testEnv) deliverer() *app.Deliverer {
	return e.app.NewDeliverer(webhook.NewClient(e.app.NetworkPolicy()), app.DeliveryOptions{Jitter: func() float64 { return 0.5 }})
}

func (e *testEnv) runDeliveries(d *app.Deliverer) int {
	e.t.Helper()
	n, err := d.RunOnce(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// createWebhook subscribes url to events and returns the id and secret.
func (e *testEnv) createWebhook(key, url string, events ...string) (string, string) {
	e.t.Helper()
	rec := e.do("POST", "/v1/webhooks", key, map[string]any{"url": url, "events": events})
	wantStatus(e.t, rec, http.StatusCreated)
	m := obj(e.t, rec)
	return m["id"].(string), m["secret"].(string)
}

func sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func TestWebhookSubscriptions(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	owner := e.key(org, app.RoleOwner)

	rec := e.do("POST", "/v1/webhooks", owner, map[string]any{"url": "https://hooks.example.com/in", "events": []string{"vendor.*", "control.status.changed", "vendor.*"}, "description": "SIEM", "id": "whk_forged"})
	wantStatus(t, rec, http.StatusCreated)
	w := obj(t, rec)
	id, secret := w["id"].(string), w["secret"].(string)
	if !app.HasPrefix(id, "whk") || !strings.HasPrefix(secret, "whsec_") || len(secret) < 40 {
		t.Fatalf("id %q secret %q", id, secret)
	}
	if w["active"] != true || w["secretHint"] != secret[:10]+"…" {
		t.Fatalf("created: %v", w)
	}
	if evs := w["events"].([]any); len(evs) != 2 {
		t.Fatalf("events not de-duplicated: %v", evs)
	}

	rec = e.do("GET", "/v1/webhooks/"+id, owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if strings.Contains(rec.Body.String(), secret) || strings.Contains(rec.Body.String(), `"secret"`) {
		t.Fatalf("the secret is shown again: %s", rec.Body.String())
	}
	rec = e.do("GET", "/v1/webhooks", owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["meta"].(map[string]any)["total"] != float64(1) || strings.Contains(rec.Body.String(), secret) {
		t.Fatalf("list: %s", rec.Body.String())
	}
	// The secret is in neither the audit trail nor the outbox.
	var n int
	db := rawDB(t, e)
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM audit_log WHERE changes LIKE '%' || ? || '%') + (SELECT count(*) FROM events WHERE payload LIKE '%' || ? || '%')`, secret, secret).Scan(&n); err != nil || n != 0 {
		t.Fatalf("secret stored in plaintext (%d, %v)", n, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM webhooks WHERE instr(CAST(secret_ciphertext AS TEXT), ?) > 0`, secret).Scan(&n); err != nil || n != 0 {
		t.Fatalf("secret not encrypted at rest (%d, %v)", n, err)
	}

	// Pause and resume.
	rec = e.do("PATCH", "/v1/webhooks/"+id, owner, map[string]any{"active": false})
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["active"] != false || m["pausedReason"] != "manual" || m["pausedAt"] == nil {
		t.Fatalf("pause: %v", m)
	}
	rec = e.do("PATCH", "/v1/webhooks/"+id, owner, map[string]any{"active": true, "events": []string{"*"}})
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["active"] != true || m["pausedReason"] != nil || m["events"].([]any)[0] != "*" {
		t.Fatalf("resume: %v", m)
	}

	// Rotation shows a new secret once.
	rec = e.do("POST", "/v1/webhooks/"+id+"/rotate-secret", owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if s2, _ := obj(t, rec)["secret"].(string); s2 == "" || s2 == secret {
		t.Fatalf("rotate: %s", rec.Body.String())
	}

	for _, tc := range []struct {
		name  string
		body  any
		field string
	}{
		{"missing url", map[string]any{"events": []string{"*"}}, "url"},
		{"missing events", map[string]any{"url": "https://x.example"}, "events"},
		{"empty events", map[string]any{"url": "https://x.example", "events": []string{}}, "events"},
		{"bad event", map[string]any{"url": "https://x.example", "events": []string{"Vendor Created"}}, "events[0]"},
		{"ping not subscribable", map[string]any{"url": "https://x.example", "events": []string{"ping"}}, "events[0]"},
		{"ftp url", map[string]any{"url": "ftp://x.example", "events": []string{"*"}}, "url"},
		{"relative url", map[string]any{"url": "/hook", "events": []string{"*"}}, "url"},
		{"credentials", map[string]any{"url": "https://u:p@x.example", "events": []string{"*"}}, "url"},
		{"metadata address", map[string]any{"url": "http://169.254.169.254/latest", "events": []string{"*"}}, "url"},
		{"ipv6 link-local", map[string]any{"url": "http://[fe80::1]/", "events": []string{"*"}}, "url"},
		{"wrong type", map[string]any{"url": "https://x.example", "events": "*"}, "events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantField(t, e.do("POST", "/v1/webhooks", owner, tc.body), tc.field)
		})
	}
	wantField(t, e.do("PATCH", "/v1/webhooks/"+id, owner, map[string]any{"url": ""}), "url")
	wantError(t, e.do("GET", "/v1/webhooks/whk_01JABCDEFGHJKMNPQRSTVWXYZ0", owner, nil), http.StatusNotFound, "not_found")

	rec = e.do("DELETE", "/v1/webhooks/"+id, owner, nil)
	wantStatus(t, rec, http.StatusNoContent)
	wantError(t, e.do("GET", "/v1/webhooks/"+id, owner, nil), http.StatusNotFound, "not_found")
}

// rawDB opens the test database directly, as an operator with sqlite3
// or psql could.
func rawDB(t *testing.T, e *testEnv) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite", "file:"+e.location+"?_pragma=busy_timeout(5000)"
	if storagetest.Postgres() {
		driver, dsn = "compliance-postgres", e.location
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// inDatabase reports whether s occurs anywhere in the stored database:
// the SQLite file and its WAL, or on PostgreSQL any row of any table (as
// text, bytea in hex).
func inDatabase(t *testing.T, e *testEnv, s string) bool {
	t.Helper()
	if !storagetest.Postgres() {
		raw, err := os.ReadFile(e.location)
		if err != nil {
			t.Fatal(err)
		}
		wal, _ := os.ReadFile(e.location + "-wal")
		return strings.Contains(string(raw)+string(wal), s)
	}
	db := rawDB(t, e)
	rows, err := db.Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		var n int
		q := `SELECT count(*) FROM "` + table + `" AS r WHERE strpos(r::text, ?) > 0 OR strpos(r::text, encode(convert_to(?, 'UTF8'), 'hex')) > 0`
		if err := db.QueryRow(q, s, s).Scan(&n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if n > 0 {
			return true
		}
	}
	return false
}

// dropTrigger is the statement dropping a trigger of a table, as an
// operator tampering with the database would.
func dropTrigger(name, table string) string {
	if storagetest.Postgres() {
		return "DROP TRIGGER " + name + " ON " + table
	}
	return "DROP TRIGGER " + name
}

func TestWebhookDeliverySignedRetriedRedelivered(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	owner := e.key(org, app.RoleOwner)
	rc := newReceiver(t, func(n int) int {
		if n == 0 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	e.do("POST", "/v1/vendors", owner, map[string]any{"name": "Before the subscription"})
	hook, secret := e.createWebhook(owner, rc.srv.URL+"/hook", "vendor.*")
	d := e.deliverer()

	rec := e.do("POST", "/v1/vendors", owner, map[string]any{"name": "Globex"})
	wantStatus(t, rec, http.StatusCreated)
	vendorID := obj(t, rec)["id"].(string)
	e.do("POST", "/v1/people", owner, map[string]any{"name": "P", "email": "p@example.com"}) // not subscribed

	if n := e.runDeliveries(d); n != 1 {
		t.Fatalf("first run sent %d requests, want 1", n)
	}
	rec = e.do("GET", "/v1/webhooks/"+hook+"/deliveries", owner, nil)
	wantStatus(t, rec, http.StatusOK)
	list := obj(t, rec)["data"].([]any)
	if len(list) != 1 {
		t.Fatalf("deliveries: %s", rec.Body.String())
	}
	dl := list[0].(map[string]any)
	if dl["status"] != "pending" || dl["attemptCount"] != float64(1) || dl["lastStatusCode"] != float64(500) {
		t.Fatalf("after a 500: %v", dl)
	}
	at := dl["attempts"].([]any)[0].(map[string]any)
	if at["statusCode"] != float64(500) || at["responseSnippet"] != `{"received":true}` || at["error"] == "" {
		t.Fatalf("attempt: %v", at)
	}
	next, _ := time.Parse(time.RFC3339, dl["nextAttemptAt"].(string))
	if wait := next.Sub(e.clock.Now()); wait < 5*time.Second || wait > 30*time.Second {
		t.Fatalf("first retry in %v, want 5-30 s", wait)
	}
	if n := e.runDeliveries(d); n != 0 {
		t.Fatalf("retried before it was due (%d)", n)
	}
	e.clock.Advance(30 * time.Second)
	if n := e.runDeliveries(d); n != 1 {
		t.Fatalf("retry sent %d, want 1", n)
	}
	got := rc.requests()
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	for _, r := range got {
		if r.hdr.Get("X-Service-Signature") != sign(secret, r.body) {
			t.Fatalf("bad signature %q", r.hdr.Get("X-Service-Signature"))
		}
		if r.hdr.Get("X-Service-Event") != "vendor.created" || r.hdr.Get("X-Service-Delivery") != dl["id"] {
			t.Fatalf("headers: %v", r.hdr)
		}
	}
	if string(got[0].body) != string(got[1].body) {
		t.Fatal("a retry must send the same bytes")
	}
	var env struct {
		ID        string         `json:"id"`
		Event     string         `json:"event"`
		Timestamp time.Time      `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
	if err := json.Unmarshal(got[0].body, &env); err != nil {
		t.Fatal(err)
	}
	if !app.HasPrefix(env.ID, "evt") || env.Event != "vendor.created" || env.Timestamp.IsZero() || env.Data["id"] != vendorID || env.Data["name"] != "Globex" {
		t.Fatalf("envelope: %s", got[0].body)
	}

	rec = e.do("GET", "/v1/webhooks/"+hook+"/deliveries/"+dl["id"].(string), owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["status"] != "succeeded" || len(m["attempts"].([]any)) != 2 || m["nextAttemptAt"] != nil {
		t.Fatalf("after success: %v", m)
	}

	// Redeliver: a new delivery with the same body, sent once more.
	rec = e.do("POST", "/v1/webhooks/"+hook+"/deliveries/"+dl["id"].(string)+"/redeliver", owner, nil)
	wantStatus(t, rec, http.StatusAccepted)
	re := obj(t, rec)
	if re["redeliveryOf"] != dl["id"] || re["status"] != "pending" || re["id"] == dl["id"] {
		t.Fatalf("redeliver: %v", re)
	}
	if n := e.runDeliveries(d); n != 1 {
		t.Fatalf("redelivery sent %d", n)
	}
	got = rc.requests()
	if len(got) != 3 || string(got[2].body) != string(got[0].body) || got[2].hdr.Get("X-Service-Delivery") != re["id"] {
		t.Fatalf("redelivered request: %d %s", len(got), got[len(got)-1].body)
	}
	rec = e.do("GET", "/v1/webhooks/"+hook+"/deliveries?status=succeeded", owner, nil)
	if m := obj(t, rec); m["meta"].(map[string]any)["total"] != float64(2) {
		t.Fatalf("succeeded deliveries: %s", rec.Body.String())
	}
	wantField(t, e.do("GET", "/v1/webhooks/"+hook+"/deliveries?status=done", owner, nil), "status")

	// Ping reaches even a paused endpoint.
	e.do("PATCH", "/v1/webhooks/"+hook, owner, map[string]any{"active": false})
	rec = e.do("POST", "/v1/webhooks/"+hook+"/ping", owner, nil)
	wantStatus(t, rec, http.StatusAccepted)
	e.do("PATCH", "/v1/vendors/"+vendorID, owner, map[string]any{"name": "Globex 2"}) // paused: not delivered
	if n := e.runDeliveries(d); n != 1 {
		t.Fatalf("ping run sent %d", n)
	}
	got = rc.requests()
	if last := got[len(got)-1]; last.hdr.Get("X-Service-Event") != "ping" || last.hdr.Get("X-Service-Signature") != sign(secret, last.body) {
		t.Fatalf("ping: %v %s", last.hdr, last.body)
	}

	// After rotation, deliveries are signed with the new secret.
	rec = e.do("POST", "/v1/webhooks/"+hook+"/rotate-secret", owner, nil)
	secret2 := obj(t, rec)["secret"].(string)
	e.do("PATCH", "/v1/webhooks/"+hook, owner, map[string]any{"active": true})
	e.do("POST", "/v1/vendors/"+vendorID+"/archive", owner, nil)
	if n := e.runDeliveries(d); n != 1 {
		t.Fatalf("after resume sent %d", n)
	}
	got = rc.requests()
	if last := got[len(got)-1]; last.hdr.Get("X-Service-Event") != "vendor.archived" || last.hdr.Get("X-Service-Signature") != sign(secret2, last.body) {
		t.Fatalf("after rotation: %v", last.hdr)
	}
}

func TestWebhookDeadLetterAndAutoPause(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	owner := e.key(org, app.RoleOwner)
	down := newReceiver(t, func(int) int { return http.StatusServiceUnavailable })
	alerts := newReceiver(t, nil)
	hook, _ := e.createWebhook(owner, down.srv.URL, "vendor.created")
	e.createWebhook(owner, alerts.srv.URL, "webhook.paused")
	d := e.deliverer()
	e.do("POST", "/v1/vendors", owner, map[string]any{"name": "Globex"})

	start := e.clock.Now()
	var prev time.Duration
	for i := 0; e.clock.Now().Sub(start) <= 25*time.Hour && i < 200; i++ {
		e.runDeliveries(d)
		rec := e.do("GET", "/v1/webhooks/"+hook+"/deliveries", owner, nil)
		dl := obj(t, rec)["data"].([]any)[0].(map[string]any)
		if dl["status"] == "failed" {
			break
		}
		next, _ := time.Parse(time.RFC3339, dl["nextAttemptAt"].(string))
		wait := next.Sub(e.clock.Now())
		if wait < prev && wait < time.Hour && next.Sub(start) < 24*time.Hour {
			t.Fatalf("backoff shrank from %v to %v", prev, wait)
		}
		prev = wait
		e.clock.Advance(wait)
	}
	rec := e.do("GET", "/v1/webhooks/"+hook+"/deliveries", owner, nil)
	dl := obj(t, rec)["data"].([]any)[0].(map[string]any)
	if dl["status"] != "failed" {
		t.Fatalf("not dead-lettered after 24 h: %v", dl)
	}
	attempts := int(dl["attemptCount"].(float64))
	if attempts < 10 || attempts > 40 {
		t.Fatalf("%d attempts in 24 h", attempts)
	}
	if got := len(down.requests()); got != attempts {
		t.Fatalf("receiver saw %d requests, log says %d", got, attempts)
	}
	first, _ := time.Parse(time.RFC3339, dl["createdAt"].(string))
	last, _ := time.Parse(time.RFC3339, dl["lastAttemptAt"].(string))
	if span := last.Sub(first); span < 24*time.Hour || span > 24*time.Hour+time.Minute {
		t.Fatalf("retried for %v, want 24 h", span)
	}

	rec = e.do("GET", "/v1/webhooks/"+hook, owner, nil)
	if m := obj(t, rec); m["active"] != false || m["pausedReason"] != "failing" || m["failingSince"] == nil {
		t.Fatalf("not auto-paused: %v", m)
	}
	e.runDeliveries(d)
	var paused bool
	for _, r := range alerts.requests() {
		var env app.Envelope
		_ = json.Unmarshal(r.body, &env)
		paused = paused || (env.Event == "webhook.paused" && strings.Contains(string(env.Data), hook))
	}
	if !paused {
		t.Fatal("no webhook.paused event reached the admins' endpoint")
	}
	rec = e.do("GET", "/v1/audit-log?resourceId="+hook+"&action=paused", owner, nil)
	if m := obj(t, rec); m["meta"].(map[string]any)["total"] != float64(1) {
		t.Fatalf("pause not audited: %s", rec.Body.String())
	}
	// A paused endpoint receives nothing new.
	e.do("POST", "/v1/vendors", owner, map[string]any{"name": "Initech"})
	before := len(down.requests())
	e.clock.Advance(time.Hour)
	e.runDeliveries(d)
	if len(down.requests()) != before {
		t.Fatal("a paused endpoint received a delivery")
	}
}

func TestWebhookNetworkPolicy(t *testing.T) {
	t.Parallel()
	ok := newReceiver(t, nil)
	ctx := context.Background()
	send := func(p *app.NetworkPolicy, url string) app.OutboundResponse {
		return webhook.NewClient(p).Send(ctx, app.OutboundRequest{URL: url, Body: []byte(`{}`)})
	}
	def := app.DefaultNetworkPolicy()
	// Loopback (and private networks) are allowed by default.
	if r := send(def, ok.srv.URL); r.Err != nil || r.StatusCode != 200 {
		t.Fatalf("loopback refused: %+v", r)
	}
	// Metadata and link-local addresses are refused before any packet is sent.
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fe80::1%25lo]:80/", "http://100.100.100.200/",
		"http://[::ffff:169.254.169.254]/", "http://0.0.0.0:1/"} {
		r := send(def, u)
		if r.Err == nil || !strings.Contains(r.Err.Error(), "may not reach") {
			t.Fatalf("%s: %+v", u, r)
		}
	}
	// The check applies to the resolved address: a name resolving to a
	// denied network is refused at dial time (DNS rebinding gains nothing).
	noLoop, err := app.NewNetworkPolicy(nil, []string{"127.0.0.0/8", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	port := ok.srv.URL[strings.LastIndex(ok.srv.URL, ":"):]
	if r := send(noLoop, "http://localhost"+port); r.Err == nil || !strings.Contains(r.Err.Error(), "may not reach") {
		t.Fatalf("localhost with loopback denied: %+v", r)
	}
	// An allowed network overrides a denied one.
	exact, err := app.NewNetworkPolicy([]string{"127.0.0.1/32"}, []string{"0.0.0.0/0", "::/0"})
	if err != nil {
		t.Fatal(err)
	}
	if r := send(exact, ok.srv.URL); r.Err != nil || r.StatusCode != 200 {
		t.Fatalf("allowed host refused: %+v", r)
	}
	if exact.Allowed(mustAddr(t, "10.0.0.1")) || !exact.Allowed(mustAddr(t, "127.0.0.1")) {
		t.Fatal("allow list semantics")
	}
	meta, _ := app.NewNetworkPolicy([]string{"169.254.169.254"}, nil)
	if !meta.Allowed(mustAddr(t, "169.254.169.254")) || meta.Allowed(mustAddr(t, "169.254.1.1")) {
		t.Fatal("allowing one metadata address")
	}
	if _, err := app.NewNetworkPolicy([]string{"not-a-network"}, nil); err == nil {
		t.Fatal("a bad CIDR was accepted")
	}
	// Redirects are not followed (they could point anywhere).
	redir := httptest.NewServer(http.RedirectHandler("http://169.254.169.254/", http.StatusFound))
	t.Cleanup(redir.Close)
	if r := send(def, redir.URL); r.Err != nil || r.StatusCode != http.StatusFound {
		t.Fatalf("redirect: %+v", r)
	}
}

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestEventsRoutesAccess(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	orgA, orgB := e.org("A", "professional"), e.org("B", "professional")
	ownerA, ownerB := e.key(orgA, app.RoleOwner), e.key(orgB, app.RoleOwner)
	auditorA, employeeA := e.key(orgA, app.RoleAuditor), e.key(orgA, app.RoleEmployee)
	adminA := e.key(orgA, app.RoleAdmin)
	rc := newReceiver(t, nil)
	hook, _ := e.createWebhook(ownerA, rc.srv.URL, "*")
	e.do("POST", "/v1/webhooks/"+hook+"/ping", ownerA, nil)
	rec := e.do("GET", "/v1/webhooks/"+hook+"/deliveries", ownerA, nil)
	dlv := obj(t, rec)["data"].([]any)[0].(map[string]any)["id"].(string)

	routes := []struct {
		method, path string
		body         any
		write        bool
	}{
		{"GET", "/v1/webhooks/" + hook, nil, false},
		{"PATCH", "/v1/webhooks/" + hook, map[string]any{"description": "x"}, true},
		{"DELETE", "/v1/webhooks/" + hook, nil, true},
		{"POST", "/v1/webhooks/" + hook + "/ping", nil, true},
		{"POST", "/v1/webhooks/" + hook + "/rotate-secret", nil, true},
		{"GET", "/v1/webhooks/" + hook + "/deliveries", nil, false},
		{"GET", "/v1/webhooks/" + hook + "/deliveries/" + dlv, nil, false},
		{"POST", "/v1/webhooks/" + hook + "/deliveries/" + dlv + "/redeliver", nil, true},
	}
	for _, r := range routes {
		// Another organization's webhook is not found, never forbidden.
		wantError(t, e.do(r.method, r.path, ownerB, r.body), http.StatusNotFound, "not_found")
		// Auditor keys are read-only; webhooks are owner/admin business.
		wantError(t, e.do(r.method, r.path, auditorA, r.body), http.StatusForbidden, "forbidden")
		wantError(t, e.do(r.method, r.path, employeeA, r.body), http.StatusForbidden, "forbidden")
		wantError(t, e.do(r.method, r.path, "", r.body), http.StatusUnauthorized, "unauthorized")
	}
	wantError(t, e.do("POST", "/v1/webhooks", auditorA, map[string]any{"url": rc.srv.URL, "events": []string{"*"}}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/webhooks", auditorA, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/scheduler/jobs", auditorA, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/audit-log", employeeA, nil), http.StatusForbidden, "forbidden")
	wantStatus(t, e.do("GET", "/v1/audit-log", auditorA, nil), http.StatusOK)
	wantStatus(t, e.do("GET", "/v1/scheduler/jobs", adminA, nil), http.StatusOK)
	// A delivery id of another webhook of the same organization is not found either.
	other, _ := e.createWebhook(ownerA, rc.srv.URL, "*")
	wantError(t, e.do("GET", "/v1/webhooks/"+other+"/deliveries/"+dlv, ownerA, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/webhooks/"+other+"/deliveries/"+dlv+"/redeliver", ownerA, nil), http.StatusNotFound, "not_found")
	// B's list is empty; A's webhooks never show up there.
	rec = e.do("GET", "/v1/webhooks", ownerB, nil)
	if m := obj(t, rec); m["meta"].(map[string]any)["total"] != float64(0) {
		t.Fatalf("B sees A's webhooks: %s", rec.Body.String())
	}
	// Admin manages webhooks.
	wantStatus(t, e.do("PATCH", "/v1/webhooks/"+hook, adminA, map[string]any{"description": "by admin"}), http.StatusOK)
	wantStatus(t, e.do("DELETE", "/v1/webhooks/"+hook, adminA, nil), http.StatusNoContent)
}

func TestAuditLogAPI(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	orgA, orgB := e.org("A", "professional"), e.org("B", "professional")
	ownerA, ownerB := e.key(orgA, app.RoleOwner), e.key(orgB, app.RoleOwner)
	auditorA := e.key(orgA, app.RoleAuditor)
	rec := e.do("POST", "/v1/vendors", ownerA, map[string]any{"name": "Globex", "criticality": "standard"}, "X-Request-Id", "req-create-1")
	vid := obj(t, rec)["id"].(string)
	e.clock.Advance(48 * time.Hour)
	e.do("PATCH", "/v1/vendors/"+vid, ownerA, map[string]any{"criticality": "critical"})
	e.do("POST", "/v1/vendors", ownerB, map[string]any{"name": "B's vendor"})

	rec = e.do("GET", "/v1/audit-log?resourceType=vendor&resourceId="+vid, auditorA, nil)
	wantStatus(t, rec, http.StatusOK)
	m := obj(t, rec)
	data := m["data"].([]any)
	if len(data) != 2 || m["meta"].(map[string]any)["total"] != float64(2) {
		t.Fatalf("vendor history: %s", rec.Body.String())
	}
	upd := data[0].(map[string]any) // newest first
	ch := upd["changes"].(map[string]any)["criticality"].(map[string]any)
	if upd["action"] != "updated" || ch["old"] != "standard" || ch["new"] != "critical" || upd["actorType"] != "api_key" || upd["hash"] == "" {
		t.Fatalf("update record: %v", upd)
	}
	if cr := data[1].(map[string]any); cr["requestId"] != "req-create-1" || cr["action"] != "created" {
		t.Fatalf("create record: %v", cr)
	}
	actor := upd["actorId"].(string)
	for _, tc := range []struct {
		q    string
		want int
	}{
		{"action=updated", 1},
		{"actorId=" + actor + "&resourceType=vendor", 2},
		{"resourceType=vendor&from=2026-01-16", 1},
		{"resourceType=vendor&to=2026-01-15", 1},
		{"resourceType=vendor&from=2026-01-15T00:00:00Z&to=2026-01-17T10:00:00Z", 2},
		{"resourceType=vendor&perPage=1&page=2", 2},
	} {
		rec := e.do("GET", "/v1/audit-log?"+tc.q, ownerA, nil)
		wantStatus(t, rec, http.StatusOK)
		if got := obj(t, rec)["meta"].(map[string]any)["total"]; got != float64(tc.want) {
			t.Errorf("%s: total %v, want %d", tc.q, got, tc.want)
		}
	}
	rec = e.do("GET", "/v1/audit-log?resourceType=vendor&perPage=1&page=2", ownerA, nil)
	if m := obj(t, rec); len(m["data"].([]any)) != 1 || m["meta"].(map[string]any)["totalPages"] != float64(2) {
		t.Fatalf("paging: %s", rec.Body.String())
	}
	// B sees only B.
	rec = e.do("GET", "/v1/audit-log?resourceId="+vid, ownerB, nil)
	if m := obj(t, rec); m["meta"].(map[string]any)["total"] != float64(0) {
		t.Fatalf("B sees A's audit records: %s", rec.Body.String())
	}
	wantField(t, e.do("GET", "/v1/audit-log?from=yesterday", ownerA, nil), "from")
	wantField(t, e.do("GET", "/v1/audit-log?from=2026-02-01&to=2026-01-01", ownerA, nil), "to")
	wantField(t, e.do("GET", "/v1/audit-log?perPage=500", ownerA, nil), "perPage")
	// No interface deletes or edits audit records.
	wantError(t, e.do("DELETE", "/v1/audit-log", ownerA, nil), http.StatusMethodNotAllowed, "method_not_allowed")
	if _, err := rawDB(t, e).Exec(`DELETE FROM audit_log`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("delete from audit_log: %v", err)
	}
}

func TestAuditVerifyDetectsTampering(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("A", "professional")
	owner := e.key(org, app.RoleOwner)
	for i := 0; i < 5; i++ {
		e.do("POST", "/v1/vendors", owner, map[string]any{"name": "V" + string(rune('a'+i))})
	}
	ctx := context.Background()
	v, err := e.app.VerifyAuditChain(ctx)
	if err != nil || !v.OK || v.Checked < 7 {
		t.Fatalf("intact chain: %+v %v", v, err)
	}
	db := rawDB(t, e)
	if _, err := db.Exec(`UPDATE audit_log SET action = 'x' WHERE seq = 4`); err == nil {
		t.Fatal("the update trigger did not refuse")
	}
	if _, err := db.Exec(dropTrigger("audit_log_no_update", "audit_log")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE audit_log SET action = 'deleted' WHERE seq = 6`); err != nil {
		t.Fatal(err)
	}
	v, err = e.app.VerifyAuditChain(ctx)
	if err != nil || v.OK || v.FirstBroken == nil || v.FirstBroken.Seq != 6 || !strings.Contains(v.FirstBroken.Reason, "modified") {
		t.Fatalf("modified record not found: %+v %v", v.FirstBroken, err)
	}
	// Re-hashing the modified record breaks the link to its successor.
	if _, err := db.Exec(`UPDATE audit_log SET hash = 'f00d' WHERE seq = 6`); err != nil {
		t.Fatal(err)
	}
	if v, _ = e.app.VerifyAuditChain(ctx); v.OK || v.FirstBroken.Seq != 6 {
		t.Fatalf("%+v", v.FirstBroken)
	}
	e2 := newTestServer(t)
	org2 := e2.org("B", "professional")
	owner2 := e2.key(org2, app.RoleOwner)
	for i := 0; i < 4; i++ {
		e2.do("POST", "/v1/vendors", owner2, map[string]any{"name": "V"})
	}
	db2 := rawDB(t, e2)
	if _, err := db2.Exec(dropTrigger("audit_log_no_delete", "audit_log")); err != nil {
		t.Fatal(err)
	}
	var last int64
	_ = db2.QueryRow(`SELECT max(seq) FROM audit_log`).Scan(&last)
	if _, err := db2.Exec(`DELETE FROM audit_log WHERE seq = ?`, last); err != nil {
		t.Fatal(err)
	}
	if storagetest.Postgres() {
		// PostgreSQL keeps no transactional counter beside the records like
		// SQLite's AUTOINCREMENT counter (seq is the head's seq + 1, an
		// identity sequence is not rolled back with its transaction), so a
		// truncated tail leaves no trace there (docs/scale-out-replicas.md).
		t.Log("PostgreSQL: tail truncation is not detectable (no AUTOINCREMENT counter); only the deletion inside the chain is checked")
	} else if v, _ := e2.app.VerifyAuditChain(ctx); v.OK || !strings.Contains(v.FirstBroken.Reason, "removed from the end") {
		t.Fatalf("tail truncation not found: %+v", v)
	}
	if _, err := db2.Exec(`DELETE FROM audit_log WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	if v, _ := e2.app.VerifyAuditChain(ctx); v.OK || v.FirstBroken.Seq != 3 || !strings.Contains(v.FirstBroken.Reason, "missing") {
		t.Fatalf("deleted record not found: %+v", v.FirstBroken)
	}
}

func TestSchedulerJobsAPI(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("A", "professional")
	owner := e.key(org, app.RoleOwner)
	runs := 0
	s := e.app.NewScheduler(app.Job{Name: "purge_idempotency", Interval: time.Hour, Run: func(ctx context.Context) error {
		runs++
		_, err := e.app.PurgeIdempotency(ctx)
		return err
	}})
	s.RunDue(context.Background())
	s.RunDue(context.Background())
	if runs != 1 {
		t.Fatalf("ran %d times in one slot", runs)
	}
	rec := e.do("GET", "/v1/scheduler/jobs", owner, nil)
	wantStatus(t, rec, http.StatusOK)
	jobs := obj(t, rec)["data"].([]any)
	if len(jobs) != 1 {
		t.Fatalf("jobs: %s", rec.Body.String())
	}
	j := jobs[0].(map[string]any)
	lr := j["lastRun"].(map[string]any)
	if j["name"] != "purge_idempotency" || j["intervalSeconds"] != float64(3600) || lr["status"] != "succeeded" ||
		lr["scheduledFor"] != "2026-01-15T10:00:00Z" || j["nextRunAt"] != "2026-01-15T11:00:00Z" {
		t.Fatalf("job: %v", j)
	}
}

// TestDeliveryDrainsOnShutdown stops the pool while a request is in flight:
// the request completes and its outcome is recorded before Wait returns.
func TestDeliveryDrainsOnShutdown(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	owner := e.key(org, app.RoleOwner)
	inFlight := make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight <- struct{}{}
		time.Sleep(300 * time.Millisecond)
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(slow.Close)
	hook, _ := e.createWebhook(owner, slow.URL, "vendor.created")
	e.do("POST", "/v1/vendors", owner, map[string]any{"name": "Globex"})
	d := e.app.NewDeliverer(webhook.NewClient(e.app.NetworkPolicy()), app.DeliveryOptions{PollInterval: 5 * time.Millisecond})
	ctx, stop := context.WithCancel(context.Background())
	d.Start(ctx)
	select {
	case <-inFlight:
	case <-time.After(10 * time.Second):
		t.Fatal("no request sent")
	}
	stop()
	d.Wait()
	rec := e.do("GET", "/v1/webhooks/"+hook+"/deliveries", owner, nil)
	dl := obj(t, rec)["data"].([]any)[0].(map[string]any)
	if dl["status"] != "succeeded" || dl["lastStatusCode"] != float64(202) {
		t.Fatalf("in-flight delivery after shutdown: %v", dl)
	}
}

// TestPausedSubscriptionHoldsRetries pauses a subscription with a retry
// pending: the delivery is held (not sent) until the subscription resumes.
func TestPausedSubscriptionHoldsRetries(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	owner := e.key(org, app.RoleOwner)
	rc := newReceiver(t, func(n int) int {
		if n == 0 {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	hook, _ := e.createWebhook(owner, rc.srv.URL, "vendor.created")
	d := e.deliverer()
	e.do("POST", "/v1/vendors", owner, map[string]any{"name": "Globex"})
	e.runDeliveries(d)
	status := func() string {
		rec := e.do("GET", "/v1/webhooks/"+hook+"/deliveries", owner, nil)
		return obj(t, rec)["data"].([]any)[0].(map[string]any)["status"].(string)
	}
	if s := status(); s != "pending" {
		t.Fatalf("after a failure: %s", s)
	}
	wantStatus(t, e.do("PATCH", "/v1/webhooks/"+hook, owner, map[string]any{"active": false}), http.StatusOK)
	if s := status(); s != "held" {
		t.Fatalf("after pause: %s", s)
	}
	e.clock.Advance(time.Hour)
	if n := e.runDeliveries(d); n != 0 {
		t.Fatalf("a held delivery was sent (%d)", n)
	}
	wantStatus(t, e.do("PATCH", "/v1/webhooks/"+hook, owner, map[string]any{"active": true}), http.StatusOK)
	if s := status(); s != "pending" {
		t.Fatalf("after resume: %s", s)
	}
	if n := e.runDeliveries(d); n != 1 || status() != "succeeded" {
		t.Fatalf("after resume sent %d, status %s", n, status())
	}
}
