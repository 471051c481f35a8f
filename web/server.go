// Package web is the HTTP layer: routing, middleware, authentication,
// handlers and the OpenAPI document. It calls app services only.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

// Options configure the HTTP layer.
type Options struct {
	Version string
	// MaxUploadBytes bounds multipart uploads (evidence, attachments).
	MaxUploadBytes int64
	// Health reports whether the database answers.
	Health func(ctx context.Context) error
	// PublicURL is the externally visible base URL, if configured.
	PublicURL string
	// Now is the clock for rate limiting; nil means time.Now.
	Now func() time.Time
	// CookieHashKey (64 bytes) and CookieBlockKey (32 bytes) sign and
	// encrypt session cookies; OAuthSecret (32+ bytes) signs OAuth tokens.
	// Empty means random keys for this process only.
	CookieHashKey, CookieBlockKey, OAuthSecret []byte
	// TrustedProxies are the addresses or CIDR ranges of reverse proxies
	// whose X-Forwarded-For names the client for sign-in throttling.
	TrustedProxies []string
	// WorkDir holds the files of the web application's jobs (evidence
	// exports) until they are downloaded; empty means the system's
	// temporary directory.
	WorkDir string
}

// Authenticator resolves a credential of a request to a principal. It
// returns (nil, nil) when the request carries no credential of its kind.
type Authenticator func(r *http.Request) (*app.Principal, error)

// Server holds the handlers' dependencies.
type Server struct {
	app     *app.App
	log     *slog.Logger
	opts    Options
	limiter *rateLimiter
	authn   []Authenticator
	router  *mux.Router
	chain   http.Handler
	openapi []byte
	sess    *sessions
	oauth   *oauthServer
	mcp     http.Handler
	webui   *ui
	jobs    *jobRunner
	// autoAnswerInline is the most questions the web application answers
	// within the request; larger questionnaires are answered in a job.
	autoAnswerInline int
}

// New builds the router with every route and middleware.
func New(a *app.App, log *slog.Logger, opts Options) (*Server, error) {
	if opts.MaxUploadBytes <= 0 {
		opts.MaxUploadBytes = 50 << 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Health == nil {
		opts.Health = func(context.Context) error { return nil }
	}
	doc, err := openAPIDocument(opts.Version)
	if err != nil {
		return nil, err
	}
	s := &Server{app: a, log: log, opts: opts, limiter: newRateLimiter(opts.Now), openapi: doc}
	s.authn = []Authenticator{s.apiKeyAuth}
	s.router = s.routes()
	s.chain = s.handler()
	return s, nil
}

// ServeHTTP runs the global middleware chain, then the router.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.chain.ServeHTTP(w, r)
}

// Handler returns the full handler chain.
func (s *Server) handler() http.Handler {
	return s.recoverer(s.requestID(s.accessLog(s.securityHeaders(s.bodyLimit(s.router)))))
}

// Router exposes the mux for route listing in tests.
func (s *Server) Router() *mux.Router { return s.router }

// AddAuthenticator registers another credential kind (sessions, OAuth).
func (s *Server) AddAuthenticator(a Authenticator) { s.authn = append(s.authn, a) }
