package web

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestFindingShapeValidation is the table of both input shapes' rules.
func TestFindingShapeValidation(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	other := e.org("Other", "professional")
	key := e.key(org, app.RoleAdmin)
	task := e.task(org, "")
	otherTask := e.task(other, "")
	ctl := e.control(org)
	otherCtl := e.control(other)
	long := strings.Repeat("x", 5001)

	cases := []struct {
		name  string
		body  map[string]any
		field string // "" means 201
	}{
		{"A with taskId", map[string]any{"content": "weak passwords", "taskId": task}, ""},
		{"A with scope", map[string]any{"content": "weak passwords", "scope": "people"}, ""},
		{"A exactly 5000", map[string]any{"content": strings.Repeat("x", 5000), "scope": "security"}, ""},
		{"A content too long", map[string]any{"content": long, "scope": "security"}, "content"},
		{"A blank content", map[string]any{"content": "  ", "scope": "security"}, "content"},
		{"A neither taskId nor scope", map[string]any{"content": "c"}, "taskId"},
		{"A both taskId and scope", map[string]any{"content": "c", "taskId": task, "scope": "people"}, "scope"},
		{"A unknown scope", map[string]any{"content": "c", "scope": "planet"}, "scope"},
		{"A task of another org", map[string]any{"content": "c", "taskId": otherTask}, "taskId"},
		{"A unknown type", map[string]any{"content": "c", "scope": "people", "type": "sox"}, "type"},
		{"A every type", map[string]any{"content": "c", "scope": "people", "type": "nis2"}, ""},
		{"A bad severity", map[string]any{"content": "c", "scope": "people", "severity": "major"}, "severity"},
		{"A bad findingClass", map[string]any{"content": "c", "scope": "people", "findingClass": "huge"}, "findingClass"},
		{"A findingClass", map[string]any{"content": "c", "scope": "people", "findingClass": "minor_nonconformity"}, ""},
		{"A bad dueDate", map[string]any{"content": "c", "scope": "people", "dueDate": "next week"}, "dueDate"},
		{"A dueDate", map[string]any{"content": "c", "scope": "people", "dueDate": "2026-03-01T00:00:00Z"}, ""},
		{"A unknown template", map[string]any{"content": "c", "scope": "people", "templateId": "ftp_nope"}, "templateId"},
		{"A content wrong type", map[string]any{"content": 5, "scope": "people"}, "content"},
		{"A with linked controls", map[string]any{"content": "c", "scope": "people", "linkedControlIds": []string{ctl}}, ""},
		{"B title only", map[string]any{"title": "Open S3 bucket"}, ""},
		{"B full", map[string]any{"title": "Open S3 bucket", "severity": "high", "source": "scanner", "description": "bucket x", "linkedControlIds": []string{ctl}}, ""},
		{"B blank title", map[string]any{"title": " "}, "title"},
		{"B unknown control", map[string]any{"title": "t", "linkedControlIds": []string{"ctl_nope"}}, "linkedControlIds"},
		{"B control of another org", map[string]any{"title": "t", "linkedControlIds": []string{otherCtl}}, "linkedControlIds"},
		{"B linkedControlIds not an array", map[string]any{"title": "t", "linkedControlIds": "x"}, "linkedControlIds"},
		{"B title plus description too long", map[string]any{"title": "t", "description": strings.Repeat("d", 4999)}, "description"},
		{"B stored content too long names content", map[string]any{"title": "t", "description": strings.Repeat("d", 4999)}, "content"},
		{"B source too long", map[string]any{"title": "t", "source": strings.Repeat("s", 256)}, "source"},
		{"B both taskId and scope", map[string]any{"title": "t", "taskId": task, "scope": "people"}, "scope"},
		{"neither content nor title", map[string]any{"severity": "low"}, "content"},
		{"cvss out of range", map[string]any{"title": "t", "cvss": 10.5}, "cvss"},
		{"score negative", map[string]any{"title": "t", "score": -1}, "score"},
		{"cvss not a number", map[string]any{"title": "t", "cvss": "9.8"}, "cvss"},
		{"cvss and score disagree", map[string]any{"title": "t", "cvss": 9, "score": 3}, "score"},
	}
	for _, c := range cases {
		rec := e.do("POST", "/v1/findings", key, c.body)
		if c.field == "" {
			if rec.Code != http.StatusCreated {
				t.Errorf("%s: status %d, want 201: %s", c.name, rec.Code, rec.Body.String())
			}
			continue
		}
		t.Run(c.name, func(t *testing.T) { wantField(t, rec, c.field) })
	}
}

