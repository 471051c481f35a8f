package web

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/automation"
)

// evidenceExportFixture gives a task evidence, a script automation with a
// passing and a failing run, and a browser automation with one run.
type evidenceExportFixture struct {
	f                       uiFixture
	owner                   string
	evidence                string
	script, browser         string
	scriptRuns              []string
	browserRun, otherScript string
}

func newEvidenceExportFixture(t *testing.T, e *testEnv) evidenceExportFixture {
	t.Helper()
	x := evidenceExportFixture{f: e.uiFixture("Export")}
	x.owner = e.key(x.f.org, app.RoleOwner)
	rec := e.upload("/v1/tasks/"+x.f.task+"/evidence", x.owner, "backup-log.txt", []byte("restore tested 2026-01-10\n"), nil)
	wantStatus(t, rec, http.StatusCreated)
	x.evidence = obj(t, rec)["id"].(string)
	e.app.SetScriptRunner(automation.New(nil), app.TaskAutomationOptions{})
	x.script = sweepCreate(e, x.f.org, "/v1/tasks/"+x.f.task+"/automations", map[string]any{"name": "Backups checked",
		"script": "result({\"ok\": True})\n"})
	bg := context.Background()
	for _, verdict := range []string{"fail", "pass"} {
		e.clock.Advance(time.Minute)
		now := e.clock.Now()
		r := &app.TaskAutomationRun{ID: app.NewID(app.PrefixAutomationRun), AutomationID: x.script, TaskID: x.f.task, Version: 1,
			Trigger: "scheduled", Status: app.AutomationRunPending, RequestedBy: "scheduler", CreatedAt: now}
		if err := e.db.CreateAutomationRun(bg, x.f.org, r); err != nil {
			t.Fatal(err)
		}
		r.Status, r.EvaluationStatus, r.EvaluationReason = app.AutomationRunCompleted, app.Ptr(verdict), app.Ptr("ok is "+verdict)
		r.FinishedAt, r.Logs, r.Result = &now, []app.RunLog{{At: now, Level: "info", Message: "checked " + verdict}}, map[string]any{"ok": verdict == "pass"}
		if err := e.db.FinishAutomationRun(bg, x.f.org, r); err != nil {
			t.Fatal(err)
		}
		x.scriptRuns = append(x.scriptRuns, r.ID)
	}
	x.browser = sweepCreate(e, x.f.org, "/v1/browserbase/automations", map[string]any{"taskId": x.f.task, "name": "Console MFA",
		"targetUrl": "https://admin.example.com/", "steps": []any{map[string]any{"kind": "navigate", "url": "https://admin.example.com/"}}})
	x.browserRun = e.browserRunFixture(x.f.org, x.browser, x.f.task)
	// An automation of another task of the organization.
	rec = e.do("POST", "/v1/tasks", x.owner, map[string]any{"title": "Another task"})
	wantStatus(t, rec, http.StatusCreated)
	x.otherScript = sweepCreate(e, x.f.org, "/v1/tasks/"+obj(t, rec)["id"].(string)+"/automations", map[string]any{"name": "Other",
		"script": "result({})\n"})
	return x
}

