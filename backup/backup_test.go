package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/klauspost/compress/zstd"
)

// fixture is a data directory in use: an open database with
// organizations, vendors, evidence files and secrets.
type fixture struct {
	dir storage.DataDir
	db  *storage.DB
	app *app.App
	org string
}

// newFixture migrates a data directory (up to upTo, 0: all migrations)
// and seeds it through app.
func newFixture(t *testing.T, upTo int) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := storage.DataDir{Root: filepath.Join(t.TempDir(), "data")}
	if err := dir.Ensure(); err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(ctx, dir.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.MigrateTo(ctx, upTo); err != nil {
		t.Fatal(err)
	}
	files, err := storage.NewFiles(dir.FilesPath())
	if err != nil {
		t.Fatal(err)
	}
	a := app.NewWithFiles(db, files, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
	for _, s := range []string{"session_hash_key", "webhook-secrets.key"} {
		if _, err := dir.Secret(s, 32); err != nil {
			t.Fatal(err)
		}
	}
	org, err := a.CreateOrganization(ctx, "Acme", "enterprise")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{dir: dir, db: db, app: a, org: org.ID}
	sys := app.SystemContext(ctx, org.ID)
	ctl, err := a.CreateControl(sys, app.ControlInput{Code: app.Ptr("A1.3"), Name: app.Ptr("Recovery testing")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := a.UploadEvidence(sys, ctl.ID, "", app.EvidenceUpload{File: strings.NewReader(fmt.Sprintf("evidence %d %s", i, strings.Repeat("x", i*1000))),
			Filename: fmt.Sprintf("e%d.txt", i), ContentType: "text/plain"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		f.vendor(t, fmt.Sprintf("before %d", i))
	}
	return f
}

func (f *fixture) vendor(t *testing.T, name string) {
	if _, err := f.app.CreateVendor(app.SystemContext(context.Background(), f.org), app.VendorInput{Name: &name}); err != nil {
		t.Error(err)
	}
}

// fastOpts keeps scrypt cheap in tests.
func fastOpts(pass string) Options {
	return Options{Version: "test", Passphrase: pass, ScryptWorkFactor: 10}
}

func mustCreate(t *testing.T, f *fixture, dst string, opts Options) *Result {
	t.Helper()
	res, err := Create(context.Background(), f.db, f.dir, dst, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// dump reads every row of every table of a database file, as text.
func dump(t *testing.T, path string) map[string][]string {
	t.Helper()
	c, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	out := map[string][]string{}
	for _, tbl := range tables {
		r, err := c.Query(`SELECT * FROM "` + tbl + `" ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := r.Columns()
		for r.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := r.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out[tbl] = append(out[tbl], fmt.Sprint(vals...))
		}
		r.Close()
	}
	return out
}

// treeHashes maps every file below root (relative path) to its SHA-256.
func treeHashes(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		s := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(s[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRoundTripWhileWriting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 0)
	out := t.TempDir()

	// A backup while vendors are being written.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			f.vendor(t, fmt.Sprintf("during %d", i))
		}
	}()
	time.Sleep(20 * time.Millisecond)
	res := mustCreate(t, f, filepath.Join(out, "live.tar.zst"), fastOpts(""))
	close(stop)
	wg.Wait()

	m := res.Manifest
	if m.Format != Format || m.BinaryVersion != "test" || m.FileCount != 5 || m.Tables["vendors"] < 20 || m.Tables["evidence"] != 5 {
		t.Fatalf("manifest: %+v", m)
	}
	known, _ := storage.KnownSchemaVersion()
	if m.SchemaVersion != known {
		t.Fatalf("schema %d, want %d", m.SchemaVersion, known)
	}
	target := filepath.Join(t.TempDir(), "restored")
	rr, err := Restore(ctx, res.Path, target, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Migrations) != 0 || rr.MovedAside != "" {
		t.Fatalf("restore result: %+v", rr)
	}
	insp, err := storage.Inspect(ctx, filepath.Join(target, DatabaseName), storage.InspectOptions{Counts: true, Files: true, Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(insp.Integrity) != "[ok]" {
		t.Fatalf("integrity: %v", insp.Integrity)
	}
	for tbl, n := range m.Tables {
		if insp.Tables[tbl] != n {
			t.Errorf("table %s: %d rows restored, %d in the manifest", tbl, insp.Tables[tbl], n)
		}
	}
	// Every referenced file is back under its hash; the secrets are equal.
	restored := treeHashes(t, target)
	for _, h := range insp.Files {
		if restored[filepath.Join("files", h[:2], h)] != h {
			t.Errorf("file %s not restored intact", h)
		}
	}
	src := treeHashes(t, f.dir.SecretsPath())
	for name, sum := range src {
		if restored[filepath.Join("secrets", name)] != sum {
			t.Errorf("secret %s differs", name)
		}
	}
	for _, p := range []string{target, filepath.Join(target, "files"), filepath.Join(target, "secrets")} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", p, st.Mode(), err)
		}
	}

	// Quiescent: every row of every table comes back as it was.
	res2 := mustCreate(t, f, filepath.Join(out, "still.tar.zst"), fastOpts(""))
	target2 := filepath.Join(t.TempDir(), "restored")
	if _, err := Restore(ctx, res2.Path, target2, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	want, got := dump(t, f.dir.DBPath()), dump(t, filepath.Join(target2, DatabaseName))
	for tbl, rows := range want {
		if strings.Join(rows, "\n") != strings.Join(got[tbl], "\n") {
			t.Errorf("table %s differs after the round trip: %d rows, want %d", tbl, len(got[tbl]), len(rows))
		}
	}
	if len(want["vendors"]) < 21 {
		t.Fatalf("vendors: %d", len(want["vendors"]))
	}
	// The archive is private and nothing temporary is left beside it.
	st, _ := os.Stat(res2.Path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("archive mode %v", st.Mode())
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 2 {
		t.Errorf("backup directory holds %d entries", len(entries))
	}
}

func TestEncryptedRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 0)
	res := mustCreate(t, f, filepath.Join(t.TempDir(), "b.tar.zst.age"), fastOpts("correct horse battery staple"))
	if enc, _ := Encrypted(res.Path); !enc || !res.Encrypted {
		t.Fatal("the archive is encrypted")
	}
	raw, _ := os.ReadFile(res.Path)
	if bytes.Contains(raw, []byte("manifest.json")) {
		t.Fatal("the member names are readable in an encrypted archive")
	}
	target := filepath.Join(t.TempDir(), "data")
	if _, err := Restore(ctx, res.Path, target, RestoreOptions{}); !errors.Is(err, ErrPassphraseRequired) {
		t.Fatalf("no passphrase: %v", err)
	}
	if _, err := Restore(ctx, res.Path, target, RestoreOptions{Passphrase: "wrong"}); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("wrong passphrase: %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a refused restore creates no target")
	}
	if _, err := Restore(ctx, res.Path, target, RestoreOptions{Passphrase: "correct horse battery staple"}); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, filepath.Join(target, DatabaseName))["vendors"]; len(got) != 20 {
		t.Fatalf("vendors restored: %d", len(got))
	}
	m, err := ReadManifest(res.Path, RestoreOptions{Passphrase: "correct horse battery staple"})
	if err != nil || m.FileCount != 5 {
		t.Fatalf("manifest: %+v %v", m, err)
	}
}

// rewrite unpacks a plain archive, lets edit change its members, and packs
// it again (a tamperer who knows the format).
func rewrite(t *testing.T, src, dst string, edit func(hdrs []*tar.Header, bodies [][]byte) ([]*tar.Header, [][]byte)) {
	t.Helper()
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zstd.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var hdrs []*tar.Header
	var bodies [][]byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		hdrs, bodies = append(hdrs, h), append(bodies, b)
	}
	hdrs, bodies = edit(hdrs, bodies)
	var buf bytes.Buffer
	zw, _ := zstd.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for i, h := range hdrs {
		h.Size = int64(len(bodies[i]))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(bodies[i])
	}
	tw.Close()
	zw.Close()
	if err := os.WriteFile(dst, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// occupied makes a data directory that holds something, to prove a failed
// restore leaves it alone even with Force.
func occupied(t *testing.T) (string, map[string]string) {
	t.Helper()
	target := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(filepath.Join(target, "files"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "compliance.db"), []byte("the old database"), 0o600); err != nil {
		t.Fatal(err)
	}
	return target, treeHashes(t, target)
}

func assertUntouched(t *testing.T, target string, before map[string]string) {
	t.Helper()
	after := treeHashes(t, target)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the target changed: %v -> %v", before, after)
	}
	entries, _ := os.ReadDir(filepath.Dir(target))
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("a refused restore leaves nothing beside the target: %v", names)
	}
}

func TestDamagedArchivesAreRefusedNamingTheMember(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 0)
	dir := t.TempDir()
	res := mustCreate(t, f, filepath.Join(dir, "good.tar.zst"), fastOpts(""))
	m := res.Manifest
	raw, _ := os.ReadFile(res.Path)

	firstFile := ""
	for _, mem := range m.Members {
		if strings.HasPrefix(mem.Name, "files/") {
			firstFile = mem.Name
			break
		}
	}
	cases := []struct {
		name   string
		make   func(path string)
		member string // the member the error must name ("" any)
	}{
		{"truncated in the middle", func(p string) { os.WriteFile(p, raw[:len(raw)/2], 0o600) }, ""},
		{"truncated at the end", func(p string) { os.WriteFile(p, raw[:len(raw)-8], 0o600) }, ""},
		{"truncated after the manifest", func(p string) {
			rewrite(t, res.Path, p, func(h []*tar.Header, b [][]byte) ([]*tar.Header, [][]byte) { return h[:3], b[:3] })
		}, m.Members[2].Name},
		{"a file's content altered", func(p string) {
			rewrite(t, res.Path, p, func(h []*tar.Header, b [][]byte) ([]*tar.Header, [][]byte) {
				for i := range h {
					if h[i].Name == firstFile {
						b[i] = append([]byte("forged "), b[i][7:]...)
					}
				}
				return h, b
			})
		}, firstFile},
		{"the database altered", func(p string) {
			rewrite(t, res.Path, p, func(h []*tar.Header, b [][]byte) ([]*tar.Header, [][]byte) {
				b[1][len(b[1])-1] ^= 0xff
				return h, b
			})
		}, DatabaseName},
		{"a member slipped in", func(p string) {
			rewrite(t, res.Path, p, func(h []*tar.Header, b [][]byte) ([]*tar.Header, [][]byte) {
				return append(h, &tar.Header{Name: "secrets/extra", Mode: 0o600, Typeflag: tar.TypeReg}), append(b, []byte("x"))
			})
		}, "secrets/extra"},
		{"a path escaping the data directory", func(p string) {
			rewrite(t, res.Path, p, func(h []*tar.Header, b [][]byte) ([]*tar.Header, [][]byte) {
				var mm Manifest
				json.Unmarshal(b[0], &mm)
				mm.Members[len(mm.Members)-1].Name = "secrets/../../evil"
				b[0], _ = json.Marshal(mm)
				h[len(h)-1].Name = "secrets/../../evil"
				return h, b
			})
		}, ManifestName},
		{"a compressed byte flipped", func(p string) {
			bad := bytes.Clone(raw)
			bad[len(bad)*2/3] ^= 0x55
			os.WriteFile(p, bad, 0o600)
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad.tar.zst")
			c.make(p)
			target, before := occupied(t)
			_, err := Restore(ctx, p, target, RestoreOptions{Force: true})
			if err == nil {
				t.Fatal("a damaged archive is refused")
			}
			if _, verr := Verify(ctx, p, RestoreOptions{}); verr == nil {
				t.Fatal("Verify refuses it too")
			}
			var me *MemberError
			if c.member != "" && (!errors.As(err, &me) || me.Member != c.member || !strings.Contains(err.Error(), c.member)) {
				t.Fatalf("the error names %s: %v", c.member, err)
			}
			if c.member == "" && !errors.As(err, &me) && !strings.Contains(err.Error(), "damaged") {
				t.Fatalf("the error names a member or the damaged end: %v", err)
			}
			assertUntouched(t, target, before)
		})
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 0)
	known, _ := storage.KnownSchemaVersion()
	// A database a newer binary migrated further.
	c, err := sql.Open("sqlite", "file:"+f.dir.DBPath()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, '9999_future.sql', '2030-01-01T00:00:00.000Z')`, known+1); err != nil {
		t.Fatal(err)
	}
	c.Close()
	res := mustCreate(t, f, filepath.Join(t.TempDir(), "future.tar.zst"), fastOpts(""))
	target := filepath.Join(t.TempDir(), "data")
	_, err = Restore(ctx, res.Path, target, RestoreOptions{})
	var se *SchemaError
	if !errors.As(err, &se) || se.Archive != known+1 || se.Known != known {
		t.Fatalf("a newer schema is refused: %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("nothing is created")
	}
}

func TestOlderSchemaIsMigratedForward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 800) // as the binary before backups were recorded left it
	res := mustCreate(t, f, filepath.Join(t.TempDir(), "old.tar.zst"), fastOpts(""))
	if res.Manifest.SchemaVersion != 800 {
		t.Fatalf("manifest schema %d", res.Manifest.SchemaVersion)
	}
	target := filepath.Join(t.TempDir(), "data")
	rr, err := Restore(ctx, res.Path, target, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Exactly the migrations after 0800 run, in order, 0910 among them.
	hasBackups := false
	for i, m := range rr.Migrations {
		if m <= "0800" || (i > 0 && m <= rr.Migrations[i-1]) {
			t.Fatalf("migrations applied: %v", rr.Migrations)
		}
		hasBackups = hasBackups || m == "0910_backups.sql"
	}
	if !hasBackups {
		t.Fatalf("migrations applied: %v", rr.Migrations)
	}
	known, _ := storage.KnownSchemaVersion()
	insp, err := storage.Inspect(ctx, filepath.Join(target, DatabaseName), storage.InspectOptions{Counts: true})
	if err != nil || insp.SchemaVersion != known || insp.Tables["vendors"] != 20 {
		t.Fatalf("restored copy: %+v %v", insp, err)
	}
	if _, ok := insp.Tables["backup_runs"]; !ok {
		t.Fatal("the new table exists")
	}
}

func TestNonEmptyTargetNeedsForce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 0)
	res := mustCreate(t, f, filepath.Join(t.TempDir(), "b.tar.zst"), fastOpts(""))

	target, before := occupied(t)
	if _, err := Restore(ctx, res.Path, target, RestoreOptions{}); !errors.Is(err, ErrTargetNotEmpty) {
		t.Fatalf("a non-empty target is refused: %v", err)
	}
	assertUntouched(t, target, before)

	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rr, err := Restore(ctx, res.Path, target, RestoreOptions{Force: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if rr.MovedAside != target+".before-restore-20260301T120000Z" {
		t.Fatalf("moved aside to %q", rr.MovedAside)
	}
	if got := treeHashes(t, rr.MovedAside); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatal("the old data directory is kept whole")
	}
	if got := dump(t, filepath.Join(target, DatabaseName))["vendors"]; len(got) != 20 {
		t.Fatalf("restored vendors %d", len(got))
	}

	// An empty directory (as a first start leaves it) is fine without force.
	empty := filepath.Join(t.TempDir(), "data")
	os.MkdirAll(filepath.Join(empty, "files"), 0o700)
	if _, err := Restore(ctx, res.Path, empty, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
}

// failAfter fails writes with ENOSPC once n bytes went through, as a full
// disk does.
type failAfter struct {
	w io.Writer
	n int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, &os.PathError{Op: "write", Path: "archive", Err: syscall.ENOSPC}
	}
	f.n -= len(p)
	return f.w.Write(p)
}

func TestFailedBackupLeavesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	out := t.TempDir()
	dst := filepath.Join(out, "full.tar.zst")
	opts := fastOpts("")
	opts.wrap = func(w io.Writer) io.Writer { return &failAfter{w: w, n: 4096} }
	_, err := Create(context.Background(), f.db, f.dir, dst, opts)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("the disk-full error is reported: %v", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("a failed backup leaves nothing: %v", entries)
	}
	// An existing destination is never overwritten.
	os.WriteFile(dst, []byte("keep"), 0o600)
	if _, err := Create(context.Background(), f.db, f.dir, dst, fastOpts("")); err == nil {
		t.Fatal("an existing file is refused")
	}
	if b, _ := os.ReadFile(dst); string(b) != "keep" {
		t.Fatal("the existing file is untouched")
	}
	// A cancelled backup leaves nothing either.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Create(ctx, f.db, f.dir, filepath.Join(out, "cancelled.tar.zst"), fastOpts("")); err == nil {
		t.Fatal("a cancelled backup fails")
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Fatalf("only the kept file remains: %v", entries)
	}
}

func TestPruneKeepsTheNewest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		at := base.Add(time.Duration(i) * 24 * time.Hour)
		p := filepath.Join(dir, ArchiveName(at, i%2 == 0))
		os.WriteFile(p, []byte("x"), 0o600)
		os.Chtimes(p, at, at)
	}
	pre := filepath.Join(dir, PreMigrationName(base.Add(-time.Hour), 800, false))
	os.WriteFile(pre, []byte("x"), 0o600)
	os.Chtimes(pre, base.Add(-time.Hour), base.Add(-time.Hour))
	os.WriteFile(filepath.Join(dir, "unrelated.txt"), []byte("x"), 0o600)

	removed, err := Prune(dir, 2)
	if err != nil || len(removed) != 3 {
		t.Fatalf("removed %v %v", removed, err)
	}
	as, _ := List(dir)
	var names []string
	for _, a := range as {
		names = append(names, filepath.Base(a.Path))
	}
	want := []string{ArchiveName(base.Add(96*time.Hour), true), ArchiveName(base.Add(72*time.Hour), false), filepath.Base(pre)}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("kept %v, want %v", names, want)
	}
	if latest, _ := Latest(dir); filepath.Base(latest) != want[0] {
		t.Fatalf("latest %s", latest)
	}
}

func TestDrillChecksTheRestoredCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 0)
	res := mustCreate(t, f, filepath.Join(t.TempDir(), "b.tar.zst.age"), fastOpts("pass"))
	work := t.TempDir()
	rep, err := Drill(ctx, res.Path, work, RestoreOptions{Passphrase: "pass"})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || fmt.Sprint(rep.Integrity) != "[ok]" || rep.FileCount != 5 || rep.Tables["vendors"] != 20 ||
		rep.ArchiveSHA256 != res.SHA256 || !rep.Encrypted || len(rep.Mismatches) != 0 {
		t.Fatalf("report: %+v", rep)
	}
	text := rep.Text()
	for _, s := range []string{"PASSED", "A1.3", "A.8.13", res.SHA256, "Integrity check:   ok"} {
		if !strings.Contains(text, s) {
			t.Errorf("report text lacks %q:\n%s", s, text)
		}
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Fatal("the drill removes its scratch copy")
	}
	// A wrong passphrase fails the drill, with a report saying why.
	rep, err = Drill(ctx, res.Path, work, RestoreOptions{Passphrase: "nope"})
	if err == nil || rep.OK || !strings.Contains(rep.Error, "passphrase") || !strings.Contains(rep.Text(), "FAILED") {
		t.Fatalf("failed drill: %+v %v", rep, err)
	}
}
