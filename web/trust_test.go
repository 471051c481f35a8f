package web

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// complianceSource stands in for the framework module.
type complianceSource struct{}

func (complianceSource) TrustFrameworks(_ context.Context, _ string, controls bool) ([]app.TrustFramework, error) {
	iso := app.TrustFramework{ID: "iso27001-2022", Name: "ISO/IEC 27001:2022", Score: app.Ptr(87), ControlsTotal: 93,
		ControlsImplemented: 80, ControlsInProgress: 5}
	if controls {
		iso.Controls = []app.TrustControl{{Name: "A.5.1 Policies for information security", Status: "implemented"}}
	}
	return []app.TrustFramework{iso, {ID: "soc2-2017", Name: "SOC 2", ControlsTotal: 60}}, nil
}

func enablePortal(t *testing.T, e *testEnv, key, slug string) {
	t.Helper()
	wantStatus(t, e.do("PATCH", "/v1/trust-portal/settings", key, map[string]any{"enabled": true, "slug": slug, "title": "Acme Trust Center",
		"overview": "Security at Acme.", "contactEmail": "security@acme.test", "primaryColor": "#112233"}), http.StatusOK)
}

func TestTrustSettings(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme Corp", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	auditor := e.key(org, app.RoleAuditor)
	other := e.key(e.org("Other", app.PlanProfessional), app.RoleAdmin)

	rec := e.do("GET", "/v1/trust-portal/settings", auditor, nil)
	wantStatus(t, rec, http.StatusOK)
	m := obj(t, rec)
	if m["enabled"] != false || !strings.HasPrefix(m["slug"].(string), "acme-corp") || m["ndaVersion"] != "1" || m["ndaText"] == "" ||
		!strings.HasSuffix(m["publicUrl"].(string), "/trust/"+m["slug"].(string)) {
		t.Fatalf("defaults: %v", m)
	}
	wantError(t, e.do("PATCH", "/v1/trust-portal/settings", auditor, map[string]any{"enabled": true}), http.StatusForbidden, "forbidden")
	wantField(t, e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"slug": "Bad Slug"}), "slug")
	wantField(t, e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"slug": "admin"}), "slug")
	wantField(t, e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"primaryColor": "red"}), "primaryColor")
	wantField(t, e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"logoUrl": "http://acme.test/logo.png"}), "logoUrl")
	wantField(t, e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"contactEmail": "nope"}), "contactEmail")
	wantField(t, e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"ndaText": " "}), "ndaText")

	rec = e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"enabled": true, "slug": "acme", "ndaText": "Keep it secret.",
		"frameworks": []string{"iso27001-2022", "iso27001-2022"}, "showControls": true})
	wantStatus(t, rec, http.StatusOK)
	m = obj(t, rec)
	if m["slug"] != "acme" || m["ndaVersion"] != "2" || len(m["frameworks"].([]any)) != 1 || m["showControls"] != true {
		t.Fatalf("patched: %v", m)
	}
	// Another organization cannot take the slug and keeps its own settings.
	wantField(t, e.do("PATCH", "/v1/trust-portal/settings", other, map[string]any{"slug": "acme"}), "slug")
	if m := obj(t, e.do("GET", "/v1/trust-portal/settings", other, nil)); !strings.HasPrefix(m["slug"].(string), "other") || m["enabled"] != false {
		t.Fatalf("other org's settings: %v", m)
	}
	rec = e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"ndaText": "Version three.", "ndaVersion": "2026-01"})
	if m := obj(t, rec); m["ndaVersion"] != "2026-01" {
		t.Fatalf("explicit version: %v", m)
	}
}

