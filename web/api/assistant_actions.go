package api

import (
	"net/http"
)

// The assistant's proposed writes: the person confirms (the record is
// created as them, their role checked now) or cancels (nothing is
// created). Routes are registered in assistantRoutes.

func (s *Server) confirmAssistantAction(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.ConfirmAssistantAction(r.Context(), pathID(r, "sessionId"), pathID(r, "assistantActionId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) cancelAssistantAction(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.CancelAssistantAction(r.Context(), pathID(r, "sessionId"), pathID(r, "assistantActionId"))
	return ok(w, http.StatusOK, v, err)
}
