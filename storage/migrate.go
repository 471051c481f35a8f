package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	assets "github.com/compliance-appliance/compliance/embed"
)

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", name)
		}
		b, err := fs.ReadFile(fsys, "migrations/"+name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share a version", out[i-1].name, out[i].name)
		}
	}
	return out, nil
}

// SchemaVersion returns the highest applied migration and the highest the
// binary knows.
func (db *DB) SchemaVersion(ctx context.Context) (applied, known int, err error) {
	ms, err := loadMigrations(assets.Migrations)
	if err != nil {
		return 0, 0, err
	}
	if len(ms) > 0 {
		known = ms[len(ms)-1].version
	}
	var exists int
	if err := db.w.QueryRowContext(ctx, db.tableExistsSQL(), "schema_migrations").Scan(&exists); err != nil {
		return 0, known, err
	}
	if exists == 0 {
		return 0, known, nil
	}
	if err := db.w.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&applied); err != nil {
		return 0, known, err
	}
	return applied, known, nil
}

// Migrate applies every embedded migration not yet recorded, each in its own
// transaction. It returns the names applied. A database whose schema is newer
// than this binary knows is refused.
func (db *DB) Migrate(ctx context.Context) ([]string, error) {
	return db.MigrateTo(ctx, 0)
}

// MigrateTo applies the embedded migrations not yet recorded up to and
// including version upTo (0: all of them). Tests and tools use it to make
// a database of an older schema, as an older binary left it.
func (db *DB) MigrateTo(ctx context.Context, upTo int) ([]string, error) {
	if db.pg {
		unlock, err := db.lockMigrations(ctx)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	return db.migrateTo(ctx, upTo)
}

// pgMigrateLock is the PostgreSQL advisory lock key the whole migrate step
// holds (a key of its own: the writer lock is taken per transaction inside).
const pgMigrateLock = 0x636f6d706c6d

// lockMigrations takes the session-level advisory lock that makes one
// process at a time migrate a PostgreSQL database, on a dedicated
// connection, and returns its release. Replicas (or `compliance migrate`
// beside a starting server) on one database migrate one after another:
// the first creates schema_migrations and applies what is missing, the
// others then find nothing to do. Waiting ends with ctx.
func (db *DB) lockMigrations(ctx context.Context) (unlock func(), err error) {
	conn, err := db.free.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration lock: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", pgMigrateLock); err != nil {
		// The session's state is unknown (a cancelled wait may still
		// be granted): the connection is discarded, not pooled.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
		return nil, fmt.Errorf("migration lock: %w", err)
	}
	return func() {
		var released bool
		err := conn.QueryRowContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", pgMigrateLock).Scan(&released)
		if err != nil || !released {
			// A session lock outlives its connection's return to the
			// pool: close the connection, which ends the session and
			// with it the lock.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = conn.Close()
	}, nil
}

func (db *DB) migrateTo(ctx context.Context, upTo int) ([]string, error) {
	ms, err := loadMigrations(assets.Migrations)
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	create := `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		name TEXT NOT NULL,
		applied_at TEXT NOT NULL
	) STRICT`
	if db.pg {
		create = `CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`
	}
	if _, err := db.w.ExecContext(ctx, create); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := db.w.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return nil, err
	}
	maxApplied := 0
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, err
		}
		applied[v] = true
		maxApplied = max(maxApplied, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	known := 0
	if len(ms) > 0 {
		known = ms[len(ms)-1].version
	}
	if maxApplied > known {
		return nil, fmt.Errorf("the database schema is at version %d but this binary knows only up to %d: run a newer compliance binary", maxApplied, known)
	}
	var done []string
	for _, m := range ms {
		if applied[m.version] || (upTo > 0 && m.version > upTo) {
			continue
		}
		if !db.pg && hasDirective(m.sql, "migrate: foreign_keys off") {
			ran, err := db.applyWithoutForeignKeys(ctx, m)
			if err != nil {
				return done, fmt.Errorf("apply migration %s: %w", m.name, err)
			}
			if ran {
				done = append(done, m.name)
			}
			continue
		}
		ran := false
		err := db.InTx(ctx, func(ctx context.Context) error {
			q := db.wr(ctx)
			// Another process (the CLI beside a starting server) may have
			// applied it since the read above; the write lock is held now.
			var n int
			if err := q.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			ran = true
			script := m.sql
			if db.pg {
				var err error
				if script, err = pgMigrationSQL(assets.Migrations, m.name, m.sql); err != nil {
					return err
				}
			}
			if _, err := q.ExecContext(ctx, script); err != nil {
				return err
			}
			_, err := q.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))", m.version, m.name)
			return err
		})
		if err != nil {
			return done, fmt.Errorf("apply migration %s: %w", m.name, err)
		}
		if ran {
			done = append(done, m.name)
		}
	}
	if db.pg {
		// The read model is SQLite's: on PostgreSQL every read goes to
		// the database (replicas share no memory to keep coherent).
		return done, nil
	}
	if err := db.ensureReadModel(ctx); err != nil {
		return done, err
	}
	return done, nil
}

