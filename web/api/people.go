package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// peopleRoutes registers the routes of the handlers in this file.
func (s *Server) peopleRoutes(handle routeFunc) {
	handle("GET", "/v1/people", httpx.CanRead, s.listPeople)
	handle("POST", "/v1/people", httpx.CanManage, s.createPerson)
	handle("POST", "/v1/people/bulk", httpx.CanManage, s.bulkCreatePeople)
	handle("GET", "/v1/people/{id}", httpx.CanRead, s.getPerson)
	handle("PATCH", "/v1/people/{id}", httpx.CanManage, s.updatePerson)
	handle("POST", "/v1/people/{id}/devices", httpx.CanManage, s.linkDevice)
	handle("DELETE", "/v1/people/{id}/devices/{deviceId}", httpx.CanManage, s.unlinkDevice)

	handle("GET", "/v1/devices", httpx.CanRead, s.listDevices)
	handle("GET", "/v1/devices/{id}", httpx.CanRead, s.getDevice)

	handle("GET", "/v1/api-keys", httpx.CanKeys, s.listAPIKeys)
	handle("POST", "/v1/api-keys", httpx.CanKeys, s.createAPIKey)
	handle("DELETE", "/v1/api-keys/{id}", httpx.CanKeys, s.revokeAPIKey)
}

func (s *Server) listPeople(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	inactive, err := httpx.BoolParam(r, "includeInactive")
	if err != nil {
		return err
	}
	if inactive == nil {
		// The reference implementation's name for the same switch.
		if inactive, err = httpx.BoolParam(r, "includeDeactivated"); err != nil {
			return err
		}
	}
	f := app.PersonFilter{Role: r.URL.Query().Get("role"), Page: p, Inactive: inactive != nil && *inactive}
	f.Source, f.TwoFactor = r.URL.Query().Get("source"), r.URL.Query().Get("twoFactor")
	l, err := s.app.ListPeople(r.Context(), f)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getPerson(w http.ResponseWriter, r *http.Request) error {
	p, err := s.app.GetPerson(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) createPerson(w http.ResponseWriter, r *http.Request) error {
	var in app.PersonCreate
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	p, err := s.app.CreatePerson(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, p)
	return nil
}

func (s *Server) bulkCreatePeople(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Members []app.PersonCreate `json:"members"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	ps, err := s.app.BulkCreatePeople(r.Context(), in.Members)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, map[string]any{"data": ps, "count": len(ps)})
	return nil
}

func (s *Server) updatePerson(w http.ResponseWriter, r *http.Request) error {
	var in app.PersonPatch
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	p, err := s.app.UpdatePerson(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) linkDevice(w http.ResponseWriter, r *http.Request) error {
	var in app.DeviceLink
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	p, err := s.app.LinkDevice(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) unlinkDevice(w http.ResponseWriter, r *http.Request) error {
	p, err := s.app.UnlinkDevice(r.Context(), pathID(r, "id"), pathID(r, "deviceId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) listDevices(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	unlinked, err := httpx.BoolParam(r, "unlinked")
	if err != nil {
		return err
	}
	compliant, err := httpx.BoolParam(r, "compliant")
	if err != nil {
		return err
	}
	stale, err := httpx.BoolParam(r, "stale")
	if err != nil {
		return err
	}
	f := app.DeviceFilter{PersonID: r.URL.Query().Get("personId"), Unlinked: unlinked != nil && *unlinked, Page: p,
		Platform: r.URL.Query().Get("platform"), Compliant: compliant, Stale: stale, Source: r.URL.Query().Get("source")}
	if f.Platform != "" && !slices.Contains(app.DeviceListPlatforms(), f.Platform) {
		return app.Invalid("platform", app.CodeInvalidEnum, f.Platform, "platform must be one of "+strings.Join(app.DeviceListPlatforms(), ", "))
	}
	l, err := s.app.ListDevices(r.Context(), f)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getDevice(w http.ResponseWriter, r *http.Request) error {
	d, err := s.app.GetDeviceDetail(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, d)
	return nil
}

func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request) error {
	ks, err := s.app.ListAPIKeys(r.Context())
	if err != nil {
		return err
	}
	p := app.Page{Page: 1, PerPage: max(len(ks), 1)}
	httpx.WriteList(w, p, app.List[app.APIKey]{Items: ks, Total: len(ks)})
	return nil
}

func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	var in app.APIKeyCreate
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	k, err := s.app.CreateAPIKey(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, k)
	return nil
}

func (s *Server) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.RevokeAPIKey(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
