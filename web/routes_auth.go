package web

import "log/slog"

// authRoutes registers sign-in sessions, the OAuth 2.0 authorization
// server, OAuth apps and grants, the MCP tool server and the well-known
// documents, and the session and bearer-token authenticators.
func (s *Server) authRoutes(handle func(method, path string, acc access, h handlerFunc)) {
	cfg := s.app.AuthSettings()
	s.sess = newSessions(s.opts.CookieHashKey, s.opts.CookieBlockKey, s.opts.PublicURL, cfg.SessionAbsolute)
	proxies, err := parseProxies(s.opts.TrustedProxies)
	if err != nil {
		s.log.Error("trusted_proxies ignored", slog.Any("error", err))
	}
	s.sess.proxies = proxies
	s.oauth = newOAuthServer(s.app, s.opts.OAuthSecret)
	s.AddAuthenticator(s.sessionAuth)
	s.AddAuthenticator(s.bearerAuth)
	s.mcp = newMCPHandler(s)

	handle("POST", "/v1/auth/login", public, s.login)
	handle("POST", "/v1/auth/logout", public, s.logout)
	handle("GET", "/v1/auth/me", public, s.me)

	handle("GET", "/.well-known/oauth-authorization-server", public, s.authServerMetadata)
	handle("GET", "/.well-known/oauth-protected-resource", public, s.protectedResourceMetadata(""))
	handle("GET", "/.well-known/oauth-protected-resource/v1/mcp", public, s.protectedResourceMetadata("/v1/mcp"))
	handle("GET", "/.well-known/mcp.json", public, s.mcpManifest)
	handle("POST", "/oauth/register", public, s.register)
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-protected-resource/v1/mcp", "/.well-known/mcp.json", "/oauth/register", "/oauth/token", "/oauth/revoke"} {
		handle("OPTIONS", path, public, s.preflight)
	}
	handle("GET", "/oauth/authorize", public, s.authorize)
	handle("POST", "/oauth/authorize", public, s.authorize)
	handle("POST", "/oauth/login", public, s.oauthLogin)
	handle("POST", "/oauth/token", public, s.token)
	handle("POST", "/oauth/revoke", public, s.revoke)

	handle("GET", "/v1/integrations/oauth-apps", canKeys, s.listOAuthApps)
	handle("POST", "/v1/integrations/oauth-apps", canKeys, s.createOAuthApp)
	handle("GET", "/v1/integrations/oauth-apps/{id}", canKeys, s.getOAuthApp)
	handle("PATCH", "/v1/integrations/oauth-apps/{id}", canKeys, s.updateOAuthApp)
	handle("POST", "/v1/integrations/oauth-apps/{id}/rotate-secret", canKeys, s.rotateOAuthAppSecret)
	handle("DELETE", "/v1/integrations/oauth-apps/{id}", canKeys, s.deleteOAuthApp)
	handle("POST", "/v1/mcp", canRead, s.serveMCP)
	handle("GET", "/v1/oauth/grants", canRead, s.listGrants)
	handle("DELETE", "/v1/oauth/grants/{id}", canRead, s.revokeGrant)
}
