package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// knowledgeRoutes registers the routes of the handlers in this file.
func (s *Server) knowledgeRoutes(handle routeFunc) {
	handle("GET", "/v1/knowledge-base/entries", httpx.CanRead, s.listKBEntries)
	handle("POST", "/v1/knowledge-base/entries", httpx.CanManage, s.createKBEntry)
	handle("POST", "/v1/knowledge-base/entries/import", httpx.CanManage, s.importKBEntries)
	handle("GET", "/v1/knowledge-base/entries/{id}", httpx.CanRead, s.getKBEntry)
	handle("PATCH", "/v1/knowledge-base/entries/{id}", httpx.CanManage, s.updateKBEntry)
	handle("DELETE", "/v1/knowledge-base/entries/{id}", httpx.CanManage, s.deleteKBEntry)
	handle("GET", "/v1/knowledge-base/search", httpx.CanRead, s.searchKB)
}

func (s *Server) listKBEntries(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListKBEntries(r.Context(), app.KBFilter{Tag: q.Get("tag"), OwnerID: q.Get("ownerId"),
		ReviewDueBefore: q.Get("reviewDueBefore"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getKBEntry(w http.ResponseWriter, r *http.Request) error {
	e, err := s.app.GetKBEntry(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, e)
	return nil
}

func (s *Server) createKBEntry(w http.ResponseWriter, r *http.Request) error {
	var in app.KBEntryInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	e, err := s.app.CreateKBEntry(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, e)
	return nil
}

func (s *Server) updateKBEntry(w http.ResponseWriter, r *http.Request) error {
	var in app.KBEntryInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	e, err := s.app.UpdateKBEntry(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, e)
	return nil
}

func (s *Server) deleteKBEntry(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteKBEntry(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) searchKB(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.SearchKB(r.Context(), r.URL.Query().Get("q"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

// importKBEntries reads a CSV upload (form field file) into entries.
func (s *Server) importKBEntries(w http.ResponseWriter, r *http.Request) error {
	u, err := s.ParseUpload(w, r, "file")
	if err != nil {
		return err
	}
	defer u.Close()
	es, err := s.app.ImportKBEntriesCSV(r.Context(), u.File)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, map[string]any{"imported": len(es), "data": es})
	return nil
}
