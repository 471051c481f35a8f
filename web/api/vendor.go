package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// vendorRoutes registers the routes of the handlers in this file.
func (s *Server) vendorRoutes(handle routeFunc) {
	handle("GET", "/v1/vendors", httpx.CanRead, s.listVendors)
	handle("POST", "/v1/vendors", httpx.CanManage.WriteAhead(), s.createVendor)
	handle("GET", "/v1/vendors/{id}", httpx.CanRead, s.getVendor)
	handle("PATCH", "/v1/vendors/{id}", httpx.CanManage, s.updateVendor)
	handle("DELETE", "/v1/vendors/{id}", httpx.CanManage, s.deleteVendor)
	handle("POST", "/v1/vendors/{id}/archive", httpx.CanManage, s.archiveVendor)
	handle("POST", "/v1/vendors/{id}/restore", httpx.CanManage, s.restoreVendor)
}

// authedUser is the vendor list's authenticatedUser (session auth only).
type authedUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// vendorListBody carries both documented envelope forms at once.
type vendorListBody struct {
	Data              []app.Vendor `json:"data"`
	Meta              httpx.Meta   `json:"meta"`
	Count             int          `json:"count"`
	AuthType          string       `json:"authType"`
	AuthenticatedUser *authedUser  `json:"authenticatedUser,omitempty"`
}

func (s *Server) listVendors(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := app.VendorFilter{Criticality: q.Get("criticality"), Category: q.Get("category"), Country: q.Get("country"),
		DPAStatus: q.Get("dpaStatus"), Status: q.Get("status"), AssigneeID: q.Get("assigneeId"), Search: q.Get("q"),
		Sort: q.Get("sort"), Page: p}
	if f.ProcessesPersonalData, err = httpx.BoolParam(r, "processesPersonalData"); err != nil {
		return err
	}
	if f.ProcessesPersonalData == nil {
		if f.ProcessesPersonalData, err = httpx.BoolParam(r, "dataProcessing"); err != nil {
			return err
		}
	}
	if f.ICTService, err = httpx.BoolParam(r, "ictService"); err != nil {
		return err
	}
	archived, err := httpx.BoolParam(r, "archived")
	if err != nil {
		return err
	}
	f.Archived = archived != nil && *archived
	l, err := s.app.ListVendors(r.Context(), f)
	if err != nil {
		return err
	}
	pr := app.PrincipalFrom(r.Context())
	body := vendorListBody{Data: l.Items, Meta: httpx.NewMeta(p, l.Total), Count: l.Total, AuthType: pr.AuthType}
	if pr.AuthType == app.AuthSession {
		body.AuthenticatedUser = &authedUser{ID: pr.UserID, Email: pr.Email}
	}
	httpx.WriteJSON(w, http.StatusOK, body)
	return nil
}

func (s *Server) getVendor(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetVendor(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) createVendor(w http.ResponseWriter, r *http.Request) error {
	var in app.VendorInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateVendor(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, v)
	return nil
}

func (s *Server) updateVendor(w http.ResponseWriter, r *http.Request) error {
	var in app.VendorInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateVendor(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) archiveVendor(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.SetVendorArchived(r.Context(), pathID(r, "id"), true)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, v)
	return nil
}

// deleteVendor archives: the register keeps every vendor for the audit trail.
func (s *Server) deleteVendor(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.app.SetVendorArchived(r.Context(), pathID(r, "id"), true); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) restoreVendor(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.SetVendorArchived(r.Context(), pathID(r, "id"), false)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, v)
	return nil
}
