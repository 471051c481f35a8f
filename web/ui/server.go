// Package ui is the server-rendered web application (html/template pages,
// forms, jobs with progress) and the public pages that vendors and trust
// portal visitors open without an account. Pages call the same app services
// as the REST API.
package ui

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/gorilla/mux"
)

// Server holds the web application's dependencies.
type Server struct {
	*httpx.Server
	app   *app.App
	log   *slog.Logger
	opts  httpx.Options
	webui *ui
	jobs  *jobRunner
	// autoAnswerInline is the most questions the web application answers
	// within the request; larger questionnaires are answered in a job.
	autoAnswerInline int
}

// New registers the public pages and mounts the web application on core.
// Register it after the other surfaces: the application takes every path
// it owns that no route before it matched.
func New(core *httpx.Server) (*Server, error) {
	s := &Server{Server: core, app: core.App(), log: core.Logger(), opts: core.Options(), autoAnswerInline: autoAnswerInline}
	if s.opts.AutoAnswerInline > 0 {
		s.autoAnswerInline = s.opts.AutoAnswerInline
	}
	s.publicRoutes(s.Handle)
	if err := s.mountUI(core.Router()); err != nil {
		return nil, err
	}
	core.CSPFor = cspFor
	core.UploadTooLarge = tooLargeUploadBack
	return s, nil
}

// publicRoutes registers the pages that need no account: a vendor's
// questionnaire and a trust portal's pages.
func (s *Server) publicRoutes(handle func(method, path string, acc httpx.Access, h httpx.HandlerFunc)) {
	handle("GET", "/vendor-questionnaire/{token}", httpx.Public, s.vendorFillPage)
	handle("POST", "/vendor-questionnaire/{token}", httpx.Public, s.vendorFillSubmit)
	handle("GET", "/trust/{slug}", httpx.Public, s.trustPage)
	handle("POST", "/trust/{slug}/request", httpx.Public, s.trustRequestForm)
	handle("GET", "/trust/{slug}/access/{token}", httpx.Public, s.trustAccessPage)
	handle("POST", "/trust/{slug}/access/{token}/nda", httpx.Public, s.trustNDAForm)
	handle("GET", "/verify/training/{code}", httpx.Public, s.verifyTrainingPage)
}

// mountUI builds the web application and mounts it on the router for the
// sections it owns. The route walk (OpenAPI contract test) does not descend
// into it: it is a plain handler, not a mux sub-router.
func (s *Server) mountUI(r *mux.Router) error {
	u, err := s.newUI()
	if err != nil {
		return fmt.Errorf("web application templates: %w", err)
	}
	s.webui = u
	// A HandlerFunc, not the *mux.Router itself, so Walk does not descend.
	h := http.HandlerFunc(u.router.ServeHTTP)
	r.MatcherFunc(func(r *http.Request, _ *mux.RouteMatch) bool { return IsPagePath(r.URL.Path) }).Handler(h)
	return nil
}

// AssetVersion is the content hash that versions a static file's URL.
func (s *Server) AssetVersion(name string) string { return s.webui.Assets[name] }

// PageRouter is the web application's own router, for route listing.
func (s *Server) PageRouter() *mux.Router { return s.webui.router }
