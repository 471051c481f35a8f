package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binEnv runs the built binary against one data directory.
type binEnv struct {
	t   *testing.T
	bin string
	dir string
	env []string
}

func buildBinary(t *testing.T) *binEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "compliance")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	return &binEnv{t: t, bin: bin, dir: dir, env: append(os.Environ(),
		"COMPLIANCE_DATA_DIR="+dir,
		"COMPLIANCE_LOG_LEVEL=warn",
		"COMPLIANCE_WEBHOOKS_RETRY_BASE=200ms",
		"COMPLIANCE_WEBHOOKS_RETRY_CAP=1s",
		"COMPLIANCE_WEBHOOKS_TIMEOUT=2s",
		"COMPLIANCE_WEBHOOKS_POLL_INTERVAL=20ms",
	)}
}

// run runs a CLI command and returns stdout; it fails the test on a
// non-zero exit unless allowFail.
func (b *binEnv) run(allowFail bool, args ...string) ([]byte, int) {
	b.t.Helper()
	cmd := exec.Command(b.bin, args...)
	cmd.Env = b.env
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		b.t.Fatal(err)
	}
	if code != 0 && !allowFail {
		b.t.Fatalf("%v: exit %d\n%s", args, code, stderr.String())
	}
	return out.Bytes(), code
}

func (b *binEnv) runJSON(args ...string) map[string]any {
	b.t.Helper()
	out, _ := b.run(false, args...)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		b.t.Fatalf("%v: not one JSON object: %s", args, out)
	}
	return m
}

