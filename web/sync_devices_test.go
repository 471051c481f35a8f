package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/okta"
)

const oktaToken = "00QCjAl4MlV-WPXM-TESTTOKEN0123456789abcd"

// oktaOrg is an Okta org for the sync tests: users with factors, groups
// with members and devices with their users, each list paged two a page
// (devices 200) with the Link header as Okta does.
type oktaOrg struct {
	srv     *httptest.Server
	mu      sync.Mutex
	users   []oktaUser
	groups  []oktaGroup
	devices []map[string]any
	fail    string // "403devices", "403groups"
}

type oktaUser struct {
	id, status, email, name string
	factor                  string // "ACTIVE", "PENDING_ACTIVATION" or "" (none)
}

type oktaGroup struct {
	id, name string
	members  []string
}

func newOktaOrg(t *testing.T) *oktaOrg {
	o := &oktaOrg{}
	o.srv = httptest.NewTLSServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.srv.Close)
	return o
}

// oktaDevice is a device of GET /api/v1/devices?expand=user.
func oktaDevice(id, name, platform, serial, owner string) map[string]any {
	return map[string]any{
		"id": id, "status": "ACTIVE", "created": "2025-06-01T10:00:00.000Z", "lastUpdated": "2026-01-14T08:00:00.000Z",
		"resourceType": "UDDevice",
		"profile": map[string]any{"displayName": name, "platform": platform, "manufacturer": "APPLE", "model": "MacBookPro18,3",
			"osVersion": "14.4.1", "serialNumber": serial, "registered": true, "diskEncryptionType": "ALL_INTERNAL_VOLUMES"},
		"_embedded": map[string]any{"users": []map[string]any{{"managementStatus": "MANAGED",
			"user": map[string]any{"id": "00u" + id, "status": "ACTIVE", "profile": map[string]any{"login": owner, "email": owner}}}}},
	}
}

func (o *oktaOrg) serve(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "SSWS "+oktaToken {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"errorCode":"E0000011","errorSummary":"Invalid token provided","errorLink":"E0000011","errorId":"oaeX","errorCauses":[]}`)
		return
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("after"))
	page := func(n, size int) (int, int) {
		if from+size < n {
			q := r.URL.Query()
			q.Set("after", strconv.Itoa(from+size))
			w.Header().Add("Link", fmt.Sprintf("<%s%s?%s>; rel=\"next\"", o.srv.URL, r.URL.Path, q.Encode()))
		}
		return from, min(from+size, n)
	}
	var out []any
	path := r.URL.Path
	switch {
	case path == "/api/v1/users/me":
		json.NewEncoder(w).Encode(map[string]any{"id": "00uadmin", "profile": map[string]any{"login": "admin@acme.test"}})
		return
	case path == "/api/v1/users":
		a, b := page(len(o.users), 2)
		for _, u := range o.users[a:b] {
			first, last, _ := strings.Cut(u.name, " ")
			out = append(out, map[string]any{"id": u.id, "status": u.status,
				"profile": map[string]any{"login": u.email, "email": u.email, "firstName": first, "lastName": last, "department": "Security"}})
		}
	case strings.HasSuffix(path, "/factors"):
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/api/v1/users/"), "/factors")
		for _, u := range o.users {
			if u.id == id && u.factor != "" {
				out = append(out, map[string]any{"id": "uft" + id, "factorType": "token:software:totp", "provider": "OKTA", "status": u.factor})
			}
		}
	case path == "/api/v1/groups":
		if o.fail == "403groups" {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"errorCode":"E0000006","errorSummary":"You do not have permission to perform the requested action","errorLink":"E0000006","errorId":"oaeZ","errorCauses":[]}`)
			return
		}
		a, b := page(len(o.groups), 2)
		for _, g := range o.groups[a:b] {
			out = append(out, map[string]any{"id": g.id, "type": "OKTA_GROUP", "profile": map[string]any{"name": g.name}})
		}
	case strings.HasPrefix(path, "/api/v1/groups/") && strings.HasSuffix(path, "/users"):
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/api/v1/groups/"), "/users")
		for _, g := range o.groups {
			if g.id == id {
				a, b := page(len(g.members), 2)
				for _, m := range g.members[a:b] {
					out = append(out, map[string]any{"id": m, "status": "ACTIVE", "profile": map[string]any{}})
				}
			}
		}
	case path == "/api/v1/devices":
		if o.fail == "403devices" {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"errorCode":"E0000006","errorSummary":"You do not have permission to perform the requested action","errorLink":"E0000006","errorId":"oaeY","errorCauses":[]}`)
			return
		}
		a, b := page(len(o.devices), 200)
		for _, d := range o.devices[a:b] {
			out = append(out, d)
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"errorCode":"E0000022","errorSummary":"The endpoint does not support the provided HTTP method"}`)
		return
	}
	if out == nil {
		out = []any{}
	}
	json.NewEncoder(w).Encode(out)
}

