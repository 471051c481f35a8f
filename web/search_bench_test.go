package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// BenchmarkSearch measures global search on an organization with 10,000
// vendors and 2,000 controls (four frameworks enabled, their catalog
// requirements searched too), next to two other organizations of 2,000
// vendors each with the same names: the API (GET /v1/search) and the
// search page, for an owner and for an employee (whose hits pass the
// visibility rules), reporting p50 and p95 in milliseconds.
//
//	go test -run '^$' -bench BenchmarkSearch -benchtime 200x ./web/
func BenchmarkSearch(b *testing.B) {
	a, db, srv := benchEnv(b, 8<<20)
	sys, o := benchOrgWithOwner(b, a, db)
	start := time.Now()
	seedBenchControls(b, a, db, sys, o.ID)
	seedSearchVendors(b, a, db, sys, 10_000, "")
	emp, err := a.CreatePerson(sys, app.PersonCreate{Name: "Erin Employee", Email: "erin@bench.test", Role: string(app.RoleEmployee)})
	if err != nil {
		b.Fatal(err)
	}
	if err := db.SetPasswordHash(context.Background(), emp.ID, cheapHash(testPassword)); err != nil {
		b.Fatal(err)
	}
	seedSearchVendors(b, a, db, sys, 20, emp.ID)
	for _, name := range []string{"Other A", "Other B"} {
		other, err := a.CreateOrganization(context.Background(), name, app.PlanEnterprise)
		if err != nil {
			b.Fatal(err)
		}
		seedSearchVendors(b, a, db, app.SystemContext(context.Background(), other.ID), 2_000, "")
	}
	key, err := a.CreateAPIKey(sys, app.APIKeyCreate{Name: "bench", Role: string(app.RoleAdmin)})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded in %s", time.Since(start).Round(time.Millisecond))

	api := func(method, path string, _ url.Values) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("X-API-Key", key.Key)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	// The first search indexes the enabled frameworks' catalogs: once.
	if rec := api("GET", "/v1/search?q=warm", nil); rec.Code != http.StatusOK {
		b.Fatalf("warm-up: %d %s", rec.Code, rec.Body.String())
	}
	owner := benchSignIn(b, srv, "owner@bench.test")
	employee := benchSignIn(b, srv, "erin@bench.test")
	queries := map[string]string{
		"name":        "nordic cloud 0042", // one vendor by name and number
		"broad":       "cloud",             // a thousand vendors and some controls
		"prefix":      "sec",               // a short prefix: thousands of hits
		"two-words":   "access control",    // controls and requirements
		"nothing":     "zzzzqqq",
		"many-terms":  "global hosting services for finance gmbh",
		"requirement": "incident response",
	}
	for _, name := range []string{"name", "broad", "prefix", "two-words", "nothing", "many-terms", "requirement"} {
		benchSearch(b, "api-"+name, "/v1/search?q="+url.QueryEscape(queries[name]), api)
	}
	for _, name := range []string{"broad", "prefix", "name"} {
		benchSearch(b, "page-"+name, "/search?q="+url.QueryEscape(queries[name]), owner)
		benchSearch(b, "employee-page-"+name, "/search?q="+url.QueryEscape(queries[name]), employee)
	}
	benchSearch(b, "page-one-type", "/search?types=vendor&page=3&q="+url.QueryEscape(queries["broad"]), owner)
}

// benchSearch is benchPage with the process's CPU time per request, which
// the load of other processes on a shared machine does not inflate.
func benchSearch(b *testing.B, name, path string, do func(method, path string, form url.Values) *httptest.ResponseRecorder) {
	b.Run(name+"-cpu", func(b *testing.B) {
		defer cpuTime(b)()
		for i := 0; i < b.N; i++ {
			if rec := do("GET", path, nil); rec.Code != http.StatusOK {
				b.Fatalf("%s: %d", path, rec.Code)
			}
		}
	})
	benchPage(b, name, path, do)
}

// seedSearchVendors creates n vendors with names like a real register's
// (word + sector + number + legal form), assigned to assignee when set.
func seedSearchVendors(b *testing.B, a *app.App, db *storage.DB, sys context.Context, n int, assignee string) {
	b.Helper()
	first := []string{"Nordic", "Global", "Alpine", "Atlas", "Summit", "Delta", "Blue", "Northwind", "Contoso", "Fabrikam",
		"Initech", "Umbrella", "Stark", "Wayne", "Acme", "Hooli", "Vandelay", "Globex", "Soylent", "Tyrell"}
	sector := []string{"Cloud", "Hosting", "Payments", "Analytics", "Security", "Logistics", "Software", "Consulting", "Data",
		"Networks", "Telecom", "Insurance", "Legal", "Marketing", "Recruiting"}
	form := []string{"GmbH", "Ltd", "Inc", "AG", "BV", "SAS", "Oy", "AB"}
	for done := 0; done < n; done += 500 {
		err := db.InTx(sys, func(ctx context.Context) error {
			for i := done; i < min(done+500, n); i++ {
				in := app.VendorInput{
					Name: app.Ptr(fmt.Sprintf("%s %s %04d %s", first[i%len(first)], sector[(i/len(first))%len(sector)], i, form[i%len(form)])),
					Description: app.Ptr(fmt.Sprintf("%s services for the %s team, contract %d", sector[(i/3)%len(sector)],
						[]string{"finance", "engineering", "sales", "people", "operations"}[i%5], i)),
				}
				if assignee != "" {
					in.AssigneeID = app.Some(assignee)
				}
				if _, err := a.CreateVendor(ctx, in); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
