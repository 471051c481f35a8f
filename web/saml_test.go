package web

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"html"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	"github.com/crewjam/saml/samlidp"
	"golang.org/x/crypto/bcrypt"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/outbound"
	"github.com/compliance-appliance/compliance/sso"
	"github.com/compliance-appliance/compliance/storage"
)

// The identity provider of these tests is crewjam/saml's samlidp, started
// in-process on loopback with an in-memory user store. It signs both the
// response and the assertion (RSA-SHA1, its default). The assertion maker
// below spoils an assertion on demand (unsigned, wrong audience, wrong
// recipient, expired) the way a misconfigured or hostile provider would,
// still signed with the provider's key.

type spoilingMaker struct {
	mu   sync.Mutex
	mode string
}

func (m *spoilingMaker) set(mode string) { m.mu.Lock(); m.mode = mode; m.mu.Unlock() }

func (m *spoilingMaker) MakeAssertion(req *saml.IdpAuthnRequest, session *saml.Session) error {
	m.mu.Lock()
	mode := m.mode
	m.mu.Unlock()
	if mode == "expired" {
		req.Now = req.Now.Add(-time.Hour)
	}
	if err := (saml.DefaultAssertionMaker{}).MakeAssertion(req, session); err != nil {
		return err
	}
	switch mode {
	case "unsigned":
		// The response is still signed; the assertion is not.
		req.AssertionEl = req.Assertion.Element()
	case "audience":
		req.Assertion.Conditions.AudienceRestrictions[0].Audience.Value = "https://other.example/sp"
	case "recipient":
		req.Assertion.Subject.SubjectConfirmations[0].SubjectConfirmationData.Recipient = "https://other.example/acs"
	}
	return nil
}

type testSAMLIdP struct {
	hs    *httptest.Server
	url   string
	srv   *samlidp.Server
	maker *spoilingMaker
}

