package automation

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/outbound"
)

// testClient is the outbound client trusting the test server's CA.
func testClient(t testing.TB, srv *httptest.Server) *http.Client {
	t.Helper()
	o := outbound.Options{MaxRetries: 0}
	if srv != nil && srv.TLS != nil {
		pool := x509.NewCertPool()
		pool.AddCert(srv.Certificate())
		o.TLSConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	c, err := outbound.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func runScript(t testing.TB, r *Runner, script string, hosts []string, lim app.ScriptLimits) app.ScriptOutcome {
	t.Helper()
	return r.Run(context.Background(), app.ScriptJob{Script: script, Hosts: hosts, Limits: lim})
}

func TestSandboxResultAndBuiltins(t *testing.T) {
	r := New(nil)
	out := runScript(t, r, `
log("hello", 1)
d = json.decode('{"a": [1, 2]}')
result({"sum": d["a"][0] + d["a"][1], "now": len(time.now()) > 0, "enc": json.encode({"x": True})})
evidence("note", "text of the evidence")
`, nil, app.ScriptLimits{})
	if out.StopReason != "" {
		t.Fatalf("stopped: %s %s", out.StopReason, out.Error)
	}
	if out.Result["sum"] != float64(3) || out.Result["now"] != true || out.Result["enc"] != `{"x":true}` {
		t.Fatalf("result = %v", out.Result)
	}
	if len(out.Logs) != 1 || out.Logs[0].Message != "hello 1" {
		t.Fatalf("logs = %+v", out.Logs)
	}
	if len(out.Evidence) != 1 || out.Evidence[0].Name != "note" {
		t.Fatalf("evidence = %+v", out.Evidence)
	}
}

func TestSandboxStopsInfiniteLoopBySteps(t *testing.T) {
	out := runScript(t, New(nil), "while True:\n    pass\n", nil, app.ScriptLimits{MaxSteps: 100_000, Timeout: time.Minute})
	if out.StopReason != StopSteps || !strings.Contains(out.Error, "100000 execution steps") {
		t.Fatalf("stop = %q %q", out.StopReason, out.Error)
	}
}

func TestSandboxStopsInfiniteLoopByTime(t *testing.T) {
	out := runScript(t, New(nil), "while True:\n    pass\n", nil, app.ScriptLimits{MaxSteps: 1 << 62, Timeout: 100 * time.Millisecond})
	if out.StopReason != StopTimeout || !strings.Contains(out.Error, "did not finish within 100ms") {
		t.Fatalf("stop = %q %q", out.StopReason, out.Error)
	}
}

func TestSandboxStopsAllocationBomb(t *testing.T) {
	// Doubling a list reaches gigabytes in a few dozen steps: the step
	// budget cannot stop it, the memory watchdog must.
	out := runScript(t, New(nil), "l = [0]\nfor i in range(40):\n    l = l + l\n", nil,
		app.ScriptLimits{MaxSteps: 1 << 62, Timeout: time.Minute, MaxMemory: 32 << 20})
	if out.StopReason != StopMemory || !strings.Contains(out.Error, "more than 32 MiB") {
		t.Fatalf("stop = %q %q", out.StopReason, out.Error)
	}
}

func TestSandboxStopsStringBomb(t *testing.T) {
	out := runScript(t, New(nil), "s = 'x'\nfor i in range(40):\n    s = s + s\n", nil,
		app.ScriptLimits{MaxSteps: 1 << 62, Timeout: time.Minute, MaxMemory: 32 << 20})
	if out.StopReason != StopMemory {
		t.Fatalf("stop = %q %q", out.StopReason, out.Error)
	}
}

func TestSandboxRefusesUndeclaredHost(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	out := runScript(t, New(testClient(t, srv)), fmt.Sprintf("http.get(%q)\n", srv.URL), []string{"example.com"}, app.ScriptLimits{})
	if out.StopReason != StopHost || !strings.Contains(out.Error, `host "127.0.0.1" is not among the hosts`) {
		t.Fatalf("stop = %q %q", out.StopReason, out.Error)
	}
	if hits != 0 {
		t.Fatal("the undeclared host was contacted")
	}
}

func TestSandboxRefusesRedirectToUndeclaredHost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:1/x", http.StatusFound)
	}))
	defer srv.Close()
	out := runScript(t, New(testClient(t, srv)), fmt.Sprintf("http.get(%q)\n", srv.URL), []string{"127.0.0.1"}, app.ScriptLimits{})
	if out.StopReason != StopHost || !strings.Contains(out.Error, `"localhost"`) {
		t.Fatalf("stop = %q %q", out.StopReason, out.Error)
	}
}

