package ldap

import (
	"reflect"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/ldap/ldaptest"
)

// TestSlapdGroupSearch reads groupOfNames, groupOfUniqueNames and
// posixGroup entries from a slapd without the memberOf overlay, paged two
// groups a page, and maps them to each user beside memberOf.
func TestSlapdGroupSearch(t *testing.T) {
	t.Parallel()
	s := startSlapd(t, 40, 0)
	p := New(nil)
	groupsOf := func(vars map[string]string) (map[string][]string, error) {
		out := map[string][]string{}
		err := p.Users(testContext(t), s.target(vars), func(u app.DirectoryUser) error {
			out[u.Login] = u.Groups
			return nil
		})
		return out, err
	}
	engineers, reviewers, ops := "cn=engineers,"+ldaptest.GroupsDN, "cn=reviewers,"+ldaptest.GroupsDN, "cn=ops,"+ldaptest.GroupsDN
	auditors := "cn=auditors,ou=groups," + suffix
	by, err := groupsOf(map[string]string{"groupBaseDn": ldaptest.GroupsDN, "pageSize": "2"})
	if err != nil {
		t.Fatal(err)
	}
	for login, want := range map[string][]string{
		"user00004": {engineers},
		"user00005": {reviewers},
		"user00006": {reviewers}, // uniqueMember with a different case, spaces and #'0101'B
		"user00007": {auditors, ops},
		"user00008": {engineers, ops},
		"user00028": {auditors, engineers},
		"user00001": nil,
	} {
		if got := by[login]; !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Errorf("%s: groups %v, want %v", login, got, want)
		}
	}
	// One member attribute only.
	by, err = groupsOf(map[string]string{"groupBaseDn": ldaptest.GroupsDN, "memberAttribute": "memberUid"})
	if err != nil {
		t.Fatal(err)
	}
	if got := by["user00004"]; len(got) != 0 {
		t.Errorf("memberUid only: user00004 in %v", got)
	}
	if got := by["user00008"]; !reflect.DeepEqual(got, []string{ops}) {
		t.Errorf("memberUid only: user00008 in %v", got)
	}
	// Without a group base, memberOf only.
	by, err = groupsOf(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := by["user00008"]; len(got) != 0 {
		t.Errorf("no group search: user00008 in %v", got)
	}
	// Bad settings name the field; a missing group base fails the listing.
	for vars, field := range map[string]string{"groupFilter=(objectClass=group": "groupBaseDn", "groupBaseDn=not a dn": "groupBaseDn",
		"memberAttribute=owner": "memberAttribute"} {
		k, v, _ := strings.Cut(vars, "=")
		m := map[string]string{k: v}
		if k == "memberAttribute" {
			m["groupBaseDn"] = ldaptest.GroupsDN
		}
		if _, err := groupsOf(m); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v", vars, err)
		}
	}
	if _, err := groupsOf(map[string]string{"groupBaseDn": "ou=nowhere," + suffix}); err == nil || !strings.Contains(err.Error(), "groups") {
		t.Errorf("missing group base: %v", err)
	}
}
