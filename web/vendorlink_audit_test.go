package web

import (
	"net/http"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestVendorLinkAnswersAuditedAsTheLink: answers a vendor gives through
// its questionnaire link are recorded in the audit trail with actorType
// vendor_link and the link's id, not as the system.
func TestVendorLinkAnswersAuditedAsTheLink(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	vnd := e.vendor(admin, "Cloudy Hosting")
	rec := e.do("POST", "/v1/questionnaire", admin, map[string]any{"templateId": "vendor-security-baseline", "vendorId": vnd})
	wantStatus(t, rec, http.StatusCreated)
	q := obj(t, rec)
	qid := q["id"].(string)
	first := q["questions"].([]any)[0].(map[string]any)["id"].(string)
	rec = e.do("POST", "/v1/questionnaire/"+qid+"/send", admin, map[string]any{"expiresInDays": 7})
	wantStatus(t, rec, http.StatusOK)
	token := obj(t, rec)["token"].(string)
	rec = e.do("POST", "/v1/vendor-questionnaire/"+token, "", map[string]any{"answers": []map[string]any{{"questionId": first, "answer": "Yes"}}, "submit": true})
	wantStatus(t, rec, http.StatusOK)

	link, err := e.db.GetQuestionnaireLink(e.ctx(org), app.HashToken(token))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range list(t, e.do("GET", "/v1/audit-log?resourceType=questionnaire&perPage=100", admin, nil)) {
		if r["resourceId"] == qid && r["action"] == "answered" {
			found = true
			if r["actorType"] != "vendor_link" || r["actorId"] != link.ID {
				t.Fatalf("answered by link recorded as %v/%v, want vendor_link/%s", r["actorType"], r["actorId"], link.ID)
			}
		}
	}
	if !found {
		t.Fatal("no audit record of the vendor's answers")
	}
}
