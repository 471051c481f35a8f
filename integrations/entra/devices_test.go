package entra

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// extra is the fake's device and group state.
type extra struct {
	devices atomic.Int32 // managed devices listed
	calls   atomic.Int32
	limited atomic.Bool
	groups  groupFake
}

// managedDeviceJSON is a managed device as Graph returns it with the
// $select sync sends.
func managedDeviceJSON(i int) map[string]any {
	d := map[string]any{
		"id": fmt.Sprintf("0f3c9a5e-0000-4000-8000-%012d", i), "deviceName": fmt.Sprintf("DESKTOP-%04d", i),
		"operatingSystem": "Windows", "osVersion": "10.0.22631.3296", "complianceState": "compliant", "isEncrypted": true,
		"userPrincipalName": fmt.Sprintf("u%d@contoso.example", i), "emailAddress": fmt.Sprintf("u%d@contoso.example", i),
		"lastSyncDateTime": "2026-01-14T08:12:44Z", "serialNumber": fmt.Sprintf("PF3X%06d", i),
		"manufacturer": "LENOVO", "model": "ThinkPad T14 Gen 4", "managementState": "managed",
	}
	switch i {
	case 0:
		d["deviceName"], d["operatingSystem"], d["osVersion"], d["complianceState"] = "Adele's iPhone", "iOS", "17.4.1", "noncompliant"
		d["emailAddress"], d["userPrincipalName"], d["isEncrypted"] = "", "AdeleV@contoso.example", false
		d["manufacturer"], d["model"], d["serialNumber"] = "Apple", "iPhone 15", "F2LXK0A1"
	case 1:
		d["operatingSystem"], d["lastSyncDateTime"], d["complianceState"] = "macOS", "0001-01-01T00:00:00Z", "inGracePeriod"
	}
	return d
}

// serveExtra serves Intune's managed devices, $top 3 a page with
// $skiptoken links; modes "403devices" and "429devices" answer as Graph
// does.
func (f *fake) serveExtra(w http.ResponseWriter, r *http.Request, mode string) bool {
	if f.serveGroups(w, r, mode) {
		return true
	}
	if r.URL.Path != devicesPath {
		return false
	}
	f.ext.calls.Add(1)
	switch {
	case mode == "403devices":
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"error":{"code":"Forbidden","message":"Application is not authorized to perform this operation. Application must have one of the following scopes: DeviceManagementManagedDevices.Read.All, DeviceManagementManagedDevices.ReadWrite.All - Operation ID (for customer support): 00000000-0000-0000-0000-000000000000","innerError":{"date":"2026-11-25T02:03:04","request-id":"0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"}}}`)
		return true
	case mode == "429devices" && !f.ext.limited.Swap(true):
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write(fixture(f.t, "error_429.json"))
		return true
	}
	if sel := r.URL.Query().Get("$select"); !strings.Contains(sel, "complianceState") || !strings.Contains(sel, "serialNumber") {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"code":"BadRequest","message":"$select is missing fields"}}`)
		return true
	}
	size := 1000 // Intune's page
	if f.ext.devices.Load() < 100 {
		size = 3
	}
	from := 0
	if tok := r.URL.Query().Get("$skiptoken"); tok != "" {
		from, _ = strconv.Atoi(strings.TrimPrefix(tok, "s"))
	}
	total := int(f.ext.devices.Load())
	page := map[string]any{"@odata.context": "https://graph.microsoft.com/v1.0/$metadata#deviceManagement/managedDevices(id,deviceName)"}
	items := []map[string]any{}
	for i := from; i < total && i < from+size; i++ {
		items = append(items, managedDeviceJSON(i))
	}
	page["value"] = items
	if from+size < total {
		page["@odata.nextLink"] = f.srv.URL + devicesPath + "?$select=" + r.URL.Query().Get("$select") + "&$skiptoken=s" + strconv.Itoa(from+size)
	}
	json.NewEncoder(w).Encode(page)
	return true
}

// listDevices lists the fake's devices with the fake in mode ("" for
// none).
func (f *fake) listDevices(mode string) ([]app.DirectoryDevice, error) {
	f.mode.Store(mode)
	return drain(target(nil), f.provider().Devices)
}

// TestDevices follows @odata.nextLink through Intune's managed devices and
// maps their fields.
func TestDevices(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.ext.devices.Store(7)
	devs, err := f.listDevices("")
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 7 || f.ext.calls.Load() != 3 {
		t.Fatalf("%d devices in %d calls, want 7 in 3", len(devs), f.ext.calls.Load())
	}
	a := devs[0]
	if a.ExternalID != "0f3c9a5e-0000-4000-8000-000000000000" || a.Platform != "ios" || a.OwnerEmail != "AdeleV@contoso.example" ||
		a.Compliance != "noncompliant" || a.Encrypted == nil || *a.Encrypted || a.Model != "Apple iPhone 15" || a.SerialNumber != "F2LXK0A1" ||
		a.Name != "Adele's iPhone" || a.Status != "managed" || a.LastSyncAt == nil {
		t.Errorf("adele's iPhone mapped as %+v", a)
	}
	if d := devs[1]; d.Platform != "macos" || d.LastSyncAt != nil || d.Compliance != "inGracePeriod" {
		t.Errorf("a Mac that never synced mapped as %+v", d)
	}
	if d := devs[2]; d.Platform != "windows" || d.OSVersion != "10.0.22631.3296" || d.Compliance != "compliant" || d.Encrypted == nil || !*d.Encrypted {
		t.Errorf("a Windows laptop mapped as %+v", d)
	}
}

// TestDevicesErrors: a missing permission names it; a 429 waits.
func TestDevicesErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.ext.devices.Store(2)
	_, err := f.listDevices("403devices")
	if err == nil || !strings.Contains(err.Error(), "403 Forbidden") || !strings.Contains(err.Error(), "application permission "+PermissionDevices) {
		t.Errorf("403: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), clientSecret) {
		t.Error("the secret is in the error")
	}
	if devs, err := f.listDevices("429devices"); err != nil || len(devs) != 2 {
		t.Errorf("after a 429: %d, %v", len(devs), err)
	}
	if _, err := f.listDevices("401"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("401: %v", err)
	}
}
