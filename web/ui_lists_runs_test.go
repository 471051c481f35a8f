package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/automation"
	"github.com/compliance-appliance/compliance/integrations/ldap"
	"github.com/compliance-appliance/compliance/integrations/ldap/ldaptest"
)

// runListPages adds two rows of each run and automation list (directory
// sync runs, task automation runs per task and per automation, browser
// automations and their runs, cloud security findings, vendor
// assessments) to the list fixture, and returns the cases of
// TestUIListPages that walk them.
func runListPages(t *testing.T, e *testEnv, f uiFixture) []struct {
	path, sort, filter string // filter matches at least two rows
	noun               string
} {
	t.Helper()
	key := e.key(f.org, app.RoleOwner)
	bg := context.Background()

	// Directory sync: a dry run, then a real one a minute later.
	dir := ldaptest.Start(t, 5, 0)
	e.app.RegisterIntegrationProviders(ldap.New(nil))
	rec := e.do("POST", "/v1/integrations/connections", key, map[string]any{"providerSlug": "ldap", "credentials": dir.Credentials(),
		"variables": map[string]string{"baseDn": ldaptest.PeopleDN}})
	wantStatus(t, rec, http.StatusCreated)
	ldapConn := obj(t, rec)["id"].(string)
	owner := e.browser()
	owner.signIn(f.owner)
	wantRedirect(t, owner.post("/integrations/"+ldapConn+"/sync", url.Values{"dryRun": {"true"}}), "/integrations/sync/runs/syr_")
	e.clock.Advance(time.Minute)
	wantRedirect(t, owner.post("/integrations/"+ldapConn+"/sync", url.Values{}), "/integrations/sync/runs/syr_")

	// Cloud security: one scan fails a bucket and the root user.
	fc := newFakeCloud("fakecloud")
	e.app.RegisterIntegrationProviders(fc)
	rec = e.do("POST", "/v1/integrations/connections", key, map[string]any{"providerSlug": "fakecloud", "name": "Production account"})
	wantStatus(t, rec, http.StatusCreated)
	cloudConn := obj(t, rec)["id"].(string)
	wantStatus(t, e.do("POST", "/v1/cloud-security/trigger/"+cloudConn, key, nil), http.StatusCreated)
	if _, err := e.app.ProcessQueuedRuns(bg); err != nil {
		t.Fatal(err)
	}

	// Task automation runs: a passing and a failing run, stored as the
	// runner leaves them.
	e.app.SetScriptRunner(automation.New(nil), app.TaskAutomationOptions{})
	auto := sweepCreate(e, f.org, "/v1/tasks/"+f.task+"/automations", map[string]any{"name": "Backups checked",
		"script": "result({\"ok\": True})\n"})
	for i, verdict := range []string{"pass", "fail"} {
		e.clock.Advance(time.Minute)
		now := e.clock.Now()
		r := &app.TaskAutomationRun{ID: app.NewID(app.PrefixAutomationRun), AutomationID: auto, TaskID: f.task, Version: 1,
			Trigger: "manual", Status: app.AutomationRunPending, RequestedBy: "test", CreatedAt: now}
		if err := e.db.CreateAutomationRun(bg, f.org, r); err != nil {
			t.Fatal(err)
		}
		r.Status, r.EvaluationStatus, r.EvaluationReason = app.AutomationRunCompleted, app.Ptr(verdict), app.Ptr("criteria "+verdict)
		r.DurationMs, r.FinishedAt, r.Logs, r.Result = int64(100*(i+1)), &now, []app.RunLog{}, map[string]any{"ok": verdict == "pass"}
		if err := e.db.FinishAutomationRun(bg, f.org, r); err != nil {
			t.Fatal(err)
		}
	}

	// Browser automations of the task and two stored runs of one.
	var browserAuto string
	for _, n := range []string{"Admin console MFA", "Backup console retention"} {
		browserAuto = sweepCreate(e, f.org, "/v1/browserbase/automations", map[string]any{"taskId": f.task, "name": n,
			"targetUrl": "https://admin.example.com/", "steps": []any{map[string]any{"kind": "navigate", "url": "https://admin.example.com/"}}})
	}
	for range 2 {
		e.clock.Advance(time.Minute)
		e.browserRunFixture(f.org, browserAuto, f.task)
	}

	// Vendor assessments: two completed ones a day apart.
	for range 2 {
		e.clock.Advance(24 * time.Hour)
		a := &app.VendorAssessment{ID: app.NewID(app.PrefixVendorAssessment), VendorID: f.vendor, Status: app.AssessmentCompleted,
			Website: "https://vendor.example.com", Reasons: []string{}, RequestedBy: "test", CreatedAt: e.clock.Now()}
		if err := e.db.CreateVendorAssessment(bg, f.org, a); err != nil {
			t.Fatal(err)
		}
	}
	return []struct {
		path, sort, filter string
		noun               string
	}{
		{"/integrations/" + ldapConn + "/sync", "startedAt", "status=succeeded", "sync runs"},
		{"/tasks/" + f.task + "/automations", "createdAt", "automation=" + auto, "runs"},
		{"/tasks/" + f.task + "/automations/" + auto, "evaluationStatus", "status=completed", "runs"},
		{"/browser-automations", "name", "taskId=" + f.task, "browser automations"},
		{"/browser-automations/" + browserAuto, "createdAt", "status=completed", "runs"},
		{"/cloud-security", "resourceName", "connection=" + cloudConn, "cloud findings"},
		{"/vendors/" + f.vendor, "createdAt", "status=completed", "assessments"},
	}
}

// TestUIRunListFilters: a bad filter value of the converted lists is
// marked on the page (422), never a 500 or a file.
func TestUIRunListFilters(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Run filters")
	b := e.browser()
	b.signIn(f.owner)
	for _, p := range []string{"/tasks/" + f.task + "/automations?verdict=maybe", "/browser-automations?lastRunStatus=lost",
		"/vendors/" + f.vendor + "?status=lost&format=csv", "/cloud-security?severity=huge", "/tasks?sort=nope"} {
		rec := b.get(p)
		wantStatus(t, rec, http.StatusUnprocessableEntity)
		if !strings.Contains(rec.Body.String(), "must be one of") {
			t.Errorf("%s: the error is not on the page", p)
		}
	}
}
