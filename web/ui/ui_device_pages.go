package ui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// The device pages: the register (everyone; employees and contractors see
// their own devices), one device with its checks and history, and enrolling
// devices with enrolment tokens (owner, admin). The services decide who may
// do what, as in the API.

// uiDevicePageRoutes registers the device pages. /devices/enrol comes
// before /devices/{id}.
func (s *Server) uiDevicePageRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/devices", uiSignedIn, s.uiDevices)
	page("GET", "/devices/enrol", uiManage, s.uiEnrol)
	page("POST", "/devices/enrol", uiManage, s.uiCreateEnrolmentToken)
	page("POST", "/devices/enrol/{id}/revoke", uiManage, s.uiRevokeEnrolmentToken)
	page("GET", "/devices/{id}", uiSignedIn, s.uiDevice)
	page("POST", "/devices/{id}/delete", uiManage, s.uiDeleteDevice)
	page("POST", "/devices/{id}/revoke-agent", uiManage, s.uiRevokeDeviceAgent)
	s.uiAgentSignInRoutes(page)
}

func init() {
	flashes["device-deleted"] = "Device deleted with its check history. Its agent can no longer check in."
	flashes["agent-revoked"] = "Agent revoked: the device's agent is refused until the device is enrolled again."
	flashes["enrolment-revoked"] = "Enrolment token revoked; devices it enrolled keep checking in."
}

// deviceExpiries are the lifetimes the enrolment form offers.
var deviceExpiries = []string{"1d", "7d", "30d", "90d", "365d"}

func deviceList(fetch func(app.Page) ([]app.Device, int, error)) listSpec[app.Device] {
	type D = app.Device
	return listSpec[D]{Name: "devices", Noun: "device", Plural: "devices", Default: "name", PerPage: 50,
		FilterKeys: []string{"person", "platform", "source", "compliant", "stale"}, Fetch: fetch,
		Cols: []listCol[D]{
			{Key: "id", Cell: func(d D) string { return d.ID }},
			{Key: "name", Cell: func(d D) string { return d.Name }, SortKey: func(d D) string { return lower(d.Name) }},
			{Key: "hostname", Cell: func(d D) string { return d.Hostname }, SortKey: func(d D) string { return lower(d.Hostname) }},
			{Key: "platform", Cell: func(d D) string { return d.Platform }, SortKey: func(d D) string { return d.Platform }},
			{Key: "osVersion", Cell: func(d D) string { return deref(d.OSVersion) }},
			{Key: "serialNumber", Cell: func(d D) string { return deref(d.SerialNumber) }},
			{Key: "personId", Cell: func(d D) string { return deref(d.PersonID) }},
			{Key: "isCompliant", Cell: func(d D) string { return strconv.FormatBool(d.IsCompliant) }, SortKey: func(d D) string { return strconv.FormatBool(d.IsCompliant) }},
			{Key: "lastCheckInAt", Cell: func(d D) string { return optTime(d.LastCheckIn) }, SortKey: func(d D) string { return lastIfEmpty(optTime(d.LastCheckIn)) }},
			{Key: "agentVersion", Cell: func(d D) string { return deref(d.AgentVersion) }},
			{Key: "source", Cell: func(d D) string { return d.Source }, SortKey: func(d D) string { return d.Source }},
			{Key: "createdAt", Cell: func(d D) string { return iso(d.CreatedAt) }},
		}}
}

// triFilter reads a "true"/"false" filter; anything else is no filter.
func triFilter(s string) *bool {
	switch s {
	case "true":
		return app.Ptr(true)
	case "false":
		return app.Ptr(false)
	}
	return nil
}

// personNames maps person ids to names for the roles that may list people.
func (s *Server) personNames(r *http.Request, v *view) ([]app.Person, map[string]string) {
	names := map[string]string{}
	if v.P == nil || v.P.SeesOnlyAssigned() {
		if v.User != nil && v.P != nil {
			names[v.P.UserID] = v.User.Name
		}
		return nil, names
	}
	ps := s.people(r)
	for _, p := range ps {
		names[p.ID] = p.Name
	}
	return ps, names
}