// TestTaskEvidenceSummary: the task's evidence list carries its
// automations with their latest runs and verdicts, paged data unchanged.
func TestTaskEvidenceSummary(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	x := newEvidenceExportFixture(t, e)
	rec := e.do("GET", "/v1/tasks/"+x.f.task+"/evidence", e.key(x.f.org, app.RoleAuditor), nil)
	wantStatus(t, rec, http.StatusOK)
	var body struct {
		Data        []map[string]any         `json:"data"`
		Meta        map[string]any           `json:"meta"`
		Automations []app.EvidenceAutomation `json:"automations"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Data) != 1 || body.Data[0]["id"] != x.evidence || body.Meta["total"] != float64(1) {
		t.Errorf("data %v meta %v, want the one evidence", body.Data, body.Meta)
	}
	if len(body.Automations) != 2 {
		t.Fatalf("automations %+v, want the script and the browser automation", body.Automations)
	}
	s, b := body.Automations[0], body.Automations[1]
	if s.ID != x.script || s.Kind != "script" || s.Passed != 1 || s.Failed != 1 || len(s.LatestRuns) != 2 ||
		s.LatestRuns[0].ID != x.scriptRuns[1] || s.Verdict == nil || *s.Verdict != "pass" {
		t.Errorf("script automation %+v: want 1 passed, 1 failed, newest (pass) first", s)
	}
	if b.ID != x.browser || b.Kind != "browser" || len(b.LatestRuns) != 1 || b.LatestRuns[0].ID != x.browserRun {
		t.Errorf("browser automation %+v", b)
	}
	// An employee who is not the assignee does not see the task.
	wantStatus(t, e.do("GET", "/v1/tasks/"+x.f.task+"/evidence", e.key(x.f.org, app.RoleEmployee), nil), http.StatusNotFound)
}

// TestExportAutomationPdf: a PDF of a script's or a browser automation's
// runs; an automation of another task or organization is 404.
func TestExportAutomationPdf(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	x := newEvidenceExportFixture(t, e)
	auditor := e.key(x.f.org, app.RoleAuditor)
	for _, id := range []string{x.script, x.browser} {
		rec := e.do("GET", "/v1/tasks/"+x.f.task+"/evidence/automation/"+id+"/pdf", auditor, nil)
		wantStatus(t, rec, http.StatusOK)
		if ct := rec.Header().Get("Content-Type"); ct != "application/pdf" || !bytes.HasPrefix(rec.Body.Bytes(), []byte("%PDF-")) {
			t.Errorf("%s: content type %q, body starts %q", id, ct, rec.Body.Bytes()[:min(8, rec.Body.Len())])
		}
		if cd := rec.Header().Get("Content-Disposition"); !strings.Contains(cd, "automation-"+id+".pdf") {
			t.Errorf("%s: content disposition %q", id, cd)
		}
	}
	for _, id := range []string{x.otherScript, "tau_unknown", "nope"} {
		wantStatus(t, e.do("GET", "/v1/tasks/"+x.f.task+"/evidence/automation/"+id+"/pdf", x.owner, nil), http.StatusNotFound)
	}
	other := e.key(e.org("Other", app.PlanEnterprise), app.RoleOwner)
	wantStatus(t, e.do("GET", "/v1/tasks/"+x.f.task+"/evidence/automation/"+x.script+"/pdf", other, nil), http.StatusNotFound)
	// Employees and contractors never read browser automations.
	wantStatus(t, e.do("GET", "/v1/tasks/"+x.f.task+"/evidence/automation/"+x.browser+"/pdf", e.key(x.f.org, app.RoleEmployee), nil), http.StatusNotFound)
}

// TestExportTaskEvidenceZip: the ZIP holds the index and the evidence
// files, and with includeJson each run's JSON (a script run's logs too);
// a bad includeJson is 400 naming it; another organization gets 404.
func TestExportTaskEvidenceZip(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	x := newEvidenceExportFixture(t, e)
	auditor := e.key(x.f.org, app.RoleAuditor)
	read := func(q string) map[string]string {
		t.Helper()
		rec := e.do("GET", "/v1/tasks/"+x.f.task+"/evidence/export"+q, auditor, nil)
		wantStatus(t, rec, http.StatusOK)
		if ct := rec.Header().Get("Content-Type"); ct != "application/zip" {
			t.Errorf("content type %q", ct)
		}
		if cd := rec.Header().Get("Content-Disposition"); !strings.Contains(cd, "task-"+x.f.task+"-evidence.zip") {
			t.Errorf("content disposition %q", cd)
		}
		zr, err := zip.NewReader(bytes.NewReader(rec.Body.Bytes()), int64(rec.Body.Len()))
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			files[f.Name] = string(b)
		}
		return files
	}
	plain := read("")
	if plain["evidence/"+x.evidence+"-backup-log.txt"] != "restore tested 2026-01-10\n" || !strings.Contains(plain["evidence.json"], x.evidence) {
		t.Errorf("plain export: %v", exportNames(plain))
	}
	for name := range plain {
		if strings.HasPrefix(name, "runs/") {
			t.Errorf("without includeJson the export holds %s", name)
		}
	}
	full := read("?includeJson=true")
	run := full["runs/"+x.script+"/"+x.scriptRuns[0]+".json"]
	if !strings.Contains(run, "checked fail") || !strings.Contains(run, `"evaluationStatus": "fail"`) {
		t.Errorf("script run JSON %q, want its logs and verdict (files %v)", run, exportNames(full))
	}
	if _, ok := full["runs/"+x.browser+"/"+x.browserRun+".json"]; !ok {
		t.Errorf("no browser run JSON in %v", exportNames(full))
	}
	if _, ok := full["evidence/"+x.evidence+"-backup-log.txt"]; !ok {
		t.Errorf("no evidence file in %v", exportNames(full))
	}
	rec := e.do("GET", "/v1/tasks/"+x.f.task+"/evidence/export?includeJson=maybe", auditor, nil)
	wantStatus(t, rec, http.StatusBadRequest)
	wantBody(t, rec, "includeJson")
	other := e.key(e.org("Other", app.PlanEnterprise), app.RoleOwner)
	wantStatus(t, e.do("GET", "/v1/tasks/"+x.f.task+"/evidence/export", other, nil), http.StatusNotFound)
	wantStatus(t, e.do("GET", "/v1/tasks/tsk_unknown/evidence/export", x.owner, nil), http.StatusNotFound)
}

func exportNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestUITaskEvidenceExport: the task's automations page offers the ZIP and
// each automation's PDF; the downloads work for an auditor and the
// assignee, and are 404 for another organization.
func TestUITaskEvidenceExport(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	x := newEvidenceExportFixture(t, e)
	auditor := e.browser()
	auditor.signIn(x.f.auditor)
	rec := auditor.get("/tasks/" + x.f.task + "/automations")
	wantStatus(t, rec, http.StatusOK)
	base := "/tasks/" + x.f.task + "/evidence/"
	wantBody(t, rec, `href="`+base+`export"`, `href="`+base+`export?includeJson=true"`, `href="`+base+`automation/`+x.script+`/pdf"`,
		`href="`+base+`automation/`+x.browser+`/pdf"`)
	rec = auditor.get(base + "export?includeJson=true")
	wantStatus(t, rec, http.StatusOK)
	if rec.Header().Get("Content-Type") != "application/zip" || !bytes.HasPrefix(rec.Body.Bytes(), []byte("PK")) {
		t.Errorf("zip download: %q", rec.Header().Get("Content-Type"))
	}
	rec = auditor.get(base + "automation/" + x.browser + "/pdf")
	wantStatus(t, rec, http.StatusOK)
	if !bytes.HasPrefix(rec.Body.Bytes(), []byte("%PDF-")) {
		t.Error("pdf download is not a PDF")
	}
	wantBody(t, auditor.get("/tasks/"+x.f.task+"/automations/"+x.script), `href="`+base+`automation/`+x.script+`/pdf"`)
	// The fixture's task is the employee's own: its evidence and scripts
	// are theirs to export, browser automations are not.
	employee := e.browser()
	employee.signIn(x.f.employee)
	wantStatus(t, employee.get(base+"export"), http.StatusOK)
	wantStatus(t, employee.get(base+"automation/"+x.script+"/pdf"), http.StatusOK)
	wantStatus(t, employee.get(base+"automation/"+x.browser+"/pdf"), http.StatusNotFound)
	// Another organization's person gets 404.
	o := e.uiFixture("Elsewhere")
	stranger := e.browser()
	stranger.signIn(o.owner)
	wantStatus(t, stranger.get(base+"export"), http.StatusNotFound)
	wantStatus(t, stranger.get(base+"automation/"+x.script+"/pdf"), http.StatusNotFound)
}
