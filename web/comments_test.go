package web

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// uploadFile posts a multipart file to /v1/attachments and returns its id.
func uploadFile(t *testing.T, e *testEnv, key, entityType, entityID, name, content string) string {
	t.Helper()
	rec := uploadRec(t, e, key, map[string]string{"entityType": entityType, "entityId": entityID}, name, content)
	wantStatus(t, rec, http.StatusCreated)
	return obj(t, rec)["id"].(string)
}

func uploadRec(t *testing.T, e *testEnv, key string, fields map[string]string, name, content string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	// A fixed boundary makes equal uploads byte-identical (idempotency).
	if err := mw.SetBoundary("registers-test-boundary"); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		_ = mw.WriteField(k, fields[k])
	}
	if name != "" {
		fw, err := mw.CreateFormFile("file", name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(fw, content)
	}
	mw.Close()
	req := httptest.NewRequest("POST", "/v1/attachments", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return rec
}

func TestComments(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	e.sessions()
	org := e.org("Acme", "professional")
	other := e.org("Other", "professional")
	admin := e.key(org, app.RoleAdmin)
	owner := e.key(org, app.RoleOwner)
	auditorKey := e.key(org, app.RoleAuditor)
	auditor := e.person(org, "aud@example.com", app.RoleAuditor)
	aud := session(org, app.RoleAuditor, auditor)
	otherKey := e.key(other, app.RoleAdmin)

	// One resource of every entity type.
	vendor := e.create("/v1/vendors", admin, map[string]any{"name": "V"})["id"].(string)
	risk := e.create("/v1/risks", admin, map[string]any{"title": "R"})["id"].(string)
	finding := e.create("/v1/findings", admin, map[string]any{"title": "F"})["id"].(string)
	action := e.create("/v1/findings/"+finding+"/corrective-actions", admin, map[string]any{"title": "A"})["id"].(string)
	targets := map[string]string{"vendor": vendor, "person": auditor, "control": e.control(org), "task": e.task(org, ""),
		"risk": risk, "finding": finding, "corrective_action": action}
	for typ, id := range targets {
		c := e.create("/v1/comments", admin, map[string]any{"entityType": typ, "entityId": id, "content": "on " + typ})
		if c["entityType"] != typ || c["entityId"] != id || !strings.HasPrefix(c["id"].(string), "cmt_") {
			t.Errorf("comment on %s: %v", typ, c)
		}
		ids, _ := listIDs(t, e, "/v1/comments?entityType="+typ+"&entityId="+id, admin)
		if len(ids) != 1 {
			t.Errorf("comments on %s = %v", typ, ids)
		}
		// Another organization cannot see or comment on it.
		wantError(t, e.do("POST", "/v1/comments", otherKey, map[string]any{"entityType": typ, "entityId": id, "content": "x"}), http.StatusNotFound, "not_found")
		wantError(t, e.do("GET", "/v1/comments?entityType="+typ+"&entityId="+id, otherKey, nil), http.StatusNotFound, "not_found")
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"entityType": "risk", "entityId": risk}, "content"},
		{map[string]any{"entityType": "risk", "entityId": risk, "content": strings.Repeat("c", 50001)}, "content"},
		{map[string]any{"entityType": "planet", "entityId": risk, "content": "c"}, "entityType"},
		{map[string]any{"entityId": risk, "content": "c"}, "entityType"},
		{map[string]any{"entityType": "risk", "content": "c"}, "entityId"},
		{map[string]any{"entityType": "comment", "entityId": risk, "content": "c"}, "entityType"},
	} {
		wantField(t, e.do("POST", "/v1/comments", admin, c.body), c.field)
	}
	wantError(t, e.do("POST", "/v1/comments", admin, map[string]any{"entityType": "risk", "entityId": "rsk_nope", "content": "c"}), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/comments?entityType=risk", admin, nil), http.StatusBadRequest, "validation_error")

	// Auditor keys are read-only; signed-in auditors may comment.
	body := map[string]any{"entityType": "risk", "entityId": risk, "content": "auditor note"}
	wantError(t, e.do("POST", "/v1/comments", auditorKey, body), http.StatusForbidden, "forbidden")
	mine := e.create("/v1/comments", "", body, aud...)
	if mine["authorType"] != "person" || mine["authorId"] != auditor {
		t.Errorf("author: %v", mine)
	}
	path := "/v1/comments/" + mine["id"].(string)
	if got := obj(t, e.do("PATCH", path, "", map[string]any{"content": "edited"}, aud...)); got["content"] != "edited" {
		t.Errorf("author edit: %v", got)
	}
	if got := obj(t, e.do("PUT", path, admin, map[string]any{"content": "by admin"})); got["content"] != "by admin" {
		t.Errorf("admin edit: %v", got)
	}
	wantField(t, e.do("PATCH", path, admin, map[string]any{"content": ""}), "content")
	// Another auditor (not the author) may not edit or delete.
	aud2 := session(org, app.RoleAuditor, e.person(org, "aud2@example.com", app.RoleAuditor))
	wantError(t, e.do("PATCH", path, "", map[string]any{"content": "x"}, aud2...), http.StatusForbidden, "forbidden")
	wantError(t, e.do("DELETE", path, "", nil, aud2...), http.StatusForbidden, "forbidden")
	wantError(t, e.do("DELETE", path, auditorKey, nil), http.StatusForbidden, "forbidden")
	// A key's comment is editable by the same key, not by another admin-role key... but admins may.
	byKey := e.create("/v1/comments", admin, body)
	wantStatus(t, e.do("PATCH", "/v1/comments/"+byKey["id"].(string), admin, map[string]any{"content": "same key"}), http.StatusOK)
	wantStatus(t, e.do("DELETE", "/v1/comments/"+byKey["id"].(string), owner, nil), http.StatusNoContent)
	wantStatus(t, e.do("DELETE", path, "", nil, aud...), http.StatusNoContent)
	wantError(t, e.do("GET", path, admin, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("DELETE", path, admin, nil), http.StatusNotFound, "not_found")
}

func TestAttachments(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	other := e.org("Other", "professional")
	admin := e.key(org, app.RoleAdmin)
	otherKey := e.key(other, app.RoleAdmin)
	auditorKey := e.key(org, app.RoleAuditor)
	risk := e.create("/v1/risks", admin, map[string]any{"title": "R"})["id"].(string)

	rec := uploadRec(t, e, admin, map[string]string{"entityType": "risk", "entityId": risk, "description": "scan report"}, "report.pdf", "%PDF-1.7 content")
	wantStatus(t, rec, http.StatusCreated)
	at := obj(t, rec)
	id := at["id"].(string)
	if !strings.HasPrefix(id, "att_") || at["name"] != "report.pdf" || at["size"] != float64(16) || at["description"] != "scan report" ||
		at["downloadUrl"] != "/v1/attachments/"+id+"/download" || len(at["sha256"].(string)) != 64 {
		t.Errorf("attachment: %v", at)
	}
	ids, _ := listIDs(t, e, "/v1/attachments?entityType=risk&entityId="+risk, admin)
	if !sameIDs(ids, id) {
		t.Errorf("list = %v", ids)
	}
	dl := e.do("GET", "/v1/attachments/"+id+"/download", auditorKey, nil)
	wantStatus(t, dl, http.StatusOK)
	if dl.Body.String() != "%PDF-1.7 content" || !strings.Contains(dl.Header().Get("Content-Disposition"), `filename=report.pdf`) {
		t.Errorf("download: %q %q", dl.Body.String(), dl.Header().Get("Content-Disposition"))
	}
	wantStatus(t, e.do("GET", "/v1/attachments/"+id, auditorKey, nil), http.StatusOK)

	// Rules.
	wantField(t, uploadRec(t, e, admin, map[string]string{"entityType": "risk", "entityId": risk}, "", ""), "file")
	wantField(t, uploadRec(t, e, admin, map[string]string{"entityType": "galaxy", "entityId": risk}, "a.txt", "a"), "entityType")
	wantField(t, uploadRec(t, e, admin, map[string]string{"entityType": "risk"}, "a.txt", "a"), "entityId")
	wantField(t, uploadRec(t, e, admin, map[string]string{"entityType": "risk", "entityId": risk, "description": strings.Repeat("d", 501)}, "a.txt", "a"), "description")
	wantError(t, uploadRec(t, e, admin, map[string]string{"entityType": "risk", "entityId": "rsk_nope"}, "a.txt", "a"), http.StatusNotFound, "not_found")
	wantField(t, e.do("POST", "/v1/attachments", admin, map[string]any{"entityType": "risk"}), "Content-Type")
	big := strings.Repeat("x", 3<<20) // the test server's limit is 2 MiB
	wantError(t, uploadRec(t, e, admin, map[string]string{"entityType": "risk", "entityId": risk}, "big.bin", big), http.StatusRequestEntityTooLarge, "payload_too_large")
	wantError(t, uploadRec(t, e, auditorKey, map[string]string{"entityType": "risk", "entityId": risk}, "a.txt", "a"), http.StatusForbidden, "forbidden")

	// Another organization sees nothing.
	wantError(t, uploadRec(t, e, otherKey, map[string]string{"entityType": "risk", "entityId": risk}, "a.txt", "a"), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/attachments/"+id, otherKey, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/attachments/"+id+"/download", otherKey, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/attachments?entityType=risk&entityId="+risk, otherKey, nil), http.StatusNotFound, "not_found")

	// Idempotent upload.
	f := map[string]string{"entityType": "risk", "entityId": risk}
	a1 := uploadRec(t, e, admin, f, "same.txt", "same", "Idempotency-Key", "up-1")
	a2 := uploadRec(t, e, admin, f, "same.txt", "same", "Idempotency-Key", "up-1")
	if a1.Code != http.StatusCreated || a2.Code != http.StatusCreated || a2.Header().Get("Idempotent-Replayed") != "true" ||
		a1.Body.String() != a2.Body.String() {
		t.Errorf("idempotent upload: %d %d %q", a1.Code, a2.Code, a2.Header().Get("Idempotent-Replayed"))
	}
	wantError(t, uploadRec(t, e, admin, f, "same.txt", "changed", "Idempotency-Key", "up-1"), http.StatusConflict, "conflict")
}
