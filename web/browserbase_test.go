package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/compliance-appliance/compliance/app"
	browseradapter "github.com/compliance-appliance/compliance/browser"
	"github.com/compliance-appliance/compliance/storage"
)

// browserAutomationFixture creates an automation of the task.
func (e *testEnv) browserAutomationFixture(org, task string) string {
	e.t.Helper()
	return sweepCreate(e, org, "/v1/browserbase/automations", map[string]any{"taskId": task, "name": "Sweep automation",
		"targetUrl": "https://example.com/", "steps": []any{map[string]any{"kind": "navigate", "url": "https://example.com/"}}})
}

// browserRunFixture stores a finished run with a screenshot, as a run on
// Chromium would leave it (the sweep needs no browser).
func (e *testEnv) browserRunFixture(org, automation, task string) string {
	e.t.Helper()
	ctx := context.Background()
	files, err := storage.NewFiles(filepath.Join(e.dir, "files"))
	if err != nil {
		e.t.Fatal(err)
	}
	blob, err := files.Put(ctx, bytes.NewReader([]byte("\x89PNG sweep")))
	if err != nil {
		e.t.Fatal(err)
	}
	now := e.clock.Now()
	r := &app.BrowserAutomationRun{ID: app.NewID(app.PrefixBrowserRun), AutomationID: &automation, TaskID: &task, Status: app.BrowserRunCompleted,
		Trigger: "manual", Steps: []app.BrowserStepResult{}, Extracted: map[string]string{}, Refused: []string{}, EvidenceIDs: []string{},
		Screenshots: []app.BrowserScreenshot{{Seq: 1, Name: "final", SHA256: blob.SHA256, Size: blob.Size}}, CreatedAt: now, CompletedAt: &now}
	if err := e.db.SaveBrowserRun(ctx, org, r); err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.AddBrowserScreenshot(ctx, org, r.ID, r.Screenshots[0]); err != nil {
		e.t.Fatal(err)
	}
	return r.ID
}

// browserProfileFixture creates an auth profile.
func (e *testEnv) browserProfileFixture(org string) string {
	e.t.Helper()
	p, _, err := e.app.ResolveBrowserProfile(e.ctx(org), app.BrowserProfileInput{URL: app.Ptr("https://login.example.com/signin")})
	if err != nil {
		e.t.Fatal(err)
	}
	return p.ID
}

