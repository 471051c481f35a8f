package storage

import (
	"context"
	"sync/atomic"
)

// Totals across pages. A list's cached value is keyed by its whole filter,
// pagination and sort included, so page 2 of a filter, or the same filter
// sorted another way, misses and would count the organization's matching
// rows again (on a vendor list read after a write about half of its SQL
// time). The total is also kept on its own, keyed by the filter without
// pagination and sort and stored under the same counter as the pages: a
// miss of any page of that filter then reads only the page from SQLite.
// It is served only while the counter read in the same read transaction
// equals the one it was stored under, exactly like a page, so it is as
// coherent as one.

type knownTotalKey struct{}

// totalsAcrossPages turns the totals across pages on (benchmarks compare).
var totalsAcrossPages = true

// countQueries counts the count queries countRows ran (tests).
var countQueries atomic.Int64

// totalRead carries what the list's SQL needs: the total when the read
// model has it, else where to store the one it counts.
type totalRead struct {
	db       *DB
	key      string
	version  int64
	total    int
	hasTotal bool
}

// withTotal looks the total of a list up for the list's SQL (called in
// the read transaction, after the counter was read).
func (db *DB) withTotal(ctx context.Context, orgID, resource, key string) context.Context {
	rt, ok := ctx.Value(readTxKey{}).(*readTx)
	if !ok || !totalsAcrossPages || !rt.hasVersion || rt.versionOf != orgID+"\x00"+resource || key == "" {
		return ctx
	}
	t := &totalRead{db: db, key: orgID + "\x00" + resource + "\x00" + key, version: rt.version}
	if v, ok := db.rm.get(t.key, t.version); ok {
		t.total, t.hasTotal = v.(int), true
	}
	return context.WithValue(ctx, knownTotalKey{}, t)
}

// countRows sets *total from the read model when it holds the list's
// total, else runs the count query and stores its result.
func countRows(ctx context.Context, q querier, query string, args []any, total *int) error {
	t, _ := ctx.Value(knownTotalKey{}).(*totalRead)
	if t != nil && t.hasTotal {
		*total = t.total
		return nil
	}
	countQueries.Add(1)
	if err := q.QueryRowContext(ctx, query, args...).Scan(total); err != nil {
		return err
	}
	if t != nil {
		t.db.rm.put(t.key, t.version, *total, entryBytes+int64(len(t.key)))
	}
	return nil
}
