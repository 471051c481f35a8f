package httpx

import (
	"mime"
	"net/http"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// writeExport streams an evidence export zip: the full package or the
// auditor package. The REST API and the web application serve the same file.
func (s *Server) WriteExport(w http.ResponseWriter, r *http.Request, auditor bool) error {
	opts := app.ExportOptions{FrameworkID: r.URL.Query().Get("frameworkId"), Auditor: auditor}
	if err := s.app.CheckExport(r.Context(), opts); err != nil {
		return err
	}
	name := "evidence-export"
	if auditor {
		name += "-auditor"
	}
	name += "-" + s.app.Now().Format("20060102T150405Z") + ".zip"
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	w.WriteHeader(http.StatusOK)
	if err := s.app.WriteEvidenceExport(r.Context(), w, opts); err != nil {
		// The status is sent; the truncated zip is unreadable, which the client sees.
		s.log.ErrorContext(r.Context(), "evidence export failed", "request_id", RequestID(r), "error", err)
	}
	return nil
}

// visitor is who a public request comes from: the client address (behind
// a trusted proxy, the one it forwarded) and the user agent.
func (s *Server) Visitor(r *http.Request) app.Visitor {
	return app.Visitor{IP: s.ClientAddress(r), UserAgent: r.UserAgent()}
}

// baseURL is public_url when set, else the request's scheme and host.
func (s *Server) BaseURL(r *http.Request) string {
	if s.opts.PublicURL != "" {
		return strings.TrimRight(s.opts.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// allowCORS lets browser-based clients read the public protocol documents
// and call the token endpoint (no cookies are involved there).
func AllowCORS(w http.ResponseWriter) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
}

// Preflight answers CORS preflight requests of browser-based OAuth and MCP
// clients on the public protocol endpoints (bearer tokens and client
// credentials travel in headers or bodies, never cookies).
func Preflight(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	AllowCORS(w)
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return nil
}
