package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// cloudSecurityRoutes registers the CloudSecurity group: the posture view
// of cloud connections over the integrations engine. Owners and admins
// act; auditors read. Remediation is text only: the appliance holds
// read-only credentials.
func (s *Server) cloudSecurityRoutes(handle routeFunc) {
	handle("GET", "/v1/cloud-security/providers", httpx.CanRead, s.listCloudProviders)
	handle("GET", "/v1/cloud-security/findings", httpx.CanRead, s.listCloudFindings)
	handle("POST", "/v1/cloud-security/findings/{findingId}/exception", httpx.CanManage, s.createCloudFindingException)
	handle("GET", "/v1/cloud-security/findings/{findingId}/check-definition", httpx.CanRead, s.getCloudCheckDefinition)
	handle("DELETE", "/v1/cloud-security/exceptions/{exceptionId}", httpx.CanManage, s.revokeCloudException)
	handle("GET", "/v1/cloud-security/history", httpx.CanRead, s.getCloudHistory)
	handle("GET", "/v1/cloud-security/activity", httpx.CanRead, s.listCloudActivity)
	handle("POST", "/v1/cloud-security/scan/{connectionId}", httpx.CanManage, s.scanCloudConnection)
	handle("POST", "/v1/cloud-security/trigger/{connectionId}", httpx.CanManage, s.triggerCloudScan)
	handle("GET", "/v1/cloud-security/runs/{runId}", httpx.CanRead, s.getCloudRunStatus)
	handle("POST", "/v1/cloud-security/detect-services/{connectionId}", httpx.CanRead, s.detectCloudServices)
	handle("PATCH", "/v1/cloud-security/connections/{connectionId}/scan-mode", httpx.CanManage, s.updateCloudScanMode)
}

func (s *Server) listCloudProviders(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListCloudProviders(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(l, p))
	return nil
}

func (s *Server) listCloudFindings(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListCloudFindings(r.Context(), app.CloudFindingFilter{ConnectionID: strings.TrimSpace(q.Get("connectionId")),
		Severity: strings.TrimSpace(q.Get("severity")), Service: strings.TrimSpace(q.Get("service")), Status: strings.TrimSpace(q.Get("status"))})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(l, p))
	return nil
}

func (s *Server) createCloudFindingException(w http.ResponseWriter, r *http.Request) error {
	var in app.CloudExceptionCreate
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.MarkCloudFindingException(r.Context(), pathID(r, "findingId"), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getCloudCheckDefinition(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.CloudCheckDefinition(r.Context(), pathID(r, "findingId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) revokeCloudException(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.RevokeCloudException(r.Context(), pathID(r, "exceptionId")); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}

func (s *Server) getCloudHistory(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.CloudHistory(r.Context(), strings.TrimSpace(r.URL.Query().Get("connectionId")))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": v, "count": len(v)})
	return nil
}

func (s *Server) listCloudActivity(w http.ResponseWriter, r *http.Request) error {
	take := 0
	if raw := strings.TrimSpace(r.URL.Query().Get("take")); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil {
			return app.Invalid("take", app.CodeInvalid, raw, "take must be a whole number between 1 and 500")
		}
		take = n
		if n == 0 {
			take = -1
		}
	}
	v, err := s.app.CloudActivityList(r.Context(), strings.TrimSpace(r.URL.Query().Get("connectionId")), take)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": v, "count": len(v)})
	return nil
}

func (s *Server) scanCloudConnection(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.ScanCloud(r.Context(), pathID(r, "connectionId"), app.CloudScanWait)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !v.Completed {
		status = http.StatusAccepted
	}
	httpx.WriteJSON(w, status, v)
	return nil
}

func (s *Server) triggerCloudScan(w http.ResponseWriter, r *http.Request) error {
	run, err := s.app.TriggerCloudScan(r.Context(), pathID(r, "connectionId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, map[string]any{"runId": run.ID, "status": run.Status})
	return nil
}

func (s *Server) getCloudRunStatus(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.CloudRun(r.Context(), pathID(r, "runId"), strings.TrimSpace(r.URL.Query().Get("connectionId")))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) detectCloudServices(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.DetectCloudServices(r.Context(), pathID(r, "connectionId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, map[string]any{"services": v})
	return nil
}

func (s *Server) updateCloudScanMode(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Mode string `json:"mode"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.SetCloudScanMode(r.Context(), pathID(r, "connectionId"), in.Mode)
	return ok(w, http.StatusOK, v, err)
}
