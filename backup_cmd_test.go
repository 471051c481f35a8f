package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/backup"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/spf13/viper"
)

// uploadEvidence posts a file to a control's evidence over the API.
func uploadEvidence(t *testing.T, s *server, key, controlID, name, content string) map[string]any {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	io.WriteString(fw, content)
	mw.Close()
	req, _ := http.NewRequest("POST", s.url+"/v1/controls/"+controlID+"/evidence", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload evidence: %d %s", resp.StatusCode, raw)
	}
	return jsonObject(t, string(raw))
}

func download(t *testing.T, s *server, key, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", s.url+path, nil)
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

func stop(t *testing.T, s *server) {
	t.Helper()
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// TestBackupRestoreCLI backs up a serving appliance while it takes
// writes, restores the archive into a new data directory and serves it:
// the key, the records and the evidence files are all there.
func TestBackupRestoreCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, key := setup(t, dir, "enterprise")
	s := serve(t, dir)
	status, ctl := s.request(t, "POST", "/v1/controls", key, map[string]any{"code": "A1.3", "name": "Backups are tested"})
	if status != http.StatusCreated {
		t.Fatalf("create control: %d %v", status, ctl)
	}
	ev := uploadEvidence(t, s, key, ctl["id"].(string), "drill.txt", "the restore worked")
	for i := range 10 {
		s.request(t, "POST", "/v1/vendors", key, map[string]any{"name": fmt.Sprintf("before %d", i)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			s.request(t, "POST", "/v1/vendors", key, map[string]any{"name": fmt.Sprintf("during %d", i)})
		}
	}()
	out := t.TempDir()
	archive := filepath.Join(out, "full.tar.zst")
	b := jsonObject(t, cli(t, dir, "backup", "--to", archive, "--json"))
	cancel()
	wg.Wait()
	if b["path"] != archive || b["encrypted"] != false || b["fileCount"] != float64(1) || b["sizeBytes"].(float64) <= 0 || len(b["sha256"].(string)) != 64 {
		t.Fatalf("backup --json: %v", b)
	}
	if got := strings.TrimSpace(cli(t, dir, "backup", "--to", filepath.Join(out, "plain.tar.zst"))); got != filepath.Join(out, "plain.tar.zst") {
		t.Fatalf("backup prints the path: %q", got)
	}
	if v := cli(t, dir, "backup", "verify", "--from", archive); !strings.HasPrefix(v, "ok: ") {
		t.Fatalf("backup verify: %q", v)
	}
	list := jsonObject(t, cli(t, dir, "backup", "list", "--json"))
	runs := list["data"].([]any)
	if len(runs) != 2 || runs[1].(map[string]any)["archive"] != archive || runs[1].(map[string]any)["trigger"] != "manual" {
		t.Fatalf("backup list: %v", list)
	}
	stop(t, s)

	// Restore into a new directory and serve it.
	restored := filepath.Join(t.TempDir(), "restored")
	r := jsonObject(t, cli(t, restored, "restore", "--from", archive, "--json"))
	if r["dataDir"] != restored || r["movedAside"] != "" || r["fileCount"] != float64(1) {
		t.Fatalf("restore --json: %v", r)
	}
	s2 := serve(t, restored)
	status, got := s2.request(t, "GET", "/v1/controls/"+ctl["id"].(string), key, nil)
	if status != http.StatusOK {
		t.Fatalf("the restored appliance knows the key and the control: %d %v", status, got)
	}
	if body := download(t, s2, key, "/v1/evidence/"+ev["id"].(string)+"/download"); body != "the restore worked" {
		t.Fatalf("the evidence file is back: %q", body)
	}
	status, vendors := s2.request(t, "GET", "/v1/vendors?perPage=200&search=before", key, nil)
	if status != http.StatusOK || vendors["meta"].(map[string]any)["total"].(float64) < 10 {
		t.Fatalf("vendors restored: %d %v", status, vendors["meta"])
	}
	stop(t, s2)

	// A non-empty data directory is refused, then moved aside with --force.
	_, errOut, err := cliResult(t, restored, "restore", "--from", archive)
	if err == nil || !strings.Contains(errOut, "not empty") {
		t.Fatalf("restore into a non-empty directory: %v %s", err, errOut)
	}
	r = jsonObject(t, cli(t, restored, "restore", "--from", archive, "--force", "--json"))
	aside, _ := r["movedAside"].(string)
	if !strings.HasPrefix(aside, restored+".before-restore-") {
		t.Fatalf("--force moves the old directory aside: %v", r)
	}
	if _, err := os.Stat(filepath.Join(aside, "compliance.db")); err != nil {
		t.Fatal("the old data directory is kept")
	}

	// The database-only copy stays what scripts expect: a SQLite file.
	for _, args := range [][]string{{"--to", filepath.Join(out, "copy.db")}, {"--to", filepath.Join(out, "copy.bak"), "--database-only"}} {
		p := jsonObject(t, cli(t, dir, append([]string{"backup", "--json"}, args...)...))["path"].(string)
		head := make([]byte, 16)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadFull(f, head)
		f.Close()
		if string(head) != "SQLite format 3\x00" {
			t.Fatalf("%v writes a SQLite file: %q", args, head)
		}
	}
}

func TestEncryptedBackupCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	setup(t, dir, "professional")
	pf := filepath.Join(t.TempDir(), "pass")
	os.WriteFile(pf, []byte("a long backup passphrase\n"), 0o600)
	wrong := filepath.Join(t.TempDir(), "wrong")
	os.WriteFile(wrong, []byte("not it\n"), 0o600)
	archive := filepath.Join(t.TempDir(), "enc.tar.zst.age")
	b := jsonObject(t, cli(t, dir, "backup", "--to", archive, "--passphrase-file", pf, "--json"))
	if b["encrypted"] != true {
		t.Fatalf("backup --passphrase-file: %v", b)
	}
	target := filepath.Join(t.TempDir(), "data")
	if _, errOut, err := cliResult(t, target, "restore", "--from", archive); err == nil || !strings.Contains(errOut, "passphrase") {
		t.Fatalf("no passphrase: %v %s", err, errOut)
	}
	if _, errOut, err := cliResult(t, target, "restore", "--from", archive, "--passphrase-file", wrong); err == nil || !strings.Contains(errOut, "wrong passphrase") {
		t.Fatalf("wrong passphrase: %v %s", err, errOut)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatal("a refused restore creates nothing")
	}
	if out := cli(t, target, "restore", "--from", archive, "--passphrase-file", pf); !strings.Contains(out, "restored") {
		t.Fatalf("restore: %q", out)
	}
	if _, _, err := cliResult(t, dir, "backup", "--to", filepath.Join(t.TempDir(), "x.db"), "--passphrase-file", pf); err == nil {
		t.Fatal("a database-only copy cannot be encrypted")
	}

	// A truncated archive: restore names the member and creates nothing.
	plain := filepath.Join(t.TempDir(), "plain.tar.zst")
	cli(t, dir, "backup", "--to", plain)
	raw, _ := os.ReadFile(plain)
	cut := filepath.Join(t.TempDir(), "cut.tar.zst")
	os.WriteFile(cut, raw[:len(raw)/2], 0o600)
	fresh := filepath.Join(t.TempDir(), "data")
	stdout, errOut, err := cliResult(t, fresh, "restore", "--from", cut, "--json")
	if err == nil || stdout != "" || !strings.Contains(errOut, "archive member compliance.db") || !strings.Contains(errOut, "truncated") {
		t.Fatalf("a truncated archive is refused naming the member: %v %q %q", err, stdout, errOut)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Fatal("a refused restore creates nothing")
	}
	if _, errOut, err := cliResult(t, fresh, "backup", "verify", "--from", cut); err == nil || !strings.Contains(errOut, "archive member") {
		t.Fatalf("verify refuses it too: %v %s", err, errOut)
	}
}

// TestBackupBeforeMigration: a data directory an older binary left (schema
// 800) is archived before `migrate` brings it forward.
func TestBackupBeforeMigration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	ds := storage.DataDir{Root: dir}
	if err := ds.Ensure(); err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(ctx, ds.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.MigrateTo(ctx, 800); err != nil {
		t.Fatal(err)
	}
	a := app.NewWithFiles(db, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
	if _, err := a.CreateOrganization(ctx, "Old", "free"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	m := jsonObject(t, cli(t, dir, "migrate", "--json"))
	if m["schemaVersion"] != m["latest"] {
		t.Fatalf("migrate: %v", m)
	}
	as, err := backup.List(filepath.Join(dir, "backups"))
	if err != nil || len(as) != 1 || !as[0].PreMigration || !strings.Contains(as[0].Path, "premigrate-v0800-") {
		t.Fatalf("one backup before the migration: %v %v", as, err)
	}
	man, err := backup.ReadManifest(as[0].Path, backup.RestoreOptions{})
	if err != nil || man.SchemaVersion != 800 || man.Tables["organizations"] != 1 {
		t.Fatalf("it holds the old schema: %+v %v", man, err)
	}
	runs := jsonObject(t, cli(t, dir, "backup", "list", "--json"))["data"].([]any)
	if len(runs) != 1 || runs[0].(map[string]any)["trigger"] != "pre-migration" {
		t.Fatalf("recorded: %v", runs)
	}
	// Up to date now: no further backup.
	cli(t, dir, "migrate")
	if as, _ := backup.List(filepath.Join(dir, "backups")); len(as) != 1 {
		t.Fatalf("no backup without pending migrations: %v", as)
	}
}

// TestScheduledBackupsAndDrill runs the backup and drill jobs through the
// recording scheduler on a fake clock: old archives beyond backup.keep go,
// and each drill is recorded and attached as evidence.
func TestScheduledBackupsAndDrill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ds := storage.DataDir{Root: filepath.Join(t.TempDir(), "data")}
	if err := ds.Ensure(); err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(ctx, ds.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	files, _ := storage.NewFiles(ds.FilesPath())
	clock := &testClock{t: time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := app.NewWithFiles(db, files, clock.Now, log, app.Config{})
	e := &env{dir: ds, db: db, app: a, log: log}
	org, _ := a.CreateOrganization(ctx, "Acme", "professional")
	ctl, err := a.CreateControl(app.SystemContext(ctx, org.ID), app.ControlInput{Code: app.Ptr("A.8.13"), Name: app.Ptr("Information backup")})
	if err != nil {
		t.Fatal(err)
	}
	pf := filepath.Join(t.TempDir(), "pass")
	os.WriteFile(pf, []byte("scheduled secret"), 0o600)

	v := viper.New()
	setBackupDefaults(v)
	v.Set("backup.schedule", "24h")
	v.Set("backup.keep", 2)
	v.Set("backup.passphrase_file", pf)
	v.Set("backup.drill_evidence_org", org.ID)
	v.Set("backup.drill_evidence_control", ctl.ID)
	jobs, err := backupJobs(v, e)
	if err != nil || len(jobs) != 2 || jobs[0].Name != "backup" || jobs[1].Name != "restore_drill" {
		t.Fatalf("jobs: %v %v", jobs, err)
	}
	sched := a.NewScheduler(jobs...)
	for range 4 {
		sched.RunDue(ctx)
		clock.Advance(24 * time.Hour)
	}
	as, _ := backup.List(filepath.Join(ds.Root, "backups"))
	if len(as) != 2 || !strings.HasSuffix(as[0].Path, ".tar.zst.age") {
		t.Fatalf("backup.keep 2 keeps the newest 2: %v", as)
	}
	drills, _ := db.ListBackupRuns(ctx, storage.BackupKindDrill, "", 10)
	backups, _ := db.ListBackupRuns(ctx, storage.BackupKindBackup, storage.BackupSucceeded, 10)
	if len(drills) != 4 || len(backups) != 4 {
		t.Fatalf("4 backups and 4 drills recorded: %d %d", len(backups), len(drills))
	}
	d := drills[0]
	if d.Status != storage.BackupSucceeded || d.Integrity != "ok" || d.EvidenceID == nil || !d.Encrypted || d.Archive != as[0].Path {
		t.Fatalf("the last drill tested the newest archive and was attached: %+v", d)
	}
	evs, err := a.ListEvidence(app.SystemContext(ctx, org.ID), app.EvidenceFilter{ControlID: ctl.ID, Page: app.Page{Page: 1, PerPage: 50}})
	if err != nil || evs.Total != 4 || !strings.HasPrefix(evs.Items[0].Filename, "restore-drill-") {
		t.Fatalf("each passed drill is evidence on the control: %+v %v", evs, err)
	}
	runs, _ := db.RecentJobRuns(ctx, "restore_drill", 10)
	if len(runs) != 4 || runs[0].Status != app.JobSucceeded {
		t.Fatalf("the drill's job runs: %+v", runs)
	}

	// Off by default.
	v2 := viper.New()
	setBackupDefaults(v2)
	if jobs, err := backupJobs(v2, e); err != nil || len(jobs) != 0 {
		t.Fatalf("no schedule, no jobs: %v %v", jobs, err)
	}
	v2.Set("backup.schedule", "soon")
	if _, err := backupJobs(v2, e); err == nil {
		t.Fatal("a bad interval is refused")
	}
}
