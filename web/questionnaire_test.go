package web

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/xuri/excelize/v2"
)

// form posts an HTML form the way a browser on the page would.
func (e *testEnv) postForm(path string, vals url.Values, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	h := append([]string{"Content-Type", "application/x-www-form-urlencoded", "Origin", "http://example.com", "Sec-Fetch-Site", "same-origin"}, hdr...)
	return e.do("POST", path, "", vals.Encode(), h...)
}

func (e *testEnv) vendor(key, name string) string {
	e.t.Helper()
	rec := e.do("POST", "/v1/vendors", key, map[string]any{"name": name})
	wantStatus(e.t, rec, http.StatusCreated)
	return obj(e.t, rec)["id"].(string)
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func TestQuestionnaireSendFillSubmitByLink(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	vnd := e.vendor(admin, "Cloudy Hosting")

	rec := e.do("POST", "/v1/questionnaire", admin, map[string]any{"templateId": "vendor-security-baseline", "vendorId": vnd, "dueDate": "2026-02-01"})
	wantStatus(t, rec, http.StatusCreated)
	q := obj(t, rec)
	qid := q["id"].(string)
	questions := q["questions"].([]any)
	if q["name"] != "Vendor security baseline" || q["direction"] != "outgoing" || q["status"] != "draft" || len(questions) < 20 ||
		q["totalQuestions"] != float64(len(questions)) {
		t.Fatalf("created: %v", q)
	}
	q1 := questions[0].(map[string]any)["id"].(string)
	q2 := questions[1].(map[string]any)["id"].(string)

	rec = e.do("POST", "/v1/questionnaire/"+qid+"/send", admin, map[string]any{"expiresInDays": 7})
	wantStatus(t, rec, http.StatusOK)
	sent := obj(t, rec)
	token := sent["token"].(string)
	if !strings.HasSuffix(sent["url"].(string), "/vendor-questionnaire/"+token) || sent["questionnaire"].(map[string]any)["status"] != "sent" ||
		sent["expiresAt"] != "2026-01-22T10:00:00Z" {
		t.Fatalf("sent: %v", sent)
	}
	page := "/vendor-questionnaire/" + token

	// The page renders without an account and carries no script.
	rec = e.do("GET", page, "", nil)
	wantStatus(t, rec, http.StatusOK)
	body := rec.Body.String()
	if !strings.Contains(rec.Header().Get("Content-Type"), "text/html") || !strings.Contains(body, "Cloudy Hosting") ||
		!strings.Contains(body, "Is customer data encrypted at rest?") || strings.Contains(body, "<script") {
		t.Fatalf("page: %s", body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self'") || strings.Contains(csp, "script-src") {
		t.Fatalf("csp: %s", csp)
	}
	m := csrfRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no csrf field")
	}
	csrf := m[1]

	// Save a draft: 303 back to the page, which shows the answer.
	rec = e.postForm(page, url.Values{"csrf": {csrf}, "action": {"save"}, "a_" + q1: {"Yes, ISMS policy <b>v3</b>."}, "c_" + q1: {"see annex"}})
	wantStatus(t, rec, http.StatusSeeOther)
	rec = e.do("GET", page+"?saved=1", "", nil)
	if b := rec.Body.String(); !strings.Contains(b, "Yes, ISMS policy &lt;b&gt;v3&lt;/b&gt;.") || !strings.Contains(b, "were saved") {
		t.Fatalf("saved page does not show the escaped answer: %s", b)
	}

	// A forged post is refused: wrong csrf, or sent from another site.
	wantStatus(t, e.postForm(page, url.Values{"csrf": {"nope"}, "action": {"submit"}}), http.StatusForbidden)
	wantStatus(t, e.postForm(page, url.Values{"csrf": {csrf}, "action": {"submit"}}, "Origin", "https://evil.test", "Sec-Fetch-Site", ""), http.StatusForbidden)
	wantStatus(t, e.postForm(page, url.Values{"csrf": {csrf}, "action": {"submit"}}, "Sec-Fetch-Site", "cross-site"), http.StatusForbidden)
	if ev := e.events(org, app.EventQuestionnaireSubmitted); len(ev) != 0 {
		t.Fatal("a refused post submitted")
	}

	e.clock.Advance(time.Hour)
	rec = e.postForm(page, url.Values{"csrf": {csrf}, "action": {"submit"}, "a_" + q2: {"Our CISO, Jane Roe."}})
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), "2 of") {
		t.Fatalf("thank-you page: %s", rec.Body.String())
	}

	// The event carries exactly the spec's payload.
	ev := e.events(org, app.EventQuestionnaireSubmitted)
	if len(ev) != 1 {
		t.Fatalf("events: %v", ev)
	}
	want := map[string]any{"vendorId": vnd, "vendorName": "Cloudy Hosting", "questionnaireId": qid, "submittedAt": "2026-01-15T11:00:00Z"}
	if len(ev[0]) != len(want) {
		t.Fatalf("payload has other fields: %v", ev[0])
	}
	for k, v := range want {
		if ev[0][k] != v {
			t.Fatalf("payload %s = %v, want %v", k, ev[0][k], v)
		}
	}
	rec = e.do("GET", "/v1/vendors/"+vnd, admin, nil)
	if st := obj(t, rec)["status"]; st != "in_progress" {
		t.Fatalf("vendor status %v", st)
	}
	rec = e.do("GET", "/v1/questionnaire/"+qid, admin, nil)
	got := obj(t, rec)
	if got["status"] != "submitted" || got["answeredQuestions"] != float64(2) || got["submittedAt"] != "2026-01-15T11:00:00Z" {
		t.Fatalf("after submit: %v", got)
	}
	first := got["questions"].([]any)[0].(map[string]any)
	if first["answer"] != "Yes, ISMS policy <b>v3</b>." || first["comment"] != "see annex" || first["status"] != "manual" {
		t.Fatalf("first answer: %v", first)
	}

	// The link is used up.
	wantStatus(t, e.do("GET", page, "", nil), http.StatusGone)
	wantStatus(t, e.postForm(page, url.Values{"csrf": {csrf}, "action": {"submit"}}), http.StatusGone)
	// A second submission is a conflict; resending a submitted one too.
	wantError(t, e.do("POST", "/v1/questionnaire/"+qid+"/fill", admin, map[string]any{"submit": true}), http.StatusConflict, "conflict")
	wantError(t, e.do("POST", "/v1/questionnaire/"+qid+"/send", admin, nil), http.StatusConflict, "conflict")
	if ev := e.events(org, app.EventQuestionnaireSubmitted); len(ev) != 1 {
		t.Fatalf("events after refused resubmit: %d", len(ev))
	}
	wantStatus(t, e.do("GET", "/vendor-questionnaire/qt_unknown", "", nil), http.StatusNotFound)
}

