package ui

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/compliance-appliance/compliance/app"
)

// uiVariableRoutes registers the organization's variables: owners, admins
// and auditors read them; owners and admins create, edit and delete them.
func (s *Server) uiVariableRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/variables", uiSignedIn, s.uiVariables)
	page("POST", "/variables", uiManage, s.uiCreateVariable)
	page("GET", "/variables/{id}/edit", uiManage, s.uiEditVariable)
	page("POST", "/variables/{id}", uiManage, s.uiUpdateVariable)
	page("POST", "/variables/{id}/delete", uiManage, s.uiDeleteVariable)
}

func (s *Server) uiVariables(w http.ResponseWriter, r *http.Request, v *view) error {
	f := app.VariableFilter{Search: r.URL.Query().Get("q")}
	lv, items, done, err := runList(w, r, v, variableList(func(p app.Page) ([]app.Variable, int, error) {
		f.Page = p
		l, err := s.app.ListVariables(r.Context(), f)
		return l.Items, l.Total, err
	}))
	if done || err != nil {
		return err
	}
	if v.Form == nil {
		v.Form = r.URL.Query()
	}
	v.Title, v.Section = "Variables", "variables"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	lv.EmptyText = "No variables yet. A variable, such as the company's legal name, fills its placeholder in policies."
	if v.Can("manage") {
		lv.EmptyHref, lv.EmptyAction = "#name", "Create a variable"
	}
	v.Data = map[string]any{"Variables": items, "List": lv, "Q": r.URL.Query().Get("q")}
	return s.page(w, r, "variables", v)
}

func (s *Server) uiCreateVariable(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.VariableInput{Name: app.Ptr(f.Get("name")), Value: app.Ptr(f.Get("value")), Description: app.Ptr(f.Get("description"))}
	if _, err := s.app.CreateVariable(r.Context(), in); err != nil {
		if !formErrors(err, v, r) && !nameConflict(err, v, r) {
			return err
		}
		return s.uiVariables(w, r, v)
	}
	return redirect(w, r, "/variables?done=created")
}

func (s *Server) uiDeleteVariable(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.DeleteVariable(r.Context(), id(r)); err != nil {
		return err
	}
	return redirect(w, r, "/variables?done=deleted")
}

// nameConflict shows a name already taken as the name field's message; it
// returns false for any other error.
func nameConflict(err error, v *view, r *http.Request) bool {
	var pe *app.PublicError
	if !errors.Is(err, app.ErrConflict) || !errors.As(err, &pe) {
		return false
	}
	v.Errors, v.Form, v.Status = map[string]string{"name": pe.Msg}, r.PostForm, http.StatusConflict
	return true
}

// variablePage shows one variable's edit form.
func (s *Server) variablePage(w http.ResponseWriter, r *http.Request, v *view, vr *app.Variable) error {
	v.Title, v.Section = "Edit variable", "variables"
	v.Data = map[string]any{"Var": vr}
	return s.page(w, r, "variable_edit", v)
}

func (s *Server) uiEditVariable(w http.ResponseWriter, r *http.Request, v *view) error {
	vr, err := s.app.GetVariable(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.variablePage(w, r, v, vr)
}

// uiUpdateVariable saves the name, value and description; published
// policy versions keep the values they were published with.
func (s *Server) uiUpdateVariable(w http.ResponseWriter, r *http.Request, v *view) error {
	vr, err := s.app.GetVariable(r.Context(), id(r))
	if err != nil {
		return err
	}
	f := r.PostForm
	in := app.VariableInput{Name: app.Ptr(f.Get("name")), Value: app.Ptr(f.Get("value")), Description: app.Ptr(f.Get("description"))}
	if _, err := s.app.UpdateVariable(r.Context(), vr.ID, in); err != nil {
		if !formErrors(err, v, r) && !nameConflict(err, v, r) {
			return err
		}
		return s.variablePage(w, r, v, vr)
	}
	return redirect(w, r, "/variables?done=saved#var-"+url.PathEscape(vr.ID))
}
