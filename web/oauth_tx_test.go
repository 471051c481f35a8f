package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/compliance-appliance/compliance/web/oauth"
)

// TestOAuthRegistrationLimitsAndCleanup: anonymous client registration is
// throttled per address (10, then one a minute: 429 with Retry-After), and
// a registered client nobody used is deleted a day later while a used one
// stays.
func TestOAuthRegistrationLimitsAndCleanup(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	e.withPassword(org, "ada@example.com", app.RoleAdmin)
	used := e.registerClient()
	p := newPKCE()
	authURL := authorizeQuery(used, app.ScopeRead, p)
	rec := e.do("GET", authURL, "", nil)
	page := rec.Body.String()
	rec = e.form("POST", "/oauth/login", url.Values{"email": {"ada@example.com"}, "password": {testPassword},
		"login_csrf": {hidden(t, page, "login_csrf")}, "return": {hidden(t, page, "return")}}, "Cookie", cookieOf(rec, oauth.LoginCSRFCookie))
	wantStatus(t, rec, http.StatusSeeOther)
	e.exchange(used, e.approve(authURL, cookieOf(rec, httpx.SessionCookie), org), p)

	var unused []string
	for range 9 {
		unused = append(unused, e.registerClient())
	}
	rec = e.do("POST", "/oauth/register", "", map[string]any{"client_name": "Eleventh", "redirect_uris": []string{testRedirect}})
	wantStatus(t, rec, http.StatusTooManyRequests)
	if m := obj(t, rec); m["error"] != "temporarily_unavailable" || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("throttled registration: %v %v", m, rec.Header())
	}
	e.clock.Advance(time.Minute)
	unused = append(unused, e.registerClient())

	// A day on, the unused clients go and the used one stays.
	e.clock.Advance(25 * time.Hour)
	if err := e.app.PurgeOAuthTokens(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range unused {
		if _, err := e.app.OAuthClient(context.Background(), id); !errors.Is(err, app.ErrNotFound) {
			t.Fatalf("unused client %s: %v", id, err)
		}
	}
	if _, err := e.app.OAuthClient(context.Background(), used); err != nil {
		t.Fatalf("used client: %v", err)
	}
}
