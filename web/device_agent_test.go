package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// enrol creates an enrolment token in org and registers a device with it,
// returning the device id and its agent token.
func enrol(t *testing.T, e *testEnv, org, serial string) (string, string) {
	t.Helper()
	admin := e.key(org, app.RoleAdmin)
	rec := e.do("POST", "/v1/device-agent/enrolment-tokens", admin, map[string]any{"name": "Laptops", "maxUses": 5})
	wantStatus(t, rec, http.StatusCreated)
	tok, _ := obj(t, rec)["token"].(string)
	if !strings.HasPrefix(tok, app.EnrolmentTokenPrefix) {
		t.Fatalf("enrolment token %q", tok)
	}
	rec = e.do("POST", "/v1/device-agent/register", "", map[string]any{"name": "Ada's laptop", "hostname": "ada-1", "platform": "linux",
		"osVersion": "Debian 12", "serialNumber": serial, "agentVersion": "1.0.0"}, "X-Enrolment-Token", tok)
	wantStatus(t, rec, http.StatusCreated)
	m := obj(t, rec)
	return m["deviceId"].(string), m["deviceToken"].(string)
}

// checks builds a check-in body with every check passed except those named.
func checks(deviceID string, at time.Time, failed ...string) map[string]any {
	var cs []map[string]any
	for _, ct := range app.DeviceCheckTypes {
		passed := true
		for _, f := range failed {
			passed = passed && f != ct
		}
		cs = append(cs, map[string]any{"checkType": ct, "passed": passed, "checkedAt": at.Format(time.RFC3339),
			"details": map[string]any{"method": "test", "raw": "raw output of " + ct, "message": ct + " checked"}})
	}
	return map[string]any{"deviceId": deviceID, "checks": cs, "agentVersion": "1.0.1"}
}

