package storage

import (
	"context"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// BenchmarkListAfterWrite reads vendor list pages from SQLite (bypassing
// the read model) across 20 organizations of 1,000 vendors, as the mixed
// workload does: "quiet" with no write in between, "write" with a commit
// changing a row of the organization before every read ("writeonly": the
// write's own cost; "write+readmodel": the same through the read model,
// which then misses on every read). A reader connection that
// finds the database changed since its last read transaction drops its page
// cache; with a memory map it also unmaps the file, so every page it then
// touches faults back in.
func BenchmarkListAfterWrite(b *testing.B) {
	ctx := context.Background()
	path, orgs := seedVendorOrgs(b, "mixed.db")
	defer func() { extraPragmas = nil }()
	for _, c := range []struct {
		name    string
		pragmas []string
	}{
		{"mmap256MiB", nil},
		{"nommap", []string{"mmap_size(0)"}},
	} {
		for _, mode := range []string{"quiet", "write", "writeonly", "write+readmodel"} {
			write, read := mode != "quiet", mode != "writeonly"
			name := c.name + "/" + mode
			b.Run(name, func(b *testing.B) {
				extraPragmas = c.pragmas
				db, err := Open(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				fresh := WithoutReadModel(ctx)
				if mode == "write+readmodel" {
					fresh = ctx // every read misses: its organization just changed
				}
				b.ReportAllocs()
				defer cpuTime(b)()
				i := 0
				for b.Loop() {
					if write {
						if _, err := db.w.ExecContext(ctx, `UPDATE vendors SET updated_at = ? WHERE organization_id = ? AND id = ?`,
							ts(time.Now()), orgs[i%len(orgs)], "vnd_"+orgs[i%len(orgs)]+"000001"); err != nil {
							b.Fatal(err)
						}
					}
					f := app.VendorFilter{Page: app.Page{Page: 1 + i%20, PerPage: 50}}
					if !read {
						i++
						continue
					}
					if _, err := db.ListVendors(fresh, orgs[i%len(orgs)], f); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}
