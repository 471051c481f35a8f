package web

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// Vendor and finding creates run their handler ahead of the write
// transaction under an Idempotency-Key (app.IdempotentAhead). The
// idempotency contract stays exact: concurrent requests with one key make
// one row and all answer the same bytes, a replay is byte for byte, a
// changed body is a conflict, and the audit chain holds.
func TestWriteAheadCreatesIdempotency(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanEnterprise)
	key := e.key(org, app.RoleAdmin)
	cases := []struct {
		path, event   string
		body, changed map[string]any
	}{
		{"/v1/vendors", "vendor.created", map[string]any{"name": "Globex", "category": "cloud"}, map[string]any{"name": "Globex", "category": "hr"}},
		{"/v1/findings", "finding.created", map[string]any{"title": "TLS 1.0 on host a", "cvss": 5.3}, map[string]any{"title": "TLS 1.0 on host a", "cvss": 6.1}},
	}
	for _, c := range cases {
		const clients = 8
		recs := make([]string, clients)
		codes := make([]int, clients)
		var wg sync.WaitGroup
		for i := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := e.do("POST", c.path, key, c.body, "Idempotency-Key", "same-key"+c.path)
				codes[i], recs[i] = rec.Code, rec.Body.String()
			}()
		}
		wg.Wait()
		for i := range clients {
			if codes[i] != http.StatusCreated || recs[i] != recs[0] {
				t.Fatalf("%s client %d: %d %s, want 201 %s", c.path, i, codes[i], recs[i], recs[0])
			}
		}
		_, meta := listIDs(t, e, c.path, key)
		if meta["total"] != float64(1) {
			t.Errorf("%s: %v rows after %d concurrent requests with one key, want 1", c.path, meta["total"], clients)
		}
		if n := len(e.events(org, c.event)); n != 1 {
			t.Errorf("%s events = %d, want 1", c.event, n)
		}
		again := e.do("POST", c.path, key, c.body, "Idempotency-Key", "same-key"+c.path)
		wantStatus(t, again, http.StatusCreated)
		if again.Body.String() != recs[0] || again.Header().Get("Idempotent-Replayed") != "true" {
			t.Errorf("%s replay: %q replayed=%q, want the first body", c.path, again.Body.String(), again.Header().Get("Idempotent-Replayed"))
		}
		wantError(t, e.do("POST", c.path, key, c.changed, "Idempotency-Key", "same-key"+c.path), http.StatusConflict, "conflict")
	}
	v, err := e.app.VerifyAuditChain(context.Background())
	if err != nil || !v.OK {
		t.Fatalf("audit chain after write-ahead creates: %+v %v", v, err)
	}
}

// A reference checked ahead of the transaction is still a clear 400
// naming the field, stored and replayed, and creates nothing.
func TestWriteAheadCreatesUnknownReference(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanEnterprise)
	other := e.org("Other", app.PlanEnterprise)
	key := e.key(org, app.RoleAdmin)
	stranger := e.person(other, "eve@other.example", app.RoleEmployee)
	known := e.person(org, "ann@acme.example", app.RoleEmployee)
	body := map[string]any{"name": "Initech", "assigneeId": stranger}
	wantField(t, e.do("POST", "/v1/vendors", key, body, "Idempotency-Key", "ref-1"), "assigneeId")
	again := e.do("POST", "/v1/vendors", key, body, "Idempotency-Key", "ref-1")
	wantField(t, again, "assigneeId")
	if again.Header().Get("Idempotent-Replayed") != "true" {
		t.Error("a stored 400 must be replayed")
	}
	if _, meta := listIDs(t, e, "/v1/vendors", key); meta["total"] != float64(0) {
		t.Errorf("vendors = %v, want 0", meta["total"])
	}
	ok := e.do("POST", "/v1/vendors", key, map[string]any{"name": "Initech", "assigneeId": known}, "Idempotency-Key", "ref-2")
	wantStatus(t, ok, http.StatusCreated)
	if obj(t, ok)["assigneeId"] != known {
		t.Errorf("assigneeId = %v, want %s", obj(t, ok)["assigneeId"], known)
	}
	wantField(t, e.do("POST", "/v1/findings", key, map[string]any{"title": "x", "taskId": "task_missing"}, "Idempotency-Key", "ref-3"), "taskId")
}
