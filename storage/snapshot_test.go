package storage

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSnapshotInspectAndBackupRuns(t *testing.T) {
	t.Parallel()
	sqliteOnly(t, "snapshots and inspects the SQLite file")
	ctx := context.Background()
	db := openTest(t)
	if has, err := db.HasData(ctx); err != nil || has {
		t.Fatalf("a new database holds no data: %v %v", has, err)
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO organizations (id, name, slug, plan, created_at, updated_at)
		VALUES ('org_1', 'Acme', 'acme', 'free', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`); err != nil {
		t.Fatal(err)
	}
	if has, err := db.HasData(ctx); err != nil || !has {
		t.Fatalf("an organization is data: %v %v", has, err)
	}

	dir := t.TempDir()
	snap := filepath.Join(dir, "snap.db")
	if err := db.Snapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	insp, err := Inspect(ctx, snap, InspectOptions{Counts: true, Files: true, Full: true})
	if err != nil {
		t.Fatal(err)
	}
	known, _ := KnownSchemaVersion()
	if insp.SchemaVersion != known || insp.Tables["organizations"] != 1 || len(insp.Integrity) != 1 || insp.Integrity[0] != "ok" {
		t.Fatalf("inspection: %+v", insp)
	}
	if _, err := Inspect(ctx, filepath.Join(dir, "missing.db"), InspectOptions{}); err == nil {
		t.Fatal("a missing file is an error, never created")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !os.IsNotExist(err) {
		t.Fatal("Inspect created a database")
	}
	if err := db.Backup(ctx, snap); err == nil {
		t.Fatal("Backup refuses an existing file")
	}

	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := "evd_1"
	for _, r := range []BackupRun{
		{Kind: BackupKindBackup, Trigger: BackupTriggerScheduled, Status: BackupSucceeded, Archive: "/b/1", ArchiveSize: 10, Encrypted: true, StartedAt: at, FinishedAt: at},
		{Kind: BackupKindDrill, Trigger: BackupTriggerScheduled, Status: BackupFailed, Archive: "/b/1", Integrity: "ok", EvidenceID: &ev, Error: "boom", StartedAt: at, FinishedAt: at},
	} {
		if _, err := db.RecordBackupRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	all, err := db.ListBackupRuns(ctx, "", "", 10)
	if err != nil || len(all) != 2 || all[0].Kind != BackupKindDrill || *all[0].EvidenceID != "evd_1" || !all[1].Encrypted || !all[1].StartedAt.Equal(at) {
		t.Fatalf("runs: %+v %v", all, err)
	}
	if ok, _ := db.ListBackupRuns(ctx, BackupKindDrill, BackupSucceeded, 10); len(ok) != 0 {
		t.Fatalf("filtered: %+v", ok)
	}
}
