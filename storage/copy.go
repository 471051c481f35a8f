package storage

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// CopyOptions tune Copy.
type CopyOptions struct {
	// Force replaces the rows of a target that already holds data.
	Force bool
	// BatchRows is the rows per INSERT statement (0: 500).
	BatchRows int
	// Progress, when set, sees each table once it is copied.
	Progress func(table string, rows int64)
}

// CopyTable is one table's verification: rows and a hash of its rows
// (ordered by primary key, values normalised) on both sides.
type CopyTable struct {
	Name                   string
	SourceRows, TargetRows int64
	SourceHash, TargetHash string
}

// Equal reports whether both sides hold the same rows.
func (t CopyTable) Equal() bool {
	return t.SourceRows == t.TargetRows && t.SourceHash == t.TargetHash
}

// CopyReport is what Copy did and found.
type CopyReport struct {
	SchemaVersion int
	Tables        []CopyTable
	Rows          int64
	// Rebuilt names the derived tables the target rebuilt (full-text
	// indexes) instead of copying them.
	Rebuilt []string
	Copied  time.Duration // the copy transaction, commit included
	Total   time.Duration // with the checks and the verification
}

// OK reports whether every table matched.
func (r *CopyReport) OK() bool {
	for _, t := range r.Tables {
		if !t.Equal() {
			return false
		}
	}
	return true
}

// copyTable is a table's shape as both sides agree on it.
type copyTable struct {
	name string
	cols []string // copied columns, in the source's order
	key  []string // primary key columns, or rowid
}

// Copy copies every table of src into dst, which must be migrated to the
// same schema version, in one transaction on dst: tables in foreign-key
// order, rows in batches, triggers of dst held off while the rows go in
// (they would write derived rows twice), full-text indexes rebuilt on
// SQLite and identity sequences moved past the copied ids on PostgreSQL.
// The source is read in one read transaction (a consistent snapshot); stop
// the servers writing to it first. A target holding data is refused
// unless opts.Force. It then verifies both sides table by table: the
// report says whether they match; an error is returned only when the copy
// could not be made or checked.
func Copy(ctx context.Context, src, dst *DB, opts CopyOptions) (*CopyReport, error) {
	start := time.Now()
	if opts.BatchRows <= 0 {
		opts.BatchRows = 500
	}
	sv, _, err := src.SchemaVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("source schema: %w", err)
	}
	dv, _, err := dst.SchemaVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("target schema: %w", err)
	}
	if sv == 0 {
		return nil, fmt.Errorf("the source has no schema: nothing to copy")
	}
	if sv != dv {
		return nil, fmt.Errorf("schema versions differ: source %d, target %d: run `compliance migrate` with the same binary on both first", sv, dv)
	}
	tables, err := copyPlan(ctx, src, dst)
	if err != nil {
		return nil, err
	}
	if !opts.Force {
		if err := dst.refuseNonEmpty(ctx, tables); err != nil {
			return nil, err
		}
	}
	rep := &CopyReport{SchemaVersion: sv}
	begin := time.Now()
	if err := copyRows(ctx, src, dst, tables, opts, rep); err != nil {
		return nil, err
	}
	rep.Copied = time.Since(begin)
	for _, t := range tables {
		n1, h1, err := src.tableHash(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("verify source %s: %w", t.name, err)
		}
		n2, h2, err := dst.tableHash(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("verify target %s: %w", t.name, err)
		}
		rep.Tables = append(rep.Tables, CopyTable{Name: t.name, SourceRows: n1, TargetRows: n2, SourceHash: h1, TargetHash: h2})
	}
	rep.Total = time.Since(start)
	return rep, nil
}

