package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/backup"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

func setBackupDefaults(v *viper.Viper) {
	v.SetDefault("backup.schedule", "")
	v.SetDefault("backup.dir", "")
	v.SetDefault("backup.keep", 7)
	v.SetDefault("backup.passphrase_file", "")
	v.SetDefault("backup.before_migration", true)
	v.SetDefault("backup.drill", true)
	v.SetDefault("backup.drill_interval", "")
	v.SetDefault("backup.drill_evidence_org", "")
	v.SetDefault("backup.drill_evidence_control", "")
}

// backupDir is backup.dir, else <data-dir>/backups.
func backupDir(v *viper.Viper, dir storage.DataDir) string {
	if d := v.GetString("backup.dir"); d != "" {
		return d
	}
	return filepath.Join(dir.Root, "backups")
}

// backupPassphrase reads --passphrase-file when the command has it set,
// else backup.passphrase_file; "" means no encryption.
func backupPassphrase(v *viper.Viper, cmd *cobra.Command) (string, error) {
	path := v.GetString("backup.passphrase_file")
	if cmd != nil {
		if f := cmd.Flags().Lookup("passphrase-file"); f != nil && f.Changed {
			path = f.Value.String()
		}
	}
	if path == "" {
		return "", nil
	}
	return backup.ReadPassphraseFile(path)
}

// databaseOnlyName reports whether a destination names a bare SQLite file:
// `backup --to x.db` wrote the database alone before the archive existed,
// and scripts written then keep getting what they expect.
func databaseOnlyName(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".db", ".sqlite", ".sqlite3":
		return true
	}
	return false
}

// recordBackup stores a backup's outcome in backup_runs; a failure to
// record is logged, never fatal (the archive is what matters).
func recordBackup(ctx context.Context, e *env, trigger, path string, started time.Time, res *backup.Result, berr error) {
	r := storage.BackupRun{Kind: storage.BackupKindBackup, Trigger: trigger, Status: storage.BackupSucceeded, Archive: path,
		StartedAt: started, FinishedAt: time.Now(), DurationMS: time.Since(started).Milliseconds()}
	if res != nil {
		r.ArchiveSize, r.ArchiveSHA256, r.Encrypted = res.Size, res.SHA256, res.Encrypted
		r.SchemaVersion, r.FileCount, r.RowCount = res.Manifest.SchemaVersion, res.Manifest.FileCount, res.Manifest.RowCount()
	}
	if berr != nil {
		r.Status, r.Error = storage.BackupFailed, berr.Error()
	}
	if _, err := e.db.RecordBackupRun(context.WithoutCancel(ctx), r); err != nil {
		e.log.Warn("record backup", slog.Any("error", err))
	}
}

func backupCmd(v *viper.Viper) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Write one archive of the database, the stored files and the secrets (or, with --database-only or a .db name, the database alone)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if onPostgres(v) {
				return errSQLiteOnly("backup")
			}
			to, _ := cmd.Flags().GetString("to")
			dbOnly, _ := cmd.Flags().GetBool("database-only")
			abs, err := filepath.Abs(to)
			if err != nil {
				return err
			}
			if _, err := os.Lstat(abs); err == nil {
				return fmt.Errorf("%s already exists", abs)
			}
			dbOnly = dbOnly || databaseOnlyName(abs)
			pass := ""
			if !dbOnly {
				if pass, err = backupPassphrase(v, cmd); err != nil {
					return err
				}
			} else if cmd.Flags().Changed("passphrase-file") {
				return errors.New("--passphrase-file needs the archive: the database-only copy (--database-only, or a .db name) is a plain SQLite file")
			}
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				if dbOnly {
					if err := e.db.Backup(ctx, abs); err != nil {
						return err
					}
					if jsonOut(cmd) {
						return printJSON(cmd.OutOrStdout(), map[string]string{"path": abs})
					}
					fmt.Fprintln(cmd.OutOrStdout(), abs)
					return nil
				}
				started := time.Now()
				res, err := backup.Create(ctx, e.db, e.dir, abs, backup.Options{Version: version, Passphrase: pass, FilesElsewhere: filesLocation(v)})
				recordBackup(ctx, e, storage.BackupTriggerManual, abs, started, res, err)
				if err != nil {
					return err
				}
				if res.Manifest.FilesElsewhere != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "note: uploaded files live in the object store %s and are not in this archive; back up the bucket itself (docs/files.md)\n", res.Manifest.FilesElsewhere)
				}
				if jsonOut(cmd) {
					return printJSON(cmd.OutOrStdout(), map[string]any{"path": abs, "sizeBytes": res.Size, "sha256": res.SHA256,
						"encrypted": res.Encrypted, "schemaVersion": res.Manifest.SchemaVersion, "fileCount": res.Manifest.FileCount,
						"rowCount": res.Manifest.RowCount(), "createdAt": res.Manifest.CreatedAt, "filesElsewhere": res.Manifest.FilesElsewhere})
				}
				fmt.Fprintln(cmd.OutOrStdout(), abs)
				return nil
			})
		},
	}
	cmd.Flags().String("to", "", "destination file (must not exist), e.g. compliance.tar.zst")
	cmd.Flags().Bool("database-only", false, "write a consistent copy of the SQLite database alone (as a .db destination does)")
	cmd.Flags().String("passphrase-file", "", "encrypt the archive with age using the passphrase on this file's first line (default: backup.passphrase_file)")
	_ = cmd.MarkFlagRequired("to")
	cmd.AddCommand(backupListCmd(v), backupVerifyCmd(v), backupDrillCmd(v))
	return cmd
}

