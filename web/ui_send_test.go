package web

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

var sentLinkRe = regexp.MustCompile(`id="new-link" type="text" readonly value="(http://[^"]+/vendor-questionnaire/(qt_[A-Za-z0-9_-]+))"`)

// sentToken returns the vendor link's token shown on an answer page.
func sentToken(t *testing.T, rec interface{ Result() *http.Response }, body string) string {
	t.Helper()
	m := sentLinkRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no vendor link on the page: %s", body)
	}
	if loc := rec.Result().Header.Get("Location"); loc != "" {
		t.Fatalf("the answer redirects to %q", loc)
	}
	return m[2]
}

// TestUISendQuestionnaire: owners and admins send a questionnaire to a
// vendor from its page; the link is shown once on the answer page, works
// for the vendor, and the vendor's answers appear; re-sending replaces
// the link; deleting needs the confirmation; other roles and another
// organization's ids are refused.
func TestUISendQuestionnaire(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	other := e.uiFixture("Globex")
	ctx := e.ctx(f.org)
	admin := e.browser()
	admin.signIn(f.admin)

	rec := admin.get("/vendors/" + f.vendor)
	wantBody(t, rec, `id="questionnaires"`, "No questionnaire has been sent to this vendor yet", `href="/vendors/`+f.vendor+`/questionnaires/new"`)
	rec = admin.get("/vendors/" + f.vendor + "/questionnaires/new")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Send a questionnaire to Hosting GmbH", `<label for="source">`, "Vendor security baseline", `<label for="expiresInDays">`,
		`action="/vendors/`+f.vendor+`/questionnaires"`)

	// Validation errors sit next to their fields and nothing is created.
	rec = admin.post("/vendors/"+f.vendor+"/questionnaires", url.Values{"source": {"template:vendor-security-baseline"}, "expiresInDays": {"0"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="expiresInDays-error"`, `aria-describedby="expiresInDays-error"`, "from 1 to 90")
	rec = admin.post("/vendors/"+f.vendor+"/questionnaires", url.Values{"source": {"template:nope"}, "dueDate": {"someday"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="source-error"`, `id="dueDate-error"`)
	if l, _ := e.app.ListQuestionnaires(ctx, app.QuestionnaireFilter{VendorID: f.vendor, Page: app.Page{Page: 1, PerPage: 10}}); l.Total != 0 {
		t.Fatalf("a refused send created %d questionnaires", l.Total)
	}

	// Sending shows the link once, on the answer page.
	rec = admin.post("/vendors/"+f.vendor+"/questionnaires", url.Values{"source": {"template:vendor-security-baseline"},
		"name": {"Hosting review 2026"}, "dueDate": {"2026-02-15"}, "expiresInDays": {"30"}})
	wantStatus(t, rec, http.StatusCreated)
	body := rec.Body.String()
	token := sentToken(t, rec, body)
	wantBody(t, rec, "Questionnaire created and sent.", "shown only this once", "Hosting review 2026", `href="/vendors/`+f.vendor+`"`, "Sent, waiting")
	l, err := e.app.ListQuestionnaires(ctx, app.QuestionnaireFilter{VendorID: f.vendor, Page: app.Page{Page: 1, PerPage: 10}})
	if err != nil || l.Total != 1 || l.Items[0].Status != app.QuestionnaireSent || l.Items[0].SentAt == nil || strOf(l.Items[0].DueDate) != "2026-02-15" {
		t.Fatalf("sent questionnaire: %+v %v", l, err)
	}
	qid := l.Items[0].ID
	// The page opened again does not show the link.
	rec = admin.get("/questionnaires/" + qid)
	wantNoBody(t, rec, token, `id="new-link"`)
	wantBody(t, rec, "Send again with a new link", "Delete questionnaire")

	// The vendor fills it in through the link.
	rec = e.do("GET", "/vendor-questionnaire/"+token, "", nil)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Hosting review 2026", "Hosting GmbH")
	qn, err := e.app.GetQuestionnaire(ctx, qid)
	if err != nil || len(qn.Questions) == 0 {
		t.Fatalf("questionnaire: %v", err)
	}
	wantStatus(t, e.do("POST", "/v1/vendor-questionnaire/"+token, "", map[string]any{"submit": true,
		"answers": []map[string]any{{"questionId": qn.Questions[0].ID, "answer": "Yes, ISO 27001 certified.", "comment": "Certificate attached"}}}), http.StatusOK)
	rec = admin.get("/questionnaires/" + qid)
	wantBody(t, rec, "The vendor's answers", "Yes, ISO 27001 certified.", "Certificate attached", "Submitted by the vendor", "1 of ")
	wantNoBody(t, rec, "Send again with a new link")
	rec = admin.get("/vendors/" + f.vendor)
	wantBody(t, rec, `href="/questionnaires/`+qid+`"`, "Hosting review 2026", "b-submitted")
	wantBody(t, admin.get("/questionnaires"), `<a href="/vendors/`+f.vendor+`">Hosting GmbH</a>`, "Hosting review 2026")
	// An employee the vendor is assigned to sees the vendor, not its questionnaires.
	if _, err := e.app.UpdateVendor(ctx, f.vendor, app.VendorInput{AssigneeID: app.Some(f.employeeID)}); err != nil {
		t.Fatal(err)
	}
	emp := e.browser()
	emp.signIn(f.employee)
	rec = emp.get("/vendors/" + f.vendor)
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, `id="questionnaires"`, "Hosting review 2026", "Send a questionnaire")

	// An earlier questionnaire's questions go to another send.
	rec = admin.post("/vendors/"+f.vendor+"/questionnaires", url.Values{"source": {"questionnaire:" + qid}})
	wantStatus(t, rec, http.StatusCreated)
	second := sentToken(t, rec, rec.Body.String())
	l, _ = e.app.ListQuestionnaires(ctx, app.QuestionnaireFilter{VendorID: f.vendor, Status: app.QuestionnaireSent, Page: app.Page{Page: 1, PerPage: 10}})
	if l.Total != 1 || l.Items[0].Name != "Hosting review 2026" || l.Items[0].TotalQuestions != qn.TotalQuestions || l.Items[0].AnsweredQuestions != 0 {
		t.Fatalf("copied questionnaire: %+v", l)
	}
	copyID := l.Items[0].ID

	// Sending again replaces the link.
	rec = admin.post("/questionnaires/"+copyID+"/send", url.Values{"expiresInDays": {"7"}})
	wantStatus(t, rec, http.StatusOK)
	third := sentToken(t, rec, rec.Body.String())
	wantBody(t, rec, "the earlier one no longer works")
	if third == second {
		t.Fatal("sending again kept the token")
	}
	wantStatus(t, e.do("GET", "/vendor-questionnaire/"+second, "", nil), http.StatusGone)
	wantStatus(t, e.do("GET", "/vendor-questionnaire/"+third, "", nil), http.StatusOK)
	rec = admin.post("/questionnaires/"+copyID+"/send", url.Values{"expiresInDays": {"91"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="expiresInDays-error"`)

	// Other roles: the list but no actions, and refused by hand.
	for _, email := range []string{f.auditor, f.employee} {
		b := e.browser()
		b.signIn(email)
		if email == f.auditor {
			rec = b.get("/vendors/" + f.vendor)
			wantBody(t, rec, `href="/questionnaires/`+qid+`"`)
			wantNoBody(t, rec, "Send a questionnaire")
			rec = b.get("/questionnaires/" + copyID)
			wantStatus(t, rec, http.StatusOK)
			wantNoBody(t, rec, "Send again", "Delete questionnaire", `action="/questionnaires/`+copyID+`/delete"`)
		}
		wantStatus(t, b.get("/vendors/"+f.vendor+"/questionnaires/new"), http.StatusForbidden)
		rec = b.post("/vendors/"+f.vendor+"/questionnaires", url.Values{"source": {"template:vendor-security-baseline"}})
		wantStatus(t, rec, http.StatusForbidden)
		wantBody(t, rec, "Your role does not allow this")
		wantStatus(t, b.post("/questionnaires/"+copyID+"/send", nil), http.StatusForbidden)
		wantStatus(t, b.post("/questionnaires/"+copyID+"/delete", url.Values{"confirm": {"on"}}), http.StatusForbidden)
	}
	wantStatus(t, e.do("GET", "/vendor-questionnaire/"+third, "", nil), http.StatusOK)

	// Another organization's ids are 404 and nothing changes there.
	oq, err := e.app.CreateQuestionnaire(e.ctx(other.org), app.QuestionnaireCreate{TemplateID: app.Ptr("gdpr-processor"), VendorID: app.Ptr(other.vendor)})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/vendors/" + other.vendor + "/questionnaires/new", "/questionnaires/" + oq.ID} {
		rec = admin.get(path)
		wantStatus(t, rec, http.StatusNotFound)
		wantNoBody(t, rec, "Globex")
	}
	for _, path := range []string{"/vendors/" + other.vendor + "/questionnaires", "/questionnaires/" + oq.ID + "/send", "/questionnaires/" + oq.ID + "/delete"} {
		wantStatus(t, admin.post(path, url.Values{"source": {"template:gdpr-processor"}, "confirm": {"on"}}), http.StatusNotFound)
	}
	if got, err := e.app.GetQuestionnaire(e.ctx(other.org), oq.ID); err != nil || got.Status != app.QuestionnaireDraft {
		t.Fatalf("another organization's questionnaire changed: %+v %v", got, err)
	}
	// A vendor id of another organization given as the source is refused too.
	rec = admin.post("/vendors/"+f.vendor+"/questionnaires", url.Values{"source": {"questionnaire:" + oq.ID}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="source-error"`)

	// Deleting needs the box ticked; then the link stops working.
	rec = admin.post("/questionnaires/"+copyID+"/delete", nil)
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="confirm-error"`, `aria-describedby="confirm-error"`)
	if _, err := e.app.GetQuestionnaire(ctx, copyID); err != nil {
		t.Fatal("deleted without confirmation")
	}
	loc := wantRedirect(t, admin.post("/questionnaires/"+copyID+"/delete", url.Values{"confirm": {"on"}}), "/vendors/"+f.vendor+"?done=questionnaire-deleted")
	rec = admin.get(strings.SplitN(loc, "#", 2)[0]) // a browser keeps the fragment to itself
	wantBody(t, rec, "Questionnaire deleted")
	if _, err := e.app.GetQuestionnaire(ctx, copyID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	wantStatus(t, e.do("GET", "/vendor-questionnaire/"+third, "", nil), http.StatusNotFound)
	// An archived vendor is offered no send.
	if _, err := e.app.SetVendorArchived(ctx, f.vendor, true); err != nil {
		t.Fatal(err)
	}
	rec = admin.get("/vendors/" + f.vendor)
	wantNoBody(t, rec, "/questionnaires/new")
	rec = admin.post("/vendors/"+f.vendor+"/questionnaires", url.Values{"source": {"template:vendor-security-baseline"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, "active vendor")
}

func strOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
