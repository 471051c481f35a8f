package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// uiFrameworkEditorRoutes registers custom frameworks (create, edit), added
// requirements, requirement pages with their control mapping, and the
// evidence-task templates. Everyone reads; owners and admins change. It is
// registered before /frameworks/{id} so that /frameworks/new is not taken
// for a framework id.
func (s *Server) uiFrameworkEditorRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/frameworks/new", uiManage, s.uiNewFramework)
	page("POST", "/frameworks", uiManage, s.uiCreateFramework)
	page("GET", "/frameworks/{id}/edit", uiManage, s.uiEditFramework)
	page("POST", "/frameworks/{id}", uiManage, s.uiUpdateFramework)
	page("POST", "/frameworks/{id}/requirements", uiManage, s.uiAddRequirement)
	page("GET", "/frameworks/{id}/requirements/{requirementId}", uiSignedIn, s.uiRequirement)
	page("POST", "/frameworks/{id}/requirements/{requirementId}/controls", uiManage, s.uiMapRequirement)

	page("GET", "/task-templates", uiSignedIn, s.uiTaskTemplates)
	page("GET", "/task-templates/new", uiManage, s.uiNewTaskTemplate)
	page("POST", "/task-templates", uiManage, s.uiCreateTaskTemplate)
	page("GET", "/task-templates/{id}", uiSignedIn, s.uiTaskTemplate)
	page("POST", "/task-templates/{id}", uiManage, s.uiUpdateTaskTemplate)
	page("POST", "/task-templates/{id}/delete", uiManage, s.uiDeleteTaskTemplate)
}

// fwFlashes are the confirmations of these pages (?done=code); the shared
// codes of flashes apply too.
var fwFlashes = map[string]string{
	"requirement-added": "Requirement added. Map it to the controls that satisfy it below.",
	"mapped":            "Mapping saved: the controls now serve this requirement.",
	"template-created":  "Task template created. Enabling its framework makes it a task (at once, if the framework is enabled).",
	"template-saved":    "Task template saved. Tasks already made from it stay as they are.",
	"template-deleted":  "Task template deleted. Tasks already made from it stay.",
}

func fwFlash(r *http.Request) string {
	if m := fwFlashes[r.URL.Query().Get("done")]; m != "" {
		return m
	}
	return flash(r)
}

// requirementPath is the page of a requirement.
func RequirementPath(frameworkID, requirementID string) string {
	return "/frameworks/" + url.PathEscape(frameworkID) + "/requirements/" + url.PathEscape(requirementID)
}

// editable reports whether requirements can be added to a framework:
// custom frameworks and the built-in outlines.
func editable(f *app.Framework) bool { return f.Custom || f.Coverage == app.CoverageOutline }

// --- custom frameworks ---

// frameworkForm maps the framework form to the app's input. Blank optional
// fields are sent as empty (cleared); a blank slug on create lets the app
// derive one from the name.
func frameworkForm(f url.Values, create bool) app.FrameworkInput {
	in := app.FrameworkInput{Name: app.Ptr(f.Get("name")), ShortName: app.Ptr(f.Get("shortName")),
		Version: app.Ptr(f.Get("version")), Description: app.Ptr(f.Get("description"))}
	if slug := strings.TrimSpace(f.Get("slug")); slug != "" || !create {
		in.Slug = app.Ptr(slug)
	}
	return in
}

func (s *Server) frameworkFormPage(w http.ResponseWriter, r *http.Request, v *view, f *app.Framework) error {
	v.Section = "frameworks"
	if f == nil {
		v.Title = "New custom framework"
	} else {
		v.Title = "Edit " + f.Name
		if v.Form == nil {
			v.Form = url.Values{"name": {f.Name}, "shortName": {f.ShortName}, "version": {f.Version}, "slug": {f.Slug},
				"description": {f.Description}}
		}
	}
	v.Data = map[string]any{"F": f}
	return s.page(w, r, "framework_form", v)
}

func (s *Server) uiNewFramework(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.frameworkFormPage(w, r, v, nil)
}

func (s *Server) uiCreateFramework(w http.ResponseWriter, r *http.Request, v *view) error {
	f, err := s.app.CreateCustomFramework(r.Context(), frameworkForm(r.PostForm, true))
	if err != nil {
		if formErrors(err, v, r) {
			return s.frameworkFormPage(w, r, v, nil)
		}
		if errors.Is(err, app.ErrConflict) {
			// The slug is taken by another custom framework: say so at the field.
			v.Errors, v.Form, v.Status = map[string]string{"slug": conflictMsg(err)}, r.PostForm, http.StatusUnprocessableEntity
			return s.frameworkFormPage(w, r, v, nil)
		}
		return err
	}
	return redirect(w, r, "/frameworks/"+url.PathEscape(f.ID)+"?done=created")
}

