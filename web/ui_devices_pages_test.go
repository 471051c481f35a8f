package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// uiDeviceFixture adds to a uiFixture a device enrolled by its agent,
// linked to the owner and checked in with a failed firewall, and one linked
// to the employee that never checked in. It returns the ids and the agent
// token of the first.
func (e *testEnv) uiDeviceFixture(f uiFixture) (ownerDev, agentToken, employeeDev string) {
	e.t.Helper()
	ownerDev, agentToken = enrol(e.t, e, f.org, "SER-UI-1")
	rec := e.do("POST", "/v1/device-agent/check-in", "", checks(ownerDev, e.clock.Now(), app.CheckFirewall), "X-Device-Token", agentToken)
	wantStatus(e.t, rec, http.StatusCreated)
	ctx := e.ctx(f.org)
	if _, err := e.app.LinkDevice(ctx, f.ownerID, app.DeviceLink{DeviceID: ownerDev}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.app.LinkDevice(ctx, f.employeeID, app.DeviceLink{Name: "Employee MacBook", Hostname: "emp-mac", Platform: "macos"}); err != nil {
		e.t.Fatal(err)
	}
	l, err := e.app.ListDevices(ctx, app.DeviceFilter{PersonID: f.employeeID, Page: app.Page{Page: 1, PerPage: 10}})
	if err != nil || len(l.Items) != 1 {
		e.t.Fatalf("employee devices: %v %v", l.Items, err)
	}
	return ownerDev, agentToken, l.Items[0].ID
}

// TestUIDevicePagesPerRole renders the device pages for each role: owners
// and admins see the enrol page and the delete and revoke buttons, auditors
// read everything, employees see only their own devices and no enrol page.
func TestUIDevicePagesPerRole(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Devco")
	dev, _, empDev := e.uiDeviceFixture(f)
	roles := []struct {
		email, role string
		writes      bool
	}{{f.owner, "owner", true}, {f.admin, "admin", true}, {f.auditor, "auditor", false}, {f.employee, "employee", false}}
	writes := []string{`action="/devices/` + dev + `/delete"`, `action="/devices/` + dev + `/revoke-agent"`, "data-confirm=", `href="/devices/enrol"`}
	for _, ro := range roles {
		t.Run(ro.role, func(t *testing.T) {
			b := e.browser()
			b.signIn(ro.email)
			list := b.get("/devices")
			wantStatus(t, list, http.StatusOK)
			wantBody(t, list, "<h1>Devices</h1>", `href="/devices"`, "Employee MacBook", "No check-in yet", "Stale")
			if ro.role == "employee" {
				wantNoBody(t, list, "Ada&#39;s laptop", `href="/devices/enrol"`)
				wantStatus(t, b.get("/devices/"+dev), http.StatusNotFound)
				wantStatus(t, b.get("/devices/enrol"), http.StatusForbidden)
				own := b.get("/devices/" + empDev)
				wantStatus(t, own, http.StatusOK)
				wantBody(t, own, "Employee MacBook", "No check-in yet")
				wantNoBody(t, own, "Delete device", "Revoke agent")
				return
			}
			wantBody(t, list, "Ada&#39;s laptop", "Not compliant", "2 devices")
			page := b.get("/devices/" + dev)
			wantStatus(t, page, http.StatusOK)
			wantBody(t, page, "Ada&#39;s laptop", "Not compliant", "<details><summary>Raw output</summary><pre>raw output of disk_encryption</pre></details>",
				"<code>test</code>", "firewall checked", "History", `href="/people/`+f.ownerID+`"`, "SER-UI-1")
			enrolPage := b.get("/devices/enrol")
			if ro.writes {
				wantBody(t, page, writes[:3]...)
				wantBody(t, list, writes[3])
				wantStatus(t, enrolPage, http.StatusOK)
				wantBody(t, enrolPage, "Create an enrolment token", "agent.downloads_dir", "Laptops")
			} else {
				wantNoBody(t, page, writes[:3]...)
				wantNoBody(t, list, writes[3])
				wantStatus(t, enrolPage, http.StatusForbidden)
				wantStatus(t, b.post("/devices/"+dev+"/delete", nil), http.StatusForbidden)
			}
		})
	}
}

var (
	enrolTokenRe = regexp.MustCompile(`value="(cen_[A-Za-z0-9_-]+)"`)
)

// TestUIDeviceEnrolFlow creates enrolment tokens through the page: the
// token and the exact commands are shown once, the list then shows only
// its prefix, the token enrols a device for the chosen person, and a
// revoked token enrols nothing.
func TestUIDeviceEnrolFlow(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Enrolco")
	b := e.browser()
	b.signIn(f.owner)

	rec := b.get("/devices/enrol")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "No enrolment tokens yet.", "compliance agent", "http://example.com")

	rec = b.post("/devices/enrol", url.Values{"name": {"Office laptops"}, "uses": {"single"}, "expiresIn": {"30d"}, "personId": {f.employeeID}})
	wantStatus(t, rec, http.StatusCreated)
	m := enrolTokenRe.FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("no token in the page: %s", rec.Body.String())
	}
	tok := m[1]
	wantBody(t, rec, "shown only this once", "compliance agent enroll --server http://example.com --token "+tok, "compliance agent run",
		"at most 1 device(s)")
	rec = b.get("/devices/enrol")
	wantBody(t, rec, "Office laptops", "<code>"+tok[:12]+"…</code>", "Active")
	wantNoBody(t, rec, tok)

	// The token enrols one device for the employee, then is used up.
	reg := e.do("POST", "/v1/device-agent/register", "", map[string]any{"name": "Emp laptop", "hostname": "emp-1", "platform": "linux",
		"osVersion": "Debian 12"}, "X-Enrolment-Token", tok)
	wantStatus(t, reg, http.StatusCreated)
	devID := obj(t, reg)["deviceId"].(string)
	d, err := e.app.GetDevice(e.ctx(f.org), devID)
	if err != nil || d.PersonID == nil || *d.PersonID != f.employeeID {
		t.Fatalf("enrolled device: %+v %v", d, err)
	}
	wantBody(t, b.get("/devices/enrol"), "Used up")

	// A multi-use token, then revoked: it enrols nothing.
	rec = b.post("/devices/enrol", url.Values{"name": {"Fleet"}, "uses": {"multi"}, "maxUses": {""}, "expiresIn": {"7d"}})
	wantStatus(t, rec, http.StatusCreated)
	wantBody(t, rec, "any number of devices")
	fleet := enrolTokenRe.FindStringSubmatch(rec.Body.String())[1]
	var fleetID string
	toks, err := e.app.ListEnrolmentTokens(e.ctx(f.org))
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range toks {
		if tk.Name == "Fleet" {
			fleetID = tk.ID
		}
	}
	wantRedirect(t, b.post("/devices/enrol/"+fleetID+"/revoke", nil), "/devices/enrol?done=enrolment-revoked")
	rec = b.get("/devices/enrol?done=enrolment-revoked")
	wantBody(t, rec, "Enrolment token revoked", "Revoked")
	wantNoBody(t, rec, `action="/devices/enrol/`+fleetID+`/revoke"`)
	reg = e.do("POST", "/v1/device-agent/register", "", map[string]any{"name": "X", "hostname": "x", "platform": "linux",
		"osVersion": "Debian 12"}, "X-Enrolment-Token", fleet)
	if reg.Code != http.StatusUnauthorized {
		t.Fatalf("revoked token registered a device: %d %s", reg.Code, reg.Body.String())
	}

	// Bad input is a form error on the field, never a 500.
	rec = b.post("/devices/enrol", url.Values{"name": {""}, "uses": {"single"}, "expiresIn": {"7d"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, "name is required")
	rec = b.post("/devices/enrol", url.Values{"name": {"N"}, "uses": {"multi"}, "maxUses": {"many"}, "expiresIn": {"7d"}})
	wantStatus(t, rec, http.StatusBadRequest)
	wantBody(t, rec, "Enter a whole number of devices")
	rec = b.post("/devices/enrol", url.Values{"name": {"N"}, "uses": {"single"}, "expiresIn": {"7d"}, "personId": {"per_unknown"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, "personId must be a person of this organization")

	// Employees and auditors cannot create tokens.
	emp := e.browser()
	emp.signIn(f.employee)
	wantStatus(t, emp.post("/devices/enrol", url.Values{"name": {"Mine"}, "uses": {"single"}, "expiresIn": {"7d"}}), http.StatusForbidden)
}

// TestUIDeviceRevokeAndDelete revokes a device's agent (its next check-in
// is refused) and deletes the device.
func TestUIDeviceRevokeAndDelete(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Revokeco")
	dev, tok, empDev := e.uiDeviceFixture(f)
	b := e.browser()
	b.signIn(f.admin)
	wantRedirect(t, b.post("/devices/"+dev+"/revoke-agent", nil), "/devices/"+dev+"?done=agent-revoked")
	wantBody(t, b.get("/devices/"+dev+"?done=agent-revoked"), "Agent revoked")
	rec := e.do("POST", "/v1/device-agent/check-in", "", checks(dev, e.clock.Now()), "X-Device-Token", tok)
	wantStatus(t, rec, http.StatusUnauthorized)

	wantRedirect(t, b.post("/devices/"+dev+"/delete", nil), "/devices?done=device-deleted")
	rec = b.get("/devices?done=device-deleted")
	wantBody(t, rec, "Device deleted", "1 device")
	wantNoBody(t, rec, "Ada&#39;s laptop")
	wantStatus(t, b.get("/devices/"+dev), http.StatusNotFound)
	wantStatus(t, b.post("/devices/"+dev+"/delete", nil), http.StatusNotFound)

	// Another organization's device is not found.
	other := e.uiFixture("Otherco")
	ob := e.browser()
	ob.signIn(other.owner)
	wantStatus(t, ob.get("/devices/"+empDev), http.StatusNotFound)
	wantStatus(t, ob.post("/devices/"+empDev+"/delete", nil), http.StatusNotFound)
}

// TestUIDeviceFilters filters the list by person, platform, compliance and
// staleness, and exports the filtered list as CSV.
func TestUIDeviceFilters(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Filterco")
	dev, tok, empDev := e.uiDeviceFixture(f)
	// All checks pass now: the owner's device is compliant.
	wantStatus(t, e.do("POST", "/v1/device-agent/check-in", "", checks(dev, e.clock.Now()), "X-Device-Token", tok), http.StatusCreated)
	b := e.browser()
	b.signIn(f.owner)
	for q, want := range map[string][]string{
		"compliant=true":         {dev},
		"compliant=false":        {empDev},
		"stale=true":             {empDev},
		"stale=false":            {dev},
		"platform=macos":         {empDev},
		"platform=linux":         {dev},
		"person=" + f.ownerID:    {dev},
		"person=" + f.employeeID: {empDev},
	} {
		rec := b.get("/devices?" + q)
		wantStatus(t, rec, http.StatusOK)
		body := rec.Body.String()
		for _, id := range []string{dev, empDev} {
			in := strings.Contains(body, `href="/devices/`+id+`"`)
			if in != (id == want[0]) {
				t.Errorf("%s: device %s shown %v", q, id, in)
			}
		}
		wantBody(t, rec, "1 device match these filters")
	}
	rec := b.get("/devices?platform=linux&format=csv")
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Fatalf("csv content type %q", ct)
	}
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "id,name,hostname,platform") || !strings.HasPrefix(lines[1], dev+",") ||
		!strings.Contains(lines[1], ",true,") {
		t.Fatalf("csv export: %q", lines)
	}
	rec = b.get("/devices?compliant=false&format=xlsx")
	wantStatus(t, rec, http.StatusOK)
	if rec.Body.Len() == 0 {
		t.Fatal("empty xlsx export")
	}
	// The employee's filter for someone else's devices finds nothing.
	emp := e.browser()
	emp.signIn(f.employee)
	rec = emp.get("/devices?person=" + f.ownerID)
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, `href="/devices/`+dev+`"`)
}
