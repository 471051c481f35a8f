package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and localhost
// with the given serial and validity to certFile and keyFile (replacing
// them atomically, as a certificate manager does).
func writeCert(t *testing.T, certFile, keyFile string, serial int64, notBefore, notAfter time.Time) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: fmt.Sprintf("compliance test %d", serial)},
		NotBefore: notBefore, NotAfter: notAfter, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	replace(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
	replace(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	c, _ := x509.ParseCertificate(der)
	return c
}

func replace(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path+".new", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// peerSerial opens a new TLS connection and returns the serial of the
// certificate the server presented.
func peerSerial(t *testing.T, addr string, roots *x509.CertPool) int64 {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("tls dial: %v", err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

func waitLog(t *testing.T, s *server, substr string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(s.stderr.String(), substr) < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log:\n%s", substr, s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTLSServeAndReload serves HTTPS, reloads the certificate on SIGHUP
// without dropping an open connection, keeps it when the new files are
// broken, and redirects plain HTTP.
func TestTLSServeAndReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tdir := t.TempDir()
	certFile, keyFile := filepath.Join(tdir, "tls.crt"), filepath.Join(tdir, "tls.key")
	now := time.Now()
	a := writeCert(t, certFile, keyFile, 1, now.Add(-time.Hour), now.Add(90*24*time.Hour))
	redirectAddr := freeAddr(t)
	cfg := filepath.Join(tdir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("tls_cert_file: %s\ntls_key_file: %s\ntls_redirect_addr: %s\n", certFile, keyFile, redirectAddr)), 0o600)

	s := serve(t, dir, "--config", cfg)
	addr := strings.TrimPrefix(s.url, "http://")
	if !strings.Contains(s.stderr.String(), "tls=true") {
		t.Fatalf("the log says TLS is on:\n%s", s.stderr.String())
	}
	roots := x509.NewCertPool()
	roots.AddCert(a)
	keep := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	get := func(c *http.Client) *http.Response {
		t.Helper()
		resp, err := c.Get("https://" + addr + "/v1/health")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("health over https: %d", resp.StatusCode)
		}
		return resp
	}
	if r := get(keep); r.TLS == nil || r.TLS.PeerCertificates[0].SerialNumber.Int64() != 1 {
		t.Fatal("served with the first certificate")
	}
	if r, err := http.Get(s.url + "/v1/health"); err == nil {
		r.Body.Close()
		if r.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain HTTP on the TLS port is refused: %d", r.StatusCode)
		}
	}

	// A new certificate, then SIGHUP: new connections get it, the open
	// keep-alive connection goes on with the old one.
	b := writeCert(t, certFile, keyFile, 2, now.Add(-time.Hour), now.Add(90*24*time.Hour))
	roots.AddCert(b)
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, s, "tls certificate reloaded", 1)
	if got := peerSerial(t, addr, roots); got != 2 {
		t.Fatalf("a new connection gets the new certificate: serial %d", got)
	}
	var reused bool
	req, _ := http.NewRequest("GET", "https://"+addr+"/v1/health", nil)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}))
	resp, err := keep.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !reused || resp.TLS.PeerCertificates[0].SerialNumber.Int64() != 1 {
		t.Fatalf("the open connection goes on with its certificate: reused %v", reused)
	}

	// Broken files: the current certificate stays and the log says why.
	replace(t, certFile, []byte("-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n"))
	s.cmd.Process.Signal(syscall.SIGHUP)
	waitLog(t, s, "tls certificate reload failed", 1)
	if got := peerSerial(t, addr, roots); got != 2 {
		t.Fatalf("after a broken reload the certificate stays: serial %d", got)
	}
	// An expired certificate is refused as well.
	writeCert(t, certFile, keyFile, 3, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	s.cmd.Process.Signal(syscall.SIGHUP)
	waitLog(t, s, "tls certificate reload failed", 2)
	if !strings.Contains(s.stderr.String(), "expired") {
		t.Fatalf("the log names the reason:\n%s", s.stderr.String())
	}
	if got := peerSerial(t, addr, roots); got != 2 {
		t.Fatalf("an expired certificate is not taken: serial %d", got)
	}

	// Plain HTTP on tls_redirect_addr is sent to HTTPS.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noFollow.Get("http://" + redirectAddr + "/v1/health?x=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, port, _ := net.SplitHostPort(addr)
	if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != "https://127.0.0.1:"+port+"/v1/health?x=1" {
		t.Fatalf("redirect: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}

	stop(t, s)
	if !strings.Contains(s.stderr.String(), "msg=stopped") {
		t.Fatalf("serve stops cleanly:\n%s", s.stderr.String())
	}
}

func TestTLSConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tdir := t.TempDir()
	certFile, keyFile := filepath.Join(tdir, "tls.crt"), filepath.Join(tdir, "tls.key")
	for name, body := range map[string]string{
		"only the certificate":     "tls_cert_file: " + certFile + "\n",
		"redirect without TLS":     "tls_redirect_addr: 127.0.0.1:0\n",
		"missing certificate file": "tls_cert_file: " + certFile + "\ntls_key_file: " + keyFile + "\n",
	} {
		cfg := filepath.Join(tdir, "c.yaml")
		os.WriteFile(cfg, []byte(body), 0o600)
		cmd := exec.Command(binary(t), "--data-dir", dir, "--config", cfg, "serve", "--addr", "127.0.0.1:0")
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "tls") {
			t.Errorf("%s: serve refuses to start: %v %s", name, err, out)
		}
	}
}

