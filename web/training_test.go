package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// personKey creates a person and an API key of their role acting for them.
func (e *testEnv) personKey(orgID, email string, role app.Role) (id, key string) {
	e.t.Helper()
	id = e.person(orgID, email, role)
	ctx := app.WithPrincipal(context.Background(), &app.Principal{OrgID: orgID, Role: app.RoleOwner, AuthType: app.AuthSession, UserID: id})
	k, err := e.app.CreateAPIKey(ctx, app.APIKeyCreate{Name: "key of " + email, Role: string(role)})
	if err != nil {
		e.t.Fatal(err)
	}
	return id, k.Key
}

// rightAnswers returns the answer key of a built-in module as a submission.
func rightAnswers(t *testing.T, moduleID string, wrong int) map[string]any {
	t.Helper()
	mods, err := app.BuiltinTrainingModules()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		if m.ID != moduleID {
			continue
		}
		var answers []map[string]any
		for i, q := range m.Quiz {
			c := q.Answer
			if i < wrong {
				c = (q.Answer + 1) % len(q.Choices)
			}
			answers = append(answers, map[string]any{"questionId": q.ID, "choice": c})
		}
		return map[string]any{"version": m.Version, "answers": answers}
	}
	t.Fatalf("no module %s", moduleID)
	return nil
}

