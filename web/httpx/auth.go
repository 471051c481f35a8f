package httpx

import (
	"errors"
	"net/http"

	"github.com/compliance-appliance/compliance/app"
)

// apiKeyAuth resolves X-API-Key.
func (s *Server) apiKeyAuth(r *http.Request) (*app.Principal, error) {
	key := r.Header.Get("X-API-Key")
	if key == "" {
		return nil, nil
	}
	return s.app.AuthenticateKey(r.Context(), key)
}

// authenticate runs the authenticators in order. It returns (nil, nil) for
// an anonymous request and ErrUnauthenticated for a bad credential.
func (s *Server) Authenticate(r *http.Request) (*app.Principal, error) {
	for _, a := range s.authn {
		p, err := a(r)
		if err != nil {
			if errors.Is(err, app.ErrUnauthenticated) {
				return nil, err
			}
			var he *HTTPError
			if errors.As(err, &he) {
				return nil, err
			}
			return nil, err
		}
		if p != nil {
			if org := r.Header.Get("X-Organization-Id"); org != "" && org != p.OrgID && p.AuthType != app.AuthSession {
				return nil, &HTTPError{Status: http.StatusNotFound, Code: "not_found", Msg: "organization not found"}
			}
			return p, nil
		}
	}
	return nil, nil
}
