package storage

import (
	"fmt"
	"io/fs"
	"regexp"
	"strings"
)

// One set of migrations serves both engines. On PostgreSQL each SQLite
// migration is translated statement by statement (pgMigrationSQL):
//
//   - STRICT and WITHOUT ROWID go; INTEGER becomes BIGINT, REAL DOUBLE
//     PRECISION, BLOB BYTEA, and TEXT compares byte-wise (COLLATE "C") as
//     in SQLite; an INTEGER PRIMARY KEY becomes an identity column;
//   - a table with a rowid in SQLite gets a `rowid` identity column, so
//     ORDER BY rowid keeps insertion order;
//   - a trigger becomes a PL/pgSQL function and a row trigger
//     (RAISE(ABORT, m) becomes RAISE EXCEPTION, IS / IS NOT between values
//     IS NOT DISTINCT FROM / IS DISTINCT FROM);
//   - PRAGMAs and FTS5 tables (with the statements that name them) are
//     left out: the full-text tables are PostgreSQL's own, created by
//     embed/migrations/postgres/NNNN_name.sql, which runs after the
//     translation of the migration with the same name.
//
// TestPostgresSchemaMatches keeps the two schemas in step.

// pgOnlyColumns are columns PostgreSQL tables have and SQLite's do not
// (the schema comparison leaves them out).
var pgOnlyColumns = map[string]bool{"rowid": true, "tsv": true}

// pgMigrationSQL translates one migration for PostgreSQL and appends the
// PostgreSQL addendum of the same name, if any.
//
// A migration marked "-- postgres: addendum only" (a SQLite table rebuild,
// which PostgreSQL does with ALTER TABLE) is not translated: its addendum
// alone runs.
func pgMigrationSQL(fsys fs.FS, name, sqlite string) (string, error) {
	if hasDirective(sqlite, "postgres: addendum only") {
		add, err := fs.ReadFile(fsys, "migrations/postgres/"+name)
		if err != nil {
			return "", fmt.Errorf("%s: marked addendum only, but migrations/postgres/%s: %w", name, name, err)
		}
		return string(add), nil
	}
	var fts []string
	for _, m := range reVirtual.FindAllStringSubmatch(sqlite, -1) {
		fts = append(fts, strings.ToLower(m[1]))
	}
	var b strings.Builder
	for _, st := range splitStatements(sqlite) {
		out, err := pgStatement(st, fts)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if out != "" {
			b.WriteString(out)
			b.WriteString(";\n")
		}
	}
	if add, err := fs.ReadFile(fsys, "migrations/postgres/"+name); err == nil {
		b.Write(add)
	}
	return b.String(), nil
}

var (
	reVirtual   = regexp.MustCompile(`(?i)CREATE\s+VIRTUAL\s+TABLE\s+(\w+)`)
	reCreateTab = regexp.MustCompile(`(?is)^CREATE\s+TABLE\s+(IF\s+NOT\s+EXISTS\s+)?(\w+)\s*\((.*)\)\s*([A-Z ,]*)$`)
	reAlterAdd  = regexp.MustCompile(`(?is)^ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+(.*)$`)
	reTrigger   = regexp.MustCompile(`(?is)^CREATE\s+TRIGGER\s+(IF\s+NOT\s+EXISTS\s+)?(\w+)\s+(BEFORE|AFTER)\s+(INSERT|DELETE|UPDATE(?:\s+OF\s+[\w\s,]+?)?)\s+ON\s+(\w+)(?:\s+FOR\s+EACH\s+ROW)?(?:\s+WHEN\s+(.*?))?\s+BEGIN\s+(.*)\s+END$`)
	reRaise     = regexp.MustCompile(`(?is)SELECT\s+RAISE\s*\(\s*ABORT\s*,\s*('(?:[^']|'')*')\s*\)`)
	reIsNot     = regexp.MustCompile(`(?i)\bIS\s+NOT\s+(NEW|OLD)\.`)
	reIs        = regexp.MustCompile(`(?i)\bIS\s+(NEW|OLD)\.`)
	reIntPK     = regexp.MustCompile(`(?i)\bINTEGER\s+PRIMARY\s+KEY(\s+AUTOINCREMENT)?`)
)

// splitStatements splits a script at semicolons outside literals,
// comments and trigger bodies, dropping comments.
func splitStatements(script string) []string {
	var out []string
	var b strings.Builder
	depth := 0 // BEGIN ... END of a trigger
	flush := func() {
		if s := strings.TrimSpace(b.String()); s != "" {
			out = append(out, s)
		}
		b.Reset()
	}
	for i := 0; i < len(script); {
		if j := skipQuoted(script, i); j > i {
			if script[i] == '\'' || script[i] == '"' {
				b.WriteString(script[i:j])
			} else {
				b.WriteByte(' ')
			}
			i = j
			continue
		}
		c := script[i]
		if isIdentChar(c) && (i == 0 || !isIdentChar(script[i-1])) {
			j := i
			for j < len(script) && isIdentChar(script[j]) {
				j++
			}
			w := strings.ToUpper(script[i:j])
			stmtStart := strings.TrimSpace(b.String())
			if w == "BEGIN" && strings.HasPrefix(strings.ToUpper(stmtStart), "CREATE TRIGGER") {
				depth++
			} else if w == "END" && depth > 0 {
				k := skipSpace(script, j)
				if k < len(script) && script[k] == ';' {
					depth--
				}
			}
			b.WriteString(script[i:j])
			i = j
			continue
		}
		if c == ';' && depth == 0 {
			flush()
			i++
			continue
		}
		b.WriteByte(c)
		i++
	}
	flush()
	return out
}

