package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// oauthAppsRoutes registers the routes of the handlers in this file.
func (s *Server) oauthAppsRoutes(handle routeFunc) {
	handle("GET", "/v1/integrations/oauth-apps", httpx.CanKeys, s.listOAuthApps)
	handle("POST", "/v1/integrations/oauth-apps", httpx.CanKeys, s.createOAuthApp)
	handle("GET", "/v1/integrations/oauth-apps/{id}", httpx.CanKeys, s.getOAuthApp)
	handle("PATCH", "/v1/integrations/oauth-apps/{id}", httpx.CanKeys, s.updateOAuthApp)
	handle("POST", "/v1/integrations/oauth-apps/{id}/rotate-secret", httpx.CanKeys, s.rotateOAuthAppSecret)
	handle("DELETE", "/v1/integrations/oauth-apps/{id}", httpx.CanKeys, s.deleteOAuthApp)
	handle("GET", "/v1/oauth/grants", httpx.CanRead, s.listGrants)
	handle("DELETE", "/v1/oauth/grants/{id}", httpx.CanRead, s.revokeGrant)
}

func (s *Server) listOAuthApps(w http.ResponseWriter, r *http.Request) error {
	apps, err := s.app.ListOAuthApps(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteList(w, app.Page{Page: 1, PerPage: max(len(apps), 1)}, app.List[app.OAuthClient]{Items: apps, Total: len(apps)})
	return nil
}

func (s *Server) createOAuthApp(w http.ResponseWriter, r *http.Request) error {
	var in app.OAuthClientInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	c, err := s.app.CreateOAuthApp(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, c)
	return nil
}

func (s *Server) getOAuthApp(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.GetOAuthApp(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) updateOAuthApp(w http.ResponseWriter, r *http.Request) error {
	var in app.OAuthClientInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	c, err := s.app.UpdateOAuthApp(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) rotateOAuthAppSecret(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.RotateOAuthAppSecret(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) deleteOAuthApp(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteOAuthApp(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listGrants(w http.ResponseWriter, r *http.Request) error {
	grants, err := s.app.ListMyGrants(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteList(w, app.Page{Page: 1, PerPage: max(len(grants), 1)}, app.List[app.OAuthGrant]{Items: grants, Total: len(grants)})
	return nil
}

func (s *Server) revokeGrant(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.RevokeMyGrant(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