// serve starts `compliance serve` and waits until it answers.
func (b *binEnv) serve(addr string) *exec.Cmd {
	b.t.Helper()
	cmd := exec.Command(b.bin, "serve", "--addr", addr)
	cmd.Env = b.env
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/v1/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return cmd
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.t.Fatal("serve did not come up")
	return nil
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func apiDo(t *testing.T, method, url, key string, body any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// killReceiver is a webhook endpoint whose behaviour the test switches:
// failing (503), hanging (requests block), or accepting.
type killReceiver struct {
	mu      sync.Mutex
	mode    string
	secret  string
	release chan struct{}
	hanging int
	got     map[string]int // event id -> times received with a valid signature
	bad     int
}

func (k *killReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	k.mu.Lock()
	mode, release := k.mode, k.release
	if mode == "hang" {
		k.hanging++
	}
	k.mu.Unlock()
	switch mode {
	case "fail":
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	case "hang":
		<-release
		return
	}
	m := hmac.New(sha256.New, []byte(k.secret))
	m.Write(body)
	var env struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &env)
	k.mu.Lock()
	if hex.EncodeToString(m.Sum(nil)) == r.Header.Get("X-Service-Signature") && env.ID != "" {
		k.got[env.ID]++
	} else {
		k.bad++
	}
	k.mu.Unlock()
}

func (k *killReceiver) set(mode string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.mode == "hang" && mode != "hang" {
		close(k.release)
	}
	k.mode = mode
}

// TestDeliveryAcrossKill9 proves at-least-once delivery across a kill -9
// of the binary between the commit of events and their delivery: events
// whose deliveries were failing, deliveries in flight at the kill, and
// events committed by the CLI while the server was down all arrive, signed,
// after a restart (in whatever order).
func TestDeliveryAcrossKill9(t *testing.T) {
	t0 := time.Now()
	b := buildBinary(t)
	t.Logf("built in %v", time.Since(t0))
	org := b.runJSON("org", "create", "--name", "Acme", "--json")["id"].(string)
	key := b.runJSON("apikey", "create", "--org", org, "--role", "owner", "--name", "test", "--json")["key"].(string)

	db := openDB(t, b)
	rcv := &killReceiver{mode: "fail", release: make(chan struct{}), got: map[string]int{}}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { rcv.set("ok") }) // release hung handlers before Close waits for them

	addr := freeAddr(t)
	base := "http://" + addr
	proc := b.serve(addr)
	hook := apiDo(t, "POST", base+"/v1/webhooks", key, map[string]any{"url": srv.URL + "/in", "events": []string{"vendor.*", "api_key.*"}})
	rcv.mu.Lock()
	rcv.secret = hook["secret"].(string)
	rcv.mu.Unlock()

	for i := 0; i < 20; i++ {
		apiDo(t, "POST", base+"/v1/vendors", key, map[string]any{"name": fmt.Sprintf("Vendor %d", i)})
	}
	waitFor(t, "failing attempts", func() bool {
		var n int
		_ = db.QueryRow(`SELECT count(*) FROM webhook_delivery_attempts`).Scan(&n)
		return n >= 20
	})
	t.Logf("failing attempts seen at %v", time.Since(t0))
	rcv.set("hang")
	for i := 0; i < 5; i++ {
		apiDo(t, "POST", base+"/v1/vendors", key, map[string]any{"name": fmt.Sprintf("Late vendor %d", i)})
	}
	waitFor(t, "a request in flight", func() bool {
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		return rcv.hanging > 0
	})
	if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = proc.Wait()

	// While the server is down, the CLI commits more events.
	b.runJSON("apikey", "create", "--org", org, "--role", "auditor", "--name", "while down", "--json")
	rcv.set("ok")
	proc = b.serve(addr)
	t.Logf("restarted at %v", time.Since(t0))

	var want []string
	rows, err := db.Query(`SELECT e.id FROM events e JOIN webhooks w ON w.organization_id = e.organization_id
		WHERE w.id = ? AND e.seq > w.start_seq AND (e.type LIKE 'vendor.%' OR e.type LIKE 'api_key.%')`, hook["id"])
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		want = append(want, id)
	}
	rows.Close()
	if len(want) != 26 {
		t.Fatalf("%d events expected to be delivered, want 26", len(want))
	}
	waitFor(t, "every event delivered", func() bool {
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		for _, id := range want {
			if rcv.got[id] == 0 {
				return false
			}
		}
		return true
	})
	t.Logf("all delivered at %v", time.Since(t0))
	rcv.mu.Lock()
	if rcv.bad != 0 || len(rcv.got) != len(want) {
		t.Errorf("%d bad signatures, %d distinct events for %d expected", rcv.bad, len(rcv.got), len(want))
	}
	rcv.mu.Unlock()

	// A clean stop drains and exits 0.
	if err := proc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := proc.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}

	// The CLI's writes were audited, and the chain verifies.
	res := b.runJSON("audit", "verify", "--json")
	if res["ok"] != true || res["checked"].(float64) < 28 {
		t.Fatalf("audit verify: %v", res)
	}
	var cliActs int
	_ = db.QueryRow(`SELECT count(*) FROM audit_log WHERE actor_type = 'system' AND resource_type IN ('organization', 'api_key')`).Scan(&cliActs)
	if cliActs != 3 {
		t.Fatalf("%d CLI writes audited, want 3", cliActs)
	}
	if _, err := db.Exec(`DROP TRIGGER audit_log_no_update`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE audit_log SET actor_id = 'someone-else' WHERE seq = 5`); err != nil {
		t.Fatal(err)
	}
	out, code := b.run(true, "audit", "verify", "--json")
	var broken map[string]any
	if err := json.Unmarshal(out, &broken); err != nil {
		t.Fatalf("audit verify --json printed %s", out)
	}
	fb, _ := broken["firstBroken"].(map[string]any)
	if code == 0 || broken["ok"] != false || fb == nil || fb["seq"] != float64(5) {
		t.Fatalf("tampering not reported: exit %d %s", code, out)
	}
	out, code = b.run(true, "audit", "verify")
	if code == 0 || !bytes.Contains(out, []byte("BROKEN at record seq 5")) {
		t.Fatalf("plain output: exit %d %s", code, out)
	}
}

func openDB(t *testing.T, b *binEnv) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(b.dir, "compliance.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if ok() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
