package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
	cmd.Env = cleanEnv()
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
	cmd.Env = cleanEnv()
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
	dir := t.TempDir()

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
	cmd.Env = cleanEnv()
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
