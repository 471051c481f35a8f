package objectstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/objectstore/s3test"
)

func hashOf(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// newStore starts a fake S3 with bucket "evidence" and a store on it
// under prefix "compliance/files".
func newStore(t *testing.T) (*Store, *s3test.Server) {
	t.Helper()
	srv := s3test.New("evidence")
	t.Cleanup(srv.Close)
	cfg, err := ParseURL("s3://evidence/compliance/files?endpoint=" + srv.Endpoint() + "&insecure=true&region=us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	cfg.AccessKey, cfg.SecretKey = srv.AccessKey, srv.SecretKey
	cfg.TempDir = t.TempDir()
	st, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st, srv
}

func TestParseURL(t *testing.T) {
	good := []struct {
		raw  string
		want Config
	}{
		{"s3://bucket", Config{Bucket: "bucket", Endpoint: "s3.amazonaws.com", Secure: true}},
		{"s3://my-bucket/a/b/?endpoint=minio.internal:9000&region=eu-west-1&path_style=true",
			Config{Bucket: "my-bucket", Prefix: "a/b", Endpoint: "minio.internal:9000", Region: "eu-west-1", Secure: true, PathStyle: "true"}},
		{"s3://b.x/p?endpoint=http://127.0.0.1:9000", Config{Bucket: "b.x", Prefix: "p", Endpoint: "127.0.0.1:9000"}},
		{"s3://bkt/p?endpoint=https://garage:3900&insecure=false", Config{Bucket: "bkt", Prefix: "p", Endpoint: "garage:3900", Secure: true}},
		{"s3://bkt?endpoint=ceph:7480&insecure=true&path_style=false", Config{Bucket: "bkt", Endpoint: "ceph:7480", PathStyle: "false"}},
	}
	for _, g := range good {
		got, err := ParseURL(g.raw)
		if err != nil {
			t.Errorf("%s: %v", g.raw, err)
			continue
		}
		if got != g.want {
			t.Errorf("%s: got %+v, want %+v", g.raw, got, g.want)
		}
	}
	bad := map[string]string{
		"http://bucket/x":                      "scheme",
		"s3:///prefix":                         "bucket is missing",
		"s3://AB/x":                            "bucket",
		"s3://key:secret@bucket/x":             "credentials do not go in the URL",
		"s3://bucket/x?endpoint=ftp://h":       "endpoint scheme",
		"s3://bucket/x?endpoint=h/path":        "endpoint",
		"s3://bucket/x?insecure=maybe":         "insecure",
		"s3://bucket/x?path_style=yes-ish":     "path_style",
		"s3://bucket/x?acess_key=typo":         "unknown parameter",
		"s3://bucket/a//b":                     "empty segment",
		"s3://bucket/x?endpoint=https://":      "endpoint",
		"s3://bucket/x?region=r&insecure=true": "",
	}
	for raw, want := range bad {
		_, err := ParseURL(raw)
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", raw, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "files_url: ") {
			t.Errorf("%s: got %v, want an error about %q naming files_url", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") && strings.Contains(raw, "secret@") {
			t.Errorf("%s: the error repeats the secret: %v", raw, err)
		}
	}
	cfg, _ := ParseURL("s3://bkt/p?endpoint=http://127.0.0.1:9000")
	if got := cfg.String(); got != "s3://bkt/p at http://127.0.0.1:9000" {
		t.Errorf("String() = %q", got)
	}
}

func TestNewNeedsCredentials(t *testing.T) {
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY", "AWS_SECRET_KEY"} {
		t.Setenv(k, "")
	}
	cfg, _ := ParseURL("s3://bkt/p?endpoint=127.0.0.1:1")
	cfg.TempDir = t.TempDir()
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "COMPLIANCE_FILES_ACCESS_KEY") {
		t.Fatalf("New without credentials: %v", err)
	}
	cfg.AccessKey = "only-the-key"
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "both") {
		t.Fatalf("New with half the credentials: %v", err)
	}
	cfg.AccessKey = ""
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "envsecret")
	if _, err := New(cfg); err != nil {
		t.Fatalf("New with the AWS environment variables: %v", err)
	}
}

