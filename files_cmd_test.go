package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/objectstore/s3test"
)

// filesEnv is the environment of a command whose files live in the fake
// store's bucket (files_url and the keys from COMPLIANCE_* variables).
func filesEnv(fake *s3test.Server, bucket string) []string {
	return append(cleanEnv(),
		"COMPLIANCE_FILES_URL=s3://"+bucket+"/files?endpoint=http://"+fake.Endpoint()+"&region=us-east-1",
		"COMPLIANCE_FILES_ACCESS_KEY="+fake.AccessKey,
		"COMPLIANCE_FILES_SECRET_KEY="+fake.SecretKey)
}

func runEnv(t *testing.T, env []string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func TestDoctorChecksObjectStore(t *testing.T) {
	t.Parallel()
	fake := s3test.New("compliance")
	defer fake.Close()
	dir := t.TempDir()
	cli(t, dir, "migrate")

	out, _, err := runEnv(t, filesEnv(fake, "compliance"), "--data-dir", dir, "doctor", "--json")
	if err != nil {
		t.Fatalf("doctor: %v %s", err, out)
	}
	checks := doctorChecks(t, out)
	if c := checks["files_store"]; c["status"] != "ok" || !strings.Contains(c["message"].(string), "s3://compliance/files at http://"+fake.Endpoint()) {
		t.Fatalf("files_store: %v", c)
	}
	if fake.Count("PutObject") != 1 || fake.Count("DeleteObject") != 1 || len(fake.Keys("compliance")) != 0 {
		t.Fatalf("doctor's test object: %d PUT, %d DELETE, left %v", fake.Count("PutObject"), fake.Count("DeleteObject"), fake.Keys("compliance"))
	}

	out, _, err = runEnv(t, filesEnv(fake, "missing-bucket"), "--data-dir", dir, "doctor", "--json")
	if err == nil {
		t.Fatal("doctor passes with a missing bucket")
	}
	if c := doctorChecks(t, out)["files_store"]; c["status"] != "fail" || !strings.Contains(c["message"].(string), `the bucket "missing-bucket" does not exist`) {
		t.Fatalf("files_store with a missing bucket: %v", c)
	}

	env := append(filesEnv(fake, "compliance"), "COMPLIANCE_FILES_SECRET_KEY=wrong")
	out, _, _ = runEnv(t, env, "--data-dir", dir, "doctor", "--json")
	c := doctorChecks(t, out)["files_store"]
	if c["status"] != "fail" || !strings.Contains(c["message"].(string), "access denied") || strings.Contains(c["message"].(string), "wrong") {
		t.Fatalf("files_store with a wrong secret: %v", c)
	}

	// Without files_url the check is skipped.
	if c := doctorChecks(t, cli(t, dir, "doctor", "--json"))["files_store"]; c["status"] != "skip" {
		t.Fatalf("files_store without files_url: %v", c)
	}
}

func doctorChecks(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	var rep struct {
		Checks []map[string]any `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json printed %q", out)
	}
	m := map[string]map[string]any{}
	for _, c := range rep.Checks {
		m[c["name"].(string)] = c
	}
	return m
}

func TestServeRefusesABadFilesURL(t *testing.T) {
	t.Parallel()
	fake := s3test.New("compliance")
	defer fake.Close()
	dir := t.TempDir()
	for name, env := range map[string][]string{
		"unknown parameter": append(cleanEnv(), "COMPLIANCE_FILES_URL=s3://compliance?endpoint=h:1&acces_key=x"),
		"no credentials": append(cleanEnv(), "COMPLIANCE_FILES_URL=s3://compliance?endpoint=h:1", "AWS_ACCESS_KEY_ID=",
			"AWS_SECRET_ACCESS_KEY=", "AWS_ACCESS_KEY=", "AWS_SECRET_KEY="),
		"missing bucket": filesEnv(fake, "missing-bucket"),
	} {
		_, stderr, err := runEnv(t, env, "--data-dir", dir, "serve", "--addr", "127.0.0.1:0")
		if err == nil || !strings.Contains(stderr, "files_url") {
			t.Errorf("%s: serve must refuse to start naming files_url: %v %s", name, err, stderr)
		}
	}
}

func TestServeAndBackupWithObjectStore(t *testing.T) {
	t.Parallel()
	fake := s3test.New("compliance")
	defer fake.Close()
	dir := t.TempDir()
	_, _, key := setup(t, dir, "professional")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	yaml := "files_url: s3://compliance/files?endpoint=http://" + fake.Endpoint() + "&region=us-east-1\n" +
		"files_access_key: " + fake.AccessKey + "\nfiles_secret_key: " + fake.SecretKey + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, dir, "--config", cfg)
	if !strings.Contains(srv.stderr.String(), "uploaded files in an object store") || strings.Contains(srv.stderr.String(), fake.SecretKey) {
		t.Fatalf("serve's log: %s", srv.stderr.String())
	}
	if code, _ := srv.request(t, "POST", "/v1/frameworks/iso9001-2015/enable", key, nil); code != http.StatusOK {
		t.Fatalf("enable: %d", code)
	}
	_, controls := srv.request(t, "GET", "/v1/controls", key, nil)
	ctl := controls["data"].([]any)[0].(map[string]any)["id"].(string)

	content := []byte("access review signed off\n")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "review.txt")
	fw.Write(content)
	mw.Close()
	req, _ := http.NewRequest("POST", srv.url+"/v1/controls/"+ctl+"/evidence", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	json.NewDecoder(resp.Body).Decode(&ev)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %v", resp.StatusCode, ev)
	}
	sum := sha256.Sum256(content)
	hash := hex.EncodeToString(sum[:])
	if got, ok := fake.Object("compliance", "files/"+hash[:2]+"/"+hash); !ok || !bytes.Equal(got, content) {
		t.Fatalf("bucket: %v", fake.Keys("compliance"))
	}
	req, _ = http.NewRequest("GET", srv.url+"/v1/evidence/"+ev["id"].(string)+"/download", nil)
	req.Header.Set("X-API-Key", key)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, content) {
		t.Fatalf("download: %d %q", resp.StatusCode, got)
	}

	// The backup archive leaves the bucket's files out and says so.
	archive := filepath.Join(t.TempDir(), "b.tar.zst")
	out, stderr, err := cliResult(t, dir, "--config", cfg, "backup", "--to", archive, "--json")
	if err != nil {
		t.Fatalf("backup: %v %s", err, stderr)
	}
	res := jsonObject(t, out)
	if res["fileCount"].(float64) != 0 || !strings.Contains(res["filesElsewhere"].(string), "s3://compliance/files") ||
		!strings.Contains(stderr, "not in this archive") {
		t.Fatalf("backup with files_url: %v %s", res, stderr)
	}
	v := jsonObject(t, cli(t, dir, "backup", "verify", "--from", archive, "--json"))
	if v["fileCount"].(float64) != 0 || v["filesElsewhere"] == nil {
		t.Fatalf("manifest: %v", v)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	out, stderr, err = cliResult(t, restored, "restore", "--from", archive)
	if err != nil || !strings.Contains(out, "they live in the object store s3://compliance/files") {
		t.Fatalf("restore: %v %s %s", err, out, stderr)
	}
}