func TestQuestionnaireLinkExpiryAndReplacement(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	vnd := e.vendor(admin, "Payroll Inc")
	// The vendor is already assessed: submission leaves its status alone.
	wantStatus(t, e.do("PATCH", "/v1/vendors/"+vnd, admin, map[string]any{"status": "assessed"}), http.StatusOK)
	rec := e.do("POST", "/v1/questionnaire", admin, map[string]any{"name": "Short", "questions": []map[string]any{{"question": "Do you have SOC 2?"}}})
	wantStatus(t, rec, http.StatusCreated)
	qid := obj(t, rec)["id"].(string)
	if obj(t, rec)["direction"] != "incoming" {
		t.Fatal("a questionnaire without a vendor is incoming")
	}
	wantField(t, e.do("POST", "/v1/questionnaire/"+qid+"/send", admin, map[string]any{}), "vendorId")
	wantField(t, e.do("POST", "/v1/questionnaire/"+qid+"/send", admin, map[string]any{"vendorId": vnd, "expiresInDays": 0}), "expiresInDays")
	wantField(t, e.do("POST", "/v1/questionnaire/"+qid+"/send", admin, map[string]any{"vendorId": "vnd_nope"}), "vendorId")

	rec = e.do("POST", "/v1/questionnaire/"+qid+"/send", admin, map[string]any{"vendorId": vnd, "expiresInDays": 1})
	wantStatus(t, rec, http.StatusOK)
	old := obj(t, rec)["token"].(string)
	rec = e.do("POST", "/v1/questionnaire/"+qid+"/send", admin, map[string]any{"expiresInDays": 1})
	wantStatus(t, rec, http.StatusOK)
	token := obj(t, rec)["token"].(string)
	// The replaced link is refused.
	wantStatus(t, e.do("GET", "/vendor-questionnaire/"+old, "", nil), http.StatusGone)
	rec = e.do("GET", "/vendor-questionnaire/"+token, "", nil)
	wantStatus(t, rec, http.StatusOK)
	csrf := csrfRe.FindStringSubmatch(rec.Body.String())[1]

	e.clock.Advance(24*time.Hour + time.Second)
	rec = e.do("GET", "/vendor-questionnaire/"+token, "", nil)
	wantStatus(t, rec, http.StatusGone)
	if !strings.Contains(rec.Body.String(), "expired") {
		t.Fatalf("expired page: %s", rec.Body.String())
	}
	wantStatus(t, e.postForm("/vendor-questionnaire/"+token, url.Values{"csrf": {csrf}, "action": {"submit"}}), http.StatusGone)
	if ev := e.events(org, app.EventQuestionnaireSubmitted); len(ev) != 0 {
		t.Fatal("an expired link submitted")
	}

	// The JSON form of the link: read, save, submit, refused afterwards.
	rec = e.do("POST", "/v1/questionnaire/"+qid+"/send", admin, map[string]any{"expiresInDays": 3})
	token = obj(t, rec)["token"].(string)
	rec = e.do("GET", "/v1/vendor-questionnaire/"+token, "", nil)
	wantStatus(t, rec, http.StatusOK)
	lq := obj(t, rec)
	jq := lq["questionnaire"].(map[string]any)["questions"].([]any)[0].(map[string]any)["id"].(string)
	if lq["vendor"] != "Payroll Inc" || lq["organization"] != "Acme" {
		t.Fatalf("link view: %v", lq)
	}
	wantField(t, e.do("POST", "/v1/vendor-questionnaire/"+token, "", map[string]any{"answers": []map[string]any{{"questionId": "qqa_x", "answer": "x"}}}), "answers[0].questionId")
	rec = e.do("POST", "/v1/vendor-questionnaire/"+token, "", map[string]any{"answers": []map[string]any{{"questionId": jq, "answer": "Draft"}}})
	wantStatus(t, rec, http.StatusOK)
	if a := obj(t, rec)["questionnaire"].(map[string]any)["questions"].([]any)[0].(map[string]any)["answer"]; a != "Draft" {
		t.Fatalf("saved answer %v", a)
	}
	wantStatus(t, e.do("POST", "/v1/vendor-questionnaire/"+token, "", map[string]any{"submit": true}), http.StatusOK)
	if ev := e.events(org, app.EventQuestionnaireSubmitted); len(ev) != 1 {
		t.Fatalf("events after JSON submit: %d", len(ev))
	}
	wantError(t, e.do("GET", "/v1/vendor-questionnaire/"+token, "", nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/vendor-questionnaire/"+token, "", map[string]any{"submit": true}), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/questionnaire/"+qid+"/fill", admin, map[string]any{"submit": true}), http.StatusConflict, "conflict")
	if ev := e.events(org, app.EventQuestionnaireSubmitted); len(ev) != 1 {
		t.Fatal("a refused submit raised an event")
	}
}

