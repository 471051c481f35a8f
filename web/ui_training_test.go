package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestUITrainingFlow walks the pages without script: an admin assigns a
// required module, the employee reads it, fails then passes the quiz form,
// sees the result and downloads the certificate; "my work" shows the
// training; the admin sees the completion chart and the person's work;
// the auditor sees the chart without the assign form.
func TestUITrainingFlow(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")

	admin := e.browser()
	admin.signIn(f.admin)
	wantBody(t, admin.get("/training"), "Assign a module", "Security awareness essentials", "AI literacy")
	wantRedirect(t, admin.post("/training/assign", url.Values{"moduleId": {"security-awareness"}, "target": {"role"}, "role": {"employee"},
		"dueInDays": {"14"}, "required": {"on"}}), "/training")
	rec := admin.post("/training/assign", url.Values{"moduleId": {"security-awareness"}, "target": {"role"}, "role": {"boss"}})
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("bad role: %d", rec.Code)
	}

	emp := e.browser()
	emp.signIn(f.employee)
	wantBody(t, emp.get("/my-work"), "My work", "Security awareness essentials", "0 of 1 completed", "no mailer")
	page := emp.get("/training/modules/security-awareness")
	wantBody(t, page, "Passwords and multi-factor authentication", `type="radio"`, `name="q-sa-1"`, "Submit answers")
	wantNoBody(t, page, "Assign a module")
	mods, _ := app.BuiltinTrainingModules()
	var quiz []app.TrainingQuestion
	for _, m := range mods {
		if m.ID == "security-awareness" {
			quiz = m.Quiz
		}
	}
	form := func(wrong int) url.Values {
		v := url.Values{"version": {"1"}}
		for i, q := range quiz {
			c := q.Answer
			if i < wrong {
				c = (c + 1) % len(q.Choices)
			}
			v.Add("question", q.ID)
			v.Set("q-"+q.ID, string(rune('0'+c)))
		}
		return v
	}
	failed := wantRedirect(t, emp.post("/training/modules/security-awareness/answers", form(5)), "/training/completions/")
	wantBody(t, emp.get(failed), "Not passed", "Try again")
	missing := url.Values{"version": {"1"}, "question": {"sa-1"}}
	if rec := emp.post("/training/modules/security-awareness/answers", missing); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "answer every question") {
		t.Fatalf("unanswered: %d", rec.Code)
	}
	passed := wantRedirect(t, emp.post("/training/modules/security-awareness/answers", form(0)), "/training/completions/")
	wantBody(t, emp.get(passed), "Passed with 100%", "Download the certificate", "/verify/training/")
	rec = emp.get(passed + "/certificate")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), "%PDF") {
		t.Fatalf("certificate: %d", rec.Code)
	}
	wantBody(t, emp.get("/my-work"), "1 of 1 completed")
	// The employee cannot see the overview or another person's work.
	wantNoBody(t, emp.get("/training"), "Completion by module")
	if rec := emp.get("/my-work/" + f.ownerID); rec.Code != http.StatusNotFound {
		t.Fatalf("employee on owner's work: %d", rec.Code)
	}

	wantBody(t, admin.get("/training"), "Completion by module", `data-rate="100"`, "<svg")
	wantBody(t, admin.get("/my-work/"+f.employeeID), "Security awareness essentials", "Completed")

	aud := e.browser()
	aud.signIn(f.auditor)
	page = aud.get("/training")
	wantBody(t, page, "Completion by module")
	wantNoBody(t, page, "Assign a module")
	if rec := aud.post("/training/assign", url.Values{"moduleId": {"ai-literacy"}, "target": {"everyone"}}); rec.Code != http.StatusForbidden {
		t.Fatalf("auditor assigns: %d", rec.Code)
	}

	// An admin writes a module with a quiz in the form's text format.
	rec = admin.post("/training/modules", url.Values{"title": {"Clean desk"}, "passMark": {"100"}, "body": {"Lock papers away."},
		"quiz": {"Q: Where do papers go at night?\n- On the desk\n* In a locked drawer\n"}})
	loc := wantRedirect(t, rec, "/training/modules/trm_")
	wantBody(t, admin.get(loc), "Clean desk", "Lock papers away.", "In a locked drawer")
	rec = admin.post("/training/modules", url.Values{"title": {"No quiz"}, "passMark": {"80"}, "body": {"Text."}})
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("module without quiz: %d", rec.Code)
	}
}
