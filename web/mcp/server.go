// Package mcp is the Model Context Protocol tool server at /v1/mcp and its
// manifest at /.well-known/mcp.json.
package mcp

import (
	"log/slog"
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// Server holds the tool server's dependencies.
type Server struct {
	*httpx.Server
	app  *app.App
	log  *slog.Logger
	opts httpx.Options
	mcp  http.Handler
	// toolNames are the registered tools in registration order (the
	// manifest's list), set once while New builds the handler.
	toolNames []string
}

// New registers the tool server and its manifest on core.
func New(core *httpx.Server) *Server {
	s := &Server{Server: core, app: core.App(), log: core.Logger(), opts: core.Options()}
	s.mcp = newMCPHandler(s)
	s.Handle("GET", "/.well-known/mcp.json", httpx.Public, s.mcpManifest)
	s.Handle("OPTIONS", "/.well-known/mcp.json", httpx.Public, httpx.Preflight)
	s.Handle("POST", "/v1/mcp", httpx.CanRead, s.serveMCP)
	return s
}
