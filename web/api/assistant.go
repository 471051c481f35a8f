package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// assistantRoutes registers the assistant's routes. Everyone may read
// their own conversations; the service refuses auditor API keys on the
// routes that store messages (auditor keys are read-only).
func (s *Server) assistantRoutes(handle routeFunc) {
	handle("POST", "/v1/assistant-chat/sessions", httpx.CanRead, s.startAssistantSession)
	handle("GET", "/v1/assistant-chat/sessions", httpx.CanRead, s.listAssistantSessions)
	handle("GET", "/v1/assistant-chat/sessions/{sessionId}", httpx.CanRead, s.getAssistantSession)
	handle("POST", "/v1/assistant-chat/sessions/{sessionId}/messages", httpx.CanRead.OutsideTransaction(), s.sendAssistantMessage)
	handle("POST", "/v1/assistant-chat/sessions/{sessionId}/end", httpx.CanRead, s.endAssistantSession)
	handle("POST", "/v1/assistant-chat/sessions/{sessionId}/actions/{assistantActionId}/confirm", httpx.CanRead, s.confirmAssistantAction)
	handle("POST", "/v1/assistant-chat/sessions/{sessionId}/actions/{assistantActionId}/cancel", httpx.CanRead, s.cancelAssistantAction)
	handle("POST", "/v1/assistant-chat/completions", httpx.CanRead, s.completeAssistantChat)
	handle("GET", "/v1/assistant-chat/history", httpx.CanRead, s.getAssistantHistory)
	handle("PUT", "/v1/assistant-chat/history", httpx.CanRead, s.saveAssistantHistory)
	handle("DELETE", "/v1/assistant-chat/history", httpx.CanRead, s.clearAssistantHistory)
}

func (s *Server) startAssistantSession(w http.ResponseWriter, r *http.Request) error {
	var in app.AssistantSessionInput
	if r.ContentLength != 0 {
		if err := httpx.Decode(r, &in); err != nil {
			return err
		}
	}
	v, err := s.app.StartAssistantSession(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) listAssistantSessions(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListAssistantSessions(r.Context(), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getAssistantSession(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetAssistantSession(r.Context(), pathID(r, "sessionId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) endAssistantSession(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.EndAssistantSession(r.Context(), pathID(r, "sessionId"))
	return ok(w, http.StatusOK, v, err)
}

// wantsStream reports whether the client asked for Server-Sent Events.
func wantsStream(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// sseWriter writes the answer's events as Server-Sent Events, starting the
// response at the first event (so that validation errors before it are
// ordinary JSON errors).
type sseWriter struct {
	w       http.ResponseWriter
	status  int
	started bool
}

func (e *sseWriter) send(event string, data any) {
	if !e.started {
		h := e.w.Header()
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		e.w.WriteHeader(e.status)
		e.started = true
	}
	raw, _ := json.Marshal(data)
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", event, raw)
	_ = http.NewResponseController(e.w).Flush() // a buffering writer (Idempotency-Key) cannot flush
}

func (e *sseWriter) emit(ev app.AssistantStreamEvent) {
	switch ev.Type {
	case "done":
		if ev.Exchange != nil && ev.Exchange.SessionID == "" {
			e.send("done", ev.Exchange.Answer)
			return
		}
		e.send("done", ev.Exchange)
	default:
		e.send(ev.Type, map[string]string{"text": ev.Text})
	}
}

// fail ends a started stream with an error event.
func (e *sseWriter) fail(r *http.Request, err error) {
	e.send("error", map[string]string{"message": "the answer could not be stored", "requestId": app.RequestIDFrom(r.Context())})
}

func (s *Server) sendAssistantMessage(w http.ResponseWriter, r *http.Request) error {
	var in app.AssistantMessageInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if !wantsStream(r) {
		v, err := s.app.SendAssistantMessage(r.Context(), pathID(r, "sessionId"), in, nil)
		return ok(w, http.StatusCreated, v, err)
	}
	sse := &sseWriter{w: w, status: http.StatusCreated}
	_, err := s.app.SendAssistantMessage(r.Context(), pathID(r, "sessionId"), in, sse.emit)
	if err != nil && sse.started {
		sse.fail(r, err)
		return nil
	}
	return err
}

func (s *Server) completeAssistantChat(w http.ResponseWriter, r *http.Request) error {
	var in app.AssistantCompletionInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if !wantsStream(r) {
		v, err := s.app.Complete(r.Context(), in, nil)
		return ok(w, http.StatusOK, v, err)
	}
	sse := &sseWriter{w: w, status: http.StatusOK}
	_, err := s.app.Complete(r.Context(), in, sse.emit)
	if err != nil && sse.started {
		sse.fail(r, err)
		return nil
	}
	return err
}

func (s *Server) getAssistantHistory(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetAssistantHistory(r.Context())
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) saveAssistantHistory(w http.ResponseWriter, r *http.Request) error {
	var in app.AssistantHistoryInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.SaveAssistantHistory(r.Context(), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) clearAssistantHistory(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.ClearAssistantHistory(r.Context()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
