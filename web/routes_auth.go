package web

// authRoutes registers sign-in sessions, the OAuth 2.0 authorization
// server, OAuth apps and grants, the MCP tool server and the well-known
// documents, and the session and bearer-token authenticators.
func (s *Server) authRoutes(handle func(method, path string, acc access, h handlerFunc)) {
	cfg := s.app.AuthSettings()
	s.sess = newSessions(s.opts.CookieHashKey, s.opts.CookieBlockKey, s.opts.PublicURL, cfg.SessionAbsolute)
	s.AddAuthenticator(s.sessionAuth)

	handle("POST", "/v1/auth/login", public, s.login)
	handle("POST", "/v1/auth/logout", public, s.logout)
	handle("GET", "/v1/auth/me", public, s.me)
}
