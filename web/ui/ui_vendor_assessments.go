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
// people who see only their assigned vendors) as a list: sorted, filtered
// by status, paged, exported with format=csv or xlsx (done is then true:
// the file is written).
func (s *Server) addVendorAssessments(w http.ResponseWriter, r *http.Request, v *view, vendorID string) (bool, error) {
	data, ok := v.Data.(map[string]any)
	if !ok || vendorID == "" || v.P.SeesOnlyAssigned() {
		return false, nil
	}
	status := r.URL.Query().Get("status")
	ferr := filterEnum(r.URL.Query(), "status", assessmentStatuses)
	form := v.Form
	lv, as, done, err := runList(w, r, v, vendorAssessmentList(keepFetch(func() ([]app.VendorAssessment, error) {
		if ferr != nil {
			return nil, ferr
		}
		return s.app.ListVendorAssessments(r.Context(), vendorID)
	}, func(a app.VendorAssessment) bool { return status == "" || a.Status == status })))
	if done {
		return true, err
	}
	if err != nil && !formErrors(err, v, r) {
		return false, err
	}
	v.Form = form
	lv.EmptyText = "No assessment yet."
	if v.Can("manage") {
		lv.EmptyText += " Assess checks the vendor's website and suggests a rating."
	}
	data["Assessments"], data["ShowAssessments"], data["AssessmentList"] = as, true, lv
	data["AssessmentStatuses"], data["AssessmentStatus"] = assessmentStatuses, status
	return false, nil
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
