package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestUIDeviceLinking: owners and admins link an unlinked device of the
// organization to a person, register a new one for them and unlink
// devices; errors sit next to their fields; auditors and employees are
// offered nothing and refused; another organization's ids are 404.
func TestUIDeviceLinking(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	other := e.uiFixture("Globex")
	ctx := e.ctx(f.org)
	// A device registered for the owner, then unlinked: free to link.
	if _, err := e.app.LinkDevice(ctx, f.ownerID, app.DeviceLink{Name: "Spare laptop", Hostname: "spare-1", Platform: "macos"}); err != nil {
		t.Fatal(err)
	}
	devs, _ := e.app.ListDevices(ctx, app.DeviceFilter{PersonID: f.ownerID, Page: app.Page{Page: 1, PerPage: 10}})
	spare := devs.Items[0].ID
	if _, err := e.app.UnlinkDevice(ctx, f.ownerID, spare); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.LinkDevice(ctx, f.ownerID, app.DeviceLink{Name: "Owner desktop", Hostname: "od-1", Platform: "windows"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.LinkDevice(e.ctx(other.org), other.ownerID, app.DeviceLink{Name: "Globex box", Hostname: "gx-1", Platform: "linux"}); err != nil {
		t.Fatal(err)
	}
	odevs, _ := e.app.ListDevices(e.ctx(other.org), app.DeviceFilter{Page: app.Page{Page: 1, PerPage: 10}})
	otherDev := odevs.Items[0].ID

	admin := e.browser()
	admin.signIn(f.admin)
	page := "/people/" + f.employeeID
	rec := admin.get(page)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "No device is linked to this person", "Link one of the organization", "Link an existing device", `<label for="deviceId">Device</label>`,
		`<option value="`+spare+`">Spare laptop (spare-1, Macos)</option>`, `<label for="dev-name">Name</label>`, `<label for="dev-platform">Platform</label>`)
	wantNoBody(t, rec, "Owner desktop", "Globex box")

	// Validation: no device chosen; a new device without its fields.
	rec = admin.post(page+"/devices", url.Values{"mode": {"existing"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="deviceId-error"`, `aria-describedby="deviceId-error"`, "Choose the device")
	rec = admin.post(page+"/devices", url.Values{"mode": {"new"}, "name": {"Ada's laptop"}, "platform": {"amiga"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="hostname-error"`, `id="platform-error"`, `value="Ada&#39;s laptop"`)
	if !strings.Contains(rec.Body.String(), `id="isActive" type="checkbox" name="isActive" checked`) {
		t.Error("a device form error unticked the person's active box")
	}
	// Another organization's device id is not linked.
	rec = admin.post(page+"/devices", url.Values{"mode": {"existing"}, "deviceId": {otherDev}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="deviceId-error"`)
	if d, _ := e.app.GetDevice(e.ctx(other.org), otherDev); d.PersonID == nil || *d.PersonID != other.ownerID {
		t.Fatal("another organization's device changed")
	}

	// Link the unlinked device, then register a new one.
	loc := wantRedirect(t, admin.post(page+"/devices", url.Values{"mode": {"existing"}, "deviceId": {spare}}), page+"?done=device-linked")
	rec = admin.get(strings.SplitN(loc, "#", 2)[0])
	wantBody(t, rec, "Device linked.", "Spare laptop", `action="`+page+`/devices/`+spare+`/unlink"`)
	wantRedirect(t, admin.post(page+"/devices", url.Values{"mode": {"new"}, "name": {"Work laptop"}, "hostname": {"wl-7"}, "platform": {"linux"},
		"osVersion": {"Debian 13"}, "serialNumber": {"SN-42"}}), page+"?done=device-linked")
	l, err := e.app.ListDevices(ctx, app.DeviceFilter{PersonID: f.employeeID, Page: app.Page{Page: 1, PerPage: 10}})
	if err != nil || l.Total != 2 {
		t.Fatalf("employee's devices: %+v %v", l, err)
	}
	var work string
	for _, d := range l.Items {
		if d.Name == "Work laptop" {
			work = d.ID
			if d.Hostname != "wl-7" || d.Platform != "linux" || d.OSVersion == nil || *d.OSVersion != "Debian 13" || d.SerialNumber == nil || *d.SerialNumber != "SN-42" {
				t.Fatalf("registered device: %+v", d)
			}
		}
	}
	rec = admin.get(page)
	wantBody(t, rec, "Every device of the organization is linked", "SN-42")

	// Other roles: no forms, refused by hand.
	for _, email := range []string{f.auditor, f.employee} {
		b := e.browser()
		b.signIn(email)
		rec = b.get(page)
		wantStatus(t, rec, http.StatusOK)
		wantBody(t, rec, "Work laptop")
		wantNoBody(t, rec, "Link an existing device", "Register a device", "/unlink")
		wantStatus(t, b.post(page+"/devices", url.Values{"mode": {"new"}, "name": {"Sneaky"}, "hostname": {"s"}, "platform": {"linux"}}), http.StatusForbidden)
		rec = b.post(page+"/devices/"+work+"/unlink", nil)
		wantStatus(t, rec, http.StatusForbidden)
		wantBody(t, rec, "Your role does not allow this")
	}
	if l, _ = e.app.ListDevices(ctx, app.DeviceFilter{PersonID: f.employeeID, Page: app.Page{Page: 1, PerPage: 10}}); l.Total != 2 {
		t.Fatalf("refused posts changed the devices: %d", l.Total)
	}
	aud := e.browser()
	aud.signIn(f.auditor)
	rec = aud.get("/people/" + f.ownerID)
	wantBody(t, rec, "Owner desktop")

	// Another organization's person or device: 404.
	wantStatus(t, admin.get("/people/"+other.ownerID), http.StatusNotFound)
	wantStatus(t, admin.post("/people/"+other.ownerID+"/devices", url.Values{"mode": {"new"}, "name": {"X"}, "hostname": {"x"}, "platform": {"linux"}}), http.StatusNotFound)
	wantStatus(t, admin.post("/people/"+other.ownerID+"/devices/"+otherDev+"/unlink", nil), http.StatusNotFound)
	wantStatus(t, admin.post(page+"/devices/"+otherDev+"/unlink", nil), http.StatusNotFound)
	if d, _ := e.app.GetDevice(e.ctx(other.org), otherDev); d.PersonID == nil || *d.PersonID != other.ownerID {
		t.Fatal("another organization's device was unlinked")
	}

	// Unlink: the device stays, linked to nobody, and is offered again.
	loc = wantRedirect(t, admin.post(page+"/devices/"+work+"/unlink", nil), page+"?done=device-unlinked")
	rec = admin.get(strings.SplitN(loc, "#", 2)[0])
	wantBody(t, rec, "Device unlinked", `<option value="`+work+`">Work laptop`)
	d, err := e.app.GetDevice(ctx, work)
	if err != nil || d.PersonID != nil {
		t.Fatalf("unlinked device: %+v %v", d, err)
	}
	if l, _ = e.app.ListDevices(ctx, app.DeviceFilter{Unlinked: true, Page: app.Page{Page: 1, PerPage: 10}}); l.Total != 1 || l.Items[0].ID != work {
		t.Fatalf("unlinked devices: %+v", l)
	}
}
