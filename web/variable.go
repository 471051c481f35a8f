package web

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
)

func (s *Server) listVariables(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListVariables(r.Context(), app.VariableFilter{Search: r.URL.Query().Get("q"), Page: p})
	if err != nil {
		return err
	}
	writeList(w, p, l)
	return nil
}

func (s *Server) getVariable(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetVariable(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) createVariable(w http.ResponseWriter, r *http.Request) error {
	var in app.VariableInput
	if err := decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateVariable(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, v)
	return nil
}

func (s *Server) updateVariable(w http.ResponseWriter, r *http.Request) error {
	var in app.VariableInput
	if err := decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateVariable(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) deleteVariable(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteVariable(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