func TestDeviceAgentCheckInAndCompliance(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Agent Co", app.PlanEnterprise)
	owner := e.key(org, app.RoleOwner)
	dev, tok := enrol(t, e, org, "SER-1")
	now := e.clock.Now()

	rec := e.do("POST", "/v1/device-agent/check-in", "", checks(dev, now, app.CheckFirewall), "X-Device-Token", tok)
	wantStatus(t, rec, http.StatusCreated)
	m := obj(t, rec)
	if m["isCompliant"] != false || m["nextCheckIn"] == nil {
		t.Fatalf("check-in with a failed firewall: %v", m)
	}
	rec = e.do("POST", "/v1/device-agent/check-in", "", checks(dev, now), "X-Device-Token", tok)
	wantStatus(t, rec, http.StatusCreated)
	if obj(t, rec)["isCompliant"] != true {
		t.Fatalf("all passed should be compliant: %s", rec.Body.String())
	}

	rec = e.do("GET", "/v1/devices/"+dev, owner, nil)
	wantStatus(t, rec, http.StatusOK)
	d := obj(t, rec)
	if d["isCompliant"] != true || d["agentVersion"] != "1.0.1" || d["stale"] != false {
		t.Fatalf("device: %v", d)
	}
	if cs := d["checks"].([]any); len(cs) != len(app.DeviceCheckTypes) {
		t.Fatalf("latest checks: %d, want %d", len(cs), len(app.DeviceCheckTypes))
	}
	if h := d["history"].([]any); len(h) != 2*len(app.DeviceCheckTypes) {
		t.Fatalf("history: %d rows", len(h))
	}

	// Filters.
	for q, want := range map[string]int{"compliant=true": 1, "compliant=false": 0, "stale=true": 0, "stale=false": 1, "platform=linux": 1, "platform=macos": 0} {
		rec = e.do("GET", "/v1/devices?"+q, owner, nil)
		wantStatus(t, rec, http.StatusOK)
		if n := len(obj(t, rec)["data"].([]any)); n != want {
			t.Errorf("%s: %d devices, want %d", q, n, want)
		}
	}
	wantField(t, e.do("GET", "/v1/devices?platform=beos", owner, nil), "platform")
	e.clock.Advance(8 * 24 * time.Hour)
	rec = e.do("GET", "/v1/devices?stale=true", owner, nil)
	if n := len(obj(t, rec)["data"].([]any)); n != 1 {
		t.Errorf("after 8 days without check-in: %d stale devices, want 1", n)
	}

	// The compliance changes are events, two of them (first check-in, then compliant).
	evs, err := e.db.ListAudit(e.ctx(org), org, app.AuditFilter{ResourceID: dev, Page: app.Page{Page: 1, PerPage: 50}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range evs.Items {
		if r.Action == "compliance_changed" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("compliance_changed audit records: %d, want 2", n)
	}

	// Status through the agent's token.
	rec = e.do("GET", "/v1/device-agent/status", "", nil, "X-Device-Token", tok)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["id"] != dev {
		t.Fatalf("status: %s", rec.Body.String())
	}
}

func TestDeviceAgentCheckInValidation(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Agent Co", app.PlanEnterprise)
	dev, tok := enrol(t, e, org, "SER-V")
	now := e.clock.Now()
	mod := func(f func(b map[string]any, c map[string]any)) map[string]any {
		b := checks(dev, now)
		f(b, b["checks"].([]map[string]any)[0])
		return b
	}
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"unknown check type", mod(func(_, c map[string]any) { c["checkType"] = "tpm" }), "checks[0].checkType"},
		{"raw too long", mod(func(_, c map[string]any) { c["details"].(map[string]any)["raw"] = strings.Repeat("x", 2001) }), "checks[0].details.raw"},
		{"message too long", mod(func(_, c map[string]any) { c["details"].(map[string]any)["message"] = strings.Repeat("x", 1001) }), "checks[0].details.message"},
		{"method too long", mod(func(_, c map[string]any) { c["details"].(map[string]any)["method"] = strings.Repeat("x", 101) }), "checks[0].details.method"},
		{"exception too long", mod(func(_, c map[string]any) { c["details"].(map[string]any)["exception"] = strings.Repeat("x", 501) }), "checks[0].details.exception"},
		{"missing raw", mod(func(_, c map[string]any) { delete(c["details"].(map[string]any), "raw") }), "checks[0].details.raw"},
		{"missing details", mod(func(_, c map[string]any) { delete(c, "details") }), "checks[0].details"},
		{"missing passed", mod(func(_, c map[string]any) { delete(c, "passed") }), "checks[0].passed"},
		{"far future", mod(func(_, c map[string]any) { c["checkedAt"] = now.Add(48 * time.Hour).Format(time.RFC3339) }), "checks[0].checkedAt"},
		{"bad time", mod(func(_, c map[string]any) { c["checkedAt"] = "yesterday" }), "checks[0].checkedAt"},
		{"duplicate type", mod(func(b, c map[string]any) { b["checks"].([]map[string]any)[1]["checkType"] = c["checkType"] }), "checks[1].checkType"},
		{"no checks", mod(func(b, _ map[string]any) { b["checks"] = []any{} }), "checks"},
		{"missing checks", mod(func(b, _ map[string]any) { delete(b, "checks") }), "checks"},
		{"missing deviceId", mod(func(b, _ map[string]any) { delete(b, "deviceId") }), "deviceId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantField(t, e.do("POST", "/v1/device-agent/check-in", "", c.body, "X-Device-Token", tok), c.field)
		})
	}
	rec := e.do("POST", "/v1/device-agent/check-in", "", `{"deviceId":`, "X-Device-Token", tok)
	wantError(t, rec, http.StatusBadRequest, "validation_error")
	// Nothing was stored by the refused check-ins.
	d, err := e.app.GetDeviceDetail(e.ctx(org), dev)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.History) != 0 || d.LastCheckIn != nil {
		t.Fatalf("refused check-ins stored results: %+v", d)
	}
}

