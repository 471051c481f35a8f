package api

import (
	"io"
	"net/http"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// integrationRoutes registers the Connections and Checks groups and the
// custom provider's push endpoint. Owners and admins act; auditors read
// (the services keep employees and contractors out).
func (s *Server) integrationRoutes(handle routeFunc) {
	handle("GET", "/v1/integrations/connections/providers", httpx.CanRead, s.listIntegrationProviders)
	handle("GET", "/v1/integrations/connections/providers/{providerSlug}", httpx.CanRead, s.getIntegrationProvider)
	handle("GET", "/v1/integrations/connections", httpx.CanRead, s.listConnections)
	handle("POST", "/v1/integrations/connections", httpx.CanManage, s.createConnection)
	handle("GET", "/v1/integrations/connections/{id}", httpx.CanRead, s.getConnection)
	handle("PATCH", "/v1/integrations/connections/{id}", httpx.CanManage, s.updateConnection)
	handle("DELETE", "/v1/integrations/connections/{id}", httpx.CanManage, s.deleteConnection)
	handle("POST", "/v1/integrations/connections/{id}/test", httpx.CanManage, s.testConnection)
	handle("POST", "/v1/integrations/connections/{id}/pause", httpx.CanManage, s.pauseConnection)
	handle("POST", "/v1/integrations/connections/{id}/resume", httpx.CanManage, s.resumeConnection)
	handle("POST", "/v1/integrations/connections/{id}/disconnect", httpx.CanManage, s.disconnectConnection)
	handle("GET", "/v1/integrations/connections/{id}/services", httpx.CanRead, s.getConnectionServices)
	handle("PUT", "/v1/integrations/connections/{id}/services", httpx.CanManage, s.updateConnectionServices)
	handle("PUT", "/v1/integrations/connections/{id}/credentials", httpx.CanManage, s.updateConnectionCredentials)
	handle("POST", "/v1/integrations/connections/{id}/push-token", httpx.CanManage, s.rotatePushToken)
	handle("POST", "/v1/integrations/connections/{id}/webhook-secret", httpx.CanManage, s.rotateConnectionWebhookSecret)

	handle("GET", "/v1/integrations/checks/providers/{providerSlug}", httpx.CanRead, s.listProviderChecks)
	handle("GET", "/v1/integrations/checks/connections/{connectionId}", httpx.CanRead, s.listConnectionChecks)
	handle("POST", "/v1/integrations/checks/connections/{connectionId}/run", httpx.CanManage, s.runConnectionChecks)
	handle("POST", "/v1/integrations/checks/connections/{connectionId}/run/{checkId}", httpx.CanManage, s.runSingleCheck)
	handle("GET", "/v1/integrations/checks/connections/{connectionId}/runs", httpx.CanRead, s.listCheckRuns)
	handle("GET", "/v1/integrations/checks/connections/{connectionId}/exceptions", httpx.CanRead, s.listCheckExceptions)
	handle("POST", "/v1/integrations/checks/connections/{connectionId}/exceptions", httpx.CanManage, s.createCheckException)
	handle("DELETE", "/v1/integrations/checks/exceptions/{exceptionId}", httpx.CanManage, s.deleteCheckException)
	handle("GET", "/v1/integrations/checks/runs/{checkRunId}", httpx.CanRead, s.getCheckRun)
	handle("GET", "/v1/integrations/checks/runs/{checkRunId}/results", httpx.CanRead, s.listCheckRunResults)

	// Authenticated by the connection's push token or webhook signature,
	// not an API key.
	handle("POST", "/v1/integrations/push/{connectionId}", httpx.Public, s.pushCheckResults)
	handle("POST", "/v1/integrations/webhooks/{providerSlug}/{connectionId}", httpx.Public, s.receiveProviderWebhook)
}

func (s *Server) listIntegrationProviders(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListIntegrationProviders(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(l, p))
	return nil
}

func (s *Server) getIntegrationProvider(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetIntegrationProvider(r.Context(), pathID(r, "providerSlug"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) listConnections(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListConnections(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(l, p))
	return nil
}

func (s *Server) createConnection(w http.ResponseWriter, r *http.Request) error {
	var in app.ConnectionCreate
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateConnection(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getConnection(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetConnection(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) updateConnection(w http.ResponseWriter, r *http.Request) error {
	var in app.ConnectionPatch
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateConnection(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) deleteConnection(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteConnection(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) testConnection(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.TestConnection(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) pauseConnection(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.PauseConnection(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) resumeConnection(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.ResumeConnection(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) disconnectConnection(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.DisconnectConnection(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) getConnectionServices(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetConnectionServices(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) updateConnectionServices(w http.ResponseWriter, r *http.Request) error {
	var in app.ServicesUpdate
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateConnectionServices(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) updateConnectionCredentials(w http.ResponseWriter, r *http.Request) error {
	var in app.CredentialsUpdate
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateConnectionCredentials(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) rotatePushToken(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.RotatePushToken(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) listProviderChecks(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.ListProviderChecks(r.Context(), pathID(r, "providerSlug"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) listConnectionChecks(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.ListConnectionChecks(r.Context(), pathID(r, "connectionId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) runConnectionChecks(w http.ResponseWriter, r *http.Request) error {
	var in app.CheckRunRequest
	if r.ContentLength != 0 {
		if err := httpx.Decode(r, &in); err != nil {
			return err
		}
	}
	check := ""
	if in.CheckID != nil {
		check = strings.TrimSpace(*in.CheckID)
	}
	v, err := s.app.RunConnectionChecks(r.Context(), pathID(r, "connectionId"), check)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) runSingleCheck(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.RunConnectionChecks(r.Context(), pathID(r, "connectionId"), pathID(r, "checkId"))
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) listCheckRuns(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListCheckRuns(r.Context(), app.CheckRunFilter{ConnectionID: pathID(r, "connectionId"), CheckID: r.URL.Query().Get("checkId"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getCheckRun(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetCheckRun(r.Context(), pathID(r, "checkRunId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) listCheckRunResults(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListCheckResults(r.Context(), app.CheckResultFilter{RunID: pathID(r, "checkRunId"), CheckID: q.Get("checkId"),
		Status: q.Get("status"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) listCheckExceptions(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListCheckExceptions(r.Context(), pathID(r, "connectionId"))
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(l, p))
	return nil
}

func (s *Server) createCheckException(w http.ResponseWriter, r *http.Request) error {
	var in app.CheckExceptionCreate
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateCheckException(r.Context(), pathID(r, "connectionId"), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) deleteCheckException(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteCheckException(r.Context(), pathID(r, "exceptionId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// pushCheckResults takes a custom connection's results, authenticated by
// the push token in X-Push-Token (an Authorization header is the API's own
// credential and is checked as such).
func (s *Server) pushCheckResults(w http.ResponseWriter, r *http.Request) error {
	token := strings.TrimSpace(r.Header.Get("X-Push-Token"))
	if token == "" {
		return app.Errorf(app.ErrUnauthenticated, "send the connection's push token in X-Push-Token")
	}
	if _, _, err := s.app.PushTokenContext(r.Context(), pathID(r, "connectionId"), token); err != nil {
		return err
	}
	var in app.PushResults
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.PushCheckResults(r.Context(), pathID(r, "connectionId"), token, in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) rotateConnectionWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.RotateConnectionWebhookSecret(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

// receiveProviderWebhook verifies a provider's webhook over the raw body
// and queues a run.
func (s *Server) receiveProviderWebhook(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	v, err := s.app.ReceiveProviderWebhook(r.Context(), pathID(r, "providerSlug"), pathID(r, "connectionId"),
		app.InboundWebhook{Body: body, Header: r.Header.Get})
	return ok(w, http.StatusAccepted, v, err)
}