// tableExistsSQL is a query giving 1 when the table named by its one
// argument exists, else 0.
func (db *DB) tableExistsSQL() string {
	if db.pg {
		return "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?"
	}
	return "SELECT count(*) FROM sqlite_master WHERE type='table' AND name = ?"
}

// hasDirective reports whether one of the comment lines at the top of a
// migration is "-- " + directive.
func hasDirective(script, directive string) bool {
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "--") {
			return false
		}
		if strings.TrimSpace(strings.TrimPrefix(line, "--")) == directive {
			return true
		}
	}
	return false
}

// applyWithoutForeignKeys applies a SQLite migration marked
// "-- migrate: foreign_keys off": one that rebuilds a table other tables
// reference (create the new shape, copy, drop the old). With foreign keys
// on, dropping the old table would first delete its rows and cascade to
// the children. SQLite ignores PRAGMA foreign_keys inside a transaction,
// so it is turned off on the writer connection before BEGIN, checked to
// be off, and turned on again afterwards; PRAGMA foreign_key_check must
// find no violation the migration made before it commits.
func (db *DB) applyWithoutForeignKeys(ctx context.Context, m migration) (ran bool, err error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	bg := context.WithoutCancel(ctx)
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
		return false, err
	}
	defer func() {
		_, e1 := conn.ExecContext(bg, "PRAGMA legacy_alter_table = OFF")
		_, e2 := conn.ExecContext(bg, "PRAGMA foreign_keys = ON")
		if err == nil {
			err = errors.Join(e1, e2)
		}
	}()
	var on int
	if err := conn.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&on); err != nil {
		return false, err
	}
	if on != 0 {
		return false, errors.New("foreign keys could not be turned off")
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return false, err
	}
	committed := false
	defer func() {
		if !committed {
			_, _ = conn.ExecContext(bg, "ROLLBACK")
		}
	}()
	// Another process may have applied it since the caller read the list;
	// the write lock is held now.
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", m.version).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			return false, err
		}
		committed = true
		return false, nil
	}
	// Violations already there (foreign keys were not always on) are
	// not the migration's: only new ones stop it.
	before, err := foreignKeyViolations(ctx, conn)
	if err != nil {
		return false, err
	}
	if _, err := conn.ExecContext(ctx, m.sql); err != nil {
		return false, err
	}
	after, err := foreignKeyViolations(ctx, conn)
	if err != nil {
		return false, err
	}
	var bad []string
	for k, n := range after {
		if n > before[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return false, fmt.Errorf("the migration would break foreign keys (table, rowid, parent): %s", strings.Join(bad, "; "))
	}
	if _, err := conn.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))", m.version, m.name); err != nil {
		return false, err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return false, err
	}
	committed = true
	return true, nil
}

// foreignKeyViolations counts PRAGMA foreign_key_check's rows by table,
// rowid and parent.
func foreignKeyViolations(ctx context.Context, conn *sql.Conn) (map[string]int, error) {
	rows, err := conn.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return nil, err
		}
		out[fmt.Sprintf("%s, %d, %s", table, rowid.Int64, parent)]++
	}
	return out, rows.Err()
}
