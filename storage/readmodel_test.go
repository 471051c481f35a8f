package storage_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/bench"
	"github.com/compliance-appliance/compliance/storage"
)

// readModelEnv is a seeded database with a second storage handle (what
// the CLI opens in another process) and a plain SQL connection writing
// the same file.
type readModelEnv struct {
	path string
	db   *storage.DB
	a    *app.App
	db2  *storage.DB
	a2   *app.App
	raw  *sql.DB
	ds   *bench.Dataset
}

func newReadModelEnv(t testing.TB, orgs int, scale float64) *readModelEnv {
	t.Helper()
	ctx := context.Background()
	e := &readModelEnv{path: filepath.Join(t.TempDir(), "rm.db")}
	var err error
	if e.db, err = storage.Open(ctx, e.path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.db.Close() })
	if _, err := e.db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e.a = app.New(e.db, nil, nil, app.Config{})
	if e.ds, err = bench.Seed(ctx, e.db, e.a, orgs, scale, nil); err != nil {
		t.Fatal(err)
	}
	if e.db2, err = storage.Open(ctx, e.path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.db2.Close() })
	if _, err := e.db2.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e.a2 = app.New(e.db2, nil, nil, app.Config{})
	if e.raw, err = sql.Open("sqlite", "file:"+e.path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(ON)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.raw.Close() })
	return e
}

// checkReads compares every cached read of an organization with a fresh
// SQL read of the same thing.
func (e *readModelEnv) checkReads(t *testing.T, step string, org *bench.Org, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	fresh := storage.WithoutReadModel(ctx)
	same := func(what string, got, want any, errGot, errWant error) {
		t.Helper()
		if (errGot == nil) != (errWant == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %s: cached read differs from SQL:\ncached %+v (%v)\nfresh  %+v (%v)", step, what, got, errGot, want, errWant)
		}
	}
	page := app.Page{Page: 1 + rng.IntN(2), PerPage: 10}
	for _, f := range []app.VendorFilter{{Page: page}, {Page: page, Archived: true}, {Page: page, Category: "cloud", Sort: "-riskScore"},
		{Page: page, Search: "a"}} {
		got, err1 := e.db.ListVendors(ctx, org.ID, f)
		want, err2 := e.db.ListVendors(fresh, org.ID, f)
		same(fmt.Sprintf("vendors %+v", f), got, want, err1, err2)
	}
	for _, f := range []app.FindingFilter{{Page: page}, {Page: page, Status: "open"}, {Page: page, TaskAssignee: org.IDs["person"][0]}} {
		got, err1 := e.db.ListFindings(ctx, org.ID, f)
		want, err2 := e.db.ListFindings(fresh, org.ID, f)
		same(fmt.Sprintf("findings %+v", f), got, want, err1, err2)
	}
	for _, f := range []app.EvidenceFilter{{Page: page}, {Page: page, ControlOwnerID: org.IDs["person"][0]}} {
		got, err1 := e.db.ListEvidence(ctx, org.ID, f)
		want, err2 := e.db.ListEvidence(fresh, org.ID, f)
		same(fmt.Sprintf("evidence %+v", f), got, want, err1, err2)
	}
	for _, f := range []app.PersonFilter{{Page: page}, {Page: page, Inactive: true},
		{Page: page, Source: app.PersonSourceDirectory}, {Page: page, TwoFactor: "enrolled"}} {
		got, err1 := e.db.ListPeople(ctx, org.ID, f)
		want, err2 := e.db.ListPeople(fresh, org.ID, f)
		same(fmt.Sprintf("people %+v", f), got, want, err1, err2)
	}
	pick := func(kind string) string { ids := org.IDs[kind]; return ids[rng.IntN(min(len(ids), 5))] }
	id := pick("vendor")
	v1, err1 := e.db.GetVendor(ctx, org.ID, id)
	v2, err2 := e.db.GetVendor(fresh, org.ID, id)
	same("vendor "+id, v1, v2, err1, err2)
	id = pick("finding")
	f1, err1 := e.db.GetFinding(ctx, org.ID, id)
	f2, err2 := e.db.GetFinding(fresh, org.ID, id)
	same("finding "+id, f1, f2, err1, err2)
	id = pick("evidence")
	ev1, err1 := e.db.GetEvidence(ctx, org.ID, id)
	ev2, err2 := e.db.GetEvidence(fresh, org.ID, id)
	same("evidence "+id, ev1, ev2, err1, err2)
	id = pick("person")
	p1, err1 := e.db.GetPerson(ctx, org.ID, id)
	p2, err2 := e.db.GetPerson(fresh, org.ID, id)
	same("person "+id, p1, p2, err1, err2)
}

