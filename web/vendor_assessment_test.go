package web

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/https"
	"github.com/compliance-appliance/compliance/integrations/outbound"
	"github.com/compliance-appliance/compliance/integrations/webfetch"
)

// vendorSite is a vendor's web site over TLS: good serves every security
// header, a valid security.txt and a linked trust page; bad serves none.
func vendorSite(t *testing.T, good bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if good {
			w.Header().Set("Strict-Transport-Security", "max-age=31536000")
			w.Header().Set("Content-Security-Policy", "default-src 'self'")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("X-Frame-Options", "DENY")
			w.Header().Set("Referrer-Policy", "no-referrer")
		}
		switch {
		case r.URL.Path == "/.well-known/security.txt" && good:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write([]byte("# security.txt\nContact: mailto:security@vendor.example\nContact: https://vendor.example/report\n" +
				"Expires: 2030-01-01T00:00:00Z\nPolicy: https://vendor.example/disclosure\nPreferred-Languages: en, de\n"))
		case r.URL.Path == "/trust" && good:
			_, _ = w.Write([]byte("<h1>Trust center</h1>"))
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html")
			if good {
				_, _ = w.Write([]byte(`<html><a href="/pricing">Pricing</a> <a href="/trust">Trust center</a></html>`))
			} else {
				_, _ = w.Write([]byte(`<html><a href="/pricing">Pricing</a></html>`))
			}
		default:
			http.NotFound(w, r)
		}
	}))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// TestVendorAssessment: a good and a bad vendor site, assessed on request
