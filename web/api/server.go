// Package api is the REST API under /v1: one file per resource group, each
// with its routes at the top. Handlers decode the request, call one app
// service and encode its answer; the rules live in app.
package api

import (
	"log/slog"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// Server holds the REST handlers' dependencies.
type Server struct {
	*httpx.Server
	app     *app.App
	log     *slog.Logger
	opts    httpx.Options
	openapi []byte
}

// New registers every REST route on core.
func New(core *httpx.Server) (*Server, error) {
	doc, err := cachedOpenAPIDocument(core.Options().Version)
	if err != nil {
		return nil, err
	}
	s := &Server{Server: core, app: core.App(), log: core.Logger(), opts: core.Options(), openapi: doc}
	s.routes()
	return s, nil
}

// OpenAPI is the merged OpenAPI document served at /v1/openapi.json.
func (s *Server) OpenAPI() []byte { return s.openapi }
