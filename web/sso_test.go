package web

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	opstorage "github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/outbound"
	"github.com/compliance-appliance/compliance/sso"
	"github.com/compliance-appliance/compliance/storage"
)

// The OpenID Provider of these tests is zitadel/oidc's op package (a
// certified OpenID Provider implementation) with its example in-memory
// storage, started in-process over TLS on loopback, with a static client
// and static users. Groups are added to the ID token and the userinfo
// answer by the wrapper below. (Dex is not available to this build.)

type testOPStorage struct {
	*opstorage.Storage
	groups map[string][]string
}

// SetUserinfoFromRequest fills the ID token's claims: the example's, plus
// the user's groups.
func (s *testOPStorage) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, token op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, token, scopes); err != nil {
		return err
	}
	if g, ok := s.groups[token.GetSubject()]; ok {
		ui.AppendClaims("groups", g)
	}
	return nil
}

// testOP is a running OpenID Provider.
type testOP struct {
	issuer string
	srv    *httptest.Server
	pool   *x509.CertPool

	mu   sync.Mutex
	user string // the username the login page signs in
}

func (o *testOP) signInAs(username string) {
	o.mu.Lock()
	o.user = username
	o.mu.Unlock()
}

type testOPUser struct {
	username, email string
	verified        bool
	groups          []string
}

// startTestOP starts the provider with one client whose redirect URI is
// redirect and the given users (password "pw").
func startTestOP(t testing.TB, redirect string, users []testOPUser) *testOP {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &testOP{issuer: "https://" + l.Addr().String()}
	file := map[string]*opstorage.User{}
	groups := map[string][]string{}
	for i, u := range users {
		id := fmt.Sprintf("u%d", i+1)
		file[id] = &opstorage.User{ID: id, Username: u.username, Password: "pw", FirstName: u.username, LastName: "Test",
			Email: u.email, EmailVerified: u.verified, PreferredLanguage: language.English}
		groups[id] = u.groups
	}
	raw, _ := json.Marshal(file)
	path := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	us, err := opstorage.StoreFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st := &testOPStorage{Storage: opstorage.NewStorageWithClients(us, map[string]*opstorage.Client{
		"compliance": opstorage.WebClient("compliance", "client-secret-1", redirect)}), groups: groups}
	cfg := &op.Config{CryptoKey: sha256.Sum256([]byte("test op key")), CodeMethodS256: true,
		SupportedUILocales: []language.Tag{language.English}}
	provider, err := op.NewOpenIDProvider(o.issuer, cfg, st, op.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	// The login page: signs in the user the test chose and returns to
	// the provider's callback, as a person submitting the form would.
	mux.HandleFunc("/login/username", func(w http.ResponseWriter, r *http.Request) {
		id := r.FormValue("authRequestID")
		o.mu.Lock()
		user := o.user
		o.mu.Unlock()
		if err := st.CheckUsernamePassword(user, "pw", id); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		http.Redirect(w, r, op.AuthCallbackURL(provider)(r.Context(), id), http.StatusFound)
	})
	mux.Handle("/", provider)
	o.srv = httptest.NewUnstartedServer(mux)
	o.srv.Listener.Close()
	o.srv.Listener = l
	o.srv.StartTLS()
	t.Cleanup(o.srv.Close)
	o.pool = x509.NewCertPool()
	o.pool.AddCert(o.srv.Certificate())
	return o
}

// ssoIdP is the appliance served over loopback next to an OpenID
// Provider, its OpenID Connect client trusting the provider's certificate.
type ssoIdP struct {
	appURL string
	op     *testOP
	orgID  string
}

// ssoEnv is the test server with an organization and an OpenID Provider.
type ssoEnv struct {
	*testEnv
	*ssoIdP
	owner string // owner's API key
}

func newSSOEnv(t *testing.T) *ssoEnv {
	e := newTestServer(t)
	orgID := e.org("Acme", "enterprise")
	return &ssoEnv{testEnv: e, ssoIdP: startSSO(t, e.app, e.srv, orgID), owner: e.key(orgID, app.RoleOwner)}
}

func startSSO(t testing.TB, a *app.App, h http.Handler, orgID string) *ssoIdP {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	o := startTestOP(t, srv.URL+"/sso/oidc/callback", []testOPUser{
		{"alice", "alice@acme.test", true, []string{"compliance-auditors"}},
		{"bob", "bob@acme.test", true, nil},
		{"carol", "Carol@ACME.test", true, []string{"staff"}},
		{"eve", "eve@other.test", true, nil},
		{"frank", "frank@acme.test", false, nil},
		{"dave", "dave@acme.test", true, nil},
		{"olga", "olga@acme.test", true, []string{"admins"}},
	})
	c, err := outbound.New(outbound.Options{TLSConfig: &tls.Config{RootCAs: o.pool}, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	a.SetOIDCClient(sso.New(c))
	return &ssoIdP{appURL: srv.URL, op: o, orgID: orgID}
}

func (s *ssoEnv) settings(t *testing.T, body map[string]any) {
	t.Helper()
	in := map[string]any{"enabled": true, "displayName": "Acme login", "issuer": s.op.issuer, "clientId": "compliance",
		"clientSecret": "client-secret-1", "allowedDomains": []string{"acme.test"},
		"roleMapping": []map[string]string{{"group": "compliance-auditors", "role": "auditor"}}}
	for k, v := range body {
		in[k] = v
	}
	if w := s.do("PUT", "/v1/organization/sso", s.owner, in); w.Code != 200 {
		t.Fatalf("put sso settings: %d %s", w.Code, w.Body)
	}
}

// browser is an HTTP client with cookies that trusts the provider and
// follows redirects, like a person's browser. It records every URL.
type ssoBrowser struct {
	c    *http.Client
	seen []string
}

func (s *ssoIdP) idpBrowser() *ssoBrowser {
	jar, _ := cookiejar.New(nil)
	b := &ssoBrowser{}
	b.c = &http.Client{Jar: jar, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.op.pool}},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			b.seen = append(b.seen, req.URL.String())
			return nil
		}}
	return b
}