func TestPutOpenSeekDedupe(t *testing.T) {
	ctx := context.Background()
	st, srv := newStore(t)
	content := bytes.Repeat([]byte("evidence line 0123456789\n"), 4000) // 100 kB
	sum := hashOf(content)

	b, err := st.Put(ctx, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if b.SHA256 != sum || b.Size != int64(len(content)) {
		t.Fatalf("Put = %+v, want %s/%d", b, sum, len(content))
	}
	key := "compliance/files/" + sum[:2] + "/" + sum
	if keys := srv.Keys("evidence"); len(keys) != 1 || keys[0] != key {
		t.Fatalf("keys = %v, want [%s]", keys, key)
	}
	if got, _ := srv.Object("evidence", key); !bytes.Equal(got, content) {
		t.Fatal("the stored object differs from the content")
	}
	if left, _ := filepath.Glob(filepath.Join(st.cfg.TempDir, ".upload-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}

	f, err := st.Open(ctx, sum)
	if err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(all, content) {
		t.Fatalf("read back %d bytes, err %v", len(all), err)
	}
	if _, err := f.Seek(50_000, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	part := make([]byte, 25)
	if _, err := io.ReadFull(f, part); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(part, content[50_000:50_025]) {
		t.Fatalf("after Seek read %q, want %q", part, content[50_000:50_025])
	}
	if end, err := f.Seek(-10, io.SeekEnd); err != nil || end != int64(len(content))-10 {
		t.Fatalf("Seek from the end = %d, %v", end, err)
	}
	tail, _ := io.ReadAll(f)
	if !bytes.Equal(tail, content[len(content)-10:]) {
		t.Fatalf("tail %q", tail)
	}
	f.Close()

	// The same content again: not sent again, its object refreshed.
	puts, copies := srv.Count("PutObject"), srv.Count("CopyObject")
	b2, err := st.Put(ctx, bytes.NewReader(content))
	if err != nil || b2 != b {
		t.Fatalf("second Put = %+v, %v", b2, err)
	}
	if srv.Count("PutObject") != puts || srv.Count("CopyObject") != copies+1 {
		t.Fatalf("second Put: %d PUTs (want %d), %d copies (want %d)", srv.Count("PutObject"), puts, srv.Count("CopyObject"), copies+1)
	}
	if len(srv.Keys("evidence")) != 1 {
		t.Fatalf("keys after dedupe: %v", srv.Keys("evidence"))
	}

	// An empty file is a file too.
	e, err := st.Put(ctx, strings.NewReader(""))
	if err != nil || e.Size != 0 || e.SHA256 != hashOf(nil) {
		t.Fatalf("empty Put = %+v, %v", e, err)
	}
	if r, err := st.Open(ctx, e.SHA256); err != nil {
		t.Fatalf("open empty: %v", err)
	} else {
		if got, _ := io.ReadAll(r); len(got) != 0 {
			t.Fatalf("empty file read %q", got)
		}
		r.Close()
	}

	for _, h := range []string{hashOf([]byte("never stored")), "short", strings.Repeat("zz", 32)} {
		if _, err := st.Open(ctx, h); !errors.Is(err, app.ErrNotFound) {
			t.Errorf("Open(%s) = %v, want app.ErrNotFound", h, err)
		}
	}
}

func TestConcurrentPuts(t *testing.T) {
	st, srv := newStore(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.Put(context.Background(), strings.NewReader(fmt.Sprintf("file %d", i%4)))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(srv.Keys("evidence")); n != 4 {
		t.Fatalf("%d objects for 4 distinct contents", n)
	}
}

// TestTLS: TLS is on by default (the payload then goes unsigned, as
// minio-go does over HTTPS; Content-MD5 still guards it).
func TestTLS(t *testing.T) {
	srv := s3test.NewTLS("evidence")
	defer srv.Close()
	cfg, err := ParseURL("s3://evidence/p?endpoint=" + srv.Endpoint() + "&region=us-east-1")
	if err != nil || !cfg.Secure {
		t.Fatalf("%+v %v", cfg, err)
	}
	cfg.AccessKey, cfg.SecretKey, cfg.TempDir = srv.AccessKey, srv.SecretKey, t.TempDir()
	cfg.Transport = srv.Client().Transport
	st, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := st.Put(ctx, strings.NewReader("over TLS"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.Open(ctx, b.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, _ := io.ReadAll(r); string(got) != "over TLS" {
		t.Fatalf("read %q", got)
	}
	if err := st.Check(ctx); err != nil {
		t.Fatal(err)
	}
	// Without the test CA the certificate is refused, with a clear error.
	cfg.Transport = nil
	strict, _ := New(cfg)
	if err := strict.Check(ctx); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted certificate: %v", err)
	}
}

func TestRegionDiscovery(t *testing.T) {
	srv := s3test.New("evidence")
	defer srv.Close()
	srv.Region = "eu-central-1"
	cfg, err := ParseURL("s3://evidence?endpoint=http://" + srv.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	cfg.AccessKey, cfg.SecretKey, cfg.TempDir = srv.AccessKey, srv.SecretKey, t.TempDir()
	st, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Put(context.Background(), strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count("GetBucketLocation") != 1 {
		t.Fatalf("GetBucketLocation asked %d times", srv.Count("GetBucketLocation"))
	}
	if keys := srv.Keys("evidence"); len(keys) != 1 || keys[0] != b.SHA256[:2]+"/"+b.SHA256 {
		t.Fatalf("keys without a prefix: %v", keys)
	}
}

func TestSweep(t *testing.T) {
	ctx := context.Background()
	st, srv := newStore(t)
	t0 := time.Now().UTC().Truncate(time.Second)
	clock := t0
	srv.SetClock(func() time.Time { return clock })
	old := t0.Add(-48 * time.Hour)
	put := func(content string, mod time.Time) string {
		h := hashOf([]byte(content))
		srv.Seed("evidence", "compliance/files/"+h[:2]+"/"+h, []byte(content), mod)
		return h
	}
	kept := put("referenced", old)
	gone := put("unreferenced", old)
	reused := put("reused later", old)
	young := put("young", t0.Add(-time.Hour))
	srv.Seed("evidence", "compliance/files/README", []byte("not a stored file"), old)
	srv.Seed("evidence", "other/"+gone[:2]+"/"+gone, []byte("outside the prefix"), old)
	refs := map[string]bool{kept: true}
	referenced := func(h string) bool { return refs[h] }

	// First sweep: unreferenced old files are only marked.
	res, err := st.Sweep(ctx, referenced, t0.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 0 || res.Kept != 4 {
		t.Fatalf("first sweep = %+v, want nothing removed, 4 kept", res)
	}
	for _, h := range []string{gone, reused} {
		if m := srv.Meta("evidence", "compliance/files/"+h[:2]+"/"+h); m["compliance-unreferenced"] == "" {
			t.Fatalf("%s not marked: %v", h, m)
		}
	}
	// Within the grace period, the mark keeps them.
	if res, err = st.Sweep(ctx, referenced, t0.Add(-24*time.Hour)); err != nil || res.Removed != 0 {
		t.Fatalf("second sweep in the grace period = %+v, %v", res, err)
	}
	// An upload of the same content clears the mark.
	clock = t0.Add(time.Hour)
	if _, err := st.Put(ctx, strings.NewReader("reused later")); err != nil {
		t.Fatal(err)
	}
	if m := srv.Meta("evidence", "compliance/files/"+reused[:2]+"/"+reused); m["compliance-unreferenced"] != "" {
		t.Fatalf("reuse left the mark: %v", m)
	}
	// A grace period after the mark: the marked file goes.
	res, err = st.Sweep(ctx, referenced, t0.Add(30*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 1 || res.Bytes != int64(len("unreferenced")) {
		t.Fatalf("third sweep = %+v, want 1 removed of %d bytes", res, len("unreferenced"))
	}
	if _, ok := srv.Object("evidence", "compliance/files/"+gone[:2]+"/"+gone); ok {
		t.Fatal("the unreferenced file is still there")
	}
	for _, k := range []string{"compliance/files/" + kept[:2] + "/" + kept, "compliance/files/" + reused[:2] + "/" + reused,
		"compliance/files/" + young[:2] + "/" + young, "compliance/files/README", "other/" + gone[:2] + "/" + gone} {
		if _, ok := srv.Object("evidence", k); !ok {
			t.Errorf("%s was removed", k)
		}
	}
	if _, err := st.Open(ctx, gone); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("open a swept file: %v", err)
	}

	// A local upload file a crash left behind goes once it is old.
	stale := filepath.Join(st.cfg.TempDir, ".upload-123")
	fresh := filepath.Join(st.cfg.TempDir, ".upload-456")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Chtimes(stale, t0.Add(-48*time.Hour), t0.Add(-48*time.Hour))
	if _, err := st.Sweep(ctx, referenced, t0.Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale upload file kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("fresh upload file removed: %v", err)
	}
}

func TestSweepPages(t *testing.T) {
	st, srv := newStore(t)
	st.pageSize = 3
	old := time.Now().Add(-72 * time.Hour)
	want := map[string]bool{}
	for i := range 11 {
		h := hashOf([]byte(fmt.Sprint(i)))
		srv.Seed("evidence", "compliance/files/"+h[:2]+"/"+h, []byte(fmt.Sprint(i)), old)
		want[h] = true
	}
	seen := map[string]bool{}
	res, err := st.Sweep(context.Background(), func(h string) bool { seen[h] = true; return true }, time.Now().Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept != 11 || len(seen) != 11 {
		t.Fatalf("sweep saw %d files (%+v), want 11", len(seen), res)
	}
	for h := range want {
		if !seen[h] {
			t.Errorf("%s not listed", h)
		}
	}
	if n := srv.Count("ListObjectsV2"); n != 4 {
		t.Fatalf("%d list pages for 11 objects at 3 a page, want 4", n)
	}
}

func TestErrorsAreClear(t *testing.T) {
	ctx := context.Background()
	st, srv := newStore(t)
	b, err := st.Put(ctx, strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}

	srv.Deny(true)
	for name, err := range map[string]error{
		"put":   func() error { _, err := st.Put(ctx, strings.NewReader("y")); return err }(),
		"open":  func() error { _, err := st.Open(ctx, b.SHA256); return err }(),
		"sweep": func() error { _, err := st.Sweep(ctx, func(string) bool { return false }, time.Now()); return err }(),
		"check": st.Check(ctx),
	} {
		if err == nil || errors.Is(err, app.ErrNotFound) || !strings.Contains(err.Error(), "access denied") || !strings.Contains(err.Error(), "files_url s3://evidence/compliance/files") {
			t.Errorf("%s when denied: %v", name, err)
		}
		if err != nil && strings.Contains(err.Error(), srv.SecretKey) {
			t.Errorf("%s: the error carries the secret key", name)
		}
	}
	srv.Deny(false)

	// A wrong secret key: the fake's signature check refuses it.
	cfg := st.cfg
	cfg.SecretKey = "not-the-secret"
	wrong, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := wrong.Check(ctx); err == nil || !strings.Contains(err.Error(), "SignatureDoesNotMatch") {
		t.Errorf("wrong secret: %v", err)
	}
	// (A HEAD answer has no body: S3 and minio-go call any 403 AccessDenied.)
	if _, err := wrong.Put(ctx, strings.NewReader("z")); err == nil || !strings.Contains(err.Error(), "access denied") {
		t.Errorf("wrong secret, put: %v", err)
	}
	cfg.AccessKey = "AKIAUNKNOWN"
	unknown, _ := New(cfg)
	if err := unknown.Check(ctx); err == nil || !strings.Contains(err.Error(), "InvalidAccessKeyId") {
		t.Errorf("unknown key: %v", err)
	}

	// A bucket that does not exist.
	cfg = st.cfg
	cfg.Bucket = "no-such-bucket"
	missing, _ := New(cfg)
	for name, err := range map[string]error{
		"put":   func() error { _, err := missing.Put(ctx, strings.NewReader("y")); return err }(),
		"sweep": func() error { _, err := missing.Sweep(ctx, func(string) bool { return false }, time.Now()); return err }(),
		"check": missing.Check(ctx),
	} {
		if err == nil || !strings.Contains(err.Error(), `the bucket "no-such-bucket" does not exist`) {
			t.Errorf("%s on a missing bucket: %v", name, err)
		}
	}
	if _, err := missing.Open(ctx, b.SHA256); err == nil {
		t.Error("open on a missing bucket succeeded")
	}

	// Nothing listens: an error naming the setting, quickly.
	cfg = st.cfg
	cfg.Endpoint = "127.0.0.1:1"
	down, _ := New(cfg)
	if err := down.Check(ctx); err == nil || !strings.Contains(err.Error(), "files_url") {
		t.Errorf("unreachable store: %v", err)
	}
}

func TestCheck(t *testing.T) {
	st, srv := newStore(t)
	if err := st.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if srv.Count("PutObject") != 1 || srv.Count("GetObject") != 1 || srv.Count("DeleteObject") != 1 {
		t.Fatalf("check made %d PUT, %d GET, %d DELETE", srv.Count("PutObject"), srv.Count("GetObject"), srv.Count("DeleteObject"))
	}
	if keys := srv.Keys("evidence"); len(keys) != 0 {
		t.Fatalf("check left %v", keys)
	}
}

func TestPutLeavesNoTempFileOnFailure(t *testing.T) {
	st, srv := newStore(t)
	srv.Deny(true)
	if _, err := st.Put(context.Background(), strings.NewReader("denied")); err == nil {
		t.Fatal("Put succeeded while denied")
	}
	entries, _ := os.ReadDir(st.cfg.TempDir)
	if len(entries) != 0 {
		t.Fatalf("temporary files left: %v", entries)
	}
}
