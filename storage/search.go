package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
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
	if db.pg {
		return db.pgSearchQuery(ctx, orgID, s, types, limit, offset)
	}
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
	if db.pg {
		return db.pgCountSearch(ctx, orgID, s)
	}
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

// PostgreSQL: search_docs.tsv is the index (embed/migrations/postgres/
// 0920_search.sql). The FTS5 expressions this package is given are turned
// into tsquery text by pgTSQuery and bound as a parameter; the
// organization, catalog frameworks, types and owner tokens narrow with
// plain conditions instead of MATCH.

// pgTSQuery turns the FTS5 expressions the callers build (the search's
// SearchQuery.Match, the assistant's retrieval expression, the knowledge
// base's alternatives) into tsquery text: a quoted string is a phrase of
// its words (<->), a trailing * makes its last word a prefix (:*), OR is
// |, AND and juxtaposition are &, NOT is & !, parentheses group, and a
// column filter ({title body} : or col :) is dropped (tsv holds exactly
// the columns searched). Words are split where the index splits text
// (every character that is not a letter, a number or a private-use
// character) and each is quoted as a tsquery lexeme. "" is returned for
// an expression without words.
func pgTSQuery(match string) (string, error) {
	var out []string
	operand := false // the last item can be followed by an implicit AND
	push := func(op string) {
		if operand {
			out = append(out, "&")
		}
		out = append(out, op)
	}
	for i := 0; i < len(match); {
		c := match[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '{':
			j := strings.IndexByte(match[i:], '}')
			if j < 0 {
				return "", fmt.Errorf("full-text expression: unclosed column filter")
			}
			i += j + 1
			if k := skipSpace(match, i); k < len(match) && match[k] == ':' {
				i = k + 1
			} else {
				return "", fmt.Errorf("full-text expression: column filter without ':'")
			}
		case c == '(':
			push("(")
			operand = false
			i++
		case c == ')':
			out = append(out, ")")
			operand = true
			i++
		case c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(match); j++ {
				if match[j] == '"' {
					if j+1 < len(match) && match[j+1] == '"' {
						b.WriteByte('"')
						j++
						continue
					}
					break
				}
				b.WriteByte(match[j])
			}
			if j >= len(match) {
				return "", fmt.Errorf("full-text expression: unclosed string")
			}
			i = j + 1
			prefix := i < len(match) && match[i] == '*'
			if prefix {
				i++
			}
			ph := pgPhrase(b.String(), prefix)
			if ph == "" {
				return "", fmt.Errorf("full-text expression: a string without words")
			}
			push(ph)
			operand = true
		default:
			j := i
			for j < len(match) && isIdentChar(match[j]) {
				j++
			}
			if j == i {
				return "", fmt.Errorf("full-text expression: unexpected %q", match[i:])
			}
			w := match[i:j]
			i = j
			if k := skipSpace(match, i); k < len(match) && match[k] == ':' {
				i = k + 1 // a column filter
				continue
			}
			switch w {
			case "OR":
				out = append(out, "|")
				operand = false
			case "AND":
				out = append(out, "&")
				operand = false
			case "NOT":
				out = append(out, "&", "!")
				operand = false
			default:
				prefix := i < len(match) && match[i] == '*'
				if prefix {
					i++
				}
				push(pgPhrase(w, prefix))
				operand = true
			}
		}
	}
	return strings.Join(out, " "), nil
}