func startTestSAMLIdP(t testing.TB, users []testOPUser) *testSAMLIdP {
	t.Helper()
	keyPEM, certPEM, err := sso.NewSAML(nil).NewKeyPair("test idp")
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := pem.Decode([]byte(keyPEM))
	cb, _ := pem.Decode([]byte(certPEM))
	key, err := x509.ParsePKCS1PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	u, _ := url.Parse("http://" + hs.Listener.Addr().String())
	s, err := samlidp.New(samlidp.Options{URL: *u, Key: key, Certificate: cert, Store: &samlidp.MemoryStore{},
		Logger: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	maker := &spoilingMaker{}
	s.IDP.AssertionMaker = maker
	hash, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	for _, us := range users {
		if err := s.Store.Put("/users/"+us.username, samlidp.User{Name: us.username, HashedPassword: hash,
			Email: us.email, Groups: us.groups, CommonName: us.username + " Test"}); err != nil {
			t.Fatal(err)
		}
	}
	hs.Config.Handler = s
	hs.Start()
	t.Cleanup(hs.Close)
	return &testSAMLIdP{hs: hs, url: u.String(), srv: s, maker: maker}
}

// samlEnv is the appliance served on loopback with SAML sign-in for an
// organization at the test identity provider.
type samlEnv struct {
	*testEnv
	appURL string
	idp    *testSAMLIdP
	orgID  string
	owner  string
}

var samlUsers = []testOPUser{
	{"alice", "alice@acme.test", true, []string{"compliance-auditors"}},
	{"bob", "bob@acme.test", true, nil},
	{"eve", "eve@other.test", true, nil},
	{"dave", "dave@acme.test", true, nil},
	{"olga", "olga@acme.test", true, []string{"admins"}},
}

func newSAMLEnv(t *testing.T) *samlEnv {
	return newSAMLEnvLogged(t, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func newSAMLEnvLogged(t *testing.T, lg *slog.Logger) *samlEnv {
	e := newTestServerLogged(t, nil, lg)
	e.clock.Advance(time.Since(e.clock.Now())) // certificates are checked against the app's clock
	orgID := e.org("Acme", "enterprise")
	srv := httptest.NewServer(e.srv)
	t.Cleanup(srv.Close)
	s := &samlEnv{testEnv: e, appURL: srv.URL, idp: startTestSAMLIdP(t, samlUsers), orgID: orgID,
		owner: e.key(orgID, app.RoleOwner)}
	c, err := outbound.New(outbound.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.app.SetSAMLProvider(sso.NewSAML(c))
	s.configure(t, s.orgID, s.owner, nil)
	return s
}

// configure saves SAML settings for an organization (metadata read from
// the provider's URL) and registers the organization's service provider
// metadata at the provider.
func (s *samlEnv) configure(t *testing.T, orgID, key string, body map[string]any) {
	t.Helper()
	in := map[string]any{"enabled": true, "protocol": "saml", "displayName": "Acme SAML", "allowedDomains": []string{"acme.test"},
		"roleMapping": []map[string]string{{"group": "compliance-auditors", "role": "auditor"}},
		"saml": map[string]any{"metadataUrl": s.idp.url + "/metadata", "emailAttribute": "mail",
			"nameAttribute": "cn", "groupsAttribute": "eduPersonAffiliation"}}
	for k, v := range body {
		in[k] = v
	}
	w := s.do("PUT", "/v1/organization/sso", key, in)
	if w.Code != 200 {
		t.Fatalf("put saml settings: %d %s", w.Code, w.Body)
	}
	// The provider reads the service provider's metadata from its public
	// address.
	resp, err := http.Get(s.appURL + "/sso/saml/" + orgID + "/metadata")
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/samlmetadata+xml" {
		t.Fatalf("sp metadata: %d %s", resp.StatusCode, md)
	}
	req, _ := http.NewRequest("PUT", s.idp.url+"/services/"+orgID, bytes.NewReader(md))
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("register sp at idp: %v %v", err, resp)
	}
	resp.Body.Close()
}

func samlBrowser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
}

var (
	samlFormActionRe = regexp.MustCompile(`<form method="post" action="([^"]*)"`)
	samlHiddenRe     = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`)
)

// readForm returns the action and hidden fields of the first form of a
// page.
func samlReadForm(t testing.TB, body string) (string, url.Values) {
	t.Helper()
	m := samlFormActionRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no form in %.400s", body)
	}
	f := url.Values{}
	for _, h := range samlHiddenRe.FindAllStringSubmatch(body, -1) {
		f.Set(h[1], html.UnescapeString(h[2]))
	}
	return html.UnescapeString(m[1]), f
}

func readBody(t testing.TB) func(*http.Response, error) (int, string) {
	return func(resp *http.Response, err error) (int, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
}

// idpResponse starts a sign-in at the appliance for orgID, signs in at the
// provider as user and returns the provider's auto-submitted form: the
// ACS address and its fields (SAMLResponse), not yet posted.
func (s *samlEnv) idpResponse(t testing.TB, b *http.Client, orgID, user string) (string, url.Values) {
	t.Helper()
	code, body := readBody(t)(b.Get(s.appURL + "/sso/" + orgID + "/start"))
	if code != 200 {
		t.Fatalf("start: %d %.400s", code, body)
	}
	// The provider's login form; posted to its SSO address with the
	// credentials, it answers with the auto-submitting response form.
	_, f := samlReadForm(t, body)
	f.Set("user", user)
	f.Set("password", "pw")
	code, body = readBody(t)(b.PostForm(s.idp.url+"/sso", f))
	if code != 200 || !strings.Contains(body, "SAMLResponse") {
		t.Fatalf("idp login: %d %.400s", code, body)
	}
	return samlReadForm(t, body)
}

// signIn runs the whole browser flow and returns the last status and page.
func (s *samlEnv) signIn(t testing.TB, b *http.Client, user string) (int, string) {
	t.Helper()
	action, f := s.idpResponse(t, b, s.orgID, user)
	return readBody(t)(b.PostForm(action, f))
}

func (s *samlEnv) findPerson(t *testing.T, email string) *app.Person {
	return (&ssoEnv{testEnv: s.testEnv, ssoIdP: &ssoIdP{orgID: s.orgID}}).findPerson(t, email)
}

func TestSAMLSignInEndToEnd(t *testing.T) {
	s := newSAMLEnv(t)

	// The settings show the parsed metadata and the addresses to register.
	w := s.do("GET", "/v1/organization/sso", s.owner, nil)
	var st app.SSOSettings
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Protocol != "saml" || st.SAML == nil || st.SAML.IdP == nil {
		t.Fatalf("settings: %v %s", err, w.Body)
	}
	if st.SAML.IdP.EntityID != s.idp.url+"/metadata" || len(st.SAML.IdP.Certificates) != 1 || st.SAML.IdP.SSOURL != s.idp.url+"/sso" {
		t.Fatalf("idp from metadata: %+v", st.SAML.IdP)
	}
	if st.SAML.ACSURL != "http://example.com/sso/saml/"+s.orgID+"/acs" || !strings.HasPrefix(st.SAML.SPCertificate, "-----BEGIN CERTIFICATE-----") {
		t.Fatalf("sp addresses: %+v", st.SAML)
	}
	if strings.Contains(w.Body.String(), "PRIVATE KEY") {
		t.Fatal("the service provider's private key is returned")
	}
	var sealed []byte
	if err := s.db.Raw().QueryRow(`SELECT sp_key FROM saml_settings WHERE organization_id = ?`, s.orgID).Scan(&sealed); err != nil ||
		len(sealed) == 0 || bytes.Contains(sealed, []byte("PRIVATE KEY")) {
		t.Fatalf("the key is not sealed at rest: %v %q", err, sealed)
	}

	// Alice is new: created just in time, her group maps her to auditor.
	b := samlBrowser()
	code, body := s.signIn(t, b, "alice")
	if code != 200 || strings.Contains(body, `action="/login"`) {
		t.Fatalf("sign-in did not land signed in: %d %.400s", code, body)
	}
	alice := s.findPerson(t, "alice@acme.test")
	if alice == nil || alice.Role != app.RoleAuditor || !alice.IsActive || alice.Name != "alice Test" {
		t.Fatalf("alice not created as auditor: %+v", alice)
	}
	if code, _ := readBody(t)(b.Get(s.appURL + "/people")); code != 200 {
		t.Fatalf("alice's session does not open pages: %d", code)
	}

	// Bob has no mapped group: employee.
	if code, body := s.signIn(t, samlBrowser(), "bob"); code != 200 {
		t.Fatalf("bob: %d %.300s", code, body)
	}
	if p := s.findPerson(t, "bob@acme.test"); p == nil || p.Role != app.RoleEmployee {
		t.Fatalf("bob not created as employee: %+v", p)
	}

	// Only an owner maps a group to admin.
	admin := s.key(s.orgID, app.RoleAdmin)
	w = s.do("PUT", "/v1/organization/sso", admin, map[string]any{"enabled": true, "protocol": "saml",
		"allowedDomains": []string{"acme.test"}, "roleMapping": []map[string]string{{"group": "admins", "role": "admin"}}})
	if w.Code != 400 || !strings.Contains(w.Body.String(), "roleMapping[0].role") {
		t.Fatalf("admin mapping to admin: %d %s", w.Code, w.Body)
	}
	s.configure(t, s.orgID, s.owner, map[string]any{"roleMapping": []map[string]string{{"group": "admins", "role": "admin"}}})
	if code, _ := s.signIn(t, samlBrowser(), "olga"); code != 200 {
		t.Fatalf("olga: %d", code)
	}
	if p := s.findPerson(t, "olga@acme.test"); p == nil || p.Role != app.RoleAdmin {
		t.Fatalf("olga not mapped to admin: %+v", p)
	}

	// The e-mail-first step routes the domain to the SAML provider.
	br := s.testEnv.browser()
	br.get("/login")
	w = br.post("/login/sso", url.Values{"email": {"x@acme.test"}, "csrf_token": {br.cookies["compliance_ui_login"]}})
	if w.Header().Get("Location") != "/sso/"+s.orgID+"/start" {
		t.Fatalf("e-mail-first: %d %q", w.Code, w.Header().Get("Location"))
	}
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func TestSAMLRefusals(t *testing.T) {
	logs := &lockedBuffer{}
	s := newSAMLEnvLogged(t, slog.New(slog.NewTextHandler(logs, nil)))
	post := func(action string, f url.Values) (int, string) { return readBody(t)(samlBrowser().PostForm(action, f)) }
	expectRefused := func(name string, code int, body, want string) {
		t.Helper()
		if code != 400 || !strings.Contains(html.UnescapeString(body), want) {
			t.Fatalf("%s: %d, want 400 with %q: %.600s", name, code, want, body)
		}
	}
	for _, c := range []struct{ mode, want string }{
		{"unsigned", "the assertion is not signed"},
		{"audience", "wrong audience"},
		{"recipient", "addressed to another recipient"},
		{"expired", "outside its validity period"},
	} {
		s.idp.maker.set(c.mode)
		code, body := s.signIn(t, samlBrowser(), "bob")
		expectRefused(c.mode, code, body, c.want)
	}
	s.idp.maker.set("")
	if p := s.findPerson(t, "bob@acme.test"); p != nil {
		t.Fatalf("a refused sign-in created a person: %+v", p)
	}

	// An unsigned response around an unsigned assertion.
	s.idp.maker.set("unsigned")
	action, f := s.idpResponse(t, samlBrowser(), s.orgID, "bob")
	s.idp.maker.set("")
	raw, _ := base64.StdEncoding.DecodeString(f.Get("SAMLResponse"))
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(raw); err != nil {
		t.Fatal(err)
	}
	if sig := doc.Root().FindElement("./Signature"); sig == nil {
		t.Fatal("the provider's response is not signed")
	} else {
		doc.Root().RemoveChild(sig)
	}
	out, _ := doc.WriteToBytes()
	f.Set("SAMLResponse", base64.StdEncoding.EncodeToString(out))
	code, body := post(action, f)
	expectRefused("unsigned response and assertion", code, body, "the assertion is not signed")

	// A tampered signed assertion (the e-mail changed after signing).
	action, f = s.idpResponse(t, samlBrowser(), s.orgID, "bob")
	raw, _ = base64.StdEncoding.DecodeString(f.Get("SAMLResponse"))
	raw = bytes.ReplaceAll(raw, []byte("bob@acme.test"), []byte("bod@acme.test"))
	f.Set("SAMLResponse", base64.StdEncoding.EncodeToString(raw))
	code, body = post(action, f)
	expectRefused("tampered", code, body, "signature is not valid")

	// The same response posted twice: the second is a replay.
	action, f = s.idpResponse(t, samlBrowser(), s.orgID, "bob")
	if code, body := post(action, f); code != 200 {
		t.Fatalf("first post: %d %.300s", code, body)
	}
	code, body = post(action, f)
	expectRefused("replay", code, body, "already used (replay refused)")
	var n int
	if err := s.db.Raw().QueryRow(`SELECT COUNT(*) FROM saml_assertions WHERE organization_id = ?`, s.orgID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("replay cache rows: %d %v", n, err)
	}

	// Sign-in started at the provider (no request of ours): refused.
	action, f = s.idpResponse(t, samlBrowser(), s.orgID, "bob")
	raw, _ = base64.StdEncoding.DecodeString(f.Get("SAMLResponse"))
	doc = etree.NewDocument()
	_ = doc.ReadFromBytes(raw)
	doc.Root().RemoveAttr("InResponseTo")
	for _, el := range doc.FindElements("//SubjectConfirmationData") {
		el.RemoveAttr("InResponseTo")
	}
	out, _ = doc.WriteToBytes()
	f.Set("SAMLResponse", base64.StdEncoding.EncodeToString(out))
	code, body = post(action, f)
	expectRefused("idp-initiated", code, body, "did not ask for")

	// A domain that is not allowed here, an identity of another
	// organization's domain, and a deactivated person.
	code, body = s.signIn(t, samlBrowser(), "eve")
	expectRefused("domain", code, body, "e-mail domain other.test is not allowed")
	dave := s.testEnv.person(s.orgID, "dave@acme.test", app.RoleEmployee)
	off := false
	if _, err := s.app.UpdatePerson(s.ctx(s.orgID), dave, app.PersonPatch{IsActive: &off}); err != nil {
		t.Fatal(err)
	}
	code, body = s.signIn(t, samlBrowser(), "dave")
	expectRefused("deactivated", code, body, "deactivated")

	// Another organization with its own SAML sign-in for other.test: a
	// response for Acme's request posted to its ACS is refused, and
	// Acme's provider cannot sign eve in at Acme.
	other := s.org("Other", "enterprise")
	otherOwner := s.key(other, app.RoleOwner)
	s.configure(t, other, otherOwner, map[string]any{"allowedDomains": []string{"other.test"}})
	action, f = s.idpResponse(t, samlBrowser(), s.orgID, "eve")
	code, body = post(strings.Replace(action, s.orgID, other, 1), f)
	expectRefused("other organization's ACS", code, body, "was not started here")
	code, body = post(action, f)
	expectRefused("other organization's domain", code, body, "e-mail domain other.test is not allowed")

	// Garbage and a missing response: error pages, never 500.
	code, body = post(action, url.Values{"SAMLResponse": {"%%%"}})
	expectRefused("not base64", code, body, "not base64")
	code, body = post(action, url.Values{})
	expectRefused("missing", code, body, "no SAMLResponse")
	code, _ = post(s.appURL+"/sso/saml/org_nope/acs", url.Values{"SAMLResponse": {"x"}})
	if code != 400 {
		t.Fatalf("unknown organization: %d", code)
	}
	if code, _ := readBody(t)(http.Get(s.appURL + "/sso/saml/org_nope/metadata")); code != 404 {
		t.Fatalf("metadata of an unknown organization: %d", code)
	}

	// Each refusal is logged with its reason, never with the assertion.
	logged := logs.String()
	for _, want := range []string{"the assertion is not signed", "wrong audience", "replay refused", "e-mail domain other.test"} {
		if !strings.Contains(logged, "saml sign-in refused") || !strings.Contains(logged, want) {
			t.Fatalf("no refusal log line with %q in %.2000s", want, logged)
		}
	}
	if strings.Contains(logged, "PHNhbWxw") || strings.Contains(logged, "Assertion ID=") || strings.Contains(logged, "<saml") {
		t.Fatalf("the log holds the response: %.2000s", logged)
	}
}

func TestSAMLRequiredRefusesPasswords(t *testing.T) {
	s := newSAMLEnv(t)
	s.configure(t, s.orgID, s.owner, map[string]any{"ssoRequired": true})
	emp := s.testEnv.person(s.orgID, "emp@acme.test", app.RoleEmployee)
	if err := s.app.SetPassword(s.ctx(s.orgID), emp, "a long enough password 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.app.Login(context.Background(), "emp@acme.test", "a long enough password 1", "10.0.0.1", "t"); err == nil ||
		!strings.Contains(err.Error(), "requires single sign-on: sign in with Acme SAML") {
		t.Fatalf("password sign-in with SAML required: %v", err)
	}
	// SAML sign-in itself still works.
	if code, body := s.signIn(t, samlBrowser(), "bob"); code != 200 {
		t.Fatalf("bob: %d %.300s", code, body)
	}
}

func TestSAMLSettingsValidation(t *testing.T) {
	s := newSAMLEnv(t)
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"bad protocol", map[string]any{"protocol": "ldap"}, "protocol"},
		{"metadata URL not http", map[string]any{"protocol": "saml", "saml": map[string]any{"metadataUrl": "ftp://x/y"}}, "saml.metadataUrl"},
		{"metadata URL unreachable", map[string]any{"protocol": "saml", "saml": map[string]any{"metadataUrl": "http://127.0.0.1:1/metadata"}}, "saml.metadataUrl"},
		{"metadata URL 404", map[string]any{"protocol": "saml", "saml": map[string]any{"metadataUrl": s.idp.url + "/nothing"}}, "saml.metadataUrl"},
		{"metadata XML not XML", map[string]any{"protocol": "saml", "saml": map[string]any{"metadataXml": "hello"}}, "saml.metadataXml"},
		{"metadata XML without IdP", map[string]any{"protocol": "saml", "saml": map[string]any{
			"metadataXml": `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"></EntityDescriptor>`}}, "saml.metadataXml"},
		{"enabled without metadata", map[string]any{"enabled": true, "protocol": "saml", "allowedDomains": []string{"acme.test"},
			"saml": map[string]any{}}, "saml.metadataXml"},
		{"enabled without domains", map[string]any{"enabled": true, "protocol": "saml", "allowedDomains": []string{}}, "allowedDomains"},
		{"attribute too long", map[string]any{"protocol": "saml", "saml": map[string]any{"emailAttribute": strings.Repeat("a", 301)}}, "saml.emailAttribute"},
		{"mapping to owner", map[string]any{"protocol": "saml", "roleMapping": []map[string]string{{"group": "g", "role": "owner"}}}, "roleMapping[0].role"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := s.do("PUT", "/v1/organization/sso", s.owner, c.body)
			if w.Code != 400 || !strings.Contains(w.Body.String(), `"`+c.field+`"`) {
				t.Fatalf("%d %s, want 400 naming %s", w.Code, w.Body, c.field)
			}
		})
	}

	// Pasted metadata works like a URL; an OIDC-only body keeps the SAML part.
	resp, err := http.Get(s.idp.url + "/metadata")
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	w := s.do("PUT", "/v1/organization/sso", s.owner, map[string]any{"enabled": true, "protocol": "saml",
		"allowedDomains": []string{"acme.test"}, "saml": map[string]any{"metadataXml": string(md)}})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"entityId":"`+s.idp.url+`/metadata"`) {
		t.Fatalf("pasted metadata: %d %.400s", w.Code, w.Body)
	}
	w = s.do("PUT", "/v1/organization/sso", s.owner, map[string]any{"enabled": true, "allowedDomains": []string{"acme.test"}})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"protocol":"saml"`) {
		t.Fatalf("body without protocol: %d %.400s", w.Code, w.Body)
	}

	// Auditors read, cannot write or test; another organization sees its own.
	aud := s.key(s.orgID, app.RoleAuditor)
	if w := s.do("GET", "/v1/organization/sso", aud, nil); w.Code != 200 || !strings.Contains(w.Body.String(), `"protocol":"saml"`) {
		t.Fatalf("auditor read: %d", w.Code)
	}
	if w := s.do("PUT", "/v1/organization/sso", aud, map[string]any{"protocol": "oidc"}); w.Code != 403 {
		t.Fatalf("auditor write: %d", w.Code)
	}
	if w := s.do("POST", "/v1/organization/sso/test", aud, nil); w.Code != 403 {
		t.Fatalf("auditor test: %d", w.Code)
	}
	other := s.org("Other", "enterprise")
	if w := s.do("GET", "/v1/organization/sso", s.key(other, app.RoleOwner), nil); w.Code != 200 ||
		!strings.Contains(w.Body.String(), `"protocol":"oidc"`) || strings.Contains(w.Body.String(), s.idp.url) {
		t.Fatalf("other organization's settings: %d %.300s", w.Code, w.Body)
	}
}

