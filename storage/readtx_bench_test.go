package storage

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// BenchmarkListConcurrent lists vendor pages through the read model from
// eight goroutines per core over 20 organizations of 1,000 vendors; in
// "mixed" one call in four first commits a change to its organization's
// vendors (as the mixed workload writes), so most lists miss and read
// SQLite while other connections commit; in "pages" each list is a page
// and sort of one of four filters not read before (a miss), whose total
// the read model may hold from an earlier page. "/nototals" turns the
// totals across pages off.
func BenchmarkListConcurrent(b *testing.B) {
	ctx := context.Background()
	path, orgs := seedVendorOrgs(b, "concurrent.db")
	categories := []string{"", "cloud", "hr", "saas"}
	defer func() { totalsAcrossPages = true }()
	for _, mode := range []string{"reads", "mixed", "mixed/nototals", "pages", "pages/nototals"} {
		b.Run(mode, func(b *testing.B) {
			totalsAcrossPages = !strings.HasSuffix(mode, "/nototals")
			db, err := Open(ctx, path)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Migrate(ctx); err != nil { // turns the read model on
				b.Fatal(err)
			}
			var seq atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(8)
			defer cpuTime(b)()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(seq.Add(1))
					org := orgs[i%len(orgs)]
					if strings.HasPrefix(mode, "mixed") && i%4 == 0 {
						if _, err := db.w.ExecContext(ctx, `UPDATE vendors SET updated_at = ? WHERE organization_id = ? AND id = ?`,
							ts(time.Now()), org, "vnd_"+org+"000001"); err != nil {
							b.Error(err)
							return
						}
					}
					f := app.VendorFilter{Category: categories[i%len(categories)], Page: app.Page{Page: 1 + i%3, PerPage: 50}}
					if strings.HasPrefix(mode, "pages") {
						// Pages and sorts of a filter in turn, as a user pages
						// through it, each page read once.
						f.Page, f.Sort = app.Page{Page: 1 + (i/80)%10, PerPage: 25}, []string{"", "name", "-riskScore"}[(i/800)%3]
					}
					if _, err := db.ListVendors(ctx, org, f); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