// TestReadModelCoherence interleaves writes of every kind (the app
// through this handle, the app through a second handle as the CLI in
// another process writes, plain SQL from a third connection, archive and
// restore, a bulk import, a scheduled job) with reads, and checks every
// cached read against a fresh SQL read.
func TestReadModelCoherence(t *testing.T) {
	e := newReadModelEnv(t, 2, 0.15)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 9))
	n := 0
	writes := []struct {
		name string
		fn   func(org *bench.Org) error
	}{
		{"app: create vendor", func(org *bench.Org) error {
			n++
			v, err := e.a.CreateVendor(app.SystemContext(ctx, org.ID), app.VendorInput{Name: app.Ptr(fmt.Sprintf("Alpha %d", n)), Category: app.Ptr("cloud")})
			if err == nil {
				org.IDs["vendor"] = append([]string{v.ID}, org.IDs["vendor"]...)
			}
			return err
		}},
		{"app: update vendor", func(org *bench.Org) error {
			n++
			_, err := e.a.UpdateVendor(app.SystemContext(ctx, org.ID), org.IDs["vendor"][0], app.VendorInput{Name: app.Ptr(fmt.Sprintf("Renamed %d", n))})
			return err
		}},
		{"app: archive vendor", func(org *bench.Org) error {
			_, err := e.a.SetVendorArchived(app.SystemContext(ctx, org.ID), org.IDs["vendor"][rng.IntN(3)], true)
			return err
		}},
		{"app: restore vendor", func(org *bench.Org) error {
			_, err := e.a.SetVendorArchived(app.SystemContext(ctx, org.ID), org.IDs["vendor"][rng.IntN(3)], false)
			return err
		}},
		{"second process: update finding", func(org *bench.Org) error {
			_, err := e.a2.UpdateFinding(app.SystemContext(ctx, org.ID), org.IDs["finding"][rng.IntN(3)], app.FindingPatch{Status: app.Ptr([]string{"open", "in_review", "resolved"}[rng.IntN(3)])})
			return err
		}},
		{"second process: create vendor", func(org *bench.Org) error {
			n++
			_, err := e.a2.CreateVendor(app.SystemContext(ctx, org.ID), app.VendorInput{Name: app.Ptr(fmt.Sprintf("Aardvark %d", n)), Category: app.Ptr("cloud")})
			return err
		}},
		{"sql: rename vendor", func(org *bench.Org) error {
			_, err := e.raw.Exec(`UPDATE vendors SET name = name || 'x' WHERE organization_id = ? AND id = ?`, org.ID, org.IDs["vendor"][rng.IntN(3)])
			return err
		}},
		{"sql: finding title", func(org *bench.Org) error {
			_, err := e.raw.Exec(`UPDATE findings SET title = coalesce(title, '') || 'x' WHERE organization_id = ? AND id = ?`, org.ID, org.IDs["finding"][rng.IntN(3)])
			return err
		}},
		{"sql: reassign tasks", func(org *bench.Org) error {
			_, err := e.raw.Exec(`UPDATE tasks SET assignee_id = ? WHERE organization_id = ? AND id IN (SELECT task_id FROM findings WHERE organization_id = ? AND task_id IS NOT NULL LIMIT 3)`,
				org.IDs["person"][rng.IntN(2)], org.ID, org.ID)
			return err
		}},
		{"sql: control owner", func(org *bench.Org) error {
			_, err := e.raw.Exec(`UPDATE controls SET owner_id = ? WHERE organization_id = ? AND id IN (SELECT id FROM controls WHERE organization_id = ? LIMIT 2)`,
				org.IDs["person"][rng.IntN(2)], org.ID, org.ID)
			return err
		}},
		{"sql: evidence description", func(org *bench.Org) error {
			_, err := e.raw.Exec(`UPDATE evidence SET description = description || 'x' WHERE organization_id = ? AND id = ?`, org.ID, org.IDs["evidence"][rng.IntN(3)])
			return err
		}},
		{"sql: delete evidence", func(org *bench.Org) error {
			ids := org.IDs["evidence"]
			if len(ids) < 10 {
				return nil
			}
			_, err := e.raw.Exec(`DELETE FROM evidence WHERE organization_id = ? AND id = ?`, org.ID, ids[0])
			org.IDs["evidence"] = ids[1:]
			return err
		}},
		{"sql: user name and login", func(org *bench.Org) error {
			_, err := e.raw.Exec(`UPDATE users SET name = name || 'x', last_login_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?`, org.IDs["person"][rng.IntN(3)])
			return err
		}},
		{"sql: membership role", func(org *bench.Org) error {
			_, err := e.raw.Exec(`UPDATE memberships SET is_active = 1 - is_active WHERE organization_id = ? AND user_id = ?`, org.ID, org.IDs["person"][rng.IntN(3)])
			return err
		}},
		{"sql: directory two-factor status", func(org *bench.Org) error {
			_, err := e.raw.Exec(`INSERT INTO person_directory (organization_id, user_id, source, two_factor, updated_at)
				VALUES (?, ?, 'directory', 1, strftime('%Y-%m-%dT%H:%M:%fZ','now'))
				ON CONFLICT (organization_id, user_id) DO UPDATE SET two_factor = 1 - coalesce(two_factor, 0)`, org.ID, org.IDs["person"][rng.IntN(3)])
			return err
		}},
		{"sql: device", func(org *bench.Org) error {
			_, err := e.raw.Exec(`UPDATE devices SET name = name || 'x' WHERE organization_id = ?`, org.ID)
			return err
		}},
		{"import: bulk seed of vendors", func(org *bench.Org) error {
			for _, s := range bench.Seeders {
				if s.Kind == "vendor" {
					return e.db.InTx(ctx, func(ctx context.Context) error { return s.Seed(ctx, e.db, org, 3, rng, e.a.Now()) })
				}
			}
			return fmt.Errorf("no vendor seeder")
		}},
		{"job: purge idempotency records and optimize", func(org *bench.Org) error {
			if err := e.db.Optimize(ctx); err != nil {
				return err
			}
			_, err := e.db.PurgeIdempotency(ctx, e.a.Now())
			return err
		}},
	}
	for i := 0; i < 300; i++ {
		org := e.ds.Orgs[rng.IntN(len(e.ds.Orgs))]
		e.checkReads(t, fmt.Sprintf("step %d before", i), org, rng)
		w := writes[rng.IntN(len(writes))]
		if err := w.fn(org); err != nil {
			t.Fatalf("step %d: %s: %v", i, w.name, err)
		}
		e.checkReads(t, fmt.Sprintf("step %d after %s", i, w.name), org, rng)
	}
	st := e.db.ReadCacheStats()
	if st.Hits == 0 || st.Misses == 0 {
		t.Fatalf("the read model was not exercised: %+v", st)
	}
	t.Logf("read model: %+v", st)
}

