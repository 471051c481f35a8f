package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/automation"
	"github.com/compliance-appliance/compliance/integrations/outbound"
)

const autoToken = "tok-s3cr3t-value-42"

// autoEnv is the integrations test server with the sandbox installed and
// a task linked to a control.
type autoEnv struct {
	*integEnv
	task    string
	control string
	conn    string
	base    string
}

func newAutoEnv(t *testing.T, lim app.ScriptLimits) *autoEnv {
	t.Helper()
	ie := newIntegEnv(t)
	c, err := outbound.New(outbound.Options{MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	ie.app.SetScriptRunner(automation.New(c), app.TaskAutomationOptions{Limits: lim})
	rec := ie.do("GET", "/v1/controls?perPage=1", ie.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	var l struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || len(l.Data) == 0 {
		t.Fatalf("controls: %v %s", err, rec.Body)
	}
	ctl := l.Data[0].ID
	if _, err := ie.raw().Exec(`UPDATE controls SET status = 'not_started' WHERE id = ?`, ctl); err != nil {
		t.Fatal(err)
	}
	rec = ie.do("POST", "/v1/tasks", ie.owner, map[string]any{"title": "Collect MFA setting", "controlId": ctl})
	wantStatus(t, rec, http.StatusCreated)
	task := obj(t, rec)["id"].(string)
	conn := ie.connect(map[string]any{"providerSlug": "fake", "name": "Directory", "credentials": map[string]any{"token": autoToken},
		"variables": map[string]any{"org": "acme"}})
	return &autoEnv{integEnv: ie, task: task, control: ctl, conn: conn, base: "/v1/tasks/" + task + "/automations"}
}

func (e *autoEnv) create(body map[string]any) map[string]any {
	e.t.Helper()
	rec := e.do("POST", e.base, e.owner, body)
	wantStatus(e.t, rec, http.StatusCreated)
	return obj(e.t, rec)
}

// runNow starts a run by hand, lets the worker run it and answers it.
func (e *autoEnv) runNow(id string) map[string]any {
	e.t.Helper()
	rec := e.do("POST", e.base+"/"+id+"/run", e.owner, nil)
	wantStatus(e.t, rec, http.StatusCreated)
	run := obj(e.t, rec)
	if run["status"] != "pending" {
		e.t.Fatalf("queued run: %v", run)
	}
	if n, err := e.app.ProcessAutomationRuns(context.Background()); err != nil || n != 1 {
		e.t.Fatalf("processed %d runs: %v", n, err)
	}
	rec = e.do("GET", e.base+"/"+id+"/runs/"+run["id"].(string), e.owner, nil)
	wantStatus(e.t, rec, http.StatusOK)
	return obj(e.t, rec)
}

func TestTaskAutomationRunPassFailAndSecrets(t *testing.T) {
	e := newAutoEnv(t, app.ScriptLimits{})
	var mfa atomic.Bool
	mfa.Store(true)
	var sawToken atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawToken.Store(r.Header.Get("Authorization") == "Bearer "+autoToken)
		fmt.Fprintf(w, `{"settings": {"mfa": %v}}`, mfa.Load())
	}))
	defer srv.Close()
	script := fmt.Sprintf(`tok = secret(%q, "token")
log("using token", tok)
r = http.get(%q, headers={"Authorization": "Bearer " + tok})
doc = r.json()
result({"mfa": doc["settings"]["mfa"], "echo": "token was " + tok})
evidence("settings", r.body + " " + tok)
`, e.conn, srv.URL+"/settings")
	a := e.create(map[string]any{"name": "MFA required", "script": script, "hosts": []string{"127.0.0.1"},
		"evaluationCriteria": `result["mfa"] == True`, "scheduleFrequency": "weekly"})
	id := a["id"].(string)
	if a["latestVersion"] != float64(1) || a["isEnabled"] != true {
		t.Fatalf("automation: %v", a)
	}

	// A second run while one is pending is a conflict.
	rec := e.do("POST", e.base+"/"+id+"/run", e.owner, nil)
	wantStatus(t, rec, http.StatusCreated)
	wantError(t, e.do("POST", e.base+"/"+id+"/run", e.owner, nil), http.StatusConflict, "conflict")
	if _, err := e.app.ProcessAutomationRuns(context.Background()); err != nil {
		t.Fatal(err)
	}
	run := obj(t, e.do("GET", e.base+"/"+id+"/runs/"+obj(t, rec)["id"].(string), e.owner, nil))
	if run["status"] != "completed" || run["evaluationStatus"] != "pass" || run["evidenceId"] == nil || !sawToken.Load() {
		t.Fatalf("passing run: %v", run)
	}
	raw, _ := json.Marshal(run)
	if strings.Contains(string(raw), autoToken) || !strings.Contains(string(raw), "[redacted]") {
		t.Fatalf("the secret leaked or was not redacted: %s", raw)
	}

	// The evidence is on the task with an expiry of a week plus a day,
	// and the control left not started.
	rec = e.do("GET", "/v1/tasks/"+e.task+"/evidence", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), run["evidenceId"].(string)) {
		t.Fatalf("task evidence: %s", rec.Body)
	}
	ev, body, err := e.app.OpenEvidence(e.ctx(e.org), run["evidenceId"].(string))
	if err != nil {
		t.Fatal(err)
	}
	content, _ := io.ReadAll(body)
	body.Close()
	want := e.clock.Now().Add(8 * 24 * time.Hour)
	if ev.ExpiresAt == nil || !ev.ExpiresAt.Equal(want) || ev.TaskID == nil || *ev.TaskID != e.task {
		t.Fatalf("evidence: %+v, want expiry %s", ev, want)
	}
	if strings.Contains(string(content), autoToken) || !strings.Contains(string(content), "MFA required") {
		t.Fatalf("evidence content: %s", content)
	}
	ctl := obj(t, e.do("GET", "/v1/controls/"+e.control, e.owner, nil))
	if ctl["status"] == "not_started" {
		t.Fatalf("control status did not move: %v", ctl["status"])
	}

	// A failing run opens one finding; the next failure keeps it; a pass
	// resolves it.
	mfa.Store(false)
	run = e.runNow(id)
	if run["status"] != "failed" || run["evaluationStatus"] != "fail" || run["findingId"] == nil {
		t.Fatalf("failing run: %v", run)
	}
	finding := run["findingId"].(string)
	f := obj(t, e.do("GET", "/v1/findings/"+finding, e.owner, nil))
	if f["status"] != "open" || f["taskId"] != e.task {
		t.Fatalf("finding: %v", f)
	}
	if run = e.runNow(id); run["findingId"] != finding {
		t.Fatalf("second failure opened another finding: %v", run)
	}
	mfa.Store(true)
	if run = e.runNow(id); run["evaluationStatus"] != "pass" {
		t.Fatalf("recovery: %v", run)
	}
	if f = obj(t, e.do("GET", "/v1/findings/"+finding, e.owner, nil)); f["status"] != "resolved" {
		t.Fatalf("finding after pass: %v", f["status"])
	}

	// Runs of the automation and of the task, newest first, without logs.
	for _, path := range []string{e.base + "/runs", e.base + "/" + id + "/runs"} {
		rec = e.do("GET", path, e.owner, nil)
		wantStatus(t, rec, http.StatusOK)
		var l struct {
			Data []map[string]any `json:"data"`
			Meta map[string]any   `json:"meta"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &l)
		if len(l.Data) != 4 || l.Meta["total"] != float64(4) || l.Data[0]["evaluationStatus"] != "pass" {
			t.Fatalf("%s: %s", path, rec.Body)
		}
	}

	// The audit trail never holds the secret.
	var leaks int
	rows, err := e.raw().Query(`SELECT * FROM audit_log`)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(fmt.Sprint(vals...), autoToken) {
			leaks++
		}
	}
	rows.Close()
	if leaks != 0 {
		t.Fatalf("%d audit records hold the secret", leaks)
	}
}

func TestTaskAutomationVersions(t *testing.T) {
	e := newAutoEnv(t, app.ScriptLimits{})
	a := e.create(map[string]any{"name": "Empty"})
	id := a["id"].(string)
	if a["latestVersion"] != float64(0) {
		t.Fatalf("automation: %v", a)
	}
	wantError(t, e.do("POST", e.base+"/"+id+"/run", e.owner, nil), http.StatusConflict, "conflict")
	vpath := e.base + "/" + id + "/versions"
	body := wantError(t, e.do("POST", vpath, e.owner, map[string]any{"version": 1, "script": "x = 1\ny = (\n"}), http.StatusBadRequest, "validation_error")
	if raw, _ := json.Marshal(body); !strings.Contains(string(raw), `"script"`) || !strings.Contains(string(raw), "line 3") {
		t.Fatalf("syntax error body: %s", raw)
	}
	wantField(t, e.do("POST", vpath, e.owner, map[string]any{"version": 0, "script": "x = 1"}), "version")
	wantField(t, e.do("POST", vpath, e.owner, map[string]any{"version": 1}), "script")
	rec := e.do("POST", vpath, e.owner, map[string]any{"version": 1, "script": "result({'v': 1})", "changelog": "first"})
	wantStatus(t, rec, http.StatusCreated)
	if v := obj(t, rec); v["version"] != float64(1) || v["changelog"] != "first" {
		t.Fatalf("version: %v", v)
	}
	wantError(t, e.do("POST", vpath, e.owner, map[string]any{"version": 1, "script": "result({'v': 9})"}), http.StatusConflict, "conflict")
	wantStatus(t, e.do("POST", vpath, e.owner, map[string]any{"version": 3, "script": "result({'v': 3})"}), http.StatusCreated)
	rec = e.do("GET", vpath, e.owner, nil)
	if !strings.Contains(rec.Body.String(), `"total":2`) || strings.Index(rec.Body.String(), `'v': 3`) > strings.Index(rec.Body.String(), `'v': 1`) {
		t.Fatalf("versions: %s", rec.Body)
	}
	// Runs use the latest version unless one is pinned.
	if run := e.runNow(id); run["version"] != float64(3) || run["result"].(map[string]any)["v"] != float64(3) {
		t.Fatalf("latest run: %v", run)
	}
	wantField(t, e.do("PATCH", e.base+"/"+id, e.owner, map[string]any{"pinnedVersion": 5}), "pinnedVersion")
	wantStatus(t, e.do("PATCH", e.base+"/"+id, e.owner, map[string]any{"pinnedVersion": 1}), http.StatusOK)
	if run := e.runNow(id); run["version"] != float64(1) || run["result"].(map[string]any)["v"] != float64(1) {
		t.Fatalf("pinned run: %v", run)
	}
	// Delete takes versions and runs with it.
	wantStatus(t, e.do("DELETE", e.base+"/"+id, e.owner, nil), http.StatusNoContent)
	wantError(t, e.do("GET", e.base+"/"+id, e.owner, nil), http.StatusNotFound, "not_found")
}

func TestTaskAutomationBadInput(t *testing.T) {
	e := newAutoEnv(t, app.ScriptLimits{})
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"no name", map[string]any{"script": "x = 1"}, "name"},
		{"unknown template", map[string]any{"templateId": "nope"}, "templateId"},
		{"template without its parameter", map[string]any{"templateId": "tls-and-headers"}, "parameters.url"},
		{"template parameter not a URL", map[string]any{"templateId": "tls-and-headers", "parameters": map[string]any{"url": "ftp://x"}}, "parameters.url"},
		{"host with a scheme", map[string]any{"name": "x", "hosts": []string{"https://example.com"}}, "hosts"},
		{"host with a path", map[string]any{"name": "x", "hosts": []string{"example.com/x"}}, "hosts"},
		{"wildcard of a top-level domain", map[string]any{"name": "x", "hosts": []string{"*.com"}}, "hosts"},
		{"bad schedule", map[string]any{"name": "x", "scheduleFrequency": "hourly"}, "scheduleFrequency"},
		{"bad criteria", map[string]any{"name": "x", "evaluationCriteria": "result[\"a\" >"}, "evaluationCriteria"},
		{"script syntax", map[string]any{"name": "x", "script": "def f(:\n"}, "script"},
		{"script and template", map[string]any{"templateId": "http-json-field", "script": "x = 1",
			"parameters": map[string]any{"url": "https://a.example.com", "field": "a", "expected": "b"}}, "script"},
		{"malformed json", `{"name":`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := e.do("POST", e.base, e.owner, c.body)
			if c.field == "" {
				wantError(t, rec, http.StatusBadRequest, "validation_error")
				return
			}
			wantField(t, rec, c.field)
		})
	}
	// A template fills the script, hosts and criteria.
	a := e.create(map[string]any{"templateId": "http-json-field", "parameters": map[string]any{"url": "https://api.example.com/x", "field": "a.b", "expected": "on"}})
	if a["templateId"] != "http-json-field" || fmt.Sprint(a["hosts"]) != "[api.example.com]" || a["evaluationCriteria"] != `result["equal"]` || a["name"] != "HTTP JSON endpoint field equals value" {
		t.Fatalf("from template: %v", a)
	}
	rec := e.do("GET", "/v1/task-automation-templates", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	for _, name := range []string{"TLS and headers of a URL", "GitLab protected branches", "HTTP JSON endpoint field equals value", "certificate expiry of a host"} {
		if !strings.Contains(rec.Body.String(), name) {
			t.Errorf("templates lack %q", name)
		}
	}
	wantField(t, e.do("PATCH", e.base+"/"+a["id"].(string), e.owner, map[string]any{"script": "x = 2"}), "script")
}

func TestTaskAutomationAccess(t *testing.T) {
	e := newAutoEnv(t, app.ScriptLimits{})
	a := e.create(map[string]any{"name": "Checked", "script": "result({})"})
	id := a["id"].(string)
	run := e.runNow(id)

	other := e.testEnv.org("Other", "professional")
	okey := e.key(other, app.RoleOwner)
	for _, p := range []string{e.base, e.base + "/" + id, e.base + "/" + id + "/versions", e.base + "/" + id + "/runs", e.base + "/runs",
		e.base + "/" + id + "/runs/" + run["id"].(string)} {
		wantError(t, e.do("GET", p, okey, nil), http.StatusNotFound, "not_found")
		wantStatus(t, e.do("GET", p, e.owner, nil), http.StatusOK)
	}
	wantError(t, e.do("POST", e.base+"/"+id+"/run", okey, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("PATCH", e.base+"/"+id, okey, map[string]any{"name": "x"}), http.StatusNotFound, "not_found")
	wantError(t, e.do("DELETE", e.base+"/"+id, okey, nil), http.StatusNotFound, "not_found")

	aud := e.key(e.org, app.RoleAuditor)
	wantStatus(t, e.do("GET", e.base+"/"+id, aud, nil), http.StatusOK)
	wantError(t, e.do("POST", e.base, aud, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", e.base+"/"+id+"/run", aud, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", e.base+"/"+id+"/versions", aud, map[string]any{"version": 2, "script": "x = 1"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("PATCH", e.base+"/"+id, aud, map[string]any{"isEnabled": false}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("DELETE", e.base+"/"+id, aud, nil), http.StatusForbidden, "forbidden")

	// Idempotency-Key replays a create.
	body := map[string]any{"name": "Once", "script": "result({})"}
	r1 := e.do("POST", e.base, e.owner, body, "Idempotency-Key", "auto-1")
	r2 := e.do("POST", e.base, e.owner, body, "Idempotency-Key", "auto-1")
	wantStatus(t, r1, http.StatusCreated)
	wantStatus(t, r2, http.StatusCreated)
	if obj(t, r1)["id"] != obj(t, r2)["id"] || r2.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatal("the create was not replayed")
	}
}

func TestTaskAutomationHostileScriptsAreStopped(t *testing.T) {
	e := newAutoEnv(t, app.ScriptLimits{MaxSteps: 1 << 62, Timeout: 3 * time.Second})
	loop := e.create(map[string]any{"name": "Loops", "script": "while True:\n    pass\n"})["id"].(string)
	rec := e.do("POST", e.base+"/"+loop+"/run", e.owner, nil)
	wantStatus(t, rec, http.StatusCreated)
	runID := obj(t, rec)["id"].(string)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := e.app.ProcessAutomationRuns(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	// While the script spins, the API answers other requests: every
	// request is answered, and the run is seen running while they are
	// (how many of them fall inside the run's 3 s depends on the machine's
	// load, so the count is not asserted).
	time.Sleep(100 * time.Millisecond)
	sawRunning := false
	for i := 0; i < 5; i++ {
		wantStatus(t, e.do("GET", "/v1/tasks/"+e.task, e.owner, nil), http.StatusOK)
		rec := e.do("GET", e.base+"/"+loop+"/runs/"+runID, e.owner, nil)
		wantStatus(t, rec, http.StatusOK)
		if obj(t, rec)["status"] == "running" {
			sawRunning = true
		}
	}
	wg.Wait()
	if !sawRunning {
		t.Fatal("no request was answered while the hostile script ran")
	}
	run := obj(t, e.do("GET", e.base+"/"+loop+"/runs/"+runID, e.owner, nil))
	if run["status"] != "failed" || run["stopReason"] != "timeout" || !strings.Contains(fmt.Sprint(run["error"]), "did not finish within 3s") {
		t.Fatalf("loop run: %v", run)
	}

	// An undeclared host and a metadata address are refused and recorded.
	for _, c := range []struct{ hosts []string }{{[]string{"example.com"}}, {[]string{"169.254.169.254"}}} {
		id := e.create(map[string]any{"name": "Calls out", "hosts": c.hosts, "script": `http.get("http://169.254.169.254/latest/meta-data/")`})["id"].(string)
		run := e.runNow(id)
		if run["status"] != "failed" || run["stopReason"] != "host" {
			t.Fatalf("%v: %v", c.hosts, run)
		}
	}
}

func TestTaskAutomationScheduleAndInterrupt(t *testing.T) {
	e := newAutoEnv(t, app.ScriptLimits{})
	a := e.create(map[string]any{"name": "Daily", "script": "result({'ok': True})", "scheduleFrequency": "daily"})
	id := a["id"].(string)
	ctx := context.Background()
	count := func() int {
		var l struct {
			Meta struct {
				Total int `json:"total"`
			} `json:"meta"`
		}
		_ = json.Unmarshal(e.do("GET", e.base+"/"+id+"/runs", e.owner, nil).Body.Bytes(), &l)
		return l.Meta.Total
	}
	if err := e.app.ScheduleTaskAutomations(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := e.app.ProcessAutomationRuns(ctx); err != nil || n != 1 {
		t.Fatalf("first scheduled run: %d %v", n, err)
	}
	// Not due again until a day later.
	e.clock.Advance(23 * time.Hour)
	_ = e.app.ScheduleTaskAutomations(ctx)
	if count() != 1 {
		t.Fatalf("runs after 23 h: %d", count())
	}
	e.clock.Advance(2 * time.Hour)
	_ = e.app.ScheduleTaskAutomations(ctx)
	if count() != 2 {
		t.Fatalf("runs after 25 h: %d", count())
	}
	// A disabled automation is not scheduled.
	wantStatus(t, e.do("PATCH", e.base+"/"+id, e.owner, map[string]any{"isEnabled": false}), http.StatusOK)
	e.clock.Advance(48 * time.Hour)
	_ = e.app.ScheduleTaskAutomations(ctx)
	if count() != 2 {
		t.Fatalf("disabled automation ran: %d", count())
	}
	// The pending run is claimed and the appliance stops: it is marked
	// interrupted at the next start.
	claimed, err := e.db.ClaimAutomationRun(ctx, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.app.InterruptStaleAutomationRuns(ctx); err != nil || n != 1 {
		t.Fatalf("interrupted %d: %v", n, err)
	}
	run := obj(t, e.do("GET", e.base+"/"+id+"/runs/"+claimed.ID, e.owner, nil))
	if run["status"] != "interrupted" || run["trigger"] != "scheduled" {
		t.Fatalf("interrupted run: %v", run)
	}
}

// TestTaskAutomationMCPTool: list_automation_runs lists a task's runs; a
// task of another organization is not found.
func TestTaskAutomationMCPTool(t *testing.T) {
	e := newAutoEnv(t, app.ScriptLimits{})
	id := e.create(map[string]any{"name": "Checked", "script": "result({})"})["id"].(string)
	e.runNow(id)
	cs := mcpSession(t, e.testEnv, http.Header{"X-Api-Key": {e.key(e.org, app.RoleAuditor)}})
	out, isErr := callTool(t, cs, "list_automation_runs", map[string]any{"taskId": e.task})
	if isErr || len(out["data"].([]any)) != 1 || out["data"].([]any)[0].(map[string]any)["evaluationStatus"] != "pass" {
		t.Fatalf("list_automation_runs: %v", out)
	}
	out, isErr = callTool(t, cs, "list_automation_runs", map[string]any{})
	if !isErr || !strings.Contains(fmt.Sprint(out), "taskId") {
		t.Fatalf("without taskId: %v", out)
	}
	other := mcpSession(t, e.testEnv, http.Header{"X-Api-Key": {e.key(e.testEnv.org("Globex", app.PlanProfessional), app.RoleOwner)}})
	out, _ = callTool(t, other, "list_automation_runs", map[string]any{"taskId": e.task})
	if !strings.Contains(fmt.Sprint(out["error"]), "not_found") {
		t.Fatalf("another organization: %v", out)
	}
}
