package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// policyPersonKey creates an API key of a role that acts for a person, as a key a
// person creates for themselves does.
func (e *testEnv) policyPersonKey(orgID, personID string, role app.Role) string {
	e.t.Helper()
	ctx := app.WithPrincipal(context.Background(), &app.Principal{OrgID: orgID, Role: app.RoleOwner, AuthType: app.AuthSystem, UserID: personID})
	k, err := e.app.CreateAPIKey(ctx, app.APIKeyCreate{Name: "personal", Role: string(role)})
	if err != nil {
		e.t.Fatal(err)
	}
	return k.Key
}

// policyControl inserts a control of an organization and returns its id.
func (e *testEnv) policyControl(orgID, code string) string {
	e.t.Helper()
	now := e.clock.Now()
	c := &app.Control{ID: app.NewID(app.PrefixControl), Code: code, Name: "Control " + code, Status: app.ControlNotStarted, CreatedAt: now, UpdatedAt: now}
	if err := e.db.CreateControl(context.Background(), orgID, c); err != nil {
		e.t.Fatal(err)
	}
	return c.ID
}

// policyEvents returns the outbox event types of an organization in order.
func (e *testEnv) policyEvents(orgID string) []string {
	e.t.Helper()
	rows, err := e.raw().Query(`SELECT type FROM events WHERE organization_id = ? ORDER BY seq`, orgID)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func polCount(types []string, want string) int {
	n := 0
	for _, t := range types {
		if t == want {
			n++
		}
	}
	return n
}

// polList decodes a list response and checks the envelope.
func polList(t *testing.T, rec *httptest.ResponseRecorder) ([]map[string]any, map[string]any) {
	t.Helper()
	wantStatus(t, rec, http.StatusOK)
	var body struct {
		Data []map[string]any `json:"data"`
		Meta map[string]any   `json:"meta"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("not a list: %s", rec.Body.String())
	}
	if body.Data == nil || body.Meta == nil {
		t.Fatalf("list without data or meta: %s", rec.Body.String())
	}
	return body.Data, body.Meta
}

func polStr(m map[string]any, k string) string { s, _ := m[k].(string); return s }
func polNum(m map[string]any, k string) int    { f, _ := m[k].(float64); return int(f) }

func (e *testEnv) newPolicy(key string, body map[string]any) map[string]any {
	e.t.Helper()
	rec := e.do("POST", "/v1/policies", key, body)
	wantStatus(e.t, rec, http.StatusCreated)
	return obj(e.t, rec)
}

func TestPolicyPublishVersions(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme Corp", "professional")
	admin := e.key(org, app.RoleAdmin)

	p := e.newPolicy(admin, map[string]any{"name": "Access Control Policy", "content": "{{company_name}} grants access by role.",
		"frequency": "yearly", "reviewDate": "2026-03-01"})
	id := polStr(p, "id")
	if !strings.HasPrefix(id, "pol_") || polStr(p, "status") != "draft" || polNum(p, "version") != 0 || p["hasUnpublishedChanges"] != true ||
		p["currentVersionId"] != nil || p["isRequiredToSign"] != true {
		t.Fatalf("new policy: %v", p)
	}

	// Publish version 1: the built-in company_name is substituted.
	rec := e.do("POST", "/v1/policies/"+id+"/publish", admin, map[string]any{"changelog": "first"})
	wantStatus(t, rec, http.StatusCreated)
	v1 := obj(t, rec)
	if polNum(v1, "version") != 1 || polStr(v1, "content") != "Acme Corp grants access by role." || polStr(v1, "source") != "{{company_name}} grants access by role." ||
		!strings.HasPrefix(polStr(v1, "id"), "plv_") || polStr(v1, "changelog") != "first" || v1["isCurrent"] != true || len(polStr(v1, "contentSha256")) != 64 {
		t.Fatalf("version 1: %v", v1)
	}
	if vars := v1["variables"].(map[string]any); vars["company_name"] != "Acme Corp" {
		t.Fatalf("variables used: %v", vars)
	}
	got := obj(t, e.do("GET", "/v1/policies/"+id, admin, nil))
	if polStr(got, "status") != "published" || polNum(got, "version") != 1 || got["hasUnpublishedChanges"] != false || polStr(got, "currentVersionId") != polStr(v1, "id") {
		t.Fatalf("after publish: %v", got)
	}
	// With a yearly frequency, publishing sets the next review a year out.
	if polStr(got, "reviewDate") != "2027-01-15" {
		t.Fatalf("reviewDate after publish: %v", got["reviewDate"])
	}

	// Editing the draft leaves version 1 alone and marks the policy for review.
	rec = e.do("PATCH", "/v1/policies/"+id, admin, map[string]any{"content": "Changed draft text.", "status": "published", "version": 9})
	wantStatus(t, rec, http.StatusOK)
	got = obj(t, rec)
	if polStr(got, "status") != "needs_review" || got["hasUnpublishedChanges"] != true || polNum(got, "version") != 1 {
		t.Fatalf("after draft edit (server-owned fields must not take effect): %v", got)
	}
	old := obj(t, e.do("GET", "/v1/policies/"+id+"/versions/1", admin, nil))
	if polStr(old, "content") != "Acme Corp grants access by role." || polStr(old, "id") != polStr(v1, "id") {
		t.Fatalf("version 1 changed: %v", old)
	}

	// Each publish increments the number; older versions stay as published.
	e.clock.Advance(time.Hour)
	rec = e.do("POST", "/v1/policies/"+id+"/publish", admin, nil)
	wantStatus(t, rec, http.StatusCreated)
	v2 := obj(t, rec)
	if polNum(v2, "version") != 2 || polStr(v2, "content") != "Changed draft text." {
		t.Fatalf("version 2: %v", v2)
	}
	// Publishing an unchanged draft again is a new version too (a re-issue
	// that people must acknowledge again).
	rec = e.do("POST", "/v1/policies/"+id+"/publish", admin, nil)
	wantStatus(t, rec, http.StatusCreated)
	if polNum(obj(t, rec), "version") != 3 {
		t.Fatal("third publish must be version 3")
	}
	items, meta := polList(t, e.do("GET", "/v1/policies/"+id+"/versions", admin, nil))
	if polNum(meta, "total") != 3 || len(items) != 3 || polNum(items[0], "version") != 3 || polNum(items[2], "version") != 1 ||
		items[0]["isCurrent"] != true || items[2]["isCurrent"] != false {
		t.Fatalf("versions: %v %v", items, meta)
	}
	byID := obj(t, e.do("GET", "/v1/policies/"+id+"/versions/"+polStr(v1, "id"), admin, nil))
	if polStr(byID, "content") != polStr(v1, "content") || byID["isCurrent"] != false {
		t.Fatalf("version by id: %v", byID)
	}
	wantError(t, e.do("GET", "/v1/policies/"+id+"/versions/4", admin, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/policies/"+id+"/versions/plv_nope", admin, nil), http.StatusNotFound, "not_found")

	// A policy with no content cannot be published.
	empty := e.newPolicy(admin, map[string]any{"name": "Empty"})
	wantField(t, e.do("POST", "/v1/policies/"+polStr(empty, "id")+"/publish", admin, nil), "content")
	// An archived policy cannot be published.
	wantStatus(t, e.do("PATCH", "/v1/policies/"+id, admin, map[string]any{"isArchived": true}), http.StatusOK)
	wantError(t, e.do("POST", "/v1/policies/"+id+"/publish", admin, nil), http.StatusConflict, "conflict")

	types := e.policyEvents(org)
	if polCount(types, "policy.created") != 2 || polCount(types, "policy.published") != 3 || polCount(types, "policy.updated") != 2 {
		t.Fatalf("events: %v", types)
	}
}

func TestPolicyVariableSubstitution(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)

	rec := e.do("POST", "/v1/variables", admin, map[string]any{"name": "{{security_officer}}", "value": "Jane Roe", "description": "CISO"})
	wantStatus(t, rec, http.StatusCreated)
	v := obj(t, rec)
	if polStr(v, "name") != "security_officer" || polStr(v, "placeholder") != "{{security_officer}}" || !strings.HasPrefix(polStr(v, "id"), "var_") {
		t.Fatalf("variable: %v", v)
	}
	p := e.newPolicy(admin, map[string]any{"name": "ISMS Policy",
		"content": "Owner: {{ security_officer }} at {{company_name}}. Unknown: {{retention_days}} and {{Bad-Name}}. Version {{policy_version}} of {{policy_name}}."})
	id := polStr(p, "id")

	// Unknown variables: 400 on content naming them; nothing is published.
	rec = e.do("POST", "/v1/policies/"+id+"/publish", admin, nil)
	wantField(t, rec, "content")
	if body := rec.Body.String(); !strings.Contains(body, "{{retention_days}}") || !strings.Contains(body, "{{Bad-Name}}") {
		t.Fatalf("error must name the unknown variables: %s", body)
	}
	if polNum(obj(t, e.do("GET", "/v1/policies/"+id, admin, nil)), "version") != 0 {
		t.Fatal("a refused publish must not create a version")
	}

	// The preview shows the same without publishing.
	pv := obj(t, e.do("GET", "/v1/policies/"+id+"/preview", admin, nil))
	if polNum(pv, "nextVersion") != 1 || len(pv["unresolvedVariables"].([]any)) != 2 || !strings.Contains(polStr(pv, "content"), "Owner: Jane Roe at Acme.") {
		t.Fatalf("preview: %v", pv)
	}

	// allowUnresolved keeps the placeholders and reports them.
	rec = e.do("POST", "/v1/policies/"+id+"/publish", admin, map[string]any{"allowUnresolved": true})
	wantStatus(t, rec, http.StatusCreated)
	v1 := obj(t, rec)
	want := "Owner: Jane Roe at Acme. Unknown: {{retention_days}} and {{Bad-Name}}. Version 1 of ISMS Policy."
	if polStr(v1, "content") != want {
		t.Fatalf("content %q, want %q", polStr(v1, "content"), want)
	}
	if u := v1["unresolvedVariables"].([]any); len(u) != 2 || u[0] != "Bad-Name" || u[1] != "retention_days" {
		t.Fatalf("unresolved: %v", u)
	}

	// Defining the variable and overriding a built-in take effect on the
	// next publish; version 1 keeps the values it was published with.
	wantStatus(t, e.do("POST", "/v1/variables", admin, map[string]any{"name": "retention_days", "value": "90"}), http.StatusCreated)
	wantStatus(t, e.do("POST", "/v1/variables", admin, map[string]any{"name": "company_name", "value": "Acme GmbH"}), http.StatusCreated)
	wantStatus(t, e.do("PATCH", "/v1/variables/"+polStr(v, "id"), admin, map[string]any{"value": "John Doe"}), http.StatusOK)
	wantStatus(t, e.do("PATCH", "/v1/policies/"+id, admin, map[string]any{"content": "{{security_officer}}, {{company_name}}, {{retention_days}} days."}), http.StatusOK)
	rec = e.do("POST", "/v1/policies/"+id+"/publish", admin, nil)
	wantStatus(t, rec, http.StatusCreated)
	if c := polStr(obj(t, rec), "content"); c != "John Doe, Acme GmbH, 90 days." {
		t.Fatalf("version 2 content %q", c)
	}
	if c := polStr(obj(t, e.do("GET", "/v1/policies/"+id+"/versions/1", admin, nil)), "content"); c != want {
		t.Fatalf("version 1 changed to %q", c)
	}
	// Deleting a variable never touches published text.
	wantStatus(t, e.do("DELETE", "/v1/variables/"+polStr(v, "id"), admin, nil), http.StatusNoContent)
	wantError(t, e.do("GET", "/v1/variables/"+polStr(v, "id"), admin, nil), http.StatusNotFound, "not_found")
	if c := polStr(obj(t, e.do("GET", "/v1/policies/"+id+"/versions/2", admin, nil)), "content"); c != "John Doe, Acme GmbH, 90 days." {
		t.Fatalf("version 2 changed to %q", c)
	}
}

func TestVariables(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	for _, name := range []string{"dpo", "b_name", "a_name"} {
		wantStatus(t, e.do("POST", "/v1/variables", admin, map[string]any{"name": name, "value": "v"}), http.StatusCreated)
	}
	items, meta := polList(t, e.do("GET", "/v1/variables?perPage=2", admin, nil))
	if polNum(meta, "total") != 3 || polNum(meta, "totalPages") != 2 || len(items) != 2 || polStr(items[0], "name") != "a_name" {
		t.Fatalf("variables page: %v %v", items, meta)
	}
	items, _ = polList(t, e.do("GET", "/v1/variables?q=dp", admin, nil))
	if len(items) != 1 || polStr(items[0], "name") != "dpo" {
		t.Fatalf("search: %v", items)
	}
	// Unique per organization: 409, on create and on rename.
	wantError(t, e.do("POST", "/v1/variables", admin, map[string]any{"name": "{{dpo}}", "value": "x"}), http.StatusConflict, "conflict")
	other := obj(t, e.do("POST", "/v1/variables", admin, map[string]any{"name": "other", "value": "x"}))
	wantError(t, e.do("PATCH", "/v1/variables/"+polStr(other, "id"), admin, map[string]any{"name": "dpo"}), http.StatusConflict, "conflict")
	// The same name in another organization is fine.
	org2 := e.org("Other", "professional")
	wantStatus(t, e.do("POST", "/v1/variables", e.key(org2, app.RoleOwner), map[string]any{"name": "dpo", "value": "x"}), http.StatusCreated)

	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"value": "x"}, "name"},
		{map[string]any{"name": "ok_name"}, "value"},
		{map[string]any{"name": "Company Name", "value": "x"}, "name"},
		{map[string]any{"name": "9lives", "value": "x"}, "name"},
		{map[string]any{"name": "company-name", "value": "x"}, "name"},
		{map[string]any{"name": strings.Repeat("a", 65), "value": "x"}, "name"},
		{map[string]any{"name": "big", "value": strings.Repeat("x", 10_001)}, "value"},
		{map[string]any{"name": 5, "value": "x"}, "name"},
	} {
		wantField(t, e.do("POST", "/v1/variables", admin, tc.body), tc.field)
	}
	wantField(t, e.do("PATCH", "/v1/variables/"+polStr(other, "id"), admin, map[string]any{"name": "Bad Name"}), "name")

	// Employees and contractors do not read organization settings.
	emp := e.policyPersonKey(org, e.person(org, "emp@acme.test", app.RoleEmployee), app.RoleEmployee)
	wantError(t, e.do("GET", "/v1/variables", emp, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/variables/"+polStr(other, "id"), emp, nil), http.StatusForbidden, "forbidden")
}

func TestPolicyAcknowledgement(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	alice := e.person(org, "alice@acme.test", app.RoleEmployee)
	bob := e.person(org, "bob@acme.test", app.RoleContractor)
	e.person(org, "audrey@acme.test", app.RoleAuditor) // auditors are not expected to acknowledge
	aliceKey := e.policyPersonKey(org, alice, app.RoleEmployee)
	bobKey := e.policyPersonKey(org, bob, app.RoleContractor)

	id := polStr(e.newPolicy(admin, map[string]any{"name": "Acceptable Use", "content": "Be nice."}), "id")
	// Nothing published yet: 409 for those who see it (admins) and 404 for employees.
	wantError(t, e.do("POST", "/v1/policies/"+id+"/acknowledge", e.policyPersonKey(org, e.person(org, "ad@acme.test", app.RoleAdmin), app.RoleAdmin), nil), http.StatusConflict, "conflict")
	wantError(t, e.do("POST", "/v1/policies/"+id+"/acknowledge", aliceKey, nil), http.StatusNotFound, "not_found")

	wantStatus(t, e.do("POST", "/v1/policies/"+id+"/publish", admin, nil), http.StatusCreated)

	// A key that acts for no person cannot acknowledge; auditors may not at all.
	wantError(t, e.do("POST", "/v1/policies/"+id+"/acknowledge", e.key(org, app.RoleEmployee), nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/policies/"+id+"/acknowledge", admin, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/policies/"+id+"/acknowledge", e.key(org, app.RoleAuditor), nil), http.StatusForbidden, "forbidden")

	// Acknowledging names the version; a stale one is a conflict.
	wantError(t, e.do("POST", "/v1/policies/"+id+"/acknowledge", aliceKey, map[string]any{"version": 2}), http.StatusConflict, "conflict")
	rec := e.do("POST", "/v1/policies/"+id+"/acknowledge", aliceKey, map[string]any{"version": 1})
	wantStatus(t, rec, http.StatusCreated)
	ack := obj(t, rec)
	if polStr(ack, "personId") != alice || polNum(ack, "version") != 1 || !strings.HasPrefix(polStr(ack, "id"), "pak_") {
		t.Fatalf("ack: %v", ack)
	}
	// Once per person per version: a repeat returns the same record.
	rec = e.do("POST", "/v1/policies/"+id+"/acknowledge", aliceKey, nil)
	wantStatus(t, rec, http.StatusOK)
	if polStr(obj(t, rec), "id") != polStr(ack, "id") {
		t.Fatal("a repeated acknowledgement must return the first one")
	}

	rec = e.do("GET", "/v1/policies/"+id+"/acknowledgements", admin, nil)
	people, meta := polList(t, rec)
	sum := obj(t, rec)["summary"].(map[string]any)
	if polNum(meta, "total") != 3 || polNum(sum, "required") != 3 || polNum(sum, "acknowledged") != 1 || polNum(sum, "pending") != 2 || polNum(sum, "version") != 1 {
		t.Fatalf("status: %v %v", people, sum)
	}
	for _, p := range people {
		if (polStr(p, "personId") == alice) != (p["acknowledged"] == true) {
			t.Fatalf("row: %v", p)
		}
		if polStr(p, "role") == "auditor" {
			t.Fatalf("auditors are not listed: %v", p)
		}
	}
	pending, _ := polList(t, e.do("GET", "/v1/policies/"+id+"/acknowledgements?status=pending", admin, nil))
	if len(pending) != 2 {
		t.Fatalf("pending: %v", pending)
	}
	// The caller's own view of what is left to acknowledge.
	mine, _ := polList(t, e.do("GET", "/v1/policies?acknowledged=false", bobKey, nil))
	if len(mine) != 1 || polStr(mine[0], "id") != id {
		t.Fatalf("bob's pending policies: %v", mine)
	}
	mine, _ = polList(t, e.do("GET", "/v1/policies?acknowledged=false", aliceKey, nil))
	if len(mine) != 0 {
		t.Fatalf("alice has nothing pending: %v", mine)
	}
	wantField(t, e.do("GET", "/v1/policies?acknowledged=false", admin, nil), "acknowledged")

	// A new version needs a new acknowledgement.
	wantStatus(t, e.do("POST", "/v1/policies/"+id+"/publish", admin, nil), http.StatusCreated)
	rec = e.do("GET", "/v1/policies/"+id+"/acknowledgements?status=pending&role=employee", admin, nil)
	pending, _ = polList(t, rec)
	if len(pending) != 1 || polStr(pending[0], "personId") != alice || polNum(pending[0], "lastAcknowledgedVersion") != 1 || pending[0]["acknowledged"] != false {
		t.Fatalf("after republish: %v", pending)
	}
	if s := obj(t, rec)["summary"].(map[string]any); polNum(s, "acknowledged") != 0 || polNum(s, "version") != 2 {
		t.Fatalf("summary after republish: %v", s)
	}
	wantStatus(t, e.do("POST", "/v1/policies/"+id+"/acknowledge", aliceKey, map[string]any{"version": 2}), http.StatusCreated)
	wantStatus(t, e.do("POST", "/v1/policies/"+id+"/acknowledge", bobKey, nil), http.StatusCreated)

	// Employees see only their own row.
	rows, _ := polList(t, e.do("GET", "/v1/policies/"+id+"/acknowledgements", bobKey, nil))
	if len(rows) != 1 || polStr(rows[0], "personId") != bob || rows[0]["acknowledged"] != true {
		t.Fatalf("bob's view: %v", rows)
	}
	wantField(t, e.do("GET", "/v1/policies/"+id+"/acknowledgements?status=maybe", admin, nil), "status")
	wantField(t, e.do("GET", "/v1/policies/"+id+"/acknowledgements?role=king", admin, nil), "role")

	// A deactivated person cannot acknowledge.
	wantStatus(t, e.do("POST", "/v1/policies/"+id+"/publish", admin, nil), http.StatusCreated)
	wantStatus(t, e.do("PATCH", "/v1/people/"+bob, admin, map[string]any{"isActive": false}), http.StatusOK)
	wantError(t, e.do("POST", "/v1/policies/"+id+"/acknowledge", bobKey, nil), http.StatusForbidden, "forbidden")

	if n := polCount(e.policyEvents(org), "policy.acknowledged"); n != 3 {
		t.Fatalf("policy.acknowledged events: %d", n)
	}
}

func TestPolicyEmployeeVisibility(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	alice := e.person(org, "alice@acme.test", app.RoleEmployee)
	aliceKey := e.policyPersonKey(org, alice, app.RoleEmployee)
	anon := e.key(org, app.RoleContractor) // a contractor key acting for no person

	draft := polStr(e.newPolicy(admin, map[string]any{"name": "Secret draft", "content": "draft"}), "id")
	assigned := polStr(e.newPolicy(admin, map[string]any{"name": "Alice's draft", "content": "mine", "assigneeId": alice}), "id")
	pub := polStr(e.newPolicy(admin, map[string]any{"name": "Published", "description": "v1 description", "content": "v1 text"}), "id")
	wantStatus(t, e.do("POST", "/v1/policies/"+pub+"/publish", admin, nil), http.StatusCreated)
	wantStatus(t, e.do("PATCH", "/v1/policies/"+pub, admin, map[string]any{"name": "Published (renamed draft)", "content": "unpublished edit"}), http.StatusOK)
	archived := polStr(e.newPolicy(admin, map[string]any{"name": "Old", "content": "old"}), "id")
	wantStatus(t, e.do("POST", "/v1/policies/"+archived+"/publish", admin, nil), http.StatusCreated)
	wantStatus(t, e.do("PATCH", "/v1/policies/"+archived, admin, map[string]any{"isArchived": true}), http.StatusOK)

	items, meta := polList(t, e.do("GET", "/v1/policies?sort=name", aliceKey, nil))
	if polNum(meta, "total") != 2 || len(items) != 2 {
		t.Fatalf("alice sees: %v", items)
	}
	byID := map[string]map[string]any{}
	for _, it := range items {
		byID[polStr(it, "id")] = it
	}
	if p := byID[pub]; p == nil || polStr(p, "content") != "v1 text" || polStr(p, "name") != "Published" || polStr(p, "status") != "published" || p["hasUnpublishedChanges"] != false {
		t.Fatalf("published policy must show its published text to employees: %v", p)
	}
	if p := byID[assigned]; p == nil || polStr(p, "content") != "mine" {
		t.Fatalf("assigned draft: %v", p)
	}
	got := obj(t, e.do("GET", "/v1/policies/"+pub, aliceKey, nil))
	if polStr(got, "content") != "v1 text" || polStr(got, "description") != "v1 description" {
		t.Fatalf("employee get: %v", got)
	}
	wantError(t, e.do("GET", "/v1/policies/"+draft, aliceKey, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/policies/"+archived, aliceKey, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/policies/"+draft+"/versions", aliceKey, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/policies/"+draft+"/preview", aliceKey, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/policies/"+pub+"/preview", aliceKey, nil), http.StatusNotFound, "not_found")
	wantStatus(t, e.do("GET", "/v1/policies/"+assigned+"/preview", aliceKey, nil), http.StatusOK)
	versions, _ := polList(t, e.do("GET", "/v1/policies/"+pub+"/versions", aliceKey, nil))
	if len(versions) != 1 {
		t.Fatalf("versions for employee: %v", versions)
	}
	// Without a person a contractor key sees published policies only.
	items, _ = polList(t, e.do("GET", "/v1/policies", anon, nil))
	if len(items) != 1 || polStr(items[0], "id") != pub {
		t.Fatalf("anonymous contractor sees: %v", items)
	}
	// excludeContent drops the field for employees too.
	items, _ = polList(t, e.do("GET", "/v1/policies?excludeContent=true", aliceKey, nil))
	for _, it := range items {
		if _, ok := it["content"]; ok {
			t.Fatalf("content present with excludeContent: %v", it)
		}
	}
	// Status filters follow what the employee sees.
	for q, want := range map[string]string{"status=published": pub, "status=needs_review": "", "status=draft": assigned} {
		items, _ := polList(t, e.do("GET", "/v1/policies?"+q, aliceKey, nil))
		var got []string
		for _, it := range items {
			got = append(got, polStr(it, "id"))
		}
		if strings.Join(got, ",") != want {
			t.Errorf("alice %s: %v, want %s", q, got, want)
		}
	}
	// Of a published policy's controls, an employee sees those they own.
	mine := &app.Control{ID: app.NewID(app.PrefixControl), Code: "A.6.3", Name: "Awareness", Status: app.ControlNotStarted,
		OwnerID: &alice, CreatedAt: e.clock.Now(), UpdatedAt: e.clock.Now()}
	if err := e.db.CreateControl(context.Background(), org, mine); err != nil {
		t.Fatal(err)
	}
	notMine := e.policyControl(org, "A.5.1")
	wantStatus(t, e.do("POST", "/v1/policies/"+pub+"/controls", admin, map[string]any{"controlIds": []string{mine.ID, notMine}}), http.StatusOK)
	ctls, _ := polList(t, e.do("GET", "/v1/policies/"+pub+"/controls", aliceKey, nil))
	if len(ctls) != 1 || polStr(ctls[0], "id") != mine.ID {
		t.Fatalf("employee sees controls: %v", ctls)
	}
	if ctls, _ := polList(t, e.do("GET", "/v1/policies/"+pub+"/controls", anon, nil)); len(ctls) != 0 {
		t.Fatalf("a key without a person sees controls: %v", ctls)
	}
	if ctls, _ := polList(t, e.do("GET", "/v1/policies/"+pub+"/controls", admin, nil)); len(ctls) != 2 {
		t.Fatalf("admin sees controls: %v", ctls)
	}
	// Employees may not write.
	wantError(t, e.do("POST", "/v1/policies", aliceKey, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("PATCH", "/v1/policies/"+assigned, aliceKey, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/policies/"+assigned+"/publish", aliceKey, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/context", aliceKey, nil), http.StatusForbidden, "forbidden")
}

func TestPolicyListFilters(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	owner := e.person(org, "owner@acme.test", app.RoleAdmin)
	ctl := e.policyControl(org, "A.5.1")
	var ids []string
	for i := 0; i < 5; i++ {
		body := map[string]any{"name": fmt.Sprintf("Policy %d", i), "content": "text", "department": "it", "frequency": "yearly"}
		if i == 0 {
			body["assigneeId"] = owner
			body["controlIds"] = []string{ctl}
			body["department"] = "hr"
			body["frequency"] = "monthly"
		}
		ids = append(ids, polStr(e.newPolicy(admin, body), "id"))
	}
	wantStatus(t, e.do("POST", "/v1/policies/"+ids[1]+"/publish", admin, nil), http.StatusCreated)
	wantStatus(t, e.do("POST", "/v1/policies/"+ids[2]+"/publish", admin, nil), http.StatusCreated)
	wantStatus(t, e.do("PATCH", "/v1/policies/"+ids[2], admin, map[string]any{"content": "edited"}), http.StatusOK)
	wantStatus(t, e.do("PATCH", "/v1/policies/"+ids[4], admin, map[string]any{"isArchived": true}), http.StatusOK)

	items, meta := polList(t, e.do("GET", "/v1/policies?perPage=2&page=2", admin, nil))
	if polNum(meta, "total") != 4 || polNum(meta, "totalPages") != 2 || polNum(meta, "page") != 2 || len(items) != 2 {
		t.Fatalf("page 2: %v %v", items, meta)
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"status=draft", []string{ids[0], ids[3]}},
		{"status=published", []string{ids[1]}},
		{"status=needs_review", []string{ids[2]}},
		{"assigneeId=" + owner, []string{ids[0]}},
		{"department=hr", []string{ids[0]}},
		{"frequency=monthly", []string{ids[0]}},
		{"controlId=" + ctl, []string{ids[0]}},
		{"q=policy 3", []string{ids[3]}},
		{"archived=true", []string{ids[4]}},
		{"includeArchived=true&status=draft", []string{ids[0], ids[3], ids[4]}},
		{"sort=-name&perPage=1", []string{ids[3]}},
	} {
		items, _ := polList(t, e.do("GET", "/v1/policies?"+strings.ReplaceAll(tc.query, " ", "%20"), admin, nil))
		var got []string
		for _, it := range items {
			got = append(got, polStr(it, "id"))
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: got %v, want %v", tc.query, got, tc.want)
		}
	}
	// A review date in the past puts a published policy up for review.
	wantStatus(t, e.do("PATCH", "/v1/policies/"+ids[1], admin, map[string]any{"reviewDate": "2026-01-01"}), http.StatusOK)
	if s := polStr(obj(t, e.do("GET", "/v1/policies/"+ids[1], admin, nil)), "status"); s != "needs_review" {
		t.Fatalf("overdue review: status %s", s)
	}
	for q, field := range map[string]string{"status=old": "status", "frequency=daily": "frequency", "sort=owner": "sort",
		"perPage=201": "perPage", "page=0": "page", "archived=maybe": "archived", "excludeContent=1": "excludeContent"} {
		wantField(t, e.do("GET", "/v1/policies?"+q, admin, nil), field)
	}
}

func TestPolicyValidation(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	other := e.org("Other", "professional")
	stranger := e.person(other, "x@other.test", app.RoleAdmin)
	foreignCtl := e.policyControl(other, "X")
	id := polStr(e.newPolicy(admin, map[string]any{"name": "P", "content": "c"}), "id")
	for _, tc := range []struct {
		method, path string
		body         any
		field        string
	}{
		{"POST", "/v1/policies", map[string]any{"content": "no name"}, "name"},
		{"POST", "/v1/policies", map[string]any{"name": "  "}, "name"},
		{"POST", "/v1/policies", map[string]any{"name": strings.Repeat("n", 256)}, "name"},
		{"POST", "/v1/policies", map[string]any{"name": "x", "frequency": "daily"}, "frequency"},
		{"POST", "/v1/policies", map[string]any{"name": "x", "reviewDate": "next year"}, "reviewDate"},
		{"POST", "/v1/policies", map[string]any{"name": "x", "assigneeId": stranger}, "assigneeId"},
		{"POST", "/v1/policies", map[string]any{"name": "x", "approverId": "usr_nobody"}, "approverId"},
		{"POST", "/v1/policies", map[string]any{"name": "x", "controlIds": []string{foreignCtl}}, "controlIds"},
		{"POST", "/v1/policies", map[string]any{"name": "x", "department": strings.Repeat("d", 65)}, "department"},
		{"POST", "/v1/policies", map[string]any{"name": "x", "isRequiredToSign": "yes"}, "isRequiredToSign"},
		{"POST", "/v1/policies", map[string]any{"name": "x", "isArchived": true}, "isArchived"},
		{"POST", "/v1/policies", `{"name": "x"`, "body"},
		{"PATCH", "/v1/policies/" + id, map[string]any{"name": ""}, "name"},
		{"PATCH", "/v1/policies/" + id, map[string]any{"controlIds": []string{foreignCtl}}, "controlIds"},
		{"PATCH", "/v1/policies/" + id, map[string]any{"content": 7}, "content"},
		{"POST", "/v1/policies/" + id + "/publish", map[string]any{"changelog": strings.Repeat("c", 5001)}, "changelog"},
		{"POST", "/v1/policies/" + id + "/publish", map[string]any{"allowUnresolved": "yes"}, "allowUnresolved"},
		{"POST", "/v1/policies/" + id + "/controls", map[string]any{}, "controlIds"},
		{"POST", "/v1/policies/" + id + "/controls", map[string]any{"controlIds": []string{"ctl_nope"}}, "controlIds"},
		{"POST", "/v1/policies/" + id + "/acknowledge", map[string]any{"version": "one"}, "version"},
		{"PATCH", "/v1/context", map[string]any{"issues": []map[string]any{{"category": "global", "description": "x"}}}, "issues[0].category"},
		{"PATCH", "/v1/context", map[string]any{"issues": []map[string]any{{"category": "internal"}}}, "issues[0].description"},
		{"PATCH", "/v1/context", map[string]any{"interestedParties": []map[string]any{{"requirements": "x"}}}, "interestedParties[0].name"},
		{"PATCH", "/v1/context", map[string]any{"entries": []map[string]any{{"question": "q"}}}, "entries[0].answer"},
		{"PATCH", "/v1/context", map[string]any{"scope": "everything"}, "scope"},
		{"PATCH", "/v1/context", map[string]any{"description": strings.Repeat("d", 20_001)}, "description"},
	} {
		rec := e.do(tc.method, tc.path, admin, tc.body)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s %s %v: status %d: %s", tc.method, tc.path, tc.body, rec.Code, rec.Body.String())
			continue
		}
		wantField(t, rec, tc.field)
	}
	// Without a JSON content type the body is refused, naming the header.
	rec := e.do("POST", "/v1/policies/"+id+"/publish", admin, nil, "Content-Type", "text/plain")
	wantStatus(t, rec, http.StatusCreated) // an empty body needs no content type
	req := httptest.NewRequest("POST", "/v1/policies/"+id+"/publish", strings.NewReader(`{"changelog":"x"}`))
	req.Header.Set("X-API-Key", admin)
	req.Header.Set("Content-Type", "text/plain")
	rec = httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	wantField(t, rec, "Content-Type")
}

func TestPolicyControls(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	c1, c2 := e.policyControl(org, "A.5.1"), e.policyControl(org, "A.5.2")
	id := polStr(e.newPolicy(admin, map[string]any{"name": "P"}), "id")

	rec := e.do("POST", "/v1/policies/"+id+"/controls", admin, map[string]any{"controlIds": []string{c2, c1, c1}})
	wantStatus(t, rec, http.StatusOK)
	if ids := obj(t, rec)["controlIds"].([]any); len(ids) != 2 {
		t.Fatalf("controlIds: %v", ids)
	}
	// Linking again changes nothing.
	wantStatus(t, e.do("POST", "/v1/policies/"+id+"/controls", admin, map[string]any{"controlIds": []string{c1}}), http.StatusOK)
	items, meta := polList(t, e.do("GET", "/v1/policies/"+id+"/controls", admin, nil))
	if polNum(meta, "total") != 2 || polStr(items[0], "id") != c1 || polStr(items[0], "code") != "A.5.1" {
		t.Fatalf("controls: %v", items)
	}
	rec = e.do("POST", "/v1/policies/"+id+"/controls", admin, map[string]any{"controlIds": []string{c1, "ctl_missing"}})
	wantField(t, rec, "controlIds")
	if !strings.Contains(rec.Body.String(), "ctl_missing") {
		t.Fatalf("the error must name the unknown control: %s", rec.Body.String())
	}
	wantStatus(t, e.do("DELETE", "/v1/policies/"+id+"/controls/"+c2, admin, nil), http.StatusNoContent)
	wantError(t, e.do("DELETE", "/v1/policies/"+id+"/controls/"+c2, admin, nil), http.StatusNotFound, "not_found")
	got := obj(t, e.do("GET", "/v1/policies/"+id, admin, nil))
	if ids := got["controlIds"].([]any); len(ids) != 1 || ids[0] != c1 {
		t.Fatalf("after unlink: %v", ids)
	}
	if n := polCount(e.policyEvents(org), "policy.updated"); n != 2 {
		t.Fatalf("link and unlink must each emit policy.updated once: %d", n)
	}
	// PATCH replaces the whole set.
	rec = e.do("PATCH", "/v1/policies/"+id, admin, map[string]any{"controlIds": []string{c2}})
	wantStatus(t, rec, http.StatusOK)
	if ids := obj(t, rec)["controlIds"].([]any); len(ids) != 1 || ids[0] != c2 {
		t.Fatalf("after replace: %v", ids)
	}
	rec = e.do("PATCH", "/v1/policies/"+id, admin, map[string]any{"controlIds": []string{}})
	if ids := obj(t, rec)["controlIds"].([]any); len(ids) != 0 {
		t.Fatalf("after clearing: %v", ids)
	}
	// Sending a policy back as read (controlIds unchanged) is fine.
	got = obj(t, e.do("GET", "/v1/policies/"+id, admin, nil))
	wantStatus(t, e.do("PATCH", "/v1/policies/"+id, admin, got), http.StatusOK)
}

func TestContextSnapshots(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	auditor := e.key(org, app.RoleAuditor)

	c := obj(t, e.do("GET", "/v1/context", admin, nil))
	if polNum(c, "version") != 0 || c["id"] != nil || len(c["issues"].([]any)) != 0 {
		t.Fatalf("empty context: %v", c)
	}
	items, _ := polList(t, e.do("GET", "/v1/context/snapshots", admin, nil))
	if len(items) != 0 {
		t.Fatal("no snapshots before the first update")
	}

	rec := e.do("PATCH", "/v1/context", admin, map[string]any{
		"description": "Acme builds payroll software.",
		"scope":       map[string]any{"statement": "The payroll SaaS and its operations", "locations": []string{"Berlin", " "}},
		"issues":      []map[string]any{{"category": "external", "description": "NIS2 applies from 2024", "effect": "more reporting"}},
		"interestedParties": []map[string]any{{"name": "Customers", "category": "customer", "requirements": "availability",
			"addressedThroughIsms": true}},
		"climateChangeRelevant": false,
		"changeNote":            "initial",
	})
	wantStatus(t, rec, http.StatusOK)
	v1 := obj(t, rec)
	if polNum(v1, "version") != 1 || !strings.HasPrefix(polStr(v1, "id"), "ctx_") || v1["climateChangeRelevant"] != false ||
		len(v1["scope"].(map[string]any)["locations"].([]any)) != 1 || polStr(v1, "changeNote") != "initial" {
		t.Fatalf("v1: %v", v1)
	}
	e.clock.Advance(time.Minute)
	rec = e.do("PATCH", "/v1/context", admin, map[string]any{"issues": []map[string]any{}, "baseVersion": 1})
	wantStatus(t, rec, http.StatusOK)
	v2 := obj(t, rec)
	if polNum(v2, "version") != 2 || polStr(v2, "description") != "Acme builds payroll software." || len(v2["issues"].([]any)) != 0 {
		t.Fatalf("v2 keeps untouched fields: %v", v2)
	}
	// A patch based on an old version conflicts; a no-op saves nothing.
	wantError(t, e.do("PATCH", "/v1/context", admin, map[string]any{"description": "x", "baseVersion": 1}), http.StatusConflict, "conflict")
	rec = e.do("PATCH", "/v1/context", admin, map[string]any{"description": "Acme builds payroll software."})
	if polNum(obj(t, rec), "version") != 2 {
		t.Fatalf("a no-op patch must not save a version: %s", rec.Body.String())
	}

	items, meta := polList(t, e.do("GET", "/v1/context/snapshots", auditor, nil))
	if polNum(meta, "total") != 2 || polNum(items[0], "version") != 2 || items[0]["isCurrent"] != true || items[1]["isCurrent"] != false {
		t.Fatalf("snapshots: %v", items)
	}
	old := obj(t, e.do("GET", "/v1/context/snapshots/"+polStr(v1, "id"), auditor, nil))
	if len(old["issues"].([]any)) != 1 || old["isCurrent"] != false {
		t.Fatalf("previous version must be kept: %v", old)
	}
	if byNum := obj(t, e.do("GET", "/v1/context/snapshots/1", auditor, nil)); polStr(byNum, "id") != polStr(v1, "id") {
		t.Fatalf("snapshot by number: %v", byNum)
	}
	cur := obj(t, e.do("GET", "/v1/context", auditor, nil))
	if polNum(cur, "version") != 2 || cur["isCurrent"] != true {
		t.Fatalf("current: %v", cur)
	}
	wantError(t, e.do("GET", "/v1/context/snapshots/3", admin, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("PATCH", "/v1/context", auditor, map[string]any{"description": "x"}), http.StatusForbidden, "forbidden")
}

// TestPolicyAuditorKeyReadOnly proves an auditor key reads every route of
// this group and every write is 403.
func TestPolicyAuditorKeyReadOnly(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	auditor := e.key(org, app.RoleAuditor)
	ctl := e.policyControl(org, "A.1")
	id := polStr(e.newPolicy(admin, map[string]any{"name": "P", "content": "text", "controlIds": []string{ctl}}), "id")
	wantStatus(t, e.do("POST", "/v1/policies/"+id+"/publish", admin, nil), http.StatusCreated)
	vid := polStr(obj(t, e.do("POST", "/v1/variables", admin, map[string]any{"name": "x", "value": "y"})), "id")
	wantStatus(t, e.do("PATCH", "/v1/context", admin, map[string]any{"description": "d"}), http.StatusOK)

	for _, path := range []string{"/v1/policies", "/v1/policies/" + id, "/v1/policies/" + id + "/preview", "/v1/policies/" + id + "/versions",
		"/v1/policies/" + id + "/versions/1", "/v1/policies/" + id + "/acknowledgements", "/v1/policies/" + id + "/controls",
		"/v1/variables", "/v1/variables/" + vid, "/v1/context", "/v1/context/snapshots", "/v1/context/snapshots/1"} {
		wantStatus(t, e.do("GET", path, auditor, nil), http.StatusOK)
	}
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/policies", map[string]any{"name": "x"}},
		{"PATCH", "/v1/policies/" + id, map[string]any{"name": "x"}},
		{"POST", "/v1/policies/" + id + "/publish", nil},
		{"POST", "/v1/policies/" + id + "/acknowledge", nil},
		{"POST", "/v1/policies/" + id + "/controls", map[string]any{"controlIds": []string{ctl}}},
		{"DELETE", "/v1/policies/" + id + "/controls/" + ctl, nil},
		{"POST", "/v1/variables", map[string]any{"name": "z", "value": "z"}},
		{"PATCH", "/v1/variables/" + vid, map[string]any{"value": "z"}},
		{"DELETE", "/v1/variables/" + vid, nil},
		{"PATCH", "/v1/context", map[string]any{"description": "x"}},
	} {
		rec := e.do(w.method, w.path, auditor, w.body)
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s %s: %d, want 403", w.method, w.path, rec.Code)
			continue
		}
		wantError(t, rec, http.StatusForbidden, "forbidden")
	}
}

// TestPolicyCrossOrganization proves every route with an id answers 404 for
// another organization's resources, for reads and writes alike.
func TestPolicyCrossOrganization(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	ctl := e.policyControl(org, "A.1")
	id := polStr(e.newPolicy(admin, map[string]any{"name": "P", "content": "text", "controlIds": []string{ctl}}), "id")
	vid := polStr(obj(t, e.do("POST", "/v1/policies/"+id+"/publish", admin, nil)), "id")
	varID := polStr(obj(t, e.do("POST", "/v1/variables", admin, map[string]any{"name": "x", "value": "y"})), "id")
	ctxID := polStr(obj(t, e.do("PATCH", "/v1/context", admin, map[string]any{"description": "d"})), "id")

	other := e.org("Other", "professional")
	otherOwner := e.person(other, "o@other.test", app.RoleOwner)
	intruder := e.policyPersonKey(other, otherOwner, app.RoleOwner)
	otherEmp := e.policyPersonKey(other, e.person(other, "e@other.test", app.RoleEmployee), app.RoleEmployee)
	otherCtl := e.policyControl(other, "A.1")
	for _, r := range []struct {
		method, path string
		body         any
		key          string
	}{
		{"GET", "/v1/policies/" + id, nil, intruder},
		{"PATCH", "/v1/policies/" + id, map[string]any{"name": "x"}, intruder},
		{"GET", "/v1/policies/" + id + "/preview", nil, intruder},
		{"POST", "/v1/policies/" + id + "/publish", nil, intruder},
		{"GET", "/v1/policies/" + id + "/versions", nil, intruder},
		{"GET", "/v1/policies/" + id + "/versions/1", nil, intruder},
		{"GET", "/v1/policies/" + id + "/versions/" + vid, nil, intruder},
		{"POST", "/v1/policies/" + id + "/acknowledge", nil, intruder},
		{"POST", "/v1/policies/" + id + "/acknowledge", nil, otherEmp},
		{"GET", "/v1/policies/" + id + "/acknowledgements", nil, intruder},
		{"GET", "/v1/policies/" + id + "/controls", nil, intruder},
		{"POST", "/v1/policies/" + id + "/controls", map[string]any{"controlIds": []string{otherCtl}}, intruder},
		{"DELETE", "/v1/policies/" + id + "/controls/" + ctl, nil, intruder},
		{"GET", "/v1/variables/" + varID, nil, intruder},
		{"PATCH", "/v1/variables/" + varID, map[string]any{"value": "z"}, intruder},
		{"DELETE", "/v1/variables/" + varID, nil, intruder},
		{"GET", "/v1/context/snapshots/" + ctxID, nil, intruder},
		// Acme's own key asking for the other organization.
		{"GET", "/v1/policies/" + id, nil, admin},
	} {
		hdr := []string{}
		if r.key == admin {
			hdr = []string{"X-Organization-Id", other}
		}
		rec := e.do(r.method, r.path, r.key, r.body, hdr...)
		if rec.Code != http.StatusNotFound {
			t.Errorf("%s %s: %d, want 404: %s", r.method, r.path, rec.Code, rec.Body.String())
			continue
		}
		wantError(t, rec, http.StatusNotFound, "not_found")
	}
	// Lists and the context are the caller's own: nothing of Acme shows.
	items, _ := polList(t, e.do("GET", "/v1/policies", intruder, nil))
	if len(items) != 0 {
		t.Fatalf("other organization's policies listed: %v", items)
	}
	items, _ = polList(t, e.do("GET", "/v1/variables", intruder, nil))
	if len(items) != 0 {
		t.Fatalf("other organization's variables listed: %v", items)
	}
	if c := obj(t, e.do("GET", "/v1/context", intruder, nil)); polNum(c, "version") != 0 {
		t.Fatalf("other organization's context: %v", c)
	}
	// A control of the other organization cannot be linked by its id either.
	wantField(t, e.do("POST", "/v1/policies/"+id+"/controls", admin, map[string]any{"controlIds": []string{otherCtl}}), "controlIds")
	// Acme's data is unchanged.
	if p := obj(t, e.do("GET", "/v1/policies/"+id, admin, nil)); polStr(p, "name") != "P" || polNum(p, "version") != 1 {
		t.Fatalf("policy changed: %v", p)
	}
}

func TestPolicyIdempotentReplay(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	body := map[string]any{"name": "Backup Policy", "content": "Back up daily."}

	first := e.do("POST", "/v1/policies", admin, body, "Idempotency-Key", "create-1")
	wantStatus(t, first, http.StatusCreated)
	again := e.do("POST", "/v1/policies", admin, body, "Idempotency-Key", "create-1")
	wantStatus(t, again, http.StatusCreated)
	if again.Header().Get("Idempotent-Replayed") != "true" || again.Body.String() != first.Body.String() {
		t.Fatalf("replay differs: %s vs %s", again.Body.String(), first.Body.String())
	}
	wantError(t, e.do("POST", "/v1/policies", admin, map[string]any{"name": "Other"}, "Idempotency-Key", "create-1"), http.StatusConflict, "conflict")
	if _, meta := polList(t, e.do("GET", "/v1/policies", admin, nil)); polNum(meta, "total") != 1 {
		t.Fatalf("replay created a duplicate: %v", meta)
	}

	// A retried publish does not create a second version.
	id := polStr(obj(t, first), "id")
	p1 := e.do("POST", "/v1/policies/"+id+"/publish", admin, nil, "Idempotency-Key", "publish-1")
	wantStatus(t, p1, http.StatusCreated)
	p2 := e.do("POST", "/v1/policies/"+id+"/publish", admin, nil, "Idempotency-Key", "publish-1")
	if p2.Header().Get("Idempotent-Replayed") != "true" || polNum(obj(t, p2), "version") != 1 {
		t.Fatalf("publish replay: %s", p2.Body.String())
	}
	if polNum(obj(t, e.do("GET", "/v1/policies/"+id, admin, nil)), "version") != 1 {
		t.Fatal("a replayed publish must not add a version")
	}

	v1 := e.do("POST", "/v1/variables", admin, map[string]any{"name": "dpo", "value": "x"}, "Idempotency-Key", "var-1")
	v2 := e.do("POST", "/v1/variables", admin, map[string]any{"name": "dpo", "value": "x"}, "Idempotency-Key", "var-1")
	wantStatus(t, v2, http.StatusCreated)
	if v1.Body.String() != v2.Body.String() {
		t.Fatal("variable create replay differs")
	}
}

func TestPolicyUnauthenticated(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	for _, path := range []string{"/v1/policies", "/v1/variables", "/v1/context", "/v1/context/snapshots"} {
		wantError(t, e.do("GET", path, "", nil), http.StatusUnauthorized, "unauthorized")
		wantError(t, e.do("GET", path, "cmp_notakeyatallnotakeyatall", nil), http.StatusUnauthorized, "unauthorized")
	}
}

func TestPolicyDeleteDraftOnly(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	ctl := e.policyControl(org, "A.1")
	draft := polStr(e.newPolicy(admin, map[string]any{"name": "Draft", "controlIds": []string{ctl}}), "id")
	pub := polStr(e.newPolicy(admin, map[string]any{"name": "Pub", "content": "x"}), "id")
	wantStatus(t, e.do("POST", "/v1/policies/"+pub+"/publish", admin, nil), http.StatusCreated)

	wantError(t, e.do("DELETE", "/v1/policies/"+draft, e.key(org, app.RoleAuditor), nil), http.StatusForbidden, "forbidden")
	other := e.key(e.org("Other", "professional"), app.RoleOwner)
	wantError(t, e.do("DELETE", "/v1/policies/"+draft, other, nil), http.StatusNotFound, "not_found")
	wantStatus(t, e.do("DELETE", "/v1/policies/"+draft, admin, nil), http.StatusNoContent)
	wantError(t, e.do("GET", "/v1/policies/"+draft, admin, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("DELETE", "/v1/policies/"+draft, admin, nil), http.StatusNotFound, "not_found")
	// Published versions are records: the policy can only be archived.
	wantError(t, e.do("DELETE", "/v1/policies/"+pub, admin, nil), http.StatusConflict, "conflict")
	if polNum(obj(t, e.do("GET", "/v1/policies/"+pub, admin, nil)), "version") != 1 {
		t.Fatal("published policy must survive")
	}
	if polCount(e.policyEvents(org), "policy.deleted") != 1 {
		t.Fatal("policy.deleted must be emitted once")
	}
}

func TestPolicyAcknowledgedByPerson(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	alice := e.person(org, "alice@acme.test", app.RoleEmployee)
	bob := e.person(org, "bob@acme.test", app.RoleEmployee)
	aliceKey := e.policyPersonKey(org, alice, app.RoleEmployee)
	p1 := polStr(e.newPolicy(admin, map[string]any{"name": "One", "content": "x"}), "id")
	p2 := polStr(e.newPolicy(admin, map[string]any{"name": "Two", "content": "y"}), "id")
	optional := polStr(e.newPolicy(admin, map[string]any{"name": "Three (no signature)", "content": "z", "isRequiredToSign": false}), "id")
	for _, id := range []string{p1, p2, optional} {
		wantStatus(t, e.do("POST", "/v1/policies/"+id+"/publish", admin, nil), http.StatusCreated)
	}
	wantStatus(t, e.do("POST", "/v1/policies/"+p1+"/acknowledge", aliceKey, nil), http.StatusCreated)

	ids := func(rec *httptest.ResponseRecorder) string {
		items, _ := polList(t, rec)
		var out []string
		for _, it := range items {
			out = append(out, polStr(it, "id"))
		}
		return strings.Join(out, ",")
	}
	if got := ids(e.do("GET", "/v1/policies?acknowledged=false&personId="+alice, admin, nil)); got != p2 {
		t.Fatalf("alice pending: %s", got)
	}
	if got := ids(e.do("GET", "/v1/policies?acknowledged=true&personId="+alice, admin, nil)); got != p1 {
		t.Fatalf("alice acknowledged: %s", got)
	}
	if got := ids(e.do("GET", "/v1/policies?acknowledged=false&personId="+bob, admin, nil)); got != p1+","+p2 {
		t.Fatalf("bob pending: %s", got)
	}
	// Employees may ask only about themselves.
	if got := ids(e.do("GET", "/v1/policies?acknowledged=false&personId="+bob, aliceKey, nil)); got != "" {
		t.Fatalf("alice asking about bob: %s", got)
	}
	wantField(t, e.do("GET", "/v1/policies?personId="+alice, admin, nil), "personId")
	wantField(t, e.do("GET", "/v1/policies?acknowledged=true&personId=usr_nobody", admin, nil), "personId")
}

func TestContextRestore(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	admin := e.key(org, app.RoleAdmin)
	v1 := obj(t, e.do("PATCH", "/v1/context", admin, map[string]any{"description": "first", "climateChangeRelevant": true,
		"entries": []map[string]any{{"question": "Where is data hosted?", "answer": "Frankfurt", "tags": []string{"hosting"}}}}))
	wantStatus(t, e.do("PATCH", "/v1/context", admin, map[string]any{"description": "second", "climateChangeRelevant": nil, "entries": []any{}}), http.StatusOK)

	rec := e.do("POST", "/v1/context/snapshots/"+polStr(v1, "id")+"/restore", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	v3 := obj(t, rec)
	if polNum(v3, "version") != 3 || polStr(v3, "description") != "first" || v3["climateChangeRelevant"] != true ||
		len(v3["entries"].([]any)) != 1 || polStr(v3, "changeNote") != "restored version 1" {
		t.Fatalf("restored: %v", v3)
	}
	if _, meta := polList(t, e.do("GET", "/v1/context/snapshots", admin, nil)); polNum(meta, "total") != 3 {
		t.Fatalf("snapshots after restore: %v", meta)
	}
	wantError(t, e.do("POST", "/v1/context/snapshots/9/restore", admin, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/context/snapshots/1/restore", e.key(org, app.RoleAuditor), nil), http.StatusForbidden, "forbidden")
	other := e.key(e.org("Other", "professional"), app.RoleOwner)
	wantError(t, e.do("POST", "/v1/context/snapshots/"+polStr(v1, "id")+"/restore", other, nil), http.StatusNotFound, "not_found")
}
