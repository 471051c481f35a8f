package storage_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/storage/storagetest"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// ftsCounterparts are SQLite's FTS5 tables and what stands for each on
// PostgreSQL (embed/migrations/postgres): a table, or a column of the
// table the FTS5 index reads its content from.
var ftsCounterparts = map[string]string{
	"kb_index":     "kb_index",        // a table with a generated tsvector column
	"search_index": "search_docs.tsv", // a generated tsvector column of its content table
}

// pgOnlyIndexes are the PostgreSQL counterparts' own indexes.
var pgOnlyIndexes = map[string]bool{"search_docs_tsv": true}

// schema is what the comparison reads of one database.
type schema struct {
	tables   map[string]map[string]column // table -> column -> definition
	pks      map[string]string            // table -> primary key columns
	uniques  map[string][]string          // table -> sorted column lists of unique constraints and indexes
	indexes  map[string][]string          // table -> sorted names of the other indexes
	triggers map[string][]string          // table -> sorted trigger names
}

type column struct {
	typ     string
	notNull bool
}

func newSchema() *schema {
	return &schema{tables: map[string]map[string]column{}, pks: map[string]string{}, uniques: map[string][]string{},
		indexes: map[string][]string{}, triggers: map[string][]string{}}
}

// TestPostgresSchemaMatches migrates a SQLite file and a fresh PostgreSQL
// database and compares their tables, columns (types mapped, NOT NULL),
// primary keys, unique constraints and indexes, other index names and
// trigger names. SQLite's FTS5 tables, their shadow tables and the
// triggers feeding them are excepted, and their PostgreSQL counterparts
// must exist; the read model's counter triggers are SQLite's alone (the
// read model is bypassed on PostgreSQL).
func TestPostgresSchemaMatches(t *testing.T) {
	pgURL := storagetest.EmptyPostgresURL(t) // skipped loudly without a cluster
	ctx := context.Background()
	litePath := filepath.Join(t.TempDir(), "schema.db")
	for _, loc := range []string{litePath, pgURL} {
		db, err := storage.OpenURL(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Migrate(ctx); err != nil {
			db.Close()
			t.Fatalf("migrate %s: %v", map[bool]string{true: "PostgreSQL", false: "SQLite"}[loc == pgURL], err)
		}
		db.Close()
	}
	lite, err := sql.Open("sqlite", litePath)
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg, err := sql.Open("pgx", pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()

	ls, fts, err := readSQLiteSchema(lite)
	if err != nil {
		t.Fatalf("read the SQLite schema: %v", err)
	}
	ps, err := readPostgresSchema(pg)
	if err != nil {
		t.Fatalf("read the PostgreSQL schema: %v", err)
	}
	if len(ls.tables) < 50 {
		t.Fatalf("only %d SQLite tables read", len(ls.tables))
	}

	ntrig, nidx := 0, 0
	for _, v := range ls.triggers {
		ntrig += len(v)
	}
	for _, v := range ls.indexes {
		nidx += len(v)
	}
	if ntrig < 20 || nidx < 20 {
		t.Fatalf("only %d triggers and %d indexes read from SQLite", ntrig, nidx)
	}
	t.Logf("compared %d tables, %d triggers, %d other indexes; FTS5 tables excepted: %v", len(ls.tables), ntrig, nidx, fts)

	// The FTS5 tables' counterparts.
	for _, name := range fts {
		c, ok := ftsCounterparts[name]
		if !ok {
			t.Errorf("FTS5 table %s has no PostgreSQL counterpart: add one in embed/migrations/postgres and to ftsCounterparts", name)
			continue
		}
		tab, col, isCol := strings.Cut(c, ".")
		if _, ok := ps.tables[tab]; !ok {
			t.Errorf("FTS5 table %s: PostgreSQL table %s missing", name, tab)
		} else if isCol && ps.tables[tab][col].typ != "tsvector" {
			t.Errorf("FTS5 table %s: PostgreSQL column %s is %q, want tsvector", name, c, ps.tables[tab][col].typ)
		}
		if !isCol {
			delete(ps.tables, tab) // compared as the counterpart, not as a table of SQLite's
		}
	}

	for _, name := range sortedKeys(ls.tables) {
		pcols, ok := ps.tables[name]
		if !ok {
			t.Errorf("table %s: missing on PostgreSQL", name)
			continue
		}
		lcols := ls.tables[name]
		for _, col := range sortedKeys(lcols) {
			lc := lcols[col]
			pc, ok := pcols[col]
			switch {
			case !ok:
				t.Errorf("table %s: column %s missing on PostgreSQL", name, col)
			case pc.typ != lc.typ:
				t.Errorf("table %s: column %s is %s on PostgreSQL, %s on SQLite", name, col, pc.typ, lc.typ)
			case pc.notNull != lc.notNull:
				t.Errorf("table %s: column %s: NOT NULL is %v on PostgreSQL, %v on SQLite", name, col, pc.notNull, lc.notNull)
			}
		}
		for _, col := range sortedKeys(pcols) {
			if _, ok := lcols[col]; !ok && col != "rowid" && !(col == "tsv" && pcols[col].typ == "tsvector") {
				t.Errorf("table %s: column %s exists on PostgreSQL only", name, col)
			}
		}
		if ls.pks[name] != ps.pks[name] {
			t.Errorf("table %s: primary key (%s) on PostgreSQL, (%s) on SQLite", name, ps.pks[name], ls.pks[name])
		}
		if !slices.Equal(ls.uniques[name], ps.uniques[name]) {
			t.Errorf("table %s: unique columns %v on PostgreSQL, %v on SQLite", name, ps.uniques[name], ls.uniques[name])
		}
		var pix []string
		for _, ix := range ps.indexes[name] {
			if !pgOnlyIndexes[ix] {
				pix = append(pix, ix)
			}
		}
		if !slices.Equal(ls.indexes[name], pix) {
			t.Errorf("table %s: indexes %v on PostgreSQL, %v on SQLite", name, pix, ls.indexes[name])
		}
		if !slices.Equal(ls.triggers[name], ps.triggers[name]) {
			t.Errorf("table %s: triggers %v on PostgreSQL, %v on SQLite", name, ps.triggers[name], ls.triggers[name])
		}
	}
	for _, name := range sortedKeys(ps.tables) {
		if _, ok := ls.tables[name]; !ok {
			t.Errorf("table %s: exists on PostgreSQL only", name)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// liteTypes maps SQLite's declared types to PostgreSQL's names.
var liteTypes = map[string]string{"INTEGER": "bigint", "TEXT": "text", "REAL": "double precision", "BLOB": "bytea", "ANY": "text"}

var ftsShadow = regexp.MustCompile(`_(data|idx|content|docsize|config)$`)

// readSQLiteSchema reads the schema of a SQLite database and returns the
// names of its FTS5 tables.
func readSQLiteSchema(db *sql.DB) (*schema, []string, error) {
	s := newSchema()
	type obj struct{ typ, name, table, sql string }
	var objs []obj
	rows, err := db.Query(`SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var o obj
		if err := rows.Scan(&o.typ, &o.name, &o.table, &o.sql); err != nil {
			rows.Close()
			return nil, nil, err
		}
		objs = append(objs, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	var fts []string
	for _, o := range objs {
		if o.typ == "table" && strings.HasPrefix(strings.ToUpper(o.sql), "CREATE VIRTUAL TABLE") {
			fts = append(fts, o.name)
		}
	}
	isFTS := func(name string) bool {
		for _, f := range fts {
			if name == f || strings.HasPrefix(name, f+"_") && ftsShadow.MatchString(name) {
				return true
			}
		}
		return false
	}
	namesFTS := func(sqlText string) bool {
		low := strings.ToLower(sqlText)
		for _, f := range fts {
			if regexp.MustCompile(`\b` + f + `\b`).MatchString(low) {
				return true
			}
		}
		return false
	}
	for _, o := range objs {
		switch {
		case o.typ == "table" && !isFTS(o.name) && o.name != "schema_migrations":
			if err := readSQLiteTable(db, s, o.name); err != nil {
				return nil, nil, fmt.Errorf("table %s: %w", o.name, err)
			}
		case o.typ == "trigger" && !namesFTS(o.sql) && !strings.HasPrefix(o.name, "rv_"):
			s.triggers[o.table] = append(s.triggers[o.table], o.name)
		}
	}
	return s, fts, nil
}

func readSQLiteTable(db *sql.DB, s *schema, table string) error {
	cols := map[string]column{}
	pk := map[int]string{}
	rows, err := db.Query(`SELECT name, type, "notnull", pk FROM pragma_table_info(?)`, table)
	if err != nil {
		return err
	}
	for rows.Next() {
		var name, typ string
		var notNull bool
		var pkPos int
		if err := rows.Scan(&name, &typ, &notNull, &pkPos); err != nil {
			rows.Close()
			return err
		}
		mapped, ok := liteTypes[strings.ToUpper(typ)]
		if !ok {
			mapped = "unknown SQLite type " + typ
		}
		if pkPos > 0 {
			pk[pkPos] = name
			notNull = true // PostgreSQL's primary key columns are NOT NULL
		}
		cols[name] = column{typ: mapped, notNull: notNull}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	s.tables[table] = cols
	var pkCols []string
	for i := 1; i <= len(pk); i++ {
		pkCols = append(pkCols, pk[i])
	}
	s.pks[table] = strings.Join(pkCols, ", ")

	type index struct {
		name   string
		unique bool
		origin string
	}
	var idx []index
	rows, err = db.Query(`SELECT name, "unique", origin FROM pragma_index_list(?)`, table)
	if err != nil {
		return err
	}
	for rows.Next() {
		var ix index
		if err := rows.Scan(&ix.name, &ix.unique, &ix.origin); err != nil {
			rows.Close()
			return err
		}
		idx = append(idx, ix)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, ix := range idx {
		switch {
		case ix.origin == "pk":
		case ix.unique:
			var cs []string
			rows, err := db.Query(`SELECT coalesce(name, '(expression)') FROM pragma_index_info(?) ORDER BY seqno`, ix.name)
			if err != nil {
				return err
			}
			for rows.Next() {
				var c string
				if err := rows.Scan(&c); err != nil {
					rows.Close()
					return err
				}
				cs = append(cs, c)
			}
			rows.Close()
			s.uniques[table] = append(s.uniques[table], strings.Join(cs, ", "))
		default:
			s.indexes[table] = append(s.indexes[table], ix.name)
		}
	}
	sort.Strings(s.uniques[table])
	sort.Strings(s.indexes[table])
	return nil
}

// readPostgresSchema reads the public schema of a PostgreSQL database.
func readPostgresSchema(db *sql.DB) (*schema, error) {
	s := newSchema()
	rows, err := db.Query(`SELECT c.table_name, c.column_name, c.data_type, c.is_nullable = 'NO'
		FROM information_schema.columns c JOIN information_schema.tables t
			ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND c.table_name <> 'schema_migrations'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var table, name, typ string
		var notNull bool
		if err := rows.Scan(&table, &name, &typ, &notNull); err != nil {
			rows.Close()
			return nil, err
		}
		if s.tables[table] == nil {
			s.tables[table] = map[string]column{}
		}
		s.tables[table][name] = column{typ: typ, notNull: notNull}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Indexes with their columns in order (an expression shows as such).
	rows, err = db.Query(`SELECT t.relname, i.relname, x.indisprimary, x.indisunique,
			array_to_string(ARRAY(SELECT coalesce(a.attname, '(expression)') FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)
				LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum AND k.attnum > 0 ORDER BY k.n), ', ')
		FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
			JOIN pg_namespace n ON n.oid = t.relnamespace
		WHERE n.nspname = 'public' AND t.relname <> 'schema_migrations'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var table, name, cols string
		var primary, unique bool
		if err := rows.Scan(&table, &name, &primary, &unique, &cols); err != nil {
			rows.Close()
			return nil, err
		}
		switch {
		case primary:
			s.pks[table] = cols
		case unique:
			s.uniques[table] = append(s.uniques[table], cols)
		default:
			s.indexes[table] = append(s.indexes[table], name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = db.Query(`SELECT c.relname, g.tgname FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND NOT g.tgisinternal`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var table, name string
		if err := rows.Scan(&table, &name); err != nil {
			rows.Close()
			return nil, err
		}
		s.triggers[table] = append(s.triggers[table], name)
	}
	rows.Close()
	for _, m := range []map[string][]string{s.uniques, s.indexes, s.triggers} {
		for _, v := range m {
			sort.Strings(v)
		}
	}
	return s, rows.Err()
}
