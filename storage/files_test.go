package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// TestFilesSweep: an unreferenced file is marked on one sweep and removed
// on a later one once its mark is older than the cut-off; referenced files,
// young files and files reused by Put in between stay; stale upload
// leftovers go.
func TestFilesSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	f, err := NewFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	put := func(s string) string {
		t.Helper()
		b, err := f.Put(ctx, strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return b.SHA256
	}
	age := func(hashes ...string) {
		t.Helper()
		old := time.Now().Add(-72 * time.Hour)
		for _, h := range hashes {
			if err := os.Chtimes(f.path(h), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	exists := func(h string) bool {
		t.Helper()
		r, err := f.Open(ctx, h)
		if errors.Is(err, app.ErrNotFound) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		return true
	}
	kept, gone, reused, young := put("referenced"), put("deleted"), put("reused"), put("young")
	age(kept, gone, reused)
	refs := map[string]bool{kept: true}
	referenced := func(h string) bool { return refs[h] }
	cut := func() time.Time { return time.Now().Add(-24 * time.Hour) }
	stale := filepath.Join(dir, ".upload-stale")
	if err := os.WriteFile(stale, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	age2 := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(stale, age2, age2); err != nil {
		t.Fatal(err)
	}

	// First sweep: nothing unreferenced goes yet; the two old ones are marked.
	res, err := f.Sweep(ctx, referenced, cut())
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 1 || !exists(gone) || !exists(reused) || !exists(young) || !exists(kept) {
		t.Fatalf("first sweep removed %+v", res)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale upload file left: %v", err)
	}
	// A sweep right after: the marks are fresh, nothing goes.
	if res, err := f.Sweep(ctx, referenced, cut()); err != nil || res.Removed != 0 {
		t.Fatalf("second sweep: %+v %v", res, err)
	}
	// Put reuses one marked file: that clears its mark.
	if h := put("reused"); h != reused {
		t.Fatal("content address changed")
	}
	// A grace period later the still-marked file goes; the reused one is
	// only marked again; the referenced one stays.
	age(gone, reused, kept)
	res, err = f.Sweep(ctx, referenced, cut())
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 1 || res.Bytes != int64(len("deleted")) || exists(gone) || !exists(reused) || !exists(kept) || !exists(young) {
		t.Fatalf("third sweep: %+v", res)
	}
	r, err := f.Open(ctx, kept)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if !bytes.Equal(b, []byte("referenced")) {
		t.Fatalf("kept content %q", b)
	}
	// Content stored again after removal is stored afresh.
	if h := put("deleted"); h != gone || !exists(gone) {
		t.Fatal("stored again")
	}
}

// TestFileRefColumnsCoverSchema: every column of the schema that holds a
// SHA-256 is known to the file sweep, as a file reference or as a hash of
// text, so a new kind of stored file cannot be swept away unnoticed.
func TestFileRefColumnsCoverSchema(t *testing.T) {
	t.Parallel()
	sqliteOnly(t, "reads the SQLite schema (the PostgreSQL one is translated from it)")
	db := migrated(t)
	rows, err := db.r.Query(`SELECT m.name, p.name FROM sqlite_schema m JOIN pragma_table_info(m.name) p
		WHERE m.type = 'table' AND p.name LIKE '%sha256'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	known := map[string]bool{}
	for _, c := range fileRefColumns {
		known[c.table+"."+c.column] = true
	}
	seen := map[string]bool{}
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			t.Fatal(err)
		}
		k := table + "." + column
		seen[k] = true
		if !known[k] && !notFileColumns[k] {
			t.Errorf("%s holds a hash: list it in fileRefColumns (a stored file) or notFileColumns", k)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for k := range known {
		if !seen[k] {
			t.Errorf("fileRefColumns lists %s, which the schema does not have", k)
		}
	}
	if _, err := db.FileReferences(context.Background()); err != nil {
		t.Fatal(err)
	}
}