// TestFindingShapes checks the record both shapes produce.
func TestFindingShapes(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	ctl := e.control(org)
	task := e.task(org, "")

	a := e.create("/v1/findings", key, map[string]any{"content": "MFA missing", "taskId": task, "type": "iso27001",
		"findingClass": "major_nonconformity", "dueDate": "2026-02-01"})
	for k, want := range map[string]any{"content": "MFA missing", "taskId": task, "type": "iso27001", "severity": "medium",
		"status": "open", "findingClass": "major_nonconformity", "dueDate": "2026-02-01T00:00:00Z", "title": nil, "scope": nil} {
		if a[k] != want {
			t.Errorf("shape A %s = %v, want %v", k, a[k], want)
		}
	}
	if !strings.HasPrefix(a["id"].(string), "fnd_") {
		t.Errorf("id %v must start with fnd_", a["id"])
	}

	b := e.create("/v1/findings", key, map[string]any{"title": "Open S3 bucket", "description": "bucket logs is public",
		"source": "scanner", "severity": "high", "linkedControlIds": []string{ctl, ctl}})
	for k, want := range map[string]any{"title": "Open S3 bucket", "description": "bucket logs is public", "source": "scanner",
		"severity": "high", "type": "soc2", "content": "Open S3 bucket\n\nbucket logs is public", "taskId": nil} {
		if b[k] != want {
			t.Errorf("shape B %s = %v, want %v", k, b[k], want)
		}
	}
	if l := b["linkedControlIds"].([]any); len(l) != 1 || l[0] != ctl {
		t.Errorf("linkedControlIds = %v, want [%s] (deduplicated)", l, ctl)
	}
	// Every field of both shapes plus id, status, createdAt, updatedAt.
	for _, k := range []string{"id", "status", "createdAt", "updatedAt", "type", "content", "taskId", "scope", "severity",
		"findingClass", "templateId", "dueDate", "title", "source", "description", "linkedControlIds"} {
		if _, ok := b[k]; !ok {
			t.Errorf("finding record lacks %s", k)
		}
	}
	got := obj(t, e.do("GET", "/v1/findings/"+b["id"].(string), key, nil))
	if got["content"] != b["content"] || got["createdAt"] != b["createdAt"] {
		t.Errorf("GET differs from create: %v", got)
	}
	// The control shows its findings.
	ids, _ := listIDs(t, e, "/v1/findings?controlId="+ctl, key)
	if !sameIDs(ids, b["id"].(string)) {
		t.Errorf("findings of control = %v, want [%s]", ids, b["id"])
	}
}

// TestFindingScoreMapping checks the 0-10 scanner score mapping.
func TestFindingScoreMapping(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	cases := []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"cvss": 10}, "critical"},
		{map[string]any{"cvss": 9}, "critical"},
		{map[string]any{"cvss": 8.9}, "high"},
		{map[string]any{"cvss": 7}, "high"},
		{map[string]any{"score": 6.9}, "medium"},
		{map[string]any{"score": 4}, "medium"},
		{map[string]any{"cvss": 3.9}, "low"},
		{map[string]any{"cvss": 0.1}, "low"},
		{map[string]any{"cvss": 0}, "informational"},
		{map[string]any{"cvss": 9.8, "severity": "low"}, "low"},
		{map[string]any{}, "medium"},
		{map[string]any{"severity": "HIGH"}, "high"},
	}
	for i, c := range cases {
		body := map[string]any{"title": fmt.Sprintf("finding %d", i)}
		for k, v := range c.body {
			body[k] = v
		}
		f := e.create("/v1/findings", key, body)
		if f["severity"] != c.want {
			t.Errorf("%v: severity %v, want %s", c.body, f["severity"], c.want)
		}
	}
	// PATCH with a new score remaps unless severity is given.
	f := e.create("/v1/findings", key, map[string]any{"title": "x", "cvss": 2})
	id := f["id"].(string)
	if got := obj(t, e.do("PATCH", "/v1/findings/"+id, key, map[string]any{"cvss": 9.5})); got["severity"] != "critical" || got["cvss"] != 9.5 {
		t.Errorf("patched cvss 9.5: %v %v", got["severity"], got["cvss"])
	}
	if got := obj(t, e.do("PATCH", "/v1/findings/"+id, key, map[string]any{"cvss": 9.5, "severity": "low"})); got["severity"] != "low" {
		t.Errorf("explicit severity must win, got %v", got["severity"])
	}
}

