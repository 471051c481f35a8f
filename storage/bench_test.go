package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

const (
	benchOrgs          = 100
	benchVendorsPerOrg = 1000
)

var (
	benchOnce sync.Once
	benchDB   *DB
	benchDir  string
	benchErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDB != nil {
		benchDB.Close()
	}
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// benchVendor is the i-th vendor of the seed: the three filters of the
// benchmark (critical, personal data, ICT service) together match about a
// twelfth of an organization's vendors.
func benchVendor(i int) *app.Vendor {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	return &app.Vendor{ID: app.NewID(app.PrefixVendor), Name: fmt.Sprintf("Vendor %05d", i), Description: "Seeded vendor",
		Category: app.VendorCategories[i%len(app.VendorCategories)], Status: "not_assessed",
		InherentProbability: "possible", InherentImpact: "moderate", Criticality: app.Criticalities[i%3],
		ICTService: i%2 == 0, ProcessesPersonalData: i%4 < 2, DPAStatus: app.DPAStatuses[i%3], Country: app.Ptr("DE"),
		SubProcessors: []app.SubProcessor{{Name: "Sub", Country: "IE", Purpose: "hosting"}}, RiskScore: app.Ptr(9),
		CreatedAt: now, UpdatedAt: now}
}

// seeded returns a database with 100,000 vendors in 100 organizations,
// built once per test binary.
func seeded(b *testing.B) (*DB, []string) {
	b.Helper()
	orgs := make([]string, benchOrgs)
	for i := range orgs {
		orgs[i] = fmt.Sprintf("org_bench%03d", i)
	}
	benchOnce.Do(func() {
		ctx := context.Background()
		benchDir, benchErr = os.MkdirTemp("", "compliance-bench-")
		if benchErr != nil {
			return
		}
		benchDB, benchErr = Open(ctx, filepath.Join(benchDir, "bench.db"))
		if benchErr != nil {
			return
		}
		if _, benchErr = benchDB.Migrate(ctx); benchErr != nil {
			return
		}
		benchErr = benchDB.InTx(ctx, func(ctx context.Context) error {
			for o, id := range orgs {
				now := time.Now()
				if err := benchDB.CreateOrganization(ctx, &app.Organization{ID: id, Name: id, Slug: id, Plan: app.PlanEnterprise, CreatedAt: now, UpdatedAt: now}); err != nil {
					return err
				}
				for i := range benchVendorsPerOrg {
					if err := benchDB.CreateVendor(ctx, id, benchVendor(o*benchVendorsPerOrg+i)); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if benchErr == nil {
			_, benchErr = benchDB.w.Exec("ANALYZE; DELETE FROM sqlite_stat4")
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDB, orgs
}

var benchFilter = app.VendorFilter{Criticality: "critical", ProcessesPersonalData: app.Ptr(true), ICTService: app.Ptr(true),
	Page: app.Page{Page: 1, PerPage: 50}}

// BenchmarkListVendors lists 50 vendors with three filters out of 100,000 in
// 100 organizations: the count for meta and the page, as GET /v1/vendors does.
func BenchmarkListVendors(b *testing.B) {
	db, orgs := seeded(b)
	ctx := context.Background()
	l, err := db.ListVendors(ctx, orgs[0], benchFilter)
	if err != nil {
		b.Fatal(err)
	}
	if len(l.Items) != 50 || l.Total < 50 {
		b.Fatalf("the benchmark must list a full page: %d of %d", len(l.Items), l.Total)
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuTime(b)()
	i := 0
	for b.Loop() {
		if _, err := db.ListVendors(ctx, orgs[i%len(orgs)], benchFilter); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkCreateVendor is one durable insert (synchronous=FULL, WAL) with
// its audit record and outbox event, as POST /v1/vendors does.
func BenchmarkCreateVendor(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "create.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	a := app.New(db, nil, nil, app.Config{})
	o, err := a.CreateOrganization(ctx, "Bench", app.PlanEnterprise)
	if err != nil {
		b.Fatal(err)
	}
	sys := app.SystemContext(ctx, o.ID)
	in := app.VendorInput{Name: app.Ptr("Cloudy"), Category: app.Ptr("cloud"), Country: app.Some("DE"), Criticality: app.Ptr("critical")}
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuTime(b)()
	for b.Loop() {
		if _, err := a.CreateVendor(sys, in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestVendorListUsesAnIndex proves with EXPLAIN QUERY PLAN that the list
// never scans the whole table, for each filter alone and combined.
func TestVendorListUsesAnIndex(t *testing.T) {
	t.Parallel()
	sqliteOnly(t, "reads SQLite query plans")
	db := migrated(t)
	for _, where := range []string{
		"organization_id = ? AND archived_at IS NULL",
		"organization_id = ? AND archived_at IS NULL AND criticality = ?",
		"organization_id = ? AND archived_at IS NULL AND criticality = ? AND processes_personal_data = ? AND ict_service = ?",
		"organization_id = ? AND archived_at IS NULL AND category = ?",
		"organization_id = ? AND archived_at IS NULL AND country = ?",
		"organization_id = ? AND archived_at IS NULL AND dpa_status = ?",
		"organization_id = ? AND archived_at IS NOT NULL",
	} {
		args := make([]any, strings.Count(where, "?"))
		for i := range args {
			args[i] = "x"
		}
		for _, q := range []string{"SELECT count(*) FROM vendors WHERE " + where, "SELECT id FROM vendors WHERE " + where + " ORDER BY id LIMIT 50"} {
			rows, err := db.r.Query("EXPLAIN QUERY PLAN "+q, args...)
			if err != nil {
				t.Fatal(err)
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			p := strings.Join(plan, "; ")
			// vendors is clustered by (organization_id, id): its primary
			// key is an index too.
			if !(strings.Contains(p, "INDEX") || strings.Contains(p, "PRIMARY KEY")) || strings.Contains(p, "TEMP B-TREE") {
				t.Errorf("%s: plan %q must use an index without sorting", q, p)
			}
		}
	}
}
