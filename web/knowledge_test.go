package web

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// upload sends a multipart/form-data request with one file and text fields.
func (e *testEnv) uploadField(path, key, field, filename string, content []byte, fields ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		if err := mw.WriteField(fields[i], fields[i+1]); err != nil {
			e.t.Fatal(err)
		}
	}
	if field != "" {
		fw, err := mw.CreateFormFile(field, filename)
		if err != nil {
			e.t.Fatal(err)
		}
		fw.Write(content)
	}
	mw.Close()
	return e.do("POST", path, key, buf.Bytes(), "Content-Type", mw.FormDataContentType())
}

func TestKnowledgeBaseCRUD(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	auditor := e.key(org, app.RoleAuditor)
	owner := e.person(org, "sec@acme.test", app.RoleAdmin)
	other := e.org("Other", app.PlanProfessional)
	otherKey := e.key(other, app.RoleAdmin)

	rec := e.do("POST", "/v1/knowledge-base/entries", admin, map[string]any{
		"question": "Do you encrypt data at rest?", "answer": "Yes, AES-256 on every volume.",
		"tags": []string{"Encryption", "storage", "encryption"}, "sourceDocument": "Cryptography Policy",
		"ownerId": owner, "reviewDate": "2026-06-30", "id": "kbe_forged", "createdAt": "2000-01-01T00:00:00Z"})
	wantStatus(t, rec, http.StatusCreated)
	m := obj(t, rec)
	id := m["id"].(string)
	if !strings.HasPrefix(id, "kbe_") || m["reviewDate"] != "2026-06-30" || m["ownerId"] != owner {
		t.Fatalf("entry: %v", m)
	}
	if tags := m["tags"].([]any); len(tags) != 2 || tags[0] != "encryption" {
		t.Fatalf("tags not normalized: %v", tags)
	}
	if m["createdAt"] == "2000-01-01T00:00:00Z" {
		t.Fatal("createdAt must be server-owned")
	}

	wantField(t, e.do("POST", "/v1/knowledge-base/entries", admin, map[string]any{"question": "q"}), "answer")
	wantField(t, e.do("POST", "/v1/knowledge-base/entries", admin, map[string]any{"question": " ", "answer": "a"}), "question")
	wantField(t, e.do("POST", "/v1/knowledge-base/entries", admin, map[string]any{"question": "q", "answer": "a", "reviewDate": "soon"}), "reviewDate")
	wantField(t, e.do("POST", "/v1/knowledge-base/entries", admin, map[string]any{"question": "q", "answer": "a", "ownerId": "usr_nope"}), "ownerId")
	wantField(t, e.do("POST", "/v1/knowledge-base/entries", admin, `{"question": 5}`), "question")
	wantError(t, e.do("POST", "/v1/knowledge-base/entries", auditor, map[string]any{"question": "q", "answer": "a"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/knowledge-base/entries", "", map[string]any{"question": "q", "answer": "a"}), http.StatusUnauthorized, "unauthorized")

	wantStatus(t, e.do("GET", "/v1/knowledge-base/entries/"+id, auditor, nil), http.StatusOK)
	rec = e.do("PATCH", "/v1/knowledge-base/entries/"+id, admin, map[string]any{"answer": "Yes. AES-256-GCM.", "ownerId": nil})
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["answer"] != "Yes. AES-256-GCM." || m["ownerId"] != nil || m["question"] != "Do you encrypt data at rest?" {
		t.Fatalf("patched: %v", m)
	}
	wantError(t, e.do("PATCH", "/v1/knowledge-base/entries/"+id, auditor, map[string]any{"answer": "x"}), http.StatusForbidden, "forbidden")

	// Another organization sees nothing.
	wantError(t, e.do("GET", "/v1/knowledge-base/entries/"+id, otherKey, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("PATCH", "/v1/knowledge-base/entries/"+id, otherKey, map[string]any{"answer": "x"}), http.StatusNotFound, "not_found")
	wantError(t, e.do("DELETE", "/v1/knowledge-base/entries/"+id, otherKey, nil), http.StatusNotFound, "not_found")
	rec = e.do("GET", "/v1/knowledge-base/search?q=encryption", otherKey, nil)
	wantStatus(t, rec, http.StatusOK)
	if n := len(obj(t, rec)["data"].([]any)); n != 0 {
		t.Fatalf("other org found %d hits", n)
	}

	rec = e.do("GET", "/v1/knowledge-base/entries?tag=Encryption", auditor, nil)
	wantStatus(t, rec, http.StatusOK)
	if meta := obj(t, rec)["meta"].(map[string]any); meta["total"] != float64(1) {
		t.Fatalf("tag filter: %v", meta)
	}
	rec = e.do("GET", "/v1/knowledge-base/entries?reviewDueBefore=2026-01-01", auditor, nil)
	if meta := obj(t, rec)["meta"].(map[string]any); meta["total"] != float64(0) {
		t.Fatalf("review filter: %v", meta)
	}
	wantField(t, e.do("GET", "/v1/knowledge-base/entries?reviewDueBefore=x", auditor, nil), "reviewDueBefore")

	// Employees see the entries they own, and do not search.
	emp := e.key(org, app.RoleEmployee)
	wantError(t, e.do("GET", "/v1/knowledge-base/search?q=encryption", emp, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/knowledge-base/entries/"+id, emp, nil), http.StatusNotFound, "not_found")
	rec = e.do("GET", "/v1/knowledge-base/entries", emp, nil)
	if meta := obj(t, rec)["meta"].(map[string]any); meta["total"] != float64(0) {
		t.Fatalf("employee list: %v", meta)
	}

	wantError(t, e.do("DELETE", "/v1/knowledge-base/entries/"+id, auditor, nil), http.StatusForbidden, "forbidden")
	wantStatus(t, e.do("DELETE", "/v1/knowledge-base/entries/"+id, admin, nil), http.StatusNoContent)
	wantError(t, e.do("GET", "/v1/knowledge-base/entries/"+id, admin, nil), http.StatusNotFound, "not_found")
	rec = e.do("GET", "/v1/knowledge-base/search?q=encrypt", admin, nil)
	if n := len(obj(t, rec)["data"].([]any)); n != 0 {
		t.Fatalf("deleted entry still found: %d", n)
	}
}

func TestKnowledgeBaseSearchRanksByRelevance(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	for _, qa := range [][2]string{
		{"Do you encrypt customer data at rest?", "Yes, AES-256."},
		{"Is multi-factor authentication required for administrators?", "Yes, hardware keys."},
		{"How often are backups tested?", "Quarterly restore tests; data is encrypted."},
		{"Do you have an incident response plan?", "Yes, reviewed yearly."},
	} {
		wantStatus(t, e.do("POST", "/v1/knowledge-base/entries", admin, map[string]any{"question": qa[0], "answer": qa[1]}), http.StatusCreated)
	}
	rec := e.do("GET", "/v1/knowledge-base/search?q=Is+customer+data+encrypted+at+rest%3F", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	m := obj(t, rec)
	data := m["data"].([]any)
	if len(data) != 2 {
		t.Fatalf("want 2 hits (question and answer match), got %v", data)
	}
	first := data[0].(map[string]any)
	if first["question"] != "Do you encrypt customer data at rest?" || first["sourceType"] != "entry" {
		t.Fatalf("best hit: %v", first)
	}
	if c := first["confidence"].(float64); c < 0.7 {
		t.Fatalf("confidence of the close match %v", c)
	}
	second := data[1].(map[string]any)
	if second["score"].(float64) >= first["score"].(float64) || second["confidence"].(float64) >= first["confidence"].(float64) {
		t.Fatalf("ranking: %v then %v", first, second)
	}
	// FTS5 syntax in the query is taken literally, never a 500.
	for _, q := range []string{`"`, `NEAR(`, `a*`, `col:x`, `AND OR NOT`, `)(`} {
		rec := e.do("GET", "/v1/knowledge-base/search?q="+strings.ReplaceAll(q, " ", "+"), admin, nil)
		wantStatus(t, rec, http.StatusOK)
	}
	wantField(t, e.do("GET", "/v1/knowledge-base/search", admin, nil), "q")
	wantField(t, e.do("GET", "/v1/knowledge-base/search?q=x&perPage=500", admin, nil), "perPage")
}

func TestKnowledgeBaseImportCSV(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	auditor := e.key(org, app.RoleAuditor)
	owner := e.person(org, "ciso@acme.test", app.RoleAdmin)
	csv := "\xef\xbb\xbfQuestion,Answer,Tags,Source,Owner,Review Date\n" +
		"Do you run penetration tests?,\"Yes, yearly by an external firm.\",pentest;testing,Security Testing Standard,ciso@acme.test,2026-12-31\n" +
		"\n" +
		"Is there a DPO?,Yes.,gdpr,,,\n"
	rec := e.uploadField("/v1/knowledge-base/entries/import", admin, "file", "kb.csv", []byte(csv))
	wantStatus(t, rec, http.StatusCreated)
	m := obj(t, rec)
	if m["imported"] != float64(2) {
		t.Fatalf("imported: %v", m)
	}
	first := m["data"].([]any)[0].(map[string]any)
	if first["ownerId"] != owner || first["sourceDocument"] != "Security Testing Standard" || first["reviewDate"] != "2026-12-31" ||
		len(first["tags"].([]any)) != 2 {
		t.Fatalf("row: %v", first)
	}
	// A bad row rejects the whole file and names the row.
	bad := "question,answer,owner\nA?,B,\n,C,\nD?,E,nobody@acme.test\n"
	rec = e.uploadField("/v1/knowledge-base/entries/import", admin, "file", "kb.csv", []byte(bad))
	wantField(t, rec, "rows[2].owner")
	bad = "question,answer\nA?,B\n,C\n"
	wantField(t, e.uploadField("/v1/knowledge-base/entries/import", admin, "file", "kb.csv", []byte(bad)), "rows[1].question")
	wantField(t, e.uploadField("/v1/knowledge-base/entries/import", admin, "file", "kb.csv", []byte("foo,bar\n1,2\n")), "file")
	wantField(t, e.uploadField("/v1/knowledge-base/entries/import", admin, "", "", nil), "file")
	rec = e.do("GET", "/v1/knowledge-base/entries", admin, nil)
	if meta := obj(t, rec)["meta"].(map[string]any); meta["total"] != float64(2) {
		t.Fatalf("a rejected import left rows: %v", meta)
	}
	wantError(t, e.uploadField("/v1/knowledge-base/entries/import", auditor, "file", "kb.csv", []byte(csv)), http.StatusForbidden, "forbidden")
}

// policySource is a knowledge source standing in for published policies.
type policySource struct{ docs []app.KnowledgeDocument }

func (p *policySource) Name() string { return "policy" }
func (p *policySource) Documents(_ context.Context, _ string) ([]app.KnowledgeDocument, error) {
	return p.docs, nil
}

func TestKnowledgeSourceIsSearched(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	src := &policySource{docs: []app.KnowledgeDocument{{ID: "pol_1", Name: "Access Control Policy",
		Title: "Access Control Policy: password requirements", Text: "Passwords have at least 14 characters and MFA is enforced."}}}
	e.app.AddKnowledgeSource(src)
	rec := e.do("GET", "/v1/knowledge-base/search?q=password+length+requirements", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	data := obj(t, rec)["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["sourceType"] != "policy" || data[0].(map[string]any)["sourceName"] != "Access Control Policy" {
		t.Fatalf("policy hit: %v", data)
	}
	// A withdrawn policy leaves the index.
	src.docs = nil
	rec = e.do("GET", "/v1/knowledge-base/search?q=password", admin, nil)
	if n := len(obj(t, rec)["data"].([]any)); n != 0 {
		t.Fatalf("withdrawn policy still found")
	}
}