// signIn runs the whole flow for a user from the appliance's start page
// and returns the final response's status and body.
func (s *ssoIdP) signIn(t testing.TB, b *ssoBrowser, username string) (int, string) {
	t.Helper()
	s.op.signInAs(username)
	resp, err := b.c.Get(s.appURL + "/sso/" + s.orgID + "/start")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func (s *ssoEnv) findPerson(t *testing.T, email string) *app.Person {
	t.Helper()
	l, err := s.app.ListPeople(s.ctx(s.orgID), app.PersonFilter{Inactive: true, Page: app.Page{Page: 1, PerPage: 100}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Items {
		if p.Email == email {
			return &p
		}
	}
	return nil
}

func TestSSOOIDCSignInEndToEnd(t *testing.T) {
	s := newSSOEnv(t)
	s.settings(t, nil)

	// Alice is new: created just in time, her group maps her to auditor.
	b := s.idpBrowser()
	code, body := s.signIn(t, b, "alice")
	if code != 200 || strings.Contains(body, `action="/login"`) {
		t.Fatalf("sign-in did not land signed in: %d %.300s", code, body)
	}
	var sawIdP, sawCallback bool
	for _, u := range b.seen {
		sawIdP = sawIdP || strings.HasPrefix(u, s.op.issuer+"/authorize")
		if strings.HasPrefix(u, s.appURL+"/sso/oidc/callback") {
			sawCallback = true
			q, _ := url.Parse(u)
			if q.Query().Get("code") == "" || q.Query().Get("state") == "" {
				t.Fatalf("callback without code or state: %s", u)
			}
		}
		if strings.HasPrefix(u, s.op.issuer+"/authorize?") {
			q, _ := url.Parse(u)
			if q.Query().Get("code_challenge_method") != "S256" || q.Query().Get("nonce") == "" || q.Query().Get("state") == "" {
				t.Fatalf("authorization request without PKCE, nonce or state: %s", u)
			}
		}
	}
	if !sawIdP || !sawCallback {
		t.Fatalf("the flow did not go through the provider and back: %v", b.seen)
	}
	alice := s.findPerson(t, "alice@acme.test")
	if alice == nil || alice.Role != app.RoleAuditor || !alice.IsActive {
		t.Fatalf("alice not created as auditor: %+v", alice)
	}
	// The session works for the API too (the people list as alice).
	resp, err := b.c.Get(s.appURL + "/people")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("alice's session does not open pages: %v %v", err, resp)
	}
	resp.Body.Close()

	// Bob has no mapped group: the default role, employee.
	if code, body := s.signIn(t, s.idpBrowser(), "bob"); code != 200 {
		t.Fatalf("bob: %d %.300s", code, body)
	}
	if p := s.findPerson(t, "bob@acme.test"); p == nil || p.Role != app.RoleEmployee {
		t.Fatalf("bob not created as employee: %+v", p)
	}

	// Carol exists already: matched by normalized e-mail, not duplicated.
	carolID := s.testEnv.person(s.orgID, "carol@acme.test", app.RoleContractor)
	if code, body := s.signIn(t, s.idpBrowser(), "carol"); code != 200 {
		t.Fatalf("carol: %d %.300s", code, body)
	}
	if p := s.findPerson(t, "carol@acme.test"); p == nil || p.ID != carolID || p.Role != app.RoleContractor {
		t.Fatalf("carol not matched to her person: %+v (want %s)", p, carolID)
	}

	// Olga's group maps to admin only once an owner says so; an admin
	// cannot save that mapping.
	admin := s.key(s.orgID, app.RoleAdmin)
	w := s.do("PUT", "/v1/organization/sso", admin, map[string]any{"enabled": true, "issuer": s.op.issuer, "clientId": "compliance",
		"allowedDomains": []string{"acme.test"}, "roleMapping": []map[string]string{{"group": "admins", "role": "admin"}}})
	if w.Code != 400 || !strings.Contains(w.Body.String(), "roleMapping[0].role") {
		t.Fatalf("admin mapping to admin: %d %s", w.Code, w.Body)
	}
	s.settings(t, map[string]any{"roleMapping": []map[string]string{{"group": "admins", "role": "admin"}}})
	if code, _ := s.signIn(t, s.idpBrowser(), "olga"); code != 200 {
		t.Fatalf("olga: %d", code)
	}
	if p := s.findPerson(t, "olga@acme.test"); p == nil || p.Role != app.RoleAdmin {
		t.Fatalf("olga not mapped to admin: %+v", p)
	}
}

func TestSSOOIDCRefusals(t *testing.T) {
	s := newSSOEnv(t)
	s.settings(t, nil)

	cases := []struct {
		name, user, want string
		status           int
		setup            func()
	}{
		{"domain not allowed", "eve", "e-mail domain other.test is not allowed", 400, nil},
		{"e-mail not verified", "frank", "has not verified the e-mail", 400, nil},
		{"deactivated person", "dave", "deactivated", 400, func() {
			id := s.testEnv.person(s.orgID, "dave@acme.test", app.RoleEmployee)
			off := false
			if _, err := s.app.UpdatePerson(s.ctx(s.orgID), id, app.PersonPatch{IsActive: &off}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.setup != nil {
				c.setup()
			}
			code, body := s.signIn(t, s.idpBrowser(), c.user)
			if code != c.status || !strings.Contains(body, c.want) {
				t.Fatalf("want %d %q, got %d %.500s", c.status, c.want, code, body)
			}
		})
	}
	if p := s.findPerson(t, "eve@other.test"); p != nil {
		t.Fatal("a refused identity was created")
	}

	t.Run("account of another organization", func(t *testing.T) {
		other := s.org("Other", "enterprise")
		s.testEnv.person(other, "bob@acme.test", app.RoleEmployee)
		code, body := s.signIn(t, s.idpBrowser(), "bob")
		if code != 400 || !strings.Contains(body, "belongs to another organization") {
			t.Fatalf("cross-organization identity: %d %.500s", code, body)
		}
	})

	t.Run("replayed callback", func(t *testing.T) {
		b := s.idpBrowser()
		if code, _ := s.signIn(t, b, "alice"); code != 200 {
			t.Fatalf("alice: %d", code)
		}
		var cb string
		for _, u := range b.seen {
			if strings.HasPrefix(u, s.appURL+"/sso/oidc/callback") {
				cb = u
			}
		}
		resp, err := s.idpBrowser().c.Get(cb)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(body), "expired or was already used") {
			t.Fatalf("replayed state: %d %.300s", resp.StatusCode, body)
		}
	})

	t.Run("forged state", func(t *testing.T) {
		resp, err := s.idpBrowser().c.Get(s.appURL + "/sso/oidc/callback?state=made-up&code=x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Fatalf("forged state: %d", resp.StatusCode)
		}
	})

	t.Run("provider refuses", func(t *testing.T) {
		// The provider sends an error instead of a code (the person
		// cancelled): an error page, the state used up.
		c := s.idpBrowser().c
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := c.Get(s.appURL + "/sso/" + s.orgID + "/start")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || loc.Query().Get("state") == "" {
			t.Fatalf("start did not redirect with a state: %d %v", resp.StatusCode, resp.Header)
		}
		cb := s.appURL + "/sso/oidc/callback?error=access_denied&state=" + url.QueryEscape(loc.Query().Get("state"))
		for i, want := range []int{502, 400} {
			resp, err = c.Get(cb)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want || (i == 0 && !strings.Contains(string(body), "refused the sign-in: access_denied")) {
				t.Fatalf("provider error, attempt %d: %d %.300s", i, resp.StatusCode, body)
			}
		}
	})

	t.Run("unknown organization", func(t *testing.T) {
		other := s.org("NoSSO", "enterprise")
		resp, err := s.idpBrowser().c.Get(s.appURL + "/sso/" + other + "/start")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(body), "does not use single sign-on") {
			t.Fatalf("organization without SSO: %d %.300s", resp.StatusCode, body)
		}
	})
}

func TestSSOMisconfiguredProvider(t *testing.T) {
	s := newSSOEnv(t)
	test := func(issuer, want string) {
		t.Helper()
		s.settings(t, map[string]any{"issuer": issuer})
		w := s.do("POST", "/v1/organization/sso/test", s.owner, nil)
		var res app.SSOTestResult
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &res) != nil {
			t.Fatalf("test: %d %s", w.Code, w.Body)
		}
		if want == "" {
			if !res.OK || res.Discovery == nil || res.Discovery.SigningKeys < 1 {
				t.Fatalf("test of a good provider: %+v", res)
			}
			return
		}
		if res.OK || !strings.Contains(res.Message, want) {
			t.Fatalf("test of %s: want %q, got %+v", issuer, want, res)
		}
		// Sign-in shows an error page, never a 500.
		code, body := s.signIn(t, s.idpBrowser(), "alice")
		if code != 502 || !strings.Contains(body, "could not be reached") {
			t.Fatalf("sign-in with %s: %d %.300s", issuer, code, body)
		}
	}
	test(s.op.issuer, "")
	test(s.op.issuer+"/tenant", "no discovery document")
	test("https://127.0.0.1:1", "unreachable")

	// A provider whose issuer claim differs from the settings.
	wrong := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"issuer":"https://elsewhere.test","authorization_endpoint":"https://elsewhere.test/a","token_endpoint":"https://elsewhere.test/t","jwks_uri":"https://elsewhere.test/k"}`)
	}))
	defer wrong.Close()
	pool := x509.NewCertPool()
	pool.AddCert(s.op.srv.Certificate())
	pool.AddCert(wrong.Certificate())
	c, _ := outbound.New(outbound.Options{TLSConfig: &tls.Config{RootCAs: pool}, MaxRetries: -1})
	s.app.SetOIDCClient(sso.New(c))
	test(wrong.URL, "wrong issuer")

	// A client that does not trust the provider's certificate.
	untrusting, _ := outbound.New(outbound.Options{MaxRetries: -1})
	s.app.SetOIDCClient(sso.New(untrusting))
	test(s.op.issuer, "bad certificate")
}

func TestSSORequiredRefusesPasswords(t *testing.T) {
	s := newSSOEnv(t)
	s.settings(t, map[string]any{"ssoRequired": true})
	ctx := context.Background()
	emp := s.testEnv.person(s.orgID, "emp@acme.test", app.RoleEmployee)
	own := s.testEnv.person(s.orgID, "own@acme.test", app.RoleOwner)
	for _, id := range []string{emp, own} {
		if err := s.app.SetPassword(s.ctx(s.orgID), id, "a long enough password 1"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.app.Login(ctx, "emp@acme.test", "a long enough password 1", "10.0.0.1", "t"); err == nil ||
		!strings.Contains(err.Error(), "requires single sign-on") {
		t.Fatalf("employee password sign-in with SSO required: %v", err)
	}
	// The sign-in page says so, with a 403 and the form again.
	br := s.testEnv.browser()
	br.get("/login")
	w := br.post("/login", url.Values{"email": {"emp@acme.test"}, "password": {"a long enough password 1"}, "csrf_token": {br.cookies["compliance_ui_login"]}})
	if w.Code != 403 || !strings.Contains(w.Body.String(), "requires single sign-on") {
		t.Fatalf("sign-in page: %d %.400s", w.Code, w.Body)
	}
	// A wrong password still says wrong password (no hint either way).
	if _, err := s.app.Login(ctx, "emp@acme.test", "wrong password here", "10.0.0.2", "t"); err == nil || strings.Contains(err.Error(), "single sign-on") {
		t.Fatalf("wrong password: %v", err)
	}
	// Owners keep the break-glass password unless it is turned off.
	if _, err := s.app.Login(ctx, "own@acme.test", "a long enough password 1", "10.0.0.3", "t"); err != nil {
		t.Fatalf("owner break-glass: %v", err)
	}
	s.settings(t, map[string]any{"ssoRequired": true, "ownerBreakGlass": false})
	if _, err := s.app.Login(ctx, "own@acme.test", "a long enough password 1", "10.0.0.4", "t"); err == nil {
		t.Fatal("owner signed in with a password after break-glass was turned off")
	}

	// The e-mail-first step sends people of the domain to the provider.
	br = s.testEnv.browser()
	br.get("/login")
	w = br.post("/login/sso", url.Values{"email": {"someone@ACME.test"}, "csrf_token": {br.cookies["compliance_ui_login"]}})
	if w.Code != 303 && w.Code != 302 || w.Header().Get("Location") != "/sso/"+s.orgID+"/start" {
		t.Fatalf("e-mail-first step: %d %q", w.Code, w.Header().Get("Location"))
	}
	w = br.post("/login/sso", url.Values{"email": {"x@unknown.test"}, "csrf_token": {br.cookies["compliance_ui_login"]}})
	if w.Code != 200 || !strings.Contains(w.Body.String(), "No single sign-on is set up") {
		t.Fatalf("unknown domain: %d %.300s", w.Code, w.Body)
	}
}

func TestSSOSettingsAPI(t *testing.T) {
	s := newSSOEnv(t)
	s.settings(t, nil)
	w := s.do("GET", "/v1/organization/sso", s.owner, nil)
	if w.Code != 200 || strings.Contains(w.Body.String(), "client-secret-1") || !strings.Contains(w.Body.String(), `"clientSecretSet":true`) ||
		!strings.Contains(w.Body.String(), "/sso/oidc/callback") {
		t.Fatalf("get: %d %s", w.Code, w.Body)
	}
	// The secret is sealed at rest.
	var stored []byte
	if err := s.db.Raw().QueryRow(`SELECT client_secret FROM sso_settings WHERE organization_id = ?`, s.orgID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if len(stored) == 0 || strings.Contains(string(stored), "client-secret-1") {
		t.Fatal("client secret stored in clear")
	}
	// Omitting the secret keeps it.
	w = s.do("PUT", "/v1/organization/sso", s.owner, map[string]any{"enabled": true, "issuer": s.op.issuer, "clientId": "compliance",
		"allowedDomains": []string{"acme.test"}})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"clientSecretSet":true`) {
		t.Fatalf("put without secret: %d %s", w.Code, w.Body)
	}

	auditor := s.key(s.orgID, app.RoleAuditor)
	if w := s.do("GET", "/v1/organization/sso", auditor, nil); w.Code != 200 {
		t.Fatalf("auditor read: %d", w.Code)
	}
	for _, c := range []struct{ method, path string }{{"PUT", "/v1/organization/sso"}, {"POST", "/v1/organization/sso/test"}} {
		if w := s.do(c.method, c.path, auditor, map[string]any{}); w.Code != 403 {
			t.Fatalf("auditor %s %s: %d", c.method, c.path, w.Code)
		}
	}
	if w := s.do("GET", "/v1/organization/sso", s.key(s.orgID, app.RoleEmployee), nil); w.Code != 403 {
		t.Fatalf("employee read: %d", w.Code)
	}

	// Another organization sees its own (empty) settings, never these, and
	// cannot claim the domain.
	other := s.org("Other", "enterprise")
	okey := s.key(other, app.RoleOwner)
	w = s.do("GET", "/v1/organization/sso", okey, nil)
	if w.Code != 200 || strings.Contains(w.Body.String(), "acme.test") || strings.Contains(w.Body.String(), s.op.issuer) {
		t.Fatalf("other organization: %d %s", w.Code, w.Body)
	}
	w = s.do("PUT", "/v1/organization/sso", okey, map[string]any{"enabled": true, "issuer": "https://idp.other.test", "clientId": "x",
		"clientSecret": "y", "allowedDomains": []string{"ACME.test"}})
	if w.Code != 400 || !strings.Contains(w.Body.String(), "allowedDomains") {
		t.Fatalf("domain of another organization: %d %s", w.Code, w.Body)
	}

	bad := []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"enabled": true}, "issuer"},
		{map[string]any{"enabled": true, "issuer": "http://idp.test", "clientId": "x", "clientSecret": "y", "allowedDomains": []string{"a.test"}}, "issuer"},
		{map[string]any{"allowedDomains": []string{"not a domain"}}, "allowedDomains[0]"},
		{map[string]any{"roleMapping": []map[string]string{{"group": "g", "role": "owner"}}}, "roleMapping[0].role"},
		{map[string]any{"roleMapping": []map[string]string{{"group": "", "role": "employee"}}}, "roleMapping[0].group"},
		{map[string]any{"ssoRequired": true}, "ssoRequired"},
		{map[string]any{"enabled": true, "issuer": "https://idp.test", "clientId": "x", "allowedDomains": []string{"b.test"}}, "clientSecret"},
	}
	for _, c := range bad {
		w := s.do("PUT", "/v1/organization/sso", okey, c.body)
		if w.Code != 400 || !strings.Contains(w.Body.String(), `"`+c.field+`"`) {
			t.Errorf("%v: want 400 naming %s, got %d %s", c.body, c.field, w.Code, w.Body)
		}
	}
	if w := s.do("PUT", "/v1/organization/sso", okey, `{"enabled": tru`); w.Code != 400 {
		t.Fatalf("malformed JSON: %d", w.Code)
	}
}

