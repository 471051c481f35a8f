package api

import (
	"mime"
	"net/http"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/gorilla/mux"
)

// questionnaireRoutes registers the routes of the handlers in this file.
func (s *Server) questionnaireRoutes(handle routeFunc) {
	handle("GET", "/v1/questionnaire", httpx.CanRead, s.listQuestionnaires)
	handle("POST", "/v1/questionnaire", httpx.CanManage, s.createQuestionnaire)
	handle("POST", "/v1/questionnaire/upload", httpx.CanManage, s.uploadQuestionnaire)
	handle("GET", "/v1/questionnaire/templates", httpx.CanRead, s.listQuestionnaireTemplates)
	handle("GET", "/v1/questionnaire/{id}", httpx.CanRead, s.getQuestionnaire)
	handle("DELETE", "/v1/questionnaire/{id}", httpx.CanManage, s.deleteQuestionnaire)
	handle("POST", "/v1/questionnaire/{id}/send", httpx.CanManage, s.sendQuestionnaire)
	handle("POST", "/v1/questionnaire/{id}/fill", httpx.CanManage, s.fillQuestionnaire)
	handle("POST", "/v1/questionnaire/{id}/auto-answer", httpx.CanManage, s.autoAnswerQuestionnaire)
	handle("GET", "/v1/questionnaire/{id}/export", httpx.CanRead, s.exportQuestionnaire)
	handle("GET", "/v1/vendor-questionnaire/{token}", httpx.Public, s.getLinkQuestionnaire)
	handle("POST", "/v1/vendor-questionnaire/{token}", httpx.Public, s.fillLinkQuestionnaire)
}

func (s *Server) listQuestionnaires(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListQuestionnaires(r.Context(), app.QuestionnaireFilter{Status: q.Get("status"), VendorID: q.Get("vendorId"),
		Direction: q.Get("direction"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) listQuestionnaireTemplates(w http.ResponseWriter, r *http.Request) error {
	t := s.app.QuestionnaireTemplates()
	httpx.WriteJSON(w, http.StatusOK, httpx.ListBody[app.QuestionnaireTemplate]{Data: t, Meta: httpx.Meta{Total: len(t), Page: 1, PerPage: max(len(t), 1), TotalPages: 1}})
	return nil
}

func (s *Server) getQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	q, err := s.app.GetQuestionnaire(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, q)
	return nil
}

func (s *Server) createQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	var in app.QuestionnaireCreate
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	q, err := s.app.CreateQuestionnaire(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, q)
	return nil
}

// uploadQuestionnaire creates a questionnaire from a CSV or XLSX file in
// the form field file; name, vendorId and dueDate are optional fields.
func (s *Server) uploadQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	u, err := s.ParseUpload(w, r, "file")
	if err != nil {
		return err
	}
	defer u.Close()
	name := strings.ToLower(u.Filename)
	if !strings.HasSuffix(name, ".csv") && !strings.HasSuffix(name, ".xlsx") {
		return httpx.BadRequest("file", u.Filename, "the file must be .csv or .xlsx")
	}
	opt := func(k string) *string {
		if v, ok := u.Fields[k]; ok && v != "" {
			return &v
		}
		return nil
	}
	q, err := s.app.CreateQuestionnaireFromFile(r.Context(), u.Fields["name"], opt("vendorId"), opt("dueDate"), u.Filename, u.File)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, q)
	return nil
}

func (s *Server) deleteQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteQuestionnaire(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) sendQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	var in app.QuestionnaireSend
	if r.ContentLength != 0 {
		if err := httpx.Decode(r, &in); err != nil {
			return err
		}
	}
	l, err := s.app.SendQuestionnaire(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"questionnaire": l.Questionnaire, "token": l.Token, "url": s.BaseURL(r) + l.Path,
		"expiresAt": l.ExpiresAt})
	return nil
}

func (s *Server) fillQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	var in app.QuestionnaireFill
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	q, err := s.app.FillQuestionnaire(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, q)
	return nil
}

func (s *Server) autoAnswerQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	var in app.AutoAnswerInput
	if r.ContentLength != 0 {
		if err := httpx.Decode(r, &in); err != nil {
			return err
		}
	}
	res, err := s.app.AutoAnswer(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) exportQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	f, err := s.app.ExportQuestionnaire(r.Context(), pathID(r, "id"), r.URL.Query().Get("format"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", f.ContentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(f.Data)
	return nil
}

// linkBody is the questionnaire as the link's holder sees it over JSON.
func linkBody(v *app.LinkView) map[string]any {
	return map[string]any{"organization": v.OrganizationName, "vendor": v.VendorName, "expiresAt": v.Link.ExpiresAt,
		"questionnaire": v.Questionnaire}
}

// getLinkQuestionnaire is the JSON form of the fill page.
func (s *Server) getLinkQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.OpenQuestionnaireLink(r.Context(), mux.Vars(r)["token"])
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, linkBody(v))
	return nil
}

// fillLinkQuestionnaire takes the vendor's answers as JSON
// ({answers:[{questionId, answer, comment}], submit}).
func (s *Server) fillLinkQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	var in app.QuestionnaireFill
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	token := mux.Vars(r)["token"]
	if _, err := s.app.FillByLink(r.Context(), token, nil, in.Answers, in.Submit); err != nil {
		return err
	}
	if in.Submit {
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"submitted": true})
		return nil
	}
	v, err := s.app.OpenQuestionnaireLink(r.Context(), token)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, linkBody(v))
	return nil
}
