package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// TestOAuthTokenWritesAreAtomic: between fosite's BeginTX and Commit the
// token endpoint's writes are held and applied in one transaction, so a
// failed write leaves the used refresh token as it was (usable again)
// instead of rotated without a replacement; a committed rotation applies
// every write; outside a transaction writes apply at once.
func TestOAuthTokenWritesAreAtomic(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	s := &fositeStore{app: e.app}
	ctx := context.Background()
	token := func(kind, sig string) *app.OAuthToken {
		t.Helper()
		tok := &app.OAuthToken{Signature: sig, Kind: kind, RequestID: "req_1", GrantID: "grant_1", ClientID: "client_1",
			OrganizationID: "org_1", UserID: "usr_1", Active: true, Request: []byte(`{}`), ExpiresAt: time.Now().Add(time.Hour)}
		if err := e.app.SaveOAuthToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	active := func(kind, sig string) bool {
		t.Helper()
		tok, err := e.app.LoadOAuthToken(ctx, kind, sig)
		if err != nil {
			t.Fatal(err)
		}
		return tok.Active
	}
	token(kindRefresh, "refresh-1")
	token(kindAccess, "access-1")

	// A rotation whose later write fails: nothing of it lands.
	tx, err := s.BeginTX(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RotateRefreshToken(tx, "req_1", "refresh-1"); err != nil {
		t.Fatal(err)
	}
	if !active(kindRefresh, "refresh-1") {
		t.Fatal("a write inside the transaction applied before Commit")
	}
	failure := errors.New("disk full")
	if err := s.write(tx, func(context.Context) error { return failure }); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(tx); !errors.Is(err, failure) {
		t.Fatalf("commit: %v", err)
	}
	if !active(kindRefresh, "refresh-1") || !active(kindAccess, "access-1") {
		t.Fatal("a failed rotation left the refresh token or its access token ended")
	}

	// Rolled back: nothing lands either.
	tx, _ = s.BeginTX(ctx)
	if err := s.RotateRefreshToken(tx, "req_1", "refresh-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Rollback(tx); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(tx); err != nil {
		t.Fatal(err)
	}
	if !active(kindRefresh, "refresh-1") {
		t.Fatal("a rolled-back rotation applied")
	}

	// Committed: the old refresh and access tokens end, the new ones exist.
	tx, _ = s.BeginTX(ctx)
	if err := s.RotateRefreshToken(tx, "req_1", "refresh-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.write(tx, func(ctx context.Context) error {
		return e.app.SaveOAuthToken(ctx, &app.OAuthToken{Signature: "refresh-2", Kind: kindRefresh, RequestID: "req_1", GrantID: "grant_1",
			ClientID: "client_1", OrganizationID: "org_1", UserID: "usr_1", Active: true, Request: []byte(`{}`), ExpiresAt: time.Now().Add(time.Hour)})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(tx); err != nil {
		t.Fatal(err)
	}
	if active(kindRefresh, "refresh-1") || active(kindAccess, "access-1") || !active(kindRefresh, "refresh-2") {
		t.Fatal("a committed rotation did not apply every write")
	}

	// A second rotation of the same token (a concurrent refresh that lost)
	// fails at Commit and changes nothing.
	tx, _ = s.BeginTX(ctx)
	if err := s.RotateRefreshToken(tx, "req_1", "refresh-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(tx); err == nil {
		t.Fatal("rotating a used refresh token must fail")
	}
	if !active(kindRefresh, "refresh-2") {
		t.Fatal("the failed rotation changed the current token")
	}

	// Without BeginTX, writes apply at once.
	if err := s.RevokeRefreshToken(ctx, "req_1"); err != nil {
		t.Fatal(err)
	}
	if active(kindRefresh, "refresh-2") {
		t.Fatal("a write outside a transaction did not apply")
	}
}

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
		"login_csrf": {hidden(t, page, "login_csrf")}, "return": {hidden(t, page, "return")}}, "Cookie", cookieOf(rec, loginCSRFCookie))
	wantStatus(t, rec, http.StatusSeeOther)
	e.exchange(used, e.approve(authURL, cookieOf(rec, sessionCookie), org), p)

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
