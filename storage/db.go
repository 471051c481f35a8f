// Package storage is the SQLite implementation of the app's store
// interfaces: one writer connection, a pool of read-only readers, embedded
// migrations.
package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// timeFormat is fixed width so stored times sort as text.
const timeFormat = "2006-01-02T15:04:05.000Z"

// DB is the SQLite database: one writer connection and a pool of readers.
type DB struct {
	w    *sql.DB
	r    *sql.DB
	path string
	gc   *committer
	rs   *stmtCache
	ws   *writerStmts
	rm   *readModel
	// pg is set when the database is PostgreSQL (OpenURL).
	pg bool
	// free is a small read-write pool on PostgreSQL for autocommit
	// statements that must not wait for the writer (the shared rate-limit
	// buckets); nil on SQLite.
	free *sql.DB
	// commitObserver, when set, sees every group commit: the calls it
	// acknowledged and how long COMMIT (with its fsync) took.
	commitObserver atomic.Pointer[func(calls int, d time.Duration)]
	// batchObserver, when set, sees every group commit's writer time.
	batchObserver atomic.Pointer[func(BatchStats)]
}

var _ app.Store = (*DB)(nil)

// extraPragmas are added to every connection (benchmarks compare page
// cache and memory-mapping settings with it).
var extraPragmas []string

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(ON)")
	// Reads map the database file instead of copying pages through
	// pread into each connection's page cache: 10-30% less CPU per list
	// page read from SQLite (BenchmarkPageCache); a 64 MiB page cache per
	// connection gained less and costs memory per connection.
	q.Add("_pragma", "mmap_size(268435456)")
	for _, p := range extraPragmas {
		q.Add("_pragma", p)
	}
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database file. It does not migrate.
func Open(ctx context.Context, path string) (*DB, error) {
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := dropStat4(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxLifetime(0)
	db := &DB{w: w, r: r, path: path, rs: newStmtCache(r), ws: newWriterStmts(w), rm: newReadModel(DefaultReadCacheBytes)}
	db.startCommitter()
	return db, nil
}

// IsPostgres reports whether the database is PostgreSQL.
func (db *DB) IsPostgres() bool { return db.pg }

// IsPostgresURL reports whether a database location is a PostgreSQL URL
// rather than a SQLite file.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// OpenURL opens a PostgreSQL database by its URL, or a SQLite file by its
// path.
func OpenURL(ctx context.Context, location string) (*DB, error) {
	if IsPostgresURL(location) {
		return openPostgres(ctx, location)
	}
	return Open(ctx, location)
}

// openPostgres opens the writer (one connection, as on SQLite: the group
// committer's) and a pool of read-only readers. It does not migrate.
func openPostgres(ctx context.Context, dbURL string) (*DB, error) {
	w, err := sql.Open(pgDriverName, dbURL)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open database: %w", redactURL(err, dbURL))
	}
	sep := "?"
	if strings.Contains(dbURL, "?") {
		sep = "&"
	}
	r, err := sql.Open(pgDriverName, dbURL+sep+"default_transaction_read_only=on")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	f, err := sql.Open(pgDriverName, dbURL)
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	f.SetMaxOpenConns(4)
	f.SetMaxIdleConns(4)
	db := &DB{w: w, r: r, path: "", pg: true, free: f, rs: newStmtCache(r), ws: newWriterStmts(w), rm: newReadModel(0)}
	db.startCommitter()
	return db, nil
}

// redactURL keeps a password in a database URL out of an error.
func redactURL(err error, dbURL string) error {
	u, perr := url.Parse(dbURL)
	if perr != nil || u.User == nil {
		return err
	}
	if p, ok := u.User.Password(); ok && p != "" {
		return errors.New(strings.ReplaceAll(err.Error(), p, "xxxxx"))
	}
	return err
}

// Close stops the group committer and closes both pools.
func (db *DB) Close() error {
	db.stopCommitter()
	errs := []error{db.rs.close(), db.ws.close(), db.r.Close(), db.w.Close()}
	if db.free != nil {
		errs = append(errs, db.free.Close())
	}
	return errors.Join(errs...)
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.r.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type txKey struct{}

type txState struct {
	tx    *sql.Tx
	depth int
	batch *txBatch // nil outside a group commit
}

// InTx runs fn in a write transaction. A nested call joins the outer
// transaction under a savepoint.
func (db *DB) InTx(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		st.depth++
		name := fmt.Sprintf("sp%d", st.depth)
		defer func() { st.depth-- }()
		q := txQuerier{st}
		if _, err := q.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		defer func() {
			if p := recover(); p != nil {
				_, _ = q.ExecContext(ctx, "ROLLBACK TO "+name)
				_, _ = q.ExecContext(ctx, "RELEASE "+name)
				panic(p)
			}
		}()
		if err := fn(ctx); err != nil {
			_, rbErr := q.ExecContext(ctx, "ROLLBACK TO "+name)
			_, relErr := q.ExecContext(ctx, "RELEASE "+name)
			return errors.Join(err, rbErr, relErr)
		}
		_, err := q.ExecContext(ctx, "RELEASE "+name)
		return err
	}
	return db.groupCommit(ctx, fn)
}