func backupListCmd(v *viper.Viper) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the recorded backups and restore drills, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			limit, _ := cmd.Flags().GetInt("limit")
			kind, _ := cmd.Flags().GetString("kind")
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				runs, err := e.db.ListBackupRuns(ctx, kind, "", limit)
				if err != nil {
					return err
				}
				if jsonOut(cmd) {
					return printJSON(cmd.OutOrStdout(), map[string]any{"data": runs})
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tKIND\tTRIGGER\tSTATUS\tFINISHED\tSIZE\tFILES\tROWS\tARCHIVE\tDETAIL")
				for _, r := range runs {
					detail := r.Error
					if detail == "" && r.Kind == storage.BackupKindDrill {
						detail = "integrity " + r.Integrity
					}
					if r.EvidenceID != nil {
						detail += " evidence " + *r.EvidenceID
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.ID, r.Kind, r.Trigger, r.Status,
						r.FinishedAt.Format(time.RFC3339), r.ArchiveSize, r.FileCount, r.RowCount, r.Archive, strings.TrimSpace(detail))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().Int("limit", 50, "how many to show")
	cmd.Flags().String("kind", "", "backup or drill (default both)")
	return cmd
}

func backupVerifyCmd(v *viper.Viper) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Read an archive and check every member against its manifest, writing nothing",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from, _ := cmd.Flags().GetString("from")
			pass, err := archivePassphrase(v, cmd, from)
			if err != nil {
				return err
			}
			m, err := backup.Verify(cmd.Context(), from, backup.RestoreOptions{Passphrase: pass})
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return printJSON(cmd.OutOrStdout(), m)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %d members, schema %d, %d files, %d rows, taken %s by version %s\n", len(m.Members)+1,
				m.SchemaVersion, m.FileCount, m.RowCount(), m.CreatedAt.Format(time.RFC3339), m.BinaryVersion)
			return nil
		},
	}
	cmd.Flags().String("from", "", "the archive")
	cmd.Flags().String("passphrase-file", "", "the passphrase of an encrypted archive (default: backup.passphrase_file)")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}

// archivePassphrase is the passphrase to read archive with: none is
// needed for a plain one.
func archivePassphrase(v *viper.Viper, cmd *cobra.Command, archive string) (string, error) {
	enc, err := backup.Encrypted(archive)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", archive, err)
	}
	if !enc {
		return "", nil
	}
	pass, err := backupPassphrase(v, cmd)
	if err != nil {
		return "", err
	}
	if pass == "" {
		return "", fmt.Errorf("%s: %w: give --passphrase-file", archive, backup.ErrPassphraseRequired)
	}
	return pass, nil
}

// errDrillFailed makes `backup drill` exit non-zero.
var errDrillFailed = errors.New("the restore drill failed")

