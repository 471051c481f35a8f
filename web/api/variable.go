package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// variableRoutes registers the routes of the handlers in this file.
func (s *Server) variableRoutes(handle routeFunc) {
	handle("GET", "/v1/variables", httpx.CanRead, s.listVariables)
	handle("POST", "/v1/variables", httpx.CanManage, s.createVariable)
	handle("GET", "/v1/variables/{id}", httpx.CanRead, s.getVariable)
	handle("PATCH", "/v1/variables/{id}", httpx.CanManage, s.updateVariable)
	handle("DELETE", "/v1/variables/{id}", httpx.CanManage, s.deleteVariable)
}

func (s *Server) listVariables(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListVariables(r.Context(), app.VariableFilter{Search: r.URL.Query().Get("q"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getVariable(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetVariable(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) createVariable(w http.ResponseWriter, r *http.Request) error {
	var in app.VariableInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateVariable(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, v)
	return nil
}

func (s *Server) updateVariable(w http.ResponseWriter, r *http.Request) error {
	var in app.VariableInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateVariable(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) deleteVariable(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteVariable(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
