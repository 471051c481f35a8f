package web

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

func TestTasks(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	a, b := e.org("A", app.PlanProfessional), e.org("B", app.PlanProfessional)
	ka, kb, aud := e.key(a, app.RoleAdmin), e.key(b, app.RoleAdmin), e.key(a, app.RoleAuditor)
	ctl := e.firstControl(ka)
	alice := e.person(a, "alice@a.test", app.RoleAdmin)
	bob := e.person(a, "bob@a.test", app.RoleEmployee)
	mk := func(body map[string]any) string {
		t.Helper()
		rec := e.do("POST", "/v1/tasks", ka, body)
		wantStatus(t, rec, http.StatusCreated)
		return obj(t, rec)["id"].(string)
	}
	t1 := mk(map[string]any{"title": "Quarterly review", "assigneeId": alice, "controlId": ctl, "dueDate": "2026-03-31", "recurrence": "quarterly"})
	t2 := mk(map[string]any{"title": "Yearly pentest", "assigneeId": alice, "dueDate": "2026-06-15", "frequency": "yearly"})
	t3 := mk(map[string]any{"title": "Onboarding", "assigneeId": bob, "dueDate": "2026-02-01"})
	// Validation names the field.
	wantField(t, e.do("POST", "/v1/tasks", ka, map[string]any{}), "title")
	wantField(t, e.do("POST", "/v1/tasks", ka, map[string]any{"title": "x", "recurrence": "weekly"}), "recurrence")
	wantField(t, e.do("POST", "/v1/tasks", ka, map[string]any{"title": "x", "dueDate": "31/12/2026"}), "dueDate")
	wantField(t, e.do("POST", "/v1/tasks", ka, map[string]any{"title": "x", "assigneeId": "usr_nope"}), "assigneeId")
	wantField(t, e.do("POST", "/v1/tasks", ka, map[string]any{"title": "x", "controlId": "ctl_nope"}), "controlId")
	wantField(t, e.do("POST", "/v1/tasks", ka, map[string]any{"title": "x", "status": "not_relevant"}), "notRelevantJustification")
	// Filters.
	if n := total(t, e.do("GET", "/v1/tasks?assigneeId="+alice, ka, nil)); n != 2 {
		t.Fatalf("assignee filter: %d", n)
	}
	if n := total(t, e.do("GET", "/v1/tasks?controlId="+ctl, ka, nil)); n != 1 {
		t.Fatalf("control filter: %d", n)
	}
	if n := total(t, e.do("GET", "/v1/tasks?dueFrom=2026-03-01&dueTo=2026-06-15", ka, nil)); n != 2 {
		t.Fatalf("due range: %d", n)
	}
	wantField(t, e.do("GET", "/v1/tasks?dueFrom=tomorrow", ka, nil), "dueFrom")
	wantField(t, e.do("GET", "/v1/tasks?status=open", ka, nil), "status")
	// Update and complete: the quarterly task schedules its successor.
	rec := e.do("PATCH", "/v1/tasks/"+t1, ka, map[string]any{"status": "in_progress", "description": "evidence: access review export"})
	wantStatus(t, rec, http.StatusOK)
	rec = e.do("POST", "/v1/tasks/"+t1+"/complete", ka, nil)
	wantStatus(t, rec, http.StatusOK)
	if c := obj(t, rec); c["status"] != "done" || c["completedAt"] == nil {
		t.Fatalf("completed: %v", c)
	}
	next := list(t, e.do("GET", "/v1/tasks?controlId="+ctl+"&status=todo", ka, nil))
	if len(next) != 1 || next[0]["dueDate"] != "2026-06-30" || next[0]["assigneeId"] != alice || next[0]["recurrence"] != "quarterly" {
		t.Fatalf("next quarterly: %v", next)
	}
	// Yearly via bulk status.
	rec = e.do("PATCH", "/v1/tasks/bulk", ka, map[string]any{"taskIds": []string{t2, t3}, "status": "done"})
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["updatedCount"].(float64) != 2 {
		t.Fatalf("bulk: %s", rec.Body.String())
	}
	if n := total(t, e.do("GET", "/v1/tasks?dueFrom=2027-06-15&dueTo=2027-06-15", ka, nil)); n != 1 {
		t.Fatalf("yearly successor: %d", n)
	}
	wantField(t, e.do("PATCH", "/v1/tasks/bulk", ka, map[string]any{"taskIds": []string{}, "status": "done"}), "taskIds")
	wantField(t, e.do("PATCH", "/v1/tasks/bulk", ka, map[string]any{"taskIds": []string{t2}, "status": "finished"}), "status")
	wantField(t, e.do("PATCH", "/v1/tasks/bulk", ka, map[string]any{"taskIds": []string{"tsk_nope"}, "status": "todo"}), "taskIds")
	// Bulk assignee and reassignment of all of one person's open tasks.
	rec = e.do("PATCH", "/v1/tasks/bulk/assignee", ka, map[string]any{"taskIds": []string{t3}, "assigneeId": alice})
	wantStatus(t, rec, http.StatusOK)
	open := total(t, e.do("GET", "/v1/tasks?assigneeId="+alice+"&status=todo", ka, nil))
	rec = e.do("POST", "/v1/tasks/reassign", ka, map[string]any{"fromAssigneeId": alice, "toAssigneeId": bob})
	wantStatus(t, rec, http.StatusOK)
	if n := int(obj(t, rec)["updatedCount"].(float64)); n != open || n == 0 {
		t.Fatalf("reassigned %d, alice had %d open", n, open)
	}
	if n := total(t, e.do("GET", "/v1/tasks?assigneeId="+alice+"&status=todo", ka, nil)); n != 0 {
		t.Fatalf("alice still has %d open tasks", n)
	}
	wantField(t, e.do("POST", "/v1/tasks/reassign", ka, map[string]any{"fromAssigneeId": alice}), "toAssigneeId")
	wantField(t, e.do("POST", "/v1/tasks/reassign", ka, map[string]any{"fromAssigneeId": alice, "toAssigneeId": "usr_nope"}), "toAssigneeId")
	// Another organization: 404 on every task route.
	for _, r := range []struct{ m, p string }{{"GET", "/v1/tasks/" + t1}, {"PATCH", "/v1/tasks/" + t1}, {"DELETE", "/v1/tasks/" + t1},
		{"POST", "/v1/tasks/" + t1 + "/complete"}, {"GET", "/v1/tasks/" + t1 + "/evidence"}} {
		var body any
		if r.m == "PATCH" {
			body = map[string]any{"title": "x"}
		}
		wantError(t, e.do(r.m, r.p, kb, body), http.StatusNotFound, "not_found")
	}
	wantError(t, e.do("POST", "/v1/tasks/"+t1+"/evidence", kb, map[string]any{"evidenceId": "evd_x"}), http.StatusNotFound, "not_found")
	wantField(t, e.do("PATCH", "/v1/tasks/bulk", kb, map[string]any{"taskIds": []string{t1}, "status": "todo"}), "taskIds")
	// Auditor key: read only.
	wantStatus(t, e.do("GET", "/v1/tasks/"+t1, aud, nil), http.StatusOK)
	for _, r := range []struct {
		m, p string
		body any
	}{{"POST", "/v1/tasks", map[string]any{"title": "x"}}, {"PATCH", "/v1/tasks/" + t1, map[string]any{"title": "x"}},
		{"POST", "/v1/tasks/" + t1 + "/complete", nil}, {"DELETE", "/v1/tasks/" + t1, nil},
		{"PATCH", "/v1/tasks/bulk", map[string]any{"taskIds": []string{t1}, "status": "todo"}},
		{"PATCH", "/v1/tasks/bulk/assignee", map[string]any{"taskIds": []string{t1}, "assigneeId": nil}},
		{"POST", "/v1/tasks/reassign", map[string]any{"fromAssigneeId": alice, "toAssigneeId": bob}}} {
		wantError(t, e.do(r.m, r.p, aud, r.body), http.StatusForbidden, "forbidden")
	}
	// Delete.
	wantStatus(t, e.do("DELETE", "/v1/tasks/"+t3, ka, nil), http.StatusNoContent)
	wantError(t, e.do("GET", "/v1/tasks/"+t3, ka, nil), http.StatusNotFound, "not_found")
}

