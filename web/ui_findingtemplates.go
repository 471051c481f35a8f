package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// uiFindingTemplateRoutes registers the finding templates page: everyone
// reads them, owners and admins create them.
func (s *Server) uiFindingTemplateRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/finding-templates", uiSignedIn, s.uiFindingTemplates)
	page("POST", "/finding-templates", uiManage, s.uiCreateFindingTemplate)
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
	ts, err := s.findingTemplates(r)
	if err != nil {
		return err
	}
	v.Title, v.Section = "Finding templates", "findings"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = map[string]any{"Templates": ts, "Severities": app.FindingSeverities, "Classes": app.FindingClasses, "Types": app.FindingTypes}
	return s.page(w, r, "finding_templates", v)
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
	if o := strings.TrimSpace(f.Get("order")); o != "" {
		n, err := strconv.Atoi(o)
		if err != nil {
			v.Errors, v.Form, v.Status = map[string]string{"order": "order must be a whole number"}, f, http.StatusUnprocessableEntity
			return s.uiFindingTemplates(w, r, v)
		}
		in.Order = &n
	}
	if _, err := s.app.CreateFindingTemplate(r.Context(), in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.uiFindingTemplates(w, r, v)
	}
	return redirect(w, r, "/finding-templates?done=created")
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
