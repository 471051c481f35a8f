package storage

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	assets "github.com/compliance-appliance/compliance/embed"
)

// TestEveryMigrationTranslates: each SQLite migration translates for
// PostgreSQL without error, with no FTS5 table, statement naming one, or
// PRAGMA left; every PostgreSQL addendum names a SQLite migration.
func TestEveryMigrationTranslates(t *testing.T) {
	ms, err := loadMigrations(assets.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range ms {
		names[m.name] = true
		out, err := pgMigrationSQL(assets.Migrations, m.name, m.sql)
		if err != nil {
			t.Errorf("%s: %v", m.name, err)
			continue
		}
		up := strings.ToUpper(strings.Join(splitStatements(out), ";\n")) // comments left out
		for _, bad := range []string{"VIRTUAL TABLE", "USING FTS5", "PRAGMA ", " MATCH ", "SEARCH_INDEX"} {
			if strings.Contains(up, bad) {
				t.Errorf("%s: the translation still contains %q", m.name, bad)
			}
		}
	}
	adds, err := fs.ReadDir(assets.Migrations, "migrations/postgres")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range adds {
		if !names[e.Name()] {
			t.Errorf("migrations/postgres/%s: no SQLite migration of that name", e.Name())
		}
	}
}

// TestPgTSQuery: the FTS5 expressions the callers build become tsquery
// text with every word quoted, and nothing typed is read as syntax.
func TestPgTSQuery(t *testing.T) {
	cases := []struct{ in, want string }{
		{app.ParseSearchQuery("encryption pol").Match(), `( 'encryption' & 'pol':* )`},
		{app.ParseSearchQuery("Müller").Match(), `( 'Müller':* )`},
		{app.ParseSearchQuery(`it's "x" OR NOT (y) a:b \ *`).Match(), `( 'it' & 's' & 'x' & 'OR' & 'NOT' & 'y' & 'a' & 'b':* )`},
		{`{title body} : ("mfa" OR "multi factor" OR "2fa")`, `( 'mfa' | ('multi' <-> 'factor') | '2fa' )`},
		{`"encrypt" OR "laptop"`, `'encrypt' | 'laptop'`},
		{`"a""b"`, `('a' <-> 'b')`},
		{``, ``},
	}
	for _, c := range cases {
		got, err := pgTSQuery(c.in)
		if err != nil || got != c.want {
			t.Errorf("pgTSQuery(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`"open`, `{title`, `{title} x`, `a ; b`, `"!!"`} {
		if got, err := pgTSQuery(bad); err == nil {
			t.Errorf("pgTSQuery(%q) = %q, want an error", bad, got)
		}
	}
}

func TestOverlay(t *testing.T) {
	for _, c := range []struct{ orig, headline, want string }{
		{"Müller-Lüdenscheidt AG", "\uE000muller\uE001 ludenscheidt ag", "\uE000Müller\uE001-Lüdenscheidt AG"},
		{"bob@example.com", "bob \uE000example\uE001 com", "bob@\uE000example\uE001.com"},
		{"short", "longer text", "short"},
	} {
		if got := overlay(c.orig, c.headline); got != c.want {
			t.Errorf("overlay(%q, %q) = %q, want %q", c.orig, c.headline, got, c.want)
		}
	}
}
