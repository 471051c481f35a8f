package api

import "github.com/compliance-appliance/compliance/web/httpx"

// authRoutes registers the routes of the handlers in this file.
func (s *Server) authRoutes(handle routeFunc) {
	handle("POST", "/v1/auth/login", httpx.Public, s.Login)
	handle("POST", "/v1/auth/logout", httpx.Public, s.Logout)
	handle("GET", "/v1/auth/me", httpx.Public, s.Me)
}