// pgPhrase is the tsquery of a string's words in sequence, the last a
// prefix when asked.
func pgPhrase(s string, prefix bool) string {
	words := strings.FieldsFunc(s, func(r rune) bool {
		return r == utf8.RuneError || !unicode.In(r, unicode.L, unicode.N, unicode.Co)
	})
	if len(words) == 0 {
		return ""
	}
	for i, w := range words {
		words[i] = "'" + strings.NewReplacer(`'`, `''`, `\`, `\\`).Replace(w) + "'"
	}
	if prefix {
		words[len(words)-1] += ":*"
	}
	if len(words) == 1 {
		return words[0]
	}
	return "(" + strings.Join(words, " <-> ") + ")"
}

// pgTSQueryFrom is the FROM item of a bound tsquery, named q: the
// query's letters folded as the index folds them.
const pgTSQueryFrom = `to_tsquery('compliance_search', search_unaccent(?)) AS q`

// pgSearchWhere narrows search_docs to what searchMatch narrows to: the
// organization's rows (and the catalog frameworks' when requirements are
// searched), the types, for an employee or contractor their own or
// everyone's records, and the query q.
func pgSearchWhere(orgID string, s app.SearchSpec, types []string) (string, []any) {
	where := "(organization_id = ?"
	args := []any{orgID}
	if slices.Contains(types, app.SearchRequirement) && len(s.Frameworks) > 0 {
		where += " OR (organization_id = '' AND type = 'requirement' AND scope IN (" + placeholders(len(s.Frameworks)) + "))"
		for _, fw := range s.Frameworks {
			args = append(args, searchScope(fw))
		}
	}
	where += ") AND type IN (" + placeholders(len(types)) + ")"
	for _, t := range types {
		args = append(args, t)
	}
	if s.ViewerID != "" {
		where += " AND string_to_array(owner, ' ') && ARRAY[?, ?]::text[]"
		args = append(args, searchScope(s.ViewerID), searchEveryone)
	}
	return where + " AND tsv @@ q", args
}

// pgHeadline options: the title whole, the body's best 24 words, the
// matches between the private-use markers marked() reads.
const (
	pgTitleHeadline = "HighlightAll=true, StartSel=\"\uE000\", StopSel=\"\uE001\""
	pgBodyHeadline  = "MaxWords=24, MinWords=12, ShortWord=0, StartSel=\"\uE000\", StopSel=\"\uE001\""
)

// pgSearchQuery is searchQuery on PostgreSQL: ranked by ts_rank with the
// title weighing ten times the body, normalized by the length of the
// record. The headlines are computed over the folded text (search_text
// maps one character to one), then laid over the original text, so the
// marks fall where the folded words matched and the text shown keeps its
// accents and punctuation.
func (db *DB) pgSearchQuery(ctx context.Context, orgID string, s app.SearchSpec, types []string, limit, offset int) ([]app.SearchHit, error) {
	tsq, err := pgTSQuery(s.Match)
	if err != nil || tsq == "" || len(types) == 0 {
		return []app.SearchHit{}, err
	}
	where, wargs := pgSearchWhere(orgID, s, types)
	q := `SELECT d.organization_id, d.type, d.record_id, d.parent_id, top.score, d.title,
		ts_headline('compliance_search', search_text(d.title), top.q, ?),
		h.hb, strpos(search_text(d.body), h.pb), char_length(d.body), substr(d.body, strpos(search_text(d.body), h.pb), char_length(h.pb))
		FROM (SELECT id, q, ts_rank('{0, 0, 0.1, 1}', tsv, q, 1) AS score FROM search_docs, ` + pgTSQueryFrom + `
			WHERE ` + where + ` ORDER BY score DESC, id LIMIT ? OFFSET ?) AS top
		JOIN search_docs AS d ON d.id = top.id
		CROSS JOIN LATERAL (SELECT hb, replace(replace(hb, chr(57344), ''), chr(57345), '') AS pb
			FROM ts_headline('compliance_search', search_text(d.body), top.q, ?) AS hb) AS h
		ORDER BY top.score DESC, top.id`
	args := append([]any{pgTitleHeadline, tsq}, wargs...)
	args = append(args, limit, offset, pgBodyHeadline)
	rows, err := db.rd(ctx).QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	out := []app.SearchHit{}
	for rows.Next() {
		var org, title, th, hb, orig string
		var at, n int
		var h app.SearchHit
		if err := rows.Scan(&org, &h.Type, &h.ID, &h.ParentID, &h.Score, &title, &th, &hb, &at, &n, &orig); err != nil {
			return nil, err
		}
		if org != orgID && org != "" {
			continue // never another organization's record
		}
		h.Title = marked(overlay(title, th))
		snippet := hb
		if at > 0 {
			snippet = overlay(orig, hb)
			if at > 1 {
				snippet = "…" + snippet
			}
			if at-1+utf8.RuneCountInString(orig) < n {
				snippet += "…"
			}
		}
		h.Snippet = marked(snippet)
		out = append(out, h)
	}
	return out, rows.Err()
}

// overlay lays the marks of a headline computed over folded text onto the
// original text of the same characters; when they do not line up it
// returns the original unmarked.
func overlay(orig, headline string) string {
	o := []rune(orig)
	var b strings.Builder
	k := 0
	for _, r := range headline {
		if r == '\uE000' || r == '\uE001' {
			b.WriteRune(r)
			continue
		}
		if k >= len(o) {
			return orig
		}
		b.WriteRune(o[k])
		k++
	}
	if k != len(o) {
		return orig
	}
	return b.String()
}

// pgCountSearch is CountSearch on PostgreSQL: the type is the row id's
// low four bits, as in SQLite.
func (db *DB) pgCountSearch(ctx context.Context, orgID string, s app.SearchSpec) (map[string]int, error) {
	out := map[string]int{}
	tsq, err := pgTSQuery(s.Match)
	if err != nil || tsq == "" || len(s.Types) == 0 {
		return out, err
	}
	where, wargs := pgSearchWhere(orgID, s, s.Types)
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT id % 16 AS code, count(*) FROM search_docs, `+pgTSQueryFrom+`
		WHERE `+where+` GROUP BY code`, append([]any{tsq}, wargs...)...)
	if err != nil {
		return nil, fmt.Errorf("count search hits: %w", err)
	}
	defer rows.Close()
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
