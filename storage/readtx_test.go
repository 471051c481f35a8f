package storage_test

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// TestReadTxNoDeadlock runs more concurrent list and get reads through
// the read model than the reader pool has connections, on a freshly
// opened handle (empty statement cache, empty read model), while a writer
// adds and archives vendors. Each read holds one connection for its read
// transaction; none may wait for a second one (preparing a statement
// through the pool did, and hung once every connection was held). Every
// list's total must agree with its page (one snapshot), and once the
// writer stopped every cached read must equal a fresh SQL read.
func TestReadTxNoDeadlock(t *testing.T) {
	e := newReadModelEnv(t, 2, 0.15)
	ctx := context.Background()
	db, err := storage.Open(ctx, e.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db.SetReaderPoolSize(2)
	if q := db.ReadQueries(); len(q) != 0 {
		t.Fatalf("the statement cache is not cold: %d statements", len(q))
	}

	const readers = 24
	stop := make(chan struct{})
	errs := make(chan error, readers+1)
	var wg, writer sync.WaitGroup
	writer.Add(1)
	go func() { // the writer, through the other handle as the CLI would
		defer writer.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			org := e.ds.Orgs[i%len(e.ds.Orgs)]
			sctx := app.SystemContext(ctx, org.ID)
			v, err := e.a2.CreateVendor(sctx, app.VendorInput{Name: app.Ptr(fmt.Sprintf("Concurrent %d", i)), Category: app.Ptr("cloud")})
			if err == nil && i%3 == 0 {
				_, err = e.a2.SetVendorArchived(sctx, v.ID, true)
			}
			if err != nil {
				errs <- fmt.Errorf("writer: %w", err)
				return
			}
		}
	}()
	checkPage := func(what string, n, total int, p app.Page) error {
		if want := max(0, min(p.PerPage, total-p.Offset())); n != want {
			return fmt.Errorf("%s: %d items on page %d of a total of %d: want %d", what, n, p.Page, total, want)
		}
		return nil
	}
	for g := 0; g < readers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			org := e.ds.Orgs[g%len(e.ds.Orgs)]
			for i := 0; i < 30; i++ {
				p := app.Page{Page: 1 + (g+i)%3, PerPage: 10}
				var err error
				switch (g + i) % 6 {
				case 0:
					var l app.List[app.Vendor]
					f := app.VendorFilter{Page: p, Category: []string{"", "cloud", "hr"}[i%3], Sort: []string{"", "name", "-riskScore"}[g%3]}
					if l, err = db.ListVendors(ctx, org.ID, f); err == nil {
						err = checkPage(fmt.Sprintf("vendors %+v", f), len(l.Items), l.Total, p)
					}
				case 1:
					var l app.List[app.Finding]
					if l, err = db.ListFindings(ctx, org.ID, app.FindingFilter{Page: p, Status: []string{"", "open"}[i%2]}); err == nil {
						err = checkPage("findings", len(l.Items), l.Total, p)
					}
				case 2:
					var l app.List[app.Evidence]
					if l, err = db.ListEvidence(ctx, org.ID, app.EvidenceFilter{Page: p}); err == nil {
						err = checkPage("evidence", len(l.Items), l.Total, p)
					}
				case 3:
					var l app.List[app.Person]
					if l, err = db.ListPeople(ctx, org.ID, app.PersonFilter{Page: p, Inactive: i%2 == 0}); err == nil {
						err = checkPage("people", len(l.Items), l.Total, p)
					}
				case 4:
					_, err = db.GetVendor(ctx, org.ID, org.IDs["vendor"][i%len(org.IDs["vendor"])])
				case 5:
					_, err = db.GetFinding(ctx, org.ID, org.IDs["finding"][i%len(org.IDs["finding"])])
				}
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", g, err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(4 * time.Minute):
		buf := make([]byte, 1<<20)
		t.Fatalf("reads did not finish: deadlocked?\n%s", buf[:runtime.Stack(buf, true)])
	}
	close(stop)
	writer.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(db.ReadQueries()) == 0 {
		t.Error("no statement was prepared into the cache after the read transactions")
	}
	if st := db.ReadCacheStats(); st.Misses == 0 {
		t.Errorf("the reads did not go through the read model: %+v", st)
	}
	fresh := storage.WithoutReadModel(ctx)
	for _, org := range e.ds.Orgs {
		f := app.VendorFilter{Page: app.Page{Page: 1, PerPage: 10}, Category: "cloud"}
		got, err1 := db.ListVendors(ctx, org.ID, f)
		want, err2 := db.ListVendors(fresh, org.ID, f)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("cached list differs from SQL after the writes (%v, %v):\n%+v\n%+v", err1, err2, got, want)
		}
	}
}