func TestSandboxNetworkPolicyRefusesMetadata(t *testing.T) {
	for _, target := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/"} {
		host := strings.Trim(strings.SplitN(strings.TrimPrefix(target, "http://"), "/", 2)[0], "[]")
		out := runScript(t, New(testClient(t, nil)), fmt.Sprintf("http.get(%q)\n", target), []string{host}, app.ScriptLimits{})
		if out.StopReason != StopHost || !strings.Contains(out.Error, "network outbound connections may not reach") {
			t.Fatalf("%s: stop = %q %q", target, out.StopReason, out.Error)
		}
	}
	out := runScript(t, New(testClient(t, nil)), `tls.inspect("169.254.169.254:443")`, []string{"169.254.169.254"}, app.ScriptLimits{})
	if out.StopReason != StopHost {
		t.Fatalf("tls: stop = %q %q", out.StopReason, out.Error)
	}
}

func TestSandboxCapsBuiltinBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("a", 600<<10)))
	}))
	defer srv.Close()
	script := fmt.Sprintf("for i in range(10):\n    http.get(%q)\n", srv.URL)
	out := runScript(t, New(testClient(t, srv)), script, []string{"127.0.0.1"}, app.ScriptLimits{MaxBuiltinBytes: 2 << 20})
	if out.StopReason != StopOutput || !strings.Contains(out.Error, "more than 2 MiB") {
		t.Fatalf("stop = %q %q", out.StopReason, out.Error)
	}
	out = runScript(t, New(testClient(t, srv)), fmt.Sprintf("http.get(%q)\n", srv.URL), []string{"127.0.0.1"}, app.ScriptLimits{MaxHTTPBody: 1000})
	if out.StopReason != StopError || !strings.Contains(out.Error, "over the 1000 bytes") {
		t.Fatalf("stop = %q %q", out.StopReason, out.Error)
	}
}

func TestSandboxNoFilesystemOrProcess(t *testing.T) {
	for _, script := range []string{`load("os", "open")`, `open("/etc/passwd")`, `exec("ls")`} {
		out := runScript(t, New(nil), script, nil, app.ScriptLimits{})
		if out.StopReason != StopError {
			t.Fatalf("%s ran: %+v", script, out)
		}
	}
}

func TestSandboxCheckReportsLine(t *testing.T) {
	r := New(nil)
	err := r.Check("x = 1\ny = (\n")
	var se *app.ScriptError
	if !errors.As(err, &se) || se.Line < 2 {
		t.Fatalf("err = %v", err)
	}
	err = r.Check("x = 1\nundefined_name()\n")
	if !errors.As(err, &se) || se.Line != 2 || !strings.Contains(se.Message, "undefined") {
		t.Fatalf("err = %#v", err)
	}
	if err := r.Check("result({'a': 1})\n"); err != nil {
		t.Fatal(err)
	}
}

func TestCriteria(t *testing.T) {
	r := New(nil)
	res := map[string]any{"tls": 1.3, "ok": true, "items": []any{"a", "b"}, "name": "x", "n": float64(3)}
	cases := []struct {
		expr    string
		pass    bool
		wantErr string
	}{
		{`result["tls"] >= 1.2`, true, ""},
		{`result["tls"] >= 1.4`, false, ""},
		{`result["ok"]`, true, ""},
		{`result["ok"] and len(result["items"]) == 2`, true, ""},
		{`"a" in result["items"]`, true, ""},
		{`result["name"] == "y"`, false, ""},
		{`result["n"] > 2 and result["n"] < 4`, true, ""},
		{`result.get("missing", 0) == 0`, true, ""},
		{`result["missing"]`, false, "key"},
		{`result["name"]`, false, "not True or False"},
		{`1 +`, false, "got end of file"},
	}
	for _, c := range cases {
		pass, reason, err := r.Evaluate(c.expr, res)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err = %v, want %q", c.expr, err, c.wantErr)
			}
			continue
		}
		if err != nil || pass != c.pass || !strings.Contains(reason, c.expr) {
			t.Errorf("%s: pass=%v reason=%q err=%v", c.expr, pass, reason, err)
		}
	}
	if err := r.CheckCriteria(`result[`); err == nil {
		t.Error("a broken expression passed the check")
	}
}
