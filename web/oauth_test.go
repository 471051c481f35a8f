package web

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/compliance-appliance/compliance/web/oauth"
)

const testRedirect = "http://127.0.0.1:8765/callback"

// form sends an application/x-www-form-urlencoded request.
func (e *testEnv) form(method, path string, v url.Values, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return rec
}

func cookieOf(rec *httptest.ResponseRecorder, name string) string {
	for _, c := range rec.Result().Cookies() {
		if c.Name == name && c.Value != "" {
			return c.Name + "=" + c.Value
		}
	}
	return ""
}

var hiddenRe = regexp.MustCompile(`name="([a-z_]+)" value="([^"]*)"`)

func hidden(t *testing.T, page, name string) string {
	t.Helper()
	for _, m := range hiddenRe.FindAllStringSubmatch(page, -1) {
		if m[1] == name {
			return html.UnescapeString(m[2])
		}
	}
	t.Fatalf("no hidden field %s in page: %s", name, page)
	return ""
}

// registerClient registers a public client dynamically.
func (e *testEnv) registerClient() string {
	e.t.Helper()
	rec := e.do("POST", "/oauth/register", "", map[string]any{"client_name": "Test agent", "redirect_uris": []string{testRedirect},
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}})
	wantStatus(e.t, rec, http.StatusCreated)
	m := obj(e.t, rec)
	if m["token_endpoint_auth_method"] != "none" || m["client_secret"] != nil {
		e.t.Fatalf("registration must make a public client: %v", m)
	}
	return m["client_id"].(string)
}

type pkcePair struct{ verifier, challenge string }

func newPKCE() pkcePair {
	v := httpx.RandomString(32)
	sum := sha256.Sum256([]byte(v))
	return pkcePair{verifier: v, challenge: base64.RawURLEncoding.EncodeToString(sum[:])}
}

func authorizeQuery(clientID, scope string, p pkcePair) string {
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {testRedirect},
		"state": {"state-1234567"}, "code_challenge": {p.challenge}, "code_challenge_method": {"S256"}}
	if scope != "" {
		q.Set("scope", scope)
	}
	return "/oauth/authorize?" + q.Encode()
}

// approve walks the consent page with a session cookie and returns the code.
func (e *testEnv) approve(authURL, cookie, orgID string) string {
	e.t.Helper()
	rec := e.do("GET", authURL, "", nil, "Cookie", cookie)
	wantStatus(e.t, rec, http.StatusOK)
	page := rec.Body.String()
	if !strings.Contains(page, "Allow access?") {
		e.t.Fatalf("no consent page: %s", page)
	}
	rec = e.form("POST", authURL, url.Values{"csrf_token": {hidden(e.t, page, "csrf_token")}, "organization_id": {orgID}, "decision": {"approve"}}, "Cookie", cookie)
	if rec.Code != http.StatusSeeOther && rec.Code != http.StatusFound {
		e.t.Fatalf("approve: status %d: %s", rec.Code, rec.Body.String())
	}
	loc, err := url.Parse(rec.Header().Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), testRedirect) {
		e.t.Fatalf("redirect %q", rec.Header().Get("Location"))
	}
	if loc.Query().Get("state") != "state-1234567" || loc.Query().Get("code") == "" {
		e.t.Fatalf("redirect lacks code or state: %s", loc)
	}
	return loc.Query().Get("code")
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
}

func (e *testEnv) tokenReq(v url.Values, hdr ...string) (int, tokenResponse) {
	e.t.Helper()
	rec := e.form("POST", "/oauth/token", v, hdr...)
	var tr tokenResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &tr); err != nil {
		e.t.Fatalf("token response: %d %s", rec.Code, rec.Body.String())
	}
	return rec.Code, tr
}

