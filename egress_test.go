//go:build linux

// The zero-egress test runs the appliance in a Linux network namespace
// under strace; it exists only on Linux.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The zero-egress proof: `serve` runs in a network namespace of its own
// with nothing but a loopback interface, under strace recording every
// connect, sendto and sendmsg. The API, the web pages, the OAuth and MCP
// documents and every scheduled job are exercised; afterwards every
// address the process tried to reach must be loopback (or a local socket).
// The driver runs inside the same namespace: the test binary re-executes
// itself as TestZeroEgressInside under `unshare -rn`.

const egressEnv = "COMPLIANCE_EGRESS_TEST"

// egressMissing fails in CI, where .ci/run installs strace and iproute2,
// and skips loudly elsewhere.
func egressMissing(t *testing.T, what string) {
	t.Helper()
	msg := "zero-egress test did NOT run: " + what
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip("SKIPPED: " + msg)
}

func TestZeroEgress(t *testing.T) {
	bin := binary(t)
	for _, tool := range []string{"unshare", "strace", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			egressMissing(t, tool+" is not installed")
		}
	}
	if out, err := exec.Command("unshare", "-rn", "true").CombinedOutput(); err != nil {
		// Only here may the test skip in CI too: the kernel or container
		// forbids unprivileged network namespaces.
		t.Skipf("SKIPPED: zero-egress test did NOT run: network namespaces are not permitted here: %v %s", err, out)
	}
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	org := strings.TrimSpace(cli(t, data, "org", "create", "--name", "Egress GmbH", "--plan", "enterprise"))
	key := strings.TrimSpace(cli(t, data, "apikey", "create", "--org", org, "--role", "owner", "--name", "egress"))
	cmd := exec.Command(bin, "--data-dir", data, "user", "create", "--org", org, "--email", "owner@egress.test",
		"--name", "Owner", "--role", "owner", "--password-stdin")
	cmd.Env = cleanEnv()
	cmd.Stdin = strings.NewReader("egress-password-42\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("user create: %v %s", err, out)
	}
	trace := filepath.Join(dir, "connect.trace")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	inner := exec.CommandContext(ctx, "unshare", "-rn", "sh", "-c",
		`ip link set lo up && exec "$0" -test.run '^TestZeroEgressInside$' -test.v -test.count=1`, self)
	inner.Env = append(cleanEnv(), egressEnv+"=1", "EGRESS_BIN="+bin, "EGRESS_DATA="+data, "EGRESS_KEY="+key,
		"EGRESS_TRACE="+trace, "EGRESS_EMAIL=owner@egress.test", "EGRESS_PASSWORD=egress-password-42")
	out, err := inner.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestZeroEgressInside") {
		t.Fatalf("the driver inside the namespace failed: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	bound, local, remote := classifyTrace(string(raw))
	if len(remote) > 0 {
		t.Fatalf("the appliance tried to reach %d non-loopback address(es):\n%s", len(remote), strings.Join(remote, "\n"))
	}
	if bound == 0 {
		t.Fatalf("the trace shows no bind of the listener; was it recorded?\n%s", raw)
	}
	t.Logf("zero egress: %d listener bind(s), %d outgoing socket calls, all to loopback or local sockets", bound, local)
}

// sockaddrRe finds the address argument strace prints for connect, sendto
// and sendmsg; inetRe the IP address inside it.
var (
	sockaddrRe = regexp.MustCompile(`\{sa_family=(AF_[A-Z0-9]+)([^}]*)\}`)
	inetRe     = regexp.MustCompile(`inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"`)
)

// classifyTrace counts the binds (the listener: proof the trace saw the
// process's sockets) and the outgoing socket calls to loopback or local
// addresses, and lists every other outgoing one.
func classifyTrace(trace string) (bound, local int, remote []string) {
	for _, line := range strings.Split(trace, "\n") {
		if strings.Contains(line, " bind(") && strings.Contains(line, "sa_family=AF_INET") {
			bound++
			continue
		}
		if !strings.Contains(line, "connect(") && !strings.Contains(line, "sendto(") && !strings.Contains(line, "sendmsg(") {
			continue
		}
		for _, m := range sockaddrRe.FindAllStringSubmatch(line, -1) {
			fam, addr := m[1], ""
			if a := inetRe.FindStringSubmatch(m[2]); a != nil {
				addr = a[1] + a[2]
			}
			switch {
			case fam == "AF_UNIX" || fam == "AF_NETLINK":
				local++
			case fam == "AF_UNSPEC":
				local++ // disconnecting a datagram socket
			case (fam == "AF_INET" && strings.HasPrefix(addr, "127.")) || (fam == "AF_INET6" && (addr == "::1" || strings.HasPrefix(addr, "::ffff:127."))):
				local++
			default:
				remote = append(remote, strings.TrimSpace(line))
			}
		}
	}
	return bound, local, remote
}