func TestTrustPortalPublicPage(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	auditor := e.key(org, app.RoleAuditor)

	// Disabled: nothing is public.
	wantStatus(t, e.do("GET", "/trust/acme", "", nil), http.StatusNotFound)
	wantError(t, e.do("GET", "/v1/trust/acme", "", nil), http.StatusNotFound, "not_found")

	rec := e.uploadField("/v1/trust-portal/documents", admin, "file", "soc2-bridge.pdf", []byte("%PDF bridge letter"), "access", "public", "description", "Bridge letter")
	wantStatus(t, rec, http.StatusCreated)
	pub := obj(t, rec)
	if pub["name"] != "soc2-bridge.pdf" || pub["access"] != "public" || pub["size"] != float64(18) {
		t.Fatalf("public doc: %v", pub)
	}
	rec = e.uploadField("/v1/trust-portal/documents", admin, "file", "pentest.pdf", []byte("%PDF pentest report"), "name", "Penetration test 2025")
	wantStatus(t, rec, http.StatusCreated)
	gated := obj(t, rec)
	if gated["access"] != "nda" {
		t.Fatalf("documents are NDA-gated by default: %v", gated)
	}
	wantField(t, e.uploadField("/v1/trust-portal/documents", admin, "file", "x.pdf", []byte("x"), "access", "secret"), "access")
	wantError(t, e.uploadField("/v1/trust-portal/documents", auditor, "file", "x.pdf", []byte("x")), http.StatusForbidden, "forbidden")

	enablePortal(t, e, admin, "acme")
	rec = e.do("GET", "/trust/acme", "", nil)
	wantStatus(t, rec, http.StatusOK)
	body := rec.Body.String()
	for _, want := range []string{"Acme Trust Center", "Security at Acme.", "No frameworks published.", "Penetration test 2025",
		"NDA required", `/v1/trust/acme/documents/` + pub["id"].(string), `action="/trust/acme/request"`, "--brand:#112233"} {
		if !strings.Contains(body, want) {
			t.Fatalf("page lacks %q: %s", want, body)
		}
	}
	if strings.Contains(body, "<script") || strings.Contains(body, "/documents/"+gated["id"].(string)) {
		t.Fatalf("page has a script or a gated link: %s", body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "style-src 'sha256-") {
		t.Fatalf("csp: %s", csp)
	}
	if len(rec.Header()["X-RateLimit-Limit"]) == 0 { // sent with the spec's exact spelling
		t.Fatal("public pages are rate limited")
	}

	rec = e.do("GET", "/v1/trust/acme", "", nil)
	wantStatus(t, rec, http.StatusOK)
	m := obj(t, rec)
	if m["frameworksPublished"] != false || len(m["frameworks"].([]any)) != 0 || len(m["documents"].([]any)) != 2 {
		t.Fatalf("json: %v", m)
	}
	for _, d := range m["documents"].([]any) {
		d := d.(map[string]any)
		if _, has := d["downloadUrl"]; has != (d["access"] == "public") {
			t.Fatalf("downloadUrl only for public documents: %v", d)
		}
	}

	rec = e.do("GET", "/v1/trust/acme/documents/"+pub["id"].(string), "", nil, "User-Agent", "curl/8")
	wantStatus(t, rec, http.StatusOK)
	if rec.Body.String() != "%PDF bridge letter" || !strings.Contains(rec.Header().Get("Content-Disposition"), "soc2-bridge.pdf") {
		t.Fatalf("download: %q %v", rec.Body.String(), rec.Header())
	}
	wantError(t, e.do("GET", "/v1/trust/acme/documents/"+gated["id"].(string), "", nil), http.StatusNotFound, "not_found")
	rec = e.do("GET", "/v1/trust-access/admin/downloads", auditor, nil)
	wantStatus(t, rec, http.StatusOK)
	dl := obj(t, rec)["data"].([]any)
	if len(dl) != 1 || dl[0].(map[string]any)["documentId"] != pub["id"] || dl[0].(map[string]any)["userAgent"] != "curl/8" {
		t.Fatalf("download log: %v", dl)
	}

	// With a compliance source wired in, the chosen frameworks appear.
	e.app.SetTrustComplianceSource(complianceSource{})
	rec = e.do("GET", "/trust/acme", "", nil)
	if !strings.Contains(rec.Body.String(), "No frameworks published.") {
		t.Fatal("no framework chosen yet, none may show")
	}
	wantStatus(t, e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"frameworks": []string{"iso27001-2022"}}), http.StatusOK)
	rec = e.do("GET", "/trust/acme", "", nil)
	body = rec.Body.String()
	if !strings.Contains(body, "ISO/IEC 27001:2022") || !strings.Contains(body, "87%") || !strings.Contains(body, "80 of 93") ||
		strings.Contains(body, "SOC 2") || strings.Contains(body, "A.5.1") {
		t.Fatalf("frameworks: %s", body)
	}
	wantStatus(t, e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"showControls": true}), http.StatusOK)
	if b := e.do("GET", "/trust/acme", "", nil).Body.String(); !strings.Contains(b, "A.5.1 Policies for information security") {
		t.Fatalf("controls: %s", b)
	}
	m = obj(t, e.do("GET", "/v1/trust/acme", "", nil))
	if m["frameworksPublished"] != true || m["frameworks"].([]any)[0].(map[string]any)["score"] != float64(87) {
		t.Fatalf("json frameworks: %v", m["frameworks"])
	}

	// Document management.
	id := gated["id"].(string)
	rec = e.do("PATCH", "/v1/trust-portal/documents/"+id, admin, map[string]any{"description": "Summary of the 2025 test"})
	wantStatus(t, rec, http.StatusOK)
	rec = e.do("GET", "/v1/trust-portal/documents?access=nda", auditor, nil)
	if d := obj(t, rec)["data"].([]any); len(d) != 1 || d[0].(map[string]any)["description"] != "Summary of the 2025 test" {
		t.Fatalf("list: %v", d)
	}
	rec = e.do("GET", "/v1/trust-portal/documents/"+id+"/download", auditor, nil)
	if rec.Body.String() != "%PDF pentest report" {
		t.Fatalf("member download: %q", rec.Body.String())
	}
	wantStatus(t, e.do("DELETE", "/v1/trust-portal/documents/"+id, admin, nil), http.StatusNoContent)
	wantError(t, e.do("GET", "/v1/trust-portal/documents/"+id, admin, nil), http.StatusNotFound, "not_found")

	// Disabling takes the portal down.
	wantStatus(t, e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"enabled": false}), http.StatusOK)
	wantStatus(t, e.do("GET", "/trust/acme", "", nil), http.StatusNotFound)
	wantError(t, e.do("GET", "/v1/trust/acme/documents/"+pub["id"].(string), "", nil), http.StatusNotFound, "not_found")
}