// through the outbound client, with security.txt and the trust page read,
// a suggestion with reasons, accepted onto the vendor; bad input, another
// organization and the auditor.
func TestVendorAssessment(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	good, bad := vendorSite(t, true), vendorSite(t, false)
	pool := x509.NewCertPool()
	pool.AddCert(good.Certificate())
	pool.AddCert(bad.Certificate())
	c, err := outbound.New(outbound.Options{TLSConfig: &tls.Config{RootCAs: pool}, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.app.RegisterIntegrationProviders(https.New(c))
	e.app.SetWebFetcher(webfetch.New(c))
	org := e.org("Acme", app.PlanProfessional)
	owner := e.key(org, app.RoleOwner)
	mk := func(name, site string, extra map[string]any) string {
		body := map[string]any{"name": name, "description": name + " vendor", "website": site}
		for k, v := range extra {
			body[k] = v
		}
		rec := e.do("POST", "/v1/vendors", owner, body)
		wantStatus(t, rec, http.StatusCreated)
		return obj(t, rec)["id"].(string)
	}
	goodV := mk("Good", good.URL, nil)
	badV := mk("Bad", bad.URL, map[string]any{"criticality": "critical", "processesPersonalData": true})
	noSite := mk("Offline", "", nil)

	rec := e.do("POST", "/v1/internal/vendors/risk-assessment/trigger-single", owner, map[string]any{"vendorId": goodV}, "Idempotency-Key", "assess-1")
	wantStatus(t, rec, http.StatusCreated)
	q := obj(t, rec)
	if q["status"] != "queued" || q["runId"] != q["id"] || q["vendorId"] != goodV {
		t.Fatalf("queued %v", q)
	}
	again := e.do("POST", "/v1/internal/vendors/risk-assessment/trigger-single", owner, map[string]any{"vendorId": goodV}, "Idempotency-Key", "assess-1")
	if obj(t, again)["id"] != q["id"] {
		t.Fatal("the Idempotency-Key replay queued a second assessment")
	}
	rec = e.do("POST", "/v1/internal/vendors/risk-assessment/trigger-batch", owner, map[string]any{"vendors": []any{
		map[string]any{"vendorId": badV}, map[string]any{"vendorId": noSite}}})
	wantStatus(t, rec, http.StatusCreated)
	b := obj(t, rec)
	if len(b["assessments"].([]any)) != 1 || len(b["skipped"].([]any)) != 1 || b["skipped"].([]any)[0].(map[string]any)["vendorId"] != noSite {
		t.Fatalf("batch %v", b)
	}
	// Nothing ran yet: accepting a queued assessment is a conflict.
	wantError(t, e.do("POST", "/v1/vendors/"+goodV+"/assessments/"+q["id"].(string)+"/accept", owner, nil), http.StatusConflict, "conflict")
	if n, err := e.app.ProcessVendorAssessments(context.Background()); err != nil || n != 2 {
		t.Fatalf("processed %d: %v", n, err)
	}

	rec = e.do("GET", "/v1/vendors/"+goodV+"/assessments/"+q["id"].(string), owner, nil)
	wantStatus(t, rec, http.StatusOK)
	ga := obj(t, rec)
	res := ga["results"].(map[string]any)
	st := res["securityTxt"].(map[string]any)
	if ga["status"] != "completed" || ga["suggestedProbability"] != "unlikely" || ga["suggestedImpact"] != "minor" {
		t.Fatalf("good assessment %v", ga)
	}
	if st["found"] != true || len(st["contact"].([]any)) != 2 || st["expired"] != false || len(st["problems"].([]any)) != 0 ||
		st["preferredLanguages"] != "en, de" || len(st["policy"].([]any)) != 1 {
		t.Fatalf("security.txt %v", st)
	}
	if tp := res["trustPage"].(map[string]any); tp["reachable"] != true || !strings.HasSuffix(tp["url"].(string), "/trust") {
		t.Fatalf("trust page %v", tp)
	}
	if len(res["checks"].([]any)) != 6 {
		t.Fatalf("https checks %v", res["checks"])
	}
	for _, c := range res["checks"].([]any) {
		if c.(map[string]any)["status"] != "pass" {
			t.Fatalf("a good site failed %v", c)
		}
	}

	l := list(t, e.do("GET", "/v1/vendors/"+badV+"/assessments", owner, nil))
	if len(l) != 1 {
		t.Fatalf("bad vendor's assessments %v", l)
	}
	ba := l[0]
	reasons := strings.Join(func() []string {
		var out []string
		for _, r := range ba["reasons"].([]any) {
			out = append(out, r.(string))
		}
		return out
	}(), "\n")
	if ba["status"] != "completed" || ba["suggestedProbability"] != "possible" || ba["suggestedImpact"] != "severe" {
		t.Fatalf("bad assessment %v", ba)
	}
	for _, want := range []string{"no security.txt", "HSTS", "personal data", "critical", "no reachable trust"} {
		if !strings.Contains(reasons, want) {
			t.Errorf("reasons lack %q:\n%s", want, reasons)
		}
	}

	// Accept: the vendor's inherent risk takes the suggestion, once.
	rec = e.do("POST", "/v1/vendors/"+badV+"/assessments/"+ba["id"].(string)+"/accept", owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["acceptedAt"] == nil {
		t.Fatalf("accepted %s", rec.Body.String())
	}
	v := obj(t, e.do("GET", "/v1/vendors/"+badV, owner, nil))
	if v["inherentProbability"] != "possible" || v["inherentImpact"] != "severe" {
		t.Fatalf("vendor after accept %v", v)
	}
	wantError(t, e.do("POST", "/v1/vendors/"+badV+"/assessments/"+ba["id"].(string)+"/accept", owner, nil), http.StatusConflict, "conflict")
	var n int
	if err := e.raw().QueryRow(`SELECT count(*) FROM audit_log WHERE organization_id = ? AND action = 'assessment_accepted'`, org).Scan(&n); err != nil || n != 1 {
		t.Fatalf("audit of the acceptance: %d %v", n, err)
	}
	// An assessment is reached through its own vendor only.
	wantError(t, e.do("GET", "/v1/vendors/"+goodV+"/assessments/"+ba["id"].(string), owner, nil), http.StatusNotFound, "not_found")

	// Bad input names the field.
	wantField(t, e.do("POST", "/v1/internal/vendors/risk-assessment/trigger-single", owner, map[string]any{}), "vendorId")
	wantField(t, e.do("POST", "/v1/internal/vendors/risk-assessment/trigger-single", owner, map[string]any{"vendorId": noSite}), "vendorId")
	wantField(t, e.do("POST", "/v1/internal/vendors/risk-assessment/trigger-batch", owner, map[string]any{"vendors": []any{}}), "vendors")
	wantField(t, e.do("POST", "/v1/internal/vendors/risk-assessment/trigger-batch", owner, map[string]any{"vendors": []any{
		map[string]any{"vendorId": "vnd_nope"}}}), "vendors[0].vendorId")

	// Another organization: 404; the auditor reads only.
	other := e.key(e.org("Other", app.PlanProfessional), app.RoleOwner)
	wantError(t, e.do("GET", "/v1/vendors/"+goodV+"/assessments", other, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/internal/vendors/risk-assessment/trigger-single", other, map[string]any{"vendorId": goodV}), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/vendors/"+goodV+"/assessments/"+q["id"].(string)+"/accept", other, nil), http.StatusNotFound, "not_found")
	aud := e.key(org, app.RoleAuditor)
	wantStatus(t, e.do("GET", "/v1/vendors/"+goodV+"/assessments", aud, nil), http.StatusOK)
	// The MCP read tool.
	cs := mcpSession(t, e, http.Header{"X-Api-Key": {aud}})
	out, isErr := callTool(t, cs, "list_vendor_assessments", map[string]any{"vendorId": badV})
	if isErr || len(out["data"].([]any)) != 1 || out["data"].([]any)[0].(map[string]any)["suggestedImpact"] != "severe" {
		t.Fatalf("list_vendor_assessments: %v", out)
	}
	otherCS := mcpSession(t, e, http.Header{"X-Api-Key": {other}})
	if out, _ := callTool(t, otherCS, "list_vendor_assessments", map[string]any{"vendorId": badV}); !strings.Contains(fmt.Sprint(out["error"]), "not_found") {
		t.Fatalf("another organization's vendor: %v", out)
	}
	wantError(t, e.do("POST", "/v1/internal/vendors/risk-assessment/trigger-single", aud, map[string]any{"vendorId": goodV}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/vendors/"+goodV+"/assessments/"+q["id"].(string)+"/accept", aud, nil), http.StatusForbidden, "forbidden")
}

// TestParseSecurityTxt: RFC 9116's required fields and their problems.
func TestParseSecurityTxt(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var st app.SecurityTxt
	app.ParseSecurityTxt("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nContact: mailto:a@b.example\nExpires: 2025-06-01T00:00:00Z\nExpires: 2027-01-01T00:00:00Z\n", now, &st)
	if !st.Signed || len(st.Contact) != 1 || st.Expired || len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "more than once") {
		t.Fatalf("signed, twice-expiring file: %+v", st)
	}
	st = app.SecurityTxt{}
	app.ParseSecurityTxt("Expires: 2025-06-01T00:00:00Z\n", now, &st)
	if !st.Expired || len(st.Problems) != 2 {
		t.Fatalf("expired, no contact: %+v", st)
	}
	st = app.SecurityTxt{}
	app.ParseSecurityTxt("Contact: https://x.example\nExpires: tomorrow\n", now, &st)
	if len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "RFC 3339") {
		t.Fatalf("bad expiry: %+v", st)
	}
}
