package storage

import (
	"context"
	"sort"
	"strings"
)

// ReadQueries returns the SQL text of every statement the reader pool has
// prepared (the statement cache is keyed by it), sorted.
func (db *DB) ReadQueries() []string {
	db.rs.mu.RLock()
	defer db.rs.mu.RUnlock()
	out := make([]string, 0, len(db.rs.m))
	for q := range db.rs.m {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}

// ExplainQueryPlan returns the plan lines of query, its parameters unbound.
func (db *DB) ExplainQueryPlan(ctx context.Context, query string) ([]string, error) {
	args := make([]any, strings.Count(query, "?"))
	rows, err := db.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			return nil, err
		}
		out = append(out, detail)
	}
	return out, rows.Err()
}

// Analyze runs ANALYZE on the writer.
func (db *DB) Analyze(ctx context.Context) error {
	_, err := db.w.ExecContext(ctx, "ANALYZE")
	return err
}