func TestSAMLSettingsTest(t *testing.T) {
	s := newSAMLEnv(t)
	w := s.do("POST", "/v1/organization/sso/test", s.owner, nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"ok":true`) || !strings.Contains(w.Body.String(), `"entityId"`) {
		t.Fatalf("test: %d %s", w.Code, w.Body)
	}
	// Far in the future the provider's certificate has expired.
	s.clock.Advance(11 * 365 * 24 * time.Hour)
	w = s.do("POST", "/v1/organization/sso/test", s.owner, nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"ok":false`) || !strings.Contains(w.Body.String(), "expired") {
		t.Fatalf("expired certificate: %d %s", w.Code, w.Body)
	}
	// The provider goes away: unreachable, said so.
	s.clock.Advance(-11 * 365 * 24 * time.Hour)
	s.idp.hs.Close()
	w = s.do("POST", "/v1/organization/sso/test", s.owner, nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"ok":false`) || !strings.Contains(w.Body.String(), "unreachable") {
		t.Fatalf("unreachable: %d %s", w.Code, w.Body)
	}
}

// BenchmarkSAMLSignIn measures one full SP-initiated sign-in: start
// (signed AuthnRequest), the provider's login and signed response, the
// ACS's verification, just-in-time match and the session, with a new
// browser each time.
func BenchmarkSAMLSignIn(b *testing.B) {
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	lg := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := app.New(db, nil, lg, app.Config{EnterpriseRate: 1 << 30, EnterpriseBurst: 1 << 30})
	h, err := New(a, lg, Options{Version: "bench", Health: db.Ping, MaxUploadBytes: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	o, err := a.CreateOrganization(ctx, "Acme", app.PlanEnterprise)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	idp := startTestSAMLIdP(b, samlUsers)
	c, _ := outbound.New(outbound.Options{MaxRetries: -1})
	a.SetSAMLProvider(sso.NewSAML(c))
	sys := app.SystemContext(ctx, o.ID)
	if _, err := a.PutSSOSettings(sys, app.SSOSettingsInput{Enabled: true, Protocol: "saml", AllowedDomains: []string{"acme.test"},
		SAML: &app.SAMLSettingsInput{MetadataURL: idp.url + "/metadata", EmailAttribute: "mail"}}); err != nil {
		b.Fatal(err)
	}
	resp, err := http.Get(srv.URL + "/sso/saml/" + o.ID + "/metadata")
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest("PUT", idp.url+"/services/sp", resp.Body)
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode/100 != 2 {
		b.Fatalf("register sp: %v %v", err, r)
	}
	resp.Body.Close()
	s := &samlEnv{appURL: srv.URL, idp: idp, orgID: o.ID}
	start := time.Now()
	b.ResetTimer()
	for range b.N {
		if code, body := s.signIn(b, samlBrowser(), "bob"); code != 200 {
			b.Fatalf("%d %.200s", code, body)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N)/1000, "ms/signin")
}

func TestSAMLSettingsPage(t *testing.T) {
	s := newSAMLEnv(t)
	s.withPassword(s.orgID, "owner@acme.test", app.RoleOwner)
	br := s.testEnv.browser()
	br.signIn("owner@acme.test")
	w := br.get("/settings/sso")
	body := w.Body.String()
	if w.Code != 200 || !strings.Contains(body, "/sso/saml/"+s.orgID+"/acs") || !strings.Contains(body, "/sso/saml/"+s.orgID+"/metadata") ||
		!strings.Contains(body, s.idp.url+"/metadata") || !strings.Contains(body, `value="saml" checked`) {
		t.Fatalf("page: %d %.2000s", w.Code, body)
	}
	form := url.Values{"enabled": {"on"}, "protocol": {"saml"}, "displayName": {"Acme SAML"}, "allowedDomains": {"acme.test"},
		"roleMapping": {"admins = admin"}, "ownerBreakGlass": {"on"}, "samlMetadataUrl": {s.idp.url + "/metadata"},
		"samlMetadataXml": {""}, "samlEmailAttribute": {"mail"}, "samlNameAttribute": {"cn"}, "samlGroupsAttribute": {"eduPersonAffiliation"}}
	if w := br.post("/settings/sso", form); w.Code != 303 && w.Code != 302 {
		t.Fatalf("save: %d %.500s", w.Code, w.Body)
	}
	st, err := s.app.GetSSOSettings(s.ctx(s.orgID))
	if err != nil || st.Protocol != "saml" || st.SAML.GroupsAttribute != "eduPersonAffiliation" || len(st.RoleMapping) != 1 || st.SAML.IdP == nil {
		t.Fatalf("saved: %+v %v", st, err)
	}
	form.Set("samlMetadataUrl", "")
	form.Set("samlMetadataXml", "<nope/>")
	if w := br.post("/settings/sso", form); w.Code != 400 || !strings.Contains(w.Body.String(), "saml.metadataXml is not usable") {
		t.Fatalf("invalid save: %d %.500s", w.Code, w.Body)
	}
	if w := br.post("/settings/sso/test", nil); w.Code != 200 || !strings.Contains(w.Body.String(), "Test passed") {
		t.Fatalf("test button: %d %.500s", w.Code, w.Body)
	}
	// The owner's "Test sign-in" link starts the SAML flow.
	if w := br.get("/sso/" + s.orgID + "/start?next=/settings/sso"); w.Code != 302 || !strings.HasPrefix(w.Header().Get("Location"), s.idp.url+"/sso?SAMLRequest=") {
		t.Fatalf("start: %d %q", w.Code, w.Header().Get("Location"))
	} else if loc := w.Header().Get("Location"); !strings.Contains(loc, "&SigAlg=") || !strings.Contains(loc, "&Signature=") {
		t.Fatalf("the AuthnRequest is not signed: %s", loc)
	}
}