func TestQuestionnaireInternalSubmit(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	vnd := e.vendor(admin, "Payroll Inc")
	wantStatus(t, e.do("PATCH", "/v1/vendors/"+vnd, admin, map[string]any{"status": "assessed"}), http.StatusOK)
	rec := e.do("POST", "/v1/questionnaire", admin, map[string]any{"name": "Short", "vendorId": vnd, "questions": []map[string]any{{"question": "Do you have SOC 2?"}}})
	wantStatus(t, rec, http.StatusCreated)
	qid := obj(t, rec)["id"].(string)

	// Internal fill and submit of the vendor's questionnaire.
	rec = e.do("GET", "/v1/questionnaire/"+qid, admin, nil)
	q1 := obj(t, rec)["questions"].([]any)[0].(map[string]any)["id"].(string)
	wantField(t, e.do("POST", "/v1/questionnaire/"+qid+"/fill", admin, map[string]any{"answers": []map[string]any{{"questionId": "qqa_x", "answer": "x"}}}), "answers[0].questionId")
	rec = e.do("POST", "/v1/questionnaire/"+qid+"/fill", admin, map[string]any{"answers": []map[string]any{{"questionId": q1, "answer": "Yes, Type II."}}, "submit": true})
	wantStatus(t, rec, http.StatusOK)
	if ev := e.events(org, app.EventQuestionnaireSubmitted); len(ev) != 1 || ev[0]["vendorName"] != "Payroll Inc" {
		t.Fatalf("events: %v", ev)
	}
	rec = e.do("GET", "/v1/vendors/"+vnd, admin, nil)
	if st := obj(t, rec)["status"]; st != "assessed" {
		t.Fatalf("an assessed vendor moved to %v", st)
	}
}

