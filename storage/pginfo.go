package storage

import "context"

// ServerVersion is the database engine and its version, e.g. "PostgreSQL
// 15.8" or "SQLite 3.46.0".
func (db *DB) ServerVersion(ctx context.Context) (string, error) {
	var v string
	if db.pg {
		err := db.r.QueryRowContext(ctx, "SELECT current_setting('server_version')").Scan(&v)
		return v, err
	}
	err := db.r.QueryRowContext(ctx, "SELECT 'SQLite ' || sqlite_version()").Scan(&v)
	return v, err
}
