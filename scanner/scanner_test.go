package scanner

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// loopbackGuard allows loopback only, as an allowlist of 127.0.0.1 would.
func loopbackGuard(host string, ip netip.Addr) error {
	if ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s is not listed", ip)
}

func checkIDs(res *app.ScanResult) map[string][]string {
	out := map[string][]string{}
	for _, is := range res.Issues {
		out[is.CheckID] = append(out[is.CheckID], is.Location)
	}
	return out
}

func run(t *testing.T, s *Scanner, target, depth string, checks ...string) (*app.ScanResult, []string) {
	t.Helper()
	var mu sync.Mutex
	var events []string
	res, err := s.Scan(context.Background(), app.ScanRequest{TargetURL: target, Depth: depth, Checks: checks, Guard: loopbackGuard, RatePerSecond: 1000,
		Event: func(kind, msg string) { mu.Lock(); events = append(events, kind+": "+msg); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	return res, events
}

func TestPentestScannerFindsPlantedWebIssues(t *testing.T) {
	f := newFixture(t)
	res, _ := run(t, f.scanner(f.weakHTTP), hostURL(f.weakHTTP, "weak.test"), "quick")
	got := checkIDs(res)
	for _, want := range []string{"http.cleartext", "http.csp.missing", "http.frame_options.missing", "http.content_type_options.missing",
		"http.referrer_policy.missing", "cookie.httponly.missing", "cookie.samesite.missing", "cors.reflect_credentials", "http.trace.enabled",
		"exposed.git", "exposed.env", "http.directory_listing", "http.open_redirect", "http.verbose_errors", "http.version_disclosure",
		"http.default_page"} {
		if len(got[want]) == 0 {
			t.Errorf("planted issue %s not found; got %v", want, got)
		}
	}
	// HTTP only: no HSTS or Secure-cookie complaint on a cleartext site.
	for _, not := range []string{"http.hsts.missing", "cookie.secure.missing", "exposed.backup", "exposed.phpinfo", "exposed.server_status"} {
		if len(got[not]) > 0 {
			t.Errorf("%s reported on a target without it: %v", not, got[not])
		}
	}
	if loc := got["http.open_redirect"]; len(loc) != 1 || !strings.Contains(loc[0], "/login?next=") {
		t.Errorf("open redirect location = %v", loc)
	}
	if res.RequestsSent == 0 {
		t.Error("no requests counted")
	}
	for _, is := range res.Issues {
		if is.Vector == "" || is.Remediation == "" || len(is.References) == 0 || is.Title == "" {
			t.Errorf("issue %s lacks vector, remediation, references or title", is.CheckID)
		}
	}
	var kv app.ScanCheckStatus
	for _, c := range res.Checks {
		if c.Check == app.CheckKnownVulns {
			kv = c
		}
	}
	if kv.Status != "did_not_run" {
		t.Errorf("known vulnerabilities check status = %+v, want did_not_run", kv)
	}
}

func TestPentestScannerFindsPlantedTLSIssues(t *testing.T) {
	f := newFixture(t)
	res, _ := run(t, f.scanner(f.selfTLS), hostURL(f.selfTLS, "weak.test"), "quick", app.CheckPorts, app.CheckTLS)
	got := checkIDs(res)
	for _, want := range []string{"tls.protocol.tls10", "tls.protocol.tls11", "tls.cipher.weak", "tls.cert.self_signed"} {
		if len(got[want]) == 0 {
			t.Errorf("planted issue %s not found on the self-signed TLS 1.0 server; got %v", want, got)
		}
	}
	res, _ = run(t, f.scanner(f.oldTLS), hostURL(f.oldTLS, "old.test"), "quick", app.CheckPorts, app.CheckTLS)
	got = checkIDs(res)
	if len(got["tls.cert.expired"]) == 0 {
		t.Errorf("expired certificate not found; got %v", got)
	}
	for _, not := range []string{"tls.cert.untrusted", "tls.cert.self_signed", "tls.protocol.tls10", "tls.cert.hostname"} {
		if len(got[not]) > 0 {
			t.Errorf("%s reported on the expired CA-signed TLS 1.2 server: %v", not, got[not])
		}
	}
	// The same server under a name its certificate does not carry.
	res, _ = run(t, f.scanner(f.oldTLS), hostURL(f.oldTLS, "weak.test"), "quick", app.CheckTLS)
	if len(checkIDs(res)["tls.cert.hostname"]) == 0 {
		t.Errorf("host name mismatch not found; got %v", checkIDs(res))
	}
}

// TestPentestScannerPortScanFindsTLSOnOtherPorts: a TLS port found by the
// port scan is inspected although the target URL names another port.
func TestPentestScannerPortScanFindsTLSOnOtherPorts(t *testing.T) {
	f := newFixture(t)
	res, _ := run(t, f.scanner(f.weakHTTP, f.selfTLS), hostURL(f.weakHTTP, "weak.test"), "quick", app.CheckPorts, app.CheckTLS)
	if len(res.OpenPorts) != 2 {
		t.Fatalf("open ports = %+v, want the two fixture ports", res.OpenPorts)
	}
	if len(checkIDs(res)["tls.protocol.tls10"]) == 0 {
		t.Errorf("TLS 1.0 on the second port not found: %v", checkIDs(res))
	}
}

func TestPentestScannerHardenedTargetNoFalsePositives(t *testing.T) {
	f := newFixture(t)
	res, _ := run(t, f.scanner(f.hardened), hostURL(f.hardened, "hardened.test"), "standard")
	if len(res.Issues) != 0 {
		for _, is := range res.Issues {
			t.Errorf("false positive on the hardened target: %s at %s: %s", is.CheckID, is.Location, is.Evidence)
		}
	}
	t.Logf("false positives on the hardened target: %d", len(res.Issues))
}

func TestPentestScannerAllowlist(t *testing.T) {
	f := newFixture(t)
	s := f.scanner(f.weakHTTP)
	// A name that resolves to an address the guard refuses is not connected.
	_, err := s.Scan(context.Background(), app.ScanRequest{TargetURL: "http://rebind.test/", Guard: loopbackGuard})
	if !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("scan of a name resolving to a metadata address: err = %v, want ErrNotAllowed", err)
	}
	// A redirect to a host outside the allowlist is not followed.
	var events []string
	sc := &scan{sc: s, req: app.ScanRequest{Guard: loopbackGuard, Event: func(k, m string) { events = append(events, k+": "+m) }},
		limiter: nil, seen: map[string]bool{}}
	sc.limiter = newLimiter(100)
	sc.client = sc.newClient()
	p, err := sc.fetch(context.Background(), "GET", f.weakHTTP.URL+"/login?next=http://elsewhere.test/x", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if p.status != 302 || p.url.Hostname() != "127.0.0.1" {
		t.Errorf("redirect followed: status %d at %s", p.status, p.url)
	}
	if len(events) != 1 || !strings.Contains(events[0], "redirect.refused") || !strings.Contains(events[0], "elsewhere.test") {
		t.Errorf("events = %v, want one refused redirect", events)
	}
}

func TestPentestScannerCancel(t *testing.T) {
	f := newFixture(t)
	s := New(Options{LookupIP: lookup, Ports: func(string) []int { return PortsFor("deep") }})
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := s.Scan(ctx, app.ScanRequest{TargetURL: f.weakHTTP.URL, Guard: loopbackGuard, RatePerSecond: 200,
		Progress: func(p app.ScanProgress) {
			if n++; n == 3 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestPentestPortsFor(t *testing.T) {
	if n := len(PortsFor("quick")); n != 100 {
		t.Errorf("quick = %d ports, want 100", n)
	}
	seen := map[int]bool{}
	for _, p := range top100 {
		if seen[p] {
			t.Errorf("port %d twice in top100", p)
		}
		seen[p] = true
	}
	std := PortsFor("standard")
	if !sort.IntsAreSorted(std) || len(std) < 1000 {
		t.Errorf("standard = %d ports", len(std))
	}
	if n := len(PortsFor("deep")); n != 65535 {
		t.Errorf("deep = %d ports", n)
	}
}

func TestPentestCVSSBaseScore(t *testing.T) {
	for v, want := range map[string]float64{
		"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H": 9.8,
		"CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N": 6.1,
		"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N": 7.5,
		"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N": 5.3,
		"CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:N/A:N": 5.9,
		"CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:N/I:L/A:N": 4.3,
		"CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:N/A:N": 0,
		"CVSS:3.1/AV:L/AC:L/PR:H/UI:N/S:C/C:H/I:H/A:H": 8.2,
	} {
		got, err := BaseScore(v)
		if err != nil || got != want {
			t.Errorf("BaseScore(%s) = %v, %v; want %v", v, got, err, want)
		}
	}
	if _, err := BaseScore("CVSS:3.0/AV:N"); err == nil {
		t.Error("bad vector accepted")
	}
}
