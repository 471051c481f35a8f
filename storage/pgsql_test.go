package storage

import "testing"

func TestPGSQLRewrite(t *testing.T) {
	cases := []struct{ in, want string }{
		{`SELECT a FROM t WHERE b = ? AND c = ?`, `SELECT a FROM t WHERE b = $1 AND c = $2`},
		{`SELECT ?1, ?1, ?2`, `SELECT $1, $1, $2`},
		{`SELECT '?', "a?" FROM t WHERE x = ? -- why?` + "\n" + `AND y = ?`, `SELECT '?', "a?" FROM t WHERE x = $1 -- why?` + "\n" + `AND y = $2`},
		{`SELECT 'it''s ?' WHERE n LIKE ?`, `SELECT 'it''s ?' WHERE n ILIKE $1`},
		{"SELECT c.id FROM controls c INDEXED BY controls_id_org_status ON c.id = ?", "SELECT c.id FROM controls c  ON c.id = $1"},
		{"SELECT indexed FROM t", "SELECT indexed FROM t"},
		{`SELECT max(a), min(0, coalesce(min(b), 0)), max(x, y)`, `SELECT max(a), LEAST(0, coalesce(min(b), 0)), GREATEST(x, y)`},
		{`SELECT count(*) FROM (SELECT 1 FROM t LIMIT 1)`, `SELECT count(*) FROM (SELECT 1 FROM t LIMIT 1) AS _sub1`},
		{`SELECT * FROM (SELECT a FROM t) x WHERE a = ?`, `SELECT * FROM (SELECT a FROM t) x WHERE a = $1`},
		{`SELECT * FROM (SELECT a FROM t) ORDER BY a`, `SELECT * FROM (SELECT a FROM t) AS _sub1 ORDER BY a`},
		{`SELECT (SELECT group_concat(c) FROM (SELECT c FROM t)), 1`, `SELECT (SELECT group_concat(c) FROM (SELECT c FROM t) AS _sub1), 1`},
	}
	for _, c := range cases {
		if got := pgSQL(c.in); got != c.want {
			t.Errorf("pgSQL(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
