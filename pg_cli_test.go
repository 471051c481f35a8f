package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/bench"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/storage/storagetest"
)

// postgresDirs maps a test's data dir to the database_url its commands
// run with.
var postgresDirs sync.Map

// envFor is the environment of a command on a data dir: the calling
// shell's without COMPLIANCE_* variables, plus the dir's database_url when
// it has one.
func envFor(dataDir string) []string {
	env := cleanEnv()
	if u, ok := postgresDirs.Load(dataDir); ok {
		env = append(env, "COMPLIANCE_DATABASE_URL="+u.(string))
	}
	return env
}

// postgresDir is a data dir whose commands run on a fresh PostgreSQL
// database (skipped loudly without a cluster).
func postgresDir(t *testing.T) string {
	t.Helper()
	u := storagetest.PostgresURL(t)
	dir := t.TempDir()
	postgresDirs.Store(dir, u)
	t.Cleanup(func() { postgresDirs.Delete(dir) })
	return dir
}

// testDataDir is a data dir on the suite's store: SQLite, or PostgreSQL
// when COMPLIANCE_TEST_STORE=postgres.
func testDataDir(t *testing.T) string {
	t.Helper()
	if storagetest.Postgres() {
		return postgresDir(t)
	}
	return t.TempDir()
}

func TestCLIContractPostgres(t *testing.T) {
	t.Parallel()
	cliContract(t, postgresDir(t))
}

// The commands about the SQLite file say what to use on PostgreSQL;
// doctor checks the server instead of the file.
func TestSQLiteCommandsOnPostgres(t *testing.T) {
	t.Parallel()
	dir := postgresDir(t)
	setup(t, dir, "professional")
	for _, args := range [][]string{
		{"backup", "--to", filepath.Join(t.TempDir(), "x.tar.zst")},
		{"backup", "drill", "--from", filepath.Join(t.TempDir(), "x.tar.zst")},
		{"restore", "--from", filepath.Join(t.TempDir(), "x.tar.zst")},
	} {
		stdout, stderr, err := cliResult(t, dir, args...)
		if err == nil || stdout != "" || !strings.Contains(stderr, "PostgreSQL") || !strings.Contains(stderr, "pg_dump") {
			t.Fatalf("%v on PostgreSQL: %v %q %q", args, err, stdout, stderr)
		}
	}
	checks, ok, code := doctor(t, dir)
	if !ok || code != 0 {
		t.Fatalf("doctor on PostgreSQL: ok=%v code=%d %v", ok, code, checks)
	}
	if db := checks["database"]; db["status"] != checkOK || !strings.Contains(db["message"].(string), "PostgreSQL") || !strings.Contains(db["message"].(string), "schema") {
		t.Fatalf("doctor database check: %v", db)
	}
	if w := checks["wal"]; w["status"] != checkSkip {
		t.Fatalf("doctor wal check on PostgreSQL: %v", w)
	}
	// The administration commands see what the API wrote, on PostgreSQL.
	if out := cli(t, dir, "audit", "verify"); out == "" {
		t.Fatal("audit verify printed nothing")
	}
	if out := cli(t, dir, "mail", "list"); out == "" {
		t.Fatal("mail list printed nothing")
	}
	if out := cli(t, dir, "backup", "list"); out == "" {
		t.Fatal("backup list printed nothing")
	}
}

