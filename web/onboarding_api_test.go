package web

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestOnboardingAPI: the dashboard's getting-started checklist through the
// API: steps ticked by data, dismissal for the organization (audited,
// idempotent, seen by the web application), owners and admins only,
// scoped to the organization.
func TestOnboardingAPI(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Onboard API", app.PlanEnterprise)
	owner, admin := e.key(org, app.RoleOwner), e.key(org, app.RoleAdmin)
	type checklist struct {
		Steps []struct {
			Key     string `json:"key"`
			WebPath string `json:"webPath"`
			Done    bool   `json:"done"`
		} `json:"steps"`
		Done, Total       int
		Complete, Visible bool
		DismissedAt       *string `json:"dismissedAt"`
	}
	get := func(key string) checklist {
		t.Helper()
		rec := e.do("GET", "/v1/organization/onboarding", key, nil)
		wantStatus(t, rec, http.StatusOK)
		var c checklist
		if err := json.Unmarshal(rec.Body.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := get(owner)
	if c.Total != 6 || len(c.Steps) != 6 || c.Done != 0 || !c.Visible || c.DismissedAt != nil || c.Steps[0].Key != "framework" || c.Steps[0].WebPath != "/frameworks" {
		t.Fatalf("new organization's checklist: %+v", c)
	}
	// Enabling a framework through the API ticks the first step.
	wantStatus(t, e.do("POST", "/v1/frameworks/iso9001-2015/enable", admin, nil), http.StatusOK)
	if c = get(admin); !c.Steps[0].Done || c.Done != 1 {
		t.Errorf("after enabling a framework: %+v", c)
	}
	// Auditors, employees and contractors may neither read nor dismiss it.
	for _, ro := range []app.Role{app.RoleAuditor, app.RoleEmployee, app.RoleContractor} {
		k := e.key(org, ro)
		wantStatus(t, e.do("GET", "/v1/organization/onboarding", k, nil), http.StatusForbidden)
		wantStatus(t, e.do("POST", "/v1/organization/onboarding/dismiss", k, nil), http.StatusForbidden)
	}
	if c = get(owner); !c.Visible {
		t.Fatal("a refused dismissal hid the checklist")
	}
	// Dismissing: hidden, dated, audited; again changes nothing.
	rec := e.do("POST", "/v1/organization/onboarding/dismiss", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	var d checklist
	if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil || d.Visible || d.DismissedAt == nil {
		t.Fatalf("dismiss answered %s", rec.Body)
	}
	wantStatus(t, e.do("POST", "/v1/organization/onboarding/dismiss", owner, nil), http.StatusOK)
	if again := get(owner); again.DismissedAt == nil || *again.DismissedAt != *d.DismissedAt || again.Visible {
		t.Errorf("dismissing again changed the checklist: %+v", again)
	}
	audit := e.do("GET", "/v1/audit-log?resourceType=onboarding", owner, nil)
	var al struct {
		Data []struct{ Action string } `json:"data"`
	}
	if err := json.Unmarshal(audit.Body.Bytes(), &al); err != nil || len(al.Data) != 1 || al.Data[0].Action != "dismissed" {
		t.Errorf("audit log of the dismissal: %s", audit.Body)
	}
	// Another organization's checklist is its own.
	other := e.org("Other Onboard", app.PlanEnterprise)
	if o := get(e.key(other, app.RoleOwner)); !o.Visible || o.Done != 0 {
		t.Errorf("another organization sees %+v", o)
	}
}