func backupDrillCmd(v *viper.Viper) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "drill",
		Short: "Restore a backup into a scratch directory, check it (integrity_check, row and file counts) and record the result",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if onPostgres(v) {
				return errSQLiteOnly("backup drill")
			}
			from, _ := cmd.Flags().GetString("from")
			org, _ := cmd.Flags().GetString("org")
			control, _ := cmd.Flags().GetString("control")
			if (org == "") != (control == "") {
				return errors.New("give --org and --control together to attach the report as evidence")
			}
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				if from == "" {
					latest, err := backup.Latest(backupDir(v, e.dir))
					if err != nil {
						return err
					}
					if latest == "" {
						return fmt.Errorf("no backup in %s: give --from", backupDir(v, e.dir))
					}
					from = latest
				}
				pass, err := archivePassphrase(v, cmd, from)
				if err != nil {
					return err
				}
				rep, evidenceID, err := runDrill(ctx, e, from, pass, storage.BackupTriggerManual, org, control)
				if jsonOut(cmd) {
					if perr := printJSON(cmd.OutOrStdout(), map[string]any{"report": rep, "evidenceId": evidenceID}); perr != nil {
						return perr
					}
				} else {
					fmt.Fprint(cmd.OutOrStdout(), rep.Text())
					if evidenceID != "" {
						fmt.Fprintf(cmd.OutOrStdout(), "\nAttached as evidence %s to control %s.\n", evidenceID, control)
					}
				}
				if err != nil {
					cmd.SilenceUsage = true
					return fmt.Errorf("%w: %v", errDrillFailed, err)
				}
				return nil
			})
		},
	}
	cmd.Flags().String("from", "", "the archive (default: the newest in backup.dir)")
	cmd.Flags().String("passphrase-file", "", "the passphrase of an encrypted archive (default: backup.passphrase_file)")
	cmd.Flags().String("org", "", "organization of --control")
	cmd.Flags().String("control", "", "attach the passed drill's report as evidence to this control (SOC 2 A1.3, ISO 27001 A.8.13)")
	return cmd
}

// runDrill drills archive, records the drill and, when it passed and a
// control is given, attaches the report to the control as evidence.
func runDrill(ctx context.Context, e *env, archive, pass, trigger, org, control string) (*backup.DrillReport, string, error) {
	rep, derr := backup.Drill(ctx, archive, filepath.Join(e.dir.Root, "tmp"), backup.RestoreOptions{Passphrase: pass})
	evidenceID := ""
	if derr == nil && control != "" {
		ev, err := e.app.UploadEvidence(app.SystemContext(ctx, org), control, "", app.EvidenceUpload{
			File:        strings.NewReader(rep.Text()),
			Filename:    "restore-drill-" + rep.StartedAt.Format("20060102T150405Z") + ".txt",
			ContentType: "text/plain; charset=utf-8",
			Description: fmt.Sprintf("Restore drill of backup %s taken %s: passed (SOC 2 A1.3, ISO/IEC 27001:2022 A.8.13)",
				filepath.Base(archive), rep.BackupCreatedAt.Format(time.RFC3339)),
		})
		if err != nil {
			derr = fmt.Errorf("the drill passed but attaching its report to control %s failed: %w", control, err)
		} else {
			evidenceID = ev.ID
		}
	}
	r := storage.BackupRun{Kind: storage.BackupKindDrill, Trigger: trigger, Status: storage.BackupSucceeded, Archive: archive,
		ArchiveSize: rep.ArchiveSize, ArchiveSHA256: rep.ArchiveSHA256, Encrypted: rep.Encrypted, SchemaVersion: rep.SchemaVersion,
		FileCount: rep.FileCount, RowCount: rep.RowCount, Integrity: strings.Join(rep.Integrity, "; "),
		StartedAt: rep.StartedAt, FinishedAt: rep.FinishedAt, DurationMS: rep.DurationMS}
	if evidenceID != "" {
		r.EvidenceID = &evidenceID
	}
	if derr != nil {
		r.Status, r.Error = storage.BackupFailed, derr.Error()
	}
	if _, err := e.db.RecordBackupRun(context.WithoutCancel(ctx), r); err != nil {
		e.log.Warn("record restore drill", slog.Any("error", err))
	}
	return rep, evidenceID, derr
}