func (e *testEnv) exchange(clientID, code string, p pkcePair) tokenResponse {
	e.t.Helper()
	status, tr := e.tokenReq(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect},
		"client_id": {clientID}, "code_verifier": {p.verifier}})
	if status != http.StatusOK || tr.AccessToken == "" || tr.RefreshToken == "" || !strings.EqualFold(tr.TokenType, "bearer") {
		e.t.Fatalf("exchange: %d %+v", status, tr)
	}
	return tr
}

func bearer(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

func TestOAuthFlowEndToEnd(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	other := e.org("Other", app.PlanProfessional)
	id := e.withPassword(org, "ada@example.com", app.RoleAdmin)
	if _, err := e.app.CreatePerson(e.ctx(other), app.PersonCreate{Name: "Ada", Email: "ada@example.com", Role: "auditor"}); err != nil {
		t.Fatal(err)
	}

	// Discovery.
	rec := e.do("GET", "/.well-known/oauth-authorization-server", "", nil)
	wantStatus(t, rec, http.StatusOK)
	md := obj(t, rec)
	if md["issuer"] != "http://example.com" || md["token_endpoint"] != "http://example.com/oauth/token" ||
		md["registration_endpoint"] != "http://example.com/oauth/register" {
		t.Fatalf("metadata: %v", md)
	}
	if m := md["code_challenge_methods_supported"].([]any); len(m) != 1 || m[0] != "S256" {
		t.Fatalf("only S256 may be offered: %v", m)
	}
	rec = e.do("GET", "/.well-known/oauth-protected-resource", "", nil)
	wantStatus(t, rec, http.StatusOK)
	if prm := obj(t, rec); prm["authorization_servers"].([]any)[0] != "http://example.com" {
		t.Fatalf("protected resource metadata: %v", prm)
	}

	clientID := e.registerClient()
	p := newPKCE()
	authURL := authorizeQuery(clientID, app.ScopeRead+" "+app.ScopeWrite, p)

	// Not signed in: the sign-in page, then back to the authorization.
	rec = e.do("GET", authURL, "", nil)
	wantStatus(t, rec, http.StatusOK)
	page := rec.Body.String()
	if !strings.Contains(page, `action="/oauth/login"`) || !strings.Contains(page, "Test agent") {
		t.Fatalf("sign-in page expected: %s", page)
	}
	loginCookie := cookieOf(rec, oauth.LoginCSRFCookie)
	loginForm := url.Values{"email": {"ada@example.com"}, "password": {testPassword}, "login_csrf": {hidden(t, page, "login_csrf")}, "return": {hidden(t, page, "return")}}
	// Without the double-submit cookie the form is refused.
	wantStatus(t, e.form("POST", "/oauth/login", loginForm), http.StatusForbidden)
	rec = e.form("POST", "/oauth/login", loginForm, "Cookie", loginCookie)
	wantStatus(t, rec, http.StatusSeeOther)
	if rec.Header().Get("Location") != authURL {
		t.Fatalf("sign-in must return to the authorization: %q", rec.Header().Get("Location"))
	}
	session := cookieOf(rec, httpx.SessionCookie)

	// Consent without the CSRF token is refused.
	rec = e.form("POST", authURL, url.Values{"organization_id": {org}, "decision": {"approve"}}, "Cookie", session)
	wantStatus(t, rec, http.StatusForbidden)

	code := e.approve(authURL, session, org)

	// A wrong verifier fails and does not consume the attempt for good.
	status, tr := e.tokenReq(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect},
		"client_id": {clientID}, "code_verifier": {newPKCE().verifier}})
	if status != http.StatusBadRequest || tr.Error != "invalid_grant" {
		t.Fatalf("wrong verifier: %d %+v", status, tr)
	}
	code = e.approve(authURL, session, org)
	tok := e.exchange(clientID, code, p)
	if tok.Scope != app.ScopeRead+" "+app.ScopeWrite {
		t.Fatalf("scope %q", tok.Scope)
	}
	// The code cannot be used twice.
	if status, _ := e.tokenReq(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect},
		"client_id": {clientID}, "code_verifier": {p.verifier}}); status != http.StatusBadRequest {
		t.Fatalf("code reuse: %d", status)
	}
	// Code reuse revokes what the code gave (RFC 6749 4.1.2).
	wantError(t, e.do("GET", "/v1/vendors", "", nil, bearer(tok.AccessToken)...), http.StatusUnauthorized, "unauthorized")

	code = e.approve(authURL, session, org)
	tok = e.exchange(clientID, code, p)

	// Calling the API as the person, with their role, in the chosen organization.
	rec = e.do("GET", "/v1/vendors", "", nil, bearer(tok.AccessToken)...)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["authType"] != "oauth" {
		t.Fatal("authType must be oauth")
	}
	rec = e.do("POST", "/v1/vendors", "", map[string]any{"name": "Cloudy", "category": "cloud"}, bearer(tok.AccessToken)...)
	wantStatus(t, rec, http.StatusCreated)
	rec = e.do("GET", "/v1/organization", "", nil, bearer(tok.AccessToken)...)
	if obj(t, rec)["id"] != org {
		t.Fatal("the token must act in the organization chosen at consent")
	}
	wantError(t, e.do("GET", "/v1/organization", "", nil, append(bearer(tok.AccessToken), "X-Organization-Id", other)...), http.StatusNotFound, "not_found")
	rec = e.do("GET", "/v1/people/"+id, "", nil, bearer(tok.AccessToken)...)
	wantStatus(t, rec, http.StatusOK)

	// Refresh rotates both tokens; the old access token stops working.
	status, tok2 := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {clientID}})
	if status != http.StatusOK || tok2.RefreshToken == tok.RefreshToken || tok2.AccessToken == tok.AccessToken {
		t.Fatalf("refresh: %d %+v", status, tok2)
	}
	wantError(t, e.do("GET", "/v1/vendors", "", nil, bearer(tok.AccessToken)...), http.StatusUnauthorized, "unauthorized")
	wantStatus(t, e.do("GET", "/v1/vendors", "", nil, bearer(tok2.AccessToken)...), http.StatusOK)

	// Reuse of the rotated refresh token revokes the whole family.
	status, tr = e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {clientID}})
	if status != http.StatusBadRequest || tr.Error != "invalid_grant" {
		t.Fatalf("reuse: %d %+v", status, tr)
	}
	wantError(t, e.do("GET", "/v1/vendors", "", nil, bearer(tok2.AccessToken)...), http.StatusUnauthorized, "unauthorized")
	if status, _ := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok2.RefreshToken}, "client_id": {clientID}}); status != http.StatusBadRequest {
		t.Fatalf("family must be revoked, refresh got %d", status)
	}

	// RFC 7009 revocation of a refresh token ends its access tokens too.
	tok3 := e.exchange(clientID, e.approve(authURL, session, org), p)
	wantStatus(t, e.do("GET", "/v1/vendors", "", nil, bearer(tok3.AccessToken)...), http.StatusOK)
	wantStatus(t, e.form("POST", "/oauth/revoke", url.Values{"token": {tok3.RefreshToken}, "client_id": {clientID}}), http.StatusOK)
	wantError(t, e.do("GET", "/v1/vendors", "", nil, bearer(tok3.AccessToken)...), http.StatusUnauthorized, "unauthorized")
	if status, _ := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok3.RefreshToken}, "client_id": {clientID}}); status != http.StatusBadRequest {
		t.Fatalf("revoked refresh token still works: %d", status)
	}

	// The person lists the grant and withdraws it; its tokens die at once.
	tok4 := e.exchange(clientID, e.approve(authURL, session, org), p)
	rec = e.do("GET", "/v1/auth/me", "", nil, "Cookie", session)
	csrf := obj(t, rec)["csrfToken"].(string)
	rec = e.do("GET", "/v1/oauth/grants", "", nil, "Cookie", session, "X-Organization-Id", org)
	wantStatus(t, rec, http.StatusOK)
	grants := obj(t, rec)["data"].([]any)
	if len(grants) != 1 || grants[0].(map[string]any)["clientId"] != clientID || grants[0].(map[string]any)["clientName"] != "Test agent" {
		t.Fatalf("grants: %v", grants)
	}
	gid := grants[0].(map[string]any)["id"].(string)
	wantError(t, e.do("DELETE", "/v1/oauth/grants/"+gid, "", nil, "Cookie", session, "X-Organization-Id", other, httpx.CSRFHeader, csrf), http.StatusNotFound, "not_found")
	wantStatus(t, e.do("DELETE", "/v1/oauth/grants/"+gid, "", nil, "Cookie", session, "X-Organization-Id", org, httpx.CSRFHeader, csrf), http.StatusNoContent)
	wantError(t, e.do("GET", "/v1/vendors", "", nil, bearer(tok4.AccessToken)...), http.StatusUnauthorized, "unauthorized")
	if status, _ := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok4.RefreshToken}, "client_id": {clientID}}); status != http.StatusBadRequest {
		t.Fatalf("refresh after grant revocation: %d", status)
	}
	wantError(t, e.do("GET", "/v1/oauth/grants", e.key(org, app.RoleOwner), nil), http.StatusForbidden, "forbidden")

	// Auditor membership in the other organization: the token is read-only there by role.
	tok5 := e.exchange(clientID, e.approve(authURL, session, other), p)
	wantError(t, e.do("POST", "/v1/vendors", "", map[string]any{"name": "X", "category": "cloud"}, bearer(tok5.AccessToken)...), http.StatusForbidden, "forbidden")
	// A role change applies to issued tokens at once.
	if _, err := e.app.UpdatePerson(e.ctx(other), id, app.PersonPatch{Role: app.Ptr("admin")}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("POST", "/v1/vendors", "", map[string]any{"name": "X", "category": "cloud"}, bearer(tok5.AccessToken)...), http.StatusCreated)
}

