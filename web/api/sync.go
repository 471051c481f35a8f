package api

import (
	"net/http"
	"strconv"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// syncRoutes registers the Sync group: directory sync runs of employees,
// the organization's sync provider choices, two-factor status, and the
// runs' own read routes. Owners and admins act; auditors read.
func (s *Server) syncRoutes(handle routeFunc) {
	handle("POST", "/v1/integrations/sync/google-workspace/employees", httpx.CanManage, s.syncGoogleWorkspaceEmployees)
	handle("POST", "/v1/integrations/sync/google-workspace/status", httpx.CanRead, s.getGoogleWorkspaceStatus)
	handle("GET", "/v1/integrations/sync/employee-sync-provider", httpx.CanRead, s.getSyncProvider(app.SyncSettingEmployee))
	handle("POST", "/v1/integrations/sync/employee-sync-provider", httpx.CanManage, s.setSyncProvider(app.SyncSettingEmployee))
	handle("GET", "/v1/integrations/sync/device-sync-provider", httpx.CanRead, s.getSyncProvider(app.SyncSettingDevice))
	handle("POST", "/v1/integrations/sync/device-sync-provider", httpx.CanManage, s.setSyncProvider(app.SyncSettingDevice))
	handle("GET", "/v1/integrations/sync/available-providers", httpx.CanRead, s.getAvailableSyncProviders)
	handle("POST", "/v1/integrations/sync/dynamic/{providerSlug}/employees", httpx.CanManage, s.syncDynamicEmployees)
	handle("POST", "/v1/integrations/sync/dynamic/{providerSlug}/devices", httpx.CanManage, s.syncDynamicDevices)
	handle("GET", "/v1/integrations/sync/two-factor-source", httpx.CanRead, s.getSyncProvider(app.SyncSettingTwoFactor))
	handle("POST", "/v1/integrations/sync/two-factor-source", httpx.CanManage, s.setSyncProvider(app.SyncSettingTwoFactor))
	handle("GET", "/v1/integrations/sync/available-2fa-sources", httpx.CanRead, s.getAvailableTwoFactorSources)
	handle("GET", "/v1/integrations/sync/two-factor-statuses", httpx.CanRead, s.getTwoFactorStatuses)
	handle("GET", "/v1/integrations/sync/runs", httpx.CanRead, s.listSyncRuns)
	handle("GET", "/v1/integrations/sync/runs/{syncRunId}", httpx.CanRead, s.getSyncRun)
}

// syncRequest is the optional body of a sync: the query's connectionId and
// dryRun may come in it instead.
type syncRequest struct {
	ConnectionID *string `json:"connectionId"`
	DryRun       *bool   `json:"dryRun"`
}

func syncParams(r *http.Request) (string, bool, error) {
	q := r.URL.Query()
	conn := q.Get("connectionId")
	dry := false
	if v := q.Get("dryRun"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", false, app.Invalid("dryRun", app.CodeInvalid, v, "dryRun must be true or false")
		}
		dry = b
	}
	if r.ContentLength != 0 && r.Header.Get("Content-Type") != "" {
		var in syncRequest
		if err := httpx.Decode(r, &in); err != nil {
			return "", false, err
		}
		if in.ConnectionID != nil {
			conn = *in.ConnectionID
		}
		if in.DryRun != nil {
			dry = *in.DryRun
		}
	}
	return conn, dry, nil
}

func (s *Server) syncEmployees(w http.ResponseWriter, r *http.Request, slug string) error {
	conn, dry, err := syncParams(r)
	if err != nil {
		return err
	}
	v, err := s.app.SyncEmployees(r.Context(), slug, conn, dry)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) syncGoogleWorkspaceEmployees(w http.ResponseWriter, r *http.Request) error {
	return s.syncEmployees(w, r, "google_workspace")
}

func (s *Server) syncDynamicEmployees(w http.ResponseWriter, r *http.Request) error {
	return s.syncEmployees(w, r, pathID(r, "providerSlug"))
}

func (s *Server) syncDynamicDevices(w http.ResponseWriter, r *http.Request) error {
	conn, dry, err := syncParams(r)
	if err != nil {
		return err
	}
	v, err := s.app.SyncDevices(r.Context(), pathID(r, "providerSlug"), conn, dry)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getGoogleWorkspaceStatus(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.ProviderSyncStatusOf(r.Context(), "google_workspace")
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getSyncProvider(kind string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		v, err := s.app.GetSyncProvider(r.Context(), kind)
		return ok(w, http.StatusOK, v, err)
	}
}

func (s *Server) setSyncProvider(kind string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var in app.SyncProviderChoiceInput
		if err := httpx.Decode(r, &in); err != nil {
			return err
		}
		v, err := s.app.SetSyncProvider(r.Context(), kind, in)
		return ok(w, http.StatusCreated, v, err)
	}
}

func (s *Server) getAvailableSyncProviders(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.AvailableSyncProviders(r.Context(), r.URL.Query().Get("syncType"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) getAvailableTwoFactorSources(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.AvailableTwoFactorSources(r.Context())
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) getTwoFactorStatuses(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	v, err := s.app.ListTwoFactorStatuses(r.Context(), p)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) listSyncRuns(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListSyncRuns(r.Context(), app.SyncRunFilter{ConnectionID: q.Get("connectionId"), Status: q.Get("status"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getSyncRun(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	v, err := s.app.GetSyncRun(r.Context(), pathID(r, "syncRunId"), p)
	return ok(w, http.StatusOK, v, err)
}
