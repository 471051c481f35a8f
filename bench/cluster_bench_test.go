//go:build linux

package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	_ "modernc.org/sqlite"
)

// rowidSchema is the last schema version with vendors and findings as
// rowid tables (migration 1190 clusters them by organization).
const rowidSchema = 1189

// clusterBenchOrgs organizations of the load dataset (1,000 vendors and 500
// findings each) are seeded for BenchmarkClusteredShape.
const clusterBenchOrgs = 20

// clusterShapes are the databases BenchmarkClusteredShape compares, built
// from one seeded dataset:
//
//   - "rowid": the load seeder's file (vacuumed, like every shape), rowid
//     tables with the organization's index; the seeder writes one
//     organization after the other, so an organization's rows already sit
//     together in rowid order (the best case of a rowid table);
//   - "rowid-interleaved": the same rows in creation order across
//     organizations, as an appliance that has taken writes from every
//     organization over months stores them (rowids interleave);
//   - "clustered": the interleaved file migrated to WITHOUT ROWID tables
//     keyed by (organization_id, id) (migration 1190).
var clusterShapes = []string{"rowid", "rowid-interleaved", "clustered"}

type clusterFixture struct {
	paths map[string]string
	orgs  []*Org
}

// clusterDatasets builds the shapes' files in the benchmark's temporary
// directory (the top-level benchmark runs once; -count repeats each
// sub-benchmark).
func clusterDatasets(b *testing.B) *clusterFixture {
	b.Helper()
	paths, orgs, err := buildClusterDatasets(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return &clusterFixture{paths: paths, orgs: orgs}
}

func buildClusterDatasets(dir string) (map[string]string, []*Org, error) {
	ctx := context.Background()
	paths := map[string]string{}
	for _, s := range clusterShapes {
		paths[s] = filepath.Join(dir, s+".db")
	}
	db, err := storage.Open(ctx, paths["rowid"])
	if err != nil {
		return nil, nil, err
	}
	if _, err := db.MigrateTo(ctx, rowidSchema); err != nil {
		db.Close()
		return nil, nil, err
	}
	a := app.New(db, nil, nil, app.Config{})
	ds, err := Seed(ctx, db, a, clusterBenchOrgs, 1, nil)
	if err == nil {
		err = db.Optimize(ctx)
	}
	db.Close()
	if err != nil {
		return nil, nil, err
	}
	if err := vacuum(paths["rowid"]); err != nil {
		return nil, nil, err
	}
	if err := copyFile(paths["rowid"], paths["rowid-interleaved"]); err != nil {
		return nil, nil, err
	}
	if err := interleave(paths["rowid-interleaved"]); err != nil {
		return nil, nil, err
	}
	if err := copyFile(paths["rowid-interleaved"], paths["clustered"]); err != nil {
		return nil, nil, err
	}
	db, err = storage.Open(ctx, paths["clustered"])
	if err != nil {
		return nil, nil, err
	}
	if _, err = db.Migrate(ctx); err == nil {
		err = db.Optimize(ctx)
	}
	db.Close()
	if err == nil {
		err = vacuum(paths["clustered"])
	}
	return paths, ds.Orgs, err
}

// vacuum rewrites a file compactly, so that the shapes compared differ in
// their tables' keys only, not in how fragmented the seeding left them.
func vacuum(path string) error {
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		return err
	}
	defer raw.Close()
	_, err = raw.Exec(`VACUUM; PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// interleave rewrites vendors and findings in creation order across
// organizations (new rowids in that order), foreign keys off so nothing
// cascades; the triggers keep the search index as it was.
func interleave(path string) error {
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(0)&_pragma=journal_mode(WAL)")
	if err != nil {
		return err
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	for _, t := range []string{"vendors", "findings"} {
		if _, err := raw.Exec(`BEGIN;
			CREATE TEMP TABLE moved AS SELECT * FROM ` + t + ` ORDER BY created_at, id;
			DELETE FROM ` + t + `;
			INSERT INTO ` + t + ` SELECT * FROM moved ORDER BY created_at, id;
			DROP TABLE moved;
			COMMIT`); err != nil {
			return fmt.Errorf("interleave %s: %w", t, err)
		}
	}
	_, err = raw.Exec(`VACUUM; PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// BenchmarkClusteredShape measures what the vendors' and findings' table
// shape costs per request on a cold reader: before every timed read another
// connection commits a change to a vendor of the organization (as the mixed
// workload does), so the reader finds the database changed and starts with
// an empty page cache (and a fresh memory map); the write itself is not
// timed. vendors-list / findings-list: the count and a 50-row page of one
// organization; -get: one row by id; vendors-insert100: 100 vendor inserts
// in one transaction, its commit's fsync included.
//
// Besides time, each op reports the CPU time and the minor page faults of
// the calling thread alone (RUSAGE_THREAD, the goroutine locked to it;
// faults count the 64 KiB fault-around windows of the memory map a read
// touches), and the process's CPU time during the op (the insert runs on
// the committer goroutine: its thread figures mean nothing). CPU figures
// move less than wall time with the other load on a shared machine. Compare shapes with benchstat -col /shape (-count 6).
func BenchmarkClusteredShape(b *testing.B) {
	fix := clusterDatasets(b)
	ctx := context.Background()
	fresh := storage.WithoutReadModel(ctx)
	type env struct {
		db *storage.DB
		w  *sql.DB
	}
	ops := []struct {
		name string
		fn   func(b *testing.B, e env, org *Org, i int) (cleanup func())
	}{
		{"vendors-list", func(b *testing.B, e env, org *Org, i int) func() {
			l, err := e.db.ListVendors(fresh, org.ID, app.VendorFilter{Page: app.Page{Page: 1 + (i/len(fix.orgs))%19, PerPage: 50}})
			if err != nil || len(l.Items) != 50 {
				b.Fatalf("list: %d items, %v", len(l.Items), err)
			}
			return nil
		}},
		{"vendors-get", func(b *testing.B, e env, org *Org, i int) func() {
			ids := org.IDs["vendor"]
			if _, err := e.db.GetVendor(fresh, org.ID, ids[(i*7919)%len(ids)]); err != nil {
				b.Fatal(err)
			}
			return nil
		}},
		{"findings-list", func(b *testing.B, e env, org *Org, i int) func() {
			l, err := e.db.ListFindings(fresh, org.ID, app.FindingFilter{Page: app.Page{Page: 1 + (i/len(fix.orgs))%10, PerPage: 50}})
			if err != nil || len(l.Items) != 50 {
				b.Fatalf("list: %d items, %v", len(l.Items), err)
			}
			return nil
		}},
		{"findings-get", func(b *testing.B, e env, org *Org, i int) func() {
			ids := org.IDs["finding"]
			if _, err := e.db.GetFinding(fresh, org.ID, ids[(i*7919)%len(ids)]); err != nil {
				b.Fatal(err)
			}
			return nil
		}},
		{"vendors-insert100", func(b *testing.B, e env, org *Org, i int) func() {
			now := time.Now().UTC()
			var ids []string
			err := e.db.InTx(ctx, func(ctx context.Context) error {
				for j := 0; j < 100; j++ {
					v := &app.Vendor{ID: app.NewID(app.PrefixVendor), Name: fmt.Sprintf("Bench vendor %d-%d", i, j),
						Description: "Inserted by the shape benchmark.", Category: app.VendorCategories[0], Status: app.VendorStatuses[0],
						InherentProbability: app.Probabilities[0], InherentImpact: app.Impacts[0], Criticality: app.Criticalities[0],
						DPAStatus: "not_required", SubProcessors: []app.SubProcessor{}, CreatedAt: now, UpdatedAt: now}
					if err := e.db.CreateVendor(ctx, org.ID, v); err != nil {
						return err
					}
					ids = append(ids, v.ID)
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			// The next op starts from the same dataset.
			return func() {
				if _, err := e.w.Exec(`DELETE FROM vendors WHERE organization_id = ? AND id IN (SELECT value FROM json_each(?))`,
					org.ID, `["`+strings.Join(ids, `","`)+`"]`); err != nil {
					b.Fatal(err)
				}
			}
		}},
	}
	for _, op := range ops {
		for _, shape := range clusterShapes {
			b.Run(op.name+"/shape="+shape, func(b *testing.B) {
				db, err := storage.Open(ctx, fix.paths[shape])
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				w, err := sql.Open("sqlite", "file:"+fix.paths[shape]+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				w.SetMaxOpenConns(1)
				e := env{db, w}
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var cpu, proc time.Duration
				var faults int64
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					org := fix.orgs[i%len(fix.orgs)]
					b.StopTimer()
					if _, err := w.Exec(`UPDATE vendors SET updated_at = ? WHERE organization_id = ? AND id = ?`,
						time.Now().UTC().Format(time.RFC3339Nano), org.ID, org.IDs["vendor"][i%len(org.IDs["vendor"])]); err != nil {
						b.Fatal(err)
					}
					c0, f0 := threadUsage()
					p0 := processCPU()
					b.StartTimer()
					cleanup := op.fn(b, e, org, i)
					b.StopTimer()
					c1, f1 := threadUsage()
					proc += processCPU() - p0
					cpu += c1 - c0
					faults += f1 - f0
					if cleanup != nil {
						cleanup()
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "thread-cpu-ns/op")
				b.ReportMetric(float64(proc.Nanoseconds())/float64(b.N), "proc-cpu-ns/op")
				b.ReportMetric(float64(faults)/float64(b.N), "minflt/op")
			})
		}
	}
}

// threadUsage is the CPU time and the minor page faults of the calling
// thread.
func threadUsage() (time.Duration, int64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Minflt
}