// conflictMsg is the client-safe message of a conflict.
func conflictMsg(err error) string {
	var pe *app.PublicError
	if errors.As(err, &pe) {
		return pe.Msg
	}
	return "This value is already taken."
}

// customFramework loads a framework for editing: built-in ones are refused
// as the app refuses to change them.
func (s *Server) customFramework(r *http.Request) (*app.Framework, error) {
	f, err := s.app.GetFramework(r.Context(), id(r))
	if err != nil {
		return nil, err
	}
	if !f.Custom {
		return nil, app.Errorf(app.ErrConflict, "built-in frameworks cannot be changed; outline frameworks take added requirements")
	}
	return f, nil
}

func (s *Server) uiEditFramework(w http.ResponseWriter, r *http.Request, v *view) error {
	f, err := s.customFramework(r)
	if err != nil {
		return err
	}
	return s.frameworkFormPage(w, r, v, f)
}

func (s *Server) uiUpdateFramework(w http.ResponseWriter, r *http.Request, v *view) error {
	// The app decides: it refuses built-in frameworks with a conflict.
	f, err := s.app.UpdateCustomFramework(r.Context(), id(r), frameworkForm(r.PostForm, false))
	if err != nil {
		isForm := formErrors(err, v, r)
		if !isForm && errors.Is(err, app.ErrConflict) {
			if cur, gerr := s.app.GetFramework(r.Context(), id(r)); gerr == nil && cur.Custom {
				v.Errors, v.Form, v.Status = map[string]string{"slug": conflictMsg(err)}, r.PostForm, http.StatusUnprocessableEntity
				isForm = true
			}
		}
		if !isForm {
			return err
		}
		cur, err := s.customFramework(r)
		if err != nil {
			return err
		}
		return s.frameworkFormPage(w, r, v, cur)
	}
	return redirect(w, r, "/frameworks/"+url.PathEscape(f.ID)+"?done=saved")
}

// --- requirements ---

func (s *Server) uiAddRequirement(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.RequirementInput{Ref: app.Ptr(f.Get("ref")), Title: app.Ptr(f.Get("title")),
		Description: app.Ptr(f.Get("description")), ParentRef: app.Ptr(f.Get("parentRef")),
		Assessable: app.Ptr(f.Get("kind") != "heading")}
	req, err := s.app.AddRequirement(r.Context(), id(r), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.uiFramework(w, r, v)
	}
	return redirect(w, r, RequirementPath(req.FrameworkID, req.ID)+"?done=requirement-added")
}

// maxControlChoices caps the checkbox list of the mapping form; a search
// narrows it.
const maxControlChoices = 100

func (s *Server) requirementPage(w http.ResponseWriter, r *http.Request, v *view) error {
	fw, err := s.app.GetFramework(r.Context(), id(r))
	if err != nil {
		return err
	}
	req, err := s.app.GetRequirement(r.Context(), fw.ID, varsOf(r)["requirementId"])
	if err != nil {
		return err
	}
	// The mapped controls, by id; the choices, one page of the controls
	// matching the search: the page never loads every control.
	mapped := map[string]bool{}
	var shown []app.Control
	hidden := 0
	for _, cid := range req.ControlIDs {
		mapped[cid] = true
		c, err := s.app.GetControl(r.Context(), cid)
		switch {
		case errors.Is(err, app.ErrNotFound):
			hidden++ // not visible to the role (employees see the controls they own)
		case err != nil:
			return err
		default:
			shown = append(shown, *c)
		}
	}
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	needle := strings.ToLower(q)
	all, err := s.app.ListControls(r.Context(), app.ControlFilter{Page: app.Page{Page: 1, PerPage: 1}})
	if err != nil {
		return err
	}
	found, err := s.app.ListControls(r.Context(), app.ControlFilter{Search: q,
		Page: app.Page{Page: 1, PerPage: min(maxControlChoices+len(mapped), app.MaxPerPage)}})
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	var choices []app.Control
	for _, c := range found.Items {
		if !mapped[c.ID] && len(choices) < maxControlChoices {
			choices = append(choices, c)
		}
	}
	matches := found.Total
	for _, c := range shown {
		if needle == "" || strings.Contains(strings.ToLower(c.Code+" "+c.Name), needle) {
			matches-- // mapped already, so not a choice
		}
	}
	tpls, err := s.app.ListTaskTemplates(r.Context(), fw.ID)
	if err != nil {
		return err
	}
	var mine []app.TaskTemplate
	for _, t := range tpls {
		if t.RequirementID == req.ID {
			mine = append(mine, t)
		}
	}
	checked := map[string]bool{}
	for _, cid := range v.Form["controlIds"] {
		checked[cid] = true
	}
	title := req.Ref
	if req.Title != "" {
		title += " " + req.Title
	}
	v.Title, v.Section = title+" · "+fw.Name, "frameworks"
	if v.Flash == "" {
		v.Flash = fwFlash(r)
	}
	v.Data = map[string]any{"F": fw, "R": req, "Mapped": shown, "Hidden": hidden, "Choices": choices, "Matches": matches,
		"More": matches - len(choices), "Q": q, "ControlTotal": all.Total, "Templates": mine, "Checked": checked}
	return s.page(w, r, "requirement", v)
}

