package storage_test

import (
	"context"
	"database/sql"
	"io/fs"
	"strings"
	"sync"
	"testing"

	assets "github.com/compliance-appliance/compliance/embed"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/storage/storagetest"
)

// TestConcurrentFirstMigration: several processes (here: stores with
// their own connections) migrate one empty PostgreSQL database at the
// same moment, as replicas starting together do. Every one succeeds,
// each migration is applied by exactly one of them, and the schema is
// recorded once.
func TestConcurrentFirstMigration(t *testing.T) {
	url := storagetest.EmptyPostgresURL(t) // skipped loudly without a cluster
	ctx := context.Background()
	entries, err := fs.ReadDir(assets.Migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	known := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			known++
		}
	}
	const n = 4
	dbs := make([]*storage.DB, n)
	for i := range dbs {
		db, err := storage.OpenURL(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		applied = make([][]string, n)
		errs    = make([]error, n)
	)
	for i, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			applied[i], errs[i] = db.Migrate(ctx)
		}()
	}
	close(start)
	wg.Wait()
	seen := map[string]int{}
	for i := range dbs {
		if errs[i] != nil {
			t.Fatalf("migration %d of %d failed: %v", i+1, n, errs[i])
		}
		for _, name := range applied[i] {
			seen[name]++
		}
	}
	if len(seen) != known {
		t.Fatalf("%d migrations applied in all, want %d", len(seen), known)
	}
	for name, times := range seen {
		if times != 1 {
			t.Errorf("%s applied %d times", name, times)
		}
	}
	raw, err := sql.Open("compliance-postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var rows, distinct int
	if err := raw.QueryRow("SELECT count(*), count(DISTINCT version) FROM schema_migrations").Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != known || distinct != known {
		t.Fatalf("schema_migrations holds %d rows (%d versions), want %d", rows, distinct, known)
	}
	// The session lock went with the migration: no advisory lock is left.
	var held int
	if err := raw.QueryRow(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Fatalf("%d advisory locks still held after migrating", held)
	}
	// The lock is released: a later migration (the next start) neither
	// waits nor applies anything.
	for _, db := range dbs {
		if again, err := db.Migrate(ctx); err != nil || len(again) != 0 {
			t.Fatalf("migrating again: %v %v", again, err)
		}
	}
	applied1, known1, err := dbs[0].SchemaVersion(ctx)
	if err != nil || applied1 != known1 || known1 == 0 {
		t.Fatalf("schema version %d of %d: %v", applied1, known1, err)
	}
}