func TestDeviceAgentTokens(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	orgA := e.org("A", app.PlanEnterprise)
	orgB := e.org("B", app.PlanEnterprise)
	devA, tokA := enrol(t, e, orgA, "SER-A")
	devB, tokB := enrol(t, e, orgB, "SER-B")
	ownerA, ownerB := e.key(orgA, app.RoleOwner), e.key(orgB, app.RoleOwner)
	now := e.clock.Now()

	// Stored hashed: the plaintext is nowhere in the database file.
	if inDatabase(t, e, tokA) {
		t.Fatal("the agent token is stored in plaintext")
	}

	// No token, an unknown token: 401.
	wantError(t, e.do("POST", "/v1/device-agent/check-in", "", checks(devA, now)), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("POST", "/v1/device-agent/check-in", "", checks(devA, now), "X-Device-Token", "cdt_nope"), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("GET", "/v1/device-agent/status", "", nil, "X-Device-Token", "cdt_nope"), http.StatusUnauthorized, "unauthorized")
	// A member's key cannot check in for a device.
	wantError(t, e.do("POST", "/v1/device-agent/check-in", ownerA, checks(devA, now)), http.StatusForbidden, "forbidden")
	// Another organization's device with a valid token: 404.
	wantError(t, e.do("POST", "/v1/device-agent/check-in", "", checks(devB, now), "X-Device-Token", tokA), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/device-agent/status?deviceId="+devB, "", nil, "X-Device-Token", tokA), http.StatusNotFound, "not_found")
	// Another organization's device through the API: 404.
	wantError(t, e.do("GET", "/v1/devices/"+devA, ownerB, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("DELETE", "/v1/devices/"+devA, ownerB, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("DELETE", "/v1/device-agent/sessions/"+devA, ownerB, nil), http.StatusNotFound, "not_found")

	// Auditors read but do not revoke or delete.
	auditor := e.key(orgA, app.RoleAuditor)
	wantStatus(t, e.do("GET", "/v1/devices/"+devA, auditor, nil), http.StatusOK)
	wantError(t, e.do("DELETE", "/v1/device-agent/sessions/"+devA, auditor, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("DELETE", "/v1/devices/"+devA, auditor, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/device-agent/enrolment-tokens", auditor, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")

	// Revocation: the next check-in is 401.
	wantStatus(t, e.do("POST", "/v1/device-agent/check-in", "", checks(devA, now), "X-Device-Token", tokA), http.StatusCreated)
	wantStatus(t, e.do("DELETE", "/v1/device-agent/sessions/"+devA, ownerA, nil), http.StatusNoContent)
	wantError(t, e.do("POST", "/v1/device-agent/check-in", "", checks(devA, now), "X-Device-Token", tokA), http.StatusUnauthorized, "unauthorized")

	// Deleting a device: its agent's replay is 404.
	wantStatus(t, e.do("POST", "/v1/device-agent/check-in", "", checks(devB, now), "X-Device-Token", tokB), http.StatusCreated)
	wantStatus(t, e.do("DELETE", "/v1/devices/"+devB, ownerB, nil), http.StatusNoContent)
	wantError(t, e.do("POST", "/v1/device-agent/check-in", "", checks(devB, now), "X-Device-Token", tokB), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/devices/"+devB, ownerB, nil), http.StatusNotFound, "not_found")
}

func TestDeviceAgentEnrolment(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Enrol", app.PlanEnterprise)
	admin := e.key(org, app.RoleAdmin)
	reg := map[string]any{"name": "Box", "hostname": "box", "platform": "windows", "osVersion": "11"}

	wantField(t, e.do("POST", "/v1/device-agent/enrolment-tokens", admin, map[string]any{}), "name")
	wantField(t, e.do("POST", "/v1/device-agent/enrolment-tokens", admin, map[string]any{"name": "x", "maxUses": 0}), "maxUses")
	wantField(t, e.do("POST", "/v1/device-agent/enrolment-tokens", admin, map[string]any{"name": "x", "expiresIn": "forever"}), "expiresIn")
	wantField(t, e.do("POST", "/v1/device-agent/enrolment-tokens", admin, map[string]any{"name": "x", "personId": "usr_nobody"}), "personId")

	// Idempotency-Key replays the creation (the same plaintext, once).
	body := map[string]any{"name": "Single", "maxUses": 1, "expiresIn": "1h"}
	r1 := e.do("POST", "/v1/device-agent/enrolment-tokens", admin, body, "Idempotency-Key", "enrol-1")
	wantStatus(t, r1, http.StatusCreated)
	r2 := e.do("POST", "/v1/device-agent/enrolment-tokens", admin, body, "Idempotency-Key", "enrol-1")
	wantStatus(t, r2, http.StatusCreated)
	if r2.Header().Get("Idempotent-Replayed") != "true" || obj(t, r1)["id"] != obj(t, r2)["id"] {
		t.Fatalf("replay: %s", r2.Body.String())
	}
	single := obj(t, r1)["token"].(string)

	// Registration validation names fields.
	bad := map[string]any{"name": "", "hostname": "h", "platform": "beos", "osVersion": "1"}
	rec := e.do("POST", "/v1/device-agent/register", "", bad, "X-Enrolment-Token", single)
	wantField(t, rec, "platform")
	wantField(t, rec, "name")

	// Single use: the second registration is 401.
	wantStatus(t, e.do("POST", "/v1/device-agent/register", "", reg, "X-Enrolment-Token", single), http.StatusCreated)
	wantError(t, e.do("POST", "/v1/device-agent/register", "", reg, "X-Enrolment-Token", single), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("POST", "/v1/device-agent/register", "", reg, "X-Enrolment-Token", "cen_unknown"), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("POST", "/v1/device-agent/register", "", reg), http.StatusUnauthorized, "unauthorized")

	// Expiry and revocation.
	rec = e.do("POST", "/v1/device-agent/enrolment-tokens", admin, map[string]any{"name": "Multi", "expiresIn": "2h"})
	wantStatus(t, rec, http.StatusCreated)
	multi, multiID := obj(t, rec)["token"].(string), obj(t, rec)["id"].(string)
	wantStatus(t, e.do("POST", "/v1/device-agent/register", "", reg, "X-Enrolment-Token", multi), http.StatusCreated)
	wantStatus(t, e.do("POST", "/v1/device-agent/register", "", reg, "X-Enrolment-Token", multi), http.StatusCreated)
	wantStatus(t, e.do("DELETE", "/v1/device-agent/enrolment-tokens/"+multiID, admin, nil), http.StatusNoContent)
	wantError(t, e.do("POST", "/v1/device-agent/register", "", reg, "X-Enrolment-Token", multi), http.StatusUnauthorized, "unauthorized")
	rec = e.do("POST", "/v1/device-agent/enrolment-tokens", admin, map[string]any{"name": "Short", "expiresIn": "1h"})
	short := obj(t, rec)["token"].(string)
	e.clock.Advance(2 * time.Hour)
	wantError(t, e.do("POST", "/v1/device-agent/register", "", reg, "X-Enrolment-Token", short), http.StatusUnauthorized, "unauthorized")

	// The list never shows plaintext.
	rec = e.do("GET", "/v1/device-agent/enrolment-tokens", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	if strings.Contains(rec.Body.String(), multi) || strings.Contains(rec.Body.String(), `"token"`) {
		t.Fatalf("list shows a plaintext: %s", rec.Body.String())
	}

	// A member registering with their own key gets a device linked to them.
	emp := e.person(org, "emp@example.com", app.RoleEmployee)
	k, err := e.app.CreateAPIKey(e.ctx(org), app.APIKeyCreate{Name: "emp", Role: string(app.RoleEmployee)})
	if err != nil {
		t.Fatal(err)
	}
	_ = emp
	rec = e.do("POST", "/v1/device-agent/register", k.Key, reg)
	wantStatus(t, rec, http.StatusCreated)

	// Re-enrolling a known serial number reuses the device and revokes the old token.
	rec = e.do("POST", "/v1/device-agent/enrolment-tokens", admin, map[string]any{"name": "Fleet"})
	fleet := obj(t, rec)["token"].(string)
	withSerial := map[string]any{"name": "Box", "hostname": "box", "platform": "windows", "osVersion": "11", "serialNumber": "S-9"}
	rec = e.do("POST", "/v1/device-agent/register", "", withSerial, "X-Enrolment-Token", fleet)
	first := obj(t, rec)
	rec = e.do("POST", "/v1/device-agent/register", "", withSerial, "X-Enrolment-Token", fleet)
	second := obj(t, rec)
	if first["deviceId"] != second["deviceId"] {
		t.Fatalf("re-enrolment made a new device: %v %v", first, second)
	}
	wantError(t, e.do("GET", "/v1/device-agent/status", "", nil, "X-Device-Token", first["deviceToken"].(string)), http.StatusUnauthorized, "unauthorized")
	wantStatus(t, e.do("GET", "/v1/device-agent/status", "", nil, "X-Device-Token", second["deviceToken"].(string)), http.StatusOK)

	// Member devices.
	rec = e.do("GET", "/v1/devices/member/usr_01JABCDEFGHJKMNPQRSTVWXYZ0", admin, nil)
	wantError(t, rec, http.StatusNotFound, "not_found")
}

func TestDeviceAgentDownloads(t *testing.T) {
	e := newTestServer(t)
	org := e.org("Dl", app.PlanEnterprise)
	key := e.key(org, app.RoleEmployee)
	app.SetAgentDownloadsDir("")
	rec := e.do("GET", "/v1/device-agent/windows", key, nil)
	m := wantError(t, rec, http.StatusNotFound, "not_found")
	if !strings.Contains(m["message"].(string), "agent.downloads_dir") {
		t.Fatalf("the message should say how to configure downloads: %s", rec.Body.String())
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, app.AgentFileName("windows", "amd64")), []byte("MZ agent"), 0o644); err != nil {
		t.Fatal(err)
	}
	app.SetAgentDownloadsDir(dir)
	t.Cleanup(func() { app.SetAgentDownloadsDir("") })
	rec = e.do("GET", "/v1/device-agent/windows", key, nil)
	wantStatus(t, rec, http.StatusOK)
	if rec.Body.String() != "MZ agent" {
		t.Fatalf("body %q", rec.Body.String())
	}
	wantStatus(t, e.do("HEAD", "/v1/device-agent/updates/compliance-windows-amd64.exe", "", nil), http.StatusOK)
	wantError(t, e.do("GET", "/v1/device-agent/updates/.hidden", "", nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/device-agent/mac", key, nil), http.StatusNotFound, "not_found")
	wantField(t, e.do("GET", "/v1/device-agent/mac?arch=ppc", key, nil), "arch")
	wantError(t, e.do("GET", "/v1/device-agent/windows", "", nil), http.StatusUnauthorized, "unauthorized")
}

// TestDeviceMCPTool: list_devices lists the organization's devices with
// the compliance filter, and nothing of another organization.
func TestDeviceMCPTool(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	dev, tok := enrol(t, e, org, "SER-M")
	wantStatus(t, e.do("POST", "/v1/device-agent/check-in", "", checks(dev, e.clock.Now(), app.CheckAntivirus), "X-Device-Token", tok), http.StatusCreated)
	cs := mcpSession(t, e, http.Header{"X-Api-Key": {e.key(org, app.RoleAuditor)}})
	out, isErr := callTool(t, cs, "list_devices", map[string]any{"compliant": false})
	if isErr || len(out["data"].([]any)) != 1 || out["data"].([]any)[0].(map[string]any)["id"] != dev {
		t.Fatalf("list_devices compliant=false: %v", out)
	}
	out, isErr = callTool(t, cs, "list_devices", map[string]any{"compliant": true})
	if isErr || len(out["data"].([]any)) != 0 {
		t.Fatalf("list_devices compliant=true: %v", out)
	}
	other := mcpSession(t, e, http.Header{"X-Api-Key": {e.key(e.org("Globex", app.PlanProfessional), app.RoleOwner)}})
	out, _ = callTool(t, other, "list_devices", map[string]any{})
	if len(out["data"].([]any)) != 0 {
		t.Fatalf("another organization sees devices: %v", out)
	}
}
