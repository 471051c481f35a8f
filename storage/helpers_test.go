package storage

import (
	"context"
	"testing"
)

// openTest opens a migrated database in a temporary directory.
func openTest(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := OpenURL(ctx, testLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}
