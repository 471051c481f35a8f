package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/agent"
	"github.com/compliance-appliance/compliance/app"
)

// agentChallenge returns a verifier and its challenge.
func agentChallenge() (string, string) {
	v := "verifier-" + strings.Repeat("x", 40)
	return v, app.AgentChallenge(v)
}

// TestDeviceAgentSignInAPI: a person approves an agent sign-in, the agent
// exchanges code and verifier for a sign-in token, lists the person's
// organizations and registers a device linked to the person; codes and
// tokens work once, expire, and need the right verifier.
func TestDeviceAgentSignInAPI(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Sign Co", app.PlanProfessional)
	other := e.org("Other Co", app.PlanProfessional)
	adaID, ada := e.personKey(org, "ada@example.com", app.RoleEmployee)
	verifier, challenge := agentChallenge()
	approve := func(key string) map[string]any {
		t.Helper()
		rec := e.do("POST", "/v1/device-agent/auth-code", key, map[string]any{"callback_port": 50123, "state": "st-1", "code_challenge": challenge})
		wantStatus(t, rec, http.StatusCreated)
		return obj(t, rec)
	}
	res := approve(ada)
	code := res["code"].(string)
	if !strings.HasPrefix(code, app.AgentAuthCodePrefix) || !strings.HasPrefix(res["redirectUrl"].(string), "http://127.0.0.1:50123/callback?code=") ||
		!strings.Contains(res["redirectUrl"].(string), "state=st-1") {
		t.Fatalf("auth code: %v", res)
	}
	// Bad input names the field.
	wantField(t, e.do("POST", "/v1/device-agent/auth-code", ada, map[string]any{"callback_port": 0, "state": "s", "code_challenge": challenge}), "callback_port")
	wantField(t, e.do("POST", "/v1/device-agent/auth-code", ada, map[string]any{"callback_port": 5, "code_challenge": challenge}), "state")
	wantField(t, e.do("POST", "/v1/device-agent/auth-code", ada, map[string]any{"callback_port": 5, "state": "s", "code_challenge": "short"}), "code_challenge")
	wantField(t, e.do("POST", "/v1/device-agent/exchange-code", "", map[string]any{"code": code}), "code_verifier")
	// An organization key has no person to sign in as; no credential is 401.
	wantStatus(t, e.do("POST", "/v1/device-agent/auth-code", e.key(org, app.RoleAdmin), map[string]any{"callback_port": 5, "state": "s", "code_challenge": challenge}), http.StatusForbidden)
	wantStatus(t, e.do("POST", "/v1/device-agent/auth-code", "", map[string]any{"callback_port": 5, "state": "s", "code_challenge": challenge}), http.StatusUnauthorized)

	// A wrong verifier is refused and uses the code up.
	wantField(t, e.do("POST", "/v1/device-agent/exchange-code", "", map[string]any{"code": code, "code_verifier": "wrong"}), "code_verifier")
	wantField(t, e.do("POST", "/v1/device-agent/exchange-code", "", map[string]any{"code": code, "code_verifier": verifier}), "code")

	// The right verifier gets a sign-in token, once.
	code = approve(ada)["code"].(string)
	rec := e.do("POST", "/v1/device-agent/exchange-code", "", map[string]any{"code": code, "code_verifier": verifier})
	wantStatus(t, rec, http.StatusCreated)
	sess := obj(t, rec)
	token := sess["session_token"].(string)
	if !strings.HasPrefix(token, app.AgentSessionPrefix) || sess["user_id"] != adaID {
		t.Fatalf("exchange: %v", sess)
	}
	wantField(t, e.do("POST", "/v1/device-agent/exchange-code", "", map[string]any{"code": code, "code_verifier": verifier}), "code")

	rec = e.do("GET", "/v1/device-agent/my-organizations", "", nil, "X-Agent-Session", token)
	wantStatus(t, rec, http.StatusOK)
	orgs := obj(t, rec)["organizations"].([]any)
	if len(orgs) != 1 || orgs[0].(map[string]any)["id"] != org {
		t.Fatalf("my organizations: %v", orgs)
	}
	// The caller's own credential lists them too; a bad token is 401.
	rec = e.do("GET", "/v1/device-agent/my-organizations", ada, nil)
	wantStatus(t, rec, http.StatusOK)
	wantStatus(t, e.do("GET", "/v1/device-agent/my-organizations", "", nil, "X-Agent-Session", "cas_nope"), http.StatusUnauthorized)

	body := map[string]any{"name": "Ada's Mac", "hostname": "ada-mac", "platform": "macos", "osVersion": "14.5", "serialNumber": "SIGN-1"}
	// Another organization is refused, naming the field; the token survives.
	body["organizationId"] = other
	wantField(t, e.do("POST", "/v1/device-agent/register", "", body, "X-Agent-Session", token), "organizationId")
	body["organizationId"] = org
	rec = e.do("POST", "/v1/device-agent/register", "", body, "X-Agent-Session", token)
	wantStatus(t, rec, http.StatusCreated)
	reg := obj(t, rec)
	devID, devTok := reg["deviceId"].(string), reg["deviceToken"].(string)
	d, err := e.app.GetDevice(e.ctx(org), devID)
	if err != nil || d.PersonID == nil || *d.PersonID != adaID {
		t.Fatalf("device %v: %+v", err, d)
	}
	wantStatus(t, e.do("POST", "/v1/device-agent/check-in", "", checks(devID, e.clock.Now()), "X-Device-Token", devTok), http.StatusCreated)
	// The sign-in token registered one device and ended.
	body["serialNumber"] = "SIGN-2"
	wantStatus(t, e.do("POST", "/v1/device-agent/register", "", body, "X-Agent-Session", token), http.StatusUnauthorized)
	wantStatus(t, e.do("GET", "/v1/device-agent/my-organizations", "", nil, "X-Agent-Session", token), http.StatusUnauthorized)

	// Codes expire after five minutes, sign-in tokens after ten.
	code = approve(ada)["code"].(string)
	e.clock.Advance(app.AgentAuthCodeTTL + time.Second)
	wantField(t, e.do("POST", "/v1/device-agent/exchange-code", "", map[string]any{"code": code, "code_verifier": verifier}), "code")
	code = approve(ada)["code"].(string)
	rec = e.do("POST", "/v1/device-agent/exchange-code", "", map[string]any{"code": code, "code_verifier": verifier})
	wantStatus(t, rec, http.StatusCreated)
	token = obj(t, rec)["session_token"].(string)
	e.clock.Advance(app.AgentSessionTTL + time.Second)
	wantStatus(t, e.do("GET", "/v1/device-agent/my-organizations", "", nil, "X-Agent-Session", token), http.StatusUnauthorized)

	// An auditor can enrol into no organization.
	_, aud := e.personKey(other, "audrey@example.com", app.RoleAuditor)
	rec = e.do("GET", "/v1/device-agent/my-organizations", aud, nil)
	wantStatus(t, rec, http.StatusOK)
	if got := obj(t, rec)["organizations"].([]any); len(got) != 0 {
		t.Fatalf("auditor's organizations: %v", got)
	}
}

