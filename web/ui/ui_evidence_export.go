package ui

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/compliance-appliance/compliance/app"
)

// uiEvidenceExportRoutes registers the task's evidence downloads: the ZIP
// of its evidence files (with each run's JSON on request) and the PDF of
// one automation's runs, through the same services as GET
// /v1/tasks/{taskId}/evidence/export and .../automation/{automationId}/pdf.
func (s *Server) uiEvidenceExportRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/tasks/{id}/evidence/export", uiSignedIn, s.uiExportTaskEvidence)
	page("GET", "/tasks/{id}/evidence/automation/{automationId}/pdf", uiSignedIn, s.uiExportAutomationPDF)
}

func (s *Server) uiExportTaskEvidence(w http.ResponseWriter, r *http.Request, v *view) error {
	x, err := s.app.PlanTaskEvidenceExport(r.Context(), id(r), r.URL.Query().Get("includeJson") == "true")
	var big *app.ExportTooLargeError
	if errors.As(err, &big) {
		v.Errors, v.Status = map[string]string{"export": big.Error()}, http.StatusUnprocessableEntity
		return s.uiTaskAutomations(w, r, v)
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+x.Filename()+`"`)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	// The status is sent: a failure mid-way leaves a broken archive.
	_ = x.Write(r.Context(), w)
	return nil
}

func (s *Server) uiExportAutomationPDF(w http.ResponseWriter, r *http.Request, v *view) error {
	pdf, err := s.app.AutomationRunsPDF(r.Context(), id(r), automationID(r))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="`+pdf.Filename+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(pdf.Content)))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(pdf.Content)
	return nil
}
