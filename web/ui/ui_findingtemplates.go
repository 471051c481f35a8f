package ui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// uiFindingTemplateRoutes registers the finding templates pages: everyone
// reads them, owners and admins create, edit and delete them.
func (s *Server) uiFindingTemplateRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/finding-templates", uiSignedIn, s.uiFindingTemplates)
	page("POST", "/finding-templates", uiManage, s.uiCreateFindingTemplate)
	page("GET", "/finding-templates/{id}/edit", uiManage, s.uiEditFindingTemplate)
	page("POST", "/finding-templates/{id}", uiManage, s.uiUpdateFindingTemplate)
	page("POST", "/finding-templates/{id}/delete", uiManage, s.uiDeleteFindingTemplate)
}

// findingTemplates lists every template of the organization, in order.
func (s *Server) findingTemplates(r *http.Request) ([]app.FindingTemplate, error) {
	l, err := s.app.ListFindingTemplates(r.Context(), app.Page{Page: 1, PerPage: app.MaxPerPage})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

func (s *Server) uiFindingTemplates(w http.ResponseWriter, r *http.Request, v *view) error {
	form := v.Form
	lv, items, done, err := runList(w, r, v, findingTemplateList(func(p app.Page) ([]app.FindingTemplate, int, error) {
		l, err := s.app.ListFindingTemplates(r.Context(), p)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = form
	v.Title, v.Section = "Finding templates", "findings"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	lv.EmptyText = "No finding templates yet. An owner or admin creates them for findings that recur."
	if v.Can("manage") {
		lv.EmptyText = "No finding templates yet. Create one below for findings that recur."
	}
	v.Data = map[string]any{"Templates": items, "List": lv, "Severities": app.FindingSeverities, "Classes": app.FindingClasses, "Types": app.FindingTypes,
		"Blank": &app.FindingTemplate{}}
	return s.page(w, r, "finding_templates", v)
}

// templateOrder reads the order field: blank leaves it unset; anything
// but a whole number is a field error.
func templateOrder(f url.Values, v *view) (*int, bool) {
	o := strings.TrimSpace(f.Get("order"))
	if o == "" {
		return nil, true
	}
	n, err := strconv.Atoi(o)
	if err != nil {
		v.Errors, v.Form, v.Status = map[string]string{"order": "order must be a whole number"}, f, http.StatusUnprocessableEntity
		return nil, false
	}
	return &n, true
}

func (s *Server) uiCreateFindingTemplate(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	opt := func(n string) app.Opt[string] {
		if s := strings.TrimSpace(f.Get(n)); s != "" {
			return app.Some(s)
		}
		return app.Opt[string]{}
	}
	in := app.FindingTemplateInput{Title: app.Ptr(f.Get("title")), Content: app.Ptr(f.Get("content")), Category: app.Ptr(f.Get("category")),
		Type: opt("type"), Severity: opt("severity"), FindingClass: opt("findingClass")}
	var ok bool
	if in.Order, ok = templateOrder(f, v); !ok {
		return s.uiFindingTemplates(w, r, v)
	}
	if _, err := s.app.CreateFindingTemplate(r.Context(), in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.uiFindingTemplates(w, r, v)
	}
	return redirect(w, r, "/finding-templates?done=created")
}

// findingTemplatePage shows one template's edit form.
func (s *Server) findingTemplatePage(w http.ResponseWriter, r *http.Request, v *view, t *app.FindingTemplate) error {
	v.Title, v.Section = "Edit finding template", "findings"
	v.Data = map[string]any{"T": t, "Severities": app.FindingSeverities, "Classes": app.FindingClasses, "Types": app.FindingTypes}
	return s.page(w, r, "finding_template_edit", v)
}

func (s *Server) uiEditFindingTemplate(w http.ResponseWriter, r *http.Request, v *view) error {
	t, err := s.app.GetFindingTemplate(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.findingTemplatePage(w, r, v, t)
}

// uiUpdateFindingTemplate saves every field of the form: a blank
// severity, class or framework type clears it, a blank order keeps it.
func (s *Server) uiUpdateFindingTemplate(w http.ResponseWriter, r *http.Request, v *view) error {
	t, err := s.app.GetFindingTemplate(r.Context(), id(r))
	if err != nil {
		return err
	}
	f := r.PostForm
	in := app.FindingTemplateInput{Title: app.Ptr(f.Get("title")), Content: app.Ptr(f.Get("content")), Category: app.Ptr(f.Get("category")),
		Type: optional(f, "type"), Severity: optional(f, "severity"), FindingClass: optional(f, "findingClass")}
	var ok bool
	if in.Order, ok = templateOrder(f, v); !ok {
		return s.findingTemplatePage(w, r, v, t)
	}
	if _, err := s.app.UpdateFindingTemplate(r.Context(), t.ID, in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.findingTemplatePage(w, r, v, t)
	}
	return redirect(w, r, "/finding-templates?done=saved#tpl-"+url.PathEscape(t.ID))
}

// uiDeleteFindingTemplate deletes a template; findings made from it keep
// what they took.
func (s *Server) uiDeleteFindingTemplate(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.DeleteFindingTemplate(r.Context(), id(r)); err != nil {
		return err
	}
	return redirect(w, r, "/finding-templates?done=deleted")
}

// templateForm fills the new finding form from a template chosen with
// ?templateId= (the form still sends the template's id, so the finding
// records where it came from).
func templateForm(t *app.FindingTemplate) url.Values {
	f := url.Values{"templateId": {t.ID}, "title": {t.Title}, "description": {t.Content}}
	for n, p := range map[string]*string{"severity": t.Severity, "findingClass": t.FindingClass, "type": t.Type} {
		if p != nil {
			f.Set(n, *p)
		}
	}
	return f
}
