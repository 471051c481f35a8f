package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	browseradapter "github.com/compliance-appliance/compliance/browser"
)

// TestBrowserMFAInstructions: the built-in table answers for known
// consoles (grounded); another host is 404 without a model and a model
// answer (not grounded) with one; bad input names host; employees 403.
func TestBrowserMFAInstructions(t *testing.T) {
	e := newTestServer(t)
	org := e.org("MFA", app.PlanEnterprise)
	owner, auditor, employee := e.key(org, app.RoleOwner), e.key(org, app.RoleAuditor), e.key(org, app.RoleEmployee)
	for host, provider := range map[string]string{"admin.google.com": "Google Workspace", "https://acme.okta.com/admin": "Okta",
		"github.com": "GitHub", "portal.azure.com": "Microsoft 365 / Entra ID", "acme.atlassian.net": "Atlassian", "console.aws.amazon.com": "AWS",
		"gitlab.com": "GitLab", "acme.slack.com": "Slack"} {
		rec := e.do("GET", "/v1/browserbase/mfa-instructions?host="+url.QueryEscape(host), auditor, nil)
		wantStatus(t, rec, http.StatusOK)
		m := obj(t, rec)
		if m["provider"] != provider || m["source"] != "builtin" || m["grounded"] != true || m["confident"] != true || len(m["steps"].([]any)) < 3 {
			t.Errorf("%s: %v", host, m)
		}
	}
	body := wantError(t, e.do("GET", "/v1/browserbase/mfa-instructions?host=intranet.example.com", owner, nil), http.StatusNotFound, "not_found")
	if !strings.Contains(body["message"].(string), "no language model is configured") {
		t.Errorf("404 message: %v", body)
	}
	for _, q := range []string{"", "?host=", "?host=" + url.QueryEscape("not a host!")} {
		res := wantError(t, e.do("GET", "/v1/browserbase/mfa-instructions"+q, owner, nil), http.StatusBadRequest, "validation_error")
		if d, _ := res["details"].(map[string]any); d == nil || d["field"] != "host" {
			t.Errorf("%q: %v", q, res)
		}
	}
	wantStatus(t, e.do("GET", "/v1/browserbase/mfa-instructions?host=github.com", employee, nil), http.StatusForbidden)

	f := &fakeModel{steps: []func(http.ResponseWriter){
		streamText("1. Open Profile → Security.\n2. Enable authenticator app.\n3. Show the key.\nTIPS:\nKeep backup codes."),
		streamText("UNKNOWN"),
	}}
	withModel(t, e, f, modelLimit)
	rec := e.do("GET", "/v1/browserbase/mfa-instructions?host=intranet.example.com", owner, nil)
	wantStatus(t, rec, http.StatusOK)
	m := obj(t, rec)
	if m["source"] != "model" || m["grounded"] != false || m["confident"] != false || len(m["steps"].([]any)) != 3 || m["steps"].([]any)[0] != "Open Profile → Security." {
		t.Errorf("model answer: %v", m)
	}
	wantError(t, e.do("GET", "/v1/browserbase/mfa-instructions?host=other.example.com", owner, nil), http.StatusNotFound, "not_found")
	// A known host never asks the model.
	wantStatus(t, e.do("GET", "/v1/browserbase/mfa-instructions?host=github.com", owner, nil), http.StatusOK)
	if n := len(f.requests); n != 2 {
		t.Errorf("model asked %d times", n)
	}
}

