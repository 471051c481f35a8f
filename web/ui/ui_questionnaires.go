package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// uiQuestionnaireRoutes registers security questionnaires: upload, answers
// and auto-answering from the knowledge base.
func (s *Server) uiQuestionnaireRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/questionnaires", uiSignedIn, s.uiQuestionnaires)
	page("POST", "/questionnaires", uiManage, s.uiUploadQuestionnaire)
	page("GET", "/questionnaires/{id}", uiSignedIn, s.uiQuestionnaire)
	page("POST", "/questionnaires/{id}/auto-answer", uiManage, s.uiAutoAnswer)
}

func (s *Server) questionnairesPage(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	f := app.QuestionnaireFilter{Status: q.Get("status")}
	lv, items, done, err := runList(w, r, v, questionnaireList(func(p app.Page) ([]app.Questionnaire, int, error) {
		f.Page = p
		l, err := s.app.ListQuestionnaires(r.Context(), f)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	lv.EmptyText = "No questionnaires yet. Upload a customer's questionnaire to answer it from the knowledge base; to send one to a vendor, open the vendor and choose Send a questionnaire."
	if v.Can("manage") {
		lv.EmptyHref, lv.EmptyAction = "#file", "Upload a questionnaire"
	}
	v.Title, v.Section = "Questionnaires", "questionnaires"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	vendors := map[string]string{}
	for _, q := range items {
		if q.VendorID == nil || vendors[*q.VendorID] != "" {
			continue
		}
		vd, err := s.app.GetVendor(r.Context(), *q.VendorID)
		if err != nil && !errors.Is(err, app.ErrNotFound) {
			return err
		}
		if vd != nil {
			vendors[vd.ID] = vd.Name
		}
	}
	v.Data = map[string]any{"Items": items, "List": lv, "Vendors": vendors}
	return s.page(w, r, "questionnaires", v)
}

func (s *Server) uiQuestionnaires(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.questionnairesPage(w, r, v)
}

func (s *Server) uiUploadQuestionnaire(w http.ResponseWriter, r *http.Request, v *view) error {
	file, hdr, err := r.FormFile("file")
	if err != nil {
		v.Errors, v.Form, v.Status = map[string]string{"file": "Choose a CSV or XLSX file of questions."}, r.PostForm, http.StatusUnprocessableEntity
		return s.questionnairesPage(w, r, v)
	}
	defer file.Close()
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" {
		name = hdr.Filename
	}
	qn, err := s.app.CreateQuestionnaireFromFile(r.Context(), name, nil, nonEmpty(r.PostFormValue("dueDate")), hdr.Filename, file)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.questionnairesPage(w, r, v)
	}
	return redirect(w, r, "/questionnaires/"+url.PathEscape(qn.ID)+"?done=created")
}

// questionnairePage shows a questionnaire; sent is its new vendor link,
// shown only on the answer to sending it.
func (s *Server) questionnairePage(w http.ResponseWriter, r *http.Request, v *view, qn *app.Questionnaire, res *app.AutoAnswerResult, sent *sentView) error {
	v.Title, v.Section = qn.Name, "questionnaires"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	var vd *app.Vendor
	if qn.VendorID != nil {
		var err error
		if vd, err = s.app.GetVendor(r.Context(), *qn.VendorID); err != nil && !errors.Is(err, app.ErrNotFound) {
			return err
		}
	}
	// The answers are edited in place: after ?edit=answers, or when a save
	// of them needs correcting.
	edit := v.Can("manage") && qn.Direction != "outgoing" && (r.URL.Query().Get("edit") == "answers" || strings.HasSuffix(r.URL.Path, "/answers"))
	v.Data = map[string]any{"Q": qn, "Result": res, "Vendor": vd, "Sent": sent, "Edit": edit}
	return s.page(w, r, "questionnaire", v)
}

func (s *Server) uiQuestionnaire(w http.ResponseWriter, r *http.Request, v *view) error {
	qn, err := s.app.GetQuestionnaire(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.questionnairePage(w, r, v, qn, nil, nil)
}

// autoAnswerInline is the default of Server.autoAnswerInline: on the
// benchmark knowledge base (2,000 entries) 300 questions take about half a
// second, so up to 200 are answered within the request.
const autoAnswerInline = 200

// uiAutoAnswer answers from the knowledge base and shows the outcome on
// the answer page; a large questionnaire is answered in a job whose page
// shows the questions done.
func (s *Server) uiAutoAnswer(w http.ResponseWriter, r *http.Request, v *view) error {
	in := app.AutoAnswerInput{Overwrite: r.PostFormValue("overwrite") == "on"}
	qn, err := s.app.GetQuestionnaire(r.Context(), id(r))
	if err != nil {
		return err
	}
	if qn.TotalQuestions <= s.autoAnswerInline {
		res, err := s.app.AutoAnswer(r.Context(), qn.ID, in)
		if err != nil {
			return err
		}
		return s.questionnairePage(w, r, v, res.Questionnaire, res, nil)
	}
	qid := qn.ID
	jid, err := s.jobs.Start(v.P, httpx.RequestID(r), "auto-answer", "Auto-answer: "+qn.Name, "questions", func(ctx context.Context, c *JobControl) error {
		in.Progress = c.Progress
		res, err := s.app.AutoAnswer(ctx, qid, in)
		if err != nil {
			return err
		}
		c.Result("/questionnaires/"+url.PathEscape(qid), "Open the questionnaire", fmt.Sprintf(
			"%d answered, %d left for a person, %d kept as answered by hand (%d ms).", res.Answered, res.Unanswered, res.Skipped, res.DurationMs))
		return nil
	})
	if err != nil {
		return err
	}
	return redirect(w, r, "/jobs/"+url.PathEscape(jid))
}
