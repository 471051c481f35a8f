package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/custom"
)

// TestUIIntegrationPages: the catalog with its connect form, connecting,
// the connection page with checks, runs and results, the actions for the
// roles that may take them; auditors read; employees are refused.
func TestUIIntegrationPages(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	e.app.RegisterIntegrationProviders(newFakeProvider(), custom.New())

	owner := e.browser()
	owner.signIn(f.owner)
	rec := owner.get("/integrations")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "<h1>Integrations</h1>", "Fake directory", `name="cred.token"`, `type="password"`, "MFA enforced", `href="/integrations"`)
	// A missing credential is named; nothing is created.
	rec = owner.post("/integrations", url.Values{"providerSlug": {"fake"}, "name": {"Directory"}})
	wantBody(t, rec, "credentials.token")
	rec = owner.post("/integrations", url.Values{"providerSlug": {"fake"}, "name": {"Directory"}, "cred.token": {fakeToken}, "syncFrequency": {"daily"}})
	loc := wantRedirect(t, rec, "/integrations/icn_")
	conn := strings.TrimPrefix(loc, "/integrations/")
	rec = owner.post("/integrations/"+conn+"/test", url.Values{})
	wantBody(t, rec, "the credentials work", "audit-bot")
	wantNoBody(t, rec, fakeToken)
	rec = owner.post("/integrations/"+conn+"/run", url.Values{})
	wantRedirect(t, rec, "/integrations/"+conn+"?done=run-queued")
	if _, err := e.app.ProcessQueuedRuns(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec = owner.get("/integrations/" + conn)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Directory", "MFA enforced", "1 fail", "bob", "MFA fail", "Run now", "Disconnect", "Record exception", "iso27001-2022 A.8.5")
	wantNoBody(t, rec, fakeToken)
	// A push connection shows its token once.
	rec = owner.post("/integrations", url.Values{"providerSlug": {"custom"}, "name": {"Script"}})
	wantBody(t, rec, "Push token, shown this once", app.PushTokenPrefix)

	auditor := e.browser()
	auditor.signIn(f.auditor)
	rec = auditor.get("/integrations/" + conn)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "MFA enforced", "bob")
	wantNoBody(t, rec, "Run now", "Record exception", `action="/integrations/`+conn+`/pause"`)
	wantStatus(t, auditor.post("/integrations/"+conn+"/run", url.Values{}), http.StatusForbidden)
	wantNoBody(t, auditor.get("/integrations"), `name="cred.token"`)

	emp := e.browser()
	emp.signIn(f.employee)
	if rec := emp.get("/integrations"); rec.Code != http.StatusForbidden {
		t.Fatalf("employee: %d", rec.Code)
	}
	wantNoBody(t, emp.get("/"), `href="/integrations"`)

	// Pause and disconnect.
	wantRedirect(t, owner.post("/integrations/"+conn+"/pause", url.Values{}), "/integrations/"+conn+"?done=paused")
	wantBody(t, owner.get("/integrations/"+conn), "Resume")
	wantRedirect(t, owner.post("/integrations/"+conn+"/disconnect", url.Values{}), "/integrations/"+conn+"?done=disconnected")
}
