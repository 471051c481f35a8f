package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// jsonText answers a chat completion without streaming.
func jsonText(content string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content},
			"finish_reason": "stop"}}})
	}
}

// TestQuestionnaireModelDrafts: with a model configured, auto-answer asks
// it to draft the questions the knowledge base leaves open, from retrieved
// passages; a draft sits beside the still-open question with its sources
// and status needs_review, never as an answer. A question with no passage
// is not sent; a model fault leaves the questions open with a notice and
// keeps earlier drafts; draft: false skips the model.
func TestQuestionnaireModelDrafts(t *testing.T) {
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	kbSeed(t, e, admin, [2]string{"Do you encrypt customer data at rest?", "Yes. All customer data is encrypted at rest with AES-256."})
	upload := "Question,Answer\nIs stored customer data encrypted at rest?,\nWhat is the airspeed velocity of an unladen swallow?,\n"
	rec := e.uploadField("/v1/questionnaire/upload", admin, "file", "review.csv", []byte(upload), "name", "Customer review")
	wantStatus(t, rec, http.StatusCreated)
	qid := obj(t, rec)["id"].(string)

	f := &fakeModel{steps: []func(http.ResponseWriter){jsonText("We encrypt all customer data at rest with AES-256.")}}
	withModel(t, e, f, modelLimit)
	// minConfidence 1: the lexical matcher answers nothing here.
	rec = e.do("POST", "/v1/questionnaire/"+qid+"/auto-answer", admin, map[string]any{"minConfidence": 1})
	wantStatus(t, rec, http.StatusOK)
	res := obj(t, rec)
	if res["answered"] != float64(0) || res["drafted"] != float64(1) || res["notice"] != nil {
		t.Fatalf("auto-answer with a model: %v", res)
	}
	qs := res["questionnaire"].(map[string]any)["questions"].([]any)
	q0, q1 := qs[0].(map[string]any), qs[1].(map[string]any)
	d, _ := q0["draft"].(map[string]any)
	if q0["status"] != "untouched" || q0["answer"] != nil || d == nil || d["status"] != "needs_review" ||
		d["text"] != "We encrypt all customer data at rest with AES-256." || len(d["sources"].([]any)) == 0 {
		t.Fatalf("drafted question: %v", q0)
	}
	if src := d["sources"].([]any)[0].(map[string]any); src["type"] != "knowledge_entry" && !strings.HasPrefix(src["id"].(string), "kb") {
		t.Errorf("draft source: %v", src)
	}
	if q1["draft"] != nil || q1["status"] != "untouched" {
		t.Errorf("a question with no passage got a draft: %v", q1)
	}
	if all := f.all(); strings.Count(all, `"model"`) != 1 || !strings.Contains(all, "AES-256") || !strings.Contains(all, "encrypted at rest?") {
		t.Errorf("model requests: %s", all)
	}
	if got := obj(t, e.do("GET", "/v1/questionnaire/"+qid, admin, nil)); got["answeredQuestions"] != float64(0) {
		t.Errorf("a draft counted as an answer: %v", got["answeredQuestions"])
	}

	// The fake model has no more answers (it fails): the question stays
	// open, the earlier draft stays, a notice says why.
	rec = e.do("POST", "/v1/questionnaire/"+qid+"/auto-answer", admin, map[string]any{"minConfidence": 1})
	wantStatus(t, rec, http.StatusOK)
	res = obj(t, rec)
	if n, _ := res["notice"].(string); res["drafted"] != float64(0) || !strings.Contains(n, "stopped drafting") {
		t.Fatalf("auto-answer with a failing model: %v", res)
	}
	q0 = res["questionnaire"].(map[string]any)["questions"].([]any)[0].(map[string]any)
	if q0["status"] != "untouched" || q0["answer"] != nil || q0["draft"] == nil {
		t.Errorf("after a model fault: %v", q0)
	}

	before := len(f.all())
	rec = e.do("POST", "/v1/questionnaire/"+qid+"/auto-answer", admin, map[string]any{"minConfidence": 1, "draft": false})
	wantStatus(t, rec, http.StatusOK)
	if res = obj(t, rec); res["drafted"] != float64(0) || len(f.all()) != before {
		t.Errorf("draft: false still asked the model: %v", res)
	}
}
