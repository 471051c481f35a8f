package storage_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// TestReadModelTotalAcrossPages checks that other pages and sorts of a
// vendor filter take its total from the read model (no count query),
// that a filter differing in anything else counts its own, and that a
// write by another connection is seen by the next page's total.
func TestReadModelTotalAcrossPages(t *testing.T) {
	e := newReadModelEnv(t, 1, 0.5)
	ctx := context.Background()
	fresh := storage.WithoutReadModel(ctx)
	org := e.ds.Orgs[0]
	list := func(f app.VendorFilter) app.List[app.Vendor] {
		t.Helper()
		got, err := e.db.ListVendors(ctx, org.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := e.db.ListVendors(fresh, org.ID, f)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("cached list %+v differs from SQL (%v):\n%+v\n%+v", f, err, got, want)
		}
		return got
	}
	counts := func(want int64, what string, fn func()) {
		t.Helper()
		before := storage.CountQueries()
		fn()
		// The fresh read (list compares with it) always counts.
		if got := storage.CountQueries() - before - 1; got != want {
			t.Fatalf("%s: %d count queries, want %d", what, got, want)
		}
	}
	f := app.VendorFilter{Category: "cloud", Page: app.Page{Page: 1, PerPage: 10}}
	var first app.List[app.Vendor]
	counts(1, "first page", func() { first = list(f) })
	if first.Total <= 20 {
		t.Fatalf("the filter must span pages: total %d", first.Total)
	}
	f.Page.Page = 2
	counts(0, "second page", func() { list(f) })
	f.Sort, f.Page.PerPage = "-name", 25
	counts(0, "another sort and page size", func() { list(f) })
	counts(1, "another filter", func() { list(app.VendorFilter{Category: "hr", Page: f.Page}) })
	if _, err := e.raw.Exec(`UPDATE vendors SET category = 'cloud' WHERE organization_id = ? AND category <> 'cloud' AND archived_at IS NULL
		AND id = (SELECT min(id) FROM vendors WHERE organization_id = ? AND category <> 'cloud' AND archived_at IS NULL)`, org.ID, org.ID); err != nil {
		t.Fatal(err)
	}
	f.Page.Page = 3
	var after app.List[app.Vendor]
	counts(1, "after a write", func() { after = list(f) })
	if after.Total != first.Total+1 {
		t.Fatalf("total after the write: %d, want %d", after.Total, first.Total+1)
	}
}
