package storage_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/bench"
	"github.com/compliance-appliance/compliance/storage"
)

// BenchmarkListVendors measures the vendor list queries (count and page)
// over 3 organizations of 1,000 vendors each, for the filters the load
// workload uses.
func BenchmarkListVendors(b *testing.B) {
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(b.TempDir(), "b.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	ds, err := bench.Seed(ctx, db, app.New(db, nil, nil, app.Config{}), 3, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Optimize(ctx); err != nil {
		b.Fatal(err)
	}
	org := ds.Orgs[1]
	cases := []struct {
		name string
		f    app.VendorFilter
	}{
		{"default", app.VendorFilter{}},
		{"page3", app.VendorFilter{Page: app.Page{Page: 3, PerPage: 50}}},
		{"category", app.VendorFilter{Category: "cloud"}},
		{"personal_country", app.VendorFilter{ProcessesPersonalData: app.Ptr(true), Country: "DE"}},
		{"status_sort_name", app.VendorFilter{Status: "assessed", Sort: "name"}},
		{"sort_risk", app.VendorFilter{Category: "hr", Sort: "-riskScore"}},
		{"assignee", app.VendorFilter{AssigneeID: org.IDs["person"][0]}},
	}
	for _, c := range cases {
		if c.f.Page.PerPage == 0 {
			c.f.Page = app.Page{Page: 1, PerPage: 50}
		}
		b.Run(c.name, func(b *testing.B) {
			start := cpuTime()
			for b.Loop() {
				if _, err := db.ListVendors(ctx, org.ID, c.f); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time per call holds steady on a busy machine where
			// wall time does not.
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
