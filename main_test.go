package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"debug/elf"
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
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/storage"
)

// These tests run the real binary, built once with CGO_ENABLED=0 as
// `make build` does. They are skipped under -short.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "compliance-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "compliance")
		// Static, as `make build` does. Without -trimpath the compile is
		// shared with `make lint` (go vet with CGO_ENABLED=0) in the cache.
		cmd := exec.Command("go", "build", "-ldflags", "-X main.version=e2e-test", "-o", binPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// cli runs a command against a data dir and returns stdout; it fails the
// test on a non-zero exit.
func cli(t *testing.T, dataDir string, args ...string) string {
	t.Helper()
	out, errOut, err := cliResult(t, dataDir, args...)
	if err != nil {
		t.Fatalf("compliance %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func cliResult(t *testing.T, dataDir string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"--data-dir", dataDir}, args...)...)
	cmd.Env = envFor(dataDir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// cleanEnv drops COMPLIANCE_* variables of the calling shell.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COMPLIANCE_") {
			env = append(env, kv)
		}
	}
	return env
}

func jsonObject(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout is not one JSON object: %q", s)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("stdout holds more than one JSON object: %q", s)
	}
	return m
}

// server is a running `compliance serve`.
type server struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	done   chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

var listeningRe = regexp.MustCompile(`msg=listening addr=(\S+)`)

func serve(t *testing.T, dataDir string, extra ...string) *server {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"--data-dir", dataDir, "serve", "--addr", "127.0.0.1:0"}, extra...)...)
	cmd.Env = envFor(dataDir)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait(); pw.Close() }()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(s.stderr, line)
			if m := listeningRe.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case a := <-addr:
		s.url = "http://" + a
	case err := <-s.done:
		t.Fatalf("serve exited early: %v\n%s", err, s.stderr.String())
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("serve did not start:\n%s", s.stderr.String())
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

func (s *server) request(t *testing.T, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// setup creates an organization and an owner key with the CLI.
func setup(t *testing.T, dataDir, plan string) (orgID, keyID, key string) {
	t.Helper()
	org := jsonObject(t, cli(t, dataDir, "org", "create", "--name", "Acme", "--plan", plan, "--json"))
	orgID = org["id"].(string)
	k := jsonObject(t, cli(t, dataDir, "apikey", "create", "--org", orgID, "--role", "owner", "--name", "e2e", "--json"))
	return orgID, k["id"].(string), k["key"].(string)
}

func TestBinaryIsStatic(t *testing.T) {
	t.Parallel()
	f, err := elf.Open(binary(t))
	if err != nil {
		t.Skipf("not an ELF platform: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary must be statically linked (CGO_ENABLED=0): it names a dynamic loader")
		}
	}
}

func TestCLIContract(t *testing.T) {
	t.Parallel()
	cliContract(t, testDataDir(t))
}