func TestSSOSettingsPage(t *testing.T) {
	s := newSSOEnv(t)
	s.withPassword(s.orgID, "owner@acme.test", app.RoleOwner)
	br := s.testEnv.browser()
	br.signIn("owner@acme.test")
	w := br.get("/settings/sso")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "/sso/oidc/callback") {
		t.Fatalf("page: %d %.300s", w.Code, w.Body)
	}
	w = br.post("/settings/sso", url.Values{"enabled": {"on"}, "displayName": {"Acme login"}, "issuer": {s.op.issuer},
		"clientId": {"compliance"}, "clientSecret": {"client-secret-1"}, "allowedDomains": {"acme.test"},
		"groupsClaim": {"groups"}, "roleMapping": {"compliance-auditors = auditor"}, "ownerBreakGlass": {"on"}})
	if w.Code != 303 && w.Code != 302 {
		t.Fatalf("save: %d %.500s", w.Code, w.Body)
	}
	st, err := s.app.GetSSOSettings(s.ctx(s.orgID))
	if err != nil || !st.Enabled || len(st.RoleMapping) != 1 || st.RoleMapping[0].Role != app.RoleAuditor || !st.ClientSecretSet {
		t.Fatalf("saved settings: %+v %v", st, err)
	}
	w = br.post("/settings/sso", url.Values{"enabled": {"on"}, "issuer": {"ftp://x"}})
	if w.Code != 400 || !strings.Contains(w.Body.String(), "issuer must be an https://") {
		t.Fatalf("invalid save: %d %.500s", w.Code, w.Body)
	}
	w = br.post("/settings/sso/test", nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "Test passed") {
		t.Fatalf("test button: %d %.500s", w.Code, w.Body)
	}
	// The login page offers single sign-on.
	if w := s.testEnv.browser().get("/login"); !strings.Contains(w.Body.String(), "Continue with single sign-on") {
		t.Fatal("login page without the single sign-on step")
	}
}