func (s *Server) uiDevices(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	f := app.DeviceFilter{PersonID: q.Get("person"), Platform: q.Get("platform"), Source: q.Get("source"),
		Compliant: triFilter(q.Get("compliant")), Stale: triFilter(q.Get("stale"))}
	lv, items, done, err := runList(w, r, v, deviceList(func(p app.Page) ([]app.Device, int, error) {
		f.Page = p
		l, err := s.app.ListDevices(r.Context(), f)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = q
	v.Title, v.Section = "Devices", "devices"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	lv.EmptyText = "No devices yet. Devices appear here when their agent enrols, or when they are linked to a person."
	if v.Can("manage") {
		lv.EmptyHref, lv.EmptyAction = "/devices/enrol", "Enrol a device"
	}
	stale := map[string]bool{}
	cutoff := s.app.Now().Add(-app.DeviceStaleAfter)
	for _, d := range items {
		stale[d.ID] = d.LastCheckIn == nil || d.LastCheckIn.Before(cutoff)
	}
	people, names := s.personNames(r, v)
	v.Data = map[string]any{"Devices": items, "List": lv, "Platforms": app.DeviceListPlatforms(), "People": people,
		"Names": names, "Stale": stale, "Sources": app.DeviceSources}
	return s.page(w, r, "devices", v)
}

func (s *Server) uiDevice(w http.ResponseWriter, r *http.Request, v *view) error {
	d, err := s.app.GetDeviceDetail(r.Context(), id(r))
	if err != nil {
		return err
	}
	var person *app.Person
	if d.PersonID != nil {
		// The person may be gone or hidden from this role: the id is shown then.
		if p, err := s.app.GetPerson(r.Context(), *d.PersonID); err == nil {
			person = p
		}
	}
	v.Title, v.Section = d.Name, "devices"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = map[string]any{"Device": d, "Person": person}
	return s.page(w, r, "device", v)
}

func (s *Server) uiDeleteDevice(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.DeleteDevice(r.Context(), id(r)); err != nil {
		return err
	}
	return redirect(w, r, "/devices?done=device-deleted")
}

func (s *Server) uiRevokeDeviceAgent(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.RevokeDeviceAgent(r.Context(), id(r)); err != nil {
		return err
	}
	return redirect(w, r, "/devices/"+url.PathEscape(id(r))+"?done=agent-revoked")
}

// serverURL is the URL the agent reaches the appliance at: public_url, else
// the base URL of this request.
func (s *Server) serverURL(r *http.Request) string {
	if u := s.app.PublicBaseURL(); u != "" {
		return u
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// enrolPage renders the enrolment page; created is the token just made,
// shown once.
func (s *Server) enrolPage(w http.ResponseWriter, r *http.Request, v *view, created *app.EnrolmentToken) error {
	toks, err := s.app.ListEnrolmentTokens(r.Context())
	if err != nil {
		return err
	}
	now := s.app.Now()
	status := make(map[string]string, len(toks))
	for _, t := range toks {
		switch {
		case t.RevokedAt != nil:
			status[t.ID] = "Revoked"
		case !t.ExpiresAt.After(now):
			status[t.ID] = "Expired"
		case t.MaxUses != nil && t.Uses >= *t.MaxUses:
			status[t.ID] = "Used up"
		default:
			status[t.ID] = "Active"
		}
	}
	people, names := s.personNames(r, v)
	v.Title, v.Section = "Enrol devices", "devices"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = map[string]any{"Tokens": toks, "Created": created, "Server": s.serverURL(r), "People": people,
		"Names": names, "Expiries": deviceExpiries, "Downloads": app.AgentDownloadsConfigured(), "Status": status}
	return s.page(w, r, "device_enrol", v)
}

func (s *Server) uiEnrol(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.enrolPage(w, r, v, nil)
}

func (s *Server) uiCreateEnrolmentToken(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.EnrolmentTokenCreate{Name: f.Get("name"), ExpiresIn: f.Get("expiresIn")}
	if p := strings.TrimSpace(f.Get("personId")); p != "" {
		in.PersonID = app.Ptr(p)
	}
	switch f.Get("uses") {
	case "single":
		in.MaxUses = app.Ptr(1)
	default:
		if m := strings.TrimSpace(f.Get("maxUses")); m != "" {
			n, err := strconv.Atoi(m)
			if err != nil {
				v.Errors, v.Form, v.Status = map[string]string{"maxUses": "Enter a whole number of devices, or leave it empty for no limit."}, f, http.StatusBadRequest
				return s.enrolPage(w, r, v, nil)
			}
			in.MaxUses = app.Ptr(n)
		}
	}
	t, err := s.app.CreateEnrolmentToken(r.Context(), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.enrolPage(w, r, v, nil)
	}
	v.Status = http.StatusCreated
	return s.enrolPage(w, r, v, t)
}

func (s *Server) uiRevokeEnrolmentToken(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.RevokeEnrolmentToken(r.Context(), id(r)); err != nil {
		return err
	}
	return redirect(w, r, "/devices/enrol?done=enrolment-revoked")
}
