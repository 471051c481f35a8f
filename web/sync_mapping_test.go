package web

import (
	"net/http"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/ldap/ldaptest"
)

// memberRole is a member's role and active flag, "" when not a member.
func memberRole(t *testing.T, e *testEnv, org, email string) (string, bool) {
	t.Helper()
	var role string
	var active bool
	err := e.raw().QueryRow(`SELECT m.role, m.is_active FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.organization_id = ? AND u.email = ?`, org, email).Scan(&role, &active)
	if err != nil {
		return "", false
	}
	return role, active
}

// TestDirectorySyncOktaMapping syncs an Okta org's users, factors and
// groups through the API and checks what lands on people, as
// docs/directory-sync.md documents: statuses (active, suspended, staged),
// two-factor status from factors, roles from mapped groups, with the rules
// that sync never changes an owner and maps to admin only when an owner
// said so.
func TestDirectorySyncOktaMapping(t *testing.T) {
	s := newOktaEnv(t, map[string]string{"readGroups": "true"})
	s.person(s.org, "carol@acme.test", app.RoleEmployee)
	s.person(s.org, "gina@acme.test", app.RoleEmployee)
	s.okta.users = []oktaUser{
		{"00u1", "ACTIVE", "Ada@Acme.test", "Ada Lovelace", "ACTIVE"},
		{"00u2", "ACTIVE", "bob@acme.test", "Bob Byte", "PENDING_ACTIVATION"},
		{"00u3", "SUSPENDED", "carol@acme.test", "Carol Cipher", "ACTIVE"},
		{"00u4", "STAGED", "dave@acme.test", "Dave Data", ""},
		{"00u5", "ACTIVE", "owner@acme.test", "Olga Owner", "ACTIVE"},
		{"00u6", "ACTIVE", "erin@acme.test", "Erin Admin", "ACTIVE"},
		{"00u7", "PASSWORD_EXPIRED", "frank@acme.test", "Frank Field", ""},
		{"00u8", "DEPROVISIONED", "gina@acme.test", "Gina Gone", ""},
	}
	s.okta.groups = []oktaGroup{
		{"00g1", "Everyone", []string{"00u1", "00u2", "00u3", "00u5", "00u6", "00u7"}},
		{"00g2", "Compliance Auditors", []string{"00u1", "00u5"}},
		{"00g3", "IT Admins", []string{"00u6"}},
	}
	path := "/v1/integrations/sync/connections/" + s.conn + "/role-mapping"
	// An admin cannot map a group to admin; an owner can.
	wantField(t, s.do("PUT", path, s.adminKey, map[string]any{"groupRoles": []map[string]string{{"group": "IT Admins", "role": "admin"}}}), "groupRoles[0].role")
	wantStatus(t, s.do("PUT", path, s.owner, map[string]any{"groupRoles": []map[string]string{
		{"group": "compliance auditors", "role": "auditor"}, {"group": "IT Admins", "role": "admin"}}, "applyToExisting": true}), http.StatusOK)

	rec := s.do("POST", "/v1/integrations/sync/dynamic/okta/employees?connectionId="+s.conn, s.owner, nil)
	wantStatus(t, rec, http.StatusCreated)
	run := obj(t, rec)
	wantCounts(t, run, map[string]int{"found": 8, "created": 4, "deactivated": 2, "skipped": 1, "errors": 0})

	for _, c := range []struct {
		email, role string
		active      bool
		twoFactor   string
	}{
		{"ada@acme.test", "auditor", true, "enrolled"},        // mapped group; ACTIVE factor
		{"bob@acme.test", "employee", true, "not_enrolled"},   // no mapped group; pending factor
		{"carol@acme.test", "employee", false, ""},            // SUSPENDED: a leaver
		{"dave@acme.test", "", false, ""},                     // STAGED: not a joiner
		{"owner@acme.test", "owner", true, "enrolled"},        // an owner never changes
		{"erin@acme.test", "admin", true, "enrolled"},         // mapped to admin by an owner
		{"frank@acme.test", "employee", true, "not_enrolled"}, // PASSWORD_EXPIRED is active; no factor
		{"gina@acme.test", "employee", false, ""},             // DEPROVISIONED: a leaver
	} {
		role, active := memberRole(t, s.testEnv, s.org, c.email)
		if role != c.role || active != c.active {
			t.Errorf("%s: role %q active %v, want %q %v", c.email, role, active, c.role, c.active)
		}
		if c.twoFactor == "" {
			continue
		}
		rec := s.do("GET", "/v1/people?twoFactor="+c.twoFactor+"&source=directory&perPage=100", s.aud, nil)
		wantStatus(t, rec, http.StatusOK)
		found := false
		for _, p := range obj(t, rec)["data"].([]any) {
			if p.(map[string]any)["email"] == c.email {
				found = true
			}
		}
		if !found {
			t.Errorf("%s is not listed as %s from the directory", c.email, c.twoFactor)
		}
	}

	// Moved out of the mapped group: demoted to the default role at the next
	// sync (applyToExisting); the owner stays.
	s.okta.mu.Lock()
	s.okta.groups[1].members = []string{"00u5"}
	s.okta.mu.Unlock()
	wantStatus(t, s.do("POST", "/v1/integrations/sync/dynamic/okta/employees?connectionId="+s.conn, s.owner, nil), http.StatusCreated)
	if role, _ := memberRole(t, s.testEnv, s.org, "ada@acme.test"); role != "employee" {
		t.Errorf("ada after leaving the group: %s", role)
	}
	if role, _ := memberRole(t, s.testEnv, s.org, "owner@acme.test"); role != "owner" {
		t.Errorf("the owner: %s", role)
	}
	// Groups Okta refuses fail the run: no role changes, nobody deactivated.
	s.okta.mu.Lock()
	s.okta.fail = "403groups"
	s.okta.groups[2].members = nil
	s.okta.mu.Unlock()
	rec = s.do("POST", "/v1/integrations/sync/dynamic/okta/employees?connectionId="+s.conn, s.owner, nil)
	wantStatus(t, rec, http.StatusCreated)
	if run := obj(t, rec); run["status"] != "failed" {
		t.Fatalf("a run without its groups: %v", run)
	}
	if role, active := memberRole(t, s.testEnv, s.org, "erin@acme.test"); role != "admin" || !active {
		t.Errorf("erin after a failed run: %s %v", role, active)
	}
}