// BenchmarkSSOSignIn measures one sign-in round trip through the
// in-process OpenID Provider: start, authorization request, login,
// callback, code exchange with PKCE, ID token verification, userinfo,
// session.
func BenchmarkSSOSignIn(b *testing.B) {
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := app.New(db, nil, log, app.Config{EnterpriseRate: 1 << 30, EnterpriseBurst: 1 << 30})
	h, err := New(a, log, Options{Version: "bench", Health: db.Ping, MaxUploadBytes: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	o, err := a.CreateOrganization(ctx, "Acme", app.PlanEnterprise)
	if err != nil {
		b.Fatal(err)
	}
	s := startSSO(b, a, h, o.ID)
	sys := app.SystemContext(ctx, o.ID)
	in := app.SSOSettingsInput{Enabled: true, Issuer: s.op.issuer, ClientID: "compliance", AllowedDomains: []string{"acme.test"}}
	sec := "client-secret-1"
	in.ClientSecret = &sec
	if _, err := a.PutSSOSettings(sys, in); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	b.ResetTimer()
	for range b.N {
		if code, body := s.signIn(b, s.idpBrowser(), "bob"); code != 200 {
			b.Fatalf("%d %.200s", code, body)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N)/1000, "ms/signin")
}

func TestSSOPageSCIMToken(t *testing.T) {
	e := newTestServer(t)
	org := e.org("Acme", "enterprise")
	e.withPassword(org, "owner@acme.test", app.RoleOwner)
	e.withPassword(org, "auditor@acme.test", app.RoleAuditor)
	br := e.browser()
	br.signIn("owner@acme.test")
	w := br.post("/settings/sso/scim-token", nil)
	m := regexp.MustCompile(`id="scim-token" type="text" readonly value="(scim_[a-z0-9]+)"`).FindStringSubmatch(w.Body.String())
	if w.Code != 200 || m == nil {
		t.Fatalf("create token: %d %.500s", w.Code, w.Body)
	}
	if _, err := e.app.AuthenticateSCIM(context.Background(), m[1]); err != nil {
		t.Fatalf("the shown token does not work: %v", err)
	}
	// Shown once: the page afterwards has only the hint.
	if w := br.get("/settings/sso"); strings.Contains(w.Body.String(), m[1]) || !strings.Contains(w.Body.String(), "A token is set") {
		t.Fatalf("token page after creation: %.500s", w.Body)
	}
	if w := br.post("/settings/sso/scim-token/revoke", nil); w.Code != 303 {
		t.Fatalf("revoke: %d", w.Code)
	}
	if _, err := e.app.AuthenticateSCIM(context.Background(), m[1]); err == nil {
		t.Fatal("revoked token still works")
	}
	// Auditors read the page but have no buttons and cannot post.
	ab := e.browser()
	ab.signIn("auditor@acme.test")
	if w := ab.get("/settings/sso"); w.Code != 200 || strings.Contains(w.Body.String(), "Create a token") || strings.Contains(w.Body.String(), "Save settings") {
		t.Fatalf("auditor page: %d", w.Code)
	}
	if w := ab.post("/settings/sso/scim-token", nil); w.Code != 403 {
		t.Fatalf("auditor create: %d", w.Code)
	}
}
