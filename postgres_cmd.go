package main

import (
	"context"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/storage"
	"github.com/spf13/viper"
)

// onPostgres reports whether the configuration selects PostgreSQL.
func onPostgres(v *viper.Viper) bool { return v.GetString("database_url") != "" }

// errSQLiteOnly answers a command that works on the SQLite file when the
// database is PostgreSQL, saying what to use instead.
func errSQLiteOnly(what string) error {
	return fmt.Errorf("%s works on the SQLite file in data_dir; this installation uses PostgreSQL (database_url): "+
		"back it up with PostgreSQL's tools (pg_dump -Fc for a logical copy, pg_basebackup with WAL archiving for point-in-time recovery), "+
		"restore with pg_restore, and copy data_dir's files/ and secrets/ beside it; "+
		"`compliance copy --from postgres://... --to sqlite:PATH` makes a SQLite file of it (docs/scale-out.md)", what)
}

// checkPostgres is doctor's database check on PostgreSQL: the server
// answers, its version, and the schema version against this binary's. It
// does not migrate.
func checkPostgres(ctx context.Context, url string, add addCheck) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	db, err := storage.OpenURL(ctx, url)
	if err != nil {
		add("database", checkFail, "PostgreSQL: %v", err)
		return
	}
	defer db.Close()
	server, err := db.ServerVersion(ctx)
	if err != nil {
		add("database", checkFail, "PostgreSQL: %v", err)
		return
	}
	applied, known, err := db.SchemaVersion(ctx)
	switch {
	case err != nil:
		add("database", checkFail, "PostgreSQL %s: schema: %v", server, err)
	case applied > known:
		add("database", checkFail, "PostgreSQL %s; schema %d is newer than this binary knows (%d)", server, applied, known)
	case applied < known:
		add("database", checkWarn, "PostgreSQL %s; schema %d, migrations up to %d pending (compliance migrate)", server, applied, known)
	default:
		add("database", checkOK, "PostgreSQL %s; schema %d", server, applied)
	}
}
