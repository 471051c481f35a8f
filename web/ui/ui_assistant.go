package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

// The assistant page: the person's conversations, one of them open with
// its messages and each answer's sources as links, and a form to ask. It
// works without JavaScript: asking is a form post answered by a redirect
// back to the conversation.

// uiAssistantRoutes registers the assistant's pages. The service decides
// who may ask (everyone signed in: auditors too, as a person).
func (s *Server) uiAssistantRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/assistant", uiSignedIn, s.uiAssistant)
	page("POST", "/assistant", uiSignedIn, s.uiAssistantAsk)
	page("POST", "/assistant/{id}/end", uiSignedIn, s.uiAssistantEnd)
	page("POST", "/assistant/{id}/actions/{actionId}/confirm", uiSignedIn, s.uiAssistantConfirm)
	page("POST", "/assistant/{id}/actions/{actionId}/cancel", uiSignedIn, s.uiAssistantCancel)
}

// assistantSuggestions are questions the offline assistant answers.
var assistantSuggestions = []string{
	"Which ISO 27001 controls have no evidence?",
	"Which evidence expires in the next 30 days?",
	"Which vendors process personal data outside the EU?",
	"List open high findings",
	"Which tasks are overdue?",
	"Show critical risks",
	"What are our framework scores?",
}

// assistantMessageView is a message with its text in lines.
type assistantMessageView struct {
	app.AssistantMessage
	Lines  []string
	Latest bool
}

func (s *Server) uiAssistant(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.assistantPage(w, r, v, r.URL.Query().Get("session"))
}

func (s *Server) assistantPage(w http.ResponseWriter, r *http.Request, v *view, sessionID string) error {
	ctx := r.Context()
	v.Title, v.Section = "Assistant", "assistant"
	sessions, err := s.app.ListAssistantSessions(ctx, app.Page{Page: 1, PerPage: 30})
	if err != nil {
		return err
	}
	data := map[string]any{"Sessions": sessions.Items, "Suggestions": assistantSuggestions, "Model": s.app.AssistantModelConfigured(),
		"Max": app.MaxAssistantMessage}
	if sessionID == "" && len(sessions.Items) > 0 && sessions.Items[0].Status == app.AssistantActive {
		sessionID = sessions.Items[0].ID
	}
	if sessionID != "" {
		cur, err := s.app.GetAssistantSession(ctx, sessionID)
		if err != nil {
			return err
		}
		data["Current"] = cur
		msgs := make([]assistantMessageView, len(cur.Messages))
		for i, m := range cur.Messages {
			msgs[i] = assistantMessageView{AssistantMessage: m, Lines: strings.Split(m.Text, "\n"), Latest: i == len(cur.Messages)-1}
		}
		data["Messages"] = msgs
		v.Title = "Assistant: " + cur.Title
	}
	v.Data = data
	return s.page(w, r, "assistant", v)
}

func (s *Server) uiAssistantAsk(w http.ResponseWriter, r *http.Request, v *view) error {
	ctx := r.Context()
	text := r.PostFormValue("text")
	sessionID := strings.TrimSpace(r.PostFormValue("session"))
	if sessionID == "" || r.PostFormValue("new") != "" {
		sess, err := s.app.StartAssistantSession(ctx, app.AssistantSessionInput{})
		if err != nil {
			return err
		}
		sessionID = sess.ID
	}
	if _, err := s.app.SendAssistantMessage(ctx, sessionID, app.AssistantMessageInput{Text: &text}, nil); err != nil {
		if formErrors(err, v, r) {
			return s.assistantPage(w, r, v, sessionID)
		}
		if errors.Is(err, app.ErrConflict) {
			v.Errors = map[string]string{"text": "This conversation has ended: start a new one."}
			v.Form, v.Status = r.PostForm, http.StatusConflict
			return s.assistantPage(w, r, v, sessionID)
		}
		return err
	}
	return redirect(w, r, "/assistant?session="+url.QueryEscape(sessionID)+"#latest")
}

func (s *Server) uiAssistantEnd(w http.ResponseWriter, r *http.Request, v *view) error {
	id := mux.Vars(r)["id"]
	if _, err := s.app.EndAssistantSession(r.Context(), id); err != nil {
		return err
	}
	return redirect(w, r, "/assistant?session="+url.QueryEscape(id)+"&done=ended")
}

// uiAssistantConfirm confirms a write the assistant proposed; the service
// checks the person's role now.
func (s *Server) uiAssistantConfirm(w http.ResponseWriter, r *http.Request, v *view) error {
	id := mux.Vars(r)["id"]
	if _, err := s.app.ConfirmAssistantAction(r.Context(), id, mux.Vars(r)["actionId"]); err != nil {
		if errors.Is(err, app.ErrConflict) || errors.Is(err, app.ErrForbidden) {
			v.Flash, v.Status = actionRefusal(err), http.StatusConflict
			if errors.Is(err, app.ErrForbidden) {
				v.Status = http.StatusForbidden
			}
			return s.assistantPage(w, r, v, id)
		}
		return err
	}
	return redirect(w, r, "/assistant?session="+url.QueryEscape(id)+"#latest")
}

// uiAssistantCancel cancels a proposed write: nothing is created.
func (s *Server) uiAssistantCancel(w http.ResponseWriter, r *http.Request, v *view) error {
	id := mux.Vars(r)["id"]
	if _, err := s.app.CancelAssistantAction(r.Context(), id, mux.Vars(r)["actionId"]); err != nil {
		if errors.Is(err, app.ErrConflict) {
			v.Flash, v.Status = actionRefusal(err), http.StatusConflict
			return s.assistantPage(w, r, v, id)
		}
		return err
	}
	return redirect(w, r, "/assistant?session="+url.QueryEscape(id))
}

// actionRefusal is the public message of a refused decision.
func actionRefusal(err error) string {
	var pe *app.PublicError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	return "The change was not made."
}
