package okta

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// extra is the fake's devices and groups.
type extra struct {
	devices     atomic.Int32 // devices listed
	deviceCalls atomic.Int32
	groupCalls  atomic.Int32
	limited     atomic.Bool
}

// deviceJSON is a device as GET /api/v1/devices?expand=user returns it.
func deviceJSON(i int) map[string]any {
	d := map[string]any{
		"id": fmt.Sprintf("guo4a5u7JHHhj%07d", i), "status": "ACTIVE", "created": "2025-06-01T10:00:00.000Z",
		"lastUpdated": "2026-01-14T08:00:00.000Z", "resourceType": "UDDevice",
		"profile": map[string]any{
			"displayName": fmt.Sprintf("MacBook %d", i), "platform": "MACOS", "manufacturer": "APPLE", "model": "MacBookPro18,3",
			"osVersion": "14.4.1", "serialNumber": fmt.Sprintf("C02X%06d", i), "registered": true, "secureHardwarePresent": true,
			"diskEncryptionType": "ALL_INTERNAL_VOLUMES",
		},
		"_embedded": map[string]any{"users": []map[string]any{{
			"created": "2025-06-01T10:00:00.000Z", "managementStatus": "MANAGED", "screenLockType": "BIOMETRIC",
			"user": map[string]any{"id": fmt.Sprintf("00u%07d", i), "status": "ACTIVE",
				"profile": map[string]any{"login": fmt.Sprintf("u%d@acme.example", i), "email": fmt.Sprintf("u%d@acme.example", i)}},
		}}},
		"_links": map[string]any{"self": map[string]any{"href": "https://acme.okta.com/api/v1/devices/x"}},
	}
	if i == 0 {
		p := d["profile"].(map[string]any)
		p["displayName"], p["platform"], p["model"], p["diskEncryptionType"], p["osVersion"] = "Isaac's Pixel", "ANDROID", "Pixel 8", "NONE", "14"
		p["manufacturer"] = "Google"
		d["status"] = "SUSPENDED"
		d["_embedded"] = map[string]any{"users": []map[string]any{{"user": map[string]any{"id": "00ub0oNGTSWTBKOLGLNR",
			"profile": map[string]any{"login": "isaac.brock@acme.example", "email": "Isaac.Brock@acme.example"}}}}}
	}
	return d
}

var fakeGroups = []struct {
	id, name string
	members  []string
}{
	{"00g1emaKYZTWRYYRRTSK", "Everyone", []string{"00ub0oNGTSWTBKOLGLNR", "00ub0oNGTSWTBKOLOCKD", "00ub0oNGTSWTBKOPROVI"}},
	{"00g1emaKYZTWRYYRRTSL", "Compliance Auditors", []string{"00ub0oNGTSWTBKOLOCKD"}},
	{"00g1emaKYZTWRYYRRTSM", "Contractors", nil},
}

