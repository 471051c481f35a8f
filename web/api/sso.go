package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// ssoRoutes registers the routes of the handlers in this file.
func (s *Server) ssoRoutes(handle routeFunc) {
	handle("GET", "/v1/organization/sso", httpx.CanAuditRd, s.getSSOSettings)
	handle("PUT", "/v1/organization/sso", httpx.CanManage, s.putSSOSettings)
	handle("POST", "/v1/organization/sso/test", httpx.CanManage, s.testSSO)
}

// SSOCallbackPath is the redirect URI path of OpenID Connect sign-in (the
// page itself is web/ui's).
const SSOCallbackPath = "/sso/oidc/callback"

func (s *Server) ssoView(r *http.Request, st *app.SSOSettings) *app.SSOSettings {
	st.RedirectURI = s.BaseURL(r) + SSOCallbackPath
	app.FillSAMLURLs(st, s.BaseURL(r))
	return st
}

func (s *Server) getSSOSettings(w http.ResponseWriter, r *http.Request) error {
	st, err := s.app.GetSSOSettings(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s.ssoView(r, st))
	return nil
}

func (s *Server) putSSOSettings(w http.ResponseWriter, r *http.Request) error {
	var in app.SSOSettingsInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	st, err := s.app.PutSSOSettings(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s.ssoView(r, st))
	return nil
}

func (s *Server) testSSO(w http.ResponseWriter, r *http.Request) error {
	res, err := s.app.TestSSO(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, res)
	return nil
}