func restoreCmd(v *viper.Viper) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Restore a backup archive into an empty or new data directory (--force moves a non-empty one aside)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if onPostgres(v) {
				return errSQLiteOnly("restore")
			}
			from, _ := cmd.Flags().GetString("from")
			force, _ := cmd.Flags().GetBool("force")
			pass, err := archivePassphrase(v, cmd, from)
			if err != nil {
				return err
			}
			start := time.Now()
			res, err := backup.Restore(cmd.Context(), from, v.GetString("data_dir"), backup.RestoreOptions{Passphrase: pass, Force: force})
			if err != nil {
				return err
			}
			m := res.Manifest
			if jsonOut(cmd) {
				return printJSON(cmd.OutOrStdout(), map[string]any{"dataDir": res.DataDir, "movedAside": res.MovedAside,
					"schemaVersion": m.SchemaVersion, "migrations": res.Migrations, "fileCount": m.FileCount,
					"rowCount": m.RowCount(), "createdAt": m.CreatedAt, "durationMs": time.Since(start).Milliseconds()})
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "restored %s into %s: schema %d, %d files, %d rows (backup taken %s by version %s)\n", from, res.DataDir,
				m.SchemaVersion, m.FileCount, m.RowCount(), m.CreatedAt.Format(time.RFC3339), m.BinaryVersion)
			if len(res.Migrations) > 0 {
				fmt.Fprintf(out, "migrated forward: %s\n", strings.Join(res.Migrations, ", "))
			}
			if m.FilesElsewhere != "" {
				fmt.Fprintf(out, "uploaded files are not in this archive: they live in the object store %s; set files_url to it\n", m.FilesElsewhere)
			}
			if res.MovedAside != "" {
				fmt.Fprintf(out, "the previous data directory was moved to %s\n", res.MovedAside)
			}
			return nil
		},
	}
	cmd.Flags().String("from", "", "the archive to restore")
	cmd.Flags().String("passphrase-file", "", "the passphrase of an encrypted archive (default: backup.passphrase_file)")
	cmd.Flags().Bool("force", false, "move a non-empty data directory aside (renamed with a timestamp suffix) instead of refusing")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}

// preMigrationBackup archives a database that holds data and has
// migrations pending, before they run (backup.before_migration). It
// returns a function that records the backup once the schema has the
// table for it.
func preMigrationBackup(ctx context.Context, v *viper.Viper, dir storage.DataDir, db *storage.DB, log *slog.Logger) (func(e *env), error) {
	if !v.GetBool("backup.before_migration") || db.IsPostgres() {
		// PostgreSQL's backups are its operators' (pg_dump, base backups).
		return nil, nil
	}
	applied, known, err := db.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	if applied == 0 || applied >= known {
		return nil, nil
	}
	if has, err := db.HasData(ctx); err != nil || !has {
		return nil, err
	}
	pass, err := backupPassphrase(v, nil)
	if err != nil {
		return nil, err
	}
	bdir := backupDir(v, dir)
	if err := os.MkdirAll(bdir, 0o700); err != nil {
		return nil, fmt.Errorf("backup before migration: %w", err)
	}
	started := time.Now()
	path := filepath.Join(bdir, backup.PreMigrationName(started, applied, pass != ""))
	res, err := backup.Create(ctx, db, dir, path, backup.Options{Version: version, Passphrase: pass, FilesElsewhere: filesLocation(v)})
	if err != nil {
		return nil, fmt.Errorf("backup before migrating from schema %d to %d (set backup.before_migration to false to skip it): %w", applied, known, err)
	}
	log.Info("backup before migration written", slog.String("path", path), slog.Int("from", applied), slog.Int("to", known))
	return func(e *env) { recordBackup(ctx, e, storage.BackupTriggerPreMigration, path, started, res, nil) }, nil
}

