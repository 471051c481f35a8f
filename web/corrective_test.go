package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

func TestCorrectiveActionWorkflow(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	e.sessions()
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	owner := e.person(org, "owner@example.com", app.RoleEmployee)
	other := e.person(org, "other@example.com", app.RoleEmployee)
	fid := e.create("/v1/findings", key, map[string]any{"title": "t"})["id"].(string)
	base := "/v1/findings/" + fid + "/corrective-actions"

	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{}, "title"},
		{map[string]any{"title": strings.Repeat("t", 256)}, "title"},
		{map[string]any{"title": "t", "priority": "urgent"}, "priority"},
		{map[string]any{"title": "t", "status": "overdue"}, "status"},
		{map[string]any{"title": "t", "status": "done"}, "status"},
		{map[string]any{"title": "t", "status": "resolved"}, "closureNote"},
		{map[string]any{"title": "t", "dueDate": "soon"}, "dueDate"},
		{map[string]any{"title": "t", "ownerId": "usr_nope"}, "ownerId"},
		{map[string]any{"title": "t", "closureAttachmentIds": []string{"att_nope"}}, "closureAttachmentIds"},
	} {
		wantField(t, e.do("POST", base, key, c.body), c.field)
	}
	wantError(t, e.do("POST", "/v1/findings/fnd_nope/corrective-actions", key, map[string]any{"title": "t"}), http.StatusNotFound, "not_found")

	ca := e.create(base, key, map[string]any{"title": "Enforce MFA", "priority": "high", "ownerId": owner, "dueDate": "2026-02-01"})
	if ca["status"] != "open" || ca["priority"] != "high" || ca["findingId"] != fid || ca["dueDate"] != "2026-02-01" {
		t.Fatalf("created: %v", ca)
	}
	path := base + "/" + ca["id"].(string)
	def := e.create(base, key, map[string]any{"title": "Defaults"})
	if def["priority"] != "medium" || def["status"] != "open" {
		t.Errorf("defaults: %v", def)
	}

	// The owner moves it along; others may not.
	as := session(org, app.RoleEmployee, owner)
	got := obj(t, e.do("PATCH", path, "", map[string]any{"status": "in_progress"}, as...))
	if got["status"] != "in_progress" {
		t.Fatalf("owner update: %v", got)
	}
	wantError(t, e.do("PATCH", path, "", map[string]any{"priority": "low"}, as...), http.StatusForbidden, "forbidden")
	wantError(t, e.do("PATCH", path, "", map[string]any{"status": "open"}, session(org, app.RoleEmployee, other)...), http.StatusNotFound, "not_found")
	wantError(t, e.do("PATCH", path, e.key(org, app.RoleAuditor), map[string]any{"status": "open"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", base, e.key(org, app.RoleAuditor), map[string]any{"title": "x"}), http.StatusForbidden, "forbidden")

	// Resolving asks for closure evidence.
	wantField(t, e.do("PATCH", path, "", map[string]any{"status": "resolved"}, as...), "closureNote")
	wantField(t, e.do("PATCH", path, "", map[string]any{"status": "resolved", "closureNote": "  "}, as...), "closureNote")
	att := uploadFile(t, e, key, "finding", fid, "proof.txt", "mfa enforced")
	otherFinding := e.create("/v1/findings", key, map[string]any{"title": "u"})["id"].(string)
	foreign := uploadFile(t, e, key, "finding", otherFinding, "x.txt", "other")
	wantField(t, e.do("PATCH", path, "", map[string]any{"status": "resolved", "closureNote": "done", "closureAttachmentIds": []string{foreign}}, as...), "closureAttachmentIds")
	res := obj(t, e.do("PATCH", path, "", map[string]any{"status": "resolved", "closureNote": "MFA enforced for all users",
		"closureAttachmentIds": []string{att}}, as...))
	if res["status"] != "resolved" || res["resolvedAt"] == nil || res["closureNote"] != "MFA enforced for all users" {
		t.Fatalf("resolved: %v", res)
	}
	// Reopening clears resolvedAt.
	re := obj(t, e.do("PATCH", path, key, map[string]any{"status": "open"}))
	if re["status"] != "open" || re["resolvedAt"] != nil {
		t.Errorf("reopened: %v", re)
	}

	// Lists: admins see all; the owner sees their own.
	ids, _ := listIDs(t, e, base, key)
	if len(ids) != 2 {
		t.Errorf("actions = %v", ids)
	}
	rec := e.do("GET", base, "", nil, as...)
	wantStatus(t, rec, http.StatusOK)
	if d := obj(t, rec)["data"].([]any); len(d) != 1 {
		t.Errorf("owner sees %d actions, want 1", len(d))
	}
	wantStatus(t, e.do("GET", path, "", nil, as...), http.StatusOK)
	wantError(t, e.do("GET", base+"/"+def["id"].(string), "", nil, as...), http.StatusNotFound, "not_found")
	// The action belongs to its finding's path.
	wantError(t, e.do("GET", "/v1/findings/"+otherFinding+"/corrective-actions/"+ca["id"].(string), key, nil), http.StatusNotFound, "not_found")
}

func TestMarkOverdueCorrectiveActions(t *testing.T) {
	t.Parallel()
	e := newTestServer(t) // the clock starts at 2026-01-15T10:00Z
	org := e.org("Acme", "professional")
	org2 := e.org("Beta", "professional")
	key := e.key(org, app.RoleAdmin)
	key2 := e.key(org2, app.RoleAdmin)
	fid := e.create("/v1/findings", key, map[string]any{"title": "t"})["id"].(string)
	fid2 := e.create("/v1/findings", key2, map[string]any{"title": "t"})["id"].(string)
	base := "/v1/findings/" + fid + "/corrective-actions"
	dueToday := e.create(base, key, map[string]any{"title": "a", "dueDate": "2026-01-15"})["id"].(string)
	dueTomorrow := e.create(base, key, map[string]any{"title": "b", "dueDate": "2026-01-16"})["id"].(string)
	inProgress := e.create(base, key, map[string]any{"title": "c", "dueDate": "2026-01-15", "status": "in_progress"})["id"].(string)
	resolved := e.create(base, key, map[string]any{"title": "d", "dueDate": "2026-01-15", "status": "resolved", "closureNote": "n"})["id"].(string)
	noDue := e.create(base, key, map[string]any{"title": "e"})["id"].(string)
	other := e.create("/v1/findings/"+fid2+"/corrective-actions", key2, map[string]any{"title": "f", "dueDate": "2026-01-15"})["id"].(string)

	status := func(f, id, k string) string {
		return obj(t, e.do("GET", "/v1/findings/"+f+"/corrective-actions/"+id, k, nil))["status"].(string)
	}
	ctx := context.Background()
	if n, err := e.app.MarkOverdueCorrectiveActions(ctx); err != nil || n != 0 {
		t.Fatalf("on the due date: n=%d err=%v; nothing is overdue yet", n, err)
	}
	e.clock.Advance(14 * time.Hour) // 2026-01-16T00:00Z: the 15th has passed
	n, err := e.app.MarkOverdueCorrectiveActions(ctx)
	if err != nil || n != 3 {
		t.Fatalf("n=%d err=%v, want 3", n, err)
	}
	for id, want := range map[string]string{dueToday: "overdue", inProgress: "overdue", dueTomorrow: "open", resolved: "resolved", noDue: "open"} {
		if got := status(fid, id, key); got != want {
			t.Errorf("%s: status %s, want %s", id, got, want)
		}
	}
	if got := status(fid2, other, key2); got != "overdue" {
		t.Errorf("other organization's action: %s, want overdue", got)
	}
	if n, _ := e.app.MarkOverdueCorrectiveActions(ctx); n != 0 {
		t.Errorf("second run changed %d; the scan is idempotent", n)
	}
	if ev := e.events(org, "corrective_action.overdue"); len(ev) != 2 || ev[0]["correctiveActionId"] == nil {
		t.Errorf("overdue events = %v, want 2 in the first organization", ev)
	}
	// An overdue action can still be resolved, and moving the due date reopens it.
	p := base + "/" + dueToday
	if got := obj(t, e.do("PATCH", p, key, map[string]any{"dueDate": "2026-02-01"})); got["status"] != "open" {
		t.Errorf("moved due date: %v", got["status"])
	}
	if got := obj(t, e.do("PATCH", p, key, map[string]any{"dueDate": "2026-01-10"})); got["status"] != "overdue" {
		t.Errorf("due date in the past: %v", got["status"])
	}
	if got := obj(t, e.do("PATCH", p, key, map[string]any{"status": "in_progress"})); got["status"] != "overdue" {
		t.Errorf("in_progress past the due date stays overdue: %v", got["status"])
	}
	if got := obj(t, e.do("PATCH", p, key, map[string]any{"status": "resolved", "closureNote": "late but done"})); got["status"] != "resolved" {
		t.Errorf("resolving an overdue action: %v", got["status"])
	}
}
