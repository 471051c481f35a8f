package storage

import (
	"strconv"
	"strings"
	"sync"
)

// The statements of this package are written once, in the SQL both
// engines accept where they can. pgSQL rewrites the rest of SQLite's
// dialect for PostgreSQL as a statement is sent:
//
//   - `?` and `?NNN` placeholders become `$N`;
//   - LIKE becomes ILIKE (SQLite's LIKE ignores ASCII case);
//   - SQLite's index hint INDEXED BY name is left out;
//   - min(a, b) and max(a, b) with two or more arguments (SQLite's scalar
//     forms) become LEAST and GREATEST;
//   - a subquery in FROM without an alias gets one (PostgreSQL 15
//     requires it);
//   - SQLite's clock, strftime('%Y-%m-%dT%H:%M:%fZ','now'), becomes the
//     same fixed-width UTC text from now().
//
// Functions PostgreSQL lacks (instr, json_extract, json_each over an
// array, group_concat, json_group_array) are created by the PostgreSQL
// compatibility migration instead of rewritten here. String literals,
// quoted identifiers and comments are copied untouched.

var pgSQLCache sync.Map // SQLite text -> PostgreSQL text

const sqliteNow = `strftime('%Y-%m-%dT%H:%M:%fZ','now')`

const pgNow = `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

func pgSQL(q string) string {
	if v, ok := pgSQLCache.Load(q); ok {
		return v.(string)
	}
	out := aliasSubqueries(rewritePG(strings.ReplaceAll(q, sqliteNow, pgNow)))
	pgSQLCache.Store(q, out)
	return out
}

func isIdentChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// skipQuoted returns the index just past the literal, identifier or
// comment starting at i, or i when none starts there.
func skipQuoted(q string, i int) int {
	switch {
	case q[i] == '\'' || q[i] == '"':
		quote := q[i]
		j := i + 1
		for j < len(q) {
			if q[j] == quote {
				if j+1 < len(q) && q[j+1] == quote {
					j += 2
					continue
				}
				return j + 1
			}
			j++
		}
		return len(q)
	case strings.HasPrefix(q[i:], "--"):
		if k := strings.IndexByte(q[i:], '\n'); k >= 0 {
			return i + k + 1
		}
		return len(q)
	case strings.HasPrefix(q[i:], "/*"):
		if k := strings.Index(q[i+2:], "*/"); k >= 0 {
			return i + 2 + k + 2
		}
		return len(q)
	}
	return i
}

func rewritePG(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); {
		if j := skipQuoted(q, i); j > i {
			b.WriteString(q[i:j])
			i = j
			continue
		}
		c := q[i]
		switch {
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if j > i+1 {
				b.WriteString("$" + q[i+1:j])
			} else {
				n++
				b.WriteString("$" + strconv.Itoa(n))
			}
			i = j
		case isIdentChar(c) && (i == 0 || !isIdentChar(q[i-1]) && q[i-1] != '.' && q[i-1] != '$'):
			j := i
			for j < len(q) && isIdentChar(q[j]) {
				j++
			}
			word := q[i:j]
			switch strings.ToLower(word) {
			case "like":
				b.WriteString("ILIKE")
			case "indexed":
				// SQLite's INDEXED BY name: PostgreSQL's planner picks.
				if k := skipSpace(q, j); k+2 < len(q) && strings.EqualFold(q[k:k+2], "by") && !isIdentChar(q[k+2]) {
					k = skipSpace(q, k+2)
					for k < len(q) && isIdentChar(q[k]) {
						k++
					}
					j = k
				} else {
					b.WriteString(word)
				}
			case "max", "min":
				if k := skipSpace(q, j); k < len(q) && q[k] == '(' && topLevelComma(q, k) {
					if strings.ToLower(word) == "max" {
						b.WriteString("GREATEST")
					} else {
						b.WriteString("LEAST")
					}
				} else {
					b.WriteString(word)
				}
			default:
				b.WriteString(word)
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func skipSpace(q string, i int) int {
	for i < len(q) && (q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r') {
		i++
	}
	return i
}

// topLevelComma reports whether the parenthesis at open holds a comma
// outside nested parentheses and literals (a call with two arguments).
func topLevelComma(q string, open int) bool {
	depth := 0
	for i := open; i < len(q); {
		if j := skipQuoted(q, i); j > i {
			i = j
			continue
		}
		switch q[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return false
			}
		case ',':
			if depth == 1 {
				return true
			}
		}
		i++
	}
	return false
}

// notAlias are the words that may follow a subquery in FROM when it has
// no alias.
var notAlias = map[string]bool{"where": true, "group": true, "order": true, "limit": true, "join": true, "left": true,
	"inner": true, "cross": true, "on": true, "union": true, "having": true, "window": true, "offset": true, "": true}

// aliasSubqueries gives each FROM (SELECT ...) without an alias one.
func aliasSubqueries(q string) string {
	low := strings.ToLower(q)
	var b strings.Builder
	last, n := 0, 0
	for i := 0; i < len(q); {
		if j := skipQuoted(q, i); j > i {
			i = j
			continue
		}
		if !strings.HasPrefix(low[i:], "from") || (i > 0 && isIdentChar(q[i-1])) || (i+4 < len(q) && isIdentChar(q[i+4])) {
			i++
			continue
		}
		k := skipSpace(q, i+4)
		if k >= len(q) || q[k] != '(' || !strings.HasPrefix(low[skipSpace(q, k+1):], "select") {
			i++
			continue
		}
		end := closeParen(q, k)
		if end < 0 {
			break
		}
		w := skipSpace(q, end+1)
		e := w
		for e < len(q) && isIdentChar(q[e]) {
			e++
		}
		if notAlias[low[w:e]] {
			n++
			b.WriteString(q[last : end+1])
			b.WriteString(" AS _sub" + strconv.Itoa(n))
			last = end + 1
		}
		i = k + 1
	}
	if last == 0 {
		return q
	}
	b.WriteString(q[last:])
	return b.String()
}

// closeParen returns the index of the parenthesis closing the one at open.
func closeParen(q string, open int) int {
	depth := 0
	for i := open; i < len(q); {
		if j := skipQuoted(q, i); j > i {
			i = j
			continue
		}
		switch q[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return -1
}
