package web

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/aws"
	"github.com/compliance-appliance/compliance/integrations/github"
	"github.com/compliance-appliance/compliance/integrations/gitlab"
	"github.com/compliance-appliance/compliance/integrations/oauthapp"
	"github.com/compliance-appliance/compliance/integrations/outbound"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// fakeOAuthServer reproduces the OAuth endpoints and a few API endpoints of
// GitHub (OAuth app, Enterprise Server layout: /login/oauth/..., /api/v3)
// or GitLab (/oauth/..., /api/v4), with their real response shapes: GitHub
// answers token errors with status 200 and an error body (form-encoded
// unless JSON is asked for), GitLab with 400/401 and JSON.
type fakeOAuthServer struct {
	kind string // "github" or "gitlab"
	srv  *httptest.Server

	mu           sync.Mutex
	clientID     string
	clientSecret string
	redirectURI  string // the app's registered callback; empty: any
	codes        map[string]fakeGrant
	tokens       map[string]bool // valid access tokens
	refresh      map[string]bool
	refreshes    int
	n            int
	twoFactor    bool
}

type fakeGrant struct{ challenge, redirect string }

func newFakeOAuthServer(t *testing.T, kind, clientID, clientSecret string) *fakeOAuthServer {
	f := &fakeOAuthServer{kind: kind, clientID: clientID, clientSecret: clientSecret, codes: map[string]fakeGrant{},
		tokens: map[string]bool{}, refresh: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// authorize stands for the person approving the app at the provider: it
// checks the authorization URL and returns a code bound to its PKCE
// challenge and redirect URI.
func (f *fakeOAuthServer) authorize(t *testing.T, authURL string) (code, state string) {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	wantPath := "/login/oauth/authorize"
	if f.kind == "gitlab" {
		wantPath = "/oauth/authorize"
	}
	if u.Scheme+"://"+u.Host != f.srv.URL || u.Path != wantPath || q.Get("client_id") != f.clientID || q.Get("response_type") != "code" ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" || q.Get("redirect_uri") == "" {
		t.Fatalf("authorization URL %s", authURL)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	code = fmt.Sprintf("code-%s-%d", f.kind, f.n)
	f.codes[code] = fakeGrant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	return code, q.Get("state")
}

func (f *fakeOAuthServer) refreshCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refreshes
}

func (f *fakeOAuthServer) tokenError(w http.ResponseWriter, r *http.Request, status int, code, desc string) {
	if f.kind == "github" {
		// GitHub: 200 with the error in the body.
		body := map[string]string{"error": code, "error_description": desc, "error_uri": "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#" + strings.ReplaceAll(code, "_", "-")}
		if strings.Contains(r.Header.Get("Accept"), "json") {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_ = json.NewEncoder(w).Encode(body)
			return
		}
		v := url.Values{}
		for k, s := range body {
			v.Set(k, s)
		}
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		_, _ = w.Write([]byte(v.Encode()))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func (f *fakeOAuthServer) issue(w http.ResponseWriter) map[string]any {
	f.n++
	tok := fmt.Sprintf("%s-access-%d-SECRET", f.kind, f.n)
	f.tokens[tok] = true
	if f.kind == "github" {
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		v := url.Values{"access_token": {tok}, "token_type": {"bearer"}, "scope": {"read:org,repo"}}
		_, _ = w.Write([]byte(v.Encode()))
		return nil
	}
	rt := fmt.Sprintf("gitlab-refresh-%d", f.n)
	f.refresh[rt] = true
	out := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 7200, "refresh_token": rt, "scope": "read_api",
		"created_at": time.Now().Unix()}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(out)
	return out
}

func (f *fakeOAuthServer) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/login/oauth/access_token", "/oauth/token":
		_ = r.ParseForm()
		if r.Form.Get("client_id") != f.clientID || r.Form.Get("client_secret") != f.clientSecret {
			if f.kind == "github" {
				f.tokenError(w, r, 200, "incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.")
			} else {
				f.tokenError(w, r, 401, "invalid_client", "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.")
			}
			return
		}
		if r.Form.Get("grant_type") == "refresh_token" {
			rt := r.Form.Get("refresh_token")
			if !f.refresh[rt] {
				f.tokenError(w, r, 400, "invalid_grant", "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.")
				return
			}
			delete(f.refresh, rt)
			for t := range f.tokens {
				delete(f.tokens, t) // the old access token stops working
			}
			f.refreshes++
			f.issue(w)
			return
		}
		g, ok := f.codes[r.Form.Get("code")]
		delete(f.codes, r.Form.Get("code"))
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		switch {
		case !ok:
			if f.kind == "github" {
				f.tokenError(w, r, 200, "bad_verification_code", "The code passed is incorrect or expired.")
			} else {
				f.tokenError(w, r, 400, "invalid_grant", "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.")
			}
		case r.Form.Get("redirect_uri") != g.redirect || (f.redirectURI != "" && g.redirect != f.redirectURI):
			f.tokenError(w, r, 400, "redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.")
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			f.tokenError(w, r, 400, "invalid_grant", "The code verifier does not match the code challenge.")
		default:
			f.issue(w)
		}
		return
	}
	auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if !f.tokens[auth] {
		w.WriteHeader(http.StatusUnauthorized)
		if f.kind == "github" {
			_, _ = w.Write([]byte(`{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`))
		} else {
			_, _ = w.Write([]byte(`{"message":"401 Unauthorized"}`))
		}
		return
	}
	switch r.URL.Path {
	case "/api/v3/user":
		_, _ = w.Write([]byte(`{"login":"octocat","id":1}`))
	case "/api/v3/orgs/acme":
		_, _ = fmt.Fprintf(w, `{"login":"acme","id":42,"name":"Acme","two_factor_requirement_enabled":%t}`, f.twoFactor)
	case "/api/v3/orgs/acme/repos":
		_, _ = w.Write([]byte(`[{"id":1,"name":"api","full_name":"acme/api","archived":false},{"id":2,"name":"legacy","full_name":"acme/legacy","archived":true}]`))
	case "/api/v4/groups/acme":
		_, _ = fmt.Fprintf(w, `{"id":7,"name":"Acme","full_path":"acme","require_two_factor_authentication":%t,"two_factor_grace_period":48}`, f.twoFactor)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"Not Found"}`))
	}
}

// oauthEnv is an integration env with the real GitHub and GitLab providers
// and OAuth client over the outbound client, and a signed-in owner.
type oauthEnv struct {
	*integEnv
	cookie, csrf string
}

func newOAuthEnv(t *testing.T) *oauthEnv {
	e := newIntegEnv(t)
	policy, err := app.NewNetworkPolicy(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := outbound.New(outbound.Options{Policy: policy, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	e.app.RegisterIntegrationProviders(github.New(c), gitlab.New(c), aws.New(c))
	e.app.SetIntegrationOAuthClient(oauthapp.New(c))
	e.withPassword(e.org, "owner@acme.test", app.RoleOwner)
	cookie, csrf := e.login("owner@acme.test")
	return &oauthEnv{integEnv: e, cookie: cookie, csrf: csrf}
}

func (e *oauthEnv) session(method, path string, body any) *httptest.ResponseRecorder {
	return e.do(method, path, "", body, "Cookie", e.cookie, httpx.CSRFHeader, e.csrf)
}

func (e *oauthEnv) start(body map[string]any) string {
	e.t.Helper()
	rec := e.session("POST", "/v1/integrations/oauth/start", body)
	wantStatus(e.t, rec, http.StatusCreated)
	return obj(e.t, rec)["authorizationUrl"].(string)
}

// callback follows the provider's redirect back with the given cookie and
// returns the Location.
func (e *oauthEnv) callback(cookie string, q url.Values) string {
	e.t.Helper()
	rec := e.do("GET", "/v1/integrations/oauth/callback?"+q.Encode(), "", nil, "Cookie", cookie)
	if rec.Code != http.StatusFound {
		e.t.Fatalf("callback: status %d: %s", rec.Code, rec.Body.String())
	}
	return rec.Header().Get("Location")
}

func (e *oauthEnv) oauthErrors() []string {
	e.t.Helper()
	rows, err := e.raw().Query(`SELECT error || ': ' || error_description FROM integration_oauth_errors WHERE organization_id = ? ORDER BY created_at, id`, e.org)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func connectionIDFrom(t *testing.T, loc string) string {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil || !strings.HasPrefix(u.Path, "/integrations/icn_") {
		t.Fatalf("redirect to %q, want the connection's page", loc)
	}
	return strings.TrimPrefix(u.Path, "/integrations/")
}

// TestIntegrationOAuthGitHub: availability and start without an app, the
// organization's app saved (secret sealed), start (session only) → the
// provider's authorization → callback → a connection whose sealed token a
// check run uses against the fake API; replayed state, another
// organization's session, provider errors and exchange refusals
// (bad_verification_code, redirect_uri_mismatch) recorded.
func TestIntegrationOAuthGitHub(t *testing.T) {
	t.Parallel()
	const secret = "gh-oauth-client-SECRET-77a1"
	e := newOAuthEnv(t)
	gh := newFakeOAuthServer(t, "github", "Ov23liACME", secret)
	base := gh.srv.URL + "/api/v3"
	flow := map[string]any{"providerSlug": "github", "baseUrl": base, "variables": map[string]any{"organization": "acme"}}

	// No app yet: not available, start is 400 naming providerSlug.
	rec := e.do("GET", "/v1/integrations/oauth/availability?providerSlug=github", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["available"] != false || m["hasOrgCredentials"] != false || m["hasPlatformCredentials"] != false || m["supportsOAuth"] != true {
		t.Fatalf("availability without an app: %v", m)
	}
	wantField(t, e.session("POST", "/v1/integrations/oauth/start", flow), "providerSlug")
	wantField(t, e.do("GET", "/v1/integrations/oauth/availability", e.owner, nil), "providerSlug")
	wantField(t, e.do("GET", "/v1/integrations/oauth/availability?providerSlug=nope", e.owner, nil), "providerSlug")
	if m := obj(t, e.do("GET", "/v1/integrations/oauth/availability?providerSlug=fake", e.owner, nil)); m["available"] != false || m["supportsOAuth"] != false {
		t.Fatalf("availability of a provider without OAuth: %v", m)
	}

	// The organization's app: validated, secret never returned nor stored in clear.
	wantField(t, e.do("POST", "/v1/integrations/oauth/apps", e.owner, map[string]any{"providerSlug": "github", "clientId": "x"}), "clientSecret")
	wantField(t, e.do("POST", "/v1/integrations/oauth/apps", e.owner, map[string]any{"providerSlug": "fake", "clientId": "x", "clientSecret": "y"}), "providerSlug")
	auditor := e.key(e.org, app.RoleAuditor)
	wantError(t, e.do("POST", "/v1/integrations/oauth/apps", auditor, map[string]any{"providerSlug": "github", "clientId": "x", "clientSecret": "y"}), http.StatusForbidden, "forbidden")
	rec = e.do("POST", "/v1/integrations/oauth/apps", e.owner, map[string]any{"providerSlug": "github", "clientId": "Ov23liACME", "clientSecret": secret},
		"Idempotency-Key", "oauth-app-1")
	wantStatus(t, rec, http.StatusCreated)
	if strings.Contains(rec.Body.String(), secret) {
		t.Fatal("the save answers the client secret")
	}
	for _, path := range []string{"/v1/integrations/oauth/apps", "/v1/integrations/oauth/apps/setup/github"} {
		rec := e.do("GET", path, auditor, nil)
		wantStatus(t, rec, http.StatusOK)
		if strings.Contains(rec.Body.String(), secret) {
			t.Fatalf("%s answers the client secret", path)
		}
	}
	apps := list(t, e.do("GET", "/v1/integrations/oauth/apps", e.owner, nil))
	if len(apps) != 1 || apps[0]["providerSlug"] != "github" || apps[0]["clientId"] != "Ov23liACME" {
		t.Fatalf("apps %v", apps)
	}
	setup := obj(t, e.do("GET", "/v1/integrations/oauth/apps/setup/github", e.owner, nil))
	if setup["callbackUrl"] != "http://example.com/v1/integrations/oauth/callback" || setup["available"] != true || setup["source"] != "organization" ||
		fmt.Sprint(setup["requiredScopes"]) != "[read:org repo]" {
		t.Fatalf("setup %v", setup)
	}
	rec = e.do("GET", "/v1/integrations/oauth/availability?providerSlug=github", auditor, nil)
	if m := obj(t, rec); m["available"] != true || m["hasOrgCredentials"] != true || m["source"] != "organization" {
		t.Fatalf("availability with the app: %v", m)
	}

	// Start: a session only; variables validated now.
	wantError(t, e.do("POST", "/v1/integrations/oauth/start", e.owner, flow), http.StatusForbidden, "forbidden")
	wantField(t, e.session("POST", "/v1/integrations/oauth/start", map[string]any{"providerSlug": "github", "baseUrl": base}), "variables.organization")
	wantField(t, e.session("POST", "/v1/integrations/oauth/start", map[string]any{"providerSlug": "github", "redirectUrl": "https://evil.test/",
		"variables": map[string]any{"organization": "acme"}}), "redirectUrl")
	authURL := e.start(flow)
	if q := mustURL(t, authURL).Query(); q.Get("scope") != "read:org repo" || q.Get("redirect_uri") != "http://example.com/v1/integrations/oauth/callback" {
		t.Fatalf("authorization URL %s", authURL)
	}
	code, state := gh.authorize(t, authURL)

	// Callback without the session that started it: refused (and used up).
	other := e.testEnv.org("Other", "professional")
	e.withPassword(other, "owner@other.test", app.RoleOwner)
	otherCookie, _ := e.login("owner@other.test")
	authURL2 := e.start(flow)
	code2, state2 := gh.authorize(t, authURL2)
	if loc := e.callback(otherCookie, url.Values{"code": {code2}, "state": {state2}}); loc != "/integrations?oauthError=state_mismatch" {
		t.Fatalf("another organization's session: %s", loc)
	}
	if loc := e.callback(e.cookie, url.Values{"code": {code2}, "state": {state2}}); loc != "/integrations?oauthError=invalid_state" {
		t.Fatalf("a state refused once is used up: %s", loc)
	}
	if loc := e.callback("", url.Values{"code": {"x"}, "state": {"unknown"}}); loc != "/integrations?oauthError=invalid_state" {
		t.Fatalf("unknown state: %s", loc)
	}

	// The flow completes: a connection with the sealed token.
	loc := e.callback(e.cookie, url.Values{"code": {code}, "state": {state}})
	conn := connectionIDFrom(t, loc)
	c := obj(t, e.do("GET", "/v1/integrations/connections/"+conn, e.owner, nil))
	if c["providerSlug"] != "github" || c["authStrategy"] != "oauth2" || c["status"] != "active" || c["variables"].(map[string]any)["organization"] != "acme" {
		t.Fatalf("connection %v", c)
	}
	if loc := e.callback(e.cookie, url.Values{"code": {code}, "state": {state}}); loc != "/integrations?oauthError=invalid_state" {
		t.Fatalf("replayed state: %s", loc)
	}
	if n := len(list(t, e.do("GET", "/v1/integrations/connections", e.owner, nil))); n != 1 {
		t.Fatalf("%d connections after the replay", n)
	}
	e.assertNotInFiles("github-access-")
	e.assertNotInFiles(secret)

	// The connection is usable: a check run against the fake API with the token.
	rec = e.do("POST", "/v1/integrations/checks/connections/"+conn+"/run/github.org_2fa_required", e.owner, nil)
	wantStatus(t, rec, http.StatusCreated)
	if n, err := e.app.ProcessQueuedRuns(context.Background()); err != nil || n != 1 {
		t.Fatalf("processed %d runs: %v", n, err)
	}
	run := obj(t, e.do("GET", "/v1/integrations/checks/runs/"+obj(t, rec)["id"].(string), e.owner, nil))
	if run["status"] != "succeeded" || run["failed"].(float64) != 1 || run["findingsOpened"].(float64) != 1 {
		t.Fatalf("run with the OAuth token: %v", run)
	}
	rec = e.do("POST", "/v1/integrations/connections/"+conn+"/test", e.owner, nil)
	if m := obj(t, rec); m["success"] != true {
		t.Fatalf("test with the OAuth token: %v", m)
	}
	// Variable choices from GitHub with the connection's token.
	rec = e.do("GET", "/v1/integrations/variables/connections/"+conn+"/options/repositories", auditor, nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["source"] != "provider" || fmt.Sprint(m["options"]) != "[map[label:acme/api value:api] map[label:acme/legacy (archived) value:legacy]]" {
		t.Fatalf("repository options %v", m)
	}

	// Provider errors and exchange refusals: an error page, recorded.
	_, st := gh.authorize(t, e.start(flow))
	if loc := e.callback(e.cookie, url.Values{"state": {st}, "error": {"access_denied"}, "error_description": {"The user has denied your application access."}}); loc != "/integrations?oauthError=access_denied" {
		t.Fatalf("denied: %s", loc)
	}
	_, st = gh.authorize(t, e.start(flow))
	if loc := e.callback(e.cookie, url.Values{"code": {"not-a-code"}, "state": {st}}); loc != "/integrations?oauthError=bad_verification_code" {
		t.Fatalf("bad code: %s", loc)
	}
	gh.mu.Lock()
	gh.redirectURI = "https://registered.example/callback"
	gh.mu.Unlock()
	code, st = gh.authorize(t, e.start(flow))
	if loc := e.callback(e.cookie, url.Values{"code": {code}, "state": {st}}); loc != "/integrations?oauthError=redirect_uri_mismatch" {
		t.Fatalf("redirect mismatch: %s", loc)
	}
	got := e.oauthErrors()
	if len(got) != 3 || got[0] != "access_denied: The user has denied your application access." ||
		got[1] != "bad_verification_code: The code passed is incorrect or expired." || !strings.HasPrefix(got[2], "redirect_uri_mismatch: The redirect_uri MUST match") {
		t.Fatalf("recorded errors %q", got)
	}

	// The browser's own report.
	wantField(t, e.do("POST", "/v1/integrations/oauth-errors", e.owner, map[string]any{"error": "popup_closed"}), "providerSlug")
	wantField(t, e.do("POST", "/v1/integrations/oauth-errors", e.owner, map[string]any{"providerSlug": "github", "error": strings.Repeat("x", 201)}), "error")
	rec = e.do("POST", "/v1/integrations/oauth-errors", e.owner, map[string]any{"providerSlug": "github", "error": "popup_closed", "errorDescription": "closed"})
	wantStatus(t, rec, http.StatusCreated)
	if obj(t, rec)["recorded"] != true || len(e.oauthErrors()) != 4 {
		t.Fatalf("recorded %s", rec.Body.String())
	}

	// Another organization does not see or delete the app; deleting it
	// makes OAuth unavailable again (no platform app).
	otherKey := e.key(other, app.RoleOwner)
	if n := len(list(t, e.do("GET", "/v1/integrations/oauth/apps", otherKey, nil))); n != 0 {
		t.Fatalf("another organization lists %d apps", n)
	}
	wantError(t, e.do("DELETE", "/v1/integrations/oauth/apps/github", otherKey, nil), http.StatusNotFound, "not_found")
	wantStatus(t, e.do("DELETE", "/v1/integrations/oauth/apps/github", e.owner, nil), http.StatusNoContent)
	if m := obj(t, e.do("GET", "/v1/integrations/oauth/availability?providerSlug=github", e.owner, nil)); m["available"] != false {
		t.Fatalf("availability after delete: %v", m)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestIntegrationOAuthGitLab: a self-managed GitLab through the operator's
// platform app, with the organization's app taking precedence once saved;
// GitLab's expiring token is refreshed before a run and stored back sealed;
// GitLab's invalid_grant (400) is recorded.
func TestIntegrationOAuthGitLab(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t)
	gl := newFakeOAuthServer(t, "gitlab", "platform-app", "platform-SECRET")
	gl.twoFactor = true
	flow := map[string]any{"providerSlug": "gitlab", "baseUrl": gl.srv.URL, "name": "GitLab self-managed", "variables": map[string]any{"group": "acme"}}

	// The operator's platform app.
	e.withPassword(e.org, "ops@acme.test", app.RoleAdmin)
	if _, err := e.app.GrantOperator(context.Background(), "ops@acme.test"); err != nil {
		t.Fatal(err)
	}
	opCookie, opCSRF := e.login("ops@acme.test")
	wantStatus(t, e.do("POST", "/v1/admin/integrations/credentials", "", map[string]any{"providerSlug": "gitlab", "clientId": "platform-app",
		"clientSecret": "platform-SECRET"}, "Cookie", opCookie, httpx.CSRFHeader, opCSRF), http.StatusCreated)
	if m := obj(t, e.do("GET", "/v1/integrations/oauth/availability?providerSlug=gitlab", e.owner, nil)); m["available"] != true ||
		m["hasPlatformCredentials"] != true || m["hasOrgCredentials"] != false || m["source"] != "platform" {
		t.Fatalf("availability with the platform app: %v", m)
	}

	code, state := gl.authorize(t, e.start(flow))
	conn := connectionIDFrom(t, e.callback(e.cookie, url.Values{"code": {code}, "state": {state}}))
	c := obj(t, e.do("GET", "/v1/integrations/connections/"+conn, e.owner, nil))
	if c["name"] != "GitLab self-managed" || c["authStrategy"] != "oauth2" {
		t.Fatalf("connection %v", c)
	}
	runCheck := func() map[string]any {
		t.Helper()
		rec := e.do("POST", "/v1/integrations/checks/connections/"+conn+"/run/gitlab.group_2fa_required", e.owner, nil)
		wantStatus(t, rec, http.StatusCreated)
		if n, err := e.app.ProcessQueuedRuns(context.Background()); err != nil || n != 1 {
			t.Fatalf("processed %d runs: %v", n, err)
		}
		return obj(t, e.do("GET", "/v1/integrations/checks/runs/"+obj(t, rec)["id"].(string), e.owner, nil))
	}
	if run := runCheck(); run["status"] != "succeeded" || run["passed"].(float64) != 1 {
		t.Fatalf("run with the OAuth token: %v", run)
	}
	if gl.refreshCount() != 0 {
		t.Fatal("a fresh token was refreshed")
	}
	// Past the token's expiry: refreshed before the run, and stored (a
	// second run needs no refresh; the old token no longer works).
	e.clock.Advance(3 * time.Hour)
	if run := runCheck(); run["status"] != "succeeded" || run["passed"].(float64) != 1 {
		t.Fatalf("run after the expiry: %v", run)
	}
	if run := runCheck(); run["status"] != "succeeded" || gl.refreshCount() != 1 {
		t.Fatalf("second run after the refresh: %v (refreshes %d)", run, gl.refreshCount())
	}
	e.assertNotInFiles("gitlab-access-")
	e.assertNotInFiles("gitlab-refresh-")

	// The organization's own app takes precedence over the platform's.
	wantStatus(t, e.do("POST", "/v1/integrations/oauth/apps", e.owner, map[string]any{"providerSlug": "gitlab", "clientId": "org-app",
		"clientSecret": "org-SECRET", "customScopes": []string{"read_api", "read_user"}}), http.StatusCreated)
	authURL := e.start(flow)
	if q := mustURL(t, authURL).Query(); q.Get("client_id") != "org-app" || q.Get("scope") != "read_api read_user" {
		t.Fatalf("the organization's app is not used: %s", authURL)
	}
	// GitLab refuses the code of another client: invalid_grant, recorded.
	gl.mu.Lock()
	gl.clientID, gl.clientSecret = "org-app", "org-SECRET"
	gl.mu.Unlock()
	_, st := gl.authorize(t, authURL)
	if loc := e.callback(e.cookie, url.Values{"code": {"expired"}, "state": {st}}); loc != "/integrations?oauthError=invalid_grant" {
		t.Fatalf("invalid grant: %s", loc)
	}
	if got := e.oauthErrors(); len(got) != 1 || !strings.HasPrefix(got[0], "invalid_grant: The provided authorization grant is invalid") {
		t.Fatalf("recorded %q", got)
	}
}