// rd returns the transaction in ctx (a write or a read transaction), else
// the reader pool (with its prepared statement cache).
func (db *DB) rd(ctx context.Context) querier {
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		return txQuerier{st}
	}
	if rt, ok := ctx.Value(readTxKey{}).(*readTx); ok {
		return rt
	}
	return cachedReader{db.rs}
}

// wr returns the transaction in ctx, else the writer connection.
func (db *DB) wr(ctx context.Context) querier {
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		return txQuerier{st}
	}
	return db.w
}

// mapErr maps SQLite errors to app sentinels.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return app.ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return fmt.Errorf("%w: %s", app.ErrConflict, pe.Error())
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %s", app.ErrConflict, se.Error())
		}
	}
	return err
}

func ts(t time.Time) string { return t.UTC().Format(timeFormat) }

func tsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ts(*t)
}

func parseTS(s string) time.Time {
	if t, ok := parseFixedTS(s); ok {
		return t
	}
	t, err := time.Parse(timeFormat, s)
	if err != nil {
		t, _ = time.Parse(time.RFC3339Nano, s)
	}
	return t.UTC()
}

// parseFixedTS reads timeFormat without time.Parse's generality: list
// responses parse several times per row.
func parseFixedTS(s string) (time.Time, bool) {
	if len(s) != len(timeFormat) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return time.Time{}, false
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for i := from; i < to; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 7)
	d, ok3 := num(8, 10)
	h, ok4 := num(11, 13)
	mi, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	msec, ok7 := num(20, 23)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, msec*int(time.Millisecond), time.UTC)
	if t.Day() != d {
		return time.Time{}, false // 31 April and the like: let time.Parse reject it
	}
	return t, true
}

func parseTSPtr(s sql.NullString) *time.Time {
	if !s.Valid {
		return nil
	}
	t := parseTS(s.String)
	return &t
}

func strPtr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	v := s.String
	return &v
}

func nullStr(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// placeholders returns "?, ?, ?" for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// Optimize runs PRAGMA optimize (ANALYZE where the statistics are stale)
// without keeping STAT4 samples, and truncates the WAL (nightly job).
func (db *DB) Optimize(ctx context.Context) error {
	if db.pg {
		// PostgreSQL's autovacuum keeps statistics; ANALYZE refreshes
		// them now (after a bulk load or a copy).
		if _, err := db.w.ExecContext(ctx, "ANALYZE"); err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
		return nil
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("optimize: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "PRAGMA optimize"); err != nil {
		return fmt.Errorf("optimize: %w", err)
	}
	// In the same transaction, so no reader ever loads the samples.
	if err := dropStat4(ctx, tx); err != nil {
		return fmt.Errorf("optimize: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("optimize: %w", err)
	}
	if _, err := db.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// dropStat4 deletes the STAT4 samples ANALYZE gathers (the per-index
// statistics of sqlite_stat1 stay) and reloads the statistics of the
// connection. With samples, SQLite compiles a statement again before it
// runs whenever a bound value its plan consulted has changed: every list
// query, since each names its organization, paid a full compile (a fifth
// of a vendor list's CPU time). Every index here leads with the
// organization, and the plans are proven without statistics
// (TestQueryPlans), so the samples bought nothing.
func dropStat4(ctx context.Context, q querier) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat4'`).Scan(&n); err != nil {
		return fmt.Errorf("statistics: %w", err)
	}
	if n == 0 {
		return nil
	}
	if _, err := q.ExecContext(ctx, `DELETE FROM sqlite_stat4`); err != nil {
		return fmt.Errorf("statistics: %w", err)
	}
	if _, err := q.ExecContext(ctx, `ANALYZE sqlite_schema`); err != nil {
		return fmt.Errorf("statistics: %w", err)
	}
	return nil
}

// SetCommitObserver makes fn see every group commit: how many calls it
// acknowledged and how long the COMMIT with its fsync took. fn must not
// block.
func (db *DB) SetCommitObserver(fn func(calls int, d time.Duration)) {
	db.commitObserver.Store(&fn)
}

// PoolStats are the writer's and the readers' connection pool statistics
// (waits for a connection among them).
func (db *DB) PoolStats() (writer, readers sql.DBStats) {
	return db.w.Stats(), db.r.Stats()
}