// quoteIdent quotes a table or column name for both engines.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// schemaTables lists the base tables that hold copied data: not the
// migrations ledger (compared by version instead), not SQLite's own
// tables, not full-text indexes or their shadow tables (derived: the
// target rebuilds them).
func (db *DB) schemaTables(ctx context.Context) ([]string, error) {
	q := `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
	if !db.pg {
		q = `SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`
	}
	names, err := db.strings(ctx, q)
	if err != nil {
		return nil, err
	}
	var virtual []string
	if !db.pg {
		if virtual, err = db.strings(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'`); err != nil {
			return nil, err
		}
	}
	var out []string
next:
	for _, n := range names {
		if n == "schema_migrations" || strings.HasPrefix(n, "sqlite_") || (db.pg && pgFullTextTables[n]) {
			continue
		}
		for _, v := range virtual {
			if n == v || strings.HasPrefix(n, v+"_") {
				continue next
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// pgFullTextTables are PostgreSQL's counterparts of SQLite's FTS5
// tables: derived, rebuilt after a copy rather than copied.
var pgFullTextTables = map[string]bool{"kb_index": true}

func (db *DB) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := db.w.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// tableColumns returns a table's columns in order and its primary key's.
func (db *DB) tableColumns(ctx context.Context, table string) (cols, key []string, err error) {
	if db.pg {
		cols, err = db.strings(ctx, `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`, table)
		if err != nil {
			return nil, nil, err
		}
		key, err = db.strings(ctx, `SELECT a.attname FROM pg_index i
			JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
			WHERE i.indrelid = to_regclass(?) AND i.indisprimary
			ORDER BY array_position(i.indkey, a.attnum)`, quoteIdent(table))
		return cols, key, err
	}
	rows, err := db.w.QueryContext(ctx, `SELECT name, pk FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	type kc struct {
		name string
		pk   int
	}
	var pks []kc
	for rows.Next() {
		var c kc
		if err := rows.Scan(&c.name, &c.pk); err != nil {
			return nil, nil, err
		}
		cols = append(cols, c.name)
		if c.pk > 0 {
			pks = append(pks, c)
		}
	}
	sort.Slice(pks, func(i, j int) bool { return pks[i].pk < pks[j].pk })
	for _, c := range pks {
		key = append(key, c.name)
	}
	return cols, key, rows.Err()
}

// foreignKeys maps each table to the tables it references.
func (db *DB) foreignKeys(ctx context.Context, tables []string) (map[string][]string, error) {
	deps := map[string][]string{}
	for _, t := range tables {
		var refs []string
		var err error
		if db.pg {
			refs, err = db.strings(ctx, `SELECT DISTINCT r.relname FROM pg_constraint c JOIN pg_class r ON r.oid = c.confrelid
				WHERE c.contype = 'f' AND c.conrelid = to_regclass(?)`, quoteIdent(t))
		} else {
			refs, err = db.strings(ctx, `SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)`, t)
		}
		if err != nil {
			return nil, fmt.Errorf("foreign keys of %s: %w", t, err)
		}
		deps[t] = refs
	}
	return deps, nil
}

// copyPlan compares both schemas and orders the tables so that a table
// comes after every table it references.
func copyPlan(ctx context.Context, src, dst *DB) ([]copyTable, error) {
	st, err := src.schemaTables(ctx)
	if err != nil {
		return nil, fmt.Errorf("source tables: %w", err)
	}
	dt, err := dst.schemaTables(ctx)
	if err != nil {
		return nil, fmt.Errorf("target tables: %w", err)
	}
	for _, t := range st {
		if !slices.Contains(dt, t) {
			return nil, fmt.Errorf("schemas differ: table %s is only in the source", t)
		}
	}
	for _, t := range dt {
		if !slices.Contains(st, t) {
			return nil, fmt.Errorf("schemas differ: table %s is only in the target", t)
		}
	}
	shapes := map[string]copyTable{}
	for _, t := range st {
		sc, sk, err := src.tableColumns(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("source columns of %s: %w", t, err)
		}
		dc, dk, err := dst.tableColumns(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("target columns of %s: %w", t, err)
		}
		ct, err := matchColumns(t, src.pg, dst.pg, sc, dc)
		if err != nil {
			return nil, err
		}
		ct.key = sk
		if len(ct.key) == 0 {
			ct.key = dk
		}
		if len(ct.key) == 0 && !src.pg && !dst.pg {
			// SQLite on both sides: its implicit rowid orders the rows.
			ct.key = []string{"rowid"}
		}
		if len(ct.key) == 0 {
			if !slices.Contains(ct.cols, "rowid") {
				return nil, fmt.Errorf("table %s has no primary key and no rowid to order it by", t)
			}
			ct.key = []string{"rowid"}
		}
		shapes[t] = ct
	}
	deps, err := src.foreignKeys(ctx, st)
	if err != nil {
		return nil, err
	}
	var out []copyTable
	for _, t := range topoOrder(st, deps) {
		out = append(out, shapes[t])
	}
	return out, nil
}

// matchColumns checks that both sides have the same columns. PostgreSQL's
// rowid column (the order of SQLite's implicit rowid) is copied from and
// into SQLite's rowid; its other own columns (tsv: derived) are not
// copied.
func matchColumns(table string, srcPG, dstPG bool, sc, dc []string) (copyTable, error) {
	ct := copyTable{name: table}
	own := func(pg bool, cols []string, c string) bool {
		return pg && pgOnlyColumns[c] && !(c == "rowid" && !slices.Contains(cols, c))
	}
	var sCols, dCols []string
	for _, c := range sc {
		if own(srcPG, sc, c) && !dstPG {
			continue
		}
		sCols = append(sCols, c)
	}
	for _, c := range dc {
		if own(dstPG, dc, c) && !srcPG {
			continue
		}
		dCols = append(dCols, c)
	}
	for _, c := range sCols {
		if !slices.Contains(dCols, c) {
			return ct, fmt.Errorf("schemas differ: column %s.%s is only in the source", table, c)
		}
	}
	for _, c := range dCols {
		if !slices.Contains(sCols, c) {
			return ct, fmt.Errorf("schemas differ: column %s.%s is only in the target", table, c)
		}
	}
	pgSide := (srcPG && slices.Contains(sc, "rowid")) || (dstPG && slices.Contains(dc, "rowid"))
	for _, c := range sCols {
		if c == "tsv" && (srcPG || dstPG) {
			continue // derived from the row
		}
		ct.cols = append(ct.cols, c)
	}
	if pgSide && !slices.Contains(ct.cols, "rowid") {
		// SQLite's implicit rowid on the other side.
		ct.cols = append(ct.cols, "rowid")
	}
	return ct, nil
}

// topoOrder orders tables so that referenced tables come first; ties (and
// the rest of a cycle, whose foreign keys the target checks at commit on
// SQLite) in name order.
func topoOrder(tables []string, deps map[string][]string) []string {
	done := map[string]bool{}
	var out []string
	for len(out) < len(tables) {
		progressed := false
		for _, t := range tables {
			if done[t] {
				continue
			}
			ready := true
			for _, d := range deps[t] {
				if d != t && !done[d] && slices.Contains(tables, d) {
					ready = false
					break
				}
			}
			if ready {
				done[t] = true
				out = append(out, t)
				progressed = true
			}
		}
		if !progressed {
			for _, t := range tables {
				if !done[t] {
					done[t] = true
					out = append(out, t)
					break
				}
			}
		}
	}
	return out
}

// baselineRows counts the rows a freshly migrated database holds per
// table (the migrations write a few), from a throwaway SQLite file.
func baselineRows(ctx context.Context, tables []copyTable) (map[string]int64, error) {
	dir, err := os.MkdirTemp("", "compliance-copy-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := Open(ctx, filepath.Join(dir, "fresh.db"))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, t := range tables {
		var n int64
		if err := db.w.QueryRowContext(ctx, "SELECT count(*) FROM "+quoteIdent(t.name)).Scan(&n); err != nil {
			return nil, err
		}
		out[t.name] = n
	}
	return out, nil
}

// refuseNonEmpty fails when the target holds more than its migrations
// wrote.
func (db *DB) refuseNonEmpty(ctx context.Context, tables []copyTable) error {
	base, err := baselineRows(ctx, tables)
	if err != nil {
		return fmt.Errorf("count a fresh database's rows: %w", err)
	}
	var full []string
	for _, t := range tables {
		var n int64
		if err := db.w.QueryRowContext(ctx, "SELECT count(*) FROM "+quoteIdent(t.name)).Scan(&n); err != nil {
			return fmt.Errorf("count %s: %w", t.name, err)
		}
		if n > base[t.name] {
			full = append(full, fmt.Sprintf("%s (%d rows)", t.name, n))
		}
	}
	if len(full) > 0 {
		if len(full) > 5 {
			full = append(full[:5], fmt.Sprintf("and %d more tables", len(full)-5))
		}
		return fmt.Errorf("the target already holds data: %s; copy into an empty database, or pass --force to replace its rows", strings.Join(full, ", "))
	}
	return nil
}

// copyRows runs the copy: one read transaction on the source, one write
// transaction on the target.
func copyRows(ctx context.Context, src, dst *DB, tables []copyTable, opts CopyOptions, rep *CopyReport) (err error) {
	ropts := &sql.TxOptions{ReadOnly: true}
	if src.pg {
		ropts.Isolation = sql.LevelRepeatableRead
	}
	rtx, err := src.r.BeginTx(ctx, ropts)
	if err != nil {
		return fmt.Errorf("source read transaction: %w", err)
	}
	defer func() { _ = rtx.Rollback() }()
	wtx, err := dst.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("target transaction: %w", err)
	}
	defer func() {
		if err != nil {
			_ = wtx.Rollback()
		}
	}()
	var triggers [][2]string
	if dst.pg {
		// The one writer across replicas, as every write transaction.
		if _, err := wtx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", pgWriterLock); err != nil {
			return fmt.Errorf("writer lock: %w", err)
		}
		for _, t := range tables {
			if _, err := wtx.ExecContext(ctx, "ALTER TABLE "+quoteIdent(t.name)+" DISABLE TRIGGER USER"); err != nil {
				return fmt.Errorf("hold off the triggers of %s: %w", t.name, err)
			}
		}
	} else {
		// SQLite has no switch for triggers: they are dropped and created
		// again in the same transaction.
		rows, err := wtx.QueryContext(ctx, `SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' ORDER BY name`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var n, s string
			if err := rows.Scan(&n, &s); err != nil {
				rows.Close()
				return err
			}
			triggers = append(triggers, [2]string{n, s})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, tr := range triggers {
			if _, err := wtx.ExecContext(ctx, "DROP TRIGGER "+quoteIdent(tr[0])); err != nil {
				return fmt.Errorf("drop trigger %s: %w", tr[0], err)
			}
		}
		if _, err := wtx.ExecContext(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
			return err
		}
	}
	for i := len(tables) - 1; i >= 0; i-- {
		if _, err := wtx.ExecContext(ctx, "DELETE FROM "+quoteIdent(tables[i].name)); err != nil {
			return fmt.Errorf("clear %s: %w", tables[i].name, err)
		}
	}
	for _, t := range tables {
		n, err := copyOne(ctx, rtx, wtx, t, opts.BatchRows)
		if err != nil {
			return fmt.Errorf("copy %s: %w", t.name, err)
		}
		rep.Rows += n
		if opts.Progress != nil {
			opts.Progress(t.name, n)
		}
	}
	if dst.pg {
		for _, t := range tables {
			if _, err := wtx.ExecContext(ctx, "ALTER TABLE "+quoteIdent(t.name)+" ENABLE TRIGGER USER"); err != nil {
				return fmt.Errorf("triggers of %s: %w", t.name, err)
			}
		}
		// The knowledge-base index is PostgreSQL's own table there, derived
		// from the entries like SQLite's FTS5 table (search_docs' tsv is a
		// generated column).
		if _, err := wtx.ExecContext(ctx, `DELETE FROM kb_index`); err != nil {
			return fmt.Errorf("clear kb_index: %w", err)
		}
		if err := rebuildKBIndex(ctx, wtx); err != nil {
			return err
		}
		rep.Rebuilt = []string{"kb_index"}
		if err := resetIdentities(ctx, wtx); err != nil {
			return err
		}
	} else {
		for _, tr := range triggers {
			if _, err := wtx.ExecContext(ctx, tr[1]); err != nil {
				return fmt.Errorf("create trigger %s: %w", tr[0], err)
			}
		}
		if rep.Rebuilt, err = rebuildFullText(ctx, wtx); err != nil {
			return err
		}
	}
	if err := wtx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// copyOne copies one table's rows in batches of multi-row INSERTs.
func copyOne(ctx context.Context, rtx, wtx *sql.Tx, t copyTable, batch int) (int64, error) {
	cols := make([]string, len(t.cols))
	for i, c := range t.cols {
		cols[i] = quoteIdent(c)
	}
	keys := make([]string, len(t.key))
	for i, c := range t.key {
		keys[i] = quoteIdent(c)
	}
	// SQLite binds at most 32766 values per statement.
	batch = max(1, min(batch, 30000/len(cols)))
	rows, err := rtx.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+quoteIdent(t.name)+" ORDER BY "+strings.Join(keys, ", "))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	head := "INSERT INTO " + quoteIdent(t.name) + " (" + strings.Join(cols, ", ") + ") VALUES "
	tuple := "(" + placeholders(len(cols)) + ")"
	var args []any
	pending := 0
	var n int64
	flush := func() error {
		if pending == 0 {
			return nil
		}
		var b strings.Builder
		b.WriteString(head)
		for i := range pending {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(tuple)
		}
		if _, err := wtx.ExecContext(ctx, b.String(), args...); err != nil {
			return err
		}
		args, pending = args[:0], 0
		return nil
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		args = append(args, vals...)
		pending++
		n++
		if pending == batch {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	return n, flush()
}

// resetIdentities moves every identity column's sequence past the largest
// copied value, so the next insert does not collide.
func resetIdentities(ctx context.Context, wtx *sql.Tx) error {
	rows, err := wtx.QueryContext(ctx, `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES' ORDER BY table_name`)
	if err != nil {
		return err
	}
	var ids [][2]string
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, [2]string{t, c})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		// The next value is max + 1 (1 on an empty table).
		top := fmt.Sprintf("(SELECT max(%s) FROM %s)", quoteIdent(id[1]), quoteIdent(id[0]))
		q := fmt.Sprintf("SELECT setval(pg_get_serial_sequence(?, ?), coalesce(%s, 1), %s IS NOT NULL)", top, top)
		if _, err := wtx.ExecContext(ctx, q, quoteIdent(id[0]), id[1]); err != nil {
			return fmt.Errorf("reset the sequence of %s.%s: %w", id[0], id[1], err)
		}
	}
	return nil
}

// rebuildFullText fills SQLite's full-text indexes from the copied rows:
// the search index from its content table, the knowledge-base index from
// the entries (documents of other knowledge sources, such as published
// policies, are indexed again by the application on first use).
func rebuildFullText(ctx context.Context, wtx *sql.Tx) ([]string, error) {
	var virtual []string
	rows, err := wtx.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, err
		}
		virtual = append(virtual, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var done []string
	for _, v := range virtual {
		switch v {
		case "search_index":
			if _, err := wtx.ExecContext(ctx, `INSERT INTO search_index (search_index) VALUES ('rebuild')`); err != nil {
				return nil, fmt.Errorf("rebuild search_index: %w", err)
			}
		case "kb_index":
			if _, err := wtx.ExecContext(ctx, `DELETE FROM kb_index`); err != nil {
				return nil, fmt.Errorf("clear kb_index: %w", err)
			}
			if err := rebuildKBIndex(ctx, wtx); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("full-text table %s: no rebuild known for it", v)
		}
		done = append(done, v)
	}
	return done, nil
}

func rebuildKBIndex(ctx context.Context, wtx *sql.Tx) error {
	rows, err := wtx.QueryContext(ctx, `SELECT rowid, organization_id, id, coalesce(source_document, ''), question, answer, tags FROM kb_entries ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("read kb_entries: %w", err)
	}
	type entry struct {
		rowid                     int64
		org, id, name, q, a, tags string
	}
	var es []entry
	for rows.Next() {
		var e entry
		if err := rows.Scan(&e.rowid, &e.org, &e.id, &e.name, &e.q, &e.a, &e.tags); err != nil {
			rows.Close()
			return err
		}
		es = append(es, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, e := range es {
		var tags []string
		if err := json.Unmarshal([]byte(e.tags), &tags); err != nil {
			return fmt.Errorf("kb entry %s: tags: %w", e.id, err)
		}
		if _, err := wtx.ExecContext(ctx, `INSERT INTO kb_index (rowid, organization_id, org_token, source_type, ref, name, question, answer, tags) VALUES (?, ?, ?, 'entry', ?, ?, ?, ?, ?)`,
			e.rowid, e.org, orgToken(e.org), e.id, e.name, e.q, e.a, strings.Join(tags, tagSep)); err != nil {
			return fmt.Errorf("index kb entry %s: %w", e.id, err)
		}
	}
	return nil
}

// tableHash counts a table's rows and hashes them in key order, each value
// normalised so that both engines' forms of the same value hash alike.
func (db *DB) tableHash(ctx context.Context, t copyTable) (int64, string, error) {
	cols := make([]string, len(t.cols))
	for i, c := range t.cols {
		cols[i] = quoteIdent(c)
	}
	keys := make([]string, len(t.key))
	for i, c := range t.key {
		keys[i] = quoteIdent(c)
	}
	rows, err := db.r.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+quoteIdent(t.name)+" ORDER BY "+strings.Join(keys, ", "))
	if err != nil {
		return 0, "", err
	}
	defer rows.Close()
	h := sha256.New()
	fmt.Fprintf(h, "%q\n", t.cols)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var n int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, "", err
		}
		for _, v := range vals {
			hashValue(h, v)
		}
		h.Write([]byte{'\n'})
		n++
	}
	if err := rows.Err(); err != nil {
		return n, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// hashValue writes one value in a form both engines give alike: integers
// (and integral reals) in decimal, other reals shortest-exact, text and
// bytes by length and content, NULL as its own mark.
func hashValue(h hash.Hash, v any) {
	switch x := v.(type) {
	case nil:
		h.Write([]byte("N;"))
	case int64:
		fmt.Fprintf(h, "I%d;", x)
	case bool:
		if x {
			h.Write([]byte("I1;"))
		} else {
			h.Write([]byte("I0;"))
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			fmt.Fprintf(h, "I%d;", int64(x))
		} else {
			h.Write([]byte("R" + strconv.FormatFloat(x, 'g', -1, 64) + ";"))
		}
	case string:
		fmt.Fprintf(h, "S%d:", len(x))
		h.Write([]byte(x))
	case []byte:
		fmt.Fprintf(h, "S%d:", len(x))
		h.Write(x)
	case time.Time:
		s := ts(x)
		fmt.Fprintf(h, "S%d:%s", len(s), s)
	default:
		fmt.Fprintf(h, "?%v;", x)
	}
}
