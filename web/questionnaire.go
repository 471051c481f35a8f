package web

import (
	"errors"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

func (s *Server) listQuestionnaires(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListQuestionnaires(r.Context(), app.QuestionnaireFilter{Status: q.Get("status"), VendorID: q.Get("vendorId"),
		Direction: q.Get("direction"), Page: p})
	if err != nil {
		return err
	}
	writeList(w, p, l)
	return nil
}

func (s *Server) listQuestionnaireTemplates(w http.ResponseWriter, r *http.Request) error {
	t := s.app.QuestionnaireTemplates()
	writeJSON(w, http.StatusOK, listBody[app.QuestionnaireTemplate]{Data: t, Meta: meta{Total: len(t), Page: 1, PerPage: max(len(t), 1), TotalPages: 1}})
	return nil
}

func (s *Server) getQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	q, err := s.app.GetQuestionnaire(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

func (s *Server) createQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	var in app.QuestionnaireCreate
	if err := decode(r, &in); err != nil {
		return err
	}
	q, err := s.app.CreateQuestionnaire(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, q)
	return nil
}

// uploadQuestionnaire creates a questionnaire from a CSV or XLSX file in
// the form field file; name, vendorId and dueDate are optional fields.
func (s *Server) uploadQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	u, err := s.parseUpload(w, r, "file")
	if err != nil {
		return err
	}
	defer u.Close()
	name := strings.ToLower(u.Filename)
	if !strings.HasSuffix(name, ".csv") && !strings.HasSuffix(name, ".xlsx") {
		return badRequest("file", u.Filename, "the file must be .csv or .xlsx")
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
	writeJSON(w, http.StatusCreated, q)
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
		if err := decode(r, &in); err != nil {
			return err
		}
	}
	l, err := s.app.SendQuestionnaire(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"questionnaire": l.Questionnaire, "token": l.Token, "url": s.baseURL(r) + l.Path,
		"expiresAt": l.ExpiresAt})
	return nil
}

