package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/ldap"
	"github.com/compliance-appliance/compliance/integrations/ldap/ldaptest"
)

// TestSyncRoleMapping maps a real slapd group (memberOf) to roles: joiners
// in it get the mapped role; with applyToExisting people follow their
// groups, are promoted to admin only when an owner mapped it, and are
// demoted when the mapping no longer says so; an owner never changes.
func TestSyncRoleMapping(t *testing.T) {
	s := newSyncEnv(t, 30)
	path := "/v1/integrations/sync/connections/" + s.conn + "/role-mapping"
	group := strings.ToUpper("cn=auditors,ou=groups," + ldaptest.Suffix) // groups match case-insensitively
	role := func(email string) string {
		var r string
		if err := s.raw().QueryRow(`SELECT m.role FROM memberships m JOIN users u ON u.id = m.user_id
			WHERE m.organization_id = ? AND u.email = ?`, s.org, email).Scan(&r); err != nil {
			t.Fatalf("%s: %v", email, err)
		}
		return r
	}

	rec := s.do("GET", path, s.aud, nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["defaultRole"] != "employee" || len(m["groupRoles"].([]any)) != 0 || m["applyToExisting"] != false {
		t.Fatalf("default mapping: %v", m)
	}
	rec = s.do("PUT", path, s.owner, map[string]any{"groupRoles": []map[string]string{{"group": group, "role": "auditor"}}})
	wantStatus(t, rec, http.StatusOK)
	s.sync(t, "")
	if r := role("user00007@example.test"); r != "auditor" {
		t.Fatalf("joiner in the mapped group: %s", r)
	}
	if r := role("user00002@example.test"); r != "employee" {
		t.Fatalf("joiner in no mapped group: %s", r)
	}

	// Existing people follow their groups only with applyToExisting; an
	// owner maps the group to admin.
	wantStatus(t, s.do("PUT", path, s.owner, map[string]any{"groupRoles": []map[string]string{{"group": group, "role": "admin"}}}), http.StatusOK)
	s.sync(t, "")
	if r := role("user00007@example.test"); r != "auditor" {
		t.Fatalf("existing person changed without applyToExisting: %s", r)
	}
	wantStatus(t, s.do("PUT", path, s.owner, map[string]any{"groupRoles": []map[string]string{{"group": group, "role": "admin"}}, "applyToExisting": true}), http.StatusOK)
	run := s.sync(t, "")
	if r := role("user00007@example.test"); r != "admin" {
		t.Fatalf("promoted by the mapping: %s (run %v)", r, run)
	}
	if r := role("owner@acme.test"); r != "owner" {
		t.Fatalf("owner changed: %s", r)
	}
	// The mapping no longer names the group: demoted to the default role.
	wantStatus(t, s.do("PUT", path, s.owner, map[string]any{"defaultRole": "contractor", "applyToExisting": true}), http.StatusOK)
	s.sync(t, "")
	if r := role("user00007@example.test"); r != "contractor" {
		t.Fatalf("demoted by the mapping: %s", r)
	}
	if r := role("user00002@example.test"); r != "contractor" {
		t.Fatalf("default role applied to existing: %s", r)
	}
	if r := role("owner@acme.test"); r != "owner" {
		t.Fatalf("owner changed: %s", r)
	}
	if n := s.count(t, `SELECT count(*) FROM audit_log WHERE organization_id = ? AND action = 'role_mapping_updated'`, s.org); n != 4 {
		t.Fatalf("mapping audit records = %d, want 4", n)
	}

	// Rules: never owner; admin and applyToExisting only by an owner.
	admin := s.key(s.org, app.RoleAdmin)
	wantField(t, s.do("PUT", path, admin, map[string]any{"groupRoles": []map[string]string{{"group": group, "role": "admin"}}}), "groupRoles[0].role")
	wantField(t, s.do("PUT", path, admin, map[string]any{"applyToExisting": true}), "applyToExisting")
	wantStatus(t, s.do("PUT", path, admin, map[string]any{"groupRoles": []map[string]string{{"group": group, "role": "auditor"}}}), http.StatusOK)
	wantField(t, s.do("PUT", path, s.owner, map[string]any{"groupRoles": []map[string]string{{"group": group, "role": "owner"}}}), "groupRoles[0].role")
	wantField(t, s.do("PUT", path, s.owner, map[string]any{"groupRoles": []map[string]string{{"group": " ", "role": "auditor"}}}), "groupRoles[0].group")
	wantField(t, s.do("PUT", path, s.owner, map[string]any{"groupRoles": []map[string]string{{"group": "a", "role": "auditor"}, {"group": "A", "role": "employee"}}}), "groupRoles[1].group")
	wantField(t, s.do("PUT", path, s.owner, map[string]any{"defaultRole": "admin"}), "defaultRole")
	wantField(t, s.do("PUT", path, s.owner, map[string]any{"defaultRole": 3}), "defaultRole")

	// Auditors read; another organization sees nothing.
	wantStatus(t, s.do("PUT", path, s.aud, map[string]any{}), http.StatusForbidden)
	other := s.org2(t)
	wantStatus(t, s.do("GET", path, other, nil), http.StatusNotFound)
	wantStatus(t, s.do("PUT", path, other, map[string]any{}), http.StatusNotFound)
}

// TestUISyncRoleMapping: the directory connection's sync page has the role
// mapping form; an owner saves it; an admin mapping to admin sees the error;
// an auditor sees the mapping but no form.
func TestUISyncRoleMapping(t *testing.T) {
	dir := ldaptest.Start(t, 10, 0)
	e := newTestServer(t)
	e.app.RegisterIntegrationProviders(ldap.New(nil))
	f := e.uiFixture("Acme")
	key := e.key(f.org, app.RoleOwner)
	rec := e.do("POST", "/v1/integrations/connections", key, map[string]any{"providerSlug": "ldap", "credentials": dir.Credentials(),
		"variables": map[string]string{"baseDn": ldaptest.PeopleDN}})
	wantStatus(t, rec, http.StatusCreated)
	conn := obj(t, rec)["id"].(string)
	group := "cn=auditors,ou=groups," + ldaptest.Suffix

	owner := e.browser()
	owner.signIn(f.owner)
	rec = owner.get("/integrations/" + conn + "/sync")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Roles from directory groups", `name="groupRoles"`, "Save role mapping")
	rec = owner.post("/integrations/"+conn+"/sync/roles", url.Values{"groupRoles": {group + " = admin\n"}, "defaultRole": {"contractor"}})
	wantRedirect(t, rec, "/integrations/"+conn+"/sync?done=sync-roles")
	rec = e.do("GET", "/v1/integrations/sync/connections/"+conn+"/role-mapping", key, nil)
	m := obj(t, rec)
	if m["defaultRole"] != "contractor" || len(m["groupRoles"].([]any)) != 1 || m["groupRoles"].([]any)[0].(map[string]any)["group"] != group {
		t.Fatalf("saved mapping: %v", m)
	}
	rec = owner.get("/integrations/" + conn + "/sync")
	wantBody(t, rec, group+" = admin")

	admin := e.browser()
	admin.signIn(f.admin)
	rec = admin.post("/integrations/"+conn+"/sync/roles", url.Values{"groupRoles": {group + " = admin"}})
	wantBody(t, rec, "only an owner may map a group to admin")

	auditor := e.browser()
	auditor.signIn(f.auditor)
	rec = auditor.get("/integrations/" + conn + "/sync")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Roles from directory groups")
	wantNoBody(t, rec, "Save role mapping")
	wantStatus(t, auditor.post("/integrations/"+conn+"/sync/roles", url.Values{}), http.StatusForbidden)
}
