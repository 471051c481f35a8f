package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// integrationAdminRoutes registers the AdminIntegrations group: the
// appliance operator's providers (any other caller is 403).
func (s *Server) integrationAdminRoutes(handle routeFunc) {
	handle("GET", "/v1/admin/integrations", httpx.CanRead, s.adminListIntegrations)
	handle("GET", "/v1/admin/integrations/{providerSlug}", httpx.CanRead, s.adminGetIntegration)
	handle("PATCH", "/v1/admin/integrations/{providerSlug}", httpx.CanRead, s.adminUpdateIntegration)
	handle("POST", "/v1/admin/integrations/credentials", httpx.CanRead, s.adminSavePlatformCredentials)
	handle("DELETE", "/v1/admin/integrations/credentials/{providerSlug}", httpx.CanRead, s.adminDeletePlatformCredentials)
}

func (s *Server) adminListIntegrations(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.AdminListIntegrations(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(l, p))
	return nil
}

func (s *Server) adminGetIntegration(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.AdminGetIntegration(r.Context(), pathID(r, "providerSlug"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) adminUpdateIntegration(w http.ResponseWriter, r *http.Request) error {
	var in app.AdminProviderPatch
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.AdminUpdateIntegration(r.Context(), pathID(r, "providerSlug"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) adminSavePlatformCredentials(w http.ResponseWriter, r *http.Request) error {
	var in app.PlatformCredentialsInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.AdminSavePlatformCredentials(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) adminDeletePlatformCredentials(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.AdminDeletePlatformCredentials(r.Context(), pathID(r, "providerSlug")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