// TestBrowserAutomationsAPI covers the routes that need no Chromium:
// automations, drafts and profiles with their validation, roles, other
// organizations, idempotency, and the 503 of an appliance without a browser.
func TestBrowserAutomationsAPI(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org, other := e.org("Acme", "professional"), e.org("Other", "professional")
	owner, auditor, employee, otherKey := e.key(org, app.RoleOwner), e.key(org, app.RoleAuditor), e.key(org, app.RoleEmployee), e.key(other, app.RoleOwner)
	task := sweepCreate(e, org, "/v1/tasks", map[string]any{"title": "MFA enforced on the admin console"})

	good := []any{map[string]any{"kind": "navigate", "url": "https://admin.example.com/settings"},
		map[string]any{"kind": "expectText", "text": "MFA enforced: yes"}, map[string]any{"kind": "screenshot", "name": "settings"}}
	body := map[string]any{"taskId": task, "name": "Admin MFA", "targetUrl": "https://admin.example.com/", "steps": good}

	// Validation: each bad input names its field.
	long := make([]any, app.MaxBrowserSteps+1)
	for i := range long {
		long[i] = map[string]any{"kind": "waitFor", "selector": "#x"}
	}
	cases := []struct {
		name  string
		patch map[string]any
		field string
	}{
		{"unknown kind", map[string]any{"steps": []any{good[0], good[1], good[2], map[string]any{"kind": "teleport"}}}, "steps[3].kind"},
		{"missing kind", map[string]any{"steps": []any{map[string]any{"url": "https://a.example"}}}, "steps[0].kind"},
		{"bad navigate url", map[string]any{"steps": []any{map[string]any{"kind": "navigate", "url": "ftp://x"}}}, "steps[0].url"},
		{"click without selector", map[string]any{"steps": []any{map[string]any{"kind": "click"}}}, "steps[0].selector"},
		{"expectText without text", map[string]any{"steps": []any{map[string]any{"kind": "expectText"}}}, "steps[0].text"},
		{"extract without as", map[string]any{"steps": []any{map[string]any{"kind": "extractText", "selector": "#a"}}}, "steps[0].as"},
		{"bad secret", map[string]any{"steps": []any{map[string]any{"kind": "fill", "selector": "#a", "secret": "ssn"}}}, "steps[0].secret"},
		{"secret without profile", map[string]any{"steps": []any{map[string]any{"kind": "fill", "selector": "#a", "secret": "password"}}}, "profileId"},
		{"too many steps", map[string]any{"steps": long}, "steps"},
		{"no steps", map[string]any{"steps": []any{}}, "steps"},
		{"bad target", map[string]any{"targetUrl": "not a url"}, "targetUrl"},
		{"unknown task", map[string]any{"taskId": "tsk_nope"}, "taskId"},
		{"bad frequency", map[string]any{"scheduleFrequency": "hourly"}, "scheduleFrequency"},
		{"bad host", map[string]any{"allowedHosts": []string{"https://cdn.example.com"}}, "allowedHosts[0]"},
		{"criterion on nothing", map[string]any{"criteria": []any{map[string]any{"value": "x", "op": "equals", "expected": "y"}}}, "criteria[0].value"},
		{"bad timeout", map[string]any{"steps": []any{map[string]any{"kind": "waitFor", "selector": "#a", "timeoutSeconds": 600}}}, "steps[0].timeoutSeconds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := map[string]any{}
			for k, v := range body {
				b[k] = v
			}
			for k, v := range c.patch {
				b[k] = v
			}
			res := wantError(t, e.do("POST", "/v1/browserbase/automations", owner, b), http.StatusBadRequest, "validation_error")
			d, _ := res["details"].(map[string]any)
			fields := fmt.Sprint(d["field"], d["fields"])
			if !strings.Contains(fields, c.field) {
				t.Errorf("details %v, want field %s", d, c.field)
			}
		})
	}

	// Create (idempotent), read, list, update, schedule.
	rec := e.do("POST", "/v1/browserbase/automations", owner, body, "Idempotency-Key", "browser-create-1")
	wantStatus(t, rec, http.StatusCreated)
	au := obj(t, rec)
	id := au["id"].(string)
	again := obj(t, e.do("POST", "/v1/browserbase/automations", owner, body, "Idempotency-Key", "browser-create-1"))
	if again["id"] != id {
		t.Fatalf("idempotent create made %v, want %s", again["id"], id)
	}
	if l := list(t, e.do("GET", "/v1/browserbase/automations/task/"+task, auditor, nil)); len(l) != 1 {
		t.Fatalf("task automations: %v", l)
	}
	rec = e.do("PATCH", "/v1/browserbase/automations/"+id, owner, map[string]any{"name": "Admin console MFA", "scheduleFrequency": "weekly"})
	wantStatus(t, rec, http.StatusOK)
	if got := obj(t, rec); got["name"] != "Admin console MFA" || got["scheduleFrequency"] != "weekly" || got["nextRunAt"] == nil {
		t.Fatalf("patched: %v", got)
	}
	wantStatus(t, e.do("PATCH", "/v1/browserbase/automations/task/"+task+"/schedule", owner, map[string]any{"scheduleFrequency": "monthly"}), http.StatusOK)
	if got := obj(t, e.do("GET", "/v1/browserbase/automations/"+id, auditor, nil)); got["scheduleFrequency"] != "monthly" {
		t.Fatalf("schedule: %v", got)
	}

	// Drafts.
	rec = e.do("POST", "/v1/browserbase/automation-drafts", owner, map[string]any{"taskId": task, "name": "WIP", "steps": []any{}})
	wantStatus(t, rec, http.StatusCreated)
	draft := obj(t, rec)["id"].(string)
	wantError(t, e.do("PATCH", "/v1/browserbase/automation-drafts/"+draft, owner, map[string]any{"steps": []any{map[string]any{"kind": "jump"}}}),
		http.StatusBadRequest, "validation_error")
	wantStatus(t, e.do("PATCH", "/v1/browserbase/automation-drafts/"+draft, owner, map[string]any{"steps": good}), http.StatusOK)
	if l := list(t, e.do("GET", "/v1/browserbase/automations/task/"+task+"/drafts", owner, nil)); len(l) != 1 {
		t.Fatalf("drafts: %v", l)
	}

	// Profiles: credentials are sealed and never returned; TOTP seeds must be base32.
	rec = e.do("POST", "/v1/browserbase/profiles/resolve", owner, map[string]any{"url": "https://admin.example.com/login", "displayName": "Admin console"})
	wantStatus(t, rec, http.StatusCreated)
	prof := obj(t, rec)["profile"].(map[string]any)["id"].(string)
	const password, seed = "Corr3ct-Horse-Battery", "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	wantError(t, e.do("POST", "/v1/browserbase/profiles/"+prof+"/credentials", owner, map[string]any{"username": "bot", "password": password, "totpSeed": "not base32!"}),
		http.StatusBadRequest, "validation_error")
	wantError(t, e.do("POST", "/v1/browserbase/profiles/"+prof+"/totp", owner, map[string]any{"totpSeed": "0189"}), http.StatusBadRequest, "validation_error")
	rec = e.do("POST", "/v1/browserbase/profiles/"+prof+"/credentials", owner, map[string]any{"username": "compliance-bot", "password": password, "totpSeed": seed})
	wantStatus(t, rec, http.StatusCreated)
	if got := obj(t, rec); got["credentialsConfigured"] != true || got["totpConfigured"] != true || strings.Contains(rec.Body.String(), password) {
		t.Fatalf("credentials: %s", rec.Body.String())
	}
	if got := obj(t, e.do("GET", "/v1/browserbase/profiles/"+prof+"/totp", auditor, nil)); got["configured"] != true {
		t.Fatalf("totp: %v", got)
	}
	wantStatus(t, e.do("POST", "/v1/browserbase/profiles/"+prof+"/needs-reauth", owner, map[string]any{"reason": "password rotated"}), http.StatusCreated)
	for _, p := range []string{"/v1/browserbase/profiles", "/v1/browserbase/profiles/totp-statuses", "/v1/audit-log"} {
		rec := e.do("GET", p, owner, nil)
		wantStatus(t, rec, http.StatusOK)
		if b := rec.Body.String(); strings.Contains(b, password) || strings.Contains(b, seed) || strings.Contains(b, "compliance-bot") {
			t.Errorf("%s shows a credential: %s", p, b)
		}
	}
	wantStatus(t, e.do("PATCH", "/v1/browserbase/automations/"+id, owner, map[string]any{"profileId": prof}), http.StatusOK)
	wantError(t, e.do("DELETE", "/v1/browserbase/profiles/"+prof, owner, nil), http.StatusConflict, "conflict")

	// Auditors read, employees see nothing, another organization gets 404.
	wantStatus(t, e.do("GET", "/v1/browserbase/automations/"+id, auditor, nil), http.StatusOK)
	wantError(t, e.do("PATCH", "/v1/browserbase/automations/"+id, auditor, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/browserbase/automations/"+id+"/run", auditor, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/browserbase/profiles/"+prof+"/credentials", auditor, map[string]any{"username": "a", "password": "b"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/browserbase/automations/"+id, employee, nil), http.StatusForbidden, "forbidden")
	for _, p := range []string{"/v1/browserbase/automations/" + id, "/v1/browserbase/automations/task/" + task, "/v1/browserbase/automations/" + id + "/runs",
		"/v1/browserbase/profiles/" + prof + "/totp"} {
		wantError(t, e.do("GET", p, otherKey, nil), http.StatusNotFound, "not_found")
	}
	wantError(t, e.do("PATCH", "/v1/browserbase/automations/"+id, otherKey, map[string]any{"name": "x"}), http.StatusNotFound, "not_found")
	wantError(t, e.do("DELETE", "/v1/browserbase/automation-drafts/"+draft, otherKey, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/browserbase/automations", otherKey, body), http.StatusBadRequest, "validation_error")

	// No browser configured: a clear 503, never a fake run.
	res := wantError(t, e.do("POST", "/v1/browserbase/automations/"+id+"/run", owner, nil), http.StatusServiceUnavailable, "service_unavailable")
	if msg := fmt.Sprint(res["message"]); !strings.Contains(msg, "chromium") {
		t.Errorf("503 message %q does not name what to install", msg)
	}
	if l := list(t, e.do("GET", "/v1/browserbase/automations/"+id+"/runs", owner, nil)); len(l) != 0 {
		t.Fatalf("a run was recorded without a browser: %v", l)
	}
	ctxRec := e.do("POST", "/v1/browserbase/org-context", owner, nil)
	wantStatus(t, ctxRec, http.StatusCreated)
	cid := obj(t, ctxRec)["contextId"].(string)
	wantError(t, e.do("POST", "/v1/browserbase/session", owner, map[string]any{"contextId": cid}), http.StatusServiceUnavailable, "service_unavailable")
	if got := obj(t, e.do("GET", "/v1/browserbase/org-context", auditor, nil)); got["hasContext"] != true || got["contextId"] != cid {
		t.Fatalf("context: %v", got)
	}

	wantStatus(t, e.do("DELETE", "/v1/browserbase/automations/"+id, owner, nil), http.StatusOK)
	wantError(t, e.do("GET", "/v1/browserbase/automations/"+id, owner, nil), http.StatusNotFound, "not_found")
}

// loginSite is a web application with a password sign-in, a TOTP step and
// a settings page, as the admin consoles automations visit.
type loginSite struct {
	srv            *httptest.Server
	user, password string
	seed           string
	now            func() time.Time
	mu             sync.Mutex
	signIns        int
	leaveTo        string
}

func newLoginSite(t *testing.T, user, password, seed string, now func() time.Time) *loginSite {
	s := &loginSite{user: user, password: password, seed: seed, now: now}
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Console</title></head><body>%s</body></html>`, body)
	}
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("console"); err == nil && c.Value == "ok" {
			http.Redirect(w, r, "/settings", http.StatusFound)
			return
		}
		page(w, `<h1>Sign in</h1><form method="post" action="/login"><label>Email <input type="text" name="username"></label>
			<label>Password <input type="password" name="password"></label><button type="submit">Sign in</button></form>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("username") != s.user || r.FormValue("password") != s.password {
			page(w, `<p>Wrong credentials</p><form method="post" action="/login"><input type="text" name="username"><input type="password" name="password"><button type="submit">Sign in</button></form>`)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "stage", Value: "mfa", Path: "/"})
		http.Redirect(w, r, "/mfa", http.StatusFound)
	})
	mux.HandleFunc("GET /mfa", func(w http.ResponseWriter, r *http.Request) {
		page(w, `<h1>Two-factor</h1><form method="post" action="/mfa"><label>Code <input type="text" name="otp" autocomplete="one-time-code"></label><button type="submit">Verify</button></form>`)
	})
	mux.HandleFunc("POST /mfa", func(w http.ResponseWriter, r *http.Request) {
		ok, _ := totp.ValidateCustom(r.FormValue("otp"), s.seed, s.now(), totp.ValidateOpts{Period: 30, Skew: 1, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if c, err := r.Cookie("stage"); err != nil || c.Value != "mfa" || !ok {
			http.Error(w, "code refused", http.StatusForbidden)
			return
		}
		s.mu.Lock()
		s.signIns++
		s.mu.Unlock()
		// A persistent cookie: it survives the browser's restart in the profile directory.
		http.SetCookie(w, &http.Cookie{Name: "console", Value: "ok", Path: "/", MaxAge: 3600})
		http.Redirect(w, r, "/settings", http.StatusFound)
	})
	mux.HandleFunc("GET /leave", func(w http.ResponseWriter, r *http.Request) {
		page(w, `<a id="out" href="`+s.leaveTo+`">Elsewhere</a>`)
	})
	mux.HandleFunc("GET /settings", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("console"); err != nil || c.Value != "ok" {
			http.Redirect(w, r, "/login", http.StatusFound)
			return
		}
		page(w, `<h1>Security settings</h1><p id="mfa">MFA enforced: yes</p><p id="sessions">Session timeout: 15 minutes</p>`)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// waitBrowserRun polls a run until it ends.
func waitBrowserRun(t *testing.T, e *testEnv, key, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		rec := e.do("GET", "/v1/browserbase/runs/"+id, key, nil)
		wantStatus(t, rec, http.StatusOK)
		r := obj(t, rec)
		if r["status"] != app.BrowserRunRunning && r["status"] != app.BrowserRunPending {
			return r
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("run %s did not end", id)
	return nil
}

// TestBrowserAutomationEndToEnd drives the appliance's Chromium against a
// local console: credentials and TOTP seed stored, sign-in, an automation
// that navigates, expects text, extracts a value and takes a screenshot
// stored as evidence of the task (the control moves), an off-host step
// refused (finding opened), the session cap, and no credential in logs,
// runs, file names or the audit log.
func TestBrowserAutomationEndToEnd(t *testing.T) {
	exe, err := browseradapter.New(browseradapter.Options{}).Executable()
	if err != nil {
		noBrowser(t)
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	e := newTestServerLogged(t, nil, slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, &slog.HandlerOptions{Level: slog.LevelDebug})))
	e.app.ConfigureBrowser(browseradapter.New(browseradapter.Options{ChromiumPath: exe, ProfilesDir: t.TempDir()}), app.BrowserConfig{MaxSessions: 2, MaxSessionsPerOrg: 2})
	t.Cleanup(func() {
		e.app.CloseAllBrowserSessions()
		e.app.WaitBrowser()
	})
	const user, password, seed = "compliance-bot@example.com", "S3cret-Passw0rd-42", "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	site := newLoginSite(t, user, password, seed, e.clock.Now)
	org := e.org("Acme", "professional")
	owner := e.key(org, app.RoleOwner)
	ctl := sweepCreate(e, org, "/v1/controls", map[string]any{"code": "AC-7", "name": "MFA on admin consoles"})
	task := sweepCreate(e, org, "/v1/tasks", map[string]any{"title": "Screenshot the console's MFA setting", "controlId": ctl})
	ctlBefore := obj(t, e.do("GET", "/v1/controls/"+ctl, owner, nil))["status"]

	// Store credentials and TOTP seed; sign in.
	rec := e.do("POST", "/v1/browserbase/profiles/resolve", owner, map[string]any{"url": site.srv.URL + "/login", "displayName": "Console",
		"verifyText": "Security settings"})
	wantStatus(t, rec, http.StatusCreated)
	prof := obj(t, rec)["profile"].(map[string]any)["id"].(string)
	wantStatus(t, e.do("POST", "/v1/browserbase/profiles/"+prof+"/credentials", owner, map[string]any{"username": user, "password": password}), http.StatusCreated)
	wantStatus(t, e.do("POST", "/v1/browserbase/profiles/"+prof+"/totp", owner, map[string]any{"totpSeed": strings.ToLower(seed[:16]) + " " + seed[16:]}), http.StatusCreated)
	rec = e.do("POST", "/v1/browserbase/profiles/"+prof+"/sign-in", owner, map[string]any{})
	wantStatus(t, rec, http.StatusCreated)
	si := obj(t, rec)
	if si["signedIn"] != true || si["profile"].(map[string]any)["status"] != app.ProfileVerified {
		t.Fatalf("sign-in: %s", rec.Body.String())
	}
	sessionID := si["sessionId"].(string)

	// The cap: two sessions are open at most.
	ctxID := obj(t, e.do("POST", "/v1/browserbase/org-context", owner, nil))["contextId"].(string)
	rec = e.do("POST", "/v1/browserbase/session", owner, map[string]any{"contextId": ctxID})
	wantStatus(t, rec, http.StatusCreated)
	second := obj(t, rec)["sessionId"].(string)
	res := wantError(t, e.do("POST", "/v1/browserbase/session", owner, map[string]any{"contextId": ctxID}), http.StatusTooManyRequests, "rate_limited")
	if !strings.Contains(fmt.Sprint(res["message"]), "browser.max_sessions") {
		t.Errorf("cap message %v does not name the setting", res["message"])
	}
	// A free session reaches the organization's hosts only.
	rec = e.do("POST", "/v1/browserbase/navigate", owner, map[string]any{"sessionId": second, "url": "http://localhost:1/x"})
	if got := obj(t, rec); got["success"] != false {
		t.Errorf("off-host navigation: %v", got)
	}
	rec = e.do("POST", "/v1/browserbase/check-auth", owner, map[string]any{"sessionId": sessionID, "url": site.srv.URL + "/settings"})
	if got := obj(t, rec); got["isLoggedIn"] != true {
		t.Errorf("check-auth: %s", rec.Body.String())
	}
	for _, s := range []string{sessionID, second} {
		wantStatus(t, e.do("POST", "/v1/browserbase/session/close", owner, map[string]any{"sessionId": s}), http.StatusCreated)
	}

	// The automation: the cookie from the sign-in lets it straight in.
	rec = e.do("POST", "/v1/browserbase/automations", owner, map[string]any{"taskId": task, "name": "Console MFA", "targetUrl": site.srv.URL + "/settings",
		"profileId": prof, "scheduleFrequency": "monthly", "steps": []any{
			map[string]any{"kind": "navigate", "url": site.srv.URL + "/settings"},
			map[string]any{"kind": "expectText", "selector": "#mfa", "text": "MFA enforced: yes"},
			map[string]any{"kind": "extractText", "selector": "#sessions", "as": "timeout"},
			map[string]any{"kind": "screenshot", "name": "mfa-setting"}},
		"criteria": []any{map[string]any{"value": "timeout", "op": "matches", "expected": `\b15 minutes`}}})
	wantStatus(t, rec, http.StatusCreated)
	au := obj(t, rec)["id"].(string)
	rec = e.do("POST", "/v1/browserbase/automations/"+au+"/run", owner, nil)
	wantStatus(t, rec, http.StatusCreated)
	runID := obj(t, rec)["runId"].(string)
	wantError(t, e.do("POST", "/v1/browserbase/automations/"+au+"/run", owner, nil), http.StatusConflict, "conflict")
	run := waitBrowserRun(t, e, owner, runID)
	if run["evaluationStatus"] != "pass" || run["success"] != true {
		t.Fatalf("run: %v", run)
	}
	t.Logf("FIGURE: a passing browser run took %v ms (sign-in check, 4 steps, screenshot)", run["durationMs"])
	evIDs := run["evidenceIds"].([]any)
	if len(evIDs) != 1 {
		t.Fatalf("evidence: %v", run)
	}
	ev := obj(t, e.do("GET", "/v1/evidence/"+evIDs[0].(string), owner, nil))
	if ev["taskId"] != task || ev["expiresAt"] == nil || ev["contentType"] != "image/png" {
		t.Fatalf("evidence record: %v", ev)
	}
	if name := ev["filename"].(string); strings.Contains(name, "compliance-bot") || strings.Contains(name, password) {
		t.Fatalf("a credential in the file name %q", name)
	}
	if after := obj(t, e.do("GET", "/v1/controls/"+ctl, owner, nil))["status"]; after == ctlBefore {
		t.Errorf("control status stayed %v", after)
	}
	shot := e.do("GET", "/v1/browserbase/runs/"+runID+"/screenshot", owner, nil)
	wantStatus(t, shot, http.StatusOK)
	if !bytes.HasPrefix(shot.Body.Bytes(), []byte("\x89PNG")) {
		t.Fatal("screenshot is not a PNG")
	}

	// A page of the target host links to another host: following it is
	// refused, the run fails, the refusal is listed and one finding opens.
	other, _ := url.Parse(site.srv.URL)
	other.Host = strings.Replace(other.Host, "127.0.0.1", "localhost", 1)
	site.leaveTo = other.String() + "/settings"
	rec = e.do("POST", "/v1/browserbase/automations", owner, map[string]any{"taskId": task, "name": "Off host", "targetUrl": site.srv.URL + "/leave",
		"steps": []any{map[string]any{"kind": "navigate", "url": site.srv.URL + "/leave"},
			map[string]any{"kind": "click", "selector": "#out"},
			map[string]any{"kind": "expectText", "selector": "#mfa", "text": "MFA enforced: yes", "timeoutSeconds": 3}}})
	wantStatus(t, rec, http.StatusCreated)
	off := obj(t, rec)["id"].(string)
	rec = e.do("POST", "/v1/browserbase/automations/"+off+"/run", owner, nil)
	wantStatus(t, rec, http.StatusCreated)
	failed := waitBrowserRun(t, e, owner, obj(t, rec)["runId"].(string))
	if failed["evaluationStatus"] != "fail" || failed["findingId"] == nil {
		t.Fatalf("failing run: %v", failed)
	}
	if refused := fmt.Sprint(failed["refusedRequests"]); !strings.Contains(refused, "localhost") {
		t.Errorf("refused requests %s do not list the off-host navigation", refused)
	}
	if r := obj(t, e.do("GET", "/v1/findings/"+failed["findingId"].(string), owner, nil)); r["status"] != "open" {
		t.Fatalf("finding: %v", r)
	}
	rec = e.do("POST", "/v1/browserbase/automations/"+off+"/run", owner, nil)
	wantStatus(t, rec, http.StatusCreated)
	if again := waitBrowserRun(t, e, owner, obj(t, rec)["runId"].(string)); again["findingId"] != failed["findingId"] {
		t.Errorf("a second failing run opened finding %v, want %v kept", again["findingId"], failed["findingId"])
	}

	// Credentials appear nowhere.
	for _, p := range []string{"/v1/browserbase/automations/" + au + "/runs", "/v1/audit-log?perPage=200", "/v1/browserbase/profiles"} {
		if b := e.do("GET", p, owner, nil).Body.String(); strings.Contains(b, password) || strings.Contains(b, user) || strings.Contains(b, seed) {
			t.Errorf("%s shows a credential", p)
		}
	}
	e.app.CloseIdleBrowserSessions()
	logMu.Lock()
	defer logMu.Unlock()
	if l := logs.String(); strings.Contains(l, password) || strings.Contains(l, seed) || strings.Contains(l, user) {
		t.Error("the logs show a credential")
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestUIBrowserAutomationPages renders the browser automation pages per
// role: the list with the new-automation and auth profile forms for
// owners, an automation's page with its runs and screenshots, creating an
// automation and a profile through the forms, and a live view that is 404
// for a session that is not open.
func TestUIBrowserAutomationPages(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	au := e.browserAutomationFixture(f.org, f.task)
	run := e.browserRunFixture(f.org, au, f.task)

	owner := e.browser()
	owner.signIn(f.owner)
	rec := owner.get("/browser-automations")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "<h1>Browser automations</h1>", "Sweep automation", "New automation", "Add auth profile", `href="/browser-automations"`)
	rec = owner.post("/browser-automations", url.Values{"taskId": {f.task}, "name": {"Console MFA"}, "targetUrl": {"https://admin.example.com/"},
		"steps": {`[{"kind":"navigate","url":"https://admin.example.com/"},{"kind":"teleport"}]`}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, "steps[1].kind")
	rec = owner.post("/browser-automations", url.Values{"taskId": {f.task}, "name": {"Console MFA"}, "targetUrl": {"https://admin.example.com/"},
		"steps": {`[{"kind":"navigate","url":"https://admin.example.com/"}]`}, "scheduleFrequency": {"weekly"}})
	if rec.Code != http.StatusSeeOther && rec.Code != http.StatusFound {
		t.Fatalf("create: status %d: %s", rec.Code, rec.Body.String())
	}
	rec = owner.post("/browser-automations/profiles", url.Values{"url": {"https://admin.example.com/login"}, "displayName": {"Admin console"}})
	if rec.Code != http.StatusSeeOther && rec.Code != http.StatusFound {
		t.Fatalf("profile: status %d: %s", rec.Code, rec.Body.String())
	}
	rec = owner.get("/browser-automations/" + au)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Run now", "/browser-automations/runs/"+run+"/screenshots/1", "Steps")
	shot := owner.get("/browser-automations/runs/" + run + "/screenshots/1")
	wantStatus(t, shot, http.StatusOK)
	if shot.Header().Get("Content-Type") != "image/png" {
		t.Errorf("screenshot content type %q", shot.Header().Get("Content-Type"))
	}
	wantStatus(t, owner.get("/browser-sessions/bss_01JABCDEFGHJKMNPQRSTVWXYZ0"), http.StatusNotFound)
	// Without Chromium, "Run now" answers with the reason on the page.
	rec = owner.post("/browser-automations/"+au+"/run", url.Values{})
	if !strings.Contains(strings.ToLower(rec.Body.String()), "chromium") {
		t.Errorf("run without Chromium: status %d, no reason on the page", rec.Code)
	}

	auditor := e.browser()
	auditor.signIn(f.auditor)
	rec = auditor.get("/browser-automations/" + au)
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, "Run now")
	rec = auditor.get("/browser-automations")
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, "New automation", "Store credentials")
	wantStatus(t, auditor.post("/browser-automations/"+au+"/run", url.Values{}), http.StatusForbidden)

	employee := e.browser()
	employee.signIn(f.employee)
	wantStatus(t, employee.get("/browser-automations"), http.StatusForbidden)
}

// TestBrowserRunsMCPTool: list_browser_automation_runs lists a task's runs
// for an auditor, and another organization's task is not found.
func TestBrowserRunsMCPTool(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org, other := e.org("Acme", app.PlanProfessional), e.org("Other", app.PlanProfessional)
	task := sweepCreate(e, org, "/v1/tasks", map[string]any{"title": "Console MFA"})
	run := e.browserRunFixture(org, e.browserAutomationFixture(org, task), task)
	cs := mcpSession(t, e, http.Header{"X-Api-Key": {e.key(org, app.RoleAuditor)}})
	out, isErr := callTool(t, cs, "list_browser_automation_runs", map[string]any{"taskId": task})
	if isErr || len(out["data"].([]any)) != 1 || out["data"].([]any)[0].(map[string]any)["id"] != run {
		t.Fatalf("list_browser_automation_runs: %v", out)
	}
	cs = mcpSession(t, e, http.Header{"X-Api-Key": {e.key(other, app.RoleOwner)}})
	if out, isErr := callTool(t, cs, "list_browser_automation_runs", map[string]any{"taskId": task}); !isErr {
		t.Fatalf("another organization's task: %v", out)
	}
}

// fakeBrowser is an app.Browser whose pages all show text; it counts the
// sessions opened.
type fakeBrowser struct {
	mu     sync.Mutex
	text   string
	opened int
}

func (f *fakeBrowser) Open(_ context.Context, req app.BrowserOpen) (app.BrowserSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opened++
	return &fakeSession{f: f, allow: req.Allow}, nil
}
func (f *fakeBrowser) RemoveProfile(string) error  { return nil }
func (f *fakeBrowser) Profiles() ([]string, error) { return nil, nil }

type fakeSession struct {
	f     *fakeBrowser
	allow func(*url.URL) error
}

func (s *fakeSession) Navigate(_ context.Context, raw string) error {
	u, _ := url.Parse(raw)
	return s.allow(u)
}
func (s *fakeSession) Click(context.Context, string) error        { return nil }
func (s *fakeSession) Fill(context.Context, string, string) error { return nil }
func (s *fakeSession) Submit(context.Context, string) error       { return nil }
func (s *fakeSession) WaitVisible(context.Context, string) error  { return nil }
func (s *fakeSession) Exists(context.Context, string) (bool, error) {
	return false, nil
}
func (s *fakeSession) Text(context.Context, string) (string, error) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	return s.f.text, nil
}
func (s *fakeSession) URL(context.Context) (string, error) { return "", nil }
func (s *fakeSession) Screenshot(context.Context) ([]byte, error) {
	return []byte("\x89PNG fake"), nil
}
func (s *fakeSession) Frame() ([]byte, int64) { return nil, 0 }
func (s *fakeSession) Refused() []string      { return nil }
func (s *fakeSession) Close()                 {}

// TestBrowserScheduleAndRestart: the job runs due automations once per
// interval, a failing run opens a finding the next pass resolves, and runs
// left running when the appliance stopped are interrupted at start.
func TestBrowserScheduleAndRestart(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	fb := &fakeBrowser{text: "MFA enforced: no"}
	e.app.ConfigureBrowser(fb, app.BrowserConfig{})
	org := e.org("Acme", app.PlanProfessional)
	owner := e.key(org, app.RoleOwner)
	ctl := sweepCreate(e, org, "/v1/controls", map[string]any{"code": "AC-7", "name": "MFA"})
	task := sweepCreate(e, org, "/v1/tasks", map[string]any{"title": "MFA screenshot", "controlId": ctl})
	au := sweepCreate(e, org, "/v1/browserbase/automations", map[string]any{"taskId": task, "name": "MFA", "targetUrl": "https://127.0.0.1/admin",
		"scheduleFrequency": "daily", "steps": []any{map[string]any{"kind": "navigate", "url": "https://127.0.0.1/admin"},
			map[string]any{"kind": "expectText", "text": "MFA enforced: yes"}}})
	ctx := context.Background()
	runJob := func() {
		t.Helper()
		if err := e.app.RunBrowserAutomations(ctx); err != nil {
			t.Fatal(err)
		}
		e.app.WaitBrowser()
	}
	runJob()
	runs := list(t, e.do("GET", "/v1/browserbase/automations/"+au+"/runs", owner, nil))
	if len(runs) != 1 || runs[0]["trigger"] != "scheduled" || runs[0]["evaluationStatus"] != "fail" || runs[0]["findingId"] == nil {
		t.Fatalf("first scheduled run: %v", runs)
	}
	finding := runs[0]["findingId"].(string)
	runJob() // not due again within the day
	if n := len(list(t, e.do("GET", "/v1/browserbase/automations/"+au+"/runs", owner, nil))); n != 1 {
		t.Fatalf("%d runs within the interval, want 1", n)
	}
	fb.mu.Lock()
	fb.text = "Security: MFA enforced: yes"
	fb.mu.Unlock()
	e.clock.Advance(25 * time.Hour)
	runJob()
	runs = list(t, e.do("GET", "/v1/browserbase/automations/"+au+"/runs", owner, nil))
	if len(runs) != 2 || runs[0]["evaluationStatus"] != "pass" || len(runs[0]["evidenceIds"].([]any)) != 1 {
		t.Fatalf("second run: %v", runs[0])
	}
	if f := obj(t, e.do("GET", "/v1/findings/"+finding, owner, nil)); f["status"] == "open" {
		t.Fatalf("finding still open after a pass: %v", f)
	}
	// A run the appliance left running is interrupted at the next start.
	left := &app.BrowserAutomationRun{ID: app.NewID(app.PrefixBrowserRun), AutomationID: &au, TaskID: &task, Status: app.BrowserRunRunning,
		Trigger: "manual", CreatedAt: e.clock.Now()}
	if err := e.db.SaveBrowserRun(ctx, org, left); err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	if err := e.app.StartBrowser(sctx); err != nil {
		t.Fatal(err)
	}
	stop()
	e.app.WaitBrowser()
	if r := obj(t, e.do("GET", "/v1/browserbase/runs/"+left.ID, owner, nil)); r["status"] != app.BrowserRunInterrupted {
		t.Fatalf("left run: %v", r)
	}
}
