// Package oauth is the OAuth 2.0 authorization server (RFC 6749 with PKCE,
// RFC 7591 registration, RFC 7009 revocation, RFC 8414 and RFC 9728
// metadata) that MCP and other clients use to act for a person, with its
// sign-in and consent pages. It adds the bearer-token authenticator.
package oauth

import (
	"log/slog"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// Server holds the authorization server's dependencies.
type Server struct {
	*httpx.Server
	app   *app.App
	log   *slog.Logger
	opts  httpx.Options
	oauth *oauthServer
}

// New registers the authorization server's routes on core, its bearer
// tokens as a credential and its 401 challenge.
func New(core *httpx.Server) *Server {
	s := &Server{Server: core, app: core.App(), log: core.Logger(), opts: core.Options()}
	s.oauth = newOAuthServer(s.app, s.opts.OAuthSecret)
	core.AddAuthenticator(s.bearerAuth)
	core.Challenge = s.challenge
	s.routes()
	return s
}

func (s *Server) routes() {
	handle := s.Handle
	handle("GET", "/.well-known/oauth-authorization-server", httpx.Public, s.authServerMetadata)
	handle("GET", "/.well-known/oauth-protected-resource", httpx.Public, s.protectedResourceMetadata(""))
	handle("GET", "/.well-known/oauth-protected-resource/v1/mcp", httpx.Public, s.protectedResourceMetadata("/v1/mcp"))
	handle("POST", "/oauth/register", httpx.Public, s.register)
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-protected-resource/v1/mcp", "/oauth/register", "/oauth/token", "/oauth/revoke"} {
		handle("OPTIONS", path, httpx.Public, httpx.Preflight)
	}
	handle("GET", "/oauth/authorize", httpx.Public, s.authorize)
	handle("POST", "/oauth/authorize", httpx.Public, s.authorize)
	handle("POST", "/oauth/login", httpx.Public, s.oauthLogin)
	handle("POST", "/oauth/token", httpx.Public, s.token)
	handle("POST", "/oauth/revoke", httpx.Public, s.revoke)
}
