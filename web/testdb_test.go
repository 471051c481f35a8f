package web

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/compliance-appliance/compliance/storage"
)

// The package's tests start from one database migrated once: applying
// every migration costs more than a second under the race detector, and
// most tests start at least one server. openMigrated copies that file.
var dbTemplate struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// migratedTemplate migrates a database in a directory of its own once and
// returns its path; removeTemplate deletes it when the package's tests end.
func migratedTemplate() (string, error) {
	dbTemplate.once.Do(func() {
		dir, err := os.MkdirTemp("", "web-test-template-")
		if err != nil {
			dbTemplate.err = err
			return
		}
		dbTemplate.dir = dir
		path := filepath.Join(dir, "template.db")
		ctx := context.Background()
		db, err := storage.Open(ctx, path)
		if err != nil {
			dbTemplate.err = err
			return
		}
		if _, err := db.Migrate(ctx); err != nil {
			db.Close()
			dbTemplate.err = fmt.Errorf("migrate the template database: %w", err)
			return
		}
		if err := db.Close(); err != nil {
			dbTemplate.err = err
			return
		}
		dbTemplate.path = path
	})
	return dbTemplate.path, dbTemplate.err
}

func removeTemplate() {
	if dbTemplate.dir != "" {
		os.RemoveAll(dbTemplate.dir)
	}
}

// openMigrated opens a database at path holding the whole schema, as
// Migrate leaves it: a copy of the template, then Migrate, which finds
// every migration applied and only sets up what a freshly opened
// database needs (the read model's triggers).
func openMigrated(tb testing.TB, path string) *storage.DB {
	tb.Helper()
	src, err := migratedTemplate()
	if err != nil {
		tb.Fatal(err)
	}
	// Close checkpoints the write-ahead log into the main file and removes
	// it; a log left behind is copied with it all the same.
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(src+suffix, path+suffix); err != nil && !(suffix != "" && os.IsNotExist(err)) {
			tb.Fatal(err)
		}
	}
	ctx := context.Background()
	db, err := storage.Open(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	return db
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
