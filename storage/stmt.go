package storage

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// maxCachedStmts bounds the statement cache; list queries built from
// optional filters beyond it run unprepared.
const maxCachedStmts = 512

// stmtCache keeps prepared statements of the reader pool by SQL text, so a
// read skips SQLite's parser (about 40% of a vendor list's CPU time when
// every call prepared its statement). database/sql prepares each statement
// lazily once per pooled connection.
type stmtCache struct {
	db *sql.DB
	mu sync.RWMutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

// lookup returns the cached statement for query, or nil; it never
// prepares (a read transaction must not take a second connection).
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[query]
}

// hasRoom reports whether the cache takes another statement.
func (c *stmtCache) hasRoom() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m) < maxCachedStmts
}

// get returns the prepared statement for query, or nil when the cache is
// full (the caller then runs the query unprepared). It prepares without
// holding the cache's lock: preparing waits for a pooled connection, and
// read transactions holding connections look statements up under that
// lock (readtx.go).
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := c.lookup(query); st != nil {
		return st, nil
	}
	if !c.hasRoom() {
		return nil, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if old := c.m[query]; old != nil || len(c.m) >= maxCachedStmts {
		c.mu.Unlock()
		return old, st.Close() // prepared twice at once, or full meanwhile
	}
	c.m[query] = st
	c.mu.Unlock()
	return st, nil
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, st := range c.m {
		errs = append(errs, st.Close())
		delete(c.m, q)
	}
	return errors.Join(errs...)
}

// cachedReader is the reader pool behind the statement cache.
type cachedReader struct{ c *stmtCache }

func (r cachedReader) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return r.c.db.ExecContext(ctx, query, args...)
}

func (r cachedReader) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := r.c.get(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return r.c.db.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (r cachedReader) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := r.c.get(ctx, query)
	if err != nil || st == nil {
		// An unpreparable query reports its error through the Row.
		return r.c.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
