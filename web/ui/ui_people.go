package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/compliance-appliance/compliance/app"
)

// uiPeopleRoutes registers adding people and changing their role or
// active flag (owner and admin).
func (s *Server) uiPeopleRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("POST", "/people", uiManage, s.uiCreatePerson)
	page("POST", "/people/{id}", uiManage, s.uiUpdatePerson)
}

// memberRoles are the roles a person can be given here: ownership moves
// only through the ownership transfer.
func memberRoles() []string {
	out := make([]string, 0, len(app.Roles))
	for _, ro := range app.Roles {
		if ro != app.RoleOwner {
			out = append(out, string(ro))
		}
	}
	return out
}

// limitError shows a plan limit as the form's own message; it returns
// false for any other error.
func limitError(err error, v *view, r *http.Request) bool {
	var le *app.LimitError
	if !errors.As(err, &le) {
		return false
	}
	v.Errors = map[string]string{"form": "The " + le.Plan + " plan allows " + strconv.Itoa(le.Allowed) + " " + le.Limit +
		", and that many are in use. Deactivate someone or move to a larger plan first."}
	v.Form = r.PostForm
	v.Status = http.StatusForbidden
	return true
}

func (s *Server) uiCreatePerson(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	p, err := s.app.CreatePerson(r.Context(), app.PersonCreate{Name: f.Get("name"), Email: f.Get("email"), Role: f.Get("role")})
	if err != nil {
		if !formErrors(err, v, r) && !limitError(err, v, r) {
			var pe *app.PublicError
			if !errors.Is(err, app.ErrConflict) || !errors.As(err, &pe) {
				return err
			}
			// Already a member: the message belongs to the email field.
			v.Errors, v.Form, v.Status = map[string]string{"email": pe.Msg}, r.PostForm, http.StatusConflict
		}
		return s.uiPeople(w, r, v)
	}
	return redirect(w, r, "/people/"+url.PathEscape(p.ID)+"?done=created")
}

func (s *Server) uiUpdatePerson(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.PersonPatch{IsActive: app.Ptr(f.Get("isActive") == "on")}
	if ro := f.Get("role"); ro != "" {
		in.Role = app.Ptr(ro)
	}
	p, err := s.app.UpdatePerson(r.Context(), id(r), in)
	if err != nil {
		if !formErrors(err, v, r) && !limitError(err, v, r) {
			return err
		}
		return s.uiPerson(w, r, v)
	}
	return redirect(w, r, "/people/"+url.PathEscape(p.ID)+"?done=saved")
}