// TestReadModelMemoryBound fills the read model past a small budget: it
// stays within the budget by evicting, and reads stay correct.
func TestReadModelMemoryBound(t *testing.T) {
	e := newReadModelEnv(t, 1, 0.2)
	ctx := context.Background()
	const budget = 100 << 10 // two or three full pages of 50 vendors
	e.db.SetReadCacheBudget(budget)
	org := e.ds.Orgs[0]
	for round := 0; round < 2; round++ {
		for p := 1; p <= 20; p++ {
			f := app.VendorFilter{Page: app.Page{Page: p, PerPage: 50}}
			got, err := e.db.ListVendors(ctx, org.ID, f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := e.db.ListVendors(storage.WithoutReadModel(ctx), org.ID, f)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("page %d differs from SQL (%v)", p, err)
			}
			if st := e.db.ReadCacheStats(); st.Bytes > budget {
				t.Fatalf("read model holds %d bytes over its budget of %d", st.Bytes, budget)
			}
		}
	}
	st := e.db.ReadCacheStats()
	if st.Entries >= 21 || st.Entries == 0 {
		t.Fatalf("expected eviction to keep some but not all 20 pages and their total: %+v", st)
	}
	e.db.SetReadCacheBudget(0)
	if st := e.db.ReadCacheStats(); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("a zero budget keeps entries: %+v", st)
	}
}

// BenchmarkReadModel compares one vendor and one finding list page of 50
// served by the read model with the same page read from SQLite, over 3
// organizations of 1,000 vendors and 500 findings each.
func BenchmarkReadModel(b *testing.B) {
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
	page := app.Page{Page: 1, PerPage: 50}
	for _, mode := range []struct {
		name string
		ctx  context.Context
	}{{"sql", storage.WithoutReadModel(ctx)}, {"cached", ctx}} {
		b.Run("vendors/"+mode.name, func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				if _, err := db.ListVendors(mode.ctx, org.ID, app.VendorFilter{Category: "cloud", Page: page}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-us/op")
		})
		b.Run("findings/"+mode.name, func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				if _, err := db.ListFindings(mode.ctx, org.ID, app.FindingFilter{Status: "open", Page: page}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}

// TestReadModelUpgrade migrates a seeded database of the schema before
// the read model: the data is untouched, the read model starts with no
// counters, and a write by another connection after the upgrade is seen.
func TestReadModelUpgrade(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "up.db")
	db, err := storage.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.MigrateTo(ctx, 1149); err != nil {
		t.Fatal(err)
	}
	ds, err := bench.Seed(ctx, db, app.New(db, nil, nil, app.Config{}), 2, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	org := ds.Orgs[0]
	f := app.VendorFilter{Page: app.Page{Page: 1, PerPage: 50}}
	before, err := db.ListVendors(ctx, org.ID, f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := db.ListVendors(ctx, org.ID, f)
	if err != nil || !reflect.DeepEqual(before, after) || after.Total == 0 {
		t.Fatalf("vendors changed by the upgrade (%v): total %d then %d", err, before.Total, after.Total)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE vendors SET name = 'Renamed after upgrade' WHERE organization_id = ? AND id = ?`, org.ID, after.Items[0].ID); err != nil {
		t.Fatal(err)
	}
	got, err := db.ListVendors(ctx, org.ID, f)
	if err != nil || got.Items[0].Name != "Renamed after upgrade" {
		t.Fatalf("cached list missed a write after the upgrade (%v): %q", err, got.Items[0].Name)
	}
	if st := db.ReadCacheStats(); st.Misses == 0 {
		t.Fatalf("the read model was not used after the upgrade: %+v", st)
	}
}
