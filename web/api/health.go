package api

import (
	"context"
	"net/http"
	"time"

	"github.com/compliance-appliance/compliance/web/httpx"
)

// healthRoutes registers the routes of the handlers in this file.
func (s *Server) healthRoutes(handle routeFunc) {
	handle("GET", "/v1/openapi.json", httpx.Public, s.getOpenAPI)
}

// health answers 200 while the database answers, 503 otherwise. It needs
// no credential and is not rate limited.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.opts.Health(ctx); err != nil {
		s.log.Warn("health check failed", "error", err)
		httpx.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "version": s.opts.Version})
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "version": s.opts.Version})
}

func (s *Server) getOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(s.openapi)
	return err
}
