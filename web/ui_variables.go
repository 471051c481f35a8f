package web

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
)

// uiVariableRoutes registers the organization's variables: owners, admins
// and auditors read them; owners and admins create and delete them.
func (s *Server) uiVariableRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/variables", uiSignedIn, s.uiVariables)
	page("POST", "/variables", uiManage, s.uiCreateVariable)
	page("POST", "/variables/{id}/delete", uiManage, s.uiDeleteVariable)
}

func (s *Server) uiVariables(w http.ResponseWriter, r *http.Request, v *view) error {
	pg := uiPage(r, 50)
	l, err := s.app.ListVariables(r.Context(), app.VariableFilter{Search: r.URL.Query().Get("q"), Page: pg})
	if err != nil {
		return err
	}
	v.Title, v.Section = "Variables", "settings"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = map[string]any{"Variables": l.Items, "Pager": newPager(r, pg, l.Total), "Q": r.URL.Query().Get("q")}
	return s.page(w, r, "variables", v)
}

func (s *Server) uiCreateVariable(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.VariableInput{Name: app.Ptr(f.Get("name")), Value: app.Ptr(f.Get("value")), Description: app.Ptr(f.Get("description"))}
	if _, err := s.app.CreateVariable(r.Context(), in); err != nil {
		if !formErrors(err, v, r) {
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
