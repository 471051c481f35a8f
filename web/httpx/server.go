// Package httpx is what every HTTP surface of the appliance shares: the
// middleware chain, the error writer, JSON decoding and encoding, paging,
// rate limiting, authentication of API keys and sessions, request ids, the
// access log and security headers. It calls app services only.
package httpx

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
	// AutoAnswerInline is the most questions the web application
	// auto-answers within the request; larger questionnaires are answered
	// in a job. 0 means 200.
	AutoAnswerInline int
	// Observer, when set, sees every request: its route template, method,
	// status and duration (metrics).
	Observer RequestObserver
}

// RequestObserver sees every request once it is answered. route is the
// matched route's path template ("unmatched" when none matched), so no
// identifier or organization data reaches it.
type RequestObserver interface {
	ObserveRequest(route, method string, status int, d time.Duration)
}

// Authenticator resolves a credential of a request to a principal. It
// returns (nil, nil) when the request carries no credential of its kind.
type Authenticator func(r *http.Request) (*app.Principal, error)

// Server is what every HTTP surface shares: the router, the middleware
// chain, authentication, rate limits and sessions. The surfaces (web/api,
// web/ui, web/oauth, web/mcp) register their routes and hooks on it.
type Server struct {
	app     *app.App
	log     *slog.Logger
	opts    Options
	limiter *rateLimiter
	// sharedLimits: the buckets are in the database, shared by replicas.
	sharedLimits bool
	authn        []Authenticator
	router       *mux.Router
	chain        http.Handler
	// Sess issues and reads sign-in session cookies.
	Sess *Sessions
	// CSPFor picks the Content-Security-Policy of a response by its path;
	// nil means the API's policy for every path.
	CSPFor func(path string) string
	// UploadTooLarge names the page to send a browser back to when its
	// upload is over the limit; "" answers with the JSON error.
	UploadTooLarge func(r *http.Request, err error) string
	// Challenge is the WWW-Authenticate value of a 401; nil means the API
	// key challenge alone.
	Challenge func(r *http.Request) string
}

// New builds the shared core: the router (answering unknown routes with
// the JSON error), the middleware chain, API key and session
// authentication. Surfaces add their routes before it serves.
func New(a *app.App, log *slog.Logger, opts Options) *Server {
	if opts.MaxUploadBytes <= 0 {
		opts.MaxUploadBytes = 50 << 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Health == nil {
		opts.Health = func(context.Context) error { return nil }
	}
	s := &Server{app: a, log: log, opts: opts, limiter: newRateLimiter(opts.Now), sharedLimits: a.SharedRateLimits()}
	s.Sess = NewSessions(opts.CookieHashKey, opts.CookieBlockKey, opts.PublicURL, a.AuthSettings().SessionAbsolute)
	proxies, err := ParseProxies(opts.TrustedProxies)
	if err != nil {
		log.Error("trusted_proxies ignored", slog.Any("error", err))
	}
	s.Sess.Proxies = proxies
	s.authn = []Authenticator{s.apiKeyAuth, s.SessionAuth}
	s.router = mux.NewRouter()
	s.router.Use(s.LabelRoute)
	s.router.NotFoundHandler = s.Wrap(Public, func(w http.ResponseWriter, r *http.Request) error { return ErrNotFoundRoute })
	s.router.MethodNotAllowedHandler = s.Wrap(Public, s.MethodNotAllowed)
	s.chain = s.handler()
	return s
}

// App is the domain the surfaces call.
func (s *Server) App() *app.App { return s.app }

// Logger is the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// Options are the options the server was built with, defaults applied.
func (s *Server) Options() Options { return s.opts }

// Handle registers a route whose handler runs behind Wrap with acc.
func (s *Server) Handle(method, path string, acc Access, h HandlerFunc) {
	s.router.Handle(path, s.Wrap(acc, h)).Methods(method)
}

// ServeHTTP runs the global middleware chain, then the router.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.chain.ServeHTTP(w, r)
}

// handler returns the full handler chain.
func (s *Server) handler() http.Handler {
	return s.recoverer(s.requestID(s.accessLog(s.securityHeaders(s.bodyLimit(s.router)))))
}

// Router is the mux the surfaces register on; tests walk it.
func (s *Server) Router() *mux.Router { return s.router }

// AddAuthenticator registers another credential kind (OAuth bearer tokens).
func (s *Server) AddAuthenticator(a Authenticator) { s.authn = append(s.authn, a) }
