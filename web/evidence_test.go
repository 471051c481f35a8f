package web

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// firstControl enables a small framework and returns one of its control ids.
func (e *testEnv) firstControl(key string) string {
	e.t.Helper()
	e.enable(key, "iso9001-2015")
	return list(e.t, e.do("GET", "/v1/controls", key, nil))[0]["id"].(string)
}

func TestEvidenceUploadDownloadDelete(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	a, b := e.org("A", app.PlanProfessional), e.org("B", app.PlanProfessional)
	ka, kb, aud := e.key(a, app.RoleAdmin), e.key(b, app.RoleAdmin), e.key(a, app.RoleAuditor)
	ctl := e.firstControl(ka)
	content := []byte("policy signed 2026")
	rec := e.upload("/v1/controls/"+ctl+"/evidence", ka, `..\..\etc/passwd "x".txt`, content, map[string]string{"description": "signed", "expiresAt": "2027-01-01"})
	wantStatus(t, rec, http.StatusCreated)
	ev := obj(t, rec)
	sum := sha256.Sum256(content)
	if ev["sha256"] != hex.EncodeToString(sum[:]) || ev["size"].(float64) != float64(len(content)) || ev["filename"] != "passwd x.txt" {
		t.Fatalf("evidence: %v", ev)
	}
	id := ev["id"].(string)
	if !strings.HasPrefix(id, "evd_") {
		t.Fatalf("id %s", id)
	}
	// The file is stored content-addressed under the data dir.
	// Download returns the bytes.
	rec = e.do("GET", "/v1/evidence/"+id+"/download", ka, nil)
	wantStatus(t, rec, http.StatusOK)
	if !bytes.Equal(rec.Body.Bytes(), content) || !strings.Contains(rec.Header().Get("Content-Disposition"), "attachment") {
		t.Fatalf("download: %q %v", rec.Body.String(), rec.Header())
	}
	wantStatus(t, e.do("GET", "/v1/evidence/"+id+"/download", aud, nil), http.StatusOK)
	if n := total(t, e.do("GET", "/v1/controls/"+ctl+"/evidence", ka, nil)); n != 1 {
		t.Fatalf("list: %d", n)
	}
	// Validation names the field.
	wantField(t, e.upload("/v1/controls/"+ctl+"/evidence", ka, "", nil, map[string]string{"description": "x"}), "file")
	wantField(t, e.upload("/v1/controls/"+ctl+"/evidence", ka, "a.txt", content, map[string]string{"expiresAt": "soon"}), "expiresAt")
	wantField(t, e.upload("/v1/controls/"+ctl+"/evidence", ka, "a.txt", content, map[string]string{"expiresAt": "2020-01-01"}), "expiresAt")
	wantField(t, e.do("POST", "/v1/controls/"+ctl+"/evidence", ka, map[string]any{"file": "x"}), "Content-Type")
	// Too large: 413 with the error body.
	big := bytes.Repeat([]byte("x"), 3<<20)
	wantError(t, e.upload("/v1/controls/"+ctl+"/evidence", ka, "big.bin", big, nil), http.StatusRequestEntityTooLarge, "payload_too_large")
	wantError(t, e.upload("/v1/controls/ctl_nope/evidence", ka, "a.txt", content, nil), http.StatusNotFound, "not_found")
	// Other organization: 404 everywhere.
	for _, p := range []string{"/v1/evidence/" + id, "/v1/evidence/" + id + "/download"} {
		wantError(t, e.do("GET", p, kb, nil), http.StatusNotFound, "not_found")
	}
	wantError(t, e.do("DELETE", "/v1/evidence/"+id, kb, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("DELETE", "/v1/evidence/"+id, aud, nil), http.StatusForbidden, "forbidden")
	// Delete.
	wantStatus(t, e.do("DELETE", "/v1/evidence/"+id, ka, nil), http.StatusNoContent)
	wantError(t, e.do("GET", "/v1/evidence/"+id, ka, nil), http.StatusNotFound, "not_found")
	// The control counted as partial while it had evidence.
	c := obj(t, e.do("GET", "/v1/controls/"+ctl, ka, nil))
	if c["status"] != "in_progress" || c["assessment"] != "partial" {
		t.Fatalf("control after evidence upload and delete: %v", c)
	}
}

func readZip(t *testing.T, body []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = b
	}
	return out
}

