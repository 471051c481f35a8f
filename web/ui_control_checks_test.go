package web

import (
	"net/http"
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
