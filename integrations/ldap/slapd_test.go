package ldap

import (
	"context"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/ldap/ldaptest"
)

// The tests run a real OpenLDAP server (slapd from Debian's packages,
// installed by .ci/run) on loopback with a generated configuration, a test
// CA and an LDIF fixture: package ldaptest, shared with the sync tests.

const (
	suffix   = ldaptest.Suffix
	syncDN   = ldaptest.SyncDN
	syncPass = ldaptest.SyncPassword
	peopleDN = ldaptest.PeopleDN
)

// slapd is one running server.
type slapd struct {
	*ldaptest.Server
	ldapURL string
}

func startSlapd(tb testing.TB, n, sizeLimit int) *slapd {
	s := ldaptest.Start(tb, n, sizeLimit)
	return &slapd{Server: s, ldapURL: s.LDAPURL}
}

func (s *slapd) target(vars map[string]string) app.ConnectionTarget { return s.Target(vars) }

func freePort(tb testing.TB) string { return ldaptest.FreePort(tb) }

func testContext(tb testing.TB) context.Context { return ldaptest.Context(tb) }
