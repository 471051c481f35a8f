package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// syncRoleRoutes registers a directory connection's group-to-role mapping.
func (s *Server) syncRoleRoutes(handle routeFunc) {
	handle("GET", "/v1/integrations/sync/connections/{connectionId}/role-mapping", httpx.CanRead, s.getSyncRoleMapping)
	handle("PUT", "/v1/integrations/sync/connections/{connectionId}/role-mapping", httpx.CanManage, s.updateSyncRoleMapping)
}

func (s *Server) getSyncRoleMapping(w http.ResponseWriter, r *http.Request) error {
	m, err := s.app.GetSyncRoleMapping(r.Context(), pathID(r, "connectionId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, m)
	return nil
}

func (s *Server) updateSyncRoleMapping(w http.ResponseWriter, r *http.Request) error {
	var in app.SyncRoleMappingInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	m, err := s.app.SetSyncRoleMapping(r.Context(), pathID(r, "connectionId"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, m)
	return nil
}
