package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestUIVendorAssessments: the vendor page's Assess button (refused
// without a website), the assessment with its suggestion and reasons, and
// Accept; auditors see the assessments without the buttons.
func TestUIVendorAssessments(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Assess UI")
	b := e.browser()
	b.signIn(f.owner)
	page := "/vendors/" + f.vendor
	rec := b.get(page)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Risk assessments", "No assessment yet.", `action="`+page+`/assess"`)

	rec = b.post(page+"/assess", nil)
	if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Location"), "assess-no-website") {
		t.Fatalf("assess without a website: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	if _, err := e.app.UpdateVendor(e.ctx(f.org), f.vendor, app.VendorInput{Website: app.Some("https://hosting.invalid")}); err != nil {
		t.Fatal(err)
	}
	b.get(page)
	rec = b.post(page+"/assess", nil)
	if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Location"), "assess-queued") {
		t.Fatalf("assess: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	if n, err := e.app.ProcessVendorAssessments(context.Background()); err != nil || n != 1 {
		t.Fatalf("processed %d: %v", n, err)
	}
	rec = b.get(page)
	wantBody(t, rec, "https://hosting.invalid", "Suggested: probability", "impact: the vendor processes personal data", "Accept suggestion")
	as, err := e.app.ListVendorAssessments(e.ctx(f.org), f.vendor)
	if err != nil || len(as) != 1 {
		t.Fatalf("assessments %v %v", as, err)
	}
	rec = b.post(page+"/assessments/"+as[0].ID+"/accept", nil)
	if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Location"), "assess-accepted") {
		t.Fatalf("accept: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	v, err := e.app.GetVendor(e.ctx(f.org), f.vendor)
	if err != nil || v.InherentImpact != *as[0].SuggestedImpact || v.InherentProbability != *as[0].SuggestedProbability {
		t.Fatalf("vendor after accept %+v %v", v, err)
	}
	wantNoBody(t, b.get(page), "Accept suggestion")

	aud := e.browser()
	aud.signIn(f.auditor)
	rec = aud.get(page)
	wantBody(t, rec, "Risk assessments", "Suggested: probability")
	wantNoBody(t, rec, `action="`+page+`/assess"`)
	if rec := aud.post(page+"/assess", nil); rec.Code != http.StatusForbidden {
		t.Fatalf("auditor assess: %d", rec.Code)
	}
}
