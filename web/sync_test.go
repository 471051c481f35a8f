package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/ldap"
	"github.com/compliance-appliance/compliance/integrations/ldap/ldaptest"
)

// syncEnv is an organization with an LDAP connection to a real slapd.
type syncEnv struct {
	*testEnv
	dir             *ldaptest.Server
	org, owner, aud string
	ownerID         string
	conn            string
}

func newSyncEnv(t *testing.T, users int) *syncEnv {
	t.Helper()
	dir := ldaptest.Start(t, users, 50)
	e := newTestServer(t)
	e.app.RegisterIntegrationProviders(ldap.New(nil))
	s := &syncEnv{testEnv: e, dir: dir}
	s.org = e.org("Acme", app.PlanEnterprise)
	s.ownerID = e.person(s.org, "owner@acme.test", app.RoleOwner)
	s.owner = e.key(s.org, app.RoleOwner)
	s.aud = e.key(s.org, app.RoleAuditor)
	s.conn = s.connect(t, dir.Credentials())
	return s
}

func (s *syncEnv) connect(t *testing.T, creds map[string]string) string {
	t.Helper()
	rec := s.do("POST", "/v1/integrations/connections", s.owner, map[string]any{
		"providerSlug": "ldap", "credentials": creds,
		"variables": map[string]string{"baseDn": ldaptest.PeopleDN, "disabledAttribute": "employeeType", "disabledValue": "disabled"},
	})
	wantStatus(t, rec, http.StatusCreated)
	return obj(t, rec)["id"].(string)
}

func (s *syncEnv) sync(t *testing.T, query string) map[string]any {
	t.Helper()
	rec := s.do("POST", "/v1/integrations/sync/dynamic/ldap/employees?connectionId="+s.conn+query, s.owner, nil)
	wantStatus(t, rec, http.StatusCreated)
	return obj(t, rec)
}

func (s *syncEnv) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.raw().QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func wantCounts(t *testing.T, run map[string]any, want map[string]int) {
	t.Helper()
	for k, v := range want {
		if got, _ := run[k].(float64); int(got) != v {
			t.Errorf("%s = %v, want %d (run %v)", k, run[k], v, run)
		}
	}
}