func TestOAuthRefusals(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	e.withPassword(org, "ada@example.com", app.RoleAdmin)
	clientID := e.registerClient()
	session, _ := e.login("ada@example.com")
	p := newPKCE()

	// plain PKCE and missing PKCE are refused with a redirect error.
	for name, q := range map[string]url.Values{
		"plain":   {"code_challenge": {p.verifier}, "code_challenge_method": {"plain"}},
		"missing": {},
	} {
		v := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {testRedirect}, "state": {"state-1234567"}}
		for k, vs := range q {
			v[k] = vs
		}
		rec := e.do("GET", "/oauth/authorize?"+v.Encode(), "", nil, "Cookie", session)
		loc, _ := url.Parse(rec.Header().Get("Location"))
		if loc == nil || loc.Query().Get("error") != "invalid_request" {
			t.Fatalf("%s PKCE: %d %q %s", name, rec.Code, rec.Header().Get("Location"), rec.Body.String())
		}
	}
	// An unregistered redirect URI never redirects.
	v := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"https://evil.example/cb"}, "state": {"state-1234567"},
		"code_challenge": {p.challenge}, "code_challenge_method": {"S256"}}
	rec := e.do("GET", "/oauth/authorize?"+v.Encode(), "", nil, "Cookie", session)
	if strings.Contains(rec.Header().Get("Location"), "evil") || rec.Code < 400 {
		t.Fatalf("unregistered redirect: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	// An unknown scope is refused.
	rec = e.do("GET", authorizeQuery(clientID, "admin", p), "", nil, "Cookie", session)
	if loc, _ := url.Parse(rec.Header().Get("Location")); loc == nil || loc.Query().Get("error") != "invalid_scope" {
		t.Fatalf("unknown scope: %d %q", rec.Code, rec.Header().Get("Location"))
	}

	// Deny sends access_denied back.
	authURL := authorizeQuery(clientID, app.ScopeRead, p)
	rec = e.do("GET", authURL, "", nil, "Cookie", session)
	page := rec.Body.String()
	rec = e.form("POST", authURL, url.Values{"csrf_token": {hidden(t, page, "csrf_token")}, "decision": {"deny"}}, "Cookie", session)
	if loc, _ := url.Parse(rec.Header().Get("Location")); loc == nil || loc.Query().Get("error") != "access_denied" {
		t.Fatalf("deny: %d %q", rec.Code, rec.Header().Get("Location"))
	}

	// A read-only token cannot write.
	tok := e.exchange(clientID, e.approve(authURL, session, org), p)
	wantStatus(t, e.do("GET", "/v1/vendors", "", nil, bearer(tok.AccessToken)...), http.StatusOK)
	wantError(t, e.do("POST", "/v1/vendors", "", map[string]any{"name": "X", "category": "cloud"}, bearer(tok.AccessToken)...), http.StatusForbidden, "forbidden")

	// Two concurrent refreshes with one token: exactly one wins.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := e.form("POST", "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {clientID}})
			codes[i] = rec.Code
		}()
	}
	wg.Wait()
	if (codes[0] == http.StatusOK) == (codes[1] == http.StatusOK) {
		t.Fatalf("concurrent refresh: %v", codes)
	}

	// 401s point to the resource metadata.
	rec = e.do("GET", "/v1/vendors", "", nil, bearer("ory_at_nope.nope")...)
	wantError(t, rec, http.StatusUnauthorized, "unauthorized")
	wa := rec.Header().Get("WWW-Authenticate")
	if !strings.Contains(wa, `Bearer resource_metadata="http://example.com/.well-known/oauth-protected-resource"`) || !strings.Contains(wa, "invalid_token") {
		t.Fatalf("WWW-Authenticate: %q", wa)
	}
	rec = e.do("POST", "/v1/mcp", "", map[string]any{})
	if wa := rec.Header().Get("WWW-Authenticate"); !strings.Contains(wa, "/.well-known/oauth-protected-resource/v1/mcp") {
		t.Fatalf("MCP WWW-Authenticate: %q", wa)
	}

	// Registration errors.
	rec = e.do("POST", "/oauth/register", "", map[string]any{"redirect_uris": []string{"http://evil.example/cb"}})
	wantStatus(t, rec, http.StatusBadRequest)
	if obj(t, rec)["error"] != "invalid_redirect_uri" {
		t.Fatalf("registration: %s", rec.Body.String())
	}
	rec = e.do("POST", "/oauth/register", "", map[string]any{"redirect_uris": []string{testRedirect}, "grant_types": []string{"client_credentials"}})
	if wantStatus(t, rec, http.StatusBadRequest); obj(t, rec)["error"] != "invalid_client_metadata" {
		t.Fatalf("registration: %s", rec.Body.String())
	}
}