// seedSQLite fills a SQLite data dir through the application: the load
// test's organizations, people, vendors, controls, findings and evidence,
// plus records the CLI writes (users, keys, OSV records).
func seedSQLite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	srv, err := bench.StartServer(ctx, dir, app.Config{EnterpriseRate: 1 << 20, EnterpriseBurst: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bench.Seed(ctx, srv.DB, srv.App, 2, 0.02, func(string) {}); err != nil {
		srv.Close()
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	orgID, _, _ := setup(t, dir, "enterprise")
	cli(t, dir, "user", "create", "--org", orgID, "--email", "ann@example.com", "--name", "Ann", "--role", "admin", "--operator")
	src := t.TempDir()
	rec := `{"id":"PYSEC-1","modified":"2024-01-01T00:00:00Z","affected":[{"package":{"ecosystem":"PyPI","name":"werkzeug"},` +
		`"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"},{"fixed":"2.2.3"}]}]}]}`
	if err := os.WriteFile(filepath.Join(src, "PYSEC-1.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	cli(t, dir, "pentest", "osv", "import", src)
	return dir
}

func copyJSON(t *testing.T, args ...string) (map[string]any, string, error) {
	t.Helper()
	stdout, stderr, err := cliResult(t, t.TempDir(), append([]string{"copy", "--json"}, args...)...)
	if err != nil {
		return nil, stderr, err
	}
	return jsonObject(t, stdout), stderr, nil
}

// hashes maps each table to its verified hash on one side of a copy.
func hashes(t *testing.T, rep map[string]any, side string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, x := range rep["tables"].([]any) {
		m := x.(map[string]any)
		out[m["table"].(string)] = m[side].(string)
	}
	return out
}

// A seeded SQLite database copied to PostgreSQL and back is the same,
// table by table; a target holding data or at another schema is refused.
func TestCopySQLiteToPostgresAndBack(t *testing.T) {
	t.Parallel()
	dir := seedSQLite(t)
	from := "sqlite:" + filepath.Join(dir, "compliance.db")
	pg := storagetest.EmptyPostgresURL(t)

	there, stderr, err := copyJSON(t, "--from", from, "--to", pg)
	if err != nil {
		t.Fatalf("copy to PostgreSQL: %v\n%s", err, stderr)
	}
	if there["ok"] != true || there["rows"].(float64) < 100 {
		t.Fatalf("copy to PostgreSQL: %v", there)
	}
	rows := map[string]float64{}
	for _, x := range there["tables"].([]any) {
		m := x.(map[string]any)
		rows[m["table"].(string)] = m["targetRows"].(float64)
		if m["equal"] != true {
			t.Fatalf("table %v differs", m)
		}
	}
	for _, table := range []string{"organizations", "vendors", "evidence", "findings", "audit_log", "api_keys", "osv_affected", "search_docs"} {
		if rows[table] == 0 {
			t.Fatalf("%s copied no rows: %v", table, rows)
		}
	}
	if _, ok := rows["search_index"]; ok {
		t.Fatal("the full-text index is rebuilt, not copied")
	}

	back := filepath.Join(t.TempDir(), "back.db")
	again, stderr, err := copyJSON(t, "--from", pg, "--to", "sqlite:"+back)
	if err != nil {
		t.Fatalf("copy back to SQLite: %v\n%s", err, stderr)
	}
	if again["ok"] != true || again["rows"] != there["rows"] {
		t.Fatalf("copy back: %v", again)
	}
	first, second := hashes(t, there, "sourceHash"), hashes(t, again, "targetHash")
	for table, h := range first {
		if second[table] != h {
			t.Fatalf("%s: the round trip changed it", table)
		}
	}
	if rb := again["rebuilt"].([]any); len(rb) != 2 {
		t.Fatalf("rebuilt on SQLite: %v", rb)
	}
	// The round-tripped file serves: migrations, search and the key work.
	ctx := context.Background()
	db, err := storage.Open(ctx, back)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// The target now holds data: refused, then replaced with --force.
	if _, stderr, err := copyJSON(t, "--from", from, "--to", pg); err == nil || !strings.Contains(stderr, "already holds data") || !strings.Contains(stderr, "--force") {
		t.Fatalf("a non-empty target: %v %q", err, stderr)
	}
	if rep, stderr, err := copyJSON(t, "--from", from, "--to", pg, "--force"); err != nil || rep["ok"] != true {
		t.Fatalf("--force: %v %v %s", err, rep, stderr)
	}
	// New ids continue after the copied ones: the sequences were reset.
	orgID := jsonObject(t, cli(t, dir, "org", "list", "--json"))["data"].([]any)[0].(map[string]any)["id"].(string)
	pdir := t.TempDir()
	postgresDirs.Store(pdir, pg)
	t.Cleanup(func() { postgresDirs.Delete(pdir) })
	cli(t, pdir, "apikey", "create", "--org", orgID, "--role", "admin", "--name", "after-copy")
	cli(t, pdir, "pentest", "osv", "import", writeOSV(t, "PYSEC-2"))

	// A target at another schema version is refused.
	old := storagetest.EmptyPostgresURL(t)
	odb, err := storage.OpenURL(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := odb.MigrateTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	odb.Close()
	if _, stderr, err := copyJSON(t, "--from", from, "--to", old); err == nil || !strings.Contains(stderr, "schema versions differ") {
		t.Fatalf("a target at another schema: %v %q", err, stderr)
	}
	if _, stderr, err := copyJSON(t, "--from", "sqlite:"+filepath.Join(t.TempDir(), "missing.db"), "--to", old); err == nil || !strings.Contains(stderr, "no such file") {
		t.Fatalf("a missing source: %v %q", err, stderr)
	}
	if _, stderr, err := copyJSON(t, "--from", "/plain/path", "--to", old); err == nil || !strings.Contains(stderr, "sqlite:PATH") {
		t.Fatalf("a location without scheme: %v %q", err, stderr)
	}
}

func writeOSV(t *testing.T, id string) string {
	t.Helper()
	src := t.TempDir()
	rec := `{"id":"` + id + `","modified":"2024-01-01T00:00:00Z","affected":[{"package":{"ecosystem":"PyPI","name":"flask"},` +
		`"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"},{"fixed":"2.2.3"}]}]}]}`
	if err := os.WriteFile(filepath.Join(src, id+".json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	return src
}