func TestTrainingQuizCertificateAndVerification(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	adaID, ada := e.personKey(org, "ada@example.com", app.RoleEmployee)
	bobID, bob := e.personKey(org, "bob@example.com", app.RoleEmployee)

	rec := e.do("POST", "/v1/training/assignments", admin, map[string]any{"moduleId": "security-awareness", "target": "everyone", "required": true, "dueInDays": 14})
	wantStatus(t, rec, http.StatusCreated)
	if got := obj(t, rec); got["assigned"] != float64(2) {
		t.Fatalf("assigned: %v", got)
	}
	// The module reader never shows the answer key.
	rec = e.do("GET", "/v1/training/modules/security-awareness", ada, nil)
	wantStatus(t, rec, http.StatusOK)
	if strings.Contains(rec.Body.String(), `"answer"`) {
		t.Fatal("the module leaks its answer key")
	}
	path := "/v1/training/completions/security-awareness/answers"
	// Answers for another version, or for another module's questions: 400.
	body := rightAnswers(t, "security-awareness", 0)
	body["version"] = 2
	wantField(t, e.do("POST", path, ada, body), "version")
	wantField(t, e.do("POST", path, ada, rightAnswers(t, "phishing-social-engineering", 0)), "answers[0].questionId")
	half := rightAnswers(t, "security-awareness", 0)
	half["answers"] = half["answers"].([]map[string]any)[:2]
	wantField(t, e.do("POST", path, ada, half), "answers")
	// A wrong pass is a failed attempt on record; a retry can pass.
	rec = e.do("POST", path, ada, rightAnswers(t, "security-awareness", 3))
	wantStatus(t, rec, http.StatusCreated)
	if got := obj(t, rec); got["status"] != "failed" || got["verificationCode"] != nil || got["score"] != float64(40) {
		t.Fatalf("failed attempt: %v", got)
	}
	rec = e.do("POST", path, ada, rightAnswers(t, "security-awareness", 0))
	wantStatus(t, rec, http.StatusCreated)
	passed := obj(t, rec)
	code, _ := passed["verificationCode"].(string)
	if passed["status"] != "passed" || len(code) < 30 {
		t.Fatalf("pass: %v", passed)
	}
	// An acknowledgement is for upload modules only.
	wantField(t, e.do("POST", "/v1/training/completions/security-awareness/complete", ada, nil), "videoId")

	// Employees see only their own attempts; admins see everyone's.
	if got := list(t, e.do("GET", "/v1/training/completions", ada, nil)); len(got) != 2 {
		t.Fatalf("ada's attempts: %d", len(got))
	}
	if got := list(t, e.do("GET", "/v1/training/completions", bob, nil)); len(got) != 0 {
		t.Fatalf("bob sees %d attempts", len(got))
	}
	if got := list(t, e.do("GET", "/v1/training/completions?personId="+adaID, bob, nil)); len(got) != 0 {
		t.Fatalf("bob sees ada's attempts: %d", len(got))
	}
	wantError(t, e.do("GET", "/v1/training/completions/"+passed["id"].(string), bob, nil), http.StatusNotFound, "not_found")
	if got := list(t, e.do("GET", "/v1/training/completions?status=passed", admin, nil)); len(got) != 1 {
		t.Fatalf("admin's passed list: %d", len(got))
	}
	wantField(t, e.do("GET", "/v1/training/completions?status=great", admin, nil), "status")
	if got := list(t, e.do("GET", "/v1/training/assignments?status=completed", admin, nil)); len(got) != 1 || got[0]["personId"] != adaID {
		t.Fatalf("completed assignments: %v", got)
	}

	// The certificate.
	rec = e.do("GET", "/v1/training/completions/"+passed["id"].(string)+"/certificate", ada, nil)
	wantStatus(t, rec, http.StatusOK)
	pdf := rec.Body.String()
	if !strings.HasPrefix(pdf, "%PDF") || !strings.Contains(pdf, "ada@example.com") || !strings.Contains(pdf, code) {
		t.Fatalf("certificate: %d bytes, header %q", len(pdf), pdf[:min(8, len(pdf))])
	}
	rec = e.do("POST", "/v1/training/generate-certificate", admin, map[string]any{"memberId": adaID})
	wantStatus(t, rec, http.StatusOK)
	if !strings.HasPrefix(rec.Body.String(), "%PDF") {
		t.Fatal("generate-certificate is not a PDF")
	}
	wantError(t, e.do("POST", "/v1/training/generate-certificate", admin, map[string]any{"memberId": bobID}), http.StatusNotFound, "not_found")
	wantField(t, e.do("POST", "/v1/training/generate-certificate", admin, map[string]any{}), "memberId")

	// The public verification page: no account, a valid and an invalid code.
	rec = e.do("GET", "/verify/training/"+code, "", nil)
	wantStatus(t, rec, http.StatusOK)
	if b := rec.Body.String(); !strings.Contains(b, "ada@example.com") || !strings.Contains(b, "Security awareness essentials") || !strings.Contains(b, "Acme") {
		t.Fatalf("verification page: %s", b)
	}
	rec = e.do("GET", "/verify/training/"+strings.Repeat("a", 32), "", nil)
	wantStatus(t, rec, http.StatusNotFound)
	if b := rec.Body.String(); !strings.Contains(b, "not found") || strings.Contains(b, "ada@example.com") {
		t.Fatalf("unknown code page: %s", b)
	}

	// Another organization: 404 on every id; auditors read, never write.
	other := e.key(e.org("Other", app.PlanProfessional), app.RoleOwner)
	for _, p := range []string{"/v1/training/completions/" + passed["id"].(string), "/v1/training/completions/" + passed["id"].(string) + "/certificate", "/v1/people/" + adaID + "/work"} {
		wantError(t, e.do("GET", p, other, nil), http.StatusNotFound, "not_found")
	}
	auditor := e.key(org, app.RoleAuditor)
	wantStatus(t, e.do("GET", "/v1/training/overview", auditor, nil), http.StatusOK)
	wantError(t, e.do("POST", "/v1/training/assignments", auditor, map[string]any{"moduleId": "ai-literacy", "target": "everyone"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/training/modules", auditor, map[string]any{"title": "x"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/training/overview", bob, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/training/assignments", bob, map[string]any{"moduleId": "ai-literacy", "target": "everyone"}), http.StatusForbidden, "forbidden")
}

func TestTrainingAssignmentValidationAndIdempotency(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	ada := e.person(org, "ada@example.com", app.RoleEmployee)
	wantField(t, e.do("POST", "/v1/training/assignments", admin, map[string]any{"target": "everyone"}), "moduleId")
	wantField(t, e.do("POST", "/v1/training/assignments", admin, map[string]any{"moduleId": "nope", "target": "everyone"}), "moduleId")
	wantField(t, e.do("POST", "/v1/training/assignments", admin, map[string]any{"moduleId": "ai-literacy", "target": "all"}), "target")
	wantField(t, e.do("POST", "/v1/training/assignments", admin, map[string]any{"moduleId": "ai-literacy", "target": "role", "role": "boss"}), "role")
	wantField(t, e.do("POST", "/v1/training/assignments", admin, map[string]any{"moduleId": "ai-literacy", "target": "people", "personIds": []string{"usr_x"}}), "personIds[0]")
	wantField(t, e.do("POST", "/v1/training/assignments", admin, map[string]any{"moduleId": "ai-literacy", "target": "people", "personIds": []string{ada}, "dueDate": "soon"}), "dueDate")
	wantField(t, e.do("POST", "/v1/training/assignments", admin, "{"), "body")

	body := map[string]any{"moduleId": "ai-literacy", "target": "people", "personIds": []string{ada}, "dueDate": "2026-02-01"}
	r1 := e.do("POST", "/v1/training/assignments", admin, body, "Idempotency-Key", "assign-1")
	r2 := e.do("POST", "/v1/training/assignments", admin, body, "Idempotency-Key", "assign-1")
	wantStatus(t, r1, http.StatusCreated)
	if r2.Code != http.StatusCreated || r2.Header().Get("Idempotent-Replayed") != "true" || r1.Body.String() != r2.Body.String() {
		t.Fatalf("replay: %d %q", r2.Code, r2.Header().Get("Idempotent-Replayed"))
	}
	rec := e.do("POST", "/v1/training/assignments", admin, body)
	if got := obj(t, rec); got["assigned"] != float64(0) || got["alreadyAssigned"] != float64(1) {
		t.Fatalf("second assignment: %v", got)
	}

	// An organization's own module: validation names the field.
	wantField(t, e.do("POST", "/v1/training/modules", admin, map[string]any{"passMark": 80}), "title")
	bad := map[string]any{"title": "Clean desk", "passMark": 80, "sections": []map[string]any{{"title": "Why", "body": "Because."}},
		"quiz": []map[string]any{{"question": "Clean?", "choices": []string{"Yes", "No"}, "answer": 5}}}
	wantField(t, e.do("POST", "/v1/training/modules", admin, bad), "quiz[0].answer")
	bad["quiz"] = []map[string]any{{"question": "Clean?", "choices": []string{"Yes", "No"}, "answer": 0}}
	rec = e.do("POST", "/v1/training/modules", admin, bad)
	wantStatus(t, rec, http.StatusCreated)
	mod := obj(t, rec)
	if mod["kind"] != "text" || mod["builtin"] != false || strings.Contains(rec.Body.String(), `"answer"`) {
		t.Fatalf("custom module: %s", rec.Body.String())
	}
	if got := list(t, e.do("GET", "/v1/training/modules?perPage=200", admin, nil)); len(got) != 9 {
		t.Fatalf("modules: %d", len(got))
	}
	// An uploaded PDF is acknowledged, not quizzed.
	rec = e.uploadField("/v1/training/modules", admin, "file", "code-of-conduct.pdf", []byte("%PDF-1.4 conduct"), "title", "Code of conduct")
	wantStatus(t, rec, http.StatusCreated)
	pdfMod := obj(t, rec)["id"].(string)
	_, adaKey := e.personKey(org, "ada2@example.com", app.RoleEmployee)
	rec = e.do("POST", "/v1/training/completions/"+pdfMod+"/complete", adaKey, nil)
	wantStatus(t, rec, http.StatusOK)
	if got := obj(t, rec); got["status"] != "acknowledged" || got["verificationCode"] == nil {
		t.Fatalf("acknowledgement: %v", got)
	}
	rec = e.do("GET", "/v1/training/modules/"+pdfMod+"/file", adaKey, nil)
	if rec.Code != http.StatusOK || rec.Body.String() != "%PDF-1.4 conduct" {
		t.Fatalf("file: %d %q", rec.Code, rec.Body.String())
	}
	wantField(t, e.do("POST", "/v1/training/completions/"+pdfMod+"/answers", adaKey, map[string]any{"version": 1, "answers": []any{}}), "answers")
	// A key acting for no person cannot take training.
	wantError(t, e.do("POST", "/v1/training/completions/"+pdfMod+"/complete", admin, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/me/work", admin, nil), http.StatusForbidden, "forbidden")
}

// TestTrainingScheduleRemindsRenewsAndAssignsNewPeople drives the
// scheduler job on the fake clock: a reminder within 7 days of the due
// date, overdue the day after it, the yearly renewal 30 days before a
// completion lapses, and required modules for people who join later.
func TestTrainingScheduleRemindsRenewsAndAssignsNewPeople(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	adaID, ada := e.personKey(org, "ada@example.com", app.RoleEmployee)
	e.person(org, "carl@example.com", app.RoleContractor)
	rec := e.do("POST", "/v1/training/assignments", admin, map[string]any{"moduleId": "phishing-social-engineering", "target": "role", "role": "employee", "required": true, "dueInDays": 10})
	wantStatus(t, rec, http.StatusCreated)
	if got := obj(t, rec); got["assigned"] != float64(1) {
		t.Fatalf("role assignment: %v", got)
	}
	run := func() int {
		n, err := e.app.RunTrainingSchedule(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	assignment := func() map[string]any {
		got := list(t, e.do("GET", "/v1/training/assignments?personId="+adaID, admin, nil))
		if len(got) != 1 {
			t.Fatalf("assignments: %v", got)
		}
		return got[0]
	}
	if n := run(); n != 0 {
		t.Fatalf("nothing is due yet, job changed %d", n)
	}
	e.clock.Advance(4 * 24 * time.Hour)
	if n := run(); n != 1 || assignment()["remindedAt"] == nil {
		t.Fatalf("reminder: %d %v", n, assignment())
	}
	if n := run(); n != 0 {
		t.Fatalf("a second reminder within the week: %d", n)
	}
	e.clock.Advance(7 * 24 * time.Hour)
	run()
	if a := assignment(); a["status"] != "overdue" {
		t.Fatalf("overdue: %v", a)
	}
	rec = e.do("GET", "/v1/me/work", ada, nil)
	wantStatus(t, rec, http.StatusOK)
	if w := obj(t, rec); w["trainingProgress"].(map[string]any)["overdue"] != float64(1) {
		t.Fatalf("my work: %v", w)
	}
	wantStatus(t, e.do("POST", "/v1/training/completions/phishing-social-engineering/answers", ada, rightAnswers(t, "phishing-social-engineering", 0)), http.StatusCreated)
	if a := assignment(); a["status"] != "completed" {
		t.Fatalf("completed: %v", a)
	}
	e.clock.Advance(334 * 24 * time.Hour)
	run()
	if a := assignment(); a["status"] != "completed" {
		t.Fatalf("renewed too early: %v", a)
	}
	e.clock.Advance(2 * 24 * time.Hour)
	run()
	if a := assignment(); a["status"] != "assigned" || a["source"] != "renewal" || a["completedAt"] != nil {
		t.Fatalf("renewal: %v", a)
	}
	// A person joining later gets the required module; other roles do not.
	newID := e.person(org, "dana@example.com", app.RoleEmployee)
	got := list(t, e.do("GET", "/v1/training/assignments?personId="+newID, admin, nil))
	if len(got) != 1 || got[0]["source"] != "joined" || got[0]["moduleId"] != "phishing-social-engineering" || got[0]["required"] != true {
		t.Fatalf("new person's assignments: %v", got)
	}
	cID := e.person(org, "erin@example.com", app.RoleContractor)
	if got := list(t, e.do("GET", "/v1/training/assignments?personId="+cID, admin, nil)); len(got) != 0 {
		t.Fatalf("contractor got %v", got)
	}
}

// TestTrainingEvidenceMovesControlAndScore: completions of a required
// module become evidence on the mapped ISO 27001 control, the control
// becomes implemented once everyone assigned has completed, and the
// framework score rises.
func TestTrainingEvidenceMovesControlAndScore(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	wantStatus(t, e.do("POST", "/v1/frameworks/iso27001-2022/enable", admin, nil), http.StatusOK)
	_, ada := e.personKey(org, "ada@example.com", app.RoleEmployee)
	_, bob := e.personKey(org, "bob@example.com", app.RoleEmployee)
	reqID, ok := app.ResolveTrainingControl(app.TrainingControlRef{Framework: "iso27001-2022", Ref: "A.6.3"})
	if !ok {
		t.Fatal("A.6.3 does not resolve")
	}
	links, err := e.db.OrgRequirementControls(e.ctx(org), org)
	if err != nil || len(links[reqID]) == 0 {
		t.Fatalf("no control serves A.6.3: %v", err)
	}
	controlID := links[reqID][0]
	score := func() int {
		s, _, err := e.app.FrameworkScore(e.ctx(org), "iso27001-2022")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	status := func() string {
		c, err := e.app.GetControl(e.ctx(org), controlID)
		if err != nil {
			t.Fatal(err)
		}
		return c.Status
	}
	before := score()
	wantStatus(t, e.do("POST", "/v1/training/assignments", admin, map[string]any{"moduleId": "security-awareness", "target": "role", "role": "employee", "required": true}), http.StatusCreated)
	wantStatus(t, e.do("POST", "/v1/training/completions/security-awareness/answers", ada, rightAnswers(t, "security-awareness", 0)), http.StatusCreated)
	if s := status(); s != app.ControlInProgress {
		t.Fatalf("after one of two completions: %s", s)
	}
	ev := list(t, e.do("GET", "/v1/controls/"+controlID+"/evidence", admin, nil))
	if len(ev) != 1 || ev[0]["expiresAt"] == nil || !strings.Contains(fmt.Sprint(ev[0]["description"]), "1 of 2") {
		t.Fatalf("evidence: %v", ev)
	}
	wantStatus(t, e.do("POST", "/v1/training/completions/security-awareness/answers", bob, rightAnswers(t, "security-awareness", 0)), http.StatusCreated)
	if s := status(); s != app.ControlImplemented {
		t.Fatalf("after everyone completed: %s", s)
	}
	ev = list(t, e.do("GET", "/v1/controls/"+controlID+"/evidence", admin, nil))
	if len(ev) != 1 || !strings.Contains(fmt.Sprint(ev[0]["description"]), "2 of 2") {
		t.Fatalf("evidence replaced: %v", ev)
	}
	rec := e.do("GET", "/v1/evidence/"+ev[0]["id"].(string)+"/download", admin, nil)
	if rec.Code == http.StatusOK && !strings.Contains(rec.Body.String(), "bob@example.com") {
		t.Fatalf("summary lacks a completer: %s", rec.Body.String())
	}
	if after := score(); after <= before {
		t.Fatalf("score %d -> %d", before, after)
	}
	// A year on, the evidence has lapsed: the control leaves implemented.
	e.clock.Advance(366 * 24 * time.Hour)
	if err := e.app.ScanEvidenceExpiry(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := status(); s == app.ControlImplemented {
		t.Fatalf("after a year: %s", s)
	}
}

// TestMyWorkPerRole: each person sees their own policies to acknowledge,
// training, open tasks and devices; admins see the same per person;
// employees cannot look at someone else's.
func TestMyWorkPerRole(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	adaID, ada := e.personKey(org, "ada@example.com", app.RoleEmployee)
	bobID, bob := e.personKey(org, "bob@example.com", app.RoleEmployee)
	pol := sweepID(e, e.do("POST", "/v1/policies", admin, map[string]any{"name": "Acceptable use", "content": "Be good."}), "policy")
	wantStatus(t, e.do("POST", "/v1/policies/"+pol+"/publish", admin, map[string]any{"changelog": "first"}), http.StatusCreated)
	wantStatus(t, e.do("POST", "/v1/tasks", admin, map[string]any{"title": "Review access", "assigneeId": adaID}), http.StatusCreated)
	if _, err := e.app.LinkDevice(e.ctx(org), adaID, app.DeviceLink{Name: "Ada's laptop", Hostname: "ada-1", Platform: "macos"}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("POST", "/v1/training/assignments", admin, map[string]any{"moduleId": "ai-literacy", "target": "people", "personIds": []string{adaID}}), http.StatusCreated)

	check := func(rec map[string]any, policies, training, tasks, devices int) {
		t.Helper()
		n := func(k string) int { return len(rec[k].([]any)) }
		if n("policies") != policies || n("training") != training || n("tasks") != tasks || n("devices") != devices || rec["mailConfigured"] != false {
			t.Fatalf("work: %v", rec)
		}
	}
	rec := e.do("GET", "/v1/me/work", ada, nil)
	wantStatus(t, rec, http.StatusOK)
	check(obj(t, rec), 1, 1, 1, 1)
	rec = e.do("GET", "/v1/me/work", bob, nil)
	wantStatus(t, rec, http.StatusOK)
	check(obj(t, rec), 1, 0, 0, 0)
	rec = e.do("GET", "/v1/people/"+adaID+"/work", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	check(obj(t, rec), 1, 1, 1, 1)
	wantError(t, e.do("GET", "/v1/people/"+adaID+"/work", bob, nil), http.StatusNotFound, "not_found")
	wantStatus(t, e.do("GET", "/v1/people/"+bobID+"/work", bob, nil), http.StatusOK)
	// Acknowledging the policy takes it off the list.
	wantStatus(t, e.do("POST", "/v1/policies/"+pol+"/acknowledge", ada, nil), http.StatusCreated)
	check(obj(t, e.do("GET", "/v1/me/work", ada, nil)), 0, 1, 1, 1)
}

// TestTrainingMCPTool: list_training_status gives an auditor the rates
// and every assignment, an employee only their own, and another
// organization nothing of them.
func TestTrainingMCPTool(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	adaID, ada := e.personKey(org, "ada@example.com", app.RoleEmployee)
	e.person(org, "bob@example.com", app.RoleEmployee)
	wantStatus(t, e.do("POST", "/v1/training/assignments", admin, map[string]any{"moduleId": "incident-reporting", "target": "everyone"}), http.StatusCreated)
	cs := mcpSession(t, e, http.Header{"X-Api-Key": {e.key(org, app.RoleAuditor)}})
	out, isErr := callTool(t, cs, "list_training_status", map[string]any{})
	if isErr || len(out["data"].([]any)) != 2 || len(out["modules"].([]any)) != 1 {
		t.Fatalf("auditor: %v", out)
	}
	cs = mcpSession(t, e, http.Header{"X-Api-Key": {ada}})
	out, isErr = callTool(t, cs, "list_training_status", map[string]any{})
	if isErr || len(out["data"].([]any)) != 1 || len(out["modules"].([]any)) != 0 || out["data"].([]any)[0].(map[string]any)["personId"] != adaID {
		t.Fatalf("employee: %v", out)
	}
	other := mcpSession(t, e, http.Header{"X-Api-Key": {e.key(e.org("Globex", app.PlanProfessional), app.RoleOwner)}})
	out, isErr = callTool(t, other, "list_training_status", map[string]any{"personId": adaID})
	if isErr || len(out["data"].([]any)) != 0 {
		t.Fatalf("another organization: %v", out)
	}
}