// oktaEnv is a test server with the Okta provider talking to an oktaOrg
// and an organization connected to it.
type oktaEnv struct {
	*testEnv
	okta                *oktaOrg
	org, owner, aud     string
	adminKey, ownerID   string
	conn                string
	otherOrg, otherKey  string
	otherConn, otherOwn string
}

func newOktaEnv(t *testing.T, vars map[string]string) *oktaEnv {
	t.Helper()
	o := newOktaOrg(t)
	e := newTestServer(t)
	e.app.RegisterIntegrationProviders(okta.New(o.srv.Client()))
	s := &oktaEnv{testEnv: e, okta: o}
	s.org = e.org("Acme", app.PlanEnterprise)
	s.ownerID = e.person(s.org, "owner@acme.test", app.RoleOwner)
	s.owner = e.key(s.org, app.RoleOwner)
	s.adminKey = e.key(s.org, app.RoleAdmin)
	s.aud = e.key(s.org, app.RoleAuditor)
	s.conn = s.connect(t, s.owner, vars)
	s.otherOrg = e.org("Other", app.PlanEnterprise)
	e.person(s.otherOrg, "owner@other.test", app.RoleOwner)
	s.otherKey = e.key(s.otherOrg, app.RoleOwner)
	return s
}

func (s *oktaEnv) connect(t *testing.T, key string, vars map[string]string) string {
	t.Helper()
	v := map[string]string{"checkFactors": "true"}
	for k, x := range vars {
		v[k] = x
	}
	rec := s.do("POST", "/v1/integrations/connections", key, map[string]any{
		"providerSlug": "okta", "credentials": map[string]string{"orgUrl": s.okta.srv.URL, "apiToken": oktaToken}, "variables": v,
	})
	wantStatus(t, rec, http.StatusCreated)
	return obj(t, rec)["id"].(string)
}

func (s *oktaEnv) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.raw().QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// deviceRows is every column of the organization's devices, as text.
func (s *oktaEnv) deviceRows(t *testing.T) string {
	t.Helper()
	rows, err := s.raw().Query(`SELECT * FROM devices WHERE organization_id = ? ORDER BY id`, s.org)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, vals...)
	}
	return b.String()
}

func (s *oktaEnv) syncDevices(t *testing.T, query string, status int) map[string]any {
	t.Helper()
	rec := s.do("POST", "/v1/integrations/sync/dynamic/okta/devices?connectionId="+s.conn+query, s.owner, nil)
	wantStatus(t, rec, status)
	return obj(t, rec)
}

