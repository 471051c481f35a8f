package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	assets "github.com/compliance-appliance/compliance/embed"
)

func openUnmigrated(t *testing.T) *DB {
	t.Helper()
	db, err := OpenURL(context.Background(), testEmptyLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func migrated(t *testing.T) *DB {
	t.Helper()
	db, err := OpenURL(context.Background(), testLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestMigrationsApplyOnceAndInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openUnmigrated(t)
	ms, err := loadMigrations(assetsFS())
	if err != nil {
		t.Fatal(err)
	}
	first, err := db.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(ms) || len(first) == 0 {
		t.Fatalf("first run applies all %d migrations, applied %v", len(ms), first)
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].version <= ms[i-1].version {
			t.Fatalf("migrations out of order: %s before %s", ms[i-1].name, ms[i].name)
		}
	}
	second, err := db.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(second) != 0 {
		t.Fatalf("migrating twice is a no-op, applied %v", second)
	}
	var n int
	if err := db.w.QueryRow("SELECT count(*) FROM schema_migrations").Scan(&n); err != nil || n != len(ms) {
		t.Fatalf("each migration recorded once: %d rows, %v", n, err)
	}
	applied, known, err := db.SchemaVersion(ctx)
	if err != nil || applied != known || known != ms[len(ms)-1].version {
		t.Fatalf("schema version %d of %d: %v", applied, known, err)
	}
	if db.IsPostgres() {
		return // STRICT is a SQLite table option
	}
	// Every table is STRICT, except FTS5 virtual tables and the shadow
	// tables SQLite creates for them (STRICT does not apply to either).
	rows, err := db.r.Query(`SELECT name, sql FROM sqlite_master t WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
		AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'
		AND NOT EXISTS (SELECT 1 FROM sqlite_master v WHERE v.type = 'table' AND v.sql LIKE 'CREATE VIRTUAL TABLE%'
			AND t.name IN (v.name || '_data', v.name || '_idx', v.name || '_content', v.name || '_docsize', v.name || '_config'))`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(strings.TrimSpace(ddl), "STRICT") {
			t.Errorf("table %s is not STRICT", name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	if _, err := db.w.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', '2030-01-01T00:00:00.000Z')`); err != nil {
		t.Fatal(err)
	}
	_, err := db.Migrate(ctx)
	if err == nil || !strings.Contains(err.Error(), "9999") || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("a newer schema must be refused with a clear message, got %v", err)
	}
}

func TestPragmas(t *testing.T) {
	t.Parallel()
	sqliteOnly(t, "PRAGMA settings of the SQLite connections")
	db := migrated(t)
	check := func(q *sql.DB, pragma, want string) {
		t.Helper()
		var got string
		if err := q.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
	check(db.w, "journal_mode", "wal")
	check(db.w, "synchronous", "2") // FULL
	check(db.w, "foreign_keys", "1")
	check(db.w, "busy_timeout", "5000")
	check(db.r, "query_only", "1")
	check(db.r, "foreign_keys", "1")
	if _, err := db.r.Exec(`INSERT INTO organizations (id, name, slug, plan, created_at, updated_at) VALUES ('o', 'n', 's', 'free', '', '')`); err == nil {
		t.Fatal("the reader pool must be read-only")
	}
}

func newOrg(t *testing.T, db *DB, ctx context.Context, id string) {
	t.Helper()
	now := time.Now()
	if err := db.CreateOrganization(ctx, &app.Organization{ID: id, Name: id, Slug: id, Plan: app.PlanFree, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

func orgExists(t *testing.T, db *DB, id string) bool {
	t.Helper()
	_, err := db.GetOrganization(context.Background(), id)
	if err != nil && !errors.Is(err, app.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func TestInTxSavepoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	boom := errors.New("boom")

	// An inner failure undoes only the inner work.
	err := db.InTx(ctx, func(ctx context.Context) error {
		newOrg(t, db, ctx, "outer")
		if err := db.InTx(ctx, func(ctx context.Context) error {
			newOrg(t, db, ctx, "inner")
			// Reads inside the transaction see its own writes.
			if _, err := db.GetOrganization(ctx, "inner"); err != nil {
				t.Errorf("read own write: %v", err)
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Errorf("inner error returned: %v", err)
		}
		return db.InTx(ctx, func(ctx context.Context) error {
			newOrg(t, db, ctx, "second")
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !orgExists(t, db, "outer") || orgExists(t, db, "inner") || !orgExists(t, db, "second") {
		t.Fatal("savepoint semantics: outer and second commit, inner rolls back")
	}

	// An outer failure undoes the committed inner savepoints too.
	err = db.InTx(ctx, func(ctx context.Context) error {
		if err := db.InTx(ctx, func(ctx context.Context) error {
			newOrg(t, db, ctx, "released")
			return nil
		}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || orgExists(t, db, "released") {
		t.Fatalf("outer failure rolls back everything: %v", err)
	}

	// A panic rolls back and propagates; the writer stays usable.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic must propagate")
			}
		}()
		_ = db.InTx(ctx, func(ctx context.Context) error {
			newOrg(t, db, ctx, "panicked")
			panic("boom")
		})
	}()
	if orgExists(t, db, "panicked") {
		t.Fatal("a panic rolls back")
	}
	if err := db.InTx(ctx, func(ctx context.Context) error { newOrg(t, db, ctx, "after"); return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	newOrg(t, db, ctx, "o1")
	now := time.Now()
	err := db.CreateOrganization(ctx, &app.Organization{ID: "o1", Name: "x", Slug: "other", Plan: app.PlanFree, CreatedAt: now, UpdatedAt: now})
	if !errors.Is(err, app.ErrConflict) {
		t.Fatalf("a primary-key violation is ErrConflict, got %v", err)
	}
	if _, err := db.GetOrganization(ctx, "nope"); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("no rows is ErrNotFound, got %v", err)
	}
	if err := db.UpdateOrganization(ctx, &app.Organization{ID: "nope", Plan: app.PlanFree}); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("updating nothing is ErrNotFound, got %v", err)
	}
	// The audit log is append-only.
	err = db.InTx(app.SystemContext(ctx, "o1"), func(ctx context.Context) error {
		return db.AppendAudit(ctx, &app.AuditRecord{ID: "aud_1", OrganizationID: "o1", OccurredAt: now, ActorType: "system",
			ActorID: "system", Action: "created", ResourceType: "organization", ResourceID: "o1"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(`UPDATE audit_log SET action = 'forged'`); err == nil {
		t.Fatal("audit records cannot be updated")
	}
	if _, err := db.w.Exec(`DELETE FROM audit_log`); err == nil {
		t.Fatal("audit records cannot be deleted")
	}
}

func TestTimesRoundTripAndSort(t *testing.T) {
	t.Parallel()
	in := time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.FixedZone("CET", 3600))
	s := ts(in)
	if s != "2026-03-04T04:06:07.891Z" {
		t.Fatalf("stored form %s", s)
	}
	if got := parseTS(s); !got.Equal(in) || got.Location() != time.UTC {
		t.Fatalf("round trip %v", got)
	}
	for _, bad := range []string{"2026-13-04T04:06:07.891Z", "2026-03-04 04:06:07.891Z", "2026-03-04T04:06:07.89xZ"} {
		if _, ok := parseFixedTS(bad); ok {
			t.Errorf("parseFixedTS accepted %q", bad)
		}
	}
	if got := parseTS("2026-03-04T04:06:07Z"); !got.Equal(time.Date(2026, 3, 4, 4, 6, 7, 0, time.UTC)) {
		t.Fatalf("other RFC 3339 forms still parse: %v", got)
	}
	if !(ts(in) < ts(in.Add(time.Millisecond))) || !(ts(in.Add(9*time.Second)) < ts(in.Add(10*time.Second))) {
		t.Fatal("stored times sort as text")
	}
}

func TestBackupIsAReadableCopy(t *testing.T) {
	t.Parallel()
	sqliteOnly(t, "Backup copies the SQLite file")
	ctx := context.Background()
	db := migrated(t)
	newOrg(t, db, ctx, "kept")
	to := filepath.Join(t.TempDir(), "copy.db")
	if err := db.Backup(ctx, to); err != nil {
		t.Fatal(err)
	}
	cp, err := Open(ctx, to)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if applied, err := cp.Migrate(ctx); err != nil || len(applied) != 0 {
		t.Fatalf("the copy carries the schema: %v %v", applied, err)
	}
	if _, err := cp.GetOrganization(ctx, "kept"); err != nil {
		t.Fatalf("the copy carries the data: %v", err)
	}
	var check string
	if err := cp.w.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %s %v", check, err)
	}
	if err := db.Backup(ctx, to); err == nil {
		t.Fatal("backup must not overwrite an existing file")
	}
}

func assetsFS() fs.FS { return assets.Migrations }

// TestNoStat4Samples: the STAT4 samples ANALYZE gathers are dropped when
// the database opens and by the nightly optimize (sqlite_stat1 stays), so
// a changed organization binding never recompiles a list statement.
func TestNoStat4Samples(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stats.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(ctx, func(ctx context.Context) error {
		for o := range 3 {
			org := fmt.Sprintf("org_%d", o)
			if err := db.CreateOrganization(ctx, &app.Organization{ID: org, Name: org, Slug: org, Plan: app.PlanEnterprise, CreatedAt: time.Now(), UpdatedAt: time.Now()}); err != nil {
				return err
			}
			for i := range 50 {
				if err := db.CreateVendor(ctx, org, benchVendor(o*50+i)); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	count := func(table string) int {
		t.Helper()
		var n int
		if err := db.w.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := db.w.Exec(`ANALYZE`); err != nil {
		t.Fatal(err)
	}
	if count("sqlite_stat4") == 0 || count("sqlite_stat1") == 0 {
		t.Fatal("ANALYZE gathered no statistics to drop")
	}
	db.Close()
	if db, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	if count("sqlite_stat4") != 0 || count("sqlite_stat1") == 0 {
		t.Fatalf("after open: stat4 %d, stat1 %d", count("sqlite_stat4"), count("sqlite_stat1"))
	}
	if _, err := db.w.Exec(`ANALYZE`); err != nil {
		t.Fatal(err)
	}
	if err := db.Optimize(ctx); err != nil {
		t.Fatal(err)
	}
	if count("sqlite_stat4") != 0 || count("sqlite_stat1") == 0 {
		t.Fatalf("after optimize: stat4 %d, stat1 %d", count("sqlite_stat4"), count("sqlite_stat1"))
	}
	// The lists still answer, from their indexes.
	l, err := db.ListVendors(ctx, "org_1", app.VendorFilter{Criticality: "critical", Page: app.Page{Page: 1, PerPage: 10}})
	if err != nil || l.Total == 0 {
		t.Fatalf("list after optimize: %d %v", l.Total, err)
	}
}