var accessLinkRe = regexp.MustCompile(`/trust/acme/access/(ta_[a-z0-9]+)`)

func TestTrustAccessThroughPages(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	auditor := e.key(org, app.RoleAuditor)
	other := e.key(e.org("Other", app.PlanProfessional), app.RoleOwner)
	rec := e.uploadField("/v1/trust-portal/documents", admin, "file", "soc2.pdf", []byte("%PDF soc2 type II"), "name", "SOC 2 Type II report")
	doc := obj(t, rec)["id"].(string)
	enablePortal(t, e, admin, "acme")

	// The request form.
	wantStatus(t, e.postForm("/trust/acme/request", url.Values{"name": {"Eve"}, "email": {"eve@evil.test"}}, "Sec-Fetch-Site", "cross-site"), http.StatusForbidden)
	rec = e.postForm("/trust/acme/request", url.Values{"name": {"Bob"}, "email": {"not-an-email"}})
	wantStatus(t, rec, http.StatusBadRequest)
	if !strings.Contains(rec.Body.String(), "email must be an email address") || !strings.Contains(rec.Body.String(), `value="Bob"`) {
		t.Fatalf("form error page: %s", rec.Body.String())
	}
	rec = e.postForm("/trust/acme/request", url.Values{"name": {"Bob Buyer"}, "email": {"Bob@Customer.test"}, "company": {"Customer Ltd"},
		"reason": {"Vendor due diligence"}}, "User-Agent", "Mozilla/5.0 test")
	wantStatus(t, rec, http.StatusCreated)
	m := accessLinkRe.FindStringSubmatch(rec.Body.String())
	if m == nil || !strings.Contains(rec.Body.String(), "waiting for your NDA signature") {
		t.Fatalf("no access link: %s", rec.Body.String())
	}
	token := m[1]
	accessPage := "/trust/acme/access/" + token

	rec = e.do("GET", "/v1/trust-access/admin/requests?status=under_review", auditor, nil)
	wantStatus(t, rec, http.StatusOK)
	reqs := obj(t, rec)["data"].([]any)
	if len(reqs) != 1 {
		t.Fatalf("requests: %v", reqs)
	}
	r := reqs[0].(map[string]any)
	rid := r["id"].(string)
	if r["email"] != "bob@customer.test" || r["company"] != "Customer Ltd" || r["reason"] != "Vendor due diligence" || r["ndaSignedAt"] != nil {
		t.Fatalf("request: %v", r)
	}
	if _, leaked := r["token"]; leaked {
		t.Fatal("the token must not be listed")
	}

	// No approval before the NDA is signed; no documents before approval.
	wantError(t, e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/approve", admin, nil), http.StatusConflict, "conflict")
	wantError(t, e.do("GET", "/v1/trust-access/access/"+token+"/documents/"+doc, "", nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/trust-access/access/"+token+"/documents", "", nil), http.StatusForbidden, "forbidden")

	// Sign through the page.
	rec = e.do("GET", accessPage, "", nil)
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), "Non-disclosure agreement (version 1)") || !strings.Contains(rec.Body.String(), "Confidentiality undertaking") {
		t.Fatalf("access page: %s", rec.Body.String())
	}
	wantStatus(t, e.postForm(accessPage+"/nda", url.Values{"name": {"Bob"}, "email": {"bob@customer.test"}, "accept": {"true"}}, "Origin", "https://evil.test", "Sec-Fetch-Site", ""), http.StatusForbidden)
	wantStatus(t, e.postForm(accessPage+"/nda", url.Values{"name": {"Bob"}, "email": {"other@customer.test"}, "accept": {"true"}}), http.StatusBadRequest)
	wantStatus(t, e.postForm(accessPage+"/nda", url.Values{"name": {"Bob"}, "email": {"bob@customer.test"}}), http.StatusBadRequest)
	e.clock.Advance(time.Minute)
	rec = e.postForm(accessPage+"/nda", url.Values{"name": {"Bob Buyer"}, "email": {"bob@customer.test"}, "accept": {"true"}}, "User-Agent", "Mozilla/5.0 test")
	wantStatus(t, rec, http.StatusSeeOther)
	wantStatus(t, e.postForm(accessPage+"/nda", url.Values{"name": {"Bob Buyer"}, "email": {"bob@customer.test"}, "accept": {"true"}}), http.StatusConflict)
	wantStatus(t, e.do("GET", "/trust/other-slug/access/"+token, "", nil), http.StatusNotFound)

	rec = e.do("GET", "/v1/trust-portal/nda-signatories", auditor, nil)
	wantStatus(t, rec, http.StatusOK)
	sigs := obj(t, rec)["data"].([]any)
	if len(sigs) != 1 {
		t.Fatalf("signatories: %v", sigs)
	}
	sig := sigs[0].(map[string]any)
	if sig["name"] != "Bob Buyer" || sig["ndaVersion"] != "1" || sig["ipAddress"] != "192.0.2.1" || sig["signedAt"] != "2026-01-15T10:01:00Z" ||
		sig["requestId"] != rid || len(sig["ndaSha256"].(string)) != 64 || sig["userAgent"] != "Mozilla/5.0 test" {
		t.Fatalf("signature: %v", sig)
	}

	// The decision.
	wantError(t, e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/approve", auditor, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/approve", other, nil), http.StatusNotFound, "not_found")
	wantField(t, e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/approve", admin, map[string]any{"durationDays": 0}), "durationDays")
	rec = e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/approve", admin, map[string]any{"durationDays": 2})
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["status"] != "approved" || m["accessExpiresAt"] != "2026-01-17T10:01:00Z" {
		t.Fatalf("approved: %v", m)
	}
	wantError(t, e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/deny", admin, nil), http.StatusConflict, "conflict")

	rec = e.do("GET", accessPage, "", nil)
	if b := rec.Body.String(); !strings.Contains(b, "access granted") || !strings.Contains(b, "/v1/trust-access/access/"+token+"/documents/"+doc) {
		t.Fatalf("granted page: %s", b)
	}
	rec = e.do("GET", "/v1/trust-access/access/"+token+"/documents/"+doc, "", nil)
	wantStatus(t, rec, http.StatusOK)
	if rec.Body.String() != "%PDF soc2 type II" {
		t.Fatalf("gated download: %q", rec.Body.String())
	}
	rec = e.do("GET", "/v1/trust-access/admin/downloads?requestId="+rid, auditor, nil)
	if d := obj(t, rec)["data"].([]any); len(d) != 1 || d[0].(map[string]any)["documentId"] != doc {
		t.Fatalf("logged downloads: %v", d)
	}
	rec = e.do("GET", "/v1/trust-access/access/"+token+"/documents", "", nil)
	wantStatus(t, rec, http.StatusOK)
	if d := obj(t, rec)["data"].([]any); len(d) != 1 || !strings.Contains(d[0].(map[string]any)["downloadUrl"].(string), token) {
		t.Fatalf("granted documents: %v", d)
	}

	// The link expires with the access.
	e.clock.Advance(48 * time.Hour)
	wantError(t, e.do("GET", "/v1/trust-access/access/"+token+"/documents/"+doc, "", nil), http.StatusNotFound, "not_found")
	wantStatus(t, e.do("GET", accessPage, "", nil), http.StatusNotFound)
	rec = e.do("GET", "/v1/trust-access/admin/downloads?requestId="+rid, auditor, nil)
	if n := obj(t, rec)["meta"].(map[string]any)["total"]; n != float64(1) {
		t.Fatalf("a refused download was logged: %v", n)
	}
}

func TestTrustAccessJSONDenyRevoke(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	auditor := e.key(org, app.RoleAuditor)
	other := e.key(e.org("Other", app.PlanProfessional), app.RoleOwner)
	doc := obj(t, e.uploadField("/v1/trust-portal/documents", admin, "file", "iso.pdf", []byte("%PDF iso cert")))["id"].(string)

	wantError(t, e.do("POST", "/v1/trust-access/acme/requests", "", map[string]any{"name": "A", "email": "a@b.test"}), http.StatusNotFound, "not_found")
	enablePortal(t, e, admin, "acme")
	wantField(t, e.do("POST", "/v1/trust-access/acme/requests", "", map[string]any{"email": "a@b.test"}), "name")
	wantError(t, e.do("POST", "/v1/trust-access/admin/requests", "", map[string]any{"name": "A", "email": "a@b.test"}), http.StatusNotFound, "not_found")

	request := func(email string) (string, string) {
		rec := e.do("POST", "/v1/trust-access/acme/requests", "", map[string]any{"name": "Visitor", "email": email, "company": "C", "reason": "R"})
		wantStatus(t, rec, http.StatusCreated)
		m := obj(t, rec)
		return m["id"].(string), m["token"].(string)
	}
	sign := func(token, email string) {
		rec := e.do("POST", "/v1/trust-access/nda/"+token+"/sign", "", map[string]any{"name": "Visitor", "email": email, "accept": true})
		wantStatus(t, rec, http.StatusOK)
		if m := obj(t, rec); m["ndaSignedAt"] == nil || m["granted"] != false {
			t.Fatalf("signed: %v", m)
		}
	}

	// Denied.
	rid, token := request("deny@c.test")
	rec := e.do("GET", "/v1/trust-access/nda/"+token, "", nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["ndaVersion"] != "1" || m["status"] != "under_review" || m["organization"] != "Acme" {
		t.Fatalf("nda view: %v", m)
	}
	wantField(t, e.do("POST", "/v1/trust-access/nda/"+token+"/sign", "", map[string]any{"name": "V", "email": "deny@c.test", "accept": true}), "name")
	wantError(t, e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/deny", other, nil), http.StatusNotFound, "not_found")
	rec = e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/deny", admin, map[string]any{"reason": "Unknown company"})
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["status"] != "denied" || m["decisionReason"] != "Unknown company" || m["decidedAt"] == nil {
		t.Fatalf("denied: %v", m)
	}
	wantError(t, e.do("POST", "/v1/trust-access/nda/"+token+"/sign", "", map[string]any{"name": "Visitor", "email": "deny@c.test", "accept": true}), http.StatusConflict, "conflict")
	wantError(t, e.do("GET", "/v1/trust-access/access/"+token+"/documents/"+doc, "", nil), http.StatusForbidden, "forbidden")

	// Approved, then revoked.
	rid, token = request("ok@c.test")
	sign(token, "OK@c.test")
	wantError(t, e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/revoke", admin, nil), http.StatusConflict, "conflict")
	wantStatus(t, e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/approve", admin, nil), http.StatusOK)
	wantStatus(t, e.do("GET", "/v1/trust-access/access/"+token+"/documents/"+doc, "", nil), http.StatusOK)
	wantError(t, e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/revoke", auditor, nil), http.StatusForbidden, "forbidden")
	rec = e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/revoke", admin, map[string]any{"reason": "Contract ended"})
	if m := obj(t, rec); m["status"] != "revoked" {
		t.Fatalf("revoked: %v", m)
	}
	wantError(t, e.do("GET", "/v1/trust-access/access/"+token+"/documents/"+doc, "", nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/trust-access/nda/ta_unknown", "", nil), http.StatusNotFound, "not_found")

	// Another organization sees none of it.
	for _, p := range []string{"/v1/trust-access/admin/requests/" + rid, "/v1/trust-portal/documents/" + doc, "/v1/trust-portal/documents/" + doc + "/download"} {
		wantError(t, e.do("GET", p, other, nil), http.StatusNotFound, "not_found")
	}
	wantError(t, e.do("PATCH", "/v1/trust-portal/documents/"+doc, other, map[string]any{"name": "x"}), http.StatusNotFound, "not_found")
	wantError(t, e.do("DELETE", "/v1/trust-portal/documents/"+doc, other, nil), http.StatusNotFound, "not_found")
	for _, p := range []string{"/v1/trust-access/admin/requests", "/v1/trust-portal/nda-signatories", "/v1/trust-access/admin/downloads", "/v1/trust-portal/documents"} {
		rec := e.do("GET", p, other, nil)
		wantStatus(t, rec, http.StatusOK)
		if n := obj(t, rec)["meta"].(map[string]any)["total"]; n != float64(0) {
			t.Fatalf("%s: other org sees %v", p, n)
		}
	}
	wantError(t, e.do("PATCH", "/v1/trust-portal/documents/"+doc, auditor, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("DELETE", "/v1/trust-portal/documents/"+doc, auditor, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/deny", auditor, nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/trust-access/admin/requests", "", nil), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("POST", "/v1/trust-access/admin/requests/"+rid+"/revoke", other, nil), http.StatusNotFound, "not_found")
	employee := e.key(org, app.RoleEmployee)
	for _, p := range []string{"/v1/trust-portal/settings", "/v1/trust-portal/documents", "/v1/trust-portal/documents/" + doc,
		"/v1/trust-portal/documents/" + doc + "/download", "/v1/trust-portal/nda-signatories", "/v1/trust-access/admin/requests",
		"/v1/trust-access/admin/requests/" + rid, "/v1/trust-access/admin/downloads"} {
		wantError(t, e.do("GET", p, employee, nil), http.StatusForbidden, "forbidden")
	}
}
