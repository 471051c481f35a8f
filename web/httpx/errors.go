package httpx

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

// errorBody carries both documented error forms at once (DECISIONS).
type errorBody struct {
	Message   string      `json:"message"`
	Error     errorDetail `json:"error"`
	RequestID string      `json:"requestId"`
}

type errorDetail struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// httpError is an error the web layer raises itself with a fixed status.
type HTTPError struct {
	Status  int
	Code    string
	Msg     string
	Details map[string]any
}

func (e *HTTPError) Error() string { return e.Msg }

func BadRequest(field string, value any, format string, args ...any) error {
	d := map[string]any{}
	if field != "" {
		d["field"] = field
		if value != nil {
			d["value"] = value
		}
	}
	return &HTTPError{Status: http.StatusBadRequest, Code: "validation_error", Msg: fmt.Sprintf(format, args...), Details: d}
}

var (
	ErrNotFoundRoute = &HTTPError{Status: http.StatusNotFound, Code: "not_found", Msg: "no such route"}
	errMethod        = &HTTPError{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Msg: "method not allowed on this route"}
)

// methodNotAllowed answers 405 with the Allow header listing the methods
// the path has.
func (s *Server) MethodNotAllowed(w http.ResponseWriter, r *http.Request) error {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		var match mux.RouteMatch
		if s.router.Match(probe, &match) && match.MatchErr == nil {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
	}
	return errMethod
}

// writeError picks the status and writes the error body. 500s are logged
// with the request id; the client gets a generic message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code, msg, details := s.Classify(err)
	if status >= 500 {
		s.log.ErrorContext(r.Context(), "request failed", slog.String("request_id", RequestID(r)),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("error", err))
	}
	if details == nil {
		details = map[string]any{}
	}
	if status == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		c := `ApiKey realm="compliance"`
		if s.Challenge != nil {
			c = s.Challenge(r)
		}
		w.Header().Set("WWW-Authenticate", c)
	}
	WriteJSON(w, status, errorBody{Message: msg, Error: errorDetail{Code: code, Message: msg, Details: details}, RequestID: RequestID(r)})
}

func (s *Server) Classify(err error) (int, string, string, map[string]any) {
	var he *HTTPError
	var ve *app.ValidationError
	var le *app.LimitError
	var mbe *http.MaxBytesError
	var pe *app.PublicError
	public := func(def string) string {
		if errors.As(err, &pe) {
			return pe.Msg
		}
		return def
	}
	switch {
	case errors.As(err, &he):
		return he.Status, he.Code, he.Msg, he.Details
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, "payload_too_large",
			fmt.Sprintf("the request body exceeds the limit of %d bytes", mbe.Limit), map[string]any{"limit": mbe.Limit}
	case errors.As(err, &ve):
		d := map[string]any{}
		fields := ve.FieldNames()
		if len(fields) > 0 {
			d["field"] = fields[0]
			if v, ok := ve.Values[fields[0]]; ok {
				d["value"] = v
			}
			d["reason"] = ve.Fields[fields[0]]
		}
		if len(fields) > 1 {
			all := map[string]string{}
			for _, f := range fields {
				all[f] = ve.Fields[f]
			}
			d["fields"] = all
		}
		return http.StatusBadRequest, "validation_error", ve.Error(), d
	case errors.As(err, &le):
		return http.StatusForbidden, "forbidden", le.Error(),
			map[string]any{"limit": le.Limit, "allowed": le.Allowed, "plan": le.Plan}
	case errors.Is(err, app.ErrUnauthenticated):
		return http.StatusUnauthorized, "unauthorized", "missing, invalid, expired or revoked credentials", nil
	case errors.Is(err, app.ErrForbidden):
		return http.StatusForbidden, "forbidden", public("your role lacks permission for this operation"), nil
	case errors.Is(err, app.ErrNotFound):
		return http.StatusNotFound, "not_found", public("resource not found"), nil
	case errors.Is(err, app.ErrBrowserUnavailable):
		return http.StatusServiceUnavailable, "service_unavailable", public("the browser is not available on this appliance"), nil
	case errors.Is(err, app.ErrBrowserBusy):
		return http.StatusTooManyRequests, "rate_limited", public("too many browser sessions are open"), nil
	case errors.Is(err, app.ErrConflict):
		return http.StatusConflict, "conflict", public("the request conflicts with existing data"), nil
	}
	return http.StatusInternalServerError, "internal_error", "internal error; it is safe to retry with the same Idempotency-Key", nil
}
