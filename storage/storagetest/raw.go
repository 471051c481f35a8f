package storagetest

import (
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
)

// locations maps a test's directory to the PostgreSQL database Location
// made for it.
var locations sync.Map

// Raw opens the database Location gave for dir directly, outside the
// store, for assertions the API does not expose and for seeding tables:
// the SQLite file, or the PostgreSQL database through the store's driver
// (so SQLite-style ? placeholders work on both). It is closed after the
// test.
func Raw(t testing.TB, dir string) *sql.DB {
	t.Helper()
	var (
		db  *sql.DB
		err error
	)
	if u, ok := locations.Load(dir); ok {
		db, err = sql.Open("compliance-postgres", u.(string))
	} else {
		db, err = sql.Open("sqlite", "file:"+filepath.Join(dir, "compliance.db")+"?_pragma=busy_timeout(5000)")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
