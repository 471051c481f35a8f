package web

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"golang.org/x/crypto/argon2"
)

const testPassword = "correct horse battery staple"

// cheapHash is an argon2id hash with tiny parameters so tests stay fast;
// verification reads the parameters from the hash.
func cheapHash(pw string) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(pw), salt, 1, 64, 1, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=64,t=1,p=1$%s$%s", argon2.Version, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// login creates a person with a password in org (unless email exists) and
// signs in, returning the Cookie header value and the CSRF token.
func (e *testEnv) withPassword(orgID, email string, role app.Role) string {
	e.t.Helper()
	id := e.person(orgID, email, role)
	if err := e.db.SetPasswordHash(context.Background(), id, cheapHash(testPassword)); err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *testEnv) login(email string) (cookie, csrf string) {
	e.t.Helper()
	rec := e.do("POST", "/v1/auth/login", "", map[string]string{"email": email, "password": testPassword})
	wantStatus(e.t, rec, http.StatusOK)
	for _, c := range rec.Result().Cookies() {
		if c.Name == httpx.SessionCookie {
			cookie = c.Name + "=" + c.Value
		}
	}
	if cookie == "" {
		e.t.Fatal("no session cookie set")
	}
	csrf, _ = obj(e.t, rec)["csrfToken"].(string)
	if csrf == "" {
		e.t.Fatal("no csrfToken")
	}
	return cookie, csrf
}

func TestSessionLoginUseLogout(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	id := e.withPassword(org, "ada@example.com", app.RoleAdmin)

	rec := e.do("POST", "/v1/auth/login", "", map[string]string{"email": "Ada@Example.com ", "password": testPassword})
	wantStatus(t, rec, http.StatusOK)
	var c *http.Cookie
	for _, ck := range rec.Result().Cookies() {
		if ck.Name == httpx.SessionCookie {
			c = ck
		}
	}
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.Path != "/" {
		t.Fatalf("cookie flags wrong: %+v", c)
	}
	if strings.Contains(c.Value, "ses_") {
		t.Fatal("cookie must be encrypted")
	}
	body := obj(t, rec)
	person := body["person"].(map[string]any)
	if person["id"] != id || person["email"] != "ada@example.com" || person["lastLoginAt"] == nil {
		t.Fatalf("person: %v", person)
	}
	orgs := body["organizations"].([]any)
	if len(orgs) != 1 || orgs[0].(map[string]any)["id"] != org || orgs[0].(map[string]any)["role"] != "admin" {
		t.Fatalf("organizations: %v", orgs)
	}
	cookie := c.Name + "=" + c.Value
	csrf := body["csrfToken"].(string)

	// The people list shows the last sign-in.
	rec = e.do("GET", "/v1/people/"+id, e.key(org, app.RoleOwner), nil)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["lastLoginAt"] == nil {
		t.Fatal("lastLoginAt not recorded")
	}

	rec = e.do("GET", "/v1/auth/me", "", nil, "Cookie", cookie)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["csrfToken"] != csrf {
		t.Fatal("me must return the same csrfToken")
	}

	rec = e.do("GET", "/v1/vendors", "", nil, "Cookie", cookie)
	wantStatus(t, rec, http.StatusOK)
	body = obj(t, rec)
	au, _ := body["authenticatedUser"].(map[string]any)
	if body["authType"] != "session" || au["id"] != id || au["email"] != "ada@example.com" {
		t.Fatalf("vendor list auth fields: %v", body)
	}

	vendor := map[string]any{"name": "Cloudy", "category": "cloud"}
	rec = e.do("POST", "/v1/vendors", "", vendor, "Cookie", cookie)
	wantError(t, rec, http.StatusForbidden, "forbidden")
	rec = e.do("POST", "/v1/vendors", "", vendor, "Cookie", cookie, httpx.CSRFHeader, "wrong")
	wantError(t, rec, http.StatusForbidden, "forbidden")
	rec = e.do("POST", "/v1/vendors", "", vendor, "Cookie", cookie, httpx.CSRFHeader, csrf)
	wantStatus(t, rec, http.StatusCreated)

	rec = e.do("POST", "/v1/auth/logout", "", nil, "Cookie", cookie)
	wantError(t, rec, http.StatusForbidden, "forbidden")
	rec = e.do("POST", "/v1/auth/logout", "", nil, "Cookie", cookie, httpx.CSRFHeader, csrf)
	wantStatus(t, rec, http.StatusNoContent)
	rec = e.do("GET", "/v1/auth/me", "", nil, "Cookie", cookie)
	wantError(t, rec, http.StatusUnauthorized, "unauthorized")
	rec = e.do("GET", "/v1/vendors", "", nil, "Cookie", cookie)
	wantError(t, rec, http.StatusUnauthorized, "unauthorized")

	// A forged cookie is rejected; sign-in still works with it present.
	rec = e.do("GET", "/v1/vendors", "", nil, "Cookie", httpx.SessionCookie+"=forged")
	wantError(t, rec, http.StatusUnauthorized, "unauthorized")
	rec = e.do("POST", "/v1/auth/login", "", map[string]string{"email": "ada@example.com", "password": testPassword}, "Cookie", httpx.SessionCookie+"=forged")
	wantStatus(t, rec, http.StatusOK)
}

