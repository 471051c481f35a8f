package storage_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// retainedHeap is the heap a value built by build keeps alive.
func retainedHeap(build func() any) (any, int64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return v, int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// TestReadModelSizeEstimate checks that the read model's memory estimate
// of a realistic list page (50 items read from SQLite) stays within a
// factor of two of the heap the page really holds, and of twice its JSON
// encoding (the estimate it replaced).
func TestReadModelSizeEstimate(t *testing.T) {
	e := newReadModelEnv(t, 1, 1)
	ctx := storage.WithoutReadModel(context.Background())
	org := e.ds.Orgs[0]
	page := app.Page{Page: 1, PerPage: 50}
	for _, c := range []struct {
		name string
		load func() (any, error)
	}{
		{"vendors", func() (any, error) { return e.db.ListVendors(ctx, org.ID, app.VendorFilter{Page: page}) }},
		{"findings", func() (any, error) { return e.db.ListFindings(ctx, org.ID, app.FindingFilter{Page: page}) }},
		{"evidence", func() (any, error) { return e.db.ListEvidence(ctx, org.ID, app.EvidenceFilter{Page: page}) }},
		{"people", func() (any, error) { return e.db.ListPeople(ctx, org.ID, app.PersonFilter{Page: page}) }},
	} {
		if _, err := c.load(); err != nil { // statements prepared, pools warm
			t.Fatal(err)
		}
		// Twenty copies, so that what else the heap does in between is
		// small beside them.
		const copies = 20
		var err error
		vs, total := retainedHeap(func() any {
			vs := make([]any, copies)
			for i := range vs {
				if vs[i], err = c.load(); err != nil {
					break
				}
			}
			return vs
		})
		if err != nil {
			t.Fatal(err)
		}
		v, real := vs.([]any)[0], total/copies
		b, _ := json.Marshal(v)
		est := storage.ReadModelSize(v)
		t.Logf("%s: estimate %d bytes, retained heap %d, twice the JSON %d", c.name, est, real, 2*len(b))
		if len(b) < 1000 {
			t.Fatalf("%s: the page is not realistic: %d bytes of JSON", c.name, len(b))
		}
		for what, ref := range map[string]int64{"retained heap": real, "twice the JSON": int64(2 * len(b))} {
			if est < ref/2 || est > 2*ref {
				t.Errorf("%s: estimate %d is not within a factor of 2 of the %s (%d)", c.name, est, what, ref)
			}
		}
	}
}

// BenchmarkReadModelSizeEstimate compares the read model's estimate of a
// 50-vendor page with encoding it to JSON (the estimate it replaced), the
// work every miss pays on top of its SQL.
func BenchmarkReadModelSizeEstimate(b *testing.B) {
	e := newReadModelEnv(b, 1, 1)
	l, err := e.db.ListVendors(context.Background(), e.ds.Orgs[0].ID, app.VendorFilter{Page: app.Page{Page: 1, PerPage: 50}})
	if err != nil || len(l.Items) != 50 {
		b.Fatal(err, len(l.Items))
	}
	b.Run("estimate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			storage.ReadModelSize(l)
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(l); err != nil {
				b.Fatal(err)
			}
		}
	})
}
