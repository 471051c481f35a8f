package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func openCommitTestDB(t *testing.T) *DB {
	t.Helper()
	db, err := OpenURL(context.Background(), testLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(`CREATE TABLE gc_probe (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestGroupCommitIsolatesCalls runs many concurrent transactions: those that
// fail leave nothing behind, those that succeed are all committed, and a
// nested call's failure undoes only the nested work.
func TestGroupCommitIsolatesCalls(t *testing.T) {
	t.Parallel()
	db := openCommitTestDB(t)
	ctx := context.Background()
	errBoom := errors.New("boom")
	var wg sync.WaitGroup
	errs := make([]error, 200)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = db.InTx(ctx, func(ctx context.Context) error {
				if _, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO gc_probe (k) VALUES (?)`, fmt.Sprint("k", i)); err != nil {
					return err
				}
				nested := db.InTx(ctx, func(ctx context.Context) error {
					if _, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO gc_probe (k) VALUES (?)`, fmt.Sprint("n", i)); err != nil {
						return err
					}
					if i%5 == 0 {
						return errBoom
					}
					return nil
				})
				if i%5 == 0 && !errors.Is(nested, errBoom) {
					return fmt.Errorf("nested error lost: %v", nested)
				}
				if i%3 == 0 {
					return errBoom
				}
				return nil
			})
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		want := i%3 == 0
		if want != errors.Is(err, errBoom) || (!want && err != nil) {
			t.Fatalf("call %d: %v", i, err)
		}
		var k, n int
		if err := db.r.QueryRow(`SELECT count(*) FROM gc_probe WHERE k = ?`, fmt.Sprint("k", i)).Scan(&k); err != nil {
			t.Fatal(err)
		}
		if err := db.r.QueryRow(`SELECT count(*) FROM gc_probe WHERE k = ?`, fmt.Sprint("n", i)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		wantK, wantN := 1, 1
		if i%3 == 0 {
			wantK, wantN = 0, 0
		} else if i%5 == 0 {
			wantN = 0
		}
		if k != wantK || n != wantN {
			t.Fatalf("call %d: rows k=%d n=%d, want %d %d", i, k, n, wantK, wantN)
		}
	}
}

// TestGroupCommitPanic re-raises a panic in the caller and leaves the
// other calls unharmed.
func TestGroupCommitPanic(t *testing.T) {
	t.Parallel()
	db := openCommitTestDB(t)
	ctx := context.Background()
	func() {
		defer func() {
			if p := recover(); p != "kaboom" {
				t.Fatalf("recovered %v, want kaboom", p)
			}
		}()
		_ = db.InTx(ctx, func(ctx context.Context) error {
			_, _ = db.wr(ctx).ExecContext(ctx, `INSERT INTO gc_probe (k) VALUES ('p')`)
			panic("kaboom")
		})
	}()
	if err := db.InTx(ctx, func(ctx context.Context) error {
		_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO gc_probe (k) VALUES ('after')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.r.QueryRow(`SELECT count(*) FROM gc_probe`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows %d (%v), want only the call after the panic", n, err)
	}
}

// TestGroupCommitClosed answers calls after Close with an error.
func TestGroupCommitClosed(t *testing.T) {
	t.Parallel()
	db, err := OpenURL(context.Background(), testLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(context.Background(), func(context.Context) error { return nil }); !errors.Is(err, errClosed) {
		t.Fatalf("InTx after Close: %v", err)
	}
}
