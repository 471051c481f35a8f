package web

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// scoreFramework creates and enables a custom framework of n requirements,
// each served by its own control, and returns its id and the control ids.
func (e *testEnv) scoreFramework(orgID string, n int) (string, []string) {
	e.t.Helper()
	ctx := e.ctx(orgID)
	f, err := e.app.CreateCustomFramework(ctx, app.FrameworkInput{Name: app.Ptr("Wiring")})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.app.EnableFramework(ctx, f.ID); err != nil {
		e.t.Fatal(err)
	}
	for i := range n {
		if _, err := e.app.AddRequirement(ctx, f.ID, app.RequirementInput{Ref: app.Ptr(fmt.Sprintf("W-%d", i)), Title: app.Ptr("Requirement")}); err != nil {
			e.t.Fatal(err)
		}
	}
	l, err := e.app.ListControls(ctx, app.ControlFilter{FrameworkID: f.ID, Page: app.Page{Page: 1, PerPage: 200}})
	if err != nil || len(l.Items) != n {
		e.t.Fatalf("controls %d err %v", len(l.Items), err)
	}
	ids := make([]string, n)
	for i, c := range l.Items {
		ids[i] = c.ID
	}
	return f.ID, ids
}

func (e *testEnv) score(key, frameworkID string) int {
	e.t.Helper()
	rec := e.do("GET", "/v1/frameworks/"+frameworkID, key, nil)
	wantStatus(e.t, rec, http.StatusOK)
	return int(obj(e.t, rec)["score"].(float64))
}

// TestOpenFindingsBlockScore: a high finding linked to an implemented
// control takes the control out of the score until it is resolved or closed;
// low and informational findings are shown but do not block.
func TestOpenFindingsBlockScore(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	fw, ctls := e.scoreFramework(org, 2)
	// The status rule (evidence task done, evidence valid) is tested
	// elsewhere; here the controls are set implemented directly.
	if _, err := e.raw().Exec(`UPDATE controls SET status = 'implemented' WHERE organization_id = ?`, org); err != nil {
		t.Fatal(err)
	}
	if s := e.score(key, fw); s != 100 {
		t.Fatalf("score %d, want 100", s)
	}

	low := e.create("/v1/findings", key, map[string]any{"title": "Cosmetic", "severity": "low", "linkedControlIds": []string{ctls[0]}})
	info := e.create("/v1/findings", key, map[string]any{"title": "Note", "severity": "informational", "linkedControlIds": []string{ctls[0]}})
	if s := e.score(key, fw); s != 100 {
		t.Fatalf("low/informational findings changed the score to %d", s)
	}

	high := e.create("/v1/findings", key, map[string]any{"title": "Open S3 bucket", "severity": "high", "linkedControlIds": []string{ctls[0]}})
	if s := e.score(key, fw); s != 50 {
		t.Fatalf("score with a high finding %d, want 50", s)
	}
	// The list shows a count, the control its open findings.
	for _, c := range list(t, e.do("GET", "/v1/controls?frameworkId="+fw, key, nil)) {
		want := 0
		if c["id"] == ctls[0] {
			want = 3
		}
		if int(c["openFindingCount"].(float64)) != want || c["openFindings"] != nil {
			t.Errorf("list control %v: openFindingCount %v openFindings %v", c["id"], c["openFindingCount"], c["openFindings"])
		}
		if c["countsAsMet"] != (c["id"] != ctls[0]) {
			t.Errorf("control %v countsAsMet %v", c["id"], c["countsAsMet"])
		}
	}
	c := obj(t, e.do("GET", "/v1/controls/"+ctls[0], key, nil))
	fs := c["openFindings"].([]any)
	if len(fs) != 3 || c["countsAsMet"] != false || c["assessment"] != "met" {
		t.Fatalf("control: %v", c)
	}
	blocking := map[string]bool{}
	for _, f := range fs {
		m := f.(map[string]any)
		blocking[m["id"].(string)] = m["blocking"].(bool)
		if m["title"] == "" || m["status"] != "open" {
			t.Errorf("open finding %v", m)
		}
	}
	if !blocking[high["id"].(string)] || blocking[low["id"].(string)] || blocking[info["id"].(string)] {
		t.Errorf("blocking %v", blocking)
	}
	if c := obj(t, e.do("GET", "/v1/controls/"+ctls[1], key, nil)); len(c["openFindings"].([]any)) != 0 {
		t.Errorf("control without findings: %v", c["openFindings"])
	}

	// in_review still blocks; resolved recovers.
	wantStatus(t, e.do("PATCH", "/v1/findings/"+high["id"].(string), key, map[string]any{"status": "in_review"}), http.StatusOK)
	if s := e.score(key, fw); s != 50 {
		t.Fatalf("score with an in-review finding %d, want 50", s)
	}
	wantStatus(t, e.do("PATCH", "/v1/findings/"+high["id"].(string), key, map[string]any{"status": "resolved"}), http.StatusOK)
	if s := e.score(key, fw); s != 100 {
		t.Fatalf("score after resolving %d, want 100", s)
	}

	// A medium finding blocks; closing it recovers. The SOA follows the same rule.
	med := e.create("/v1/findings", key, map[string]any{"content": "weak ciphers", "scope": "security", "severity": "medium", "linkedControlIds": []string{ctls[1]}})
	if s := e.score(key, fw); s != 50 {
		t.Fatalf("score with a medium finding %d, want 50", s)
	}
	// The framework list carries the same score.
	for _, f := range list(t, e.do("GET", "/v1/frameworks?enabled=true", key, nil)) {
		if f["id"] == fw && int(f["score"].(float64)) != 50 {
			t.Errorf("list score %v, want 50", f["score"])
		}
	}
	wantStatus(t, e.do("POST", "/v1/findings/"+med["id"].(string)+"/close", key, nil), http.StatusOK)
	if s := e.score(key, fw); s != 100 {
		t.Fatalf("score after closing %d, want 100", s)
	}
	if c := obj(t, e.do("GET", "/v1/controls/"+ctls[1], key, nil)); c["openFindingCount"].(float64) != 0 || c["countsAsMet"] != true {
		t.Errorf("closed finding still on control: %v", c)
	}
}

// TestOpenFindingsHiddenFromEmployees: an employee owning a control sees
// the count of its open findings but not the findings themselves.
func TestOpenFindingsHiddenFromEmployees(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	emp := e.person(org, "emp@example.com", app.RoleEmployee)
	ctl := e.control(org)
	wantStatus(t, e.do("PATCH", "/v1/controls/"+ctl, key, map[string]any{"ownerId": emp}), http.StatusOK)
	e.create("/v1/findings", key, map[string]any{"title": "Secret", "severity": "high", "linkedControlIds": []string{ctl}})
	e.sessions()
	rec := e.do("GET", "/v1/controls/"+ctl, "", nil, session(org, app.RoleEmployee, emp)...)
	c := obj(t, rec)
	if c["openFindingCount"].(float64) != 1 || c["openFindings"] != nil {
		t.Errorf("employee view: %v", c)
	}
}
