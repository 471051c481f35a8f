package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestPublishedPolicyAnswersQuestionnaire: the current published version of
// a policy answers a questionnaire question, cited as the policy; a draft
// never published and an unpublished edit are not offered.
func TestPublishedPolicyAnswersQuestionnaire(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	e.app.AddKnowledgeSource(e.app.PolicyKnowledgeSource())
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	other := e.key(e.org("Other", app.PlanProfessional), app.RoleAdmin)

	pol := e.newPolicy(admin, map[string]any{"name": "Backup Policy", "description": "backup and restore testing",
		"content": "Backups of production databases are taken nightly and a restore is tested every quarter."})
	pid := pol["id"].(string)
	draft := e.newPolicy(admin, map[string]any{"name": "Vulnerability Policy", "content": "Penetration tests are run every year by an external firm."})
	wantStatus(t, e.do("POST", "/v1/policies/"+pid+"/publish", admin, map[string]any{"changelog": "first"}), http.StatusCreated)
	// An edit after publishing stays a draft: the published text answers.
	wantStatus(t, e.do("PATCH", "/v1/policies/"+pid, admin, map[string]any{"content": "Backups are restored in a test every week (draft)."}), http.StatusOK)

	rec := e.do("POST", "/v1/questionnaire", admin, map[string]any{"name": "Customer review", "questions": []map[string]any{
		{"question": "How often do you test restoring backups?"},
		{"question": "How often are penetration tests run by an external firm?"},
	}})
	wantStatus(t, rec, http.StatusCreated)
	qid := obj(t, rec)["id"].(string)
	rec = e.do("POST", "/v1/questionnaire/"+qid+"/auto-answer", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	qs := obj(t, rec)["questionnaire"].(map[string]any)["questions"].([]any)
	a0 := qs[0].(map[string]any)
	src, _ := a0["source"].(map[string]any)
	if a0["status"] != "generated" || !strings.Contains(a0["answer"].(string), "tested every quarter") ||
		src == nil || src["type"] != "policy" || src["id"] != pid || src["name"] != "Backup Policy" {
		t.Fatalf("the published policy must answer, cited: %v", a0)
	}
	if a1 := qs[1].(map[string]any); a1["source"] != nil && a1["source"].(map[string]any)["id"] == draft["id"] {
		t.Fatalf("a never-published draft answered: %v", a1)
	}

	// Search shows the policy too, and only to its organization.
	rec = e.do("GET", "/v1/knowledge-base/search?q=restore+tested+quarter", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	hits := obj(t, rec)["data"].([]any)
	if len(hits) == 0 || hits[0].(map[string]any)["sourceType"] != "policy" || hits[0].(map[string]any)["sourceName"] != "Backup Policy" {
		t.Fatalf("search: %v", hits)
	}
	rec = e.do("GET", "/v1/knowledge-base/search?q=restore+tested+quarter", other, nil)
	wantStatus(t, rec, http.StatusOK)
	if n := len(obj(t, rec)["data"].([]any)); n != 0 {
		t.Fatalf("another organization finds A's policy: %d hits", n)
	}

	// An archived policy leaves the knowledge base.
	wantStatus(t, e.do("PATCH", "/v1/policies/"+pid, admin, map[string]any{"isArchived": true}), http.StatusOK)
	rec = e.do("GET", "/v1/knowledge-base/search?q=restore+tested+quarter", admin, nil)
	if n := len(obj(t, rec)["data"].([]any)); n != 0 {
		t.Fatalf("archived policy still answers: %d hits", n)
	}
}