func TestEmployeeWorksOnOwnTasks(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("A", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	ctl := e.firstControl(admin)
	emp := e.person(org, "emp@a.test", app.RoleEmployee)
	other := e.person(org, "other@a.test", app.RoleEmployee)
	k, err := e.app.CreateAPIKey(app.WithPrincipal(e.ctx(org), &app.Principal{OrgID: org, Role: app.RoleOwner, AuthType: app.AuthSystem, UserID: emp}),
		app.APIKeyCreate{Name: "emp", Role: "employee"})
	if err != nil {
		t.Fatal(err)
	}
	ek := k.Key
	rec := e.do("POST", "/v1/tasks", admin, map[string]any{"title": "Mine", "assigneeId": emp, "controlId": ctl})
	mine := obj(t, rec)["id"].(string)
	rec = e.do("POST", "/v1/tasks", admin, map[string]any{"title": "Theirs", "assigneeId": other, "controlId": ctl})
	theirs := obj(t, rec)["id"].(string)
	// The key acts as the employee who created it: only their task is visible.
	if got := list(t, e.do("GET", "/v1/tasks", ek, nil)); len(got) != 1 || got[0]["id"] != mine {
		t.Fatalf("employee sees %v", got)
	}
	wantError(t, e.do("GET", "/v1/tasks/"+theirs, ek, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/tasks/"+theirs+"/complete", ek, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/tasks", ek, map[string]any{"title": "x"}), http.StatusForbidden, "forbidden")
	// The employee completes their own task with evidence.
	wantError(t, e.upload("/v1/tasks/"+theirs+"/evidence", ek, "proof.txt", []byte("done"), nil), http.StatusNotFound, "not_found")
	rec = e.upload("/v1/tasks/"+mine+"/evidence", ek, "proof.txt", []byte("done"), nil)
	wantStatus(t, rec, http.StatusCreated)
	wantError(t, e.do("PATCH", "/v1/tasks/"+mine, ek, map[string]any{"title": "renamed"}), http.StatusForbidden, "forbidden")
	wantStatus(t, e.do("POST", "/v1/tasks/"+mine+"/complete", ek, nil), http.StatusOK)
	if c := obj(t, e.do("GET", "/v1/controls/"+ctl, admin, nil)); c["status"] != "implemented" {
		t.Fatalf("control after the employee's evidence task: %v", c["status"])
	}
}

func TestAttachExistingEvidence(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("A", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	ctl := e.firstControl(key)
	rec := e.upload("/v1/controls/"+ctl+"/evidence", key, "cfg.json", []byte(`{"mfa":true}`), nil)
	ev := obj(t, rec)["id"].(string)
	rec = e.do("POST", "/v1/tasks", key, map[string]any{"title": "MFA proof", "controlId": ctl})
	tid := obj(t, rec)["id"].(string)
	wantField(t, e.do("POST", "/v1/tasks/"+tid+"/evidence", key, map[string]any{}), "evidenceId")
	wantField(t, e.do("POST", "/v1/tasks/"+tid+"/evidence", key, map[string]any{"evidenceId": "evd_nope"}), "evidenceId")
	rec = e.do("POST", "/v1/tasks/"+tid+"/evidence", key, map[string]any{"evidenceId": ev})
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["taskId"] != tid {
		t.Fatalf("attach: %s", rec.Body.String())
	}
	if n := total(t, e.do("GET", "/v1/tasks/"+tid+"/evidence", key, nil)); n != 1 {
		t.Fatalf("task evidence: %d", n)
	}
	wantStatus(t, e.do("POST", "/v1/tasks/"+tid+"/complete", key, nil), http.StatusOK)
	c := obj(t, e.do("GET", "/v1/controls/"+ctl, key, nil))
	if c["status"] != "implemented" {
		t.Fatalf("control: %v", c["status"])
	}
	// Deleting the only evidence drops the control out of implemented.
	wantStatus(t, e.do("DELETE", "/v1/evidence/"+ev, key, nil), http.StatusNoContent)
	if c := obj(t, e.do("GET", "/v1/controls/"+ctl, key, nil)); c["status"] != "in_progress" {
		t.Fatalf("control after deleting evidence: %v", c["status"])
	}
	// Evidence of another control cannot be attached.
	other := list(t, e.do("GET", "/v1/controls?perPage=2", key, nil))[1]["id"].(string)
	rec = e.upload("/v1/controls/"+other+"/evidence", key, "x.txt", []byte("x"), nil)
	wantField(t, e.do("POST", "/v1/tasks/"+tid+"/evidence", key, map[string]any{"evidenceId": obj(t, rec)["id"]}), "evidenceId")
}

func TestSOA(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	a, b := e.org("A", app.PlanProfessional), e.org("B", app.PlanProfessional)
	ka, kb, aud := e.key(a, app.RoleAdmin), e.key(b, app.RoleAdmin), e.key(a, app.RoleAuditor)
	wantField(t, e.do("GET", "/v1/soa", ka, nil), "frameworkId") // not enabled yet
	e.enable(ka, "iso27001-2022")
	rec := e.do("GET", "/v1/soa?perPage=200", ka, nil)
	entries := list(t, rec)
	if len(entries) != 93 {
		t.Fatalf("%d SOA entries, want the 93 Annex A controls", len(entries))
	}
	first := entries[0]
	if first["ref"] != "A.5.1" || first["applicable"] != true || len(first["controls"].([]any)) != 1 {
		t.Fatalf("entry: %v", first)
	}
	rid := entries[10]["requirementId"].(string)
	before := obj(t, e.do("GET", "/v1/frameworks/iso27001-2022", ka, nil))["counts"].(map[string]any)["requirements"].(map[string]any)["notApplicable"].(float64)
	wantField(t, e.do("PATCH", "/v1/soa/"+rid, ka, map[string]any{"applicable": false}), "justification")
	rec = e.do("PATCH", "/v1/soa/"+rid, ka, map[string]any{"applicable": false, "justification": "No physical office; all staff remote"})
	wantStatus(t, rec, http.StatusOK)
	if en := obj(t, rec); en["applicable"] != false || en["justification"] == nil {
		t.Fatalf("excluded: %v", en)
	}
	after := obj(t, e.do("GET", "/v1/frameworks/iso27001-2022", ka, nil))["counts"].(map[string]any)["requirements"].(map[string]any)["notApplicable"].(float64)
	if after != before+1 {
		t.Fatalf("exclusion does not count as not applicable: %v -> %v", before, after)
	}
	wantStatus(t, e.do("GET", "/v1/soa/"+rid, aud, nil), http.StatusOK)
	wantError(t, e.do("PATCH", "/v1/soa/"+rid, aud, map[string]any{"applicable": true}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/soa/"+rid, kb, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("PATCH", "/v1/soa/"+rid, kb, map[string]any{"applicable": true}), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/soa/req_nope", ka, nil), http.StatusNotFound, "not_found")
	wantField(t, e.do("GET", "/v1/soa?frameworkId=soc2-2017", ka, nil), "frameworkId")
	// CSV export.
	rec = e.do("GET", "/v1/soa/export?format=csv", aud, nil)
	wantStatus(t, rec, http.StatusOK)
	rows, err := csv.NewReader(bytes.NewReader(rec.Body.Bytes())).ReadAll()
	if err != nil || len(rows) != 94 || rows[0][2] != "applicable" {
		t.Fatalf("csv: %d rows, %v", len(rows), err)
	}
	found := false
	for _, r := range rows {
		found = found || (r[2] == "no" && strings.Contains(r[3], "remote"))
	}
	if !found {
		t.Fatal("csv lacks the exclusion and its justification")
	}
	// PDF export.
	rec = e.do("GET", "/v1/soa/export?format=pdf", ka, nil)
	wantStatus(t, rec, http.StatusOK)
	if rec.Header().Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(rec.Body.Bytes(), []byte("%PDF-")) || rec.Body.Len() < 2000 {
		t.Fatalf("pdf: %s, %d bytes", rec.Header().Get("Content-Type"), rec.Body.Len())
	}
	wantField(t, e.do("GET", "/v1/soa/export?format=docx", ka, nil), "format")
	wantField(t, e.do("GET", "/v1/soa/export", kb, nil), "frameworkId")
	// ISO 42001 once enabled.
	e.enable(ka, "iso42001-2023")
	if n := total(t, e.do("GET", "/v1/soa?frameworkId=iso42001-2023", ka, nil)); n != 38 {
		t.Fatalf("ISO 42001 SOA has %d entries, want 38", n)
	}
}

func TestCustomFrameworksAndTemplates(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	a, b := e.org("A", app.PlanProfessional), e.org("B", app.PlanProfessional)
	ka, kb, aud := e.key(a, app.RoleAdmin), e.key(b, app.RoleAdmin), e.key(a, app.RoleAuditor)
	e.enable(ka, "iso27001-2022")
	isoCtl := list(t, e.do("GET", "/v1/controls?perPage=1", ka, nil))[0]["id"].(string)
	wantField(t, e.do("POST", "/v1/frameworks", ka, map[string]any{}), "name")
	wantField(t, e.do("POST", "/v1/frameworks", ka, map[string]any{"name": "X", "slug": "soc2-2017"}), "slug")
	wantError(t, e.do("POST", "/v1/frameworks", aud, map[string]any{"name": "X"}), http.StatusForbidden, "forbidden")
	rec := e.do("POST", "/v1/frameworks", ka, map[string]any{"name": "Internal Security Baseline", "version": "1", "id": "frk_mine"})
	wantStatus(t, rec, http.StatusCreated)
	fw := obj(t, rec)
	fid := fw["id"].(string)
	if fw["custom"] != true || fw["slug"] != "custom-internal-security-baseline" || fid == "frk_mine" {
		t.Fatalf("custom: %v", fw)
	}
	rec = e.do("PATCH", "/v1/frameworks/"+fid, ka, map[string]any{"description": "Our baseline"})
	wantStatus(t, rec, http.StatusOK)
	wantError(t, e.do("PATCH", "/v1/frameworks/iso27001-2022", ka, map[string]any{"name": "x"}), http.StatusConflict, "conflict")
	// Requirements: one mapped to an existing ISO control, one to be created at enable.
	rec = e.do("POST", "/v1/frameworks/"+fid+"/requirements", ka, map[string]any{"ref": "ISB-1", "title": "MFA everywhere", "controlIds": []string{isoCtl}})
	wantStatus(t, rec, http.StatusCreated)
	r1 := obj(t, rec)
	rec = e.do("POST", "/v1/frameworks/"+fid+"/requirements", ka, map[string]any{"ref": "ISB-2", "title": "Laptop encryption"})
	wantStatus(t, rec, http.StatusCreated)
	r2 := obj(t, rec)["id"].(string)
	wantField(t, e.do("POST", "/v1/frameworks/"+fid+"/requirements", ka, map[string]any{"ref": "ISB-1", "title": "dup"}), "ref")
	wantField(t, e.do("POST", "/v1/frameworks/"+fid+"/requirements", ka, map[string]any{"ref": "ISB-3", "title": "x", "parentRef": "nope"}), "parentRef")
	wantField(t, e.do("POST", "/v1/frameworks/"+fid+"/requirements", ka, map[string]any{"ref": "ISB-3", "title": "x", "controlIds": []string{"ctl_nope"}}), "controlIds")
	wantError(t, e.do("POST", "/v1/frameworks/soc2-2017/requirements", ka, map[string]any{"ref": "X", "title": "x"}), http.StatusConflict, "conflict")
	// Template for ISB-2, instantiated at enable.
	wantField(t, e.do("POST", "/v1/framework-editor/task-template", ka, map[string]any{"name": "x", "frameworkId": fid}), "requirementId")
	wantField(t, e.do("POST", "/v1/framework-editor/task-template", ka, map[string]any{"name": "x", "frameworkId": fid, "requirementId": r2, "frequency": "daily"}), "frequency")
	rec = e.do("POST", "/v1/framework-editor/task-template", ka, map[string]any{"name": "Export encryption report", "frameworkId": fid, "requirementId": r2, "frequency": "quarterly", "department": "it"})
	wantStatus(t, rec, http.StatusCreated)
	tpl := obj(t, rec)["id"].(string)
	wantStatus(t, e.do("PATCH", "/v1/framework-editor/task-template/"+tpl, ka, map[string]any{"description": "From the MDM"}), http.StatusOK)
	if n := total(t, e.do("GET", "/v1/framework-editor/task-template?frameworkId="+fid, ka, nil)); n != 1 {
		t.Fatalf("templates: %d", n)
	}
	res := e.enable(ka, fid)
	if res["controlsCreated"].(float64) != 1 || res["tasksCreated"].(float64) != 1 {
		t.Fatalf("enable custom: %v", res)
	}
	tasks := list(t, e.do("GET", "/v1/tasks", ka, nil))
	if len(tasks) != 1 || tasks[0]["templateId"] != tpl || tasks[0]["recurrence"] != "quarterly" || tasks[0]["controlId"] == nil {
		t.Fatalf("template task: %v", tasks)
	}
	// The ISO control now also serves the custom requirement.
	c := obj(t, e.do("GET", "/v1/controls/"+isoCtl, ka, nil))
	fws := map[string]bool{}
	for _, r := range c["requirements"].([]any) {
		fws[r.(map[string]any)["frameworkId"].(string)] = true
	}
	if !fws[fid] || len(fws) != 2 {
		t.Fatalf("shared control requirements: %v", c["requirements"])
	}
	// Map ISB-2 to the ISO control as well.
	rec = e.do("POST", "/v1/frameworks/"+fid+"/requirements/"+r2+"/controls", ka, map[string]any{"controlIds": []string{isoCtl}})
	wantStatus(t, rec, http.StatusOK)
	if len(obj(t, rec)["controlIds"].([]any)) != 2 {
		t.Fatalf("mapped: %s", rec.Body.String())
	}
	wantField(t, e.do("POST", "/v1/frameworks/"+fid+"/requirements/"+r2+"/controls", ka, map[string]any{"controlIds": []string{}}), "controlIds")
	if f := obj(t, e.do("GET", "/v1/frameworks/"+fid, ka, nil)); f["score"] == nil || f["counts"].(map[string]any)["requirements"].(map[string]any)["total"].(float64) != 2 {
		t.Fatalf("custom framework view: %v", f)
	}
	_ = r1
	// Outline frameworks take added requirements.
	rec = e.do("POST", "/v1/frameworks/bafin-marisk/requirements", ka, map[string]any{"ref": "AT 7.2 Tz. 2", "parentRef": "AT 7", "title": "IT-Systeme: Berechtigungskonzept"})
	wantStatus(t, rec, http.StatusCreated)
	// Another organization sees none of it.
	for _, p := range []string{"/v1/frameworks/" + fid, "/v1/frameworks/" + fid + "/requirements", "/v1/framework-editor/task-template/" + tpl} {
		wantError(t, e.do("GET", p, kb, nil), http.StatusNotFound, "not_found")
	}
	wantError(t, e.do("GET", "/v1/frameworks/"+fid+"/requirements/"+r2, kb, nil), http.StatusNotFound, "not_found")
	if n := total(t, e.do("GET", "/v1/framework-editor/task-template", kb, nil)); n != 0 {
		t.Fatalf("org B lists %d templates", n)
	}
	// Another organization's control cannot be mapped.
	e.enable(kb, "iso9001-2015")
	bCtl := list(t, e.do("GET", "/v1/controls?perPage=1", kb, nil))[0]["id"].(string)
	wantField(t, e.do("POST", "/v1/frameworks/"+fid+"/requirements/"+r2+"/controls", ka, map[string]any{"controlIds": []string{bCtl}}), "controlIds")
	wantField(t, e.do("POST", "/v1/tasks", ka, map[string]any{"title": "x", "controlId": bCtl}), "controlId")
	wantError(t, e.do("POST", "/v1/frameworks/"+fid+"/enable", kb, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("PATCH", "/v1/frameworks/"+fid, kb, map[string]any{"name": "x"}), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/frameworks/"+fid+"/requirements", kb, map[string]any{"ref": "x", "title": "x"}), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/frameworks/"+fid+"/requirements/"+r2+"/controls", kb, map[string]any{"controlIds": []string{"x"}}), http.StatusNotFound, "not_found")
	wantError(t, e.do("PATCH", "/v1/framework-editor/task-template/"+tpl, kb, map[string]any{"name": "x"}), http.StatusNotFound, "not_found")
	wantError(t, e.do("DELETE", "/v1/framework-editor/task-template/"+tpl, kb, nil), http.StatusNotFound, "not_found")
	if n := total(t, e.do("GET", "/v1/frameworks", kb, nil)); n != 16 {
		t.Fatalf("org B lists %d frameworks", n)
	}
	wantError(t, e.do("DELETE", "/v1/framework-editor/task-template/"+tpl, aud, nil), http.StatusForbidden, "forbidden")
	wantStatus(t, e.do("DELETE", "/v1/framework-editor/task-template/"+tpl, ka, nil), http.StatusNoContent)
}

func TestEmployeeSeesOwnControls(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("A", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	ctls := list(t, func() *httptest.ResponseRecorder {
		e.enable(admin, "iso9001-2015")
		return e.do("GET", "/v1/controls?perPage=2", admin, nil)
	}())
	emp := e.person(org, "emp@a.test", app.RoleEmployee)
	k, err := e.app.CreateAPIKey(app.WithPrincipal(e.ctx(org), &app.Principal{OrgID: org, Role: app.RoleOwner, AuthType: app.AuthSystem, UserID: emp}),
		app.APIKeyCreate{Name: "emp", Role: "employee"})
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := ctls[0]["id"].(string), ctls[1]["id"].(string)
	wantStatus(t, e.do("PATCH", "/v1/controls/"+mine, admin, map[string]any{"ownerId": emp}), http.StatusOK)
	if got := list(t, e.do("GET", "/v1/controls", k.Key, nil)); len(got) != 1 || got[0]["id"] != mine {
		t.Fatalf("employee controls: %v", got)
	}
	wantStatus(t, e.do("GET", "/v1/controls/"+mine, k.Key, nil), http.StatusOK)
	wantError(t, e.do("GET", "/v1/controls/"+theirs, k.Key, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/controls/"+theirs+"/evidence", k.Key, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("PATCH", "/v1/controls/"+mine, k.Key, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/soa", k.Key, nil), http.StatusForbidden, "forbidden")
}
