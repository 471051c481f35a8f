package ui

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
)

// addTaskCheckFindings puts the open findings of the task's checks on its
// page, for the roles that read integrations.
func (s *Server) addTaskCheckFindings(r *http.Request, v *view, taskID string) error {
	data, ok := v.Data.(map[string]any)
	if !ok || !v.P.Can(app.CapRead) || v.P.SeesOnlyAssigned() {
		return nil
	}
	fs, err := s.app.ListTaskFindings(r.Context(), taskID, "open")
	if err != nil {
		return err
	}
	data["CheckFindings"], data["ShowCheckFindings"] = fs.Findings, true
	return nil
}
