package ui

import (
	"errors"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/gorilla/mux"
)

// uiTrainingRoutes registers "my work" (every signed-in person, and per
// person for staff), the training catalog with its reader and quiz form
// (no script needed), results and certificates, and the admin forms to
// assign modules and write the organization's own.
func (s *Server) uiTrainingRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/my-work", uiSignedIn, s.uiMyWork)
	page("GET", "/my-work/{id}", uiSignedIn, s.uiPersonWork)
	page("GET", "/training", uiSignedIn, s.uiTraining)
	page("POST", "/training/assign", uiManage, s.uiAssignTraining)
	page("GET", "/training/new", uiManage, s.uiNewTrainingModule)
	page("POST", "/training/modules", uiManage, s.uiCreateTrainingModule)
	page("GET", "/training/modules/{id}", uiSignedIn, s.uiTrainingModule)
	page("GET", "/training/modules/{id}/file", uiSignedIn, s.uiTrainingFile)
	page("POST", "/training/modules/{id}/answers", uiSelf, s.uiTrainingAnswers)
	page("POST", "/training/modules/{id}/complete", uiSelf, s.uiTrainingComplete)
	page("GET", "/training/completions/{id}", uiSignedIn, s.uiTrainingResult)
	page("GET", "/training/completions/{id}/certificate", uiSignedIn, s.uiTrainingCertificate)
}

func init() {
	flashes["training-assigned"] = "Training assigned."
	flashes["module-created"] = "Module added to the catalog. Assign it to people from the training page."
}

func (s *Server) uiMyWork(w http.ResponseWriter, r *http.Request, v *view) error {
	work, err := s.app.MyWork(r.Context())
	if err != nil {
		return err
	}
	v.Title, v.Section = "My work", "my-work"
	v.Data = map[string]any{"Work": work, "Own": true}
	return s.page(w, r, "my_work", v)
}

func (s *Server) uiPersonWork(w http.ResponseWriter, r *http.Request, v *view) error {
	work, err := s.app.PersonWork(r.Context(), id(r))
	if err != nil {
		return err
	}
	v.Title, v.Section = "Work of "+work.Person.Name, "people"
	v.Data = map[string]any{"Work": work, "Own": work.Person.ID == v.P.UserID}
	return s.page(w, r, "my_work", v)
}

// trainingBar is one bar of the overview chart, drawn on the server.
type trainingBar struct {
	app.TrainingModuleStats
	Y, Width int
}

func (s *Server) uiTraining(w http.ResponseWriter, r *http.Request, v *view) error {
	form := v.Form
	lv, mods, done, err := runList(w, r, v, trainingModuleList(sliceFetch(func() ([]app.TrainingModule, error) { return s.app.ListTrainingModules(r.Context()) })))
	if done || err != nil {
		return err
	}
	v.Form = form
	lv.EmptyText = "No training modules."
	mine := []app.TrainingAssignment{}
	if v.P.UserID != "" {
		l, err := s.app.ListTrainingAssignments(r.Context(), app.TrainingAssignmentFilter{PersonID: v.P.UserID})
		if err != nil {
			return err
		}
		mine = l.Items
	}
	data := map[string]any{"Modules": mods, "List": lv, "Mine": mine, "Roles": memberRoles(), "MailConfigured": false}
	if !v.P.SeesOnlyAssigned() {
		stats, err := s.app.TrainingOverview(r.Context())
		if err != nil {
			return err
		}
		bars := make([]trainingBar, len(stats))
		for i, st := range stats {
			bars[i] = trainingBar{TrainingModuleStats: st, Y: i * 36, Width: st.CompletionRate * 200 / 100}
		}
		data["Bars"], data["ChartHeight"] = bars, len(bars)*36+8
	}
	if v.Form == nil {
		v.Form = url.Values{"dueInDays": {"30"}}
	}
	v.Title, v.Section = "Training", "training"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = data
	return s.page(w, r, "training", v)
}

func (s *Server) uiAssignTraining(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.TrainingAssignInput{ModuleID: f.Get("moduleId"), Target: f.Get("target"), Role: f.Get("role"), Required: f.Get("required") == "on"}
	if d := strings.TrimSpace(f.Get("dueInDays")); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil {
			n = -1
		}
		in.DueInDays = &n
	}
	if in.Target == "people" {
		in.PersonIDs = f["personIds"]
	}
	if _, err := s.app.AssignTraining(r.Context(), in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		v.Form, v.Status = f, http.StatusBadRequest
		return s.uiTraining(w, r, v)
	}
	return redirect(w, r, "/training?done=training-assigned")
}

func (s *Server) uiNewTrainingModule(w http.ResponseWriter, r *http.Request, v *view) error {
	v.Title, v.Section = "New training module", "training"
	if v.Form == nil {
		v.Form = url.Values{"passMark": {"80"}}
	}
	return s.page(w, r, "training_new", v)
}

// parseQuiz reads the quiz of the module form: one question per block,
// "Q: question" then one choice per line, the right one starting with "*"
// and the others with "-".
func parseQuiz(src string) []app.TrainingQuizItem {
	var out []app.TrainingQuizItem
	for _, line := range strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Q:"):
			out = append(out, app.TrainingQuizItem{Question: strings.TrimSpace(line[2:])})
		case len(out) > 0 && (strings.HasPrefix(line, "*") || strings.HasPrefix(line, "-")):
			q := &out[len(out)-1]
			if line[0] == '*' {
				q.Answer = app.Ptr(len(q.Choices))
			}
			q.Choices = append(q.Choices, strings.TrimSpace(line[1:]))
		}
	}
	return out
}

