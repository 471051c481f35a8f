package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// integrationOAuthRoutes registers the OAuth, OAuthApps and Variables
// groups and a task's findings from checks. Owners and admins act;
// auditors read. Starting a flow takes a browser session; the callback is
// public (the provider redirects the person's browser to it) and checks
// that the session is the one that started the flow.
func (s *Server) integrationOAuthRoutes(handle routeFunc) {
	handle("GET", "/v1/integrations/oauth/availability", httpx.CanRead, s.getOAuthAvailability)
	handle("POST", "/v1/integrations/oauth/start", httpx.CanManage, s.startIntegrationOAuth)
	handle("GET", "/v1/integrations/oauth/callback", httpx.Public, s.integrationOAuthCallback)
	handle("POST", "/v1/integrations/oauth-errors", httpx.CanManage, s.recordOAuthError)

	handle("GET", "/v1/integrations/oauth/apps", httpx.CanRead, s.listIntegrationOAuthApps)
	handle("GET", "/v1/integrations/oauth/apps/setup/{providerSlug}", httpx.CanRead, s.getIntegrationOAuthSetup)
	handle("POST", "/v1/integrations/oauth/apps", httpx.CanManage, s.saveIntegrationOAuthApp)
	handle("DELETE", "/v1/integrations/oauth/apps/{providerSlug}", httpx.CanManage, s.deleteIntegrationOAuthApp)

	handle("GET", "/v1/integrations/variables/providers/{providerSlug}", httpx.CanRead, s.getProviderVariables)
	handle("GET", "/v1/integrations/variables/connections/{connectionId}", httpx.CanRead, s.getConnectionVariables)
	handle("GET", "/v1/integrations/variables/connections/{connectionId}/options/{variableId}", httpx.CanRead, s.fetchVariableOptions)
	handle("POST", "/v1/integrations/variables/connections/{connectionId}", httpx.CanManage, s.saveConnectionVariables)

	handle("GET", "/v1/integrations/tasks/{taskId}/findings", httpx.CanRead, s.getTaskFindings)
}

func (s *Server) oauthCallbackURL(r *http.Request) string {
	return s.BaseURL(r) + "/v1/integrations/oauth/callback"
}

func (s *Server) getOAuthAvailability(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetOAuthAvailability(r.Context(), r.URL.Query().Get("providerSlug"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) startIntegrationOAuth(w http.ResponseWriter, r *http.Request) error {
	var in app.OAuthStart
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	in.CallbackURL = s.oauthCallbackURL(r)
	v, err := s.app.StartIntegrationOAuth(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) integrationOAuthCallback(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	to := s.app.CompleteIntegrationOAuth(r.Context(), app.OAuthCallback{Code: q.Get("code"), State: q.Get("state"),
		Error: q.Get("error"), ErrorDescription: q.Get("error_description")})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, to, http.StatusFound)
	return nil
}

func (s *Server) recordOAuthError(w http.ResponseWriter, r *http.Request) error {
	var in app.OAuthErrorInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.RecordOAuthError(r.Context(), in)
	if err != nil {
		return err
	}
	return ok(w, http.StatusCreated, map[string]any{"recorded": true, "id": v.ID, "createdAt": v.CreatedAt}, nil)
}

func (s *Server) listIntegrationOAuthApps(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListIntegrationOAuthApps(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(l, p))
	return nil
}

func (s *Server) getIntegrationOAuthSetup(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetIntegrationOAuthSetup(r.Context(), pathID(r, "providerSlug"), s.oauthCallbackURL(r))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) saveIntegrationOAuthApp(w http.ResponseWriter, r *http.Request) error {
	var in app.IntegrationOAuthAppInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.SaveIntegrationOAuthApp(r.Context(), in)
	if err != nil {
		return err
	}
	return ok(w, http.StatusCreated, map[string]any{"success": true, "oauthApp": v}, nil)
}

func (s *Server) deleteIntegrationOAuthApp(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteIntegrationOAuthApp(r.Context(), pathID(r, "providerSlug")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) getProviderVariables(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetProviderVariables(r.Context(), pathID(r, "providerSlug"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) getConnectionVariables(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetConnectionVariables(r.Context(), pathID(r, "connectionId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) fetchVariableOptions(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.FetchVariableOptions(r.Context(), pathID(r, "connectionId"), pathID(r, "variableId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) saveConnectionVariables(w http.ResponseWriter, r *http.Request) error {
	var in app.VariablesSave
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.SaveConnectionVariables(r.Context(), pathID(r, "connectionId"), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getTaskFindings(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.ListTaskFindings(r.Context(), pathID(r, "taskId"), r.URL.Query().Get("status"))
	return ok(w, http.StatusOK, v, err)
}
