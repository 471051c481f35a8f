package httpx

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

type ctxKey int

const requestIDKey ctxKey = iota

// validRequestID accepts 1 to 128 of A-Z a-z 0-9 . _ - (a client's id is
// echoed only when it is this tame).
func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func RequestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey).(string)
	return id
}

// requestID takes a sane client X-Request-Id or makes one, and echoes it.
func (s *Server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = app.NewID("req")
		}
		w.Header().Set("X-Request-Id", id)
		ctx := context.WithValue(r.Context(), requestIDKey, id)
		ctx = app.WithRequestID(ctx, id)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// statusWriter remembers the status and size written.
type statusWriter struct {
	http.ResponseWriter
	status int
	size   int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.size += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// recoverer turns a panic into the JSON 500 and logs the stack.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				// The request id middleware runs inside this one; its id is
				// already on the response.
				r = r.WithContext(context.WithValue(r.Context(), requestIDKey, sw.Header().Get("X-Request-Id")))
				s.log.Error("panic", slog.String("request_id", RequestID(r)), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
				if sw.status == 0 {
					s.writeError(sw, r, fmt.Errorf("panic: %v", p))
				}
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// accessLog writes one structured line per request.
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		holder := &PrincipalHolder{}
		panicked := true
		defer func() {
			if !panicked {
				return
			}
			// The recoverer outside answers 500; log the line here too.
			p := recover()
			s.logRequest(r, 500, sw.size, start, holder)
			panic(p)
		}()
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), HolderKey{}, holder)))
		panicked = false
		s.logRequest(r, sw.status, sw.size, start, holder)
		if s.opts.Observer != nil {
			route := holder.route
			if route == "" {
				route = "unmatched"
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			s.opts.Observer.ObserveRequest(route, methodLabel(r.Method), status, time.Since(start))
		}
	})
}

func (s *Server) logRequest(r *http.Request, status, size int, start time.Time, holder *PrincipalHolder) {
	attrs := []slog.Attr{
		slog.String("method", r.Method), slog.String("path", LoggedPath(r.URL.Path)), slog.Int("status", status),
		slog.Int("bytes", size), slog.Duration("duration", time.Since(start)), slog.String("request_id", RequestID(r)),
	}
	if holder.Principal != nil {
		attrs = append(attrs, slog.String("org_id", holder.Principal.OrgID), slog.String("actor_id", holder.Principal.ActorID()))
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
}

type HolderKey struct{}

// PrincipalHolder lets the access log see who the inner handlers
// authenticated, and the metrics which route answered.
type PrincipalHolder struct {
	Principal *app.Principal
	route     string
}

// LabelRoute notes the matched route's path template for the request
// metrics. The core's router uses it; a surface with a router of its own
// (the web application) uses it too.
func (s *Server) LabelRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := r.Context().Value(HolderKey{}).(*PrincipalHolder); ok {
			if rt := mux.CurrentRoute(r); rt != nil {
				if tpl, err := rt.GetPathTemplate(); err == nil {
					h.route = tpl
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// methodLabel keeps the method label to the methods routes use.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// securityHeaderValues are built once (canonical keys) instead of on every
// response.
var securityHeaderValues = map[string][]string{
	"X-Content-Type-Options":  {"nosniff"},
	"X-Frame-Options":         {"DENY"},
	"Referrer-Policy":         {"no-referrer"},
	"Content-Security-Policy": {"default-src 'none'; frame-ancestors 'none'"},
	"Cache-Control":           {"no-store"},
}

// securityHeaders sets headers every response carries.
func (s *Server) securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for k, v := range securityHeaderValues {
			// Full-capacity slices: a later Add copies rather than writes
			// into the shared array.
			h[k] = v[:len(v):len(v)]
		}
		if s.CSPFor != nil {
			h.Set("Content-Security-Policy", s.CSPFor(r.URL.Path))
		}
		next.ServeHTTP(w, r)
	})
}

// bodyLimit caps every request body at the upload limit; JSON decoding
// applies the tighter JSON limit.
func (s *Server) bodyLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.opts.MaxUploadBytes+(1<<20) {
			if to := s.uploadTooLarge(r, &http.MaxBytesError{Limit: s.opts.MaxUploadBytes}); to != "" {
				http.Redirect(w, r, to, http.StatusSeeOther) // a web page's upload: back to its page
				return
			}
			s.writeError(w, r, &http.MaxBytesError{Limit: s.opts.MaxUploadBytes})
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxUploadBytes+(1<<20))
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) uploadTooLarge(r *http.Request, err error) string {
	if s.UploadTooLarge == nil {
		return ""
	}
	return s.UploadTooLarge(r, err)
}
