package web

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
)

func (s *Server) getContext(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.GetContext(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) updateContext(w http.ResponseWriter, r *http.Request) error {
	var in app.ContextPatch
	if err := decode(r, &in); err != nil {
		return err
	}
	c, err := s.app.UpdateContext(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) listContextSnapshots(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListContextSnapshots(r.Context(), p)
	if err != nil {
		return err
	}
	writeList(w, p, l)
	return nil
}

func (s *Server) getContextSnapshot(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.GetContextSnapshot(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) restoreContextSnapshot(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		ChangeNote string `json:"changeNote"`
	}
	if err := decodeIfBody(r, &in); err != nil {
		return err
	}
	c, err := s.app.RestoreContextSnapshot(r.Context(), pathID(r, "id"), in.ChangeNote)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}
