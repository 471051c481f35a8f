package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	assets "github.com/compliance-appliance/compliance/embed"
)

// Snapshot writes a consistent copy of the database to path (which must
// not exist) with VACUUM INTO and syncs it. It runs on a connection of its
// own: the copy is a read transaction of the source, so the writer and the
// readers of a running server go on while it is taken.
func (db *DB) Snapshot(ctx context.Context, path string) error {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	c, err := sql.Open("sqlite", "file:"+db.path+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer c.Close()
	c.SetMaxOpenConns(1)
	if _, err := c.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		return fmt.Errorf("snapshot to %s: %w", path, err)
	}
	// VACUUM INTO does not sync the copy; a backup must survive a crash.
	return syncFile(path)
}

// Backup writes a consistent copy of the database to path: a snapshot
// taken beside it under a temporary name, synced, then renamed into
// place, so path never holds a partial copy. An existing path is refused.
func (db *DB) Backup(ctx context.Context, path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("backup to %s: the file already exists", path)
	}
	tmpDir, err := os.MkdirTemp(filepath.Dir(path), ".compliance-backup-*")
	if err != nil {
		return fmt.Errorf("backup to %s: %w", path, err)
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, "compliance.db")
	if err := db.Snapshot(ctx, tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("backup to %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("backup to %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

// SyncDir fsyncs a directory, making the creations and renames in it
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// Inspection is what a read-only look at a database file found.
type Inspection struct {
	// SchemaVersion is the highest applied migration (0: none).
	SchemaVersion int
	// Tables counts the rows of every table.
	Tables map[string]int64
	// Files are the SHA-256 hashes of the stored files records refer to.
	Files []string
	// Integrity is "ok" or the problems PRAGMA quick_check (or, with
	// Full, integrity_check) reported; empty when not asked for.
	Integrity []string
	// Newest is the latest time recorded in the audit trail ("" if none).
	Newest string
}

// InspectOptions chooses what Inspect looks at.
type InspectOptions struct {
	Counts    bool // row counts per table
	Files     bool // referenced stored files
	Integrity bool // PRAGMA quick_check
	Full      bool // PRAGMA integrity_check instead of quick_check
}

// Inspect opens the database file at path read-only (it must exist; it is
// never created or migrated) and reports its schema version and what opts
// asks for.
func Inspect(ctx context.Context, path string, opts InspectOptions) (*Inspection, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("inspect database: %w", err)
	}
	q := url.Values{}
	q.Add("mode", "ro")
	q.Add("_pragma", "busy_timeout(5000)")
	c, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	defer c.Close()
	c.SetMaxOpenConns(1)
	out := &Inspection{}
	if opts.Integrity || opts.Full {
		pragma := "quick_check"
		if opts.Full {
			pragma = "integrity_check"
		}
		rows, err := c.QueryContext(ctx, "PRAGMA "+pragma+"(20)")
		if err != nil {
			return nil, fmt.Errorf("inspect %s: %s: %w", path, pragma, err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				rows.Close()
				return nil, fmt.Errorf("inspect %s: %w", path, err)
			}
			out.Integrity = append(out.Integrity, s)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("inspect %s: %s: %w", path, pragma, err)
		}
	}
	tables, err := tableNames(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	has := map[string]bool{}
	for _, t := range tables {
		has[t] = true
	}
	if has["schema_migrations"] {
		if err := c.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&out.SchemaVersion); err != nil {
			return nil, fmt.Errorf("inspect %s: schema version: %w", path, err)
		}
	}
	if has["audit_log"] {
		var s sql.NullString
		if err := c.QueryRowContext(ctx, "SELECT max(occurred_at) FROM audit_log").Scan(&s); err != nil {
			return nil, fmt.Errorf("inspect %s: %w", path, err)
		}
		out.Newest = s.String
	}
	if opts.Counts {
		out.Tables = map[string]int64{}
		for _, t := range tables {
			var n int64
			if err := c.QueryRowContext(ctx, `SELECT count(*) FROM "`+t+`"`).Scan(&n); err != nil {
				return nil, fmt.Errorf("inspect %s: count %s: %w", path, t, err)
			}
			out.Tables[t] = n
		}
	}
	if opts.Files {
		var parts []string
		for _, fc := range fileRefColumns {
			if has[fc.table] {
				parts = append(parts, fmt.Sprintf("SELECT %s FROM %s WHERE %s IS NOT NULL", fc.column, fc.table, fc.column))
			}
		}
		if len(parts) > 0 {
			rows, err := c.QueryContext(ctx, strings.Join(parts, " UNION ")+" ORDER BY 1")
			if err != nil {
				return nil, fmt.Errorf("inspect %s: file references: %w", path, err)
			}
			defer rows.Close()
			for rows.Next() {
				var h string
				if err := rows.Scan(&h); err != nil {
					return nil, fmt.Errorf("inspect %s: %w", path, err)
				}
				out.Files = append(out.Files, h)
			}
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("inspect %s: file references: %w", path, err)
			}
		}
	}
	return out, nil
}

// tableNames lists every table but SQLite's own.
func tableNames(ctx context.Context, c *sql.DB) ([]string, error) {
	rows, err := c.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		if strings.Contains(n, `"`) {
			return nil, errors.New("a table name holds a double quote")
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// KnownSchemaVersion is the highest migration this binary holds.
func KnownSchemaVersion() (int, error) {
	ms, err := loadMigrations(assets.Migrations)
	if err != nil {
		return 0, err
	}
	if len(ms) == 0 {
		return 0, nil
	}
	return ms[len(ms)-1].version, nil
}

// HasData reports whether the database holds any organization (everything
// else belongs to one); a database without its schema holds none.
func (db *DB) HasData(ctx context.Context) (bool, error) {
	var tables int
	if err := db.w.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'organizations'`).Scan(&tables); err != nil {
		return false, fmt.Errorf("has data: %w", err)
	}
	if tables == 0 {
		return false, nil
	}
	var any int
	if err := db.w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM organizations)`).Scan(&any); err != nil {
		return false, fmt.Errorf("has data: %w", err)
	}
	return any == 1, nil
}
