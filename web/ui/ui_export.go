package ui

import "net/http"

// uiExportRoutes registers the evidence export downloads: the full package
// (owner, admin) and the auditor package (owner, admin, auditor), the same
// zip files as GET /v1/evidence-export and /v1/evidence-export/auditor.
func (s *Server) uiExportRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/evidence/export", uiManage, func(w http.ResponseWriter, r *http.Request, v *view) error {
		return s.WriteExport(w, r, false)
	})
	page("GET", "/evidence/export/auditor", uiAudit, func(w http.ResponseWriter, r *http.Request, v *view) error {
		return s.WriteExport(w, r, true)
	})
}