func TestEvidenceExport(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	a, b := e.org("A", app.PlanProfessional), e.org("B", app.PlanProfessional)
	ka, kb, aud := e.key(a, app.RoleAdmin), e.key(b, app.RoleAdmin), e.key(a, app.RoleAuditor)
	emp := e.key(a, app.RoleEmployee)
	ctl := e.firstControl(ka)
	e.enable(ka, "nis2")
	current := e.upload("/v1/controls/"+ctl+"/evidence", ka, "current.txt", []byte("current"), map[string]string{"expiresAt": "2026-03-01"})
	wantStatus(t, current, http.StatusCreated)
	stale := e.upload("/v1/controls/"+ctl+"/evidence", ka, "stale.txt", []byte("stale"), map[string]string{"expiresAt": "2026-01-20"})
	wantStatus(t, stale, http.StatusCreated)
	e.upload("/v1/controls/"+ctl+"/evidence", kb, "other.txt", []byte("other org"), nil)
	e.clock.Advance(10 * 24 * 3600e9) // stale.txt is now expired

	rec := e.do("GET", "/v1/evidence-export?frameworkId=iso9001-2015", ka, nil)
	wantStatus(t, rec, http.StatusOK)
	if rec.Header().Get("Content-Type") != "application/zip" {
		t.Fatalf("content type %s", rec.Header().Get("Content-Type"))
	}
	files := readZip(t, rec.Body.Bytes())
	var m app.ExportManifest
	if err := json.Unmarshal(files["manifest.json"], &m); err != nil {
		t.Fatal(err)
	}
	if m.Scope != "framework" || len(m.Controls) != 37 {
		t.Fatalf("manifest: scope %s, %d controls", m.Scope, len(m.Controls))
	}
	n := 0
	for _, c := range m.Controls {
		for _, ev := range c.Evidence {
			n++
			sum := sha256.Sum256(files[ev.Path])
			if hex.EncodeToString(sum[:]) != ev.SHA256 {
				t.Fatalf("hash of %s does not match the manifest", ev.Path)
			}
		}
	}
	if n != 2 {
		t.Fatalf("full export has %d files, want 2", n)
	}
	rows, err := csv.NewReader(bytes.NewReader(files["manifest.csv"])).ReadAll()
	if err != nil || rows[0][8] != "sha256" || len(rows) != 1+36+2 {
		t.Fatalf("manifest.csv: %v rows, err %v", len(rows), err)
	}
	// Whole organization.
	rec = e.do("GET", "/v1/evidence-export", ka, nil)
	wantStatus(t, rec, http.StatusOK)
	json.Unmarshal(readZip(t, rec.Body.Bytes())["manifest.json"], &m)
	if m.Scope != "organization" || len(m.Controls) <= 37 {
		t.Fatalf("org export: %s %d", m.Scope, len(m.Controls))
	}
	// Auditor key: the auditor-scoped export only; current evidence, no internal fields.
	wantError(t, e.do("GET", "/v1/evidence-export", aud, nil), http.StatusForbidden, "forbidden")
	rec = e.do("GET", "/v1/evidence-export/auditor?frameworkId=iso9001-2015", aud, nil)
	wantStatus(t, rec, http.StatusOK)
	files = readZip(t, rec.Body.Bytes())
	raw := string(files["manifest.json"])
	if strings.Contains(raw, "stale.txt") || !strings.Contains(raw, "current.txt") || strings.Contains(raw, "uploadedBy") || strings.Contains(raw, "ownerId") {
		t.Fatalf("auditor manifest: %s", raw[:min(len(raw), 2000)])
	}
	for name := range files {
		if strings.Contains(name, "stale") || strings.Contains(name, "other") {
			t.Fatalf("auditor export holds %s", name)
		}
	}
	wantError(t, e.do("GET", "/v1/evidence-export/auditor", emp, nil), http.StatusForbidden, "forbidden")
	wantField(t, e.do("GET", "/v1/evidence-export/auditor?frameworkId=nope", aud, nil), "frameworkId")
	wantField(t, e.do("GET", "/v1/evidence-export?frameworkId=nope", ka, nil), "frameworkId")
}
