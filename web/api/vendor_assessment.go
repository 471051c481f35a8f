package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// vendorAssessmentRoutes registers the Internal - Vendors group (vendor
// risk assessment, on request) and the assessments of a vendor.
func (s *Server) vendorAssessmentRoutes(handle routeFunc) {
	handle("POST", "/v1/internal/vendors/risk-assessment/trigger-single", httpx.CanManage, s.triggerVendorAssessment)
	handle("POST", "/v1/internal/vendors/risk-assessment/trigger-batch", httpx.CanManage, s.triggerVendorAssessmentBatch)
	handle("GET", "/v1/vendors/{id}/assessments", httpx.CanRead, s.listVendorAssessments)
	handle("GET", "/v1/vendors/{id}/assessments/{assessmentId}", httpx.CanRead, s.getVendorAssessment)
	handle("POST", "/v1/vendors/{id}/assessments/{assessmentId}/accept", httpx.CanManage, s.acceptVendorAssessment)
}

func (s *Server) triggerVendorAssessment(w http.ResponseWriter, r *http.Request) error {
	var in app.VendorAssessmentTrigger
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.TriggerVendorAssessment(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) triggerVendorAssessmentBatch(w http.ResponseWriter, r *http.Request) error {
	var in app.VendorAssessmentBatch
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.TriggerVendorAssessmentBatch(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) listVendorAssessments(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListVendorAssessments(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(l, p))
	return nil
}

func (s *Server) getVendorAssessment(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetVendorAssessment(r.Context(), pathID(r, "id"), pathID(r, "assessmentId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) acceptVendorAssessment(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.AcceptVendorAssessment(r.Context(), pathID(r, "id"), pathID(r, "assessmentId"))
	return ok(w, http.StatusOK, v, err)
}
