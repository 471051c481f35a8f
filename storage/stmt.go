package storage

import (
	"context"
	"database/sql"
	"strings"
	"sync"
)

// maxCachedStmts bounds the statement cache; queries past it run unprepared.
const maxCachedStmts = 1000

// stmtCache keeps one prepared statement per query text for a pool. It is
// itself a querier: each call runs the cached statement, preparing it on
// first use.
type stmtCache struct {
	db      *sql.DB
	mu      sync.RWMutex
	m       map[string]*sql.Stmt
	pending map[string]bool // first seen inside a transaction
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// cacheable excludes scripts (migrations): a prepared statement holds one.
func cacheable(q string) bool {
	return !strings.Contains(strings.TrimRight(strings.TrimSpace(q), ";"), ";")
}

func (c *stmtCache) lookup(q string) *sql.Stmt {
	c.mu.RLock()
	st := c.m[q]
	c.mu.RUnlock()
	return st
}

// get returns the statement for q, preparing it if needed; nil means run q
// unprepared (cache full, a script, or a prepare error the run will report).
func (c *stmtCache) get(ctx context.Context, q string) *sql.Stmt {
	if st := c.lookup(q); st != nil {
		return st
	}
	c.mu.RLock()
	full := len(c.m) >= maxCachedStmts
	c.mu.RUnlock()
	if full || !cacheable(q) {
		return nil
	}
	st, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[q]; old != nil {
		st.Close()
		return old
	}
	c.m[q] = st
	return st
}

// want notes a query first run inside a transaction. The writer has one
// connection, held by that transaction, so it is prepared afterwards.
func (c *stmtCache) want(q string) {
	if !cacheable(q) {
		return
	}
	c.mu.Lock()
	if len(c.pending) < maxCachedStmts {
		c.pending[q] = true
	}
	c.mu.Unlock()
}

// preparePending prepares the queries noted by want.
func (c *stmtCache) preparePending() {
	c.mu.RLock()
	n := len(c.pending)
	c.mu.RUnlock()
	if n == 0 {
		return
	}
	c.mu.Lock()
	qs := c.pending
	c.pending = map[string]bool{}
	c.mu.Unlock()
	for q := range qs {
		c.get(context.Background(), q)
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.m {
		st.Close()
		delete(c.m, q)
	}
}

// QueryContext runs a query on the pool.
func (c *stmtCache) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := c.get(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.db.QueryContext(ctx, q, args...)
}

// QueryRowContext runs a single-row query on the pool.
func (c *stmtCache) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st := c.get(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.db.QueryRowContext(ctx, q, args...)
}

// ExecContext runs a statement on the pool.
func (c *stmtCache) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if st := c.get(ctx, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return c.db.ExecContext(ctx, q, args...)
}

// txQuerier runs queries in a transaction, reusing the writer's prepared
// statements (they live on the same, single connection).
type txQuerier struct {
	tx *sql.Tx
	c  *stmtCache
}

func (q *txQuerier) stmt(ctx context.Context, query string) *sql.Stmt {
	if st := q.c.lookup(query); st != nil {
		return q.tx.StmtContext(ctx, st)
	}
	q.c.want(query)
	return nil
}

// QueryContext runs a query in the transaction.
func (q *txQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := q.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return q.tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a single-row query in the transaction.
func (q *txQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := q.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return q.tx.QueryRowContext(ctx, query, args...)
}

// ExecContext runs a statement in the transaction.
func (q *txQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := q.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return q.tx.ExecContext(ctx, query, args...)
}
