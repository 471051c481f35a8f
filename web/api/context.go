package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// contextRoutes registers the routes of the handlers in this file.
func (s *Server) contextRoutes(handle routeFunc) {
	handle("GET", "/v1/context", httpx.CanRead, s.getContext)
	handle("PATCH", "/v1/context", httpx.CanManage, s.updateContext)
	handle("GET", "/v1/context/snapshots", httpx.CanRead, s.listContextSnapshots)
	handle("GET", "/v1/context/snapshots/{id}", httpx.CanRead, s.getContextSnapshot)
	handle("POST", "/v1/context/snapshots/{id}/restore", httpx.CanManage, s.restoreContextSnapshot)
}

func (s *Server) getContext(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.GetContext(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) updateContext(w http.ResponseWriter, r *http.Request) error {
	var in app.ContextPatch
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	c, err := s.app.UpdateContext(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) listContextSnapshots(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListContextSnapshots(r.Context(), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getContextSnapshot(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.GetContextSnapshot(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
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
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}
