package web

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// idemUpload posts a multipart evidence upload with an Idempotency-Key.
func (e *testEnv) idemUpload(path, key, idem string, content []byte, fields map[string]string) *httptest.ResponseRecorder {
	e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.SetBoundary("fixed-boundary-for-the-request-hash")
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			e.t.Fatal(err)
		}
	}
	if content != nil {
		fw, err := mw.CreateFormFile("file", "report.txt")
		if err != nil {
			e.t.Fatal(err)
		}
		fw.Write(content)
	}
	mw.Close()
	req := httptest.NewRequest("POST", path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Idempotency-Key", idem)
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return rec
}

// TestEvidenceUploadPreparedOutsideTransaction: under an Idempotency-Key
// the upload's file is stored before the write transaction; the request
// still runs once per key, replays its first answer, refuses a different
// request under the same key, and reports bad input by field.
func TestEvidenceUploadPreparedOutsideTransaction(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	a, b := e.org("A", app.PlanProfessional), e.org("B", app.PlanProfessional)
	ka, kb, aud := e.key(a, app.RoleAdmin), e.key(b, app.RoleAdmin), e.key(a, app.RoleAuditor)
	ctl := e.firstControl(ka)
	path := "/v1/controls/" + ctl + "/evidence"
	content := []byte("signed access review, second quarter\n")

	first := e.idemUpload(path, ka, "upload-1", content, map[string]string{"description": "Q2 review"})
	ev := obj(t, first)
	if first.Code != http.StatusCreated || ev["description"] != "Q2 review" || ev["size"] != float64(len(content)) {
		t.Fatalf("upload: %d %s", first.Code, first.Body)
	}
	again := e.idemUpload(path, ka, "upload-1", content, map[string]string{"description": "Q2 review"})
	if again.Code != http.StatusCreated || again.Header().Get("Idempotent-Replayed") != "true" || obj(t, again)["id"] != ev["id"] {
		t.Fatalf("replay: %d %v %s", again.Code, again.Header(), again.Body)
	}
	if n := total(t, e.do("GET", path, ka, nil)); n != 1 {
		t.Fatalf("evidence after a replayed upload: %d, want 1", n)
	}
	dl := e.do("GET", "/v1/evidence/"+ev["id"].(string)+"/download", ka, nil)
	if dl.Code != http.StatusOK || !bytes.Equal(dl.Body.Bytes(), content) {
		t.Fatalf("download: %d %q", dl.Code, dl.Body)
	}
	wantError(t, e.idemUpload(path, ka, "upload-1", []byte("other content"), map[string]string{"description": "Q2 review"}),
		http.StatusConflict, "conflict")

	wantField(t, e.idemUpload(path, ka, "upload-2", nil, map[string]string{"description": "no file"}), "file")
	wantField(t, e.idemUpload(path, ka, "upload-3", content, map[string]string{"expiresAt": "soon"}), "expiresAt")
	wantError(t, e.idemUpload("/v1/controls/ctl_nope/evidence", ka, "upload-4", content, nil), http.StatusNotFound, "not_found")
	wantError(t, e.idemUpload(path, kb, "upload-5", content, nil), http.StatusNotFound, "not_found")
	wantError(t, e.idemUpload(path, aud, "upload-6", content, nil), http.StatusForbidden, "forbidden")
	if n := total(t, e.do("GET", path, ka, nil)); n != 1 {
		t.Fatalf("evidence after refused uploads: %d, want 1", n)
	}
}