func TestQuestionnaireMonthlyLimit(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Small", app.PlanStarter)
	admin := e.key(org, app.RoleAdmin)
	body := map[string]any{"templateId": "gdpr-processor"}
	var first string
	for i := 0; i < 5; i++ {
		rec := e.do("POST", "/v1/questionnaire", admin, body)
		wantStatus(t, rec, http.StatusCreated)
		first = obj(t, rec)["id"].(string)
	}
	// Deleting one does not give the allowance back.
	wantStatus(t, e.do("DELETE", "/v1/questionnaire/"+first, admin, nil), http.StatusNoContent)
	// A rejected create does not use the allowance up.
	wantField(t, e.do("POST", "/v1/questionnaire", admin, map[string]any{"templateId": "nope"}), "templateId")
	er := wantError(t, e.do("POST", "/v1/questionnaire", admin, body), http.StatusForbidden, "forbidden")
	if d := er["details"].(map[string]any); d["limit"] != "questionnaires" || d["allowed"] != float64(5) {
		t.Fatalf("details: %v", d)
	}
	er = wantError(t, e.uploadField("/v1/questionnaire/upload", admin, "file", "q.csv", []byte("Question\nDo you encrypt backups?\n")), http.StatusForbidden, "forbidden")
	if er["details"].(map[string]any)["limit"] != "questionnaires" {
		t.Fatal("upload must count against the limit")
	}
	// A new calendar month restores the allowance.
	e.clock.Advance(20 * 24 * time.Hour)
	wantStatus(t, e.do("POST", "/v1/questionnaire", admin, body), http.StatusCreated)

	ent := e.org("Big", app.PlanEnterprise)
	entKey := e.key(ent, app.RoleAdmin)
	for i := 0; i < 60; i++ {
		wantStatus(t, e.do("POST", "/v1/questionnaire", entKey, body), http.StatusCreated)
	}
}

