package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// evidenceExportRoutes registers the Evidence Export group: a PDF of one
// automation's runs and a ZIP of a task's evidence. The group's summary,
// GET /v1/tasks/{taskId}/evidence, is listTaskEvidence (control.go) with
// its automations. Everyone who may read the task's evidence may export
// it: employees and contractors their own tasks (without browser
// automations), auditors read.
func (s *Server) evidenceExportRoutes(handle routeFunc) {
	handle("GET", "/v1/tasks/{taskId}/evidence/automation/{automationId}/pdf", httpx.CanRead, s.exportAutomationPdf)
	handle("GET", "/v1/tasks/{taskId}/evidence/export", httpx.CanRead, s.exportTaskEvidenceZip)
}

// taskEvidenceBody is the task's evidence list with its automations.
type taskEvidenceBody struct {
	Data        []app.Evidence           `json:"data"`
	Meta        httpx.Meta               `json:"meta"`
	Automations []app.EvidenceAutomation `json:"automations"`
}

func (s *Server) exportAutomationPdf(w http.ResponseWriter, r *http.Request) error {
	pdf, err := s.app.AutomationRunsPDF(r.Context(), pathID(r, "taskId"), pathID(r, "automationId"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="`+pdf.Filename+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(pdf.Content)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(pdf.Content)
	return nil
}

func (s *Server) exportTaskEvidenceZip(w http.ResponseWriter, r *http.Request) error {
	inc, err := httpx.BoolParam(r, "includeJson")
	if err != nil {
		return err
	}
	x, err := s.app.PlanTaskEvidenceExport(r.Context(), pathID(r, "taskId"), inc != nil && *inc)
	var big *app.ExportTooLargeError
	if errors.As(err, &big) {
		return &httpx.HTTPError{Status: http.StatusUnprocessableEntity, Code: "export_too_large", Msg: big.Error(),
			Details: map[string]any{"files": big.Files, "bytes": big.Bytes, "maxFiles": app.MaxExportFiles, "maxBytes": app.MaxExportBytes}}
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+x.Filename()+`"`)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := x.Write(r.Context(), w); err != nil {
		// The status is sent: a broken archive is all the client can see.
		s.log.ErrorContext(r.Context(), "task evidence export failed", "task", x.Task.ID, "error", err)
	}
	return nil
}