// serveExtra serves the Devices API (two a page unless many, Link paging,
// 403/429 as Okta answers) and the Groups API (two a page).
func (f *fake) serveExtra(w http.ResponseWriter, r *http.Request, mode string) bool {
	path := r.URL.Path
	from, _ := strconv.Atoi(r.URL.Query().Get("after"))
	link := func(n, size int) {
		w.Header().Add("Link", fmt.Sprintf("<%s%s?limit=200>; rel=\"self\"", f.srv.URL, path))
		if from+size < n {
			q := r.URL.Query()
			q.Set("after", strconv.Itoa(from+size))
			w.Header().Add("Link", fmt.Sprintf("<%s%s?%s>; rel=\"next\"", f.srv.URL, path, q.Encode()))
		}
	}
	switch {
	case path == "/api/v1/devices":
		f.ext.deviceCalls.Add(1)
		switch {
		case mode == "403devices":
			f.fail(w, http.StatusForbidden, "error_403.json")
			return true
		case mode == "429devices" && !f.ext.limited.Swap(true):
			w.Header().Set("X-Rate-Limit-Remaining", "0")
			w.Header().Set("X-Rate-Limit-Reset", strconv.FormatInt(time.Now().Unix()+1, 10))
			f.fail(w, http.StatusTooManyRequests, "error_429.json")
			return true
		}
		if r.URL.Query().Get("expand") != "user" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"errorCode":"E0000001","errorSummary":"expand must be user"}`)
			return true
		}
		total, size := int(f.ext.devices.Load()), 200
		if total < 10 {
			size = 2
		}
		items := []map[string]any{}
		for i := from; i < total && i < from+size; i++ {
			items = append(items, deviceJSON(i))
		}
		link(total, size)
		json.NewEncoder(w).Encode(items)
		return true
	case path == "/api/v1/groups":
		f.ext.groupCalls.Add(1)
		if mode == "403groups" {
			f.fail(w, http.StatusForbidden, "error_403.json")
			return true
		}
		items := []map[string]any{}
		for i := from; i < len(fakeGroups) && i < from+2; i++ {
			items = append(items, map[string]any{"id": fakeGroups[i].id, "type": "OKTA_GROUP",
				"profile": map[string]any{"name": fakeGroups[i].name, "description": ""}})
		}
		link(len(fakeGroups), 2)
		json.NewEncoder(w).Encode(items)
		return true
	case strings.HasPrefix(path, "/api/v1/groups/") && strings.HasSuffix(path, "/users"):
		f.ext.groupCalls.Add(1)
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/api/v1/groups/"), "/users")
		var members []string
		for _, g := range fakeGroups {
			if g.id == id {
				members = g.members
			}
		}
		items := []map[string]any{}
		for i := from; i < len(members) && i < from+2; i++ {
			items = append(items, map[string]any{"id": members[i], "status": "ACTIVE", "profile": map[string]any{}})
		}
		link(len(members), 2)
		json.NewEncoder(w).Encode(items)
		return true
	}
	return false
}

// listDevices lists the fake's devices with the fake in mode ("" for
// none).
func (f *fake) listDevices(mode string) ([]app.DirectoryDevice, error) {
	f.mode.Store(mode)
	return drain(f.target(nil), f.provider().Devices)
}

// TestDevices follows the Link header through the devices and maps each
// with its user's e-mail.
func TestDevices(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.ext.devices.Store(5)
	devs, err := f.listDevices("")
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 5 || f.ext.deviceCalls.Load() != 3 {
		t.Fatalf("%d devices in %d calls, want 5 in 3", len(devs), f.ext.deviceCalls.Load())
	}
	p := devs[0]
	if p.ExternalID != "guo4a5u7JHHhj0000000" || p.Platform != "android" || p.OwnerEmail != "Isaac.Brock@acme.example" || p.Status != "SUSPENDED" ||
		p.Encrypted == nil || *p.Encrypted || p.Name != "Isaac's Pixel" || p.Model != "Google Pixel 8" || p.Compliance != "" || p.LastSyncAt == nil {
		t.Errorf("isaac's phone mapped as %+v", p)
	}
	if m := devs[1]; m.Platform != "macos" || m.SerialNumber != "C02X000001" || m.Encrypted == nil || !*m.Encrypted || m.OSVersion != "14.4.1" {
		t.Errorf("a Mac mapped as %+v", m)
	}
}

// TestDevicesErrors: Okta's 403 body is named; a 429 waits for the reset.
func TestDevicesErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.ext.devices.Store(2)
	if _, err := f.listDevices("403devices"); err == nil || !strings.Contains(err.Error(), "E0000006") {
		t.Errorf("403: %v", err)
	}
	if devs, err := f.listDevices("429devices"); err != nil || len(devs) != 2 {
		t.Errorf("after a 429: %d, %v", len(devs), err)
	}
	if _, err := f.listDevices("401"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("401: %v", err)
	}
}

// TestGroups reads the groups and their users with paging when readGroups
// is on, and not otherwise; a refusal fails the listing.
func TestGroups(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	vars := map[string]string{"readGroups": "true", "checkFactors": "false"}
	users, err := collect(t, f.provider(), f.target(vars))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]string{}
	for _, u := range users {
		by[u.ExternalID] = u.Groups
	}
	if g := by["00ub0oNGTSWTBKOLOCKD"]; !reflect.DeepEqual(g, []string{"Everyone", "Compliance Auditors"}) {
		t.Errorf("lena's groups: %v", g)
	}
	if g := by["00ub0oNGTSWTBKODEPRO"]; len(g) != 0 {
		t.Errorf("a user in no group: %v", g)
	}
	// 2 pages of groups; members 2 + 1 + 1 pages.
	if n := f.ext.groupCalls.Load(); n != 6 {
		t.Errorf("%d group calls, want 6", n)
	}
	f.mode.Store("403groups")
	if _, err := collect(t, f.provider(), f.target(vars)); err == nil || !strings.Contains(err.Error(), "E0000006") {
		t.Errorf("403 on groups: %v", err)
	}
	f.mode.Store("")
	f.ext.groupCalls.Store(0)
	if _, err := collect(t, f.provider(), f.target(map[string]string{"checkFactors": "false"})); err != nil || f.ext.groupCalls.Load() != 0 {
		t.Errorf("groups read without readGroups: %d calls, %v", f.ext.groupCalls.Load(), err)
	}
}
