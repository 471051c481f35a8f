package storage

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
)

// Prepared statements of the writer. Every write runs inside a group
// commit transaction on the single writer connection; parsing each
// statement there again (SQLite's parser was about 7% of all CPU under a
// mixed load, mostly here) costs time only the writer can spend. A
// statement seen for the first time runs unprepared and is queued; after
// its batch the committer prepares it on the writer connection (the
// connection is free then: the one writer connection is busy inside a
// transaction). Later transactions bind it with Tx.StmtContext, which
// reuses the statement already prepared on that connection, once per
// batch.

// writerStmts is the writer connection's statement cache.
type writerStmts struct {
	db      *sql.DB
	mu      sync.Mutex
	m       map[string]*sql.Stmt
	pending map[string]struct{}
}

func newWriterStmts(db *sql.DB) *writerStmts {
	return &writerStmts{db: db, m: map[string]*sql.Stmt{}, pending: map[string]struct{}{}}
}

// lookup returns the prepared statement for query, or nil (the caller
// runs the query unprepared) after queueing it to be prepared.
func (c *writerStmts) lookup(query string) *sql.Stmt {
	if !cacheableWrite(query) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.m[query]; st != nil {
		return st
	}
	if len(c.m)+len(c.pending) < maxCachedStmts {
		c.pending[query] = struct{}{}
	}
	return nil
}

// preparePending prepares the queued statements. The committer calls it
// between batches, when no transaction holds the writer connection.
func (c *writerStmts) preparePending(ctx context.Context) {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return
	}
	qs := make([]string, 0, len(c.pending))
	for q := range c.pending {
		qs = append(qs, q)
	}
	clear(c.pending)
	c.mu.Unlock()
	for _, q := range qs {
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			// Not preparable on its own (it names a temporary table, say):
			// it keeps running unprepared, queued again when next seen.
			continue
		}
		c.mu.Lock()
		if c.m[q] == nil {
			c.m[q] = st
			st = nil
		}
		c.mu.Unlock()
		if st != nil {
			_ = st.Close()
		}
	}
}

// cacheableWrite reports whether query is one statement of the kinds a
// write path repeats (not a migration's script or a schema change).
func cacheableWrite(query string) bool {
	q := strings.TrimSpace(query)
	if strings.Contains(strings.TrimRight(q, "; \t\n"), ";") {
		return false
	}
	word, _, _ := strings.Cut(q, " ")
	switch strings.ToUpper(word) {
	case "INSERT", "UPDATE", "DELETE", "SELECT", "WITH", "REPLACE", "SAVEPOINT", "RELEASE", "ROLLBACK":
		return true
	}
	return false
}

func (c *writerStmts) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, st := range c.m {
		errs = append(errs, st.Close())
		delete(c.m, q)
	}
	return errors.Join(errs...)
}

// txQuerier runs statements in a write transaction through the writer's
// statement cache.
type txQuerier struct {
	st *txState
}

// stmt returns the transaction's binding of query's prepared statement,
// or nil.
func (q txQuerier) stmt(ctx context.Context, query string) *sql.Stmt {
	b := q.st.batch
	if b == nil {
		return nil
	}
	if s := b.stmts[query]; s != nil {
		return s
	}
	p := b.ws.lookup(query)
	if p == nil {
		return nil
	}
	s := q.st.tx.StmtContext(ctx, p)
	b.stmts[query] = s
	return s
}

func (q txQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := q.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return q.st.tx.ExecContext(ctx, query, args...)
}

func (q txQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := q.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return q.st.tx.QueryContext(ctx, query, args...)
}

func (q txQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := q.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return q.st.tx.QueryRowContext(ctx, query, args...)
}

// txBatch is what the calls of one group commit share: the transaction's
// bindings of prepared statements.
type txBatch struct {
	ws    *writerStmts
	stmts map[string]*sql.Stmt
}
