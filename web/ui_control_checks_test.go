package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestUIControlAutomatedChecks: the control page lists the checks that
// evidence it with the connection's last result and a link to the run;
// employees do not see the panel.
func TestUIControlAutomatedChecks(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	conn := e.connect(map[string]any{"providerSlug": "fake", "name": "Directory", "credentials": map[string]any{"token": fakeToken}})
	ctl := e.controlFor("A.8.13")
	e.withPassword(e.org, "admin@acme.test", app.RoleAdmin)
	e.withPassword(e.org, "emp@acme.test", app.RoleEmployee)
	b := e.browser()
	b.signIn("admin@acme.test")
	rec := b.get("/controls/" + ctl)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Automated checks", "Backups run", "fake.backup", "Not run yet", `href="/integrations/`+conn+`"`)
	run := e.run(conn)
	rec = b.get("/controls/" + ctl)
	wantBody(t, rec, `href="/integrations/`+conn+`?run=`+run["id"].(string)+`"`, "1 passed, 0 failed")
	wantNoBody(t, rec, "Not run yet")

	emp := e.browser()
	emp.signIn("emp@acme.test")
	if rec := emp.get("/controls/" + ctl); rec.Code == http.StatusOK {
		wantNoBody(t, rec, "Automated checks")
	}
}

// TestUIConnectionCredentials: the connection page changes credentials;
// blank fields keep their values and nothing stored is shown.
func TestUIConnectionCredentials(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	conn := e.connect(map[string]any{"providerSlug": "fake", "name": "Directory", "credentials": map[string]any{"token": fakeToken}})
	e.withPassword(e.org, "admin@acme.test", app.RoleAdmin)
	b := e.browser()
	b.signIn("admin@acme.test")
	page := "/integrations/" + conn
	rec := b.get(page)
	wantBody(t, rec, "Change credentials", `name="cred-token"`, `name="cred-baseUrl"`)
	wantNoBody(t, rec, fakeToken)
	// Blank: unchanged (the test still succeeds).
	if rec := b.post(page+"/credentials", url.Values{"cred-token": {""}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("blank save: %d", rec.Code)
	}
	if res, err := e.app.TestConnection(e.ctx(e.org), conn); err != nil || !res.Success {
		t.Fatalf("after a blank save: %+v %v", res, err)
	}
	// A malformed URL is an error on the field; a new token replaces the old.
	b.get(page)
	rec = b.post(page+"/credentials", url.Values{"cred-baseUrl": {"not a url"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, "credentials.baseUrl")
	rec = b.post(page+"/credentials", url.Values{"cred-token": {"tok-ROTATED-77"}})
	if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Location"), "credentials-saved") {
		t.Fatalf("save: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	if res, err := e.app.TestConnection(e.ctx(e.org), conn); err != nil || res.Success {
		t.Fatalf("the old token still works: %+v %v", res, err)
	}
	wantNoBody(t, b.get(page), "tok-ROTATED-77")
}