// TestFindingEvents checks finding.created and finding.severity.changed.
func TestFindingEvents(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	f := e.create("/v1/findings", key, map[string]any{"title": "t", "severity": "low"})
	id := f["id"].(string)
	created := e.events(org, "finding.created")
	if len(created) != 1 {
		t.Fatalf("finding.created events = %d, want 1", len(created))
	}
	for k, v := range f {
		if fmt.Sprint(created[0][k]) != fmt.Sprint(v) {
			t.Errorf("finding.created data %s = %v, want %v (the finding as the API returns it)", k, created[0][k], v)
		}
	}
	wantStatus(t, e.do("PATCH", "/v1/findings/"+id, key, map[string]any{"content": "new text"}), http.StatusOK)
	if n := len(e.events(org, "finding.severity.changed")); n != 0 {
		t.Fatalf("severity.changed without a severity change: %d", n)
	}
	wantStatus(t, e.do("PATCH", "/v1/findings/"+id, key, map[string]any{"severity": "critical"}), http.StatusOK)
	wantStatus(t, e.do("PATCH", "/v1/findings/"+id, key, map[string]any{"severity": "critical"}), http.StatusOK)
	ev := e.events(org, "finding.severity.changed")
	if len(ev) != 1 {
		t.Fatalf("finding.severity.changed events = %d, want 1", len(ev))
	}
	if ev[0]["findingId"] != id || ev[0]["previousSeverity"] != "low" || ev[0]["severity"] != "critical" {
		t.Errorf("severity.changed data = %v", ev[0])
	}
}

// TestFindingIdempotency proves retries with the same Idempotency-Key
// resolve to the same finding and a changed body is a conflict.
func TestFindingIdempotency(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	other := e.org("Other", "professional")
	key := e.key(org, app.RoleAdmin)
	key2 := e.key(org, app.RoleOwner)
	otherKey := e.key(other, app.RoleAdmin)
	body := map[string]any{"title": "CVE-2026-1 on host a", "cvss": 9.8, "source": "scanner"}

	first := e.do("POST", "/v1/findings", key, body, "Idempotency-Key", "scanner:issue:1")
	wantStatus(t, first, http.StatusCreated)
	again := e.do("POST", "/v1/findings", key, body, "Idempotency-Key", "scanner:issue:1")
	wantStatus(t, again, http.StatusCreated)
	if again.Header().Get("Idempotent-Replayed") != "true" {
		t.Error("a replay must carry Idempotent-Replayed: true")
	}
	if first.Header().Get("Idempotent-Replayed") != "" {
		t.Error("the first response is not a replay")
	}
	if again.Body.String() != first.Body.String() {
		t.Errorf("replayed body differs:\n%s\n%s", first.Body.String(), again.Body.String())
	}
	// Keys are per organization, not per credential.
	third := e.do("POST", "/v1/findings", key2, body, "Idempotency-Key", "scanner:issue:1")
	if third.Body.String() != first.Body.String() {
		t.Error("another key of the same organization must replay the same finding")
	}
	_, meta := listIDs(t, e, "/v1/findings", key)
	if meta["total"] != float64(1) {
		t.Errorf("findings after retries = %v, want 1", meta["total"])
	}
	if n := len(e.events(org, "finding.created")); n != 1 {
		t.Errorf("finding.created events = %d, want 1", n)
	}
	changed := map[string]any{"title": "CVE-2026-1 on host a", "cvss": 5.0, "source": "scanner"}
	wantError(t, e.do("POST", "/v1/findings", key, changed, "Idempotency-Key", "scanner:issue:1"), http.StatusConflict, "conflict")
	// Another organization may use the same key independently.
	o := e.do("POST", "/v1/findings", otherKey, body, "Idempotency-Key", "scanner:issue:1")
	wantStatus(t, o, http.StatusCreated)
	if o.Header().Get("Idempotent-Replayed") != "" || obj(t, o)["id"] == obj(t, first)["id"] {
		t.Error("another organization's key must not replay")
	}
	// A failed validation is replayed as the same 400, and creates nothing.
	bad := map[string]any{"content": "c"}
	wantField(t, e.do("POST", "/v1/findings", key, bad, "Idempotency-Key", "bad:1"), "taskId")
	if rec := e.do("POST", "/v1/findings", key, bad, "Idempotency-Key", "bad:1"); rec.Code != http.StatusBadRequest {
		t.Errorf("replayed validation error: %d", rec.Code)
	}
	// After 24 hours the key is forgotten.
	e.clock.Advance(app.IdempotencyTTL + 1)
	late := e.do("POST", "/v1/findings", key, body, "Idempotency-Key", "scanner:issue:1")
	wantStatus(t, late, http.StatusCreated)
	if late.Header().Get("Idempotent-Replayed") != "" {
		t.Error("a key older than 24 hours must not replay")
	}
}