func mentions(st string, names []string) bool {
	low := strings.ToLower(st)
	for _, n := range names {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(n) + `\b`).MatchString(low) {
			return true
		}
	}
	return false
}

func pgStatement(st string, fts []string) (string, error) {
	up := strings.ToUpper(st)
	switch {
	case strings.HasPrefix(up, "PRAGMA"):
		return "", nil
	case reVirtual.MatchString(st), mentions(st, fts):
		return "", nil
	}
	if m := reCreateTab.FindStringSubmatch(st); m != nil {
		opts := strings.ToUpper(m[4])
		body := pgColumnTypes(m[3])
		if !strings.Contains(opts, "WITHOUT ROWID") && !reIntPK.MatchString(m[3]) {
			body = strings.TrimRight(body, " \n\t") + ",\n    rowid BIGINT GENERATED BY DEFAULT AS IDENTITY"
		}
		return "CREATE TABLE " + m[1] + m[2] + " (" + body + ")", nil
	}
	if m := reAlterAdd.FindStringSubmatch(st); m != nil {
		return "ALTER TABLE " + m[1] + " ADD COLUMN " + pgColumnTypes(m[2]), nil
	}
	if strings.HasPrefix(up, "CREATE TRIGGER") {
		return pgTrigger(st)
	}
	return st, nil
}

// pgColumnTypes rewrites SQLite's column types in a table body or a
// column definition: the word after each column's name.
func pgColumnTypes(body string) string {
	defs := splitTopLevel(body)
	for i, d := range defs {
		lead := strings.TrimLeft(d, " \t\n")
		pad := d[:len(d)-len(lead)]
		name, rest, _ := strings.Cut(lead, " ")
		switch strings.ToUpper(name) {
		case "PRIMARY", "UNIQUE", "CHECK", "FOREIGN", "CONSTRAINT", "":
			continue
		}
		rest = strings.TrimLeft(rest, " ")
		if m := reIntPK.FindStringIndex(rest); m != nil && m[0] == 0 {
			defs[i] = pad + name + " BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" + rest[m[1]:]
			continue
		}
		typ, tail, _ := strings.Cut(rest, " ")
		switch strings.ToUpper(strings.TrimRight(typ, ",")) {
		case "INTEGER":
			typ = "BIGINT"
		case "REAL":
			typ = "DOUBLE PRECISION"
		case "BLOB":
			typ = "BYTEA"
		case "TEXT":
			typ = `TEXT COLLATE "C"`
		case "ANY":
			typ = "TEXT"
		}
		if tail != "" {
			typ += " " + tail
		}
		defs[i] = pad + name + " " + typ
	}
	return strings.Join(defs, ",")
}

// splitTopLevel splits at commas outside parentheses and literals.
func splitTopLevel(s string) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i < len(s); {
		if j := skipQuoted(s, i); j > i {
			i = j
			continue
		}
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[from:i])
				from = i + 1
			}
		}
		i++
	}
	return append(out, s[from:])
}

// pgTrigger turns a SQLite trigger into a PL/pgSQL function and trigger.
func pgTrigger(st string) (string, error) {
	m := reTrigger.FindStringSubmatch(st)
	if m == nil {
		return "", fmt.Errorf("trigger not understood: %.80s", st)
	}
	name, when, event, table, cond, body := m[2], strings.ToUpper(m[3]), m[4], m[5], m[6], m[7]
	body = reRaise.ReplaceAllString(body, "RAISE EXCEPTION $1")
	body = strings.TrimSpace(body)
	if !strings.HasSuffix(body, ";") {
		body += ";"
	}
	if cond != "" {
		cond = reIsNot.ReplaceAllString(cond, "IS DISTINCT FROM $1.")
		cond = reIs.ReplaceAllString(cond, "IS NOT DISTINCT FROM $1.")
		body = "IF " + cond + " THEN\n" + body + "\nEND IF;"
	}
	ret := "NULL"
	if when == "BEFORE" {
		ret = "NEW"
		if strings.HasPrefix(strings.ToUpper(event), "DELETE") {
			ret = "OLD"
		}
	}
	fn := name + "_fn"
	return fmt.Sprintf("CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $fn$\nBEGIN\n%s\nRETURN %s;\nEND\n$fn$;\nCREATE TRIGGER %s %s %s ON %s FOR EACH ROW EXECUTE FUNCTION %s()",
		fn, body, ret, name, when, event, table, fn), nil
}