// TestBrowserDraftFromInstruction: without a model 409; with one, valid
// steps are saved as a draft (navigate to the target first), invalid
// output is refused and nothing saved; bad input names its field.
func TestBrowserDraftFromInstruction(t *testing.T) {
	e := newTestServer(t)
	org, other := e.org("Drafts", app.PlanEnterprise), e.org("Other", app.PlanEnterprise)
	owner, auditor, otherKey := e.key(org, app.RoleOwner), e.key(org, app.RoleAuditor), e.key(other, app.RoleOwner)
	task := sweepCreate(e, org, "/v1/tasks", map[string]any{"title": "MFA enforced"})
	body := map[string]any{"taskId": task, "targetUrl": "https://admin.example.com/security", "instruction": "Check that MFA is enforced for all users"}
	drafts := func() int {
		rec := e.do("GET", "/v1/browserbase/automations/task/"+task+"/drafts", owner, nil)
		wantStatus(t, rec, http.StatusOK)
		return len(list(t, rec))
	}

	res := wantError(t, e.do("POST", "/v1/browserbase/automation-drafts/from-instruction", owner, body), http.StatusConflict, "conflict")
	if !strings.Contains(res["message"].(string), "written by hand") {
		t.Errorf("no-model message: %v", res)
	}
	for field, patch := range map[string]map[string]any{"instruction": {"instruction": " "}, "targetUrl": {"targetUrl": "ftp://x"}, "taskId": {"taskId": "tsk_nope"}} {
		b := map[string]any{}
		for k, v := range body {
			b[k] = v
		}
		for k, v := range patch {
			b[k] = v
		}
		r := wantError(t, e.do("POST", "/v1/browserbase/automation-drafts/from-instruction", owner, b), http.StatusBadRequest, "validation_error")
		if d, _ := r["details"].(map[string]any); d == nil || d["field"] != field {
			t.Errorf("%s: %v", field, r)
		}
	}
	wantStatus(t, e.do("POST", "/v1/browserbase/automation-drafts/from-instruction", auditor, body), http.StatusForbidden)
	wantError(t, e.do("POST", "/v1/browserbase/automation-drafts/from-instruction", otherKey, body), http.StatusBadRequest, "validation_error")

	f := &fakeModel{steps: []func(http.ResponseWriter){
		streamText("```json\n[{\"kind\":\"waitFor\",\"selector\":\"#mfa\"},{\"kind\":\"expectText\",\"selector\":\"#mfa\",\"text\":\"Enforced\"},{\"kind\":\"screenshot\",\"name\":\"mfa\"}]\n```"),
		streamText(`[{"kind":"teleport","url":"https://x"}]`),
		streamText("I cannot do that."),
		streamText(`[{"kind":"click","selector":"#go","onError":"ignore"}]`),
	}}
	withModel(t, e, f, modelLimit)
	rec := e.do("POST", "/v1/browserbase/automation-drafts/from-instruction", owner, body, "Idempotency-Key", "draft-1")
	wantStatus(t, rec, http.StatusCreated)
	out := obj(t, rec)
	d := out["draft"].(map[string]any)
	steps := d["steps"].([]any)
	if out["source"] != "model" || len(steps) != 4 || steps[0].(map[string]any)["kind"] != "navigate" ||
		steps[0].(map[string]any)["url"] != "https://admin.example.com/security" || d["taskId"] != task {
		t.Fatalf("draft: %v", out)
	}
	// The same key replays: still one draft.
	rec = e.do("POST", "/v1/browserbase/automation-drafts/from-instruction", owner, body, "Idempotency-Key", "draft-1")
	wantStatus(t, rec, http.StatusCreated)
	if drafts() != 1 {
		t.Fatalf("drafts after a replay: %d", drafts())
	}
	for _, want := range []string{"steps[1].kind", "no JSON array", "onError"} {
		r := wantError(t, e.do("POST", "/v1/browserbase/automation-drafts/from-instruction", owner, body), http.StatusConflict, "conflict")
		if msg := r["message"].(string); !strings.Contains(msg, want) || !strings.Contains(msg, "nothing was saved") {
			t.Errorf("invalid model output: %v (want %q)", r, want)
		}
	}
	if drafts() != 1 {
		t.Errorf("invalid output saved drafts: %d", drafts())
	}
	// No automation was made or enabled from the draft.
	rec = e.do("GET", "/v1/browserbase/automations/task/"+task, owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if n := len(list(t, rec)); n != 0 {
		t.Errorf("automations: %d", n)
	}
}

// TestBrowserAnalyzeLogin drives the appliance's Chromium against local
// login pages: a username and password form, a one-time-code page, and a
// page offering single sign-on behind a CAPTCHA.
func TestBrowserAnalyzeLogin(t *testing.T) {
	exe, err := browseradapter.New(browseradapter.Options{}).Executable()
	if err != nil {
		noBrowser(t)
	}
	e := newTestServer(t)
	e.app.ConfigureBrowser(browseradapter.New(browseradapter.Options{ChromiumPath: exe, ProfilesDir: t.TempDir()}), app.BrowserConfig{MaxSessions: 2, MaxSessionsPerOrg: 2})
	t.Cleanup(func() {
		e.app.CloseAllBrowserSessions()
		e.app.WaitBrowser()
	})
	site := newLoginSite(t, "bot@example.com", "pw", "JBSWY3DPEHPK3PXP", e.clock.Now)
	sso := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><body><h1>Welcome</h1><a href="https://accounts.google.com/o/oauth2/auth">Sign in with Google</a>
			<button type="button">Continue with SSO</button><div class="g-recaptcha" data-sitekey="x"></div></body></html>`)
	}))
	t.Cleanup(sso.Close)
	org := e.org("Analyze", app.PlanEnterprise)
	owner, auditor := e.key(org, app.RoleOwner), e.key(org, app.RoleAuditor)

	rec := e.do("POST", "/v1/browserbase/analyze-login", owner, map[string]any{"url": site.srv.URL + "/login"})
	wantStatus(t, rec, http.StatusCreated)
	a := obj(t, rec)
	fields := a["fields"].(map[string]any)
	prof := a["proposedProfile"].(map[string]any)
	if a["loaded"] != true || a["form"] != "password" || fields["username"] != `input[name*="user" i]` || fields["password"] != `input[type="password"]` ||
		fields["submit"] != `button[type="submit"]` || len(a["sso"].([]any)) != 0 || len(a["captcha"].([]any)) != 0 || prof["mode"] != "password" {
		t.Fatalf("login page: %v", a)
	}
	run := obj(t, e.do("GET", "/v1/browserbase/runs/"+a["runId"].(string), auditor, nil))
	if run["trigger"] != "analyze" || run["status"] != app.BrowserRunCompleted || run["extracted"].(map[string]any)["form"] != "password" {
		t.Errorf("run: %v", run)
	}

	a = obj(t, e.do("POST", "/v1/browserbase/analyze-login", owner, map[string]any{"url": site.srv.URL + "/mfa"}))
	if a["form"] != "totp_only" || a["fields"].(map[string]any)["totp"] != `input[autocomplete="one-time-code"]` {
		t.Errorf("code page: %v", a)
	}

	a = obj(t, e.do("POST", "/v1/browserbase/analyze-login", owner, map[string]any{"url": sso.URL + "/"}))
	ssoNames := fmt.Sprint(a["sso"])
	if a["form"] != "none" || !strings.Contains(ssoNames, "Google") || !strings.Contains(ssoNames, "SAML") ||
		fmt.Sprint(a["captcha"]) != "[reCAPTCHA]" || a["proposedProfile"].(map[string]any)["mode"] != "sso" {
		t.Errorf("sso page: %v", a)
	}

	// Bad input, roles.
	res := wantError(t, e.do("POST", "/v1/browserbase/analyze-login", owner, map[string]any{"url": "javascript:alert(1)"}), http.StatusBadRequest, "validation_error")
	if d, _ := res["details"].(map[string]any); d == nil || d["field"] != "url" {
		t.Errorf("bad url: %v", res)
	}
	wantStatus(t, e.do("POST", "/v1/browserbase/analyze-login", auditor, map[string]any{"url": site.srv.URL + "/login"}), http.StatusForbidden)
}

// TestBrowserAnalyzeLoginNoChromium: without Chromium the analysis is 503
// naming what to install, and no run is kept.
func TestBrowserAnalyzeLoginNoChromium(t *testing.T) {
	e := newTestServer(t)
	e.app.ConfigureBrowser(browseradapter.New(browseradapter.Options{ChromiumPath: "/nonexistent/chromium", ProfilesDir: t.TempDir()}), app.BrowserConfig{MaxSessions: 2, MaxSessionsPerOrg: 2})
	org := e.org("No browser", app.PlanEnterprise)
	res := wantError(t, e.do("POST", "/v1/browserbase/analyze-login", e.key(org, app.RoleOwner), map[string]any{"url": "https://login.example.com/"}),
		http.StatusServiceUnavailable, "service_unavailable")
	if !strings.Contains(strings.ToLower(fmt.Sprint(res["message"])), "chromium") {
		t.Errorf("503 message: %v", res)
	}
}

// TestUIBrowserDraftSteps: the automation form's "Draft steps from
// instruction" (a form post, no script) fills the steps for review and
// saves a draft; without a model the form says steps are written by hand.
func TestUIBrowserDraftSteps(t *testing.T) {
	e := newTestServer(t)
	fx := e.uiFixture("Drafting")
	task := sweepCreate(e, fx.org, "/v1/tasks", map[string]any{"title": "Retention setting"})
	b := e.browser()
	b.signIn(fx.owner)
	if body := b.get("/browser-automations").Body.String(); !strings.Contains(body, "Steps are written by hand") || strings.Contains(body, "Draft steps from instruction") {
		t.Error("the form offers drafting without a model")
	}
	form := url.Values{"taskId": {task}, "name": {"Retention"}, "targetUrl": {"https://admin.example.com/retention"}, "instruction": {"Check retention is 365 days"}}
	rec := b.post("/browser-automations/draft-steps", form)
	wantStatus(t, rec, http.StatusConflict)
	if !strings.Contains(rec.Body.String(), "written by hand") {
		t.Error("no reason without a model")
	}
	withModel(t, e, &fakeModel{steps: []func(http.ResponseWriter){streamText(`[{"kind":"expectText","text":"365 days"},{"kind":"screenshot","name":"retention"}]`)}}, 5*time.Second)
	body := b.get("/browser-automations").Body.String()
	if !strings.Contains(body, `formaction="/browser-automations/draft-steps"`) {
		t.Fatal("no draft button with a model")
	}
	rec = b.post("/browser-automations/draft-steps", form)
	wantStatus(t, rec, http.StatusOK)
	body = rec.Body.String()
	if !strings.Contains(body, "saved with the steps below") || !strings.Contains(body, "365 days") || !strings.Contains(body, "https://admin.example.com/retention") {
		t.Errorf("drafted form: %s", body)
	}
	ds, err := e.app.ListBrowserDrafts(e.ctx(fx.org), task)
	if err != nil || len(ds) != 1 || len(ds[0].Steps) != 3 {
		t.Fatalf("drafts: %+v %v", ds, err)
	}
}