func TestSessionLoginErrors(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	e.withPassword(org, "ada@example.com", app.RoleAdmin)
	wantField(t, e.do("POST", "/v1/auth/login", "", map[string]string{"password": "x"}), "email")
	wantField(t, e.do("POST", "/v1/auth/login", "", map[string]string{"email": "ada@example.com"}), "password")
	wantField(t, e.do("POST", "/v1/auth/login", "", "not json"), "body")
	wantError(t, e.do("POST", "/v1/auth/login", "", map[string]string{"email": "ada@example.com", "password": "wrong password!"}), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("POST", "/v1/auth/login", "", map[string]string{"email": "nobody@example.com", "password": "wrong password!"}), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("GET", "/v1/auth/me", "", nil), http.StatusUnauthorized, "unauthorized")
	// A person without a password cannot sign in.
	e.person(org, "nopw@example.com", app.RoleAdmin)
	wantError(t, e.do("POST", "/v1/auth/login", "", map[string]string{"email": "nopw@example.com", "password": ""}), http.StatusBadRequest, "validation_error")
}

func TestSessionSecureCookieOverTLS(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	e.withPassword(org, "ada@example.com", app.RoleAdmin)
	req := httptest.NewRequest("POST", "https://appliance.example/v1/auth/login", strings.NewReader(`{"email":"ada@example.com","password":"`+testPassword+`"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	wantStatus(t, rec, http.StatusOK)
	for _, c := range rec.Result().Cookies() {
		if c.Name == httpx.SessionCookie && !c.Secure {
			t.Fatal("cookie over TLS must be Secure")
		}
	}
}

func TestSessionOrganizationSelection(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	a := e.org("Acme", app.PlanProfessional)
	b := e.org("Beta", app.PlanProfessional)
	other := e.org("Other", app.PlanProfessional)
	e.withPassword(a, "ada@example.com", app.RoleAdmin)
	if _, err := e.app.CreatePerson(e.ctx(b), app.PersonCreate{Name: "Ada", Email: "ada@example.com", Role: "auditor"}); err != nil {
		t.Fatal(err)
	}
	cookie, csrf := e.login("ada@example.com")
	rec := e.do("GET", "/v1/auth/me", "", nil, "Cookie", cookie)
	wantStatus(t, rec, http.StatusOK)
	if n := len(obj(t, rec)["organizations"].([]any)); n != 2 {
		t.Fatalf("want 2 organizations, got %d", n)
	}
	wantField(t, e.do("GET", "/v1/vendors", "", nil, "Cookie", cookie), "X-Organization-Id")
	wantError(t, e.do("GET", "/v1/vendors", "", nil, "Cookie", cookie, "X-Organization-Id", other), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/vendors", "", nil, "Cookie", cookie, "X-Organization-Id", "org_nope"), http.StatusNotFound, "not_found")

	rec = e.do("GET", "/v1/organization", "", nil, "Cookie", cookie, "X-Organization-Id", b)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["id"] != b {
		t.Fatal("X-Organization-Id must pick the organization")
	}
	vendor := map[string]any{"name": "Cloudy", "category": "cloud"}
	// Auditor in Beta: the membership role applies.
	wantError(t, e.do("POST", "/v1/vendors", "", vendor, "Cookie", cookie, httpx.CSRFHeader, csrf, "X-Organization-Id", b), http.StatusForbidden, "forbidden")
	wantStatus(t, e.do("POST", "/v1/vendors", "", vendor, "Cookie", cookie, httpx.CSRFHeader, csrf, "X-Organization-Id", a), http.StatusCreated)

	// A person of one organization needs no header.
	e.withPassword(a, "bob@example.com", app.RoleEmployee)
	cookie2, _ := e.login("bob@example.com")
	wantStatus(t, e.do("GET", "/v1/vendors", "", nil, "Cookie", cookie2), http.StatusOK)

	// Deactivated in Beta: only Acme remains, so no header is needed.
	if _, err := e.app.UpdatePerson(e.ctx(b), mustUserID(t, e, "ada@example.com"), app.PersonPatch{IsActive: app.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	rec = e.do("GET", "/v1/organization", "", nil, "Cookie", cookie)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["id"] != a {
		t.Fatal("the only active organization must be chosen")
	}
	wantError(t, e.do("GET", "/v1/organization", "", nil, "Cookie", cookie, "X-Organization-Id", b), http.StatusNotFound, "not_found")
}

func mustUserID(t *testing.T, e *testEnv, email string) string {
	t.Helper()
	id, err := e.db.FindUserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestSessionLifetimes(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	e.withPassword(org, "ada@example.com", app.RoleAdmin)

	// Idle: 8 hours without use ends the session.
	cookie, _ := e.login("ada@example.com")
	e.clock.Advance(7 * time.Hour)
	wantStatus(t, e.do("GET", "/v1/auth/me", "", nil, "Cookie", cookie), http.StatusOK)
	e.clock.Advance(7 * time.Hour)
	wantStatus(t, e.do("GET", "/v1/auth/me", "", nil, "Cookie", cookie), http.StatusOK)
	e.clock.Advance(8*time.Hour + time.Second)
	wantError(t, e.do("GET", "/v1/vendors", "", nil, "Cookie", cookie), http.StatusUnauthorized, "unauthorized")

	// Absolute: 7 days after sign-in even when used all along.
	cookie, _ = e.login("ada@example.com")
	for i := 0; i < 7*24/6-1; i++ {
		e.clock.Advance(6 * time.Hour)
		rec := e.do("GET", "/v1/auth/me", "", nil, "Cookie", cookie)
		if rec.Code != http.StatusOK {
			t.Fatalf("session ended early after %d hours", (i+1)*6)
		}
	}
	e.clock.Advance(6*time.Hour + time.Minute)
	wantError(t, e.do("GET", "/v1/auth/me", "", nil, "Cookie", cookie), http.StatusUnauthorized, "unauthorized")
}

func TestLoginThrottling(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	e.withPassword(org, "ada@example.com", app.RoleAdmin)
	wrong := map[string]string{"email": "ada@example.com", "password": "not the password"}
	right := map[string]string{"email": "ada@example.com", "password": testPassword}
	for i := 0; i < 5; i++ {
		wantError(t, e.do("POST", "/v1/auth/login", "", wrong), http.StatusUnauthorized, "unauthorized")
	}
	// The account is locked, even for the right password, from any address.
	rec := e.do("POST", "/v1/auth/login", "", right)
	wantError(t, rec, http.StatusTooManyRequests, "rate_limited")
	if ra := rec.Header().Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After missing: %q", ra)
	}
	e.clock.Advance(61 * time.Second)
	wantStatus(t, e.do("POST", "/v1/auth/login", "", right), http.StatusOK)

	// Per address: 20 failures over many accounts lock the address.
	e.withPassword(org, "bob@example.com", app.RoleAdmin)
	for i := 0; i < 5; i++ {
		e.withPassword(org, fmt.Sprintf("user%d@example.com", i), app.RoleEmployee)
	}
	for i := 0; i < 20; i++ {
		// four failures each keep every account under its own limit
		body := map[string]string{"email": fmt.Sprintf("user%d@example.com", i%5), "password": "not the password"}
		rec := e.do("POST", "/v1/auth/login", "", body)
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("attempt %d: status %d", i, rec.Code)
		}
	}
	wantError(t, e.do("POST", "/v1/auth/login", "", map[string]string{"email": "bob@example.com", "password": testPassword}), http.StatusTooManyRequests, "rate_limited")
	// Another address is not affected.
	req := httptest.NewRequest("POST", "/v1/auth/login", strings.NewReader(`{"email":"bob@example.com","password":"`+testPassword+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "198.51.100.7:4242"
	rec = httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	wantStatus(t, rec, http.StatusOK)
}

func TestSetUserPasswordEndsSessions(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	e.withPassword(org, "ada@example.com", app.RoleAdmin)
	cookie, _ := e.login("ada@example.com")
	if _, err := e.app.SetUserPassword(context.Background(), "ada@example.com", "a brand new password"); err != nil {
		t.Fatal(err)
	}
	wantError(t, e.do("GET", "/v1/auth/me", "", nil, "Cookie", cookie), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("POST", "/v1/auth/login", "", map[string]string{"email": "ada@example.com", "password": testPassword}), http.StatusUnauthorized, "unauthorized")
	wantStatus(t, e.do("POST", "/v1/auth/login", "", map[string]string{"email": "ada@example.com", "password": "a brand new password"}), http.StatusOK)
	if _, err := e.app.SetUserPassword(context.Background(), "nobody@example.com", "a brand new password"); err == nil {
		t.Fatal("unknown email must fail")
	}
}

func TestClientAddressBehindTrustedProxies(t *testing.T) {
	t.Parallel()
	proxies, err := httpx.ParseProxies([]string{"10.0.0.0/8", "192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := httpx.ParseProxies([]string{"not-an-ip"}); err == nil {
		t.Fatal("a bad entry must be an error")
	}
	ss := &httpx.Sessions{Proxies: proxies}
	for _, c := range []struct{ peer, xff, want string }{
		{"203.0.113.5:1234", "198.51.100.9", "203.0.113.5"},                   // untrusted peer: header ignored
		{"10.1.2.3:1234", "198.51.100.9", "198.51.100.9"},                     // trusted proxy
		{"10.1.2.3:1234", "6.6.6.6, 198.51.100.9, 192.0.2.1", "198.51.100.9"}, // right-most untrusted hop
		{"10.1.2.3:1234", "", "10.1.2.3"},
		{"10.1.2.3:1234", "garbage", "10.1.2.3"},
	} {
		r := httptest.NewRequest("POST", "/v1/auth/login", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := ss.ClientAddress(r); got != c.want {
			t.Errorf("peer %s xff %q: got %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
}
