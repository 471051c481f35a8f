package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/web/ui"
)

// BenchmarkUIPages renders the web application's pages for a signed-in
// owner of an organization with 10,000 vendors and 2,000 controls (four
// frameworks enabled, topped up with custom controls), and reports the
// server time per page as p50 and p95 in milliseconds.
//
//	go test -run '^$' -bench BenchmarkUIPages -benchtime 200x ./web/
func BenchmarkUIPages(b *testing.B) {
	a, db, srv := benchEnv(b, 8<<20)
	sys, o := benchOrgWithOwner(b, a, db)

	start := time.Now()
	seedBenchControls(b, a, db, sys, o.ID)
	cats := app.VendorCategories
	var vendorID string
	for batch := 0; batch < 20; batch++ {
		err := db.InTx(sys, func(ctx context.Context) error {
			for i := 0; i < 500; i++ {
				n := batch*500 + i
				v, err := a.CreateVendor(ctx, app.VendorInput{Name: app.Ptr(fmt.Sprintf("Vendor %05d", n)), Category: app.Ptr(cats[n%len(cats)]),
					Criticality: app.Ptr(app.Criticalities[n%3]), ProcessesPersonalData: app.Ptr(n%2 == 0), Country: app.Some("DE"),
					SubProcessors: app.Some([]app.SubProcessor{{Name: "Sub " + fmt.Sprint(n), Country: "FR", Purpose: "Hosting"}})})
				if err != nil {
					return err
				}
				vendorID = v.ID
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 50; i++ {
		if _, err := a.CreateRisk(sys, app.RiskInput{Title: app.Ptr(fmt.Sprintf("Risk %d", i)), Category: app.Ptr("operations"),
			InherentProbability: app.Ptr(app.Probabilities[i%5]), InherentImpact: app.Ptr(app.Impacts[(i/5)%5])}); err != nil {
			b.Fatal(err)
		}
		if _, err := a.CreateFinding(sys, app.FindingCreate{Title: app.Ptr(fmt.Sprintf("Finding %d", i)), Severity: app.Ptr(app.FindingSeverities[i%5])}); err != nil {
			b.Fatal(err)
		}
	}
	cs, err := a.ListControls(sys, app.ControlFilter{Page: app.Page{Page: 1, PerPage: 1}})
	if err != nil {
		b.Fatal(err)
	}
	vl, err := a.ListVendors(sys, app.VendorFilter{Page: app.Page{Page: 1, PerPage: 1}})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d controls and %d vendors in %s", cs.Total, vl.Total, time.Since(start).Round(time.Millisecond))

	do := benchSignIn(b, srv, "owner@bench.test")

	pages := []string{"/", "/frameworks", "/frameworks/soc2-2017", "/controls", "/controls?status=not_started&page=20",
		"/controls/" + cs.Items[0].ID, "/tasks", "/vendors", "/vendors?q=Vendor%2009&sort=-riskScore",
		"/vendors?category=cloud&personalData=yes&page=10", "/vendors/" + vendorID, "/vendors/new", "/risks", "/findings",
		// The same search through the API, for comparison: the cost is the shared vendor list query.
		"/v1/vendors?q=Vendor%2009&sort=-riskScore"}
	for _, p := range pages {
		benchPage(b, strings.TrimPrefix(p, "/"), p, do)
	}
}

// benchSignIn signs in through the form and returns a client that sends
// the session cookie with every request.
func benchSignIn(b *testing.B, srv http.Handler, email string) func(method, path string, form url.Values) *httptest.ResponseRecorder {
	b.Helper()
	cookies := []*http.Cookie{}
	do := func(method, path string, form url.Values) *httptest.ResponseRecorder {
		var req *http.Request
		if form != nil {
			req = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			req = httptest.NewRequest(method, path, nil)
		}
		for _, c := range cookies {
			req.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	rec := do("GET", "/login", nil)
	cookies = rec.Result().Cookies()
	tok := uiCSRFRe.FindStringSubmatch(rec.Body.String())[1]
	rec = do("POST", "/login", url.Values{"email": {email}, "password": {testPassword}, ui.CSRFField: {tok}})
	if rec.Code != http.StatusSeeOther {
		b.Fatalf("sign-in: %d", rec.Code)
	}
	cookies = rec.Result().Cookies()
	return do
}

// benchPage measures a page's server time and reports its p50 and p95.
func benchPage(b *testing.B, name, path string, do func(method, path string, form url.Values) *httptest.ResponseRecorder) {
	b.Run(name, func(b *testing.B) {
		d := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			rec := do("GET", path, nil)
			d = append(d, time.Since(t0))
			if rec.Code != http.StatusOK {
				b.Fatalf("%s: %d", path, rec.Code)
			}
		}
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(d[(len(d)*95)/100].Microseconds())/1000, "p95-ms")
	})
}

// seedBenchControls enables four large frameworks and adds custom controls
// up to 2,000 in the organization.
func seedBenchControls(b *testing.B, a *app.App, db *storage.DB, sys context.Context, orgID string) {
	b.Helper()
	for _, slug := range []string{"soc2-2017", "iso27001-2022", "nist-csf-2.0", "nist-sp800-53-r5"} {
		if _, err := a.EnableFramework(sys, slug); err != nil {
			b.Fatal(err)
		}
	}
	cs, err := a.ListControls(sys, app.ControlFilter{Page: app.Page{Page: 1, PerPage: 1}})
	if err != nil {
		b.Fatal(err)
	}
	err = db.InTx(sys, func(ctx context.Context) error {
		now := a.Now()
		for i := cs.Total; i < 2000; i++ {
			c := &app.Control{ID: app.NewID(app.PrefixControl), Code: fmt.Sprintf("X-%04d", i), Name: fmt.Sprintf("Custom control %d", i),
				Status: app.ControlNotStarted, CreatedAt: now, UpdatedAt: now}
			if err := db.CreateControl(ctx, orgID, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// benchOrgWithOwner creates an enterprise organization whose owner signs in
// as owner@bench.test with the test password.
func benchOrgWithOwner(b *testing.B, a *app.App, db *storage.DB) (context.Context, *app.Organization) {
	b.Helper()
	ctx := context.Background()
	o, err := a.CreateOrganization(ctx, "Bench", app.PlanEnterprise)
	if err != nil {
		b.Fatal(err)
	}
	sys := app.SystemContext(ctx, o.ID)
	owner, err := a.CreatePerson(sys, app.PersonCreate{Name: "Owner", Email: "owner@bench.test", Role: string(app.RoleOwner)})
	if err != nil {
		b.Fatal(err)
	}
	if err := db.SetPasswordHash(ctx, owner.ID, cheapHash(testPassword)); err != nil {
		b.Fatal(err)
	}
	return sys, o
}
