package web

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/custom"
)

// onboardingSteps reads the checklist: each step's key and whether it is
// ticked; nil when the page has no checklist.
func onboardingSteps(body string) map[string]bool {
	if !strings.Contains(body, `id="getting-started"`) {
		return nil
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`<li data-step="([a-z]+)" class="(done|todo)">`).FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2] == "done"
	}
	return out
}

// TestUIOnboardingChecklist: the dashboard's getting-started checklist is
// ticked by the organization's data, shown to owners and admins, dismissed
// by them for the whole organization (never by an auditor or employee),
// and gone once every step is done.
func TestUIOnboardingChecklist(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)

	// A brand-new organization: nothing done, every step links to its page.
	fresh := e.org("Fresh", app.PlanEnterprise)
	e.withPassword(fresh, "owner@fresh.test", app.RoleOwner)
	b := e.browser()
	b.signIn("owner@fresh.test")
	rec := b.get("/")
	wantStatus(t, rec, http.StatusOK)
	if got := onboardingSteps(rec.Body.String()); len(got) != 6 || got["framework"] || got["people"] || got["policy"] || got["evidence"] || got["integration"] || got["trust"] {
		t.Fatalf("fresh organization: %v", got)
	}
	wantBody(t, rec, "0 of 6 done", `<a href="/integrations">Connect a system</a>`, `<a href="/frameworks">Enable a framework</a>`, `<a href="/people">Invite people</a>`,
		`<a href="/policies">Publish your first policy</a>`, `<a href="/controls">Upload your first evidence</a>`,
		`<a href="/trust-settings">Set up the trust portal</a>`, `action="/onboarding/dismiss"`, `<progress max="6" value="0"`)

	// The fixture has a framework and people: those two are ticked.
	f := e.uiFixture("Acme")
	ctx := e.ctx(f.org)
	for _, email := range []string{f.owner, f.admin} {
		b := e.browser()
		b.signIn(email)
		got := onboardingSteps(b.get("/").Body.String())
		if !got["framework"] || !got["people"] || got["policy"] || got["evidence"] || got["trust"] {
			t.Fatalf("%s sees %v", email, got)
		}
	}
	// Auditors and employees do not get the checklist, nor may dismiss it.
	for _, email := range []string{f.auditor, f.employee} {
		b := e.browser()
		b.signIn(email)
		if got := onboardingSteps(b.get("/").Body.String()); got != nil {
			t.Fatalf("%s sees the checklist", email)
		}
		rec := b.post("/onboarding/dismiss", nil)
		wantStatus(t, rec, http.StatusForbidden)
		wantBody(t, rec, "Not allowed")
	}
	owner := e.browser()
	owner.signIn(f.owner)
	if onboardingSteps(owner.get("/").Body.String()) == nil {
		t.Fatal("a refused dismissal hid the checklist")
	}

	// The data ticks the rest, whichever way it was done.
	p, err := e.app.CreatePolicy(ctx, app.PolicyInput{Name: app.Ptr("Security policy"), Content: app.Ptr("Text.")})
	if err != nil {
		t.Fatal(err)
	}
	if got := onboardingSteps(owner.get("/").Body.String()); got["policy"] {
		t.Fatal("a draft ticks the policy step")
	}
	if _, err := e.app.PublishPolicy(ctx, p.ID, app.PublishInput{Changelog: "v1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.UploadEvidence(ctx, f.control, "", app.EvidenceUpload{File: strings.NewReader("x"), Filename: "x.pdf",
		ContentType: "application/pdf"}); err != nil {
		t.Fatal(err)
	}
	rec = owner.get("/")
	if got := onboardingSteps(rec.Body.String()); !got["policy"] || !got["evidence"] || got["trust"] {
		t.Fatalf("after a policy and evidence: %v", got)
	}
	wantBody(t, rec, "4 of 6 done")
	e.app.RegisterIntegrationProviders(custom.New())
	if _, err := e.app.CreateConnection(ctx, app.ConnectionCreate{ProviderSlug: "custom"}); err != nil {
		t.Fatal(err)
	}
	if got := onboardingSteps(owner.get("/").Body.String()); !got["integration"] {
		t.Fatalf("after a connection: %v", got)
	}
	if _, err := e.app.UpdateTrustSettings(ctx, app.TrustSettingsPatch{Slug: app.Ptr("acme-trust")}); err != nil {
		t.Fatal(err)
	}
	if got := onboardingSteps(owner.get("/").Body.String()); got["trust"] {
		t.Fatal("trust settings saved but not enabled tick the step")
	}
	if _, err := e.app.UpdateTrustSettings(ctx, app.TrustSettingsPatch{Enabled: app.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if got := onboardingSteps(owner.get("/").Body.String()); got != nil {
		t.Fatalf("every step done, the checklist still shows: %v", got)
	}

	// Dismissal: an admin of the fresh organization's neighbour dismisses
	// for their own organization only.
	g := e.uiFixture("Globex")
	admin := e.browser()
	admin.signIn(g.admin)
	if onboardingSteps(admin.get("/").Body.String()) == nil {
		t.Fatal("no checklist for Globex")
	}
	wantRedirect(t, admin.post("/onboarding/dismiss", nil), "/?done=onboarding-dismissed")
	rec = admin.get("/?done=onboarding-dismissed")
	wantBody(t, rec, "dismissed for everyone in the organization")
	if onboardingSteps(rec.Body.String()) != nil {
		t.Fatal("the checklist shows after its dismissal")
	}
	gOwner := e.browser()
	gOwner.signIn(g.owner)
	if onboardingSteps(gOwner.get("/").Body.String()) != nil {
		t.Fatal("the dismissal is not for the whole organization")
	}
	wantRedirect(t, admin.post("/onboarding/dismiss", nil), "/?done=onboarding-dismissed") // again: no change
	if onboardingSteps(b.get("/").Body.String()) == nil {
		t.Fatal("another organization's dismissal hid Fresh's checklist")
	}
	// A forged form (no CSRF token) dismisses nothing.
	fb := e.browser()
	fb.signIn("owner@fresh.test")
	wantStatus(t, fb.post("/onboarding/dismiss", map[string][]string{"csrf_token": {"forged"}}), http.StatusForbidden)
	if onboardingSteps(fb.get("/").Body.String()) == nil {
		t.Fatal("a forged form dismissed the checklist")
	}
	// The dismissal is in the audit trail.
	l, err := e.app.ListAuditLog(e.ctx(g.org), app.AuditFilter{Action: "dismissed", Page: app.Page{Page: 1, PerPage: 10}})
	if err != nil || l.Total != 1 {
		t.Fatalf("audit records of the dismissal: %d (%v)", l.Total, err)
	}
}
