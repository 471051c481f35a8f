package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/objectstore"
	"github.com/compliance-appliance/compliance/objectstore/s3test"
)

// TestEvidenceInObjectStore: with files_url, evidence uploaded through the
// API lands in the S3 bucket under its hash, downloads (whole and by
// range) come from the bucket, the same content is stored once, and the
// daily collection removes it from the bucket a grace period after its
// evidence is deleted.
func TestEvidenceInObjectStore(t *testing.T) {
	t.Parallel()
	fake := s3test.New("compliance")
	defer fake.Close()
	cfg, err := objectstore.ParseURL("s3://compliance/prod/files?endpoint=http://" + fake.Endpoint() + "&region=us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	cfg.AccessKey, cfg.SecretKey, cfg.TempDir = fake.AccessKey, fake.SecretKey, t.TempDir()
	store, err := objectstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := newTestServerFiles(t, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), store)
	fake.SetClock(e.clock.Now)
	org := e.org("A", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	ctl := e.firstControl(key)

	content := bytes.Repeat([]byte("firewall review 2026\n"), 500)
	sum := sha256.Sum256(content)
	hash := hex.EncodeToString(sum[:])
	rec := e.upload("/v1/controls/"+ctl+"/evidence", key, "review.txt", content, map[string]string{"description": "review"})
	wantStatus(t, rec, http.StatusCreated)
	ev := obj(t, rec)
	if ev["sha256"] != hash {
		t.Fatalf("evidence: %v", ev)
	}
	objKey := "prod/files/" + hash[:2] + "/" + hash
	if got, ok := fake.Object("compliance", objKey); !ok || !bytes.Equal(got, content) {
		t.Fatalf("bucket holds %v, want %s", fake.Keys("compliance"), objKey)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "files")); !os.IsNotExist(err) {
		t.Fatalf("files written to the data directory: %v", err)
	}

	id := ev["id"].(string)
	rec = e.do("GET", "/v1/evidence/"+id+"/download", key, nil)
	wantStatus(t, rec, http.StatusOK)
	if !bytes.Equal(rec.Body.Bytes(), content) {
		t.Fatalf("download: %d bytes", rec.Body.Len())
	}
	req := httptest.NewRequest("GET", "/v1/evidence/"+id+"/download", nil)
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Range", "bytes=1000-1019")
	rr := httptest.NewRecorder()
	e.srv.ServeHTTP(rr, req)
	if rr.Code != http.StatusPartialContent || !bytes.Equal(rr.Body.Bytes(), content[1000:1020]) {
		t.Fatalf("range download: %d %q", rr.Code, rr.Body.String())
	}

	// The same file as evidence of another control: one object.
	ctl2 := list(t, e.do("GET", "/v1/controls", key, nil))[1]["id"].(string)
	rec = e.upload("/v1/controls/"+ctl2+"/evidence", key, "copy.txt", content, nil)
	wantStatus(t, rec, http.StatusCreated)
	second := obj(t, rec)["id"].(string)
	if keys := fake.Keys("compliance"); len(keys) != 1 {
		t.Fatalf("bucket after the same upload twice: %v", keys)
	}
	if fake.Count("PutObject") != 1 {
		t.Fatalf("the same content sent %d times", fake.Count("PutObject"))
	}

	// Deleted evidence: the object stays while anything refers to it, then
	// goes in two steps a grace period apart.
	wantStatus(t, e.do("DELETE", "/v1/evidence/"+id, key, nil), http.StatusNoContent)
	e.clock.Advance(app.FileGrace + time.Hour)
	if res, err := e.app.CollectFiles(e.ctx(org)); err != nil || res.Removed != 0 {
		t.Fatalf("collect while still referenced: %+v %v", res, err)
	}
	wantStatus(t, e.do("DELETE", "/v1/evidence/"+second, key, nil), http.StatusNoContent)
	e.clock.Advance(app.FileGrace + time.Hour)
	if res, err := e.app.CollectFiles(e.ctx(org)); err != nil || res.Removed != 0 {
		t.Fatalf("first collection marks only: %+v %v", res, err)
	}
	if _, ok := fake.Object("compliance", objKey); !ok {
		t.Fatal("removed on the first collection")
	}
	e.clock.Advance(app.FileGrace + time.Hour)
	res, err := e.app.CollectFiles(e.ctx(org))
	if err != nil || res.Removed != 1 || res.Bytes != int64(len(content)) {
		t.Fatalf("second collection: %+v %v", res, err)
	}
	if keys := fake.Keys("compliance"); len(keys) != 0 {
		t.Fatalf("bucket after collection: %v", keys)
	}
}

// TestEvidenceObjectStoreDown: a store that refuses the upload fails it
// without a record pointing at a missing file.
func TestEvidenceObjectStoreDown(t *testing.T) {
	t.Parallel()
	fake := s3test.New("compliance")
	defer fake.Close()
	cfg, err := objectstore.ParseURL("s3://compliance?endpoint=http://" + fake.Endpoint() + "&region=us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	cfg.AccessKey, cfg.SecretKey, cfg.TempDir = fake.AccessKey, fake.SecretKey, t.TempDir()
	store, err := objectstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := newTestServerFiles(t, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), store)
	org := e.org("A", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	ctl := e.firstControl(key)
	fake.Deny(true)
	rec := e.upload("/v1/controls/"+ctl+"/evidence", key, "a.txt", []byte("refused"), nil)
	if rec.Code < 500 {
		t.Fatalf("upload to a refusing store: %d %s", rec.Code, rec.Body.String())
	}
	fake.Deny(false)
	if n := total(t, e.do("GET", "/v1/controls/"+ctl+"/evidence", key, nil)); n != 0 {
		t.Fatalf("%d evidence records after a failed upload", n)
	}
}
