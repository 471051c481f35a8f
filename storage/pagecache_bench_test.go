package storage

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// BenchmarkPageCache reads vendor list pages from SQLite (bypassing the
// read model) across 20 organizations of 1,000 vendors, with SQLite's
// default page cache, a 64 MiB one, and a 256 MiB memory map (the memory
// map is on by default: "nommap" turns it off).
func BenchmarkPageCache(b *testing.B) {
	ctx := context.Background()
	path, orgs := seedVendorOrgs(b, "pc.db")
	defer func() { extraPragmas = nil }()
	for _, c := range []struct {
		name    string
		pragmas []string
	}{
		{"nommap", []string{"mmap_size(0)"}},
		{"nommap+cache64MiB", []string{"mmap_size(0)", "cache_size(-65536)"}},
		{"mmap256MiB", nil},
		{"cache64MiB+mmap", []string{"cache_size(-65536)", "mmap_size(268435456)"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			extraPragmas = c.pragmas
			db, err := Open(ctx, path)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			fresh := WithoutReadModel(ctx)
			b.ReportAllocs()
			defer cpuTime(b)()
			i := 0
			for b.Loop() {
				f := app.VendorFilter{Page: app.Page{Page: 1 + i%20, PerPage: 50}}
				if _, err := db.ListVendors(fresh, orgs[i%len(orgs)], f); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// seedVendorOrgs creates a migrated database file name in a temporary
// folder with 20 organizations of 1,000 vendors, optimized and closed,
// and returns its path and the organizations' ids.
func seedVendorOrgs(b *testing.B, name string) (string, []string) {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), name)
	db, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	a := app.New(db, nil, nil, app.Config{})
	var orgs []string
	for i := 0; i < 20; i++ {
		o, err := a.CreateOrganization(ctx, "Org", app.PlanEnterprise)
		if err != nil {
			b.Fatal(err)
		}
		orgs = append(orgs, o.ID)
		if _, err := db.w.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
			INSERT INTO vendors (organization_id, id, name, description, category, status, inherent_probability, inherent_impact,
				criticality, dpa_status, sub_processors, created_at, updated_at)
			SELECT ?, 'vnd_' || ? || printf('%06d', i), 'Vendor ' || i, 'A supplier of services to the organization, number ' || i,
				CASE i % 3 WHEN 0 THEN 'cloud' WHEN 1 THEN 'hr' ELSE 'saas' END, 'active', 'medium', 'medium', 'medium',
				'not_required', '[]', '2026-01-15T10:00:00.000Z', '2026-01-15T10:00:00.000Z' FROM n`, o.ID, o.ID); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Optimize(ctx); err != nil {
		b.Fatal(err)
	}
	db.Close()
	return path, orgs
}
