package ldap

import (
	"errors"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/compliance-appliance/compliance/app"
)

// collect lists every user of the target.
func collect(t *testing.T, p *Provider, target app.ConnectionTarget) []app.DirectoryUser {
	t.Helper()
	var users []app.DirectoryUser
	if err := p.Users(testContext(t), target, func(u app.DirectoryUser) error {
		users = append(users, u)
		return nil
	}); err != nil {
		t.Fatalf("Users: %v", err)
	}
	return users
}

// TestSlapdUsers lists 200 users from a server whose size limit is 50:
// only the paged-results control gets them all; disabled accounts (locked
// by the password policy, or marked by a configured attribute) are
// inactive; attributes map to the register's fields.
func TestSlapdUsers(t *testing.T) {
	t.Parallel()
	s := startSlapd(t, 200, 50)
	p := New(nil)

	// The limit is real: an unpaged search as the sync account stops at 50.
	conn, err := goldap.DialURL(s.ldapURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Bind(syncDN, syncPass); err != nil {
		t.Fatal(err)
	}
	_, err = conn.Search(goldap.NewSearchRequest(peopleDN, goldap.ScopeWholeSubtree, goldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=inetOrgPerson)", []string{"uid"}, nil))
	conn.Close()
	if !goldap.IsErrorWithCode(err, goldap.LDAPResultSizeLimitExceeded) {
		t.Fatalf("an unpaged search should hit the size limit, got %v", err)
	}

	users := collect(t, p, s.target(map[string]string{"pageSize": "40", "disabledAttribute": "employeeType", "disabledValue": "Disabled"}))
	if len(users) != 200 {
		t.Fatalf("%d users, want 200", len(users))
	}
	byLogin := map[string]app.DirectoryUser{}
	inactive := 0
	for _, u := range users {
		byLogin[u.Login] = u
		if !u.Active {
			inactive++
		}
	}
	// Every 10th is locked (20), every 25th marked disabled (8), 4 both.
	if inactive != 24 {
		t.Errorf("%d inactive users, want 24", inactive)
	}
	u7 := byLogin["user00007"]
	if u7.Email != "User00007@Example.test" || u7.Name != "User Number 7" || u7.Department != "Operations" || !u7.Active ||
		u7.Manager != "uid=user00001,"+peopleDN || len(u7.ExternalID) != 36 || u7.TwoFactor != nil {
		t.Errorf("user 7 mapped as %+v", u7)
	}
	if len(u7.Groups) != 1 || u7.Groups[0] != "cn=auditors,ou=groups,"+suffix {
		t.Errorf("user 7 groups %v", u7.Groups)
	}
	if u := byLogin["user00010"]; u.Active {
		t.Error("user 10 (pwdAccountLockedTime) should be inactive")
	}
	if u := byLogin["user00025"]; u.Active {
		t.Error("user 25 (employeeType: disabled) should be inactive")
	}
	if u := byLogin["user00003"]; u.Email != "" || u.Login != "user00003" {
		t.Errorf("user 3 has no mail: %+v", u)
	}

	// The same listing feeds the sync planner.
	planner := app.NewSyncPlanner(nil, app.SyncOptions{MemberLimit: app.Unlimited})
	for _, u := range users {
		planner.Add(u)
	}
	if c := planner.Counts(); c.Found != 200 || c.Created != 175 || c.Skipped != 25 {
		t.Errorf("planned %+v: want 175 created (active with mail), 25 skipped (24 disabled, 1 without mail)", c)
	}
}

// TestSlapdConnect covers the ways a connection is tried: LDAPS with the
// test CA, StartTLS, plain LDAP only when allowed, a wrong password, a
// server whose CA is not trusted, a wrong base DN and an unreachable
// server. Each failure is a TestResult saying why, never a panic.
func TestSlapdConnect(t *testing.T) {
	t.Parallel()
	s := startSlapd(t, 5, 0)
	p := New(nil)
	closed := "ldaps://127.0.0.1:" + freePort(t)
	cases := []struct {
		name    string
		creds   map[string]string
		vars    map[string]string
		success bool
		message string
	}{
		{"ldaps with the CA", nil, nil, true, "Bound and found the base DN"},
		{"starttls", map[string]string{"url": s.ldapURL}, map[string]string{"startTls": "true"}, true, "Bound"},
		{"plain refused", map[string]string{"url": s.ldapURL}, nil, false, "clear text"},
		{"plain allowed", map[string]string{"url": s.ldapURL}, map[string]string{"allowPlaintext": "true"}, true, "Bound"},
		{"wrong password", map[string]string{"bindPassword": "nope"}, nil, false, "invalid credentials"},
		{"untrusted CA", map[string]string{"caCertificate": ""}, nil, false, "TLS with the directory failed"},
		{"missing base", nil, map[string]string{"baseDn": "ou=nowhere," + suffix}, false, "does not exist"},
		{"unreachable", map[string]string{"url": closed}, nil, false, "cannot reach the directory"},
		{"bad url", map[string]string{"url": "http://dc1"}, nil, false, "url: must be"},
		{"bad filter", nil, map[string]string{"userFilter": "(uid=*"}, false, "userFilter: is not a valid LDAP filter"},
		{"bad ca", map[string]string{"caCertificate": "not pem"}, nil, false, "caCertificate"},
		{"starttls on ldaps", nil, map[string]string{"startTls": "true"}, false, "startTls"},
		{"page size", nil, map[string]string{"pageSize": "5000"}, false, "pageSize"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := s.target(tc.vars)
			for k, v := range tc.creds {
				target.Credentials[k] = v
			}
			r := p.Test(testContext(t), target)
			if r.Success != tc.success || !strings.Contains(r.Message, tc.message) {
				t.Fatalf("Test = %+v, want success %v and a message containing %q", r, tc.success, tc.message)
			}
			if strings.Contains(r.Message, target.Credentials["bindPassword"]) {
				t.Fatalf("the message shows the password: %q", r.Message)
			}
		})
	}
}

// A listing stops when the caller stops it or the context ends, and the
// network policy's dialer decides which addresses may be reached.
func TestSlapdStopsAndPolicy(t *testing.T) {
	t.Parallel()
	s := startSlapd(t, 120, 0)
	stop := errors.New("enough")
	n := 0
	err := New(nil).Users(testContext(t), s.target(map[string]string{"pageSize": "10"}), func(app.DirectoryUser) error {
		if n++; n == 15 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 15 {
		t.Fatalf("err %v after %d users", err, n)
	}

	policy, err := app.NewNetworkPolicy(nil, []string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	denied := New(&net.Dialer{Timeout: time.Second, Control: policy.DialControl("")})
	if r := denied.Test(testContext(t), s.target(nil)); r.Success || !strings.Contains(r.Message, "refused") {
		t.Fatalf("a denied address should be refused: %+v", r)
	}
}

// BenchmarkSlapdUsers10000 lists 10,000 users page by page and reports the
// peak heap in use while listing (memory stays bounded by the page).
func BenchmarkSlapdUsers10000(b *testing.B) {
	s := startSlapd(b, 10000, 500)
	p := New(nil)
	target := s.target(map[string]string{"pageSize": "500"})
	b.ResetTimer()
	var peak uint64
	for i := 0; i < b.N; i++ {
		n := 0
		var ms runtime.MemStats
		var mu sync.Mutex
		if err := p.Users(testContext(b), target, func(app.DirectoryUser) error {
			if n++; n%500 == 0 {
				runtime.ReadMemStats(&ms)
				mu.Lock()
				peak = max(peak, ms.HeapInuse)
				mu.Unlock()
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if n != 10000 {
			b.Fatalf("%d users", n)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