func TestOAuthApps(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	other := e.org("Other", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	e.withPassword(org, "ada@example.com", app.RoleAdmin)
	e.withPassword(other, "eve@example.com", app.RoleOwner)

	body := map[string]any{"name": "Ticket sync", "description": "Files findings", "redirectUris": []string{testRedirect}}
	wantError(t, e.do("POST", "/v1/integrations/oauth-apps", e.key(org, app.RoleAuditor), body), http.StatusForbidden, "forbidden")
	wantField(t, e.do("POST", "/v1/integrations/oauth-apps", admin, map[string]any{"name": "X"}), "redirectUris")
	wantField(t, e.do("POST", "/v1/integrations/oauth-apps", admin, map[string]any{"name": "X", "redirectUris": []string{"http://evil.example/"}}), "redirectUris")
	rec := e.do("POST", "/v1/integrations/oauth-apps", admin, body)
	wantStatus(t, rec, http.StatusCreated)
	created := obj(t, rec)
	appID, secret := created["id"].(string), created["clientSecret"].(string)
	if !strings.HasPrefix(appID, "oap_") || !strings.HasPrefix(secret, app.OAuthClientSecretPrefix) || created["tokenEndpointAuthMethod"] != "client_secret_basic" {
		t.Fatalf("created: %v", created)
	}
	rec = e.do("GET", "/v1/integrations/oauth-apps", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	list := obj(t, rec)
	if d := list["data"].([]any); len(d) != 1 || d[0].(map[string]any)["clientSecret"] != nil {
		t.Fatalf("list must not show secrets: %v", list)
	}
	wantError(t, e.do("GET", "/v1/integrations/oauth-apps/"+appID, e.key(other, app.RoleOwner), nil), http.StatusNotFound, "not_found")
	rec = e.do("PATCH", "/v1/integrations/oauth-apps/"+appID, admin, map[string]any{"name": "Ticket sync 2", "scopes": []string{app.ScopeRead, app.ScopeWrite}})
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["name"] != "Ticket sync 2" {
		t.Fatal("update did not apply")
	}
	wantField(t, e.do("PATCH", "/v1/integrations/oauth-apps/"+appID, admin, map[string]any{"scopes": []string{"root"}}), "scopes")

	// The confidential flow: client secret at the token endpoint.
	session, _ := e.login("ada@example.com")
	p := newPKCE()
	authURL := authorizeQuery(appID, "", p)
	exch := func(code, secret string) (int, tokenResponse) {
		req := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect}, "code_verifier": {p.verifier}}
		return e.tokenReq(req, "Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(appID+":"+secret)))
	}
	if status, tr := exch(e.approve(authURL, session, org), "wrong"); status != http.StatusUnauthorized || tr.Error != "invalid_client" {
		t.Fatalf("wrong secret: %d %+v", status, tr)
	}
	status, tok := exch(e.approve(authURL, session, org), secret)
	if status != http.StatusOK {
		t.Fatalf("confidential exchange: %d %+v", status, tok)
	}
	wantStatus(t, e.do("GET", "/v1/vendors", "", nil, bearer(tok.AccessToken)...), http.StatusOK)

	// Rotation: the old secret stops working, issued tokens stay valid.
	rec = e.do("POST", "/v1/integrations/oauth-apps/"+appID+"/rotate-secret", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	newSecret := obj(t, rec)["clientSecret"].(string)
	if status, _ := exch(e.approve(authURL, session, org), secret); status != http.StatusUnauthorized {
		t.Fatalf("old secret after rotation: %d", status)
	}
	if status, _ := exch(e.approve(authURL, session, org), newSecret); status != http.StatusOK {
		t.Fatalf("new secret: %d", status)
	}
	wantStatus(t, e.do("GET", "/v1/vendors", "", nil, bearer(tok.AccessToken)...), http.StatusOK)

	// A person of another organization cannot approve this organization's app.
	eve, _ := e.login("eve@example.com")
	rec = e.do("GET", authURL, "", nil, "Cookie", eve)
	wantStatus(t, rec, http.StatusForbidden)

	// Deleting the app ends its tokens.
	wantError(t, e.do("DELETE", "/v1/integrations/oauth-apps/"+appID, e.key(other, app.RoleOwner), nil), http.StatusNotFound, "not_found")
	wantStatus(t, e.do("DELETE", "/v1/integrations/oauth-apps/"+appID, admin, nil), http.StatusNoContent)
	wantError(t, e.do("GET", "/v1/vendors", "", nil, bearer(tok.AccessToken)...), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("GET", "/v1/integrations/oauth-apps/"+appID, admin, nil), http.StatusNotFound, "not_found")
}

func TestOAuthPreflight(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	for _, path := range []string{"/oauth/token", "/oauth/register", "/.well-known/oauth-protected-resource/v1/mcp", "/.well-known/mcp.json"} {
		rec := e.do("OPTIONS", path, "", nil, "Origin", "http://localhost:6274", "Access-Control-Request-Method", "POST")
		wantStatus(t, rec, http.StatusNoContent)
		if rec.Header().Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "MCP-Protocol-Version") {
			t.Fatalf("%s preflight headers: %v", path, rec.Header())
		}
	}
}
