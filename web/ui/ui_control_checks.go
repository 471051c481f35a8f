package ui

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
)

// addControlChecks puts the automated checks that evidence a control on
// its page, for the roles that read integrations.
func (s *Server) addControlChecks(r *http.Request, v *view, controlID string) error {
	data, ok := v.Data.(map[string]any)
	if !ok || !v.P.Can(app.CapRead) || v.P.SeesOnlyAssigned() {
		return nil
	}
	checks, err := s.app.GetChecksForControl(r.Context(), controlID)
	if err != nil {
		return err
	}
	data["Checks"], data["ShowChecks"] = checks, true
	return nil
}
