// Package storagetest opens the database a test runs against: a SQLite
// file in the test's temp directory, or, when COMPLIANCE_TEST_STORE is
// "postgres", a fresh database on the PostgreSQL cluster named by
// COMPLIANCE_TEST_POSTGRES (.ci/with-postgres starts one).
package storagetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/compliance-appliance/compliance/storage"
	_ "github.com/jackc/pgx/v5/stdlib" // the admin connection
)

// Postgres reports whether the suite's stores are PostgreSQL.
func Postgres() bool { return os.Getenv("COMPLIANCE_TEST_STORE") == "postgres" }

// Location returns where a test's database is: a SQLite path in dir, or
// the URL of a fresh, migrated PostgreSQL database dropped at the end of
// the test.
func Location(t testing.TB, dir string) string {
	t.Helper()
	if !Postgres() {
		return filepath.Join(dir, "compliance.db")
	}
	u := PostgresURL(t)
	locations.Store(dir, u)
	return u
}

// Open opens and migrates the test's database.
func Open(t testing.TB) *storage.DB {
	t.Helper()
	ctx := context.Background()
	db, err := storage.OpenURL(ctx, Location(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

var (
	tplOnce sync.Once
	tplName string
	tplErr  error
)

// AdminURL is the PostgreSQL cluster's admin URL; a test needing it is
// skipped loudly without one (make test always starts one), and fails in
// CI (CI set), where a missing cluster is a broken setup.
func AdminURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("COMPLIANCE_TEST_POSTGRES")
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("PostgreSQL is not available: in CI the tests run through .ci/with-postgres, which sets COMPLIANCE_TEST_POSTGRES (make test does)")
		}
		t.Skip("SKIPPED: PostgreSQL is not available: set COMPLIANCE_TEST_POSTGRES or run the tests through .ci/with-postgres (make test does)")
	}
	return u
}

// PostgresURL creates a fresh database, copied from a migrated template
// made once per process, and returns its URL. It is dropped after the
// test.
func PostgresURL(t testing.TB) string {
	t.Helper()
	admin := AdminURL(t)
	tplOnce.Do(func() { tplName, tplErr = makeTemplate(admin) })
	if tplErr != nil {
		t.Fatalf("PostgreSQL template: %v", tplErr)
	}
	return createDatabase(t, admin, tplName)
}

// EmptyPostgresURL creates a fresh, unmigrated database.
func EmptyPostgresURL(t testing.TB) string {
	t.Helper()
	return createDatabase(t, AdminURL(t), "template0")
}

func createDatabase(t testing.TB, admin, template string) string {
	t.Helper()
	a, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	name := "t_" + randHex()
	if _, err := a.Exec(fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, template)); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		a, err := sql.Open("pgx", admin)
		if err != nil {
			return
		}
		defer a.Close()
		_, _ = a.Exec(fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name))
	})
	return withDatabase(admin, name)
}

func withDatabase(admin, name string) string {
	u, err := url.Parse(admin)
	if err != nil {
		return admin
	}
	u.Path = "/" + name
	return u.String()
}

func randHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// makeTemplate migrates a template database once for every test process
// (the name carries the process id: packages run in parallel).
func makeTemplate(admin string) (string, error) {
	ctx := context.Background()
	a, err := sql.Open("pgx", admin)
	if err != nil {
		return "", err
	}
	defer a.Close()
	name := fmt.Sprintf("tpl_%d_%s", os.Getpid(), randHex())
	if _, err := a.ExecContext(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE template0`, name)); err != nil {
		return "", err
	}
	db, err := storage.OpenURL(ctx, withDatabase(admin, name))
	if err != nil {
		return "", err
	}
	_, err = db.Migrate(ctx)
	db.Close()
	if err != nil {
		return "", err
	}
	return name, nil
}
