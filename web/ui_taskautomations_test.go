package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/automation"
)

// TestUITaskAutomationPages: a task's automations page with the template
// and script forms, creating from a template, the automation page with the
// script editor, a new version, run now with the run's log and verdict,
// disabling; auditors and the assignee read without the forms.
func TestUITaskAutomationPages(t *testing.T) {
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	e.app.SetScriptRunner(automation.New(nil), app.TaskAutomationOptions{})
	base := "/tasks/" + f.task + "/automations"

	owner := e.browser()
	owner.signIn(f.owner)
	rec := owner.get(base)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Automations of", "TLS and headers of a URL", "GitLab protected branches", "HTTP JSON endpoint field equals value",
		"certificate expiry of a host", `name="param.url"`, `name="script"`)
	wantBody(t, owner.get("/tasks"), `href="`+base+`"`)

	// A bad host is named; a script that does not compile is named with its line.
	rec = owner.post(base, url.Values{"name": {"x"}, "hosts": {"https://bad/"}, "script": {"result({})"}})
	wantBody(t, rec, "hosts")
	rec = owner.post(base, url.Values{"name": {"x"}, "script": {"x = 1\ny = (\n"}})
	wantBody(t, rec, "script", "line 3")
	rec = owner.post(base, url.Values{"templateId": {"certificate-expiry"}, "param.host": {"mail.example.com:465"}, "scheduleFrequency": {"weekly"}})
	loc := wantRedirect(t, rec, base+"/tau_")
	page := strings.TrimSuffix(loc, "?done=automation-created")
	rec = owner.get(page)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "certificate expiry of a host", "tls.inspect(HOST)", "Save as version 2", "Run now", "Disable", "mail.example.com", "Weekly")

	// A new version from the editor, then a run of it.
	rec = owner.post(page+"/versions", url.Values{"version": {"2"}, "script": {"log(\"checking\")\nresult({\"ok\": True})\n"}, "changelog": {"simpler"}})
	wantRedirect(t, rec, page+"?done=version-created")
	wantStatus(t, owner.post(page, url.Values{"name": {"Cert"}, "evaluationCriteria": {`result["ok"]`}, "hosts": {"mail.example.com"}, "scheduleFrequency": {"weekly"}}), http.StatusSeeOther)
	rec = owner.post(page+"/run", url.Values{})
	wantRedirect(t, rec, page+"?done=automation-run")
	if n, err := e.app.ProcessAutomationRuns(context.Background()); err != nil || n != 1 {
		t.Fatalf("runs: %d %v", n, err)
	}
	rec = owner.get(page)
	wantBody(t, rec, "v2", "simpler", "checking", "<strong>pass</strong>", `criteria `+"`"+`result[&#34;ok&#34;]`+"`"+` held`)
	wantStatus(t, owner.post(page, url.Values{"action": {"disable"}}), http.StatusSeeOther)
	wantBody(t, owner.get(page), "disabled", "Enable")

	auditor := e.browser()
	auditor.signIn(f.auditor)
	rec = auditor.get(page)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Cert", "checking")
	wantNoBody(t, rec, "Run now", "Save as version", `name="param.url"`)
	wantStatus(t, auditor.post(page+"/run", url.Values{}), http.StatusForbidden)

	// The employee the task is assigned to reads its automations and may
	// not run them.
	emp := e.browser()
	emp.signIn(f.employee)
	rec = emp.get(page)
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, "Run now", "Save as version")
	wantStatus(t, emp.post(page+"/run", url.Values{}), http.StatusForbidden)
}