// TestSyncRoleMappingGroupSearch maps an LDAP group found by the group
// search (a groupOfNames on a server without the memberOf overlay) to a
// role, end to end against slapd.
func TestSyncRoleMappingGroupSearch(t *testing.T) {
	s := newSyncEnv(t, 12)
	rec := s.do("PATCH", "/v1/integrations/connections/"+s.conn, s.owner, map[string]any{
		"variables": map[string]string{"baseDn": ldaptest.PeopleDN, "disabledAttribute": "employeeType", "disabledValue": "disabled",
			"groupBaseDn": ldaptest.GroupsDN}})
	if rec.Code != http.StatusOK {
		t.Skipf("the connection's variables cannot be changed here (%d): %s", rec.Code, rec.Body.String())
	}
	path := "/v1/integrations/sync/connections/" + s.conn + "/role-mapping"
	wantStatus(t, s.do("PUT", path, s.owner, map[string]any{"groupRoles": []map[string]string{
		{"group": "cn=reviewers," + ldaptest.GroupsDN, "role": "contractor"}, {"group": "CN=Engineers," + ldaptest.GroupsDN, "role": "auditor"}}}), http.StatusOK)
	s.sync(t, "")
	for email, want := range map[string]string{
		"user00004@example.test": "auditor",    // engineers (member DN)
		"user00005@example.test": "contractor", // reviewers (uniqueMember)
		"user00006@example.test": "contractor", // reviewers (uniqueMember with a unique id)
		"user00002@example.test": "employee",
		"owner@acme.test":        "owner",
	} {
		if role, _ := memberRole(t, s.testEnv, s.org, email); role != want {
			t.Errorf("%s: %s, want %s", email, role, want)
		}
	}
}
