package backup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/storage"
)

// DrillReport is the result of a restore drill: an archive restored into
// a scratch directory and checked.
type DrillReport struct {
	Archive       string `json:"archive"`
	ArchiveSize   int64  `json:"archiveSize"`
	ArchiveSHA256 string `json:"archiveSha256"`
	Encrypted     bool   `json:"encrypted"`
	// BackupCreatedAt, BinaryVersion and SchemaVersion come from the
	// archive's manifest.
	BackupCreatedAt time.Time `json:"backupCreatedAt"`
	BinaryVersion   string    `json:"binaryVersion"`
	SchemaVersion   int       `json:"schemaVersion"`
	// Migrations brought the restored copy up to this binary's schema.
	Migrations []string `json:"migrations"`
	// Integrity is what PRAGMA integrity_check said of the restored copy.
	Integrity []string `json:"integrity"`
	// Tables are the restored copy's row counts; Mismatches the tables
	// whose count differs from the manifest's.
	Tables     map[string]int64 `json:"tables"`
	Mismatches []string         `json:"mismatches"`
	RowCount   int64            `json:"rowCount"`
	FileCount  int              `json:"fileCount"`
	OK         bool             `json:"ok"`
	Error      string           `json:"error,omitempty"`
	StartedAt  time.Time        `json:"startedAt"`
	FinishedAt time.Time        `json:"finishedAt"`
	DurationMS int64            `json:"durationMs"`
}

// Drill restores archive into a scratch directory below workDir, runs
// PRAGMA integrity_check on the copy, counts its rows and files against
// the manifest, and removes the copy. The report is returned also when the
// drill fails (OK false, Error set), together with the error.
func Drill(ctx context.Context, archive, workDir string, opts RestoreOptions) (*DrillReport, error) {
	start := time.Now()
	rep := &DrillReport{Archive: archive, StartedAt: opts.now(), Migrations: []string{}, Mismatches: []string{}}
	err := drill(ctx, archive, workDir, opts, rep)
	rep.FinishedAt = opts.now()
	rep.DurationMS = time.Since(start).Milliseconds()
	if err != nil {
		rep.OK, rep.Error = false, err.Error()
		return rep, fmt.Errorf("restore drill: %w", err)
	}
	return rep, nil
}

func drill(ctx context.Context, archive, workDir string, opts RestoreOptions, rep *DrillReport) error {
	sum, size, err := hashFile(archive)
	if err != nil {
		return err
	}
	rep.ArchiveSHA256, rep.ArchiveSize = sum, size
	if rep.Encrypted, err = Encrypted(archive); err != nil {
		return err
	}
	if err := os.MkdirAll(workDir, 0o700); err != nil {
		return err
	}
	removeStaleScratch(workDir, opts.now().Add(-staleScratch))
	scratch, err := os.MkdirTemp(workDir, scratchPrefix+"*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	opts.Force = false
	res, err := Restore(ctx, archive, filepath.Join(scratch, "data"), opts)
	if err != nil {
		return err
	}
	m := res.Manifest
	rep.BackupCreatedAt, rep.BinaryVersion, rep.SchemaVersion = m.CreatedAt, m.BinaryVersion, m.SchemaVersion
	rep.Migrations = res.Migrations
	dir := storage.DataDir{Root: res.DataDir}
	insp, err := storage.Inspect(ctx, dir.DBPath(), storage.InspectOptions{Counts: true, Full: true})
	if err != nil {
		return err
	}
	rep.Integrity, rep.Tables = insp.Integrity, insp.Tables
	for _, t := range sortedTables(m.Tables) {
		if got, ok := insp.Tables[t]; !ok || got != m.Tables[t] {
			rep.Mismatches = append(rep.Mismatches, fmt.Sprintf("%s: %d rows restored, %d backed up", t, got, m.Tables[t]))
		}
		rep.RowCount += insp.Tables[t]
	}
	files := 0
	err = filepath.WalkDir(dir.FilesPath(), func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files++
		}
		return err
	})
	if err != nil {
		return err
	}
	rep.FileCount = files
	if files != m.FileCount {
		rep.Mismatches = append(rep.Mismatches, fmt.Sprintf("files: %d restored, %d backed up", files, m.FileCount))
	}
	rep.OK = len(rep.Integrity) == 1 && rep.Integrity[0] == "ok" && len(rep.Mismatches) == 0
	if !rep.OK {
		return fmt.Errorf("the restored copy failed its checks: integrity %s; %s", strings.Join(rep.Integrity, "; "), strings.Join(rep.Mismatches, "; "))
	}
	return nil
}

// Scratch copies of drills are named so; one a crash left behind is
// removed by a later drill once it is staleScratch old.
const (
	scratchPrefix = "restore-drill-"
	staleScratch  = 24 * time.Hour
)

func removeStaleScratch(workDir string, before time.Time) {
	old, _ := filepath.Glob(filepath.Join(workDir, scratchPrefix+"*"))
	for _, o := range old {
		if info, err := os.Stat(o); err == nil && info.ModTime().Before(before) {
			_ = os.RemoveAll(o)
		}
	}
}

// Text is the report as a plain-text document, as it is attached as
// evidence of a tested restore (SOC 2 A1.3, ISO/IEC 27001:2022 A.8.13).
func (r *DrillReport) Text() string {
	var b strings.Builder
	result := "PASSED"
	if !r.OK {
		result = "FAILED"
	}
	fmt.Fprintf(&b, "Restore drill report: %s\n\n", result)
	fmt.Fprintf(&b, "Supports: SOC 2 A1.3 (recovery plan testing), ISO/IEC 27001:2022 A.8.13 (information backup)\n\n")
	fmt.Fprintf(&b, "Drill started:     %s\n", r.StartedAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Drill finished:    %s (%d ms)\n", r.FinishedAt.UTC().Format(time.RFC3339), r.DurationMS)
	fmt.Fprintf(&b, "Archive:           %s\n", filepath.Base(r.Archive))
	fmt.Fprintf(&b, "Archive SHA-256:   %s\n", r.ArchiveSHA256)
	fmt.Fprintf(&b, "Archive size:      %d bytes, encrypted: %v\n", r.ArchiveSize, r.Encrypted)
	if !r.BackupCreatedAt.IsZero() {
		fmt.Fprintf(&b, "Backup taken:      %s by version %s, schema %d\n", r.BackupCreatedAt.UTC().Format(time.RFC3339), r.BinaryVersion, r.SchemaVersion)
	}
	if len(r.Migrations) > 0 {
		fmt.Fprintf(&b, "Migrated forward:  %s\n", strings.Join(r.Migrations, ", "))
	}
	fmt.Fprintf(&b, "Member hashes:     every member matched the manifest's SHA-256\n")
	if len(r.Integrity) > 0 {
		fmt.Fprintf(&b, "Integrity check:   %s\n", strings.Join(r.Integrity, "; "))
	}
	fmt.Fprintf(&b, "Rows restored:     %d in %d tables\n", r.RowCount, len(r.Tables))
	fmt.Fprintf(&b, "Files restored:    %d\n", r.FileCount)
	for _, mm := range r.Mismatches {
		fmt.Fprintf(&b, "Mismatch:          %s\n", mm)
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "Error:             %s\n", r.Error)
	}
	if len(r.Tables) > 0 {
		fmt.Fprintf(&b, "\nRows per table:\n")
		for _, t := range sortedTables(r.Tables) {
			fmt.Fprintf(&b, "  %-40s %d\n", t, r.Tables[t])
		}
	}
	return b.String()
}
