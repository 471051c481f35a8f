package web

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
)

func (s *Server) listOAuthApps(w http.ResponseWriter, r *http.Request) error {
	apps, err := s.app.ListOAuthApps(r.Context())
	if err != nil {
		return err
	}
	writeList(w, app.Page{Page: 1, PerPage: max(len(apps), 1)}, app.List[app.OAuthClient]{Items: apps, Total: len(apps)})
	return nil
}

func (s *Server) createOAuthApp(w http.ResponseWriter, r *http.Request) error {
	var in app.OAuthClientInput
	if err := decode(r, &in); err != nil {
		return err
	}
	c, err := s.app.CreateOAuthApp(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, c)
	return nil
}

func (s *Server) getOAuthApp(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.GetOAuthApp(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) updateOAuthApp(w http.ResponseWriter, r *http.Request) error {
	var in app.OAuthClientInput
	if err := decode(r, &in); err != nil {
		return err
	}
	c, err := s.app.UpdateOAuthApp(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) rotateOAuthAppSecret(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.RotateOAuthAppSecret(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) deleteOAuthApp(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteOAuthApp(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listGrants(w http.ResponseWriter, r *http.Request) error {
	grants, err := s.app.ListMyGrants(r.Context())
	if err != nil {
		return err
	}
	writeList(w, app.Page{Page: 1, PerPage: max(len(grants), 1)}, app.List[app.OAuthGrant]{Items: grants, Total: len(grants)})
	return nil
}

func (s *Server) revokeGrant(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.RevokeMyGrant(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