func (s *Server) uiCreateTrainingModule(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := r.ParseMultipartForm(8 << 20); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		return err
	}
	f := r.Form
	pass, _ := strconv.Atoi(strings.TrimSpace(f.Get("passMark")))
	minutes, _ := strconv.Atoi(strings.TrimSpace(f.Get("durationMinutes")))
	in := app.TrainingModuleInput{Title: f.Get("title"), Summary: f.Get("summary"), PassMark: pass, DurationMinutes: minutes}
	if file, hdr, err := r.FormFile("file"); err == nil {
		defer file.Close()
		in.File, in.FileName, in.ContentType = file, hdr.Filename, hdr.Header.Get("Content-Type")
	} else {
		if body := strings.TrimSpace(f.Get("body")); body != "" {
			in.Sections = []app.TrainingSection{{Title: in.Title, Body: body}}
		}
		in.Quiz = parseQuiz(f.Get("quiz"))
	}
	m, err := s.app.CreateTrainingModule(r.Context(), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		v.Form, v.Status = f, http.StatusBadRequest
		return s.uiNewTrainingModule(w, r, v)
	}
	return redirect(w, r, "/training/modules/"+url.PathEscape(m.ID)+"?done=module-created")
}

func (s *Server) uiTrainingModule(w http.ResponseWriter, r *http.Request, v *view) error {
	m, err := s.app.GetTrainingModule(r.Context(), id(r))
	if err != nil {
		return err
	}
	sections := make([]template.HTML, len(m.Sections))
	for i, sec := range m.Sections {
		sections[i] = renderMarkdown(sec.Body)
	}
	v.Title, v.Section = m.Title, "training"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = map[string]any{"M": m, "Sections": sections}
	return s.page(w, r, "training_module", v)
}

func (s *Server) uiTrainingFile(w http.ResponseWriter, r *http.Request, v *view) error {
	m, f, err := s.app.OpenTrainingFile(r.Context(), id(r))
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", m.File.ContentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": m.File.Name}))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	http.ServeContent(w, r, "", *m.UpdatedAt, f)
	return nil
}

func (s *Server) uiTrainingAnswers(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	version, _ := strconv.Atoi(f.Get("version"))
	in := app.TrainingQuizSubmission{Version: version, Answers: []app.TrainingAnswer{}}
	for _, qid := range f["question"] {
		choice, err := strconv.Atoi(f.Get("q-" + qid))
		if err != nil {
			continue // unanswered: the service names the missing answers
		}
		in.Answers = append(in.Answers, app.TrainingAnswer{QuestionID: qid, Choice: choice})
	}
	c, err := s.app.SubmitTrainingQuiz(r.Context(), id(r), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		v.Form, v.Status = f, http.StatusBadRequest
		return s.uiTrainingModule(w, r, v)
	}
	return redirect(w, r, "/training/completions/"+url.PathEscape(c.ID))
}

func (s *Server) uiTrainingComplete(w http.ResponseWriter, r *http.Request, v *view) error {
	c, err := s.app.CompleteTrainingModule(r.Context(), id(r))
	if err != nil {
		return err
	}
	return redirect(w, r, "/training/completions/"+url.PathEscape(c.ID))
}

func (s *Server) uiTrainingResult(w http.ResponseWriter, r *http.Request, v *view) error {
	c, err := s.app.GetTrainingCompletion(r.Context(), id(r))
	if err != nil {
		return err
	}
	v.Title, v.Section = "Result: "+c.ModuleTitle, "training"
	v.Data = map[string]any{"C": c}
	return s.page(w, r, "training_result", v)
}

func (s *Server) uiTrainingCertificate(w http.ResponseWriter, r *http.Request, v *view) error {
	pdf, err := s.app.TrainingCertificate(r.Context(), id(r))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": pdf.Filename}))
	_, _ = w.Write(pdf.Content)
	return nil
}

// verifyTrainingTemplate is the public certificate verification page.
var verifyTrainingTemplate = template.Must(template.New("verify").Parse(httpx.LayoutHTML + `{{define "content"}}{{with .Data}}
{{if .Found}}<section><h2>Certificate verified</h2>
<p class="notice">This certificate was issued by {{.OrgName}} through its compliance appliance.</p>
<table><tr><th scope="row">Name</th><td>{{.Name}}</td></tr><tr><th scope="row">Training</th><td>{{.Module}} (version {{.Version}})</td></tr>
<tr><th scope="row">Completed</th><td>{{.Date}}</td></tr><tr><th scope="row">Valid until</th><td>{{.Until}}</td></tr></table></section>
{{else}}<section><h2>Certificate not found</h2><p class="error">No certificate has this verification code: it was not found. Check the code on the certificate and try again.</p></section>{{end}}
{{end}}{{end}}`))

// verifyTrainingPage confirms a certificate by its verification code, for
// anyone holding it (no account). Codes carry 160 random bits; the public
// pages' rate limit applies.
func (s *Server) verifyTrainingPage(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.VerifyTrainingCertificate(r.Context(), mux.Vars(r)["code"])
	page := httpx.Page{Title: "Training certificate", Heading: "Training certificate verification"}
	if errors.Is(err, app.ErrNotFound) {
		page.Data = map[string]any{"Found": false}
		return httpx.RenderPage(w, http.StatusNotFound, verifyTrainingTemplate, page)
	}
	if err != nil {
		return err
	}
	until := ""
	if c.ExpiresAt != nil {
		until = c.ExpiresAt.Format("2 January 2006")
	}
	page.Data = map[string]any{"Found": true, "Name": c.PersonName, "Module": c.ModuleTitle, "Version": fmt.Sprint(c.ModuleVersion),
		"Date": c.CompletedAt.Format("2 January 2006"), "Until": until, "OrgName": c.OrganizationName}
	return httpx.RenderPage(w, http.StatusOK, verifyTrainingTemplate, page)
}
