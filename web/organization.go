package web

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

func (s *Server) getOrganization(w http.ResponseWriter, r *http.Request) error {
	o, err := s.app.GetOrganization(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

func (s *Server) updateOrganization(w http.ResponseWriter, r *http.Request) error {
	var in app.OrganizationPatch
	if err := decode(r, &in); err != nil {
		return err
	}
	o, err := s.app.UpdateOrganization(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

func (s *Server) getBranding(w http.ResponseWriter, r *http.Request) error {
	o, err := s.app.GetOrganization(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o.Branding)
	return nil
}

func (s *Server) updateBranding(w http.ResponseWriter, r *http.Request) error {
	var in app.BrandingPatch
	if err := decode(r, &in); err != nil {
		return err
	}
	o, err := s.app.UpdateBranding(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o.Branding)
	return nil
}

func (s *Server) transferOwnership(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		NewOwnerID string `json:"newOwnerId"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	p, err := s.app.TransferOwnership(r.Context(), in.NewOwnerID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// pathID returns a path variable.
func pathID(r *http.Request, name string) string { return mux.Vars(r)[name] }