func TestClassifyTrace(t *testing.T) {
	t.Parallel()
	trace := `101 connect(7, {sa_family=AF_INET, sin_port=htons(3333), sin_addr=inet_addr("127.0.0.1")}, 16) = 0
101 connect(8, {sa_family=AF_INET6, sin6_port=htons(3333), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0
102 connect(9, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT
103 connect(10, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.0.0.2")}, 16) = -1 ENETUNREACH
104 sendto(11, "x", 1, 0, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2606:4700::1111", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH
105 write(3, "connect(", 8) = 8
106 bind(3, {sa_family=AF_INET, sin_port=htons(0), sin_addr=inet_addr("127.0.0.1")}, 16) = 0`
	bound, local, remote := classifyTrace(trace)
	if bound != 1 || local != 3 || len(remote) != 2 || !strings.Contains(remote[0], "10.0.0.2") || !strings.Contains(remote[1], "2606:4700::1111") {
		t.Fatalf("bound %d, local %d, remote %q", bound, local, remote)
	}
}

// TestZeroEgressInside is the driver TestZeroEgress runs inside the
// namespace; on its own it does nothing.
func TestZeroEgressInside(t *testing.T) {
	if os.Getenv(egressEnv) == "" {
		t.Skip("runs only inside TestZeroEgress's network namespace")
	}
	bin, data, key := os.Getenv("EGRESS_BIN"), os.Getenv("EGRESS_DATA"), os.Getenv("EGRESS_KEY")
	cmd := exec.Command("strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmsg,bind", "-o", os.Getenv("EGRESS_TRACE"),
		bin, "--data-dir", data, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = cleanEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start under strace")
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, body string, hdr ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	api := []string{"X-API-Key", key, "Content-Type", "application/json"}
	want := func(status int, method, path, body string, hdr ...string) string {
		t.Helper()
		code, b := do(method, path, body, hdr...)
		if code != status {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, code, status, b)
		}
		return b
	}
	want(200, "GET", "/v1/health", "")
	want(200, "GET", "/v1/openapi.json", "")
	want(201, "POST", "/v1/vendors", `{"name":"Cloudy","website":"https://cloudy.example"}`, api...)
	want(200, "GET", "/v1/vendors", "", api...)
	want(200, "GET", "/v1/frameworks", "", api...)
	want(201, "POST", "/v1/findings", `{"title":"Backups untested","severity":"high","type":"soc2"}`, api...)
	want(200, "GET", "/.well-known/oauth-authorization-server", "")
	want(200, "GET", "/.well-known/mcp.json", "")
	want(200, "POST", "/v1/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, append(api, "Accept", "application/json, text/event-stream")...)
	// The web application: sign in with a session and open pages.
	want(200, "POST", "/v1/auth/login", `{"email":"`+os.Getenv("EGRESS_EMAIL")+`","password":"`+os.Getenv("EGRESS_PASSWORD")+`"}`,
		"Content-Type", "application/json")
	for _, p := range []string{"/", "/vendors", "/controls", "/frameworks", "/findings", "/risks", "/policies", "/settings"} {
		want(200, "GET", p, "")
	}
	// Every scheduled job runs once at start (its current slot is due);
	// the run log says when each has run.
	deadline := time.Now().Add(90 * time.Second)
	for {
		code, b := do("GET", "/v1/scheduler/jobs", "", api...)
		if code != 200 {
			t.Fatalf("scheduler jobs: %d %s", code, b)
		}
		var l struct {
			Data []struct {
				Name     string          `json:"name"`
				Interval int64           `json:"intervalSeconds"`
				LastRun  json.RawMessage `json:"lastRun"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(b), &l); err != nil {
			t.Fatal(err)
		}
		var pending []string
		for _, j := range l.Data {
			// Housekeeping every few seconds keeps no run record.
			if j.Interval > 60 && (len(j.LastRun) == 0 || string(j.LastRun) == "null") {
				pending = append(pending, j.Name)
			}
		}
		if len(l.Data) > 0 && len(pending) == 0 {
			t.Logf("%d scheduled jobs ran", len(l.Data))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs that did not run: %v (%d jobs)", pending, len(l.Data))
		}
		time.Sleep(500 * time.Millisecond)
	}
	// SIGTERM to serve itself (strace's child), so it drains as in
	// production and strace ends with it.
	kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
	if err != nil || len(strings.Fields(string(kids))) == 0 {
		t.Fatalf("serve's pid under strace: %v %q", err, kids)
	}
	pid, err := strconv.Atoi(strings.Fields(string(kids))[0])
	if err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}
