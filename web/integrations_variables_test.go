package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestFindingsBoundToTasks: a failing check's finding is linked to the
// task of the check's control (listed by the task's findings route and on
// the task page); a task that disconnected the check gets no link, and
// disconnecting stops new links while the old ones stay.
func TestFindingsBoundToTasks(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	conn := e.connect(map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": fakeToken}})
	mfa := e.controlFor("A.8.5")
	mkTask := func(title string) string {
		rec := e.do("POST", "/v1/tasks", e.owner, map[string]any{"title": title, "controlId": mfa})
		wantStatus(t, rec, http.StatusCreated)
		return obj(t, rec)["id"].(string)
	}
	linked, apart := mkTask("Review MFA"), mkTask("Review MFA for contractors")
	wantStatus(t, e.do("POST", "/v1/integrations/tasks/"+apart+"/checks/disconnect", e.owner,
		map[string]any{"connectionId": conn, "checkId": "fake.mfa"}), http.StatusOK)
	findings := func(task, status string) []any {
		t.Helper()
		rec := e.do("GET", "/v1/integrations/tasks/"+task+"/findings?status="+status, e.owner, nil)
		wantStatus(t, rec, http.StatusOK)
		return obj(t, rec)["findings"].([]any)
	}
	if got := findings(linked, ""); len(got) != 0 {
		t.Fatalf("findings before a run: %v", got)
	}
	e.run(conn) // bob fails fake.mfa
	got := findings(linked, "open")
	if len(got) != 1 {
		t.Fatalf("linked task findings: %v", got)
	}
	f := got[0].(map[string]any)
	if f["checkId"] != "fake.mfa" || f["connectionId"] != conn || f["status"] != "open" || f["severity"] != "high" {
		t.Fatalf("finding %v", f)
	}
	if got := findings(apart, "all"); len(got) != 0 {
		t.Fatalf("a task that disconnected the check got findings: %v", got)
	}
	// A re-run keeps one link.
	e.run(conn)
	if got := findings(linked, ""); len(got) != 1 {
		t.Fatalf("after a re-run: %v", got)
	}
	// The task page shows it.
	b := e.browser()
	e.withPassword(e.org, "owner@acme.test", app.RoleOwner)
	b.signIn("owner@acme.test")
	page := b.get("/tasks/" + linked + "/automations")
	wantStatus(t, page, http.StatusOK)
	if !strings.Contains(page.Body.String(), "Open findings from checks") || !strings.Contains(page.Body.String(), "/findings/"+f["id"].(string)) {
		t.Fatalf("task page lacks the finding: %s", page.Body.String())
	}

	// Disconnect: alice's new failure is not linked; bob's link stays.
	wantStatus(t, e.do("POST", "/v1/integrations/tasks/"+linked+"/checks/disconnect", e.owner,
		map[string]any{"connectionId": conn, "checkId": "fake.mfa"}), http.StatusOK)
	e.fake.set("alice", app.CheckFail)
	if run := e.run(conn); run["findingsOpened"].(float64) != 1 {
		t.Fatalf("run %v", run)
	}
	if got := findings(linked, ""); len(got) != 1 || got[0].(map[string]any)["id"] != f["id"] {
		t.Fatalf("after disconnecting: %v", got)
	}
	// Resolved findings leave the open list but stay in all.
	e.fake.set("bob", app.CheckPass)
	e.fake.set("alice", app.CheckPass)
	e.run(conn)
	if got := findings(linked, "open"); len(got) != 0 {
		t.Fatalf("open after recovery: %v", got)
	}
	if got := findings(linked, "resolved"); len(got) != 1 {
		t.Fatalf("resolved after recovery: %v", got)
	}

	// Bad input, roles, other organizations.
	wantField(t, e.do("GET", "/v1/integrations/tasks/"+linked+"/findings?status=nope", e.owner, nil), "status")
	wantStatus(t, e.do("GET", "/v1/integrations/tasks/"+linked+"/findings", e.key(e.org, app.RoleAuditor), nil), http.StatusOK)
	other := e.testEnv.org("Other", "professional")
	wantError(t, e.do("GET", "/v1/integrations/tasks/"+linked+"/findings", e.key(other, app.RoleOwner), nil), http.StatusNotFound, "not_found")
}

// TestConnectionVariables: the provider's variables, a connection's
// values, saving (validated: 400 naming the field), static choices, and
// the checks honouring them.
func TestConnectionVariables(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t)
	rec := e.do("GET", "/v1/integrations/variables/providers/github", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	var repos map[string]any
	for _, v := range obj(t, rec)["variables"].([]any) {
		if m := v.(map[string]any); m["key"] == "repositories" {
			repos = m
		}
	}
	if repos == nil || repos["optionsFrom"] != "provider" {
		t.Fatalf("github variables %s", rec.Body.String())
	}
	wantError(t, e.do("GET", "/v1/integrations/variables/providers/nope", e.owner, nil), http.StatusNotFound, "not_found")

	conn := e.connect(map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": fakeToken}, "variables": map[string]any{"org": "acme"}})
	rec = e.do("GET", "/v1/integrations/variables/connections/"+conn, e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["providerSlug"] != "fake" || m["variables"].(map[string]any)["org"] != "acme" || len(m["definitions"].([]any)) != 1 {
		t.Fatalf("connection variables %v", m)
	}
	wantField(t, e.do("POST", "/v1/integrations/variables/connections/"+conn, e.owner, map[string]any{"variables": map[string]any{"nope": "x"}}), "variables.nope")
	wantField(t, e.do("POST", "/v1/integrations/variables/connections/"+conn, e.owner, map[string]any{}), "variables")
	wantField(t, e.do("POST", "/v1/integrations/variables/connections/"+conn, e.owner, map[string]any{"variables": map[string]any{"org": map[string]any{"x": 1}}}), "variables.org")
	rec = e.do("POST", "/v1/integrations/variables/connections/"+conn, e.owner, map[string]any{"variables": map[string]any{"org": "globex"}}, "Idempotency-Key", "vars-1")
	wantStatus(t, rec, http.StatusCreated)
	if m := obj(t, rec); m["success"] != true || m["variables"].(map[string]any)["org"] != "globex" {
		t.Fatalf("saved %v", m)
	}
	wantError(t, e.do("POST", "/v1/integrations/variables/connections/"+conn, e.key(e.org, app.RoleAuditor), map[string]any{"variables": map[string]any{"org": "x"}}), http.StatusForbidden, "forbidden")
	other := e.testEnv.org("Other", "professional")
	wantError(t, e.do("GET", "/v1/integrations/variables/connections/"+conn, e.key(other, app.RoleOwner), nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/integrations/variables/connections/"+conn+"/options/nope", e.owner, nil), http.StatusNotFound, "not_found")

	// AWS: regions validated by the provider's rule; choices static.
	awsConn := e.connect(map[string]any{"providerSlug": "aws", "credentials": map[string]any{"accessKeyId": "AKIAIOSFODNN7EXAMPLE", "secretAccessKey": "x"}})
	wantField(t, e.do("POST", "/v1/integrations/variables/connections/"+awsConn, e.owner, map[string]any{"variables": map[string]any{"regions": "eu-west-1, Frankfurt"}}), "variables.regions")
	wantField(t, e.do("POST", "/v1/integrations/variables/connections/"+awsConn, e.owner, map[string]any{"variables": map[string]any{"scanMode": "everything"}}), "variables.scanMode")
	wantStatus(t, e.do("POST", "/v1/integrations/variables/connections/"+awsConn, e.owner, map[string]any{"variables": map[string]any{"regions": []string{"eu-west-1", "eu-central-1"}}}), http.StatusCreated)
	rec = e.do("GET", "/v1/integrations/variables/connections/"+awsConn+"/options/regions", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["source"] != "static" || !strings.Contains(fmt.Sprint(m["options"]), "eu-central-1") {
		t.Fatalf("region options %v", m)
	}
	if v := obj(t, e.do("GET", "/v1/integrations/variables/connections/"+awsConn, e.owner, nil))["variables"].(map[string]any)["regions"]; v != "eu-west-1\neu-central-1" {
		t.Fatalf("regions %q", v)
	}
}

// TestUIIntegrationOAuthAndVariables: the integrations page offers
// "Connect with GitHub" once an OAuth app is configured and the button
// sends the browser to GitHub; a failed flow is explained; the connection
// page saves variables (a bad value names its field).
func TestUIIntegrationOAuthAndVariables(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t)
	b := e.browser()
	b.signIn("owner@acme.test")
	if page := b.get("/integrations").Body.String(); strings.Contains(page, "Connect with GitHub") {
		t.Fatal("Connect with GitHub offered without an OAuth app")
	}
	wantStatus(t, e.do("POST", "/v1/integrations/oauth/apps", e.owner, map[string]any{"providerSlug": "github", "clientId": "Ov23li", "clientSecret": "s3cret-value"}), http.StatusCreated)
	page := b.get("/integrations?oauthError=invalid_state").Body.String()
	if !strings.Contains(page, "Connect with GitHub") || !strings.Contains(page, "already used or is unknown") {
		t.Fatalf("integrations page: %s", page)
	}
	rec := b.post("/integrations/oauth", url.Values{"providerSlug": {"github"}, "var.organization": {"acme"}})
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "https://github.com/login/oauth/authorize?") {
		t.Fatalf("connect with GitHub: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	if rec := b.post("/integrations/oauth", url.Values{"providerSlug": {"github"}}); !strings.Contains(rec.Body.String(), "variables.organization") {
		t.Fatalf("missing organization: %d %s", rec.Code, rec.Body.String())
	}

	conn := e.connect(map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": fakeToken}})
	b.get("/integrations/" + conn)
	rec = b.post("/integrations/"+conn+"/variables", url.Values{"var.org": {"globex"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("save variables: %d %s", rec.Code, rec.Body.String())
	}
	if v := obj(t, e.do("GET", "/v1/integrations/variables/connections/"+conn, e.owner, nil))["variables"].(map[string]any)["org"]; v != "globex" {
		t.Fatalf("org %v", v)
	}
	if rec := b.post("/integrations/"+conn+"/variables", url.Values{"var.nope": {"x"}}); !strings.Contains(rec.Body.String(), "variables.nope") {
		t.Fatalf("bad variable: %d", rec.Code)
	}
}
