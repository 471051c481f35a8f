package storage

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

	_ "github.com/jackc/pgx/v5/stdlib" // the admin connection
)

// This package's own tests cannot import storagetest (it imports
// storage), so the few lines that pick the store are repeated here: a
// SQLite file in the test's temp directory, or, with
// COMPLIANCE_TEST_STORE=postgres, a fresh database copied from a template
// migrated once per test process on the cluster named by
// COMPLIANCE_TEST_POSTGRES.

// testPostgres reports whether the tests' stores are PostgreSQL.
func testPostgres() bool { return os.Getenv("COMPLIANCE_TEST_STORE") == "postgres" }

// sqliteOnly skips a test about SQLite itself when the suite runs on
// PostgreSQL.
func sqliteOnly(t testing.TB, reason string) {
	t.Helper()
	if testPostgres() {
		t.Skip("SQLite-only: " + reason)
	}
}

// testLocation is where a test's database is: a SQLite path, or the URL
// of a fresh, migrated PostgreSQL database dropped after the test.
func testLocation(t testing.TB) string {
	t.Helper()
	if !testPostgres() {
		return filepath.Join(t.TempDir(), "t.db")
	}
	admin := os.Getenv("COMPLIANCE_TEST_POSTGRES")
	if admin == "" {
		t.Skip("SKIPPED: PostgreSQL is not available: set COMPLIANCE_TEST_POSTGRES or run the tests through .ci/with-postgres (make test does)")
	}
	testTplOnce.Do(func() { testTplName, testTplErr = makeTestTemplate(admin) })
	if testTplErr != nil {
		t.Fatalf("PostgreSQL template: %v", testTplErr)
	}
	return newTestDatabase(t, admin, testTplName)
}

// testEmptyLocation is like testLocation, but the database has no schema
// yet.
func testEmptyLocation(t testing.TB) string {
	t.Helper()
	if !testPostgres() {
		return filepath.Join(t.TempDir(), "t.db")
	}
	admin := os.Getenv("COMPLIANCE_TEST_POSTGRES")
	if admin == "" {
		t.Skip("SKIPPED: PostgreSQL is not available: set COMPLIANCE_TEST_POSTGRES or run the tests through .ci/with-postgres (make test does)")
	}
	return newTestDatabase(t, admin, "template0")
}

func newTestDatabase(t testing.TB, admin, template string) string {
	t.Helper()
	a, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	name := "t_" + testRandHex()
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
	return testDatabaseURL(admin, name)
}

var (
	testTplOnce sync.Once
	testTplName string
	testTplErr  error
)

func makeTestTemplate(admin string) (string, error) {
	ctx := context.Background()
	a, err := sql.Open("pgx", admin)
	if err != nil {
		return "", err
	}
	defer a.Close()
	name := fmt.Sprintf("tpl_%d_%s", os.Getpid(), testRandHex())
	if _, err := a.ExecContext(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE template0`, name)); err != nil {
		return "", err
	}
	db, err := OpenURL(ctx, testDatabaseURL(admin, name))
	if err != nil {
		return "", err
	}
	_, err = db.Migrate(ctx)
	db.Close()
	return name, err
}

func testDatabaseURL(admin, name string) string {
	u, err := url.Parse(admin)
	if err != nil {
		return admin
	}
	u.Path = "/" + name
	return u.String()
}

func testRandHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
