package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.SearchStore = (*DB)(nil)

// The global search index (migration 0920): search_docs holds the records,
// search_index is its FTS5 index. Triggers on the source tables keep the
// organizations' rows current; the built-in catalog's requirements are
// written by IndexSearchCatalog.

// searchScope is the scope token of an organization or a built-in
// framework: its id in lower case without the underscore, ending in 0 so
// that the porter stemmer leaves it alone (the triggers compute the same).
func searchScope(id string) string { return strings.ToLower(strings.ReplaceAll(id, "_", "")) + "0" }

// ftsString quotes a value as an FTS5 string.
func ftsString(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// searchMatch narrows the terms' expression inside MATCH itself, so the
// index intersects its lists instead of the query filtering rows: to the
// organization (and the catalog frameworks given, when requirements are
// searched), to the types, and for an employee or contractor to what is
// assigned to them or open to everyone (the owner tokens of migration
// 0920).
func searchMatch(orgID string, s app.SearchSpec, types []string) string {
	scopes := []string{ftsString(searchScope(orgID))}
	if slices.Contains(types, app.SearchRequirement) {
		for _, fw := range s.Frameworks {
			scopes = append(scopes, ftsString(searchScope(fw)))
		}
	}
	m := "scope : (" + strings.Join(scopes, " OR ") + ")"
	if s.ViewerID != "" {
		m += " AND owner : (" + ftsString(searchScope(s.ViewerID)) + " OR " + ftsString(searchEveryone) + ")"
	}
	m += " AND " + s.Match
	// Every type: no type list to merge. Most types: leave the others out.
	var others []string
	for _, t := range app.SearchTypes {
		if !slices.Contains(types, t) {
			others = append(others, ftsString(t))
		}
	}
	switch {
	case len(others) == 0:
	case len(others) < len(types):
		m += " NOT type : (" + strings.Join(others, " OR ") + ")"
	default:
		ts := make([]string, len(types))
		for i, t := range types {
			ts[i] = ftsString(t)
		}
		m = "type : (" + strings.Join(ts, " OR ") + ") AND " + m
	}
	return m
}

// searchEveryone is the owner token of what everyone in the organization
// reads.
const searchEveryone = "all0"

// searchQuery returns the best hits of a match, best first, with the terms
// marked by FTS5's own highlight and snippet (private-use characters as
// markers, turned into parts here: nothing is ever sent to a page as
// markup). ORDER BY rank lets FTS5 sort by its rank function (BM25 with
// the column weights set in migration 0920) before SQLite reads any row's
// text, so highlight and snippet run for the returned page alone.
func (db *DB) searchQuery(ctx context.Context, orgID string, s app.SearchSpec, types []string, limit, offset int) ([]app.SearchHit, error) {
	q := `SELECT organization_id, type, record_id, parent_id, rank,
		highlight(search_index, 6, char(57344), char(57345)),
		snippet(search_index, 7, char(57344), char(57345), '…', 24)
		FROM search_index WHERE search_index MATCH ?`
	args := []any{searchMatch(orgID, s, types)}
	q += ` ORDER BY rank LIMIT ? OFFSET ?`
	rows, err := db.rd(ctx).QueryContext(ctx, q, append(args, limit, offset)...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	out := []app.SearchHit{}
	for rows.Next() {
		var org, title, snippet string
		var h app.SearchHit
		if err := rows.Scan(&org, &h.Type, &h.ID, &h.ParentID, &h.Score, &title, &snippet); err != nil {
			return nil, err
		}
		if org != orgID && org != "" {
			continue // never another organization's record
		}
		h.Score = -h.Score
		h.Title, h.Snippet = marked(title), marked(snippet)
		out = append(out, h)
	}
	return out, rows.Err()
}

// marked splits text with U+E000 (start) and U+E001 (end) markers into
// parts.
func marked(s string) app.Highlighted {
	out := app.Highlighted{}
	add := func(text string, match bool) {
		if text == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Match == match {
			out[n-1].Text += text
			return
		}
		out = append(out, app.TextPart{Text: text, Match: match})
	}
	match := false
	for s != "" {
		i := strings.IndexAny(s, "\uE000\uE001")
		if i < 0 {
			add(s, match)
			break
		}
		add(s[:i], match)
		r, size := utf8.DecodeRuneInString(s[i:])
		match = r == '\uE000'
		s = s[i+size:]
	}
	return out
}

// SearchRecords returns a page of hits over every type of the spec.
func (db *DB) SearchRecords(ctx context.Context, orgID string, s app.SearchSpec, limit, offset int) ([]app.SearchHit, error) {
	return db.searchQuery(ctx, orgID, s, s.Types, limit, offset)
}

// SearchTop returns the best perType hits of each type of the spec.
func (db *DB) SearchTop(ctx context.Context, orgID string, s app.SearchSpec, perType int) ([]app.SearchHit, error) {
	out := []app.SearchHit{}
	for _, t := range s.Types {
		hits, err := db.searchQuery(ctx, orgID, s, []string{t}, perType, 0)
		if err != nil {
			return nil, err
		}
		out = append(out, hits...)
	}
	return out, nil
}

// searchTypeCodes are the types' codes in the low four bits of a row's id
// (migration 0920).
var searchTypeCodes = map[int]string{1: app.SearchVendor, 2: app.SearchControl, 3: app.SearchRequirement, 4: app.SearchPolicy,
	5: app.SearchRisk, 6: app.SearchFinding, 7: app.SearchPerson, 8: app.SearchKB, 9: app.SearchQuestionnaire}

// CountSearch counts the hits of each type, from the index alone: the
// type is in the row id, so no stored row is read.
func (db *DB) CountSearch(ctx context.Context, orgID string, s app.SearchSpec) (map[string]int, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT rowid % 16 AS code, count(*) FROM search_index WHERE search_index MATCH ? GROUP BY code`,
		searchMatch(orgID, s, s.Types))
	if err != nil {
		return nil, fmt.Errorf("count search hits: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var code, n int
		if err := rows.Scan(&code, &n); err != nil {
			return nil, err
		}
		if t, ok := searchTypeCodes[code]; ok {
			out[t] = n
		}
	}
	return out, rows.Err()
}

// SearchCatalogState returns the hash of each indexed catalog framework.
func (db *DB) SearchCatalogState(ctx context.Context) (map[string]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT framework_id, hash FROM search_catalog`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, h string
		if err := rows.Scan(&id, &h); err != nil {
			return nil, err
		}
		out[id] = h
	}
	return out, rows.Err()
}

// IndexSearchCatalog replaces the indexed requirements of a built-in
// framework: shared rows (organization ”), scoped by the framework.
func (db *DB) IndexSearchCatalog(ctx context.Context, frameworkID, hash string, reqs []app.Requirement, at time.Time) error {
	return db.InTx(ctx, func(ctx context.Context) error {
		w := db.wr(ctx)
		if _, err := w.ExecContext(ctx, `DELETE FROM search_docs WHERE organization_id = '' AND type = 'requirement' AND parent_id = ?`,
			frameworkID); err != nil {
			return err
		}
		scope := searchScope(frameworkID)
		var seq int64
		if err := w.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) / 16 FROM search_docs`).Scan(&seq); err != nil {
			return err
		}
		for _, r := range reqs {
			seq++
			title := strings.TrimSpace(r.Ref + " " + r.Title)
			if _, err := w.ExecContext(ctx, `INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, parent_id, title, body)
				VALUES (?, '', ?, 'requirement', ?, ?, ?, ?, ?)`, seq*16+3, scope, searchEveryone, r.ID, frameworkID, title,
				r.Description); err != nil {
				return err
			}
		}
		_, err := w.ExecContext(ctx, `INSERT INTO search_catalog (framework_id, hash, indexed_at) VALUES (?, ?, ?)
			ON CONFLICT (framework_id) DO UPDATE SET hash = excluded.hash, indexed_at = excluded.indexed_at`, frameworkID, hash, ts(at))
		return err
	})
}