// TestDirectorySyncLDAP syncs the people register from a real slapd with
// 200 users: 24 disabled (locked or marked), one without e-mail.
func TestDirectorySyncLDAP(t *testing.T) {
	s := newSyncEnv(t, 200)

	// The connection tests; a wrong bind password is a 200 failure.
	rec := s.do("POST", "/v1/integrations/connections/"+s.conn+"/test", s.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["success"] != true {
		t.Fatalf("test: %s", rec.Body.String())
	}
	bad := s.dir.Credentials()
	bad["bindPassword"] = "wrong"
	badConn := s.connect(t, bad)
	rec = s.do("POST", "/v1/integrations/connections/"+badConn+"/test", s.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["success"] != false {
		t.Fatalf("wrong password tested fine: %s", rec.Body.String())
	}

	members := func() int {
		return s.count(t, `SELECT count(*) FROM memberships WHERE organization_id = ? AND is_active = 1`, s.org)
	}
	// A dry run plans and changes nobody.
	dry := s.sync(t, "&dryRun=true")
	wantCounts(t, dry, map[string]int{"found": 200, "created": 175, "skipped": 25, "errors": 0})
	if dry["dryRun"] != true || dry["status"] != "succeeded" || dry["syncRunId"] == "" {
		t.Fatalf("dry run: %v", dry)
	}
	if n := members(); n != 1 {
		t.Fatalf("dry run changed the register: %d members", n)
	}

	// The first run creates the 175 active users with an e-mail address.
	run := s.sync(t, "")
	wantCounts(t, run, map[string]int{"found": 200, "created": 175, "skipped": 25, "updated": 0, "deactivated": 0, "errors": 0})
	if n := members(); n != 176 {
		t.Fatalf("members = %d, want 176", n)
	}
	if n := s.count(t, `SELECT count(*) FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = ? AND u.email = 'user00002@example.test' AND m.role = 'employee' AND m.department = 'Sales'`, s.org); n != 1 {
		t.Fatalf("joiner not created with role employee and department: %d", n)
	}
	// Joiners get onboarding tasks assigned to them.
	if n := s.count(t, `SELECT count(*) FROM tasks t JOIN users u ON u.id = t.assignee_id WHERE t.organization_id = ? AND u.email = 'user00002@example.test'`, s.org); n < 1 {
		t.Fatal("joiner has no onboarding task")
	}
	if n := s.count(t, `SELECT count(*) FROM events WHERE organization_id = ? AND type = 'person.joined'`, s.org); n != 175 {
		t.Fatalf("person.joined events = %d, want 175", n)
	}
	// The run's per-person results, paged.
	rec = s.do("GET", "/v1/integrations/sync/runs/"+run["syncRunId"].(string)+"?perPage=10", s.aud, nil)
	wantStatus(t, rec, http.StatusOK)
	detail := obj(t, rec)
	// 175 created and the one without e-mail; the 24 disabled are counted.
	if detail["resultsTotal"].(float64) != 176 || len(detail["results"].([]any)) != 10 {
		t.Fatalf("run detail: total %v, %d results", detail["resultsTotal"], len(detail["results"].([]any)))
	}
	// People show their source.
	rec = s.do("GET", "/v1/people?perPage=200", s.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	sources := map[string]int{}
	for _, p := range obj(t, rec)["data"].([]any) {
		src := p.(map[string]any)["source"].(map[string]any)
		sources[src["type"].(string)]++
		if _, ok := p.(map[string]any)["twoFactor"].(map[string]any); !ok {
			t.Fatalf("person without twoFactor: %v", p)
		}
	}
	if sources["directory"] != 175 || sources["manual"] != 1 {
		t.Fatalf("sources: %v", sources)
	}

	// A second, unchanged run writes nothing but its own record.
	audit := s.count(t, `SELECT count(*) FROM audit_log WHERE organization_id = ?`, s.org)
	dirWrites := s.count(t, `SELECT count(*) FROM person_directory WHERE organization_id = ? AND updated_at > ?`, s.org, "2000")
	tasks := s.count(t, `SELECT count(*) FROM tasks WHERE organization_id = ?`, s.org)
	results := s.count(t, `SELECT count(*) FROM sync_run_results WHERE organization_id = ?`, s.org)
	dirMax := s.count(t, `SELECT count(*) FROM person_directory WHERE organization_id = ? AND updated_at = (SELECT max(updated_at) FROM person_directory)`, s.org)
	s.clock.Advance(time.Minute)
	again := s.sync(t, "")
	wantCounts(t, again, map[string]int{"found": 200, "created": 0, "updated": 0, "unchanged": 175, "skipped": 25, "deactivated": 0})
	if d := s.count(t, `SELECT count(*) FROM audit_log WHERE organization_id = ?`, s.org) - audit; d != 1 {
		t.Fatalf("second run wrote %d audit records, want 1 (its own)", d)
	}
	if n := s.count(t, `SELECT count(*) FROM tasks WHERE organization_id = ?`, s.org); n != tasks {
		t.Fatalf("second run opened %d tasks", n-tasks)
	}
	if n := s.count(t, `SELECT count(*) FROM person_directory WHERE organization_id = ? AND updated_at = (SELECT max(updated_at) FROM person_directory)`, s.org); n != dirMax {
		t.Fatal("second run rewrote person_directory")
	}
	if n := s.count(t, `SELECT count(*) FROM person_directory WHERE organization_id = ? AND updated_at > ?`, s.org, "2000"); n != dirWrites {
		t.Fatal("second run rewrote person_directory")
	}
	if n := s.count(t, `SELECT count(*) FROM sync_run_results WHERE organization_id = ?`, s.org) - results; n != 1 {
		t.Fatalf("second run recorded %d results, want only the user without e-mail", n)
	}

	// A leaver is deactivated (never deleted) and offboarding tasks open
	// for an admin.
	s.dir.Modify(t, fmt.Sprintf("dn: uid=user00002,%s\nchangetype: delete\n\ndn: uid=user00004,%s\nchangetype: modify\nreplace: employeeType\nemployeeType: disabled\n", ldaptest.PeopleDN, ldaptest.PeopleDN))
	left := s.sync(t, "")
	wantCounts(t, left, map[string]int{"found": 199, "deactivated": 2, "created": 0})
	if n := s.count(t, `SELECT count(*) FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = ? AND u.email IN ('user00002@example.test', 'user00004@example.test') AND m.is_active = 0`, s.org); n != 2 {
		t.Fatalf("leavers not deactivated (kept): %d", n)
	}
	if n := s.count(t, `SELECT count(*) FROM tasks WHERE organization_id = ? AND assignee_id = ? AND title LIKE 'Revoke access of %'`, s.org, s.ownerID); n != 2 {
		t.Fatalf("offboarding tasks for the owner = %d, want 2", n)
	}
	if n := s.count(t, `SELECT count(*) FROM events WHERE organization_id = ? AND type = 'person.left'`, s.org); n != 2 {
		t.Fatalf("person.left events = %d", n)
	}
	// The owner is told (the notify job), once, of the run with leavers.
	if _, err := s.app.Notify(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := s.count(t, `SELECT count(*) FROM notifications WHERE organization_id = ? AND person_id = ? AND kind = 'sync_leavers'`, s.org, s.ownerID); n != 1 {
		t.Fatalf("sync_leavers notifications = %d, want 1", n)
	}
	// A dry run after the leavers changes nothing.
	before := members()
	s.dir.Modify(t, fmt.Sprintf("dn: uid=user00006,%s\nchangetype: delete\n", ldaptest.PeopleDN))
	dry = s.sync(t, "&dryRun=true")
	wantCounts(t, dry, map[string]int{"deactivated": 1})
	if members() != before {
		t.Fatal("dry run deactivated someone")
	}

	// A failed run (wrong password) is recorded failed.
	rec = s.do("POST", "/v1/integrations/sync/dynamic/ldap/employees", s.owner, map[string]any{"connectionId": badConn})
	wantStatus(t, rec, http.StatusCreated)
	if f := obj(t, rec); f["status"] != "failed" || f["success"] != false || f["error"] == nil {
		t.Fatalf("wrong password run: %v", f)
	}
	rec = s.do("GET", "/v1/integrations/sync/runs?status=failed&connectionId="+badConn, s.aud, nil)
	wantStatus(t, rec, http.StatusOK)
	if n := len(obj(t, rec)["data"].([]any)); n != 1 {
		t.Fatalf("failed runs listed: %d", n)
	}
}

// TestDirectorySyncRules covers one run per connection, interrupted runs,
// organizations' isolation, auditors and bad input.
func TestDirectorySyncRules(t *testing.T) {
	s := newSyncEnv(t, 20)
	run := s.sync(t, "")
	runID := run["syncRunId"].(string)

	// A second run while one is running: 409.
	if _, err := s.raw().Exec(`INSERT INTO sync_runs (id, organization_id, connection_id, provider_slug, sync_type, trigger, status, requested_by, started_at)
		VALUES ('syr_running', ?, ?, 'ldap', 'employee', 'manual', 'running', 'test', '2026-01-15T10:00:00Z')`, s.org, s.conn); err != nil {
		t.Fatal(err)
	}
	rec := s.do("POST", "/v1/integrations/sync/dynamic/ldap/employees?connectionId="+s.conn, s.owner, nil)
	wantError(t, rec, http.StatusConflict, "conflict")
	// A run left running by a stopped process is interrupted at start-up.
	if n, err := s.app.InterruptStaleSyncRuns(s.ctx(s.org)); err != nil || n != 1 {
		t.Fatalf("interrupted %d, %v", n, err)
	}
	rec = s.do("GET", "/v1/integrations/sync/runs/syr_running", s.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["status"] != "interrupted" {
		t.Fatalf("not interrupted: %s", rec.Body.String())
	}

	// Another organization sees none of it.
	other := s.org2(t)
	for _, path := range []string{"/v1/integrations/sync/runs/" + runID, "/v1/integrations/connections/" + s.conn} {
		wantStatus(t, s.do("GET", path, other, nil), http.StatusNotFound)
	}
	wantStatus(t, s.do("POST", "/v1/integrations/sync/dynamic/ldap/employees?connectionId="+s.conn, other, nil), http.StatusNotFound)
	rec = s.do("GET", "/v1/integrations/sync/runs", other, nil)
	wantStatus(t, rec, http.StatusOK)
	if n := len(obj(t, rec)["data"].([]any)); n != 0 {
		t.Fatalf("other organization lists %d runs", n)
	}

	// Auditors read, never act.
	wantStatus(t, s.do("GET", "/v1/integrations/sync/runs?connectionId="+s.conn, s.aud, nil), http.StatusOK)
	wantStatus(t, s.do("POST", "/v1/integrations/sync/dynamic/ldap/employees?connectionId="+s.conn, s.aud, nil), http.StatusForbidden)
	wantStatus(t, s.do("POST", "/v1/integrations/sync/employee-sync-provider", s.aud, map[string]any{"provider": "ldap"}), http.StatusForbidden)

	// Bad input names the field.
	wantField(t, s.do("POST", "/v1/integrations/sync/dynamic/ldap/employees", s.owner, nil), "connectionId")
	wantField(t, s.do("POST", "/v1/integrations/sync/dynamic/ldap/employees?connectionId="+s.conn+"&dryRun=maybe", s.owner, nil), "dryRun")
	wantField(t, s.do("POST", "/v1/integrations/sync/dynamic/okta/employees?connectionId="+s.conn, s.owner, nil), "connectionId")
	wantField(t, s.do("GET", "/v1/integrations/sync/available-providers?syncType=printers", s.owner, nil), "syncType")
	wantField(t, s.do("GET", "/v1/integrations/sync/runs?status=done", s.owner, nil), "status")
	wantField(t, s.do("POST", "/v1/integrations/sync/device-sync-provider", s.owner, map[string]any{"provider": "ldap"}), "provider")
	wantField(t, s.do("POST", "/v1/integrations/sync/employee-sync-provider", s.owner, map[string]any{"provider": "custom"}), "provider")
	wantField(t, s.do("POST", "/v1/integrations/sync/two-factor-source", s.owner, map[string]any{"provider": "ldap"}), "provider")
	wantField(t, s.do("POST", "/v1/integrations/sync/employee-sync-provider", s.owner, map[string]any{}), "provider")
	wantField(t, s.do("POST", "/v1/integrations/sync/dynamic/ldap/devices?connectionId="+s.conn, s.owner, nil), "providerSlug")
	wantStatus(t, s.do("POST", "/v1/integrations/sync/dynamic/nosuch/devices", s.owner, nil), http.StatusNotFound)

	// Provider choices.
	rec = s.do("GET", "/v1/integrations/sync/device-sync-provider", s.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["provider"] != nil {
		t.Fatalf("device sync provider: %v", m)
	}
	rec = s.do("POST", "/v1/integrations/sync/employee-sync-provider", s.owner, map[string]any{"provider": "ldap"})
	wantStatus(t, rec, http.StatusCreated)
	rec = s.do("GET", "/v1/integrations/sync/employee-sync-provider", s.aud, nil)
	if m := obj(t, rec); m["provider"] != "ldap" {
		t.Fatalf("employee sync provider: %v", m)
	}
	rec = s.do("GET", "/v1/integrations/sync/available-providers", s.aud, nil)
	wantStatus(t, rec, http.StatusOK)
	ps := obj(t, rec)["providers"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["connected"] != true || ps[0].(map[string]any)["connectionId"] != s.conn {
		t.Fatalf("available providers: %v", ps)
	}
	rec = s.do("GET", "/v1/integrations/sync/two-factor-statuses", s.aud, nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["configured"] != false || len(m["statuses"].([]any)) == 0 {
		t.Fatalf("two-factor statuses: %v", m)
	}
	rec = s.do("POST", "/v1/integrations/sync/google-workspace/status", s.aud, nil)
	wantStatus(t, rec, http.StatusCreated)
	if m := obj(t, rec); m["connected"] != false {
		t.Fatalf("google workspace status: %v", m)
	}

	// The scheduled job syncs the employee sync provider's connection once
	// per frequency (daily): the manual run an instant ago counts.
	runs := s.count(t, `SELECT count(*) FROM sync_runs WHERE organization_id = ?`, s.org)
	if err := s.app.RunDirectorySyncs(s.ctx(s.org)); err != nil {
		t.Fatal(err)
	}
	if n := s.count(t, `SELECT count(*) FROM sync_runs WHERE organization_id = ?`, s.org); n != runs {
		t.Fatalf("scheduled sync ran before its slot: %d runs, want %d", n, runs)
	}
	s.clock.Advance(25 * 60 * 60 * 1e9)
	if err := s.app.RunDirectorySyncs(s.ctx(s.org)); err != nil {
		t.Fatal(err)
	}
	if n := s.count(t, `SELECT count(*) FROM sync_runs WHERE organization_id = ? AND trigger = 'schedule' AND status = 'succeeded'`, s.org); n != 1 {
		t.Fatalf("scheduled runs = %d, want 1", n)
	}
}

// TestDirectorySyncMCPTool: list_sync_runs lists the runs; list_people
// carries two-factor status; another organization's connection is not found.
func TestDirectorySyncMCPTool(t *testing.T) {
	s := newSyncEnv(t, 10)
	s.sync(t, "")
	cs := mcpSession(t, s.testEnv, http.Header{"X-Api-Key": {s.aud}})
	out, isErr := callTool(t, cs, "list_sync_runs", map[string]any{"connectionId": s.conn, "status": "succeeded"})
	if isErr || len(out["data"].([]any)) != 1 {
		t.Fatalf("list_sync_runs: %v", out)
	}
	out, isErr = callTool(t, cs, "list_people", map[string]any{})
	if isErr || !strings.Contains(fmt.Sprint(out), "twoFactor") {
		t.Fatalf("list_people: %v", out)
	}
	other := mcpSession(t, s.testEnv, http.Header{"X-Api-Key": {s.org2(t)}})
	out, _ = callTool(t, other, "list_sync_runs", map[string]any{"connectionId": s.conn})
	if !strings.Contains(fmt.Sprint(out["error"]), "not_found") {
		t.Fatalf("another organization: %v", out)
	}
}

func (s *syncEnv) org2(t *testing.T) string {
	t.Helper()
	o := s.testEnv.org("Other", app.PlanEnterprise)
	return s.key(o, app.RoleOwner)
}
