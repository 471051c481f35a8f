// Package web assembles the appliance's HTTP surfaces on one shared core
// (web/httpx): the REST API (web/api), the OAuth 2.0 authorization server
// (web/oauth), the MCP tool server (web/mcp) and the web application
// (web/ui). The surfaces never import each other.
package web

import (
	"log/slog"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/api"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/compliance-appliance/compliance/web/mcp"
	"github.com/compliance-appliance/compliance/web/oauth"
	"github.com/compliance-appliance/compliance/web/ui"
)

// Options configure the HTTP layer.
type Options = httpx.Options

// Server is the whole HTTP side: the shared core with every surface
// registered on it. It is an http.Handler.
type Server struct {
	*httpx.Server
	API   *api.Server
	OAuth *oauth.Server
	MCP   *mcp.Server
	UI    *ui.Server
}

// New builds the core and registers the surfaces in the order their routes
// must match: the REST API, the authorization server, the tool server, then
// the web application, which takes the page paths nothing before it took.
func New(a *app.App, log *slog.Logger, opts Options) (*Server, error) {
	core := httpx.New(a, log, opts)
	s := &Server{Server: core}
	var err error
	if s.API, err = api.New(core); err != nil {
		return nil, err
	}
	s.OAuth = oauth.New(core)
	s.MCP = mcp.New(core)
	if s.UI, err = ui.New(core); err != nil {
		return nil, err
	}
	return s, nil
}

// Close stops the web application's jobs and removes their files; call it
// after the HTTP server has shut down.
func (s *Server) Close() error { return s.UI.Close() }
