package storage

import (
	"context"
	"testing"
)

// BenchmarkEngineFloor splits the cost of a vendor list page (50 of
// 100,000 vendors in 100 organizations, three filters) into what the SQLite
// engine and driver do alone, with prepared statements and no decoding into
// Go values, and what ListVendors adds: the floor any list endpoint stands
// on, whatever the layers above do.
func BenchmarkEngineFloor(b *testing.B) {
	db, orgs := seeded(b)
	ctx := context.Background()
	const where = `organization_id = ? AND archived_at IS NULL AND criticality = ? AND processes_personal_data = 1 AND ict_service = 1`
	queries := []struct{ name, q string }{
		// One round trip through database/sql and the driver.
		{"select_1", `SELECT 1 WHERE ? != ?`},
		// The total for meta, from the list index.
		{"count", `SELECT count(*) FROM vendors WHERE ` + where},
		// The page's ids, from the list index alone.
		{"page_ids", `SELECT id FROM vendors WHERE ` + where + ` ORDER BY id LIMIT 50`},
		// The page's 50 rows, every column, stepped but not decoded.
		{"page_rows", `SELECT ` + vendorColumns + ` FROM vendors WHERE organization_id = ? AND id IN (SELECT id FROM vendors WHERE ` +
			where + ` ORDER BY id LIMIT 50) ORDER BY id`},
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			st, err := db.r.PrepareContext(ctx, q.q)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			defer cpuTime(b)()
			i := 0
			for b.Loop() {
				org := orgs[i%len(orgs)]
				args := []any{org, "critical"}
				if q.name == "page_rows" {
					args = []any{org, org, "critical"}
				}
				rows, err := st.QueryContext(ctx, args...)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for rows.Next() {
					n++
				}
				if err := rows.Close(); err != nil {
					b.Fatal(err)
				}
				if n == 0 {
					b.Fatalf("%s: no rows", q.name)
				}
				i++
			}
		})
	}
	b.Run("list_vendors", func(b *testing.B) {
		defer cpuTime(b)()
		i := 0
		for b.Loop() {
			if _, err := db.ListVendors(ctx, orgs[i%len(orgs)], benchFilter); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
