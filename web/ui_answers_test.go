package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestUIEditAnswersAndExport: owners and admins edit a customer
// questionnaire's answers by hand (only what changed is saved, an error
// sits next to its answer), everyone who reads it downloads it with its
// answers; auditors and employees may not edit, another organization's
// questionnaire is the 404 page.
func TestUIEditAnswersAndExport(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	if _, err := e.app.CreateKBEntry(e.ctx(f.org), app.KBEntryInput{Question: app.Ptr("Do you encrypt backups?"),
		Answer: app.Ptr("Yes, every backup is encrypted with AES-256.")}); err != nil {
		t.Fatal(err)
	}
	admin := e.browser()
	admin.signIn(f.admin)
	loc := wantRedirect(t, admin.upload("/questionnaires", "review.csv", "Question\nDo you encrypt backups?\nWho is your DPO?\n",
		map[string]string{"name": "Customer review"}), "/questionnaires/qst_")
	qid := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], "/questionnaires/")
	wantStatus(t, admin.post("/questionnaires/"+qid+"/auto-answer", nil), http.StatusOK)
	qn, err := e.app.GetQuestionnaire(e.ctx(f.org), qid)
	if err != nil {
		t.Fatal(err)
	}
	backup, dpo := qn.Questions[0], qn.Questions[1]
	if backup.Status == app.AnswerManual || dpo.Answer != nil {
		t.Fatalf("after auto-answer: %+v %+v", backup, dpo)
	}

	rec := admin.get("/questionnaires/" + qid)
	wantBody(t, rec, `href="/questionnaires/`+qid+`?edit=answers#answers"`, `/export?format=xlsx"`, `/export?format=csv"`)
	rec = admin.get("/questionnaires/" + qid + "?edit=answers")
	wantBody(t, rec, `action="/questionnaires/`+qid+`/answers"`, `<label for="a_`+dpo.ID+`"`, `<label for="c_`+dpo.ID+`"`, "Save answers")

	// Too long an answer: the message sits next to that question's box and
	// nothing is saved.
	form := url.Values{"a_" + backup.ID: {*backup.Answer}, "a_" + dpo.ID: {strings.Repeat("x", 20001)}, "c_" + dpo.ID: {"ok"}}
	rec = admin.post("/questionnaires/"+qid+"/answers", form)
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="a_`+dpo.ID+`-error"`, `aria-invalid="true"`, "Nothing was saved")
	if q, _ := e.app.GetQuestionnaire(e.ctx(f.org), qid); q.Questions[1].Answer != nil || q.Questions[1].Comment != nil {
		t.Fatal("a refused save changed an answer")
	}

	// Only the changed answer is saved; the auto-answer keeps its status.
	// A fresh form each time: post adds the poster's own form token.
	form2 := func() url.Values {
		return url.Values{"a_" + backup.ID: {*backup.Answer}, "c_" + backup.ID: {""}, "a_" + dpo.ID: {"Dana Privacy, dpo@example.com"}, "c_" + dpo.ID: {"Since 2024"}}
	}
	wantRedirect(t, admin.post("/questionnaires/"+qid+"/answers", form2()), "/questionnaires/"+qid+"?done=answers-saved")
	q, err := e.app.GetQuestionnaire(e.ctx(f.org), qid)
	if err != nil {
		t.Fatal(err)
	}
	if q.Questions[0].Status != backup.Status || q.Questions[1].Status != app.AnswerManual ||
		*q.Questions[1].Answer != "Dana Privacy, dpo@example.com" || *q.Questions[1].Comment != "Since 2024" || q.AnsweredQuestions != 2 {
		t.Fatalf("after save: %+v", q.Questions)
	}
	wantRedirect(t, admin.post("/questionnaires/"+qid+"/answers", form2()), "/questionnaires/"+qid+"?done=answers-same")

	// The download carries the answers, as the API's export does.
	for _, format := range []string{"csv", "xlsx"} {
		rec = admin.get("/questionnaires/" + qid + "/export?format=" + format)
		wantStatus(t, rec, http.StatusOK)
		if cd := rec.Header().Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") {
			t.Fatalf("%s: disposition %q", format, cd)
		}
		api, err := e.app.ExportQuestionnaire(e.ctx(f.org), qid, format)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Header().Get("Content-Type") != api.ContentType || (format == "csv" && rec.Body.String() != string(api.Data)) {
			t.Fatalf("%s: %s %q", format, rec.Header().Get("Content-Type"), rec.Body.String())
		}
	}
	if !strings.Contains(admin.get("/questionnaires/"+qid+"/export?format=csv").Body.String(), "Dana Privacy") {
		t.Fatal("the CSV lacks the answer")
	}
	wantStatus(t, admin.get("/questionnaires/"+qid+"/export?format=pdf"), http.StatusBadRequest)

	// Auditors read and download, but are offered no editing and refused.
	aud := e.browser()
	aud.signIn(f.auditor)
	rec = aud.get("/questionnaires/" + qid + "?edit=answers")
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, "Save answers", "?edit=answers#answers")
	wantStatus(t, aud.get("/questionnaires/"+qid+"/export?format=csv"), http.StatusOK)
	wantError403 := func(rec *httptest.ResponseRecorder) {
		t.Helper()
		wantStatus(t, rec, http.StatusForbidden)
		wantNoBody(t, rec, "did not come from this site")
	}
	wantError403(aud.post("/questionnaires/"+qid+"/answers", form2()))
	emp := e.browser()
	emp.signIn(f.employee)
	wantError403(emp.post("/questionnaires/"+qid+"/answers", form2()))
	wantStatus(t, emp.get("/questionnaires/"+qid+"/export?format=csv"), http.StatusForbidden)

	// Another organization's questionnaire is the 404 page.
	g := e.uiFixture("Other")
	other := e.browser()
	other.signIn(g.admin)
	wantStatus(t, other.get("/questionnaires/"+qid+"/export?format=csv"), http.StatusNotFound)
	rec = other.post("/questionnaires/"+qid+"/answers", form2())
	wantStatus(t, rec, http.StatusNotFound)
}