// backupJobs are the scheduled backup and restore drill (backup.schedule,
// backup.drill); none when backup.schedule is empty.
func backupJobs(v *viper.Viper, e *env) ([]app.Job, error) {
	sched := v.GetString("backup.schedule")
	if sched == "" {
		return nil, nil
	}
	if onPostgres(v) {
		return nil, fmt.Errorf("backup.schedule: %w", errSQLiteOnly("the scheduled backup"))
	}
	every, err := time.ParseDuration(sched)
	if err != nil || every < time.Minute {
		return nil, fmt.Errorf("backup.schedule %q: give an interval of a minute or more, e.g. 24h", sched)
	}
	if _, err := backupPassphrase(v, nil); err != nil {
		return nil, err
	}
	bdir := backupDir(v, e.dir)
	keep := v.GetInt("backup.keep")
	st := &backupState{}
	jobs := []app.Job{{Name: "backup", Interval: every, Run: func(ctx context.Context) error {
		return st.scheduledBackup(ctx, v, e, bdir, keep)
	}}}
	if !v.GetBool("backup.drill") {
		return jobs, nil
	}
	drillEvery := every
	if s := v.GetString("backup.drill_interval"); s != "" {
		if drillEvery, err = time.ParseDuration(s); err != nil || drillEvery < time.Minute {
			return nil, fmt.Errorf("backup.drill_interval %q: give an interval of a minute or more, e.g. 168h", s)
		}
	}
	org, control := v.GetString("backup.drill_evidence_org"), v.GetString("backup.drill_evidence_control")
	if (org == "") != (control == "") {
		return nil, errors.New("backup.drill_evidence_org and backup.drill_evidence_control go together")
	}
	jobs = append(jobs, app.Job{Name: "restore_drill", Interval: drillEvery, Run: func(ctx context.Context) error {
		return st.scheduledDrill(ctx, v, e, bdir, every, org, control)
	}})
	return jobs, nil
}

// backupState lets a drill due in the same slot as a backup wait for that
// backup, so that it drills the newest archive.
type backupState struct {
	mu          sync.Mutex
	lastAttempt time.Time // slot of the last backup run that finished
}

func (s *backupState) scheduledBackup(ctx context.Context, v *viper.Viper, e *env, bdir string, keep int) error {
	defer func() {
		s.mu.Lock()
		s.lastAttempt = app.JobSlot(ctx)
		s.mu.Unlock()
	}()
	pass, err := backupPassphrase(v, nil)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(bdir, 0o700); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	started := time.Now()
	path := filepath.Join(bdir, backup.ArchiveName(e.app.Now(), pass != ""))
	res, err := backup.Create(ctx, e.db, e.dir, path, backup.Options{Version: version, Passphrase: pass, FilesElsewhere: filesLocation(v)})
	recordBackup(ctx, e, storage.BackupTriggerScheduled, path, started, res, err)
	if err != nil {
		return err
	}
	e.log.Info("backup written", slog.String("path", path), slog.Int64("bytes", res.Size),
		slog.Duration("duration", time.Since(started)))
	removed, err := backup.Prune(bdir, keep)
	for _, p := range removed {
		e.log.Info("old backup removed", slog.String("path", p))
	}
	return err
}

func (s *backupState) scheduledDrill(ctx context.Context, v *viper.Viper, e *env, bdir string, backupEvery time.Duration, org, control string) error {
	slot := app.JobSlot(ctx)
	deadline := time.Now().Add(backupEvery)
	for {
		latest, err := backup.Latest(bdir)
		if err != nil {
			return err
		}
		s.mu.Lock()
		attempted := !s.lastAttempt.Before(slot)
		s.mu.Unlock()
		fresh := false
		if latest != "" {
			if info, err := os.Stat(latest); err == nil && !info.ModTime().Before(slot) {
				fresh = true
			}
		}
		if fresh || attempted || slot.IsZero() || time.Now().After(deadline) {
			if latest == "" {
				e.log.Info("restore drill skipped: no backup yet", slog.String("dir", bdir))
				return nil
			}
			pass, err := archivePassphrase(v, nil, latest)
			if err != nil {
				return err
			}
			rep, evidenceID, err := runDrill(ctx, e, latest, pass, storage.BackupTriggerScheduled, org, control)
			if err != nil {
				return err
			}
			e.log.Info("restore drill passed", slog.String("archive", latest), slog.Int64("rows", rep.RowCount),
				slog.Int("files", rep.FileCount), slog.String("evidence_id", evidenceID))
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
