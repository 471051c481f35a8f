package ui

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

// Vendor risk assessment on the vendor page: the Assess button, the
// assessments with their suggestion and reasons, and Accept.

// addVendorAssessments puts the vendor's assessments on its page (not for
// people who see only their assigned vendors).
func (s *Server) addVendorAssessments(r *http.Request, v *view, vendorID string) error {
	data, ok := v.Data.(map[string]any)
	if !ok || vendorID == "" || v.P.SeesOnlyAssigned() {
		return nil
	}
	as, err := s.app.ListVendorAssessments(r.Context(), vendorID)
	if err != nil {
		return err
	}
	data["Assessments"], data["ShowAssessments"] = as, true
	return nil
}

func (s *Server) uiAssessVendor(w http.ResponseWriter, r *http.Request, v *view) error {
	vid := id(r)
	if _, err := s.app.TriggerVendorAssessment(r.Context(), app.VendorAssessmentTrigger{VendorID: vid}); err != nil {
		var ve *app.ValidationError
		if errors.As(err, &ve) {
			return redirect(w, r, "/vendors/"+url.PathEscape(vid)+"?done=assess-no-website#assessments")
		}
		return err
	}
	return redirect(w, r, "/vendors/"+url.PathEscape(vid)+"?done=assess-queued#assessments")
}

func (s *Server) uiAcceptVendorAssessment(w http.ResponseWriter, r *http.Request, v *view) error {
	vid := id(r)
	if _, err := s.app.AcceptVendorAssessment(r.Context(), vid, mux.Vars(r)["assessmentId"]); err != nil {
		return err
	}
	return redirect(w, r, "/vendors/"+url.PathEscape(vid)+"?done=assess-accepted#assessments")
}