// cliContract runs the administration commands against a data dir (on
// SQLite, or on PostgreSQL when the dir has a database_url: postgresDir).
func cliContract(t *testing.T, dir string) {

	if got := strings.TrimSpace(cli(t, dir, "version")); got != "e2e-test" {
		t.Fatalf("version prints the version: %q", got)
	}
	if v := jsonObject(t, cli(t, dir, "version", "--json")); v["version"] != "e2e-test" {
		t.Fatalf("version --json: %v", v)
	}
	m := jsonObject(t, cli(t, dir, "migrate", "--json"))
	if m["schemaVersion"] == nil || m["schemaVersion"] != m["latest"] {
		t.Fatalf("migrate --json: %v", m)
	}

	// org create: the id alone, or {id, name, plan}; default plan professional.
	plainID := strings.TrimSpace(cli(t, dir, "org", "create", "--name", "Plain"))
	if !regexp.MustCompile(`^org_[0-9A-Z]{26}$`).MatchString(plainID) {
		t.Fatalf("org create prints the id alone: %q", plainID)
	}
	org := jsonObject(t, cli(t, dir, "org", "create", "--name", "Acme", "--json"))
	if org["name"] != "Acme" || org["plan"] != "professional" || !strings.HasPrefix(org["id"].(string), "org_") {
		t.Fatalf("org create --json: %v", org)
	}
	orgID := org["id"].(string)
	if o := jsonObject(t, cli(t, dir, "org", "create", "--name", "Free", "--plan", "free", "--json")); o["plan"] != "free" {
		t.Fatalf("--plan: %v", o)
	}
	if _, _, err := cliResult(t, dir, "org", "create", "--name", "X", "--plan", "gold"); err == nil {
		t.Fatal("an unknown plan fails")
	}

	// user create: the person id, or {id}; --password-stdin reads one line.
	cmd := exec.Command(binary(t), "--data-dir", dir, "user", "create", "--org", orgID, "--email", "ann@example.com",
		"--name", "Ann", "--role", "admin", "--password-stdin", "--json")
	cmd.Env = envFor(dir)
	cmd.Stdin = strings.NewReader("a long enough password\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("user create: %v", err)
	}
	user := jsonObject(t, string(out))
	if len(user) != 1 || !strings.HasPrefix(user["id"].(string), "usr_") {
		t.Fatalf("user create --json: %v", user)
	}
	if id := strings.TrimSpace(cli(t, dir, "user", "create", "--org", orgID, "--email", "bob@example.com", "--name", "Bob", "--role", "employee")); !strings.HasPrefix(id, "usr_") {
		t.Fatalf("user create prints the id: %q", id)
	}
	if _, _, err := cliResult(t, dir, "user", "create", "--org", "org_nope", "--email", "c@example.com", "--name", "C", "--role", "admin"); err == nil {
		t.Fatal("an unknown organization fails")
	}

	// apikey create: the plaintext key alone, or {id, key, role, expiresAt}.
	plainKey := strings.TrimSpace(cli(t, dir, "apikey", "create", "--org", orgID, "--role", "admin", "--name", "plain"))
	if !strings.HasPrefix(plainKey, "cmp_") || strings.ContainsAny(plainKey, " \t\n") {
		t.Fatalf("apikey create prints the key alone: %q", plainKey)
	}
	k := jsonObject(t, cli(t, dir, "apikey", "create", "--org", orgID, "--role", "auditor", "--name", "ci", "--expires-in", "720h", "--json"))
	if len(k) != 4 || k["role"] != "auditor" || !strings.HasPrefix(k["key"].(string), "cmp_") || k["expiresAt"] == nil {
		t.Fatalf("apikey create --json: %v", k)
	}
	if k2 := jsonObject(t, cli(t, dir, "apikey", "create", "--org", orgID, "--role", "auditor", "--name", "ci", "--json")); k2["expiresAt"] != nil {
		t.Fatalf("no --expires-in: no expiry: %v", k2)
	}
	list := jsonObject(t, cli(t, dir, "apikey", "list", "--org", orgID, "--json"))
	if keys := list["data"].([]any); len(keys) != 3 || strings.Contains(fmt.Sprint(keys), "cmp_") && strings.Contains(fmt.Sprint(keys), k["key"].(string)) {
		t.Fatalf("apikey list --json lists keys without plaintext: %v", list)
	}
	if !strings.Contains(cli(t, dir, "apikey", "list", "--org", orgID), k["id"].(string)) {
		t.Fatal("apikey list shows ids")
	}
	if r := jsonObject(t, cli(t, dir, "apikey", "revoke", k["id"].(string), "--json")); r["id"] != k["id"] || r["revoked"] != true {
		t.Fatalf("apikey revoke --json: %v", r)
	}
	if _, _, err := cliResult(t, dir, "apikey", "revoke", "key_nope"); err == nil {
		t.Fatal("revoking an unknown key fails")
	}

	if _, ok := postgresDirs.Load(dir); ok {
		// backup is about the SQLite file: PostgreSQL's tools instead.
		if _, stderr, err := cliResult(t, dir, "backup", "--to", filepath.Join(t.TempDir(), "b.db")); err == nil || !strings.Contains(stderr, "pg_dump") {
			t.Fatalf("backup on PostgreSQL names pg_dump: %v %q", err, stderr)
		}
		return
	}
	// backup: refuses to overwrite.
	to := filepath.Join(t.TempDir(), "b.db")
	if b := jsonObject(t, cli(t, dir, "backup", "--to", to, "--json")); b["path"] != to {
		t.Fatalf("backup --json: %v", b)
	}
	if _, _, err := cliResult(t, dir, "backup", "--to", to); err == nil {
		t.Fatal("backup must not overwrite")
	}
	// Errors go to stderr; stdout stays empty.
	stdout, stderr, err := cliResult(t, dir, "org", "create", "--json")
	if err == nil || stdout != "" || !strings.Contains(stderr, "name") {
		t.Fatalf("a missing flag fails on stderr: %q %q %v", stdout, stderr, err)
	}
}

func TestEndToEndSurvivesKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, key := setup(t, dir, "professional")
	s := serve(t, dir)

	status, p := s.request(t, "POST", "/v1/people", key, map[string]any{"name": "Ann", "email": "ann@example.com", "role": "admin"})
	if status != http.StatusCreated {
		t.Fatalf("create person: %d %v", status, p)
	}
	id := p["id"].(string)
	status, v := s.request(t, "POST", "/v1/vendors", key, map[string]any{"name": "Cloudy", "category": "Cloud"})
	if status != http.StatusCreated {
		t.Fatalf("create vendor: %d %v", status, v)
	}

	// kill -9: no chance to flush or checkpoint.
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.done

	s2 := serve(t, dir)
	status, got := s2.request(t, "GET", "/v1/people/"+id, key, nil)
	if status != http.StatusOK || got["email"] != "ann@example.com" {
		t.Fatalf("the acknowledged person survives kill -9: %d %v", status, got)
	}
	status, got = s2.request(t, "GET", "/v1/vendors/"+v["id"].(string), key, nil)
	if status != http.StatusOK || got["category"] != "cloud" {
		t.Fatalf("the vendor survives: %d %v", status, got)
	}
	status, h := s2.request(t, "GET", "/v1/health", "", nil)
	if status != http.StatusOK || h["status"] != "ok" || h["version"] != "e2e-test" {
		t.Fatalf("health: %d %v", status, h)
	}
}

