package ui

import (
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// uiAnswerRoutes registers editing a customer questionnaire's answers by
// hand and downloading the answered file.
func (s *Server) uiAnswerRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("POST", "/questionnaires/{id}/answers", uiManage, s.uiSaveAnswers)
	page("GET", "/questionnaires/{id}/export", uiSignedIn, s.uiExportQuestionnaire)
}

// answerErrorField matches the service's field names for one answer.
var answerErrorField = regexp.MustCompile(`^answers\[(\d+)\]\.(answer|comment)$`)

// uiSaveAnswers saves the answers and comments changed in the edit form
// (fields a_<questionId> and c_<questionId>); questions left as they were
// keep their status, so an auto-answer stays marked as one.
func (s *Server) uiSaveAnswers(w http.ResponseWriter, r *http.Request, v *view) error {
	qn, err := s.app.GetQuestionnaire(r.Context(), id(r))
	if err != nil {
		return err
	}
	if qn.Direction == "outgoing" {
		return app.Errorf(app.ErrConflict, "the vendor answers this questionnaire through its link")
	}
	f := r.PostForm
	var in []app.AnswerInput
	for _, q := range qn.Questions {
		ai := app.AnswerInput{QuestionID: q.ID}
		if vals, ok := f["a_"+q.ID]; ok && strings.TrimSpace(vals[0]) != strings.TrimSpace(deref(q.Answer)) {
			ai.Answer = app.Some(vals[0])
		}
		if vals, ok := f["c_"+q.ID]; ok && strings.TrimSpace(vals[0]) != strings.TrimSpace(deref(q.Comment)) {
			ai.Comment = app.Some(vals[0])
		}
		if ai.Answer.Set || ai.Comment.Set {
			in = append(in, ai)
		}
	}
	if len(in) == 0 {
		return redirect(w, r, "/questionnaires/"+url.PathEscape(qn.ID)+"?done=answers-same")
	}
	if _, err := s.app.FillQuestionnaire(r.Context(), qn.ID, app.QuestionnaireFill{Answers: in}); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		// Put each message next to its question's box.
		errs := map[string]string{}
		for k, msg := range v.Errors {
			m := answerErrorField.FindStringSubmatch(k)
			i := -1
			if m != nil {
				i, _ = strconv.Atoi(m[1])
			}
			if i < 0 || i >= len(in) {
				errs[k] = msg
				continue
			}
			errs[m[2][:1]+"_"+in[i].QuestionID] = strings.Replace(msg, k, "this "+m[2], 1)
		}
		v.Errors = errs
		return s.questionnairePage(w, r, v, qn, nil, nil)
	}
	return redirect(w, r, "/questionnaires/"+url.PathEscape(qn.ID)+"?done=answers-saved")
}

// uiExportQuestionnaire downloads the questionnaire with its answers, as
// GET /v1/questionnaire/{id}/export does (XLSX in the uploaded layout, or
// CSV).
func (s *Server) uiExportQuestionnaire(w http.ResponseWriter, r *http.Request, v *view) error {
	f, err := s.app.ExportQuestionnaire(r.Context(), id(r), r.URL.Query().Get("format"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", f.ContentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(f.Data)
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
