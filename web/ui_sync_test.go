package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/ldap"
	"github.com/compliance-appliance/compliance/integrations/ldap/ldaptest"
)

// TestUIDirectorySync: the connection page of a directory offers "Sync
// now" and "Dry run"; a run's page lists its per-person changes; the
// people page shows each person's source and two-factor status; auditors
// read and cannot sync.
func TestUIDirectorySync(t *testing.T) {
	dir := ldaptest.Start(t, 20, 0)
	e := newTestServer(t)
	e.app.RegisterIntegrationProviders(ldap.New(nil))
	f := e.uiFixture("Acme")
	key := e.key(f.org, app.RoleOwner)
	rec := e.do("POST", "/v1/integrations/connections", key, map[string]any{"providerSlug": "ldap", "credentials": dir.Credentials(),
		"variables": map[string]string{"baseDn": ldaptest.PeopleDN}})
	wantStatus(t, rec, http.StatusCreated)
	conn := obj(t, rec)["id"].(string)

	owner := e.browser()
	owner.signIn(f.owner)
	rec = owner.get("/integrations/" + conn)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Sync now", "Dry run", `href="/integrations/`+conn+`/sync"`)
	rec = owner.post("/integrations/"+conn+"/sync", url.Values{"dryRun": {"true"}})
	loc := wantRedirect(t, rec, "/integrations/sync/runs/syr_")
	rec = owner.get(loc)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "dry run: nothing changed", "user00002@example.test", "Create")
	rec = owner.post("/integrations/"+conn+"/sync", url.Values{})
	loc = wantRedirect(t, rec, "/integrations/sync/runs/syr_")
	rec = owner.get(loc)
	wantBody(t, rec, "Succeeded", "created", "user00002@example.test")
	rec = owner.get("/integrations/" + conn + "/sync")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Sync runs", "dry run", strings.TrimPrefix(loc, "/integrations/sync/runs/"), "Employee sync provider")
	rec = owner.post("/integrations/"+conn+"/sync/settings", url.Values{"employeeSyncProvider": {"ldap"}, "twoFactorSource": {""}})
	wantRedirect(t, rec, "/integrations/"+conn+"/sync?done=sync-settings")
	rec = owner.get("/people?perPage=100")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "<th scope=\"col\">Source</th>", "Directory", "Manual", "Unknown")

	auditor := e.browser()
	auditor.signIn(f.auditor)
	rec = auditor.get(loc)
	wantStatus(t, rec, http.StatusOK)
	rec = auditor.get("/integrations/" + conn + "/sync")
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, "Sync now")
	wantStatus(t, auditor.post("/integrations/"+conn+"/sync", url.Values{}), http.StatusForbidden)
}