func TestGracefulSIGTERM(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, key := setup(t, dir, "professional")
	s := serve(t, dir)

	// An in-flight request: its body arrives in two parts around the signal.
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", s.url+"/v1/vendors", pr)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	type result struct {
		status int
		body   string
		err    error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		res <- result{status: resp.StatusCode, body: string(b)}
	}()
	if _, err := pw.Write([]byte(`{"name": "In `)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the server is now reading the body
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// New connections are refused once shutdown begins.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Get(s.url + "/v1/health")
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts connections after SIGTERM")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := pw.Write([]byte(`flight"}`)); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	r := <-res
	if r.err != nil || r.status != http.StatusCreated || !strings.Contains(r.body, "In flight") {
		t.Fatalf("the in-flight request completes: %d %s %v", r.status, r.body, r.err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("serve must exit 0 after draining: %v\n%s", err, s.stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit after SIGTERM")
	}
	if !strings.Contains(s.stderr.String(), "msg=stopped") {
		t.Fatalf("serve logs its stop:\n%s", s.stderr.String())
	}
}

func TestCLIRevocationReachesTheRunningServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	orgID, _, owner := setup(t, dir, "professional")
	k := jsonObject(t, cli(t, dir, "apikey", "create", "--org", orgID, "--role", "auditor", "--name", "victim", "--json"))
	s := serve(t, dir)
	if status, _ := s.request(t, "GET", "/v1/people", k["key"].(string), nil); status != http.StatusOK {
		t.Fatalf("the key works: %d", status)
	}
	// A second organization and key created while serving work at once.
	_, _, other := setup(t, dir, "free")
	if status, _ := s.request(t, "GET", "/v1/organization", other, nil); status != http.StatusOK {
		t.Fatalf("a key created by the CLI while serving works: %d", status)
	}
	cli(t, dir, "apikey", "revoke", k["id"].(string))
	revokedAt := time.Now()
	for {
		status, body := s.request(t, "GET", "/v1/people", k["key"].(string), nil)
		if status == http.StatusUnauthorized {
			break
		}
		if time.Since(revokedAt) > 2*time.Second {
			t.Fatalf("a CLI revocation must take effect within 2 s; still %d %v", status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status, _ := s.request(t, "GET", "/v1/people", owner, nil); status != http.StatusOK {
		t.Fatal("other keys keep working")
	}
	// Last-used times reach the database without a write per request.
	time.Sleep(5500 * time.Millisecond)
	list := jsonObject(t, cli(t, dir, "apikey", "list", "--org", orgID, "--json"))
	used := 0
	for _, k := range list["data"].([]any) {
		if k.(map[string]any)["lastUsedAt"] != nil {
			used++
		}
	}
	if used != 2 {
		t.Fatalf("both used keys have lastUsedAt after the flush: %v", list)
	}
}

func TestBackupWhileServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, key := setup(t, dir, "enterprise")
	s := serve(t, dir)
	for i := range 20 {
		if status, _ := s.request(t, "POST", "/v1/vendors", key, map[string]any{"name": fmt.Sprintf("before %d", i)}); status != http.StatusCreated {
			t.Fatal(status)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			s.request(t, "POST", "/v1/vendors", key, map[string]any{"name": fmt.Sprintf("during %d", i)})
		}
	}()
	to := filepath.Join(t.TempDir(), "backup.db")
	time.Sleep(100 * time.Millisecond)
	cli(t, dir, "backup", "--to", to)
	cancel()
	wg.Wait()

	db, err := storage.Open(context.Background(), to)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if applied, err := db.Migrate(context.Background()); err != nil || len(applied) != 0 {
		t.Fatalf("the copy is at the current schema: %v %v", applied, err)
	}
	if err := db.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	raw, err := sqlOpen(to)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var check string
	if err := raw.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	var before int
	if err := raw.QueryRow("SELECT count(*) FROM vendors WHERE name LIKE 'before %'").Scan(&before); err != nil || before != 20 {
		t.Fatalf("the copy holds every vendor acknowledged before it: %d %v", before, err)
	}
	// The audit chain of the copy is consistent: one record per vendor write at most.
	var audits, vendors int
	_ = raw.QueryRow("SELECT count(*) FROM audit_log WHERE resource_type = 'vendor'").Scan(&audits)
	_ = raw.QueryRow("SELECT count(*) FROM vendors").Scan(&vendors)
	if audits != vendors {
		t.Fatalf("a consistent snapshot: %d vendors but %d audit records", vendors, audits)
	}
}

func sqlOpen(path string) (*sql.DB, error) {
	return sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
}

// Webhook delivery across a kill -9 of the binary.

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
