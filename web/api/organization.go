package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/gorilla/mux"
)

// organizationRoutes registers the routes of the handlers in this file.
func (s *Server) organizationRoutes(handle routeFunc) {
	handle("GET", "/v1/organization", httpx.CanRead, s.getOrganization)
	handle("PATCH", "/v1/organization", httpx.CanManage, s.updateOrganization)
	handle("GET", "/v1/organization/branding", httpx.CanRead, s.getBranding)
	handle("PATCH", "/v1/organization/branding", httpx.CanManage, s.updateBranding)
	handle("POST", "/v1/organization/transfer-ownership", httpx.CanOwn, s.transferOwnership)
}

func (s *Server) getOrganization(w http.ResponseWriter, r *http.Request) error {
	o, err := s.app.GetOrganization(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, o)
	return nil
}

func (s *Server) updateOrganization(w http.ResponseWriter, r *http.Request) error {
	var in app.OrganizationPatch
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	o, err := s.app.UpdateOrganization(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, o)
	return nil
}

func (s *Server) getBranding(w http.ResponseWriter, r *http.Request) error {
	o, err := s.app.GetOrganization(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, o.Branding)
	return nil
}

func (s *Server) updateBranding(w http.ResponseWriter, r *http.Request) error {
	var in app.BrandingPatch
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	o, err := s.app.UpdateBranding(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, o.Branding)
	return nil
}

func (s *Server) transferOwnership(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		NewOwnerID string `json:"newOwnerId"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	p, err := s.app.TransferOwnership(r.Context(), in.NewOwnerID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, p)
	return nil
}

// pathID returns a path variable.
func pathID(r *http.Request, name string) string { return mux.Vars(r)[name] }
