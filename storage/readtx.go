package storage

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// A read transaction: the reads of one request (the read model's counter,
// a list's count and its page) run in one read transaction on one reader
// connection. They then see one snapshot (the total and the page agree)
// and, in WAL mode, the connection checks once per request whether the
// database changed and reloads its pages at most once, instead of once per
// statement when each ran in its own autocommit transaction.
//
// Deadlock freedom. A read transaction holds one pooled connection for
// its whole life, so nothing it runs may wait for a second one: with every
// pooled connection held by a transaction waiting for another, none would
// ever be released. Its statements therefore never go through the pool:
// a statement already in the cache is bound to the transaction's own
// connection (Tx.StmtContext prepares it there once per connection and
// reuses it after); a statement not yet in the cache runs unprepared on
// the transaction and is prepared for the cache only after the
// transaction ended and its connection went back to the pool.

type readTxKey struct{}

// readTx is the querier of a read transaction.
type readTx struct {
	tx *sql.Tx
	rs *stmtCache
	mu sync.Mutex
	// pending are queries to prepare into the cache once the transaction
	// has released its connection.
	pending []string
	// version is the read model's counter of versionOf (organization and
	// resource) read in this transaction, when hasVersion (totals across
	// pages are stored under it).
	version    int64
	versionOf  string
	hasVersion bool
}

// stmt returns the cached statement for query bound to the transaction's
// connection, or nil (then the query is remembered for the cache).
func (r *readTx) stmt(ctx context.Context, query string) *sql.Stmt {
	if st := r.rs.lookup(query); st != nil {
		return r.tx.StmtContext(ctx, st)
	}
	if r.rs.hasRoom() {
		r.mu.Lock()
		r.pending = append(r.pending, query)
		r.mu.Unlock()
	}
	return nil
}

func (r *readTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return r.tx.ExecContext(ctx, query, args...)
}

func (r *readTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.tx.QueryContext(ctx, query, args...)
}

func (r *readTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.tx.QueryRowContext(ctx, query, args...)
}

// inReadTx runs fn with its reads in one read transaction on one reader
// connection. Inside a write transaction or another read transaction fn
// joins it. On PostgreSQL fn runs as before, each statement on its own
// (a transaction there costs two more round trips).
func (db *DB) inReadTx(ctx context.Context, fn func(context.Context) error) error {
	if db.pg || ctx.Value(txKey{}) != nil || ctx.Value(readTxKey{}) != nil {
		return fn(ctx)
	}
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	rt := &readTx{tx: tx, rs: db.rs}
	err = fn(context.WithValue(ctx, readTxKey{}, rt))
	// The transaction only read: ending it either way is the same, and a
	// failure to end it is not the read's failure.
	if rerr := tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) && err == nil {
		err = rerr
	}
	// The connection is back in the pool: preparing may take one now.
	for _, q := range rt.pending {
		if _, perr := db.rs.get(context.WithoutCancel(ctx), q); perr != nil {
			break
		}
	}
	return err
}
