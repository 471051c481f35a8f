package ui

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

// Linking devices to people (owner, admin): an unlinked device of the
// organization, or a new one registered for the person; and unlinking.

// uiDeviceRoutes registers linking and unlinking devices.
func (s *Server) uiDeviceRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("POST", "/people/{id}/devices", uiManage, s.uiLinkDevice)
	page("POST", "/people/{id}/devices/{deviceId}/unlink", uiManage, s.uiUnlinkDevice)
}

// deviceFlashes are the confirmations of these pages.
var deviceFlashes = map[string]string{
	"device-linked":   "Device linked.",
	"device-unlinked": "Device unlinked; it stays in the organization's devices and can be linked again.",
}

func init() {
	for k, v := range deviceFlashes {
		flashes[k] = v
	}
}

// addDeviceChoices puts the organization's unlinked devices and the
// platforms on a person's page for the roles that may link devices.
func (s *Server) addDeviceChoices(r *http.Request, v *view) error {
	data, ok := v.Data.(map[string]any)
	if !ok || !v.Can("manage") {
		return nil
	}
	l, err := s.app.ListDevices(r.Context(), app.DeviceFilter{Unlinked: true, Page: app.Page{Page: 1, PerPage: app.MaxPerPage}})
	if err != nil {
		return err
	}
	data["Unlinked"], data["UnlinkedTotal"], data["Platforms"] = l.Items, l.Total, app.DevicePlatforms()
	// Which form was posted: the others show the stored values, not the
	// blanks of a form they did not send.
	data["DeviceForm"] = v.Form != nil && v.Form.Has("mode")
	data["PersonForm"] = r.Method == http.MethodPost && !strings.Contains(strings.TrimPrefix(r.URL.Path, "/people/"), "/")
	return nil
}

// uiLinkDevice links a chosen device (mode "existing") or registers a new
// one for the person (mode "new").
func (s *Server) uiLinkDevice(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	var in app.DeviceLink
	if f.Get("mode") == "existing" {
		in.DeviceID = strings.TrimSpace(f.Get("deviceId"))
		if in.DeviceID == "" {
			if _, err := s.app.GetPerson(r.Context(), id(r)); err != nil {
				return err
			}
			v.Errors, v.Form, v.Status = map[string]string{"deviceId": "Choose the device to link."}, f, http.StatusUnprocessableEntity
			return s.uiPerson(w, r, v)
		}
	} else {
		in = app.DeviceLink{Name: f.Get("name"), Hostname: f.Get("hostname"), Platform: f.Get("platform"),
			OSVersion: nonEmpty(f.Get("osVersion")), SerialNumber: nonEmpty(f.Get("serialNumber"))}
	}
	p, err := s.app.LinkDevice(r.Context(), id(r), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.uiPerson(w, r, v)
	}
	return redirect(w, r, "/people/"+url.PathEscape(p.ID)+"?done=device-linked#devices")
}

func (s *Server) uiUnlinkDevice(w http.ResponseWriter, r *http.Request, v *view) error {
	p, err := s.app.UnlinkDevice(r.Context(), id(r), mux.Vars(r)["deviceId"])
	if err != nil {
		return err
	}
	return redirect(w, r, "/people/"+url.PathEscape(p.ID)+"?done=device-unlinked#devices")
}