// doctor runs `compliance doctor --json` and returns the report by check
// name and the exit code.
func doctor(t *testing.T, dir string, args ...string) (map[string]map[string]any, bool, int) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"--data-dir", dir, "doctor", "--json"}, args...)...)
	cmd.Env = envFor(dir)
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		OK     bool             `json:"ok"`
		Checks []map[string]any `json:"checks"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("doctor --json printed %q", out)
	}
	byName := map[string]map[string]any{}
	for _, c := range rep.Checks {
		byName[c["name"].(string)] = c
	}
	return byName, rep.OK, code
}

func TestDoctor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	setup(t, dir, "professional")

	checks, ok, code := doctor(t, dir, "--full")
	for _, n := range []string{"data_directory", "disk_space", "database", "wal", "clock", "tls_certificate", "backup"} {
		c := checks[n]
		if c == nil {
			t.Fatalf("check %s missing: %v", n, checks)
		}
		if c["status"] == "fail" {
			t.Errorf("healthy: %s fails: %v", n, c)
		}
	}
	if !ok || code != 0 {
		t.Fatalf("a healthy data directory passes: ok %v exit %d %v", ok, code, checks)
	}
	if !strings.Contains(checks["database"]["message"].(string), "integrity_check ok") {
		t.Fatalf("--full runs integrity_check: %v", checks["database"])
	}
	if checks["clock"]["status"] != "ok" || checks["tls_certificate"]["status"] != "skip" || checks["backup"]["status"] != "skip" {
		t.Fatalf("clock, tls, backup: %v", checks)
	}
	plain := cli(t, dir, "doctor")
	if !strings.HasPrefix(plain, "CHECK") || !strings.Contains(plain, "quick_check ok") {
		t.Fatalf("the table: %s", plain)
	}

	// Broken: a secret readable by others, a damaged database, an expired
	// certificate, backups configured but none taken.
	secrets, _ := os.ReadDir(filepath.Join(dir, "secrets"))
	if len(secrets) == 0 {
		t.Fatal("no secrets")
	}
	os.Chmod(filepath.Join(dir, "secrets", secrets[0].Name()), 0o644)
	db := filepath.Join(dir, "compliance.db")
	f, err := os.OpenFile(db, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("this is no longer a database header"), 0)
	f.Close()
	tdir := t.TempDir()
	certFile, keyFile := filepath.Join(tdir, "tls.crt"), filepath.Join(tdir, "tls.key")
	writeCert(t, certFile, keyFile, 9, time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour))
	cfg := filepath.Join(tdir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("tls_cert_file: %s\ntls_key_file: %s\nbackup:\n  schedule: 24h\n", certFile, keyFile)), 0o600)

	checks, ok, code = doctor(t, dir, "--config", cfg)
	if ok || code == 0 {
		t.Fatalf("a broken data directory fails: ok %v exit %d", ok, code)
	}
	for n, want := range map[string]string{"data_directory": "readable by others", "database": "", "tls_certificate": "expired", "backup": "no backup"} {
		c := checks[n]
		if c["status"] != "fail" || !strings.Contains(c["message"].(string), want) {
			t.Errorf("%s: %v, want a failure saying %q", n, c, want)
		}
	}
	// Doctor creates nothing: a missing data directory fails and stays missing.
	missing := filepath.Join(t.TempDir(), "nope")
	checks, ok, code = doctor(t, missing)
	if ok || code == 0 || checks["data_directory"]["status"] != "fail" {
		t.Fatalf("a missing data directory fails: %v", checks)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatal("doctor created the data directory")
	}
}