// TestFindingTemplateDefaults checks templateId fills what the body leaves out.
func TestFindingTemplateDefaults(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	tpl := e.create("/v1/finding-template", key, map[string]any{"title": "Missing MFA", "content": "MFA is not enforced.",
		"category": "access", "type": "iso27001", "severity": "high", "findingClass": "minor_nonconformity", "order": 2})
	tid := tpl["id"].(string)
	if !strings.HasPrefix(tid, "ftp_") {
		t.Errorf("template id %s must start with ftp_", tid)
	}
	a := e.create("/v1/findings", key, map[string]any{"templateId": tid, "scope": "people"})
	for k, want := range map[string]any{"content": "MFA is not enforced.", "title": "Missing MFA", "type": "iso27001",
		"severity": "high", "findingClass": "minor_nonconformity", "templateId": tid} {
		if a[k] != want {
			t.Errorf("templated shape A %s = %v, want %v", k, a[k], want)
		}
	}
	b := e.create("/v1/findings", key, map[string]any{"templateId": tid, "title": "MFA off for admins", "severity": "critical"})
	for k, want := range map[string]any{"description": "MFA is not enforced.", "severity": "critical", "type": "iso27001",
		"content": "MFA off for admins\n\nMFA is not enforced."} {
		if b[k] != want {
			t.Errorf("templated shape B %s = %v, want %v", k, b[k], want)
		}
	}
	c := e.create("/v1/findings", key, map[string]any{"templateId": tid, "content": "own text", "taskId": e.task(org, ""), "cvss": 2})
	if c["content"] != "own text" || c["severity"] != "low" {
		t.Errorf("body fields must win over the template: %v %v", c["content"], c["severity"])
	}
}

// TestFindingUpdateAndClose covers PATCH rules and the close operation.
func TestFindingUpdateAndClose(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	ctl := e.control(org)
	f := e.create("/v1/findings", key, map[string]any{"title": "T", "description": "D"})
	id := f["id"].(string)
	path := "/v1/findings/" + id

	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"status": "done"}, "status"},
		{map[string]any{"severity": "minor"}, "severity"},
		{map[string]any{"content": strings.Repeat("x", 5001)}, "content"},
		{map[string]any{"content": ""}, "content"},
		{map[string]any{"linkedControlIds": []string{"ctl_nope"}}, "linkedControlIds"},
		{map[string]any{"revisionNote": strings.Repeat("r", 2001)}, "revisionNote"},
		{map[string]any{"type": "sox"}, "type"},
		{map[string]any{"title": nil}, "title"},
	} {
		wantField(t, e.do("PATCH", path, key, c.body), c.field)
	}
	got := obj(t, e.do("PATCH", path, key, map[string]any{"description": "new D", "linkedControlIds": []string{ctl}, "status": "in_review"}))
	if got["content"] != "T\n\nnew D" || got["status"] != "in_review" || len(got["linkedControlIds"].([]any)) != 1 {
		t.Errorf("patched: %v", got)
	}
	got = obj(t, e.do("PATCH", path, key, map[string]any{"status": "resolved", "revisionNote": "fixed upstream"}))
	if got["status"] != "resolved" || got["revisionNote"] != "fixed upstream" || got["closedAt"] != nil {
		t.Errorf("resolved: %v", got)
	}
	closed := obj(t, e.do("POST", path+"/close", key, nil))
	if closed["status"] != "closed" || closed["closedAt"] == nil {
		t.Errorf("closed: %v", closed)
	}
	again := obj(t, e.do("POST", path+"/close", key, nil))
	if again["closedAt"] != closed["closedAt"] {
		t.Error("closing a closed finding changes nothing")
	}
	reopened := obj(t, e.do("PATCH", path, key, map[string]any{"status": "open"}))
	if reopened["status"] != "open" || reopened["closedAt"] != nil {
		t.Errorf("reopened: %v", reopened)
	}
	wantError(t, e.do("POST", "/v1/findings/fnd_nope/close", key, nil), http.StatusNotFound, "not_found")
}