func (s *oktaEnv) devices(t *testing.T, query string) []map[string]any {
	t.Helper()
	rec := s.do("GET", "/v1/devices?perPage=100"+query, s.aud, nil)
	wantStatus(t, rec, http.StatusOK)
	var out []map[string]any
	for _, d := range obj(t, rec)["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

// TestDeviceSyncOkta syncs Okta's devices into the device register
// through the API: owners matched by e-mail, an agent-reported device
// never overwritten, a dry run changing nothing, an unchanged second run
// writing nothing, removal only after a complete listing, one run at a
// time, the source filter, roles and other organizations.
func TestDeviceSyncOkta(t *testing.T) {
	s := newOktaEnv(t, nil)
	ada := s.person(s.org, "ada@acme.test", app.RoleEmployee)
	bob := s.person(s.org, "bob@acme.test", app.RoleEmployee)
	s.okta.devices = []map[string]any{
		oktaDevice("guo1", "Ada's MacBook", "MACOS", "C02ADA0001", "Ada@ACME.test"),
		oktaDevice("guo2", "Bob's Pixel", "ANDROID", "PX-BOB", "bob@acme.test"),
		oktaDevice("guo3", "Kiosk", "WINDOWS", "KIOSK-1", "nobody@acme.test"),
		oktaDevice("guo4", "Agent Mac", "MACOS", "c02agent01", "bob@acme.test"),
	}
	s.okta.devices[1]["profile"].(map[string]any)["diskEncryptionType"] = "NONE"
	// An agent-reported device with the serial number of guo4.
	rec := s.do("POST", "/v1/people/"+bob+"/devices", s.owner, map[string]any{"name": "bob-mbp", "hostname": "bob-mbp.local",
		"platform": "macos", "serialNumber": "C02AGENT01"})
	wantStatus(t, rec, http.StatusOK)
	var agentID string
	if err := s.raw().QueryRow(`SELECT id FROM devices WHERE organization_id = ? AND serial_number = 'C02AGENT01'`, s.org).Scan(&agentID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.raw().Exec(`UPDATE devices SET agent_version = '1.4.0' WHERE id = ?`, agentID); err != nil {
		t.Fatal(err)
	}

	// Not the device sync provider yet: set it (auditors cannot).
	wantStatus(t, s.do("POST", "/v1/integrations/sync/device-sync-provider", s.aud, map[string]any{"provider": "okta"}), http.StatusForbidden)
	rec = s.do("POST", "/v1/integrations/sync/device-sync-provider", s.owner, map[string]any{"provider": "okta"})
	wantStatus(t, rec, http.StatusCreated)
	if m := obj(t, s.do("GET", "/v1/integrations/sync/device-sync-provider", s.aud, nil)); m["provider"] != "okta" {
		t.Fatalf("device sync provider: %v", m)
	}
	rec = s.do("GET", "/v1/integrations/sync/available-providers?syncType=device", s.aud, nil)
	wantStatus(t, rec, http.StatusOK)
	if ps := obj(t, rec)["providers"].([]any); len(ps) != 1 || ps[0].(map[string]any)["connectionId"] != s.conn {
		t.Fatalf("available device providers: %v", ps)
	}

	// A dry run plans and changes nothing.
	run := s.syncDevices(t, "&dryRun=true", http.StatusCreated)
	wantCounts(t, run, map[string]int{"found": 4, "created": 3, "updated": 1, "unchanged": 0, "errors": 0})
	if run["syncType"] != "device" || run["dryRun"] != true {
		t.Fatalf("dry run: %v", run)
	}
	if n := s.count(t, `SELECT count(*) FROM devices WHERE organization_id = ?`, s.org); n != 1 {
		t.Fatalf("a dry run made devices: %d", n)
	}

	// The run.
	run = s.syncDevices(t, "", http.StatusCreated)
	wantCounts(t, run, map[string]int{"found": 4, "created": 3, "updated": 1, "deactivated": 0, "errors": 0})
	if run["status"] != "succeeded" || run["success"] != true {
		t.Fatalf("run: %v", run)
	}
	okta := s.devices(t, "&source=okta")
	if len(okta) != 3 {
		t.Fatalf("%d okta devices, want 3", len(okta))
	}
	by := map[string]map[string]any{}
	for _, d := range okta {
		by[d["name"].(string)] = d
	}
	mac := by["Ada's MacBook"]
	dir, _ := mac["directory"].(map[string]any)
	if mac["personId"] != ada || mac["platform"] != "macos" || mac["source"] != "okta" || dir == nil || dir["ownerEmail"] != "ada@acme.test" ||
		dir["encrypted"] != true || dir["connectionId"] != s.conn || dir["externalId"] != "guo1" || dir["removedAt"] != nil {
		t.Errorf("ada's mac: %v", mac)
	}
	if d := by["Bob's Pixel"]; d["platform"] != "android" || d["personId"] != bob || d["directory"].(map[string]any)["encrypted"] != false {
		t.Errorf("bob's pixel: %v", d)
	}
	if d := by["Kiosk"]; d["personId"] != nil {
		t.Errorf("a device whose owner is not in the register: %v", d)
	}
	agent := s.devices(t, "&source=agent")
	if len(agent) != 1 || agent[0]["name"] != "bob-mbp" || agent[0]["hostname"] != "bob-mbp.local" ||
		agent[0]["directory"].(map[string]any)["externalId"] != "guo4" {
		t.Fatalf("the agent's device: %v", agent)
	}
	// The run's per-device results name the devices.
	rec = s.do("GET", "/v1/integrations/sync/runs/"+run["id"].(string), s.aud, nil)
	wantStatus(t, rec, http.StatusOK)
	detail := obj(t, rec)
	results := detail["results"].([]any)
	if len(results) != 4 {
		t.Fatalf("results: %v", results)
	}
	actions := map[string]string{}
	for _, r := range results {
		m := r.(map[string]any)
		if m["deviceId"] == nil {
			t.Errorf("a result without its device: %v", m)
		}
		actions[m["name"].(string)] = m["action"].(string) + ":" + fmt.Sprint(m["reason"])
	}
	if !strings.HasPrefix(actions["Kiosk"], "create:owner nobody@acme.test is not in the people register") ||
		!strings.HasPrefix(actions["bob-mbp"], "link:") {
		t.Errorf("results: %v", actions)
	}

	// An unchanged second run writes nothing but its own record.
	audits := s.count(t, `SELECT count(*) FROM audit_log WHERE organization_id = ?`, s.org)
	devicesBefore := s.deviceRows(t)
	run = s.syncDevices(t, "", http.StatusCreated)
	wantCounts(t, run, map[string]int{"found": 4, "created": 0, "updated": 0, "unchanged": 4})
	if n := s.count(t, `SELECT count(*) FROM audit_log WHERE organization_id = ?`, s.org); n != audits+1 {
		t.Errorf("an unchanged run wrote %d audit records, want 1 (its own)", n-audits)
	}
	if n := s.count(t, `SELECT count(*) FROM sync_run_results WHERE run_id = ?`, run["id"]); n != 0 {
		t.Errorf("an unchanged run kept %d results", n)
	}
	if after := s.deviceRows(t); after != devicesBefore {
		t.Errorf("an unchanged run changed devices:\n%s\n%s", devicesBefore, after)
	}

	// A change: the owner moves; the agent's device keeps its own fields.
	s.okta.mu.Lock()
	s.okta.devices[0]["_embedded"] = map[string]any{"users": []map[string]any{{"user": map[string]any{"profile": map[string]any{"email": "bob@acme.test"}}}}}
	s.okta.devices[3]["profile"].(map[string]any)["displayName"] = "Renamed in Okta"
	s.okta.mu.Unlock()
	run = s.syncDevices(t, "", http.StatusCreated)
	wantCounts(t, run, map[string]int{"updated": 1, "unchanged": 3})
	if d := s.devices(t, "&source=okta&personId="+bob); len(d) != 2 {
		t.Errorf("bob's okta devices after the move: %v", d)
	}
	if d := s.devices(t, "&source=agent"); d[0]["name"] != "bob-mbp" {
		t.Errorf("the agent's device was overwritten: %v", d[0])
	}

	// A failed listing removes nothing and is recorded failed.
	s.okta.mu.Lock()
	s.okta.fail = "403devices"
	s.okta.mu.Unlock()
	run = s.syncDevices(t, "", http.StatusCreated)
	if run["status"] != "failed" || !strings.Contains(fmt.Sprint(run["error"]), "E0000006") {
		t.Fatalf("failed listing: %v", run)
	}
	wantCounts(t, run, map[string]int{"deactivated": 0})
	// A device no longer listed is marked removed, not deleted.
	s.okta.mu.Lock()
	s.okta.fail = ""
	s.okta.devices = s.okta.devices[1:]
	s.okta.mu.Unlock()
	run = s.syncDevices(t, "", http.StatusCreated)
	wantCounts(t, run, map[string]int{"found": 3, "deactivated": 1})
	for _, d := range s.devices(t, "&source=okta") {
		removed := d["directory"].(map[string]any)["removedAt"]
		if (d["name"] == "Ada's MacBook") != (removed != nil) {
			t.Errorf("%v removedAt %v", d["name"], removed)
		}
	}

	// One run at a time per connection.
	if _, err := s.raw().Exec(`INSERT INTO sync_runs (id, organization_id, connection_id, provider_slug, sync_type, trigger, status, requested_by, started_at)
		VALUES ('syr_running', ?, ?, 'okta', 'employee', 'manual', 'running', 'test', '2026-01-15T10:00:00Z')`, s.org, s.conn); err != nil {
		t.Fatal(err)
	}
	s.syncDevices(t, "", http.StatusConflict)
	if _, err := s.raw().Exec(`DELETE FROM sync_runs WHERE id = 'syr_running'`); err != nil {
		t.Fatal(err)
	}

	// Bad input names the field; roles; other organizations.
	wantField(t, s.do("GET", "/v1/devices?source=printer", s.aud, nil), "source")
	wantField(t, s.do("GET", "/v1/devices?platform=beos", s.aud, nil), "platform")
	wantField(t, s.do("POST", "/v1/integrations/sync/dynamic/okta/devices", s.owner, nil), "connectionId")
	wantField(t, s.do("POST", "/v1/integrations/sync/dynamic/okta/devices?connectionId="+s.conn+"&dryRun=maybe", s.owner, nil), "dryRun")
	wantStatus(t, s.do("POST", "/v1/integrations/sync/dynamic/nope/devices?connectionId="+s.conn, s.owner, nil), http.StatusNotFound)
	wantStatus(t, s.do("POST", "/v1/integrations/sync/dynamic/okta/devices?connectionId="+s.conn, s.aud, nil), http.StatusForbidden)
	wantStatus(t, s.do("POST", "/v1/integrations/sync/dynamic/okta/devices?connectionId="+s.conn, s.otherKey, nil), http.StatusNotFound)
	if n := len(s.devices(t, "&source=okta")); n != 3 {
		t.Errorf("%d okta devices after the refused runs", n)
	}
	rec = s.do("GET", "/v1/devices?source=okta", s.otherKey, nil)
	wantStatus(t, rec, http.StatusOK)
	if d := obj(t, rec)["data"].([]any); len(d) != 0 {
		t.Errorf("another organization sees %d devices", len(d))
	}
	wantStatus(t, s.do("GET", "/v1/devices/"+okta[0]["id"].(string), s.otherKey, nil), http.StatusNotFound)

	// The pages show the source, filter on it in the URL and show the
	// directory's fields.
	e := s.testEnv
	e.withPassword(s.org, "auditor-ui@acme.test", app.RoleAuditor)
	b := e.browser()
	b.signIn("auditor-ui@acme.test")
	list := b.get("/devices?source=okta")
	wantStatus(t, list, http.StatusOK)
	wantBody(t, list, `<option value="okta" selected`, "Bob&#39;s Pixel", "Removed from Okta", "3 devices")
	wantNoBody(t, list, "bob-mbp")
	list = b.get("/devices?source=agent")
	wantBody(t, list, "bob-mbp", "also listed by Okta")
	wantBody(t, b.get("/devices?source=printer"), "source must be one of")
	var macID string
	for _, d := range s.devices(t, "&source=okta") {
		if d["name"] == "Ada's MacBook" {
			macID = d["id"].(string)
		}
	}
	page := b.get("/devices/" + macID)
	wantStatus(t, page, http.StatusOK)
	wantBody(t, page, "<dt>Source</dt><dd>Okta</dd>", "guo1", "Removed ", "<dt>Encrypted</dt><dd>Yes</dd>", "ACTIVE")

	// The connection's sync page runs a device sync and sets the device
	// sync provider; the run's page lists the devices.
	e.withPassword(s.org, "owner-ui@acme.test", app.RoleOwner)
	ob := e.browser()
	ob.signIn("owner-ui@acme.test")
	syncPage := ob.get("/integrations/" + s.conn + "/sync")
	wantStatus(t, syncPage, http.StatusOK)
	wantBody(t, syncPage, "Sync devices now", "Device dry run", `name="deviceSyncProvider"`, "Device sync provider: <strong>okta</strong>", "Device · Manual",
		`<option value="okta" selected>okta</option></select>`)
	wantNoBody(t, b.get("/integrations/"+s.conn+"/sync"), "Sync devices now")
	rec = ob.post("/integrations/"+s.conn+"/sync", url.Values{"syncType": {"device"}, "dryRun": {"true"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("device dry run from the page: %d %s", rec.Code, rec.Body.String())
	}
	runPage := ob.get(rec.Header().Get("Location"))
	wantStatus(t, runPage, http.StatusOK)
	wantBody(t, runPage, "Devices created, changed, removed or not handled", "dry run: nothing changed")
	rec = ob.post("/integrations/"+s.conn+"/sync/settings", url.Values{"deviceSyncProvider": {""}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("clearing the device sync provider: %d", rec.Code)
	}
	if m := obj(t, s.do("GET", "/v1/integrations/sync/device-sync-provider", s.aud, nil)); m["provider"] != nil {
		t.Fatalf("device sync provider after clearing: %v", m)
	}
	wantStatus(t, s.do("POST", "/v1/integrations/sync/device-sync-provider", s.owner, map[string]any{"provider": "okta"}), http.StatusCreated)

	// The scheduled job syncs the device sync provider's connection at its
	// frequency.
	runs := s.count(t, `SELECT count(*) FROM sync_runs WHERE organization_id = ? AND sync_type = 'device' AND trigger = 'schedule'`, s.org)
	s.clock.Advance(25 * 60 * 60 * 1e9)
	if err := s.app.RunDirectorySyncs(s.ctx(s.org)); err != nil {
		t.Fatal(err)
	}
	if n := s.count(t, `SELECT count(*) FROM sync_runs WHERE organization_id = ? AND sync_type = 'device' AND trigger = 'schedule' AND status = 'succeeded'`, s.org); n != runs+1 {
		t.Errorf("scheduled device runs = %d, want %d", n, runs+1)
	}
}
