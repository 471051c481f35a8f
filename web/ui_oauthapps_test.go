package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/ui"
)

var secretRe = regexp.MustCompile(`id="new-secret" type="text" readonly value="(cmps_[^"]+)"`)

// shownSecret returns the client secret shown on an answer page, which
// must not be a redirect.
func shownSecret(t *testing.T, code int, loc, body string) string {
	t.Helper()
	m := secretRe.FindStringSubmatch(body)
	if m == nil || loc != "" {
		t.Fatalf("no client secret on the answer page (status %d, location %q)", code, loc)
	}
	return m[1]
}

// personCtx acts as a person signed in with a session.
func personCtx(org, userID string, role app.Role) context.Context {
	return app.WithPrincipal(context.Background(), &app.Principal{OrgID: org, Role: role, AuthType: app.AuthSession, UserID: userID})
}

// TestUIOAuthApps: roles that manage keys register, edit, re-key and
// delete OAuth apps; the client secret is shown once on the answer page;
// other roles are offered nothing and refused; another organization's
// apps are 404.
func TestUIOAuthApps(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	other := e.uiFixture("Globex")
	ctx := e.ctx(f.org)
	admin := e.browser()
	admin.signIn(f.admin)

	rec := admin.get("/oauth-apps")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, `href="/oauth-apps" aria-current="page"`, "No OAuth apps yet", "Register an app", `<label for="redirectUris">`,
		`<label for="scope-compliance:read">`, "/oauth/authorize")

	rec = admin.post("/oauth-apps", url.Values{"name": {" "}, "redirectUris": {"ftp://files.example/cb"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="name-error"`, `id="redirectUris-error"`, `aria-describedby="redirectUris-error"`, "ftp://files.example/cb")

	rec = admin.post("/oauth-apps", url.Values{"name": {"Reporting"}, "description": {"Monthly board report"},
		"redirectUris": {"https://reports.example/callback\r\n\r\nhttp://127.0.0.1:8765/cb"}, "scopes": {app.ScopeRead}})
	wantStatus(t, rec, http.StatusCreated)
	secret := shownSecret(t, rec.Code, rec.Header().Get("Location"), rec.Body.String())
	wantBody(t, rec, "App registered.", "shown only this once", "Reporting")
	apps, err := e.app.ListOAuthApps(ctx)
	if err != nil || len(apps) != 1 {
		t.Fatalf("apps: %+v %v", apps, err)
	}
	a := apps[0]
	if a.Name != "Reporting" || len(a.RedirectURIs) != 2 || len(a.Scopes) != 1 || a.Scopes[0] != app.ScopeRead || a.SecretHash != app.HashKey(secret) {
		t.Fatalf("registered app: %+v", a)
	}
	rec = admin.get("/oauth-apps/" + a.ID)
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, secret, `id="new-secret"`)
	wantBody(t, rec, a.ID, "Issue a new client secret", "Delete app", "https://reports.example/callback\nhttp://127.0.0.1:8765/cb")
	wantBody(t, admin.get("/oauth-apps"), `href="/oauth-apps/`+a.ID+`"`)

	// Edit.
	rec = admin.post("/oauth-apps/"+a.ID, url.Values{"name": {"Reporting"}, "redirectUris": {"https://reports.example/callback"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="scopes-error"`)
	wantRedirect(t, admin.post("/oauth-apps/"+a.ID, url.Values{"name": {"Board reports"}, "clientUri": {"https://reports.example"},
		"redirectUris": {"https://reports.example/cb2"}, "scopes": {app.ScopeRead, app.ScopeWrite}}), "/oauth-apps/"+a.ID+"?done=saved")
	got, err := e.app.GetOAuthApp(ctx, a.ID)
	if err != nil || got.Name != "Board reports" || strings.Join(got.RedirectURIs, ",") != "https://reports.example/cb2" || len(got.Scopes) != 2 ||
		got.ClientURI == nil || *got.ClientURI != "https://reports.example" {
		t.Fatalf("edited app: %+v %v", got, err)
	}

	// Rotate: a new secret shown once; the old one no longer matches.
	rec = admin.post("/oauth-apps/"+a.ID+"/rotate-secret", nil)
	wantStatus(t, rec, http.StatusOK)
	rotated := shownSecret(t, rec.Code, rec.Header().Get("Location"), rec.Body.String())
	if got, _ = e.app.GetOAuthApp(ctx, a.ID); rotated == secret || got.SecretHash != app.HashKey(rotated) {
		t.Fatal("the secret was not replaced")
	}

	// Other roles see no entry and are refused.
	for _, email := range []string{f.auditor, f.employee} {
		b := e.browser()
		b.signIn(email)
		rec = b.get("/")
		wantNoBody(t, rec, `href="/oauth-apps"`)
		wantBody(t, rec, `href="/connected-apps"`)
		for _, path := range []string{"/oauth-apps", "/oauth-apps/" + a.ID} {
			wantStatus(t, b.get(path), http.StatusForbidden)
		}
		for _, path := range []string{"/oauth-apps", "/oauth-apps/" + a.ID, "/oauth-apps/" + a.ID + "/rotate-secret", "/oauth-apps/" + a.ID + "/delete"} {
			rec = b.post(path, url.Values{"name": {"Sneaky"}, "redirectUris": {"https://x.example/cb"}})
			wantStatus(t, rec, http.StatusForbidden)
			wantBody(t, rec, "Your role does not allow this")
		}
	}
	if got, _ = e.app.GetOAuthApp(ctx, a.ID); got.Name != "Board reports" || got.SecretHash != app.HashKey(rotated) {
		t.Fatal("a refused post changed the app")
	}

	// Another organization's app is 404.
	oa, err := e.app.CreateOAuthApp(e.ctx(other.org), app.OAuthClientInput{Name: app.Ptr("Globex tool"), RedirectURIs: []string{"https://globex.example/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	rec = admin.get("/oauth-apps/" + oa.ID)
	wantStatus(t, rec, http.StatusNotFound)
	wantNoBody(t, rec, "Globex tool")
	for _, path := range []string{"/oauth-apps/" + oa.ID, "/oauth-apps/" + oa.ID + "/rotate-secret", "/oauth-apps/" + oa.ID + "/delete"} {
		wantStatus(t, admin.post(path, url.Values{"name": {"Taken"}, "redirectUris": {"https://x.example/cb"}, "scopes": {app.ScopeRead}}), http.StatusNotFound)
	}
	if got, err := e.app.GetOAuthApp(e.ctx(other.org), oa.ID); err != nil || got.Name != "Globex tool" || got.SecretHash != oa.SecretHash {
		t.Fatalf("another organization's app changed: %v", err)
	}

	// Delete.
	wantRedirect(t, admin.post("/oauth-apps/"+a.ID+"/delete", nil), "/oauth-apps?done=app-deleted")
	if _, err := e.app.GetOAuthApp(ctx, a.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	wantBody(t, admin.get("/oauth-apps?done=app-deleted"), "App deleted", "No OAuth apps yet")
}

// TestUIConnectedApps: every signed-in person sees the apps they
// approved, only theirs, and disconnects them; a grant of someone else or
// of another organization is 404.
func TestUIConnectedApps(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	other := e.uiFixture("Globex")
	ctx := e.ctx(f.org)
	agent, err := e.app.CreateOAuthApp(ctx, app.OAuthClientInput{Name: app.Ptr("Agent Smith"), RedirectURIs: []string{"https://agent.example/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := e.app.CreateOAuthApp(ctx, app.OAuthClientInput{Name: app.Ptr("Owner Tool"), RedirectURIs: []string{"https://tool.example/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	empCtx := personCtx(f.org, f.employeeID, app.RoleEmployee)
	mine, err := e.app.Consent(empCtx, agent.ID, []string{app.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	owners, err := e.app.Consent(personCtx(f.org, f.ownerID, app.RoleOwner), tool.ID, app.Scopes)
	if err != nil {
		t.Fatal(err)
	}
	oapp, err := e.app.CreateOAuthApp(e.ctx(other.org), app.OAuthClientInput{Name: app.Ptr("Globex agent"), RedirectURIs: []string{"https://g.example/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := e.app.Consent(personCtx(other.org, other.ownerID, app.RoleOwner), oapp.ID, app.Scopes)
	if err != nil {
		t.Fatal(err)
	}

	aud := e.browser()
	aud.signIn(f.auditor)
	rec := aud.get("/connected-apps")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "No apps are connected", "consent page")
	wantNoBody(t, rec, "Agent Smith", "Owner Tool")

	emp := e.browser()
	emp.signIn(f.employee)
	rec = emp.get("/connected-apps")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Agent Smith", app.ScopeRead, `action="/connected-apps/`+mine.ID+`/revoke"`, `aria-current="page"`)
	wantNoBody(t, rec, "Owner Tool", owners.ID)
	// Someone else's grant and another organization's are 404.
	for _, g := range []string{owners.ID, theirs.ID} {
		rec = emp.post("/connected-apps/"+g+"/revoke", nil)
		wantStatus(t, rec, http.StatusNotFound)
	}
	if l, _ := e.app.ListMyGrants(personCtx(f.org, f.ownerID, app.RoleOwner)); len(l) != 1 {
		t.Fatal("the owner's grant was revoked by someone else")
	}
	if l, _ := e.app.ListMyGrants(personCtx(other.org, other.ownerID, app.RoleOwner)); len(l) != 1 {
		t.Fatal("another organization's grant was revoked")
	}
	// Without the CSRF token nothing happens.
	wantStatus(t, emp.post("/connected-apps/"+mine.ID+"/revoke", url.Values{ui.CSRFField: {"forged"}}), http.StatusForbidden)
	loc := wantRedirect(t, emp.post("/connected-apps/"+mine.ID+"/revoke", nil), "/connected-apps?done=app-disconnected")
	wantBody(t, emp.get(loc), "App disconnected", "No apps are connected")
	if l, err := e.app.ListMyGrants(empCtx); err != nil || len(l) != 0 {
		t.Fatalf("grants after revoking: %+v %v", l, err)
	}
	owner := e.browser()
	owner.signIn(f.owner)
	wantBody(t, owner.get("/connected-apps"), "Owner Tool", "Disconnect")
}