func (s *Server) fillQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	var in app.QuestionnaireFill
	if err := decode(r, &in); err != nil {
		return err
	}
	q, err := s.app.FillQuestionnaire(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

func (s *Server) autoAnswerQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	var in app.AutoAnswerInput
	if r.ContentLength != 0 {
		if err := decode(r, &in); err != nil {
			return err
		}
	}
	res, err := s.app.AutoAnswer(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
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

// ---- the vendor's fill page ----

var fillTpl = template.Must(template.New("fill").Parse(layoutHTML + `{{define "content"}}{{with .Data}}
<section><h2>{{.Q.Name}}</h2>
<p>{{.Org}} asks <strong>{{.Vendor}}</strong> to answer these {{len .Q.Questions}} questions.
This link works until {{.Expires}} and can be submitted once. No account is needed.</p>
{{if .Saved}}<div class="notice">Your answers were saved. You can come back to this link until it expires.</div>{{end}}
{{if .Error}}<div class="error">{{.Error}}</div>{{end}}
</section>
<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<section>{{$section := ""}}{{range .Q.Questions}}{{if ne .Section $section}}{{$section = .Section}}<h2>{{.Section}}</h2>{{end}}
<div class="q"><label for="a_{{.ID}}">{{.Question}}</label>
<textarea id="a_{{.ID}}" name="a_{{.ID}}">{{with .Answer}}{{.}}{{end}}</textarea>
<label class="hint" for="c_{{.ID}}">Comment (optional)</label>
<input type="text" id="c_{{.ID}}" name="c_{{.ID}}" value="{{with .Comment}}{{.}}{{end}}"></div>
{{end}}</section>
<section><button type="submit" name="action" value="save" class="secondary">Save draft</button>
<button type="submit" name="action" value="submit">Submit answers</button>
<p class="hint">Submitting sends your answers to {{.Org}}; the link cannot be used afterwards.</p></section>
</form>{{end}}{{end}}`))

type fillData struct {
	Q       *app.Questionnaire
	Org     string
	Vendor  string
	Expires string
	Action  string
	CSRF    string
	Saved   bool
	Error   string
}

// linkError renders the page for a link that cannot be used.
func linkError(w http.ResponseWriter, err error) error {
	switch {
	case errors.Is(err, app.ErrLinkExpired):
		return renderMessage(w, http.StatusGone, "Link expired", "This questionnaire link has expired. Ask the sender for a new one.", true)
	case errors.Is(err, app.ErrLinkUsed):
		return renderMessage(w, http.StatusGone, "Link no longer valid", "This questionnaire has already been submitted through this link, or the link was replaced by a newer one.", true)
	case errors.Is(err, app.ErrBadCSRF):
		return renderMessage(w, http.StatusForbidden, "Form expired", app.ErrBadCSRF.Msg, true)
	case errors.Is(err, app.ErrNotFound):
		return renderMessage(w, http.StatusNotFound, "Link not found", "This questionnaire link does not exist.", true)
	}
	return err
}

func (s *Server) showFillPage(w http.ResponseWriter, r *http.Request, token string, status int, saved bool, msg string) error {
	v, err := s.app.OpenQuestionnaireLink(r.Context(), token)
	if err != nil {
		return linkError(w, err)
	}
	pg := page{Title: v.Questionnaire.Name, Heading: v.OrganizationName + " · security questionnaire"}
	if v.Branding.PrimaryColor != nil {
		pg.Color = *v.Branding.PrimaryColor
	}
	if v.Branding.LogoURL != nil && strings.HasPrefix(*v.Branding.LogoURL, "https://") {
		pg.Logo = *v.Branding.LogoURL
	}
	pg.Data = fillData{Q: v.Questionnaire, Org: v.OrganizationName, Vendor: v.VendorName,
		Expires: v.Link.ExpiresAt.Format("2 January 2006 15:04 MST"), Action: "/vendor-questionnaire/" + token,
		CSRF: v.Link.CSRFSecret, Saved: saved, Error: msg}
	return renderPage(w, status, fillTpl, pg)
}

func (s *Server) vendorFillPage(w http.ResponseWriter, r *http.Request) error {
	return s.showFillPage(w, r, mux.Vars(r)["token"], http.StatusOK, r.URL.Query().Get("saved") == "1", "")
}

// vendorFillSubmit takes the fill form: save keeps a draft, submit submits
// and uses the link up.
func (s *Server) vendorFillSubmit(w http.ResponseWriter, r *http.Request) error {
	token := mux.Vars(r)["token"]
	if s.crossSite(r) {
		return renderMessage(w, http.StatusForbidden, "Form refused", "The form must be sent from the questionnaire page itself.", true)
	}
	if err := r.ParseForm(); err != nil {
		return renderMessage(w, http.StatusBadRequest, "Form unreadable", "The form could not be read.", true)
	}
	v, err := s.app.OpenQuestionnaireLink(r.Context(), token)
	if err != nil {
		return linkError(w, err)
	}
	var answers []app.AnswerInput
	for _, q := range v.Questionnaire.Questions {
		ai := app.AnswerInput{QuestionID: q.ID}
		if a, ok := r.PostForm["a_"+q.ID]; ok {
			ai.Answer = app.Some(a[0])
		}
		if c, ok := r.PostForm["c_"+q.ID]; ok {
			ai.Comment = app.Some(c[0])
		}
		if ai.Answer.Set || ai.Comment.Set {
			answers = append(answers, ai)
		}
	}
	submit := r.PostForm.Get("action") == "submit"
	q, err := s.app.FillByLink(r.Context(), token, app.Ptr(r.PostForm.Get("csrf")), answers, submit)
	if err != nil {
		var ve *app.ValidationError
		if errors.As(err, &ve) {
			return s.showFillPage(w, r, token, http.StatusBadRequest, false, ve.Error())
		}
		return linkError(w, err)
	}
	if !submit {
		http.Redirect(w, r, "/vendor-questionnaire/"+token+"?saved=1", http.StatusSeeOther)
		return nil
	}
	return renderMessage(w, http.StatusOK, "Thank you", fmt.Sprintf("Your answers to %q (%d of %d questions answered) were submitted to %s on %s.",
		q.Name, q.AnsweredQuestions, q.TotalQuestions, v.OrganizationName, q.SubmittedAt.Format(time.RFC1123)), false)
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
	writeJSON(w, http.StatusOK, linkBody(v))
	return nil
}

// fillLinkQuestionnaire takes the vendor's answers as JSON
// ({answers:[{questionId, answer, comment}], submit}).
func (s *Server) fillLinkQuestionnaire(w http.ResponseWriter, r *http.Request) error {
	var in app.QuestionnaireFill
	if err := decode(r, &in); err != nil {
		return err
	}
	token := mux.Vars(r)["token"]
	if _, err := s.app.FillByLink(r.Context(), token, nil, in.Answers, in.Submit); err != nil {
		return err
	}
	if in.Submit {
		writeJSON(w, http.StatusOK, map[string]any{"submitted": true})
		return nil
	}
	v, err := s.app.OpenQuestionnaireLink(r.Context(), token)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, linkBody(v))
	return nil
}