// TestDeviceAgentBrowserSignIn drives the whole flow: the agent starts the
// sign-in on a loopback port, a signed-in browser approves on
// /agent/authorize, the browser follows the link back to the agent, and the
// agent exchanges the code, picks the organization and registers.
func TestDeviceAgentBrowserSignIn(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Browser Co", app.PlanProfessional)
	adaID := e.person(org, "ada@example.com", app.RoleEmployee)
	if err := e.app.SetPassword(e.ctx(org), adaID, testPassword); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(e.srv)
	defer ts.Close()
	c := agent.NewClient(ts.URL, "1.2.3")
	sr, err := c.StartSignIn()
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(sr.URL)
	if err != nil || u.Path != "/agent/authorize" {
		t.Fatalf("sign-in URL %q", sr.URL)
	}
	b := e.browser()
	b.signIn("ada@example.com")
	page := b.get(u.RequestURI())
	wantStatus(t, page, http.StatusOK)
	wantBody(t, page, "Enrol a computer as ada@example.com?", "Browser Co", `name="challenge"`)
	form := url.Values{}
	for _, k := range []string{"port", "state", "challenge"} {
		form.Set(k, u.Query().Get(k))
	}
	rec := b.post("/agent/authorize", form)
	wantStatus(t, rec, http.StatusOK)
	m := regexp.MustCompile(`href="(http://127\.0\.0\.1:[0-9]+/callback\?[^"]+)"`).FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("no link back to the agent: %s", rec.Body.String())
	}
	back := strings.ReplaceAll(m[1], "&amp;", "&")
	// A forged answer with another state is refused by the agent.
	bad, err := http.Get(strings.Replace(back, "state=", "state=x", 1))
	if err != nil {
		t.Fatal(err)
	}
	bad.Body.Close()
	if bad.StatusCode != http.StatusBadRequest {
		t.Fatalf("forged callback: %d", bad.StatusCode)
	}
	resp, err := http.Get(back)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("callback: %d", resp.StatusCode)
	}
	ctx := context.Background()
	session, err := c.Wait(ctx, sr)
	if err != nil {
		t.Fatal(err)
	}
	orgs, err := c.MyOrganizations(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	o, err := agent.PickOrganization(orgs, "")
	if err != nil || o.ID != org {
		t.Fatalf("pick %v: %+v", err, o)
	}
	st, err := c.EnrollWithSession(ctx, session, o.ID, agent.DeviceInfo{Name: "ada-laptop", Hostname: "ada-laptop", Platform: "linux", OSVersion: "Debian 12"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.app.GetDevice(e.ctx(org), st.DeviceID)
	if err != nil || d.PersonID == nil || *d.PersonID != adaID || !strings.HasPrefix(st.DeviceToken, app.DeviceAgentTokenPrefix) {
		t.Fatalf("enrolled device %v: %+v %+v", err, d, st)
	}
	// A damaged link shows a clear page, not an error.
	wantBody(t, b.get("/agent/authorize?port=0"), "incomplete or damaged")
	// Signed out, the page sends the person to sign in and back.
	rec = e.browser().get(u.RequestURI())
	if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Location"), "/login?next=") {
		t.Fatalf("signed out: %d %s", rec.Code, rec.Header().Get("Location"))
	}
}