// TestFindingListFilters checks every filter and their combination.
func TestFindingListFilters(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	task := e.task(org, "")
	ctl := e.control(org)
	f1 := e.create("/v1/findings", key, map[string]any{"content": "a", "taskId": task, "severity": "high", "type": "gdpr"})["id"].(string)
	f2 := e.create("/v1/findings", key, map[string]any{"title": "b", "severity": "high", "linkedControlIds": []string{ctl}})["id"].(string)
	f3 := e.create("/v1/findings", key, map[string]any{"content": "c", "scope": "security", "severity": "low"})["id"].(string)
	wantStatus(t, e.do("POST", "/v1/findings/"+f2+"/close", key, nil), http.StatusOK)

	for q, want := range map[string][]string{
		"":                                   {f1, f2, f3},
		"?severity=high":                     {f1, f2},
		"?status=open":                       {f1, f3},
		"?status=open&severity=high":         {f1},
		"?status=closed":                     {f2},
		"?type=gdpr":                         {f1},
		"?type=soc2&severity=low":            {f3},
		"?taskId=" + task:                    {f1},
		"?controlId=" + ctl:                  {f2},
		"?scope=security":                    {f3},
		"?severity=critical":                 nil,
		"?perPage=2":                         {f1, f2},
		"?perPage=2&page=2":                  {f3},
		"?controlId=" + ctl + "&status=open": nil,
	} {
		ids, _ := listIDs(t, e, "/v1/findings"+q, key)
		if !sameIDs(ids, want...) {
			t.Errorf("GET /v1/findings%s = %v, want %v", q, ids, want)
		}
	}
	for _, q := range []string{"status=done", "severity=major", "type=sox", "scope=x", "perPage=500"} {
		wantError(t, e.do("GET", "/v1/findings?"+q, key, nil), http.StatusBadRequest, "validation_error")
	}
	// Open findings by control, for framework scoring.
	open, err := e.app.OpenFindingsByControl(e.ctx(org))
	if err != nil {
		t.Fatal(err)
	}
	if len(open[ctl]) != 0 {
		t.Errorf("a closed finding is not open: %v", open)
	}
	wantStatus(t, e.do("PATCH", "/v1/findings/"+f2, key, map[string]any{"status": "in_review"}), http.StatusOK)
	open, _ = e.app.OpenFindingsByControl(e.ctx(org))
	if len(open[ctl]) != 1 || open[ctl][0].ID != f2 || open[ctl][0].Severity != "high" {
		t.Errorf("open findings by control = %v", open)
	}
}

// TestFindingPermissions checks who may write findings.
func TestFindingPermissions(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	e.sessions()
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	auditorKey := e.key(org, app.RoleAuditor)
	auditor := e.person(org, "auditor@example.com", app.RoleAuditor)
	employee := e.person(org, "emp@example.com", app.RoleEmployee)
	empKey := e.key(org, app.RoleEmployee)
	body := map[string]any{"title": "t"}

	wantError(t, e.do("POST", "/v1/findings", auditorKey, body), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/findings", empKey, body), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/findings", "", body), http.StatusUnauthorized, "unauthorized")
	f := e.create("/v1/findings", "", body, session(org, app.RoleAuditor, auditor)...)
	if f["createdByType"] != "person" || f["createdById"] != auditor {
		t.Errorf("created by %v %v", f["createdByType"], f["createdById"])
	}
	id := f["id"].(string)
	wantStatus(t, e.do("PATCH", "/v1/findings/"+id, "", map[string]any{"severity": "low"}, session(org, app.RoleAuditor, auditor)...), http.StatusOK)
	wantError(t, e.do("PATCH", "/v1/findings/"+id, auditorKey, map[string]any{"severity": "low"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/findings/"+id+"/close", auditorKey, nil), http.StatusForbidden, "forbidden")
	wantStatus(t, e.do("GET", "/v1/findings/"+id, auditorKey, nil), http.StatusOK)

	// Employees see findings on tasks assigned to them only.
	mine := e.create("/v1/findings", admin, map[string]any{"content": "c", "taskId": e.task(org, employee)})["id"].(string)
	emp := session(org, app.RoleEmployee, employee)
	rec := e.do("GET", "/v1/findings", "", nil, emp...)
	wantStatus(t, rec, http.StatusOK)
	data := obj(t, rec)["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["id"] != mine {
		t.Errorf("employee sees %v, want only %s", data, mine)
	}
	wantStatus(t, e.do("GET", "/v1/findings/"+mine, "", nil, emp...), http.StatusOK)
	wantError(t, e.do("GET", "/v1/findings/"+id, "", nil, emp...), http.StatusNotFound, "not_found")
}
