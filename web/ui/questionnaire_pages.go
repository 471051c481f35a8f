package ui

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/gorilla/mux"
)

// ---- the vendor's fill page ----

var fillTpl = template.Must(template.New("fill").Parse(httpx.LayoutHTML + `{{define "content"}}{{with .Data}}
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
		return httpx.RenderMessage(w, http.StatusGone, "Link expired", "This questionnaire link has expired. Ask the sender for a new one.", true)
	case errors.Is(err, app.ErrLinkUsed):
		return httpx.RenderMessage(w, http.StatusGone, "Link no longer valid", "This questionnaire has already been submitted through this link, or the link was replaced by a newer one.", true)
	case errors.Is(err, app.ErrBadCSRF):
		return httpx.RenderMessage(w, http.StatusForbidden, "Form expired", app.ErrBadCSRF.Msg, true)
	case errors.Is(err, app.ErrNotFound):
		return httpx.RenderMessage(w, http.StatusNotFound, "Link not found", "This questionnaire link does not exist.", true)
	}
	return err
}

func (s *Server) showFillPage(w http.ResponseWriter, r *http.Request, token string, status int, saved bool, msg string) error {
	v, err := s.app.OpenQuestionnaireLink(r.Context(), token)
	if err != nil {
		return linkError(w, err)
	}
	pg := httpx.Page{Title: v.Questionnaire.Name, Heading: v.OrganizationName + " · security questionnaire"}
	if v.Branding.PrimaryColor != nil {
		pg.Color = *v.Branding.PrimaryColor
	}
	if v.Branding.LogoURL != nil && strings.HasPrefix(*v.Branding.LogoURL, "https://") {
		pg.Logo = *v.Branding.LogoURL
	}
	pg.Data = fillData{Q: v.Questionnaire, Org: v.OrganizationName, Vendor: v.VendorName,
		Expires: v.Link.ExpiresAt.Format("2 January 2006 15:04 MST"), Action: "/vendor-questionnaire/" + token,
		CSRF: v.Link.CSRFSecret, Saved: saved, Error: msg}
	return httpx.RenderPage(w, status, fillTpl, pg)
}

func (s *Server) vendorFillPage(w http.ResponseWriter, r *http.Request) error {
	return s.showFillPage(w, r, mux.Vars(r)["token"], http.StatusOK, r.URL.Query().Get("saved") == "1", "")
}

// vendorFillSubmit takes the fill form: save keeps a draft, submit submits
// and uses the link up.
func (s *Server) vendorFillSubmit(w http.ResponseWriter, r *http.Request) error {
	token := mux.Vars(r)["token"]
	if s.CrossSite(r) {
		return httpx.RenderMessage(w, http.StatusForbidden, "Form refused", "The form must be sent from the questionnaire page itself.", true)
	}
	if err := r.ParseForm(); err != nil {
		return httpx.RenderMessage(w, http.StatusBadRequest, "Form unreadable", "The form could not be read.", true)
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
	return httpx.RenderMessage(w, http.StatusOK, "Thank you", fmt.Sprintf("Your answers to %q (%d of %d questions answered) were submitted to %s on %s.",
		q.Name, q.AnsweredQuestions, q.TotalQuestions, v.OrganizationName, q.SubmittedAt.Format(time.RFC1123)), false)
}
