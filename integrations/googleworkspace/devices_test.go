package googleworkspace

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

// extra is the fake's device state: how many generated devices each list
// has (the first ones are the recorded shapes below), and what was asked.
type extra struct {
	mobile, chrome atomic.Int32
	calls          atomic.Int32
	limited        atomic.Bool
	groupCalls     atomic.Int32
}

// knownScope is a token request's scope: users, or the two device scopes.
func knownScope(s string) bool {
	return s == Scope || s == ScopeMobileDevices+" "+ScopeChromeOSDevices || s == Scope+" "+ScopeGroups
}

// mobileJSON is a mobile device as the Directory API returns it
// (projection FULL, trimmed of fields sync does not read).
func mobileJSON(i int) map[string]any {
	d := map[string]any{
		"kind": "admin#directory#mobiledevice", "etag": `"e` + strconv.Itoa(i) + `"`,
		"resourceId": fmt.Sprintf("AFiQxQ8Mob%06d", i), "deviceId": fmt.Sprintf("3b5e%08x", i),
		"name": []string{fmt.Sprintf("User %d", i)}, "email": []string{fmt.Sprintf("u%d@acme.example", i)},
		"model": "Pixel 8", "os": "Android 14", "type": "ANDROID", "status": "APPROVED",
		"firstSync": "2025-01-10T09:00:00.000Z", "lastSync": "2026-01-14T08:00:00.000Z",
		"serialNumber": fmt.Sprintf("3A28%06d", i), "encryptionStatus": "Encrypted",
		"deviceCompromisedStatus": "No compromise detected",
	}
	if i == 0 {
		d["name"], d["email"] = []string{"Ada Lovelace"}, []string{"Ada@Acme.example"}
		d["model"], d["os"], d["type"], d["serialNumber"] = "iPhone 15", "iOS 17.4.1", "IOS_SYNC", "F2LXK0A1"
		d["encryptionStatus"] = "Not encrypted"
	}
	return d
}

func chromeJSON(i int) map[string]any {
	return map[string]any{
		"kind": "admin#directory#chromeosdevice", "deviceId": fmt.Sprintf("c0ffee%06d", i), "serialNumber": fmt.Sprintf("5CD%06d", i),
		"status": "ACTIVE", "lastSync": "2026-01-14T07:00:00.000Z", "annotatedUser": "",
		"model": "HP Chromebook x360 14c", "osVersion": "120.0.6099.235", "orgUnitPath": "/Engineering",
		"recentUsers": []map[string]string{{"type": "USER_TYPE_UNMANAGED"}, {"type": "USER_TYPE_MANAGED", "email": fmt.Sprintf("c%d@acme.example", i)}},
	}
}

// serveExtra serves the device lists: pages by pageToken "p<offset>", the
// API's error bodies in modes "403devices" and "429devices".
func (f *fake) serveExtra(w http.ResponseWriter, r *http.Request, mode string) bool {
	var total int
	var key string
	var item func(int) map[string]any
	switch r.URL.Path {
	case "/admin/directory/v1/customer/my_customer/devices/mobile":
		total, key, item = int(f.ext.mobile.Load()), "mobiledevices", mobileJSON
	case "/admin/directory/v1/customer/my_customer/devices/chromeos":
		total, key, item = int(f.ext.chrome.Load()), "chromeosdevices", chromeJSON
	default:
		return f.serveGroups(w, r, mode)
	}
	f.ext.calls.Add(1)
	if r.Header.Get("Authorization") != "Bearer "+accessToken || mode == "401" {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(fixture(f.t, "error_401.json"))
		return true
	}
	switch {
	case mode == "403devices":
		w.WriteHeader(http.StatusForbidden)
		w.Write(fixture(f.t, "error_403.json"))
		return true
	case mode == "429devices" && !f.ext.limited.Swap(true):
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write(fixture(f.t, "error_429.json"))
		return true
	}
	size, _ := strconv.Atoi(r.URL.Query().Get("maxResults"))
	if size <= 0 || key == "mobiledevices" && size > 100 || size > 300 || r.URL.Query().Get("projection") != "FULL" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"code":400,"message":"Invalid Input","status":"INVALID_ARGUMENT"}}`)
		return true
	}
	from := 0
	if tok := r.URL.Query().Get("pageToken"); tok != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(tok, "p"))
		if err != nil || !strings.HasPrefix(tok, "p") {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":400,"message":"Invalid page token","status":"INVALID_ARGUMENT"}}`)
			return true
		}
		from = n
	}
	page := map[string]any{"kind": "admin#directory#" + key, "etag": `"x"`}
	var items []map[string]any
	for i := from; i < total && i < from+size; i++ {
		items = append(items, item(i))
	}
	if len(items) > 0 {
		page[key] = items
	}
	if from+size < total {
		page["nextPageToken"] = "p" + strconv.Itoa(from+size)
	}
	json.NewEncoder(w).Encode(page)
	return true
}

// listDevices lists the fake's devices with the fake in mode ("" for
// none).
func (f *fake) listDevices(mode string) ([]app.DirectoryDevice, error) {
	f.mode.Store(mode)
	return drain(f.target(nil), f.provider().Devices)
}

// TestDevices pages through mobile devices (100 a page) and ChromeOS
// devices and maps their fields.
func TestDevices(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.ext.mobile.Store(250)
	f.ext.chrome.Store(3)
	devs, err := f.listDevices("")
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 253 || f.ext.calls.Load() != 4 {
		t.Fatalf("%d devices in %d calls, want 253 in 4 (3 mobile pages, 1 ChromeOS)", len(devs), f.ext.calls.Load())
	}
	ada := devs[0]
	if ada.ExternalID != "mobile:AFiQxQ8Mob000000" || ada.Platform != "ios" || ada.OSVersion != "17.4.1" || ada.OwnerEmail != "Ada@Acme.example" ||
		ada.SerialNumber != "F2LXK0A1" || ada.Encrypted == nil || *ada.Encrypted || ada.Status != "APPROVED" || ada.LastSyncAt == nil ||
		ada.Name != "Ada Lovelace's iPhone 15" || ada.Model != "iPhone 15" {
		t.Errorf("ada's iPhone mapped as %+v", ada)
	}
	if d := devs[1]; d.Platform != "android" || d.OSVersion != "14" || d.Encrypted == nil || !*d.Encrypted {
		t.Errorf("an Android phone mapped as %+v", d)
	}
	c := devs[250]
	if c.ExternalID != "chromeos:c0ffee000000" || c.Platform != "chromeos" || c.OwnerEmail != "c0@acme.example" || c.OSVersion != "120.0.6099.235" ||
		c.SerialNumber != "5CD000000" || c.Encrypted != nil || c.Status != "ACTIVE" {
		t.Errorf("a Chromebook mapped as %+v", c)
	}
}

// TestDevicesErrors: a refused scope is an error naming Google's message;
// a 429 is waited out as Retry-After says.
func TestDevicesErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.ext.mobile.Store(2)
	if _, err := f.listDevices("403devices"); err == nil || !strings.Contains(err.Error(), "Not Authorized to access this resource/api") ||
		!strings.Contains(err.Error(), "mobile devices (page 1)") {
		t.Errorf("403: %v", err)
	}
	devs, err := f.listDevices("429devices")
	if err != nil || len(devs) != 2 {
		t.Errorf("after a 429: %d devices, %v", len(devs), err)
	}
	if _, err := f.listDevices("401"); err == nil {
		t.Error("401: no error")
	}
}
