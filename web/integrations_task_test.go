package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

func (e *integEnv) taskEvidence(task string) []string {
	e.t.Helper()
	rows, err := e.raw().Query(`SELECT id FROM evidence WHERE organization_id = ? AND task_id = ? ORDER BY id`, e.org, task)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

func findTaskCheck(t *testing.T, checks []any, id string) map[string]any {
	t.Helper()
	for _, c := range checks {
		if m := c.(map[string]any); m["id"] == id {
			return m
		}
	}
	return nil
}

// TestTaskIntegrations: the checks of a task (through its control) and of
// a template (through its requirement), a run for the task that attaches
// evidence to it, disconnect (no more evidence) and reconnect, the task's
// runs, bad input, another organization and the auditor.
func TestTaskIntegrations(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	conn := e.connect(map[string]any{"providerSlug": "fake", "name": "Directory", "credentials": map[string]any{"token": fakeToken}})
	backupControl := e.controlFor("A.8.13")
	rec := e.do("POST", "/v1/tasks", e.owner, map[string]any{"title": "Check the backups", "controlId": backupControl})
	wantStatus(t, rec, http.StatusCreated)
	task := obj(t, rec)["id"].(string)

	rec = e.do("GET", "/v1/integrations/tasks/"+task+"/checks", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	body := obj(t, rec)
	if body["task"].(map[string]any)["id"] != task {
		t.Fatalf("task %v", body["task"])
	}
	bc := findTaskCheck(t, body["checks"].([]any), "fake.backup")
	if bc == nil || bc["providerSlug"] != "fake" {
		t.Fatalf("fake.backup does not apply to the task: %v", body["checks"])
	}
	if findTaskCheck(t, body["checks"].([]any), "fake.mfa") != nil {
		t.Fatalf("fake.mfa (A.8.5) applies to a backup task: %v", body["checks"])
	}
	conns := bc["connections"].([]any)
	if len(conns) != 1 || conns[0].(map[string]any)["connectionId"] != conn || conns[0].(map[string]any)["disabled"] != false ||
		conns[0].(map[string]any)["lastResult"] != nil {
		t.Fatalf("connections %v", conns)
	}

	// A template of requirement A.8.5 is evidenced by fake.mfa.
	rec = e.do("POST", "/v1/framework-editor/task-template", e.owner, map[string]any{"name": "MFA review",
		"frameworkId": app.FrameworkIDFor("iso27001-2022"), "requirementId": app.RequirementIDFor("iso27001-2022", "A.8.5")})
	wantStatus(t, rec, http.StatusCreated)
	tmpl := obj(t, rec)["id"].(string)
	rec = e.do("GET", "/v1/integrations/tasks/template/"+tmpl+"/checks", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if body := obj(t, rec); body["templateId"] != tmpl || findTaskCheck(t, body["checks"].([]any), "fake.mfa") == nil {
		t.Fatalf("template checks %v", body)
	}

	// Run for the task: the answer is the finished run with totals, and
	// the task holds the evidence.
	run := map[string]any{"connectionId": conn, "checkId": "fake.backup"}
	rec = e.do("POST", "/v1/integrations/tasks/"+task+"/run-check", e.owner, run, "Idempotency-Key", "task-run-1")
	wantStatus(t, rec, http.StatusCreated)
	r1 := obj(t, rec)
	if r1["status"] != "succeeded" || r1["taskId"] != task || r1["success"] != true || r1["totalPassing"].(float64) != 1 ||
		r1["totalFindings"].(float64) != 0 || r1["hadErrors"] != false || r1["accountsRun"].(float64) != 1 || r1["checkId"] != "fake.backup" {
		t.Fatalf("run for task %v", r1)
	}
	again := e.do("POST", "/v1/integrations/tasks/"+task+"/run-check", e.owner, run, "Idempotency-Key", "task-run-1")
	wantStatus(t, again, http.StatusCreated)
	if obj(t, again)["id"] != r1["id"] {
		t.Fatal("the Idempotency-Key replay ran the check again")
	}
	ev := e.taskEvidence(task)
	if len(ev) != 1 {
		t.Fatalf("task evidence after the run: %v", ev)
	}
	// A second passing run replaces the evidence (one per check and task).
	wantStatus(t, e.do("POST", "/v1/integrations/tasks/"+task+"/run-check", e.owner, run), http.StatusCreated)
	ev2 := e.taskEvidence(task)
	if len(ev2) != 1 || ev2[0] == ev[0] {
		t.Fatalf("task evidence after the second run: %v (was %v)", ev2, ev)
	}

	// Disconnect: the connection's runs no longer attach evidence to it.
	rec = e.do("POST", "/v1/integrations/tasks/"+task+"/checks/disconnect", e.owner, run)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["disabled"] != true || m["checkId"] != "fake.backup" {
		t.Fatalf("disconnect %v", m)
	}
	wantStatus(t, e.do("POST", "/v1/integrations/tasks/"+task+"/checks/disconnect", e.owner, run), http.StatusOK)
	rec = e.do("GET", "/v1/integrations/tasks/"+task+"/checks", e.owner, nil)
	bc = findTaskCheck(t, obj(t, rec)["checks"].([]any), "fake.backup")
	if c := bc["connections"].([]any)[0].(map[string]any); c["disabled"] != true || c["lastResult"] == nil {
		t.Fatalf("disconnected check %v", c)
	}
	wantError(t, e.do("POST", "/v1/integrations/tasks/"+task+"/run-check", e.owner, run), http.StatusConflict, "conflict")
	if got := e.run(conn); got["status"] != "succeeded" {
		t.Fatalf("connection run %v", got)
	}
	if ev3 := e.taskEvidence(task); len(ev3) != 1 || ev3[0] != ev2[0] {
		t.Fatalf("a disconnected check changed the task's evidence: %v (was %v)", ev3, ev2)
	}
	rec = e.do("POST", "/v1/integrations/tasks/"+task+"/checks/reconnect", e.owner, run)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["disabled"] != false {
		t.Fatalf("reconnect %s", rec.Body.String())
	}
	e.run(conn)
	if ev4 := e.taskEvidence(task); len(ev4) != 1 || ev4[0] == ev2[0] {
		t.Fatalf("a reconnected check did not refresh the task's evidence: %v", ev4)
	}

	// Runs: newest first, with logs and the task's results.
	rec = e.do("GET", "/v1/integrations/tasks/"+task+"/runs?limit=3", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	runs := obj(t, rec)["runs"].([]any)
	if len(runs) != 3 {
		t.Fatalf("runs %d, want 3 (limit)", len(runs))
	}
	first := runs[0].(map[string]any)
	if first["forTask"] != false || first["connectionLabel"] != "Directory" || len(first["logs"].([]any)) == 0 {
		t.Fatalf("newest run %v", first)
	}
	for _, res := range first["results"].([]any) {
		if res.(map[string]any)["checkId"] != "fake.backup" {
			t.Fatalf("a result of a check that is not the task's: %v", res)
		}
	}
	if len(first["results"].([]any)) != 1 {
		t.Fatalf("results %v", first["results"])
	}
	rec = e.do("GET", "/v1/integrations/tasks/"+task+"/runs", e.owner, nil)
	all := obj(t, rec)["runs"].([]any)
	if len(all) != 4 || all[len(all)-1].(map[string]any)["forTask"] != true {
		t.Fatalf("all runs %d: %v", len(all), all)
	}
	for _, q := range []string{"0", "101", "x"} {
		wantField(t, e.do("GET", "/v1/integrations/tasks/"+task+"/runs?limit="+q, e.owner, nil), "limit")
	}

	// Bad input names the field.
	rec = e.do("POST", "/v1/integrations/tasks/"+task+"/run-check", e.owner, map[string]any{})
	wantError(t, rec, http.StatusBadRequest, "validation_error")
	if s := rec.Body.String(); !strings.Contains(s, "connectionId") || !strings.Contains(s, "checkId") {
		t.Fatalf("missing fields: %s", s)
	}
	wantField(t, e.do("POST", "/v1/integrations/tasks/"+task+"/run-check", e.owner, map[string]any{"connectionId": conn, "checkId": "fake.mfa"}), "checkId")
	wantField(t, e.do("POST", "/v1/integrations/tasks/"+task+"/checks/disconnect", e.owner, map[string]any{"connectionId": "icn_nope", "checkId": "fake.backup"}), "connectionId")
	wantError(t, e.do("GET", "/v1/integrations/tasks/tsk_nope/checks", e.owner, nil), http.StatusNotFound, "not_found")

	// Another organization: 404 for the task, 400 for the connection.
	other := e.testEnv.org("Other", app.PlanProfessional)
	otherKey := e.key(other, app.RoleOwner)
	for _, p := range []string{"/checks", "/runs"} {
		wantError(t, e.do("GET", "/v1/integrations/tasks/"+task+p, otherKey, nil), http.StatusNotFound, "not_found")
	}
	wantError(t, e.do("POST", "/v1/integrations/tasks/"+task+"/run-check", otherKey, run), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/integrations/tasks/template/"+tmpl+"/checks", otherKey, nil), http.StatusNotFound, "not_found")
	rec = e.do("POST", "/v1/tasks", otherKey, map[string]any{"title": "Other task"})
	wantStatus(t, rec, http.StatusCreated)
	otherTask := obj(t, rec)["id"].(string)
	wantField(t, e.do("POST", "/v1/integrations/tasks/"+otherTask+"/checks/disconnect", otherKey, run), "connectionId")

	// The auditor reads, never writes.
	aud := e.key(e.org, app.RoleAuditor)
	wantStatus(t, e.do("GET", "/v1/integrations/tasks/"+task+"/checks", aud, nil), http.StatusOK)
	wantStatus(t, e.do("GET", "/v1/integrations/tasks/"+task+"/runs", aud, nil), http.StatusOK)
	for _, p := range []string{"/run-check", "/checks/disconnect", "/checks/reconnect"} {
		wantError(t, e.do("POST", "/v1/integrations/tasks/"+task+p, aud, run), http.StatusForbidden, "forbidden")
	}
	// The MCP read tool.
	cs := mcpSession(t, e.testEnv, http.Header{"X-Api-Key": {aud}})
	out, isErr := callTool(t, cs, "list_task_check_runs", map[string]any{"taskId": task, "limit": 2})
	if isErr || out["taskId"] != task || len(out["runs"].([]any)) != 2 {
		t.Fatalf("list_task_check_runs: %v", out)
	}
	// Employees have no access to integrations.
	emp := e.key(e.org, app.RoleEmployee)
	wantError(t, e.do("GET", "/v1/integrations/tasks/"+task+"/checks", emp, nil), http.StatusForbidden, "forbidden")
}

// TestAdminIntegrations: only the operator (a flagged person in a session)
// reads and changes the providers appliance-wide; a switched-off provider
// leaves the organizations' catalog and its connections stop running;
// platform credentials are sealed and never returned.
func TestAdminIntegrations(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	conn := e.connect(map[string]any{"providerSlug": "fake", "name": "Directory", "credentials": map[string]any{"token": fakeToken}})
	e.withPassword(e.org, "ops@example.com", app.RoleAdmin)
	e.withPassword(e.org, "owner@example.com", app.RoleOwner)
	if _, err := e.app.GrantOperator(context.Background(), "ops@example.com"); err != nil {
		t.Fatal(err)
	}
	opCookie, opCSRF := e.login("ops@example.com")
	ownCookie, ownCSRF := e.login("owner@example.com")
	op := func(method, path string, body any) *httptest.ResponseRecorder {
		return e.do(method, path, "", body, "Cookie", opCookie, httpx.CSRFHeader, opCSRF)
	}

	// Not the operator: 403, whatever the role or credential.
	for _, r := range []struct{ method, path string }{{"GET", "/v1/admin/integrations"}, {"GET", "/v1/admin/integrations/fake"},
		{"PATCH", "/v1/admin/integrations/fake"}, {"POST", "/v1/admin/integrations/credentials"}, {"DELETE", "/v1/admin/integrations/credentials/github"}} {
		body := map[string]any{"isActive": false}
		wantError(t, e.do(r.method, r.path, "", body, "Cookie", ownCookie, httpx.CSRFHeader, ownCSRF), http.StatusForbidden, "forbidden")
		wantError(t, e.do(r.method, r.path, e.owner, body), http.StatusForbidden, "forbidden")
	}
	wantError(t, e.do("GET", "/v1/admin/integrations", "", nil), http.StatusUnauthorized, "unauthorized")

	rec := op("GET", "/v1/admin/integrations", nil)
	wantStatus(t, rec, http.StatusOK)
	var fake map[string]any
	for _, p := range list(t, rec) {
		if p["slug"] == "fake" {
			fake = p
		}
	}
	if fake == nil || fake["isActive"] != true || fake["connectionCount"].(float64) != 1 || fake["checkCount"].(float64) != 2 {
		t.Fatalf("fake provider %v", fake)
	}
	wantError(t, op("GET", "/v1/admin/integrations/nope", nil), http.StatusNotFound, "not_found")
	wantField(t, op("PATCH", "/v1/admin/integrations/fake", map[string]any{}), "isActive")

	// Switch it off: gone from the catalog, no new connection, no run.
	rec = op("PATCH", "/v1/admin/integrations/fake", map[string]any{"isActive": false})
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["isActive"] != false {
		t.Fatalf("patch %s", rec.Body.String())
	}
	for _, p := range list(t, e.do("GET", "/v1/integrations/connections/providers", e.owner, nil)) {
		if p["slug"] == "fake" {
			t.Fatal("a switched-off provider is in the catalog")
		}
	}
	wantError(t, e.do("GET", "/v1/integrations/connections/providers/fake", e.owner, nil), http.StatusNotFound, "not_found")
	wantField(t, e.do("POST", "/v1/integrations/connections", e.owner, map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": fakeToken}}), "providerSlug")
	wantError(t, e.do("POST", "/v1/integrations/checks/connections/"+conn+"/run", e.owner, nil), http.StatusConflict, "conflict")
	if _, err := e.raw().Exec(`UPDATE integration_connections SET next_run_at = ? WHERE id = ?`,
		e.clock.Now().Add(-time.Minute).UTC().Format("2006-01-02T15:04:05.000Z"), conn); err != nil {
		t.Fatal(err)
	}
	if err := e.app.ScheduleIntegrationRuns(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, err := e.app.ProcessQueuedRuns(context.Background()); err != nil || n != 0 {
		t.Fatalf("a switched-off provider's connection ran: %d %v", n, err)
	}
	// Its connection moved to its next slot all the same, so the
	// scheduler does not select it again on every tick.
	next, _ := time.Parse(time.RFC3339, fmt.Sprint(obj(t, e.do("GET", "/v1/integrations/connections/"+conn, e.owner, nil))["nextRunAt"]))
	if !next.After(e.clock.Now()) {
		t.Fatalf("next run of a switched-off provider's connection: %v (now %v)", next, e.clock.Now())
	}
	// The connection itself stays readable.
	wantStatus(t, e.do("GET", "/v1/integrations/connections/"+conn, e.owner, nil), http.StatusOK)
	wantStatus(t, op("PATCH", "/v1/admin/integrations/fake", map[string]any{"isActive": true}), http.StatusOK)
	if got := e.run(conn); got["status"] != "succeeded" {
		t.Fatalf("run after switching back on: %v", got)
	}

	// Platform credentials: sealed, never returned.
	const secret = "gh-client-SECRET-91c3e7"
	rec = op("POST", "/v1/admin/integrations/credentials", map[string]any{"providerSlug": "fake", "clientId": "x", "clientSecret": "y"})
	wantField(t, rec, "providerSlug") // fake does not use OAuth
	rec = op("POST", "/v1/admin/integrations/credentials", map[string]any{"providerSlug": "github"})
	wantError(t, rec, http.StatusBadRequest, "validation_error")
	if s := rec.Body.String(); !strings.Contains(s, "providerSlug") && !strings.Contains(s, "clientId") {
		t.Fatalf("missing fields: %s", s)
	}
	e.app.RegisterIntegrationProviders(oauthTestProvider{})
	rec = op("POST", "/v1/admin/integrations/credentials", map[string]any{"providerSlug": "github", "clientId": "Iv1.abc",
		"clientSecret": secret, "customScopes": []string{"read:org", "repo"}})
	wantStatus(t, rec, http.StatusCreated)
	if m := obj(t, rec); m["hasPlatformCredentials"] != true || m["clientId"] != "Iv1.abc" || strings.Contains(rec.Body.String(), secret) {
		t.Fatalf("saved credentials %s", rec.Body.String())
	}
	wantField(t, op("POST", "/v1/admin/integrations/credentials", map[string]any{"providerSlug": "github", "clientId": "a", "clientSecret": "b",
		"customScopes": []string{"two words"}}), "customScopes[0]")
	for _, path := range []string{"/v1/admin/integrations", "/v1/admin/integrations/github"} {
		if strings.Contains(op("GET", path, nil).Body.String(), secret) {
			t.Fatalf("%s returns the client secret", path)
		}
	}
	e.assertNotInFiles(secret)
	wantStatus(t, op("DELETE", "/v1/admin/integrations/credentials/github", nil), http.StatusNoContent)
	wantError(t, op("DELETE", "/v1/admin/integrations/credentials/github", nil), http.StatusNotFound, "not_found")
	if m := obj(t, op("GET", "/v1/admin/integrations/github", nil)); m["hasPlatformCredentials"] != false || m["clientId"] != nil {
		t.Fatalf("after delete %v", m)
	}

	// Revoked: 403 again.
	if _, err := e.app.RevokeOperator(context.Background(), "ops@example.com"); err != nil {
		t.Fatal(err)
	}
	wantError(t, op("GET", "/v1/admin/integrations", nil), http.StatusForbidden, "forbidden")
}

// oauthTestProvider stands for a provider connected through OAuth (the
// github slug), without outbound calls.
type oauthTestProvider struct{}

func (oauthTestProvider) Definition() app.ProviderDefinition {
	return app.ProviderDefinition{Slug: "github", Name: "GitHub (test)", Category: "source_control", AuthStrategy: app.ProviderAuthAPIKey,
		Credentials: []app.CredentialField{{Key: "token", Label: "Token", Type: "password", Secret: true, Required: true}}}
}

func (oauthTestProvider) Test(context.Context, app.ConnectionTarget) app.TestResult {
	return app.TestResult{}
}

func (oauthTestProvider) Run(context.Context, app.ConnectionTarget, []string, app.CheckSink) error {
	return nil
}