func TestQuestionnaireValidation(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	wantField(t, e.do("POST", "/v1/questionnaire", admin, map[string]any{"name": "x"}), "questions")
	wantField(t, e.do("POST", "/v1/questionnaire", admin, map[string]any{"templateId": "nope"}), "templateId")
	wantField(t, e.do("POST", "/v1/questionnaire", admin, map[string]any{"questions": []map[string]any{{"question": "q"}}}), "name")
	wantField(t, e.do("POST", "/v1/questionnaire", admin, map[string]any{"name": "x", "questions": []map[string]any{{"question": ""}}}), "questions[0].question")
	wantField(t, e.do("POST", "/v1/questionnaire", admin, map[string]any{"name": "x", "vendorId": "vnd_nope", "questions": []map[string]any{{"question": "q"}}}), "vendorId")
	wantField(t, e.do("POST", "/v1/questionnaire", admin, map[string]any{"name": "x", "dueDate": "tomorrow", "questions": []map[string]any{{"question": "q"}}}), "dueDate")
	wantField(t, e.do("POST", "/v1/questionnaire", admin, map[string]any{"fromQuestionnaireId": "qst_nope"}), "fromQuestionnaireId")
	wantField(t, e.do("POST", "/v1/questionnaire", admin, map[string]any{"templateId": "gdpr-processor", "questions": []map[string]any{{"question": "q"}}}), "questions")
	// A questionnaire's questions, without the answers, make a new one.
	rec := e.do("POST", "/v1/questionnaire", admin, map[string]any{"name": "Base", "questions": []map[string]any{{"question": "Do you have a CISO?", "section": "Gov"}}})
	wantStatus(t, rec, http.StatusCreated)
	base := obj(t, rec)
	bq := base["questions"].([]any)[0].(map[string]any)["id"].(string)
	wantStatus(t, e.do("POST", "/v1/questionnaire/"+base["id"].(string)+"/fill", admin, map[string]any{"answers": []map[string]any{{"questionId": bq, "answer": "Yes"}}}), http.StatusOK)
	rec = e.do("POST", "/v1/questionnaire", admin, map[string]any{"fromQuestionnaireId": base["id"]})
	wantStatus(t, rec, http.StatusCreated)
	cp := obj(t, rec)
	cq := cp["questions"].([]any)[0].(map[string]any)
	if cp["name"] != "Base" || cq["question"] != "Do you have a CISO?" || cq["section"] != "Gov" || cq["answer"] != nil || cq["id"] == bq {
		t.Fatalf("copy: %v", cp)
	}
	other := e.key(e.org("Other", app.PlanProfessional), app.RoleAdmin)
	wantField(t, e.do("POST", "/v1/questionnaire", other, map[string]any{"fromQuestionnaireId": base["id"]}), "fromQuestionnaireId")
	wantField(t, e.uploadField("/v1/questionnaire/upload", admin, "file", "q.pdf", []byte("%PDF")), "file")
	wantField(t, e.uploadField("/v1/questionnaire/upload", admin, "file", "q.xlsx", []byte("PK\x03\x04garbage")), "file")
	wantField(t, e.uploadField("/v1/questionnaire/upload", admin, "file", "q.csv", []byte("a,b\n,\n")), "file")
	wantField(t, e.do("GET", "/v1/questionnaire?status=open", admin, nil), "status")
	rec = e.do("GET", "/v1/questionnaire/templates", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	if n := len(obj(t, rec)["data"].([]any)); n != 2 {
		t.Fatalf("templates: %d", n)
	}
}

// kbSeed adds entries to the knowledge base.
func kbSeed(t *testing.T, e *testEnv, key string, qa ...[2]string) []string {
	var ids []string
	for _, x := range qa {
		rec := e.do("POST", "/v1/knowledge-base/entries", key, map[string]any{"question": x[0], "answer": x[1], "sourceDocument": "Security FAQ"})
		wantStatus(t, rec, http.StatusCreated)
		ids = append(ids, obj(t, rec)["id"].(string))
	}
	return ids
}

func TestQuestionnaireUploadAutoAnswerExportCSV(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	ids := kbSeed(t, e, admin,
		[2]string{"Do you encrypt customer data at rest?", "Yes. All customer data is encrypted at rest with AES-256."},
		[2]string{"Is multi-factor authentication enforced for administrators?", "Yes, hardware security keys are required."},
		[2]string{"How often do you test backups?", "Backups are restored in a test every quarter."},
	)
	upload := "Customer security review,,\n" +
		"ID,Domain,Question,Vendor response,Notes\n" +
		"1,Crypto,Is customer data encrypted at rest?,,\n" +
		"2,,Do you enforce MFA (multi-factor authentication) for admin accounts?,,\n" +
		"3,Other,What is the airspeed velocity of an unladen swallow?,,\n" +
		"4,,Describe your backup testing frequency.,Already answered by hand,\n"
	rec := e.uploadField("/v1/questionnaire/upload", admin, "file", "review.csv", []byte(upload), "name", "ACME customer review")
	wantStatus(t, rec, http.StatusCreated)
	q := obj(t, rec)
	qid := q["id"].(string)
	qs := q["questions"].([]any)
	if q["fileType"] != "csv" || len(qs) != 4 || q["answeredQuestions"] != float64(1) {
		t.Fatalf("upload: %v", q)
	}
	if s := qs[1].(map[string]any)["section"]; s != "Crypto" {
		t.Fatalf("section carried down: %v", s)
	}

	wantField(t, e.do("POST", "/v1/questionnaire/"+qid+"/auto-answer", admin, map[string]any{"minConfidence": 2}), "minConfidence")
	rec = e.do("POST", "/v1/questionnaire/"+qid+"/auto-answer", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	res := obj(t, rec)
	if res["answered"] != float64(2) || res["unanswered"] != float64(1) || res["skipped"] != float64(1) {
		t.Fatalf("auto-answer: %v", res)
	}
	got := res["questionnaire"].(map[string]any)["questions"].([]any)
	a0 := got[0].(map[string]any)
	src := a0["source"].(map[string]any)
	if a0["status"] != "generated" || !strings.Contains(a0["answer"].(string), "AES-256") || src["id"] != ids[0] ||
		src["type"] != "entry" || src["name"] != "Security FAQ" || a0["confidence"].(float64) < 0.5 {
		t.Fatalf("answer 1: %v", a0)
	}
	if a1 := got[1].(map[string]any); a1["source"].(map[string]any)["id"] != ids[1] {
		t.Fatalf("answer 2: %v", a1)
	}
	if a2 := got[2].(map[string]any); a2["answer"] != nil || a2["status"] != "untouched" || a2["source"] != nil {
		t.Fatalf("the unrelated question must be left for a person: %v", a2)
	}
	if a3 := got[3].(map[string]any); a3["answer"] != "Already answered by hand" || a3["status"] != "manual" {
		t.Fatalf("a manual answer was overwritten: %v", a3)
	}

	rec = e.do("GET", "/v1/questionnaire/"+qid+"/export?format=csv", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Header().Get("Content-Disposition"), "ACME customer review.csv") {
		t.Fatalf("disposition: %s", rec.Header().Get("Content-Disposition"))
	}
	rows, err := csv.NewReader(bytes.NewReader(rec.Body.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Same layout: title row, header, the answers in the "Vendor response" column.
	if rows[0][0] != "Customer security review" || rows[1][3] != "Vendor response" || !strings.Contains(rows[2][3], "AES-256") ||
		rows[4][3] != "" || rows[5][3] != "Already answered by hand" || rows[3][2] != "Do you enforce MFA (multi-factor authentication) for admin accounts?" {
		t.Fatalf("export layout: %q", rows)
	}
	wantField(t, e.do("GET", "/v1/questionnaire/"+qid+"/export?format=pdf", admin, nil), "format")

	// A vendor-typed formula is exported as text, not as a formula.
	q3 := qs[2].(map[string]any)["id"].(string)
	wantStatus(t, e.do("POST", "/v1/questionnaire/"+qid+"/fill", admin, map[string]any{"answers": []map[string]any{{"questionId": q3, "answer": "=HYPERLINK(\"http://evil.test\")"}}}), http.StatusOK)
	rec = e.do("GET", "/v1/questionnaire/"+qid+"/export?format=csv", admin, nil)
	rows, _ = csv.NewReader(bytes.NewReader(rec.Body.Bytes())).ReadAll()
	if rows[4][3] != "'=HYPERLINK(\"http://evil.test\")" {
		t.Fatalf("formula not neutralized: %q", rows[4][3])
	}

	// The CSV upload also exports as a workbook in the same layout.
	rec = e.do("GET", "/v1/questionnaire/"+qid+"/export?format=xlsx", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	f, err := excelize.OpenReader(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if v, _ := f.GetCellValue("Questionnaire", "D3"); !strings.Contains(v, "AES-256") {
		t.Fatalf("xlsx D3 = %q", v)
	}
}

func TestQuestionnaireXLSXRoundTrip(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	kbSeed(t, e, admin, [2]string{"Do you have an incident response plan?", "Yes, tested twice a year."})

	f := excelize.NewFile()
	f.SetSheetName("Sheet1", "Intro")
	f.SetCellStr("Intro", "A1", "Please answer every question on the Security tab.")
	f.NewSheet("Security")
	f.SetCellStr("Security", "A1", "Category")
	f.SetCellStr("Security", "B1", "Question")
	f.SetCellStr("Security", "A2", "IR")
	f.SetCellStr("Security", "B2", "Is there a documented incident response plan?")
	f.SetCellStr("Security", "B3", "Do you store data in the EU only?")
	style, _ := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	f.SetCellStyle("Security", "A1", "B1", style)
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	f.Close()

	rec := e.uploadField("/v1/questionnaire/upload", admin, "file", "customer.xlsx", buf.Bytes())
	wantStatus(t, rec, http.StatusCreated)
	q := obj(t, rec)
	qid := q["id"].(string)
	if q["fileType"] != "xlsx" || q["totalQuestions"] != float64(2) || q["name"] != "customer" {
		t.Fatalf("xlsx upload: %v", q)
	}
	wantStatus(t, e.do("POST", "/v1/questionnaire/"+qid+"/auto-answer", admin, map[string]any{"minConfidence": 0.4}), http.StatusOK)
	qs := obj(t, e.do("GET", "/v1/questionnaire/"+qid, admin, nil))["questions"].([]any)
	q2 := qs[1].(map[string]any)["id"].(string)
	wantStatus(t, e.do("POST", "/v1/questionnaire/"+qid+"/fill", admin, map[string]any{"answers": []map[string]any{{"questionId": q2, "answer": "Yes, Frankfurt and Dublin."}}}), http.StatusOK)

	rec = e.do("GET", "/v1/questionnaire/"+qid+"/export", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); !strings.Contains(ct, "spreadsheetml") {
		t.Fatalf("content type %s", ct)
	}
	out, err := excelize.OpenReader(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	check := func(sheet, cell, want string) {
		t.Helper()
		if v, _ := out.GetCellValue(sheet, cell); v != want {
			t.Fatalf("%s!%s = %q, want %q", sheet, cell, v, want)
		}
	}
	check("Intro", "A1", "Please answer every question on the Security tab.")
	check("Security", "C1", "Answer")
	check("Security", "C2", "Yes, tested twice a year.")
	check("Security", "C3", "Yes, Frankfurt and Dublin.")
	if sid, _ := out.GetCellStyle("Security", "B1"); sid == 0 {
		t.Fatal("the header style was lost")
	}
	rec = e.do("GET", "/v1/questionnaire/"+qid+"/export?format=csv", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), "Question,Answer") {
		t.Fatalf("csv of the workbook: %s", rec.Body.String())
	}
}

func TestQuestionnaireAccessRules(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	auditor := e.key(org, app.RoleAuditor)
	employee := e.key(org, app.RoleEmployee)
	other := e.key(e.org("Other", app.PlanProfessional), app.RoleOwner)
	vnd := e.vendor(admin, "V")
	rec := e.do("POST", "/v1/questionnaire", admin, map[string]any{"name": "Q", "vendorId": vnd, "questions": []map[string]any{{"question": "Do you?"}}})
	wantStatus(t, rec, http.StatusCreated)
	qid := obj(t, rec)["id"].(string)

	routes := []struct {
		method, path string
		body         any
		write        bool
	}{
		{"GET", "/v1/questionnaire/" + qid, nil, false},
		{"GET", "/v1/questionnaire/" + qid + "/export?format=csv", nil, false},
		{"POST", "/v1/questionnaire/" + qid + "/send", map[string]any{}, true},
		{"POST", "/v1/questionnaire/" + qid + "/fill", map[string]any{"answers": []any{}}, true},
		{"POST", "/v1/questionnaire/" + qid + "/auto-answer", map[string]any{}, true},
		{"DELETE", "/v1/questionnaire/" + qid, nil, true},
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			wantError(t, e.do(rt.method, rt.path, other, rt.body), http.StatusNotFound, "not_found")
			wantError(t, e.do(rt.method, rt.path, "", rt.body), http.StatusUnauthorized, "unauthorized")
			if rt.write {
				wantError(t, e.do(rt.method, rt.path, auditor, rt.body), http.StatusForbidden, "forbidden")
				wantError(t, e.do(rt.method, rt.path, employee, rt.body), http.StatusForbidden, "forbidden")
			} else {
				wantStatus(t, e.do(rt.method, rt.path, auditor, rt.body), http.StatusOK)
				// Employees and contractors read only what is assigned to them.
				wantError(t, e.do(rt.method, rt.path, employee, rt.body), http.StatusForbidden, "forbidden")
			}
		})
	}
	for _, p := range []string{"/v1/questionnaire", "/v1/questionnaire/upload"} {
		wantError(t, e.do("POST", p, auditor, map[string]any{"templateId": "gdpr-processor"}), http.StatusForbidden, "forbidden")
	}
	wantError(t, e.do("GET", "/v1/questionnaire", employee, nil), http.StatusForbidden, "forbidden")
	rec = e.do("GET", "/v1/questionnaire", other, nil)
	wantStatus(t, rec, http.StatusOK)
	if n := obj(t, rec)["meta"].(map[string]any)["total"]; n != float64(0) {
		t.Fatalf("other org lists %v", n)
	}
	rec = e.do("GET", "/v1/questionnaire?vendorId="+vnd, auditor, nil)
	if n := obj(t, rec)["meta"].(map[string]any)["total"]; n != float64(1) {
		t.Fatalf("vendor filter %v", n)
	}
	wantStatus(t, e.do("DELETE", "/v1/questionnaire/"+qid, admin, nil), http.StatusNoContent)
	wantError(t, e.do("GET", "/v1/questionnaire/"+qid, admin, nil), http.StatusNotFound, "not_found")
}