func (s *Server) uiRequirement(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.requirementPage(w, r, v)
}

func (s *Server) uiMapRequirement(w http.ResponseWriter, r *http.Request, v *view) error {
	req, err := s.app.MapRequirementControls(r.Context(), id(r), varsOf(r)["requirementId"], r.PostForm["controlIds"])
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		if v.Errors["controlIds"] != "" && len(r.PostForm["controlIds"]) == 0 {
			v.Errors["controlIds"] = "Choose at least one control."
		}
		return s.requirementPage(w, r, v)
	}
	return redirect(w, r, RequirementPath(req.FrameworkID, req.ID)+"?done=mapped")
}

// --- task templates ---

// templateRow is a task template with the names it refers to.
type templateRow struct {
	T           app.TaskTemplate
	Framework   string
	Requirement *app.Requirement
}

// frameworkRequirements returns every requirement of a framework.
func (s *Server) frameworkRequirements(r *http.Request, frameworkID string) ([]app.Requirement, error) {
	l, err := s.app.ListRequirements(r.Context(), frameworkID, app.Page{Page: 1, PerPage: 1 << 20})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

func (s *Server) allFrameworks(r *http.Request) ([]app.Framework, error) {
	l, err := s.app.ListFrameworks(r.Context(), nil, app.Page{Page: 1, PerPage: app.MaxPerPage})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// templateRows names each template's framework and requirement.
func (s *Server) templateRows(r *http.Request, tpls []app.TaskTemplate, fws []app.Framework) ([]templateRow, error) {
	names := map[string]string{}
	for _, f := range fws {
		names[f.ID] = f.Name
	}
	reqs := map[string]map[string]*app.Requirement{}
	rows := make([]templateRow, 0, len(tpls))
	for _, t := range tpls {
		byID, ok := reqs[t.FrameworkID]
		if !ok {
			list, err := s.frameworkRequirements(r, t.FrameworkID)
			if err != nil && !errors.Is(err, app.ErrNotFound) {
				return nil, err
			}
			byID = make(map[string]*app.Requirement, len(list))
			for i := range list {
				byID[list[i].ID] = &list[i]
			}
			reqs[t.FrameworkID] = byID
		}
		rows = append(rows, templateRow{T: t, Framework: names[t.FrameworkID], Requirement: byID[t.RequirementID]})
	}
	return rows, nil
}

func (s *Server) uiTaskTemplates(w http.ResponseWriter, r *http.Request, v *view) error {
	fwID := r.URL.Query().Get("framework")
	fws, err := s.allFrameworks(r)
	if err != nil {
		return err
	}
	lv, rows, done, err := runList(w, r, v, taskTemplateList(sliceFetch(func() ([]templateRow, error) {
		tpls, err := s.app.ListTaskTemplates(r.Context(), fwID)
		if err != nil {
			return nil, err
		}
		return s.templateRows(r, tpls, fws)
	})))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Title, v.Section = "Task templates", "frameworks"
	if v.Flash == "" {
		v.Flash = fwFlash(r)
	}
	lv.EmptyText = "No task templates yet. An owner or admin creates them."
	if v.Can("manage") {
		lv.EmptyText = "No task templates yet. Create one for the evidence a requirement needs, for example a quarterly access review; it becomes a task when the framework is enabled."
		lv.EmptyHref, lv.EmptyAction = "/task-templates/new", "New task template"
	}
	v.Data = map[string]any{"Rows": rows, "List": lv, "Frameworks": fws, "Framework": fwID}
	return s.page(w, r, "task_templates", v)
}

// newTemplatePage is the create form: first the framework, then one of its
// assessable requirements and the task's fields.
func (s *Server) newTemplatePage(w http.ResponseWriter, r *http.Request, v *view, fwID, reqID string) error {
	fws, err := s.allFrameworks(r)
	if err != nil {
		return err
	}
	var fw *app.Framework
	var reqs []app.Requirement
	if fwID != "" {
		if fw, err = s.app.GetFramework(r.Context(), fwID); err != nil {
			if !errors.Is(err, app.ErrNotFound) {
				return err
			}
			fw = nil
			if v.Errors == nil {
				v.Errors = map[string]string{}
			}
			v.Errors["frameworkId"] = "Choose a framework from the list."
			v.Status = http.StatusUnprocessableEntity
		} else {
			all, err := s.frameworkRequirements(r, fw.ID)
			if err != nil {
				return err
			}
			for _, q := range all {
				if q.Assessable {
					reqs = append(reqs, q)
				}
			}
		}
	}
	v.Title, v.Section = "New task template", "frameworks"
	v.Data = map[string]any{"Frameworks": fws, "F": fw, "Reqs": reqs, "Requirement": reqID,
		"Frequencies": app.Recurrences, "Departments": app.Departments}
	return s.page(w, r, "task_template_new", v)
}

func (s *Server) uiNewTaskTemplate(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	return s.newTemplatePage(w, r, v, q.Get("framework"), q.Get("requirement"))
}

// templateOpt maps a select to a PATCH value: blank clears it.
func templateOpt(f url.Values, name string) app.Opt[string] {
	if x := strings.TrimSpace(f.Get(name)); x != "" {
		return app.Some(x)
	}
	return app.Opt[string]{Set: true, Null: true}
}

func (s *Server) uiCreateTaskTemplate(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.TaskTemplateInput{FrameworkID: app.Ptr(f.Get("frameworkId")), RequirementID: app.Ptr(f.Get("requirementId")),
		Name: app.Ptr(f.Get("name")), Description: app.Ptr(f.Get("description")),
		Frequency: templateOpt(f, "frequency"), Department: templateOpt(f, "department")}
	t, err := s.app.CreateTaskTemplate(r.Context(), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		fwID := f.Get("frameworkId")
		if v.Errors["frameworkId"] != "" {
			fwID = ""
		}
		return s.newTemplatePage(w, r, v, fwID, f.Get("requirementId"))
	}
	return redirect(w, r, "/task-templates/"+url.PathEscape(t.ID)+"?done=template-created")
}

func (s *Server) templatePage(w http.ResponseWriter, r *http.Request, v *view, t *app.TaskTemplate) error {
	fws, err := s.allFrameworks(r)
	if err != nil {
		return err
	}
	rows, err := s.templateRows(r, []app.TaskTemplate{*t}, fws)
	if err != nil {
		return err
	}
	v.Title, v.Section = "Task template "+t.Name, "frameworks"
	if v.Flash == "" {
		v.Flash = fwFlash(r)
	}
	v.Data = map[string]any{"Row": rows[0], "Frequencies": app.Recurrences, "Departments": app.Departments}
	return s.page(w, r, "task_template", v)
}

func (s *Server) uiTaskTemplate(w http.ResponseWriter, r *http.Request, v *view) error {
	t, err := s.app.GetTaskTemplate(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.templatePage(w, r, v, t)
}

func (s *Server) uiUpdateTaskTemplate(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.TaskTemplateInput{Name: app.Ptr(f.Get("name")), Description: app.Ptr(f.Get("description")),
		Frequency: templateOpt(f, "frequency"), Department: templateOpt(f, "department")}
	t, err := s.app.UpdateTaskTemplate(r.Context(), id(r), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		cur, err := s.app.GetTaskTemplate(r.Context(), id(r))
		if err != nil {
			return err
		}
		return s.templatePage(w, r, v, cur)
	}
	return redirect(w, r, "/task-templates/"+url.PathEscape(t.ID)+"?done=template-saved")
}

func (s *Server) uiDeleteTaskTemplate(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.DeleteTaskTemplate(r.Context(), id(r)); err != nil {
		return err
	}
	return redirect(w, r, "/task-templates?done=template-deleted")
}
