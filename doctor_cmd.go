package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/compliance-appliance/compliance/backup"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// Doctor check statuses: a fail makes `doctor` exit non-zero.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
	checkSkip = "skip"
)

// doctorCheck is one line of `doctor`'s report.
type doctorCheck struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// Disk space thresholds of the data directory's file system.
const (
	diskFailBytes = 256 << 20
	diskWarnBytes = 1 << 30
	diskFailPct   = 2
	diskWarnPct   = 10
	walWarnBytes  = 512 << 20
	certWarnAhead = 14 * 24 * time.Hour
	clockSlack    = 5 * time.Minute
)

// errDoctorFailed makes `doctor` exit non-zero.
var errDoctorFailed = errors.New("doctor: at least one check failed")

func doctorCmd(v *viper.Viper) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the data directory, disk space, database integrity, WAL, clock, TLS certificate and backups; exits non-zero on a failure",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			full, _ := cmd.Flags().GetBool("full")
			checks := runDoctor(cmd.Context(), v, full, time.Now())
			ok := true
			for _, c := range checks {
				ok = ok && c.Status != checkFail
			}
			if jsonOut(cmd) {
				if err := printJSON(cmd.OutOrStdout(), map[string]any{"ok": ok, "checks": checks}); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "CHECK\tSTATUS\tDETAIL")
				for _, c := range checks {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, strings.ToUpper(c.Status), c.Message)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if !ok {
				cmd.SilenceUsage = true
				return errDoctorFailed
			}
			return nil
		},
	}
	cmd.Flags().Bool("full", false, "run PRAGMA integrity_check (reads every page) instead of quick_check")
	return cmd
}

// runDoctor runs every check; it never creates, migrates or writes to the
// data directory.
func runDoctor(ctx context.Context, v *viper.Viper, full bool, now time.Time) []doctorCheck {
	dir := storage.DataDir{Root: v.GetString("data_dir")}
	var out []doctorCheck
	add := func(name, status, format string, args ...any) {
		out = append(out, doctorCheck{Name: name, Status: status, Message: fmt.Sprintf(format, args...)})
	}
	dataOK := checkDataDir(dir, add)
	if dataOK {
		checkDisk(dir, add)
	} else {
		add("disk_space", checkSkip, "no data directory")
	}
	var insp *storage.Inspection
	if onPostgres(v) {
		// The database is PostgreSQL's: no file, WAL or archives here.
		checkPostgres(ctx, v.GetString("database_url"), add)
		add("wal", checkSkip, "PostgreSQL: its WAL is the server's")
	} else if dataOK {
		insp = checkDatabase(ctx, dir, full, add)
		checkWAL(dir, add)
	} else {
		add("database", checkFail, "no data directory")
		add("wal", checkSkip, "no data directory")
	}
	checkFilesStore(ctx, v, dir, add)
	checkClock(now, insp, add)
	checkCertificate(v, now, add)
	if onPostgres(v) {
		add("backup", checkSkip, "PostgreSQL: back it up with pg_dump or pg_basebackup (docs/scale-out.md)")
	} else {
		checkBackups(v, dir, now, add)
	}
	return out
}

type addCheck func(name, status, format string, args ...any)

func checkDataDir(dir storage.DataDir, add addCheck) bool {
	info, err := os.Stat(dir.Root)
	if err != nil {
		add("data_directory", checkFail, "%v", err)
		return false
	}
	if !info.IsDir() {
		add("data_directory", checkFail, "%s is not a directory", dir.Root)
		return false
	}
	var fails, warns []string
	uid := os.Geteuid()
	if owner, ok := fileOwner(info); ok && uid >= 0 && owner != uid {
		fails = append(fails, fmt.Sprintf("owned by uid %d, the process runs as uid %d", owner, uid))
	}
	if info.Mode().Perm()&0o077 != 0 {
		warns = append(warns, fmt.Sprintf("mode %04o lets others in (want 0700)", info.Mode().Perm()))
	}
	if f, err := os.CreateTemp(dir.Root, ".doctor-*"); err != nil {
		fails = append(fails, fmt.Sprintf("not writable: %v", err))
	} else {
		f.Close()
		os.Remove(f.Name())
	}
	for _, sub := range []string{dir.FilesPath(), dir.SecretsPath()} {
		si, err := os.Stat(sub)
		if err != nil {
			warns = append(warns, fmt.Sprintf("%s: %v", filepath.Base(sub), err))
			continue
		}
		if owner, ok := fileOwner(si); ok && uid >= 0 && owner != uid {
			fails = append(fails, fmt.Sprintf("%s/ owned by uid %d", filepath.Base(sub), owner))
		}
		if si.Mode().Perm()&0o077 != 0 {
			warns = append(warns, fmt.Sprintf("%s/ mode %04o (want 0700)", filepath.Base(sub), si.Mode().Perm()))
		}
	}
	for _, p := range []string{dir.DBPath(), dir.DBPath() + "-wal"} {
		if si, err := os.Stat(p); err == nil && si.Mode().Perm()&0o077 != 0 {
			warns = append(warns, fmt.Sprintf("%s mode %04o (want 0600; the directory's 0700 keeps others out)", filepath.Base(p), si.Mode().Perm()))
		}
	}
	secrets, _ := os.ReadDir(dir.SecretsPath())
	for _, e := range secrets {
		si, err := e.Info()
		if err != nil || !si.Mode().IsRegular() {
			continue
		}
		if si.Mode().Perm()&0o077 != 0 {
			fails = append(fails, fmt.Sprintf("secrets/%s is readable by others (mode %04o, want 0600)", e.Name(), si.Mode().Perm()))
		}
		if owner, ok := fileOwner(si); ok && uid >= 0 && owner != uid {
			fails = append(fails, fmt.Sprintf("secrets/%s owned by uid %d", e.Name(), owner))
		}
	}
	switch {
	case len(fails) > 0:
		add("data_directory", checkFail, "%s", strings.Join(append(fails, warns...), "; "))
	case len(warns) > 0:
		add("data_directory", checkWarn, "%s", strings.Join(warns, "; "))
	default:
		add("data_directory", checkOK, "%s: owner and permissions as expected", dir.Root)
	}
	return true
}

func checkDisk(dir storage.DataDir, add addCheck) {
	free, total, err := diskFree(dir.Root)
	if err != nil {
		add("disk_space", checkSkip, "%v", err)
		return
	}
	pct := 100.0
	if total > 0 {
		pct = float64(free) * 100 / float64(total)
	}
	msg := fmt.Sprintf("%s free (%.1f%%)", humanBytes(free), pct)
	switch {
	case free < diskFailBytes || pct < diskFailPct:
		add("disk_space", checkFail, "%s", msg)
	case free < diskWarnBytes || pct < diskWarnPct:
		add("disk_space", checkWarn, "%s", msg)
	default:
		add("disk_space", checkOK, "%s", msg)
	}
}

func checkDatabase(ctx context.Context, dir storage.DataDir, full bool, add addCheck) *storage.Inspection {
	pragma := "quick_check"
	if full {
		pragma = "integrity_check"
	}
	insp, err := storage.Inspect(ctx, dir.DBPath(), storage.InspectOptions{Integrity: true, Full: full})
	if err != nil {
		add("database", checkFail, "%v", err)
		return nil
	}
	if len(insp.Integrity) != 1 || insp.Integrity[0] != "ok" {
		add("database", checkFail, "%s: %s", pragma, strings.Join(insp.Integrity, "; "))
		return insp
	}
	known, err := storage.KnownSchemaVersion()
	switch {
	case err != nil:
		add("database", checkFail, "%v", err)
	case insp.SchemaVersion > known:
		add("database", checkFail, "%s ok; schema %d is newer than this binary knows (%d)", pragma, insp.SchemaVersion, known)
	case insp.SchemaVersion < known:
		add("database", checkWarn, "%s ok; schema %d, migrations up to %d pending (compliance migrate)", pragma, insp.SchemaVersion, known)
	default:
		add("database", checkOK, "%s ok; schema %d", pragma, insp.SchemaVersion)
	}
	return insp
}

func checkWAL(dir storage.DataDir, add addCheck) {
	info, err := os.Stat(dir.DBPath() + "-wal")
	if errors.Is(err, os.ErrNotExist) {
		add("wal", checkOK, "no write-ahead log (checkpointed)")
		return
	}
	if err != nil {
		add("wal", checkWarn, "%v", err)
		return
	}
	if info.Size() > walWarnBytes {
		add("wal", checkWarn, "%s: checkpoints are falling behind (a long-running reader?)", humanBytes(uint64(info.Size())))
		return
	}
	add("wal", checkOK, "%s", humanBytes(uint64(info.Size())))
}

// buildTime is when the binary's source was committed, if the build
// recorded it.
func buildTime() (time.Time, bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return time.Time{}, false
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.time" {
			t, err := time.Parse(time.RFC3339, s.Value)
			return t, err == nil
		}
	}
	return time.Time{}, false
}

func checkClock(now time.Time, insp *storage.Inspection, add addCheck) {
	var fails, facts []string
	if bt, ok := buildTime(); ok {
		if now.Before(bt.Add(-24 * time.Hour)) {
			fails = append(fails, fmt.Sprintf("the system time %s is before this binary was built (%s)", now.UTC().Format(time.RFC3339), bt.Format(time.RFC3339)))
		} else {
			facts = append(facts, "after the build time")
		}
	}
	if insp != nil && insp.Newest != "" {
		if newest, err := time.Parse("2006-01-02T15:04:05.000Z", insp.Newest); err == nil {
			if now.Before(newest.Add(-clockSlack)) {
				fails = append(fails, fmt.Sprintf("the system time %s is before the newest audit record (%s)", now.UTC().Format(time.RFC3339), newest.Format(time.RFC3339)))
			} else {
				facts = append(facts, "after the newest audit record")
			}
		}
	}
	switch {
	case len(fails) > 0:
		add("clock", checkFail, "%s", strings.Join(fails, "; "))
	case len(facts) == 0:
		add("clock", checkSkip, "nothing to compare the system time with")
	default:
		add("clock", checkOK, "%s: %s", now.UTC().Format(time.RFC3339), strings.Join(facts, ", "))
	}
}

func checkCertificate(v *viper.Viper, now time.Time, add addCheck) {
	certFile, keyFile := v.GetString("tls_cert_file"), v.GetString("tls_key_file")
	if certFile == "" && keyFile == "" {
		add("tls_certificate", checkSkip, "TLS not configured (tls_cert_file, tls_key_file)")
		return
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		add("tls_certificate", checkFail, "%v", err)
		return
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		add("tls_certificate", checkFail, "%v", err)
		return
	}
	until := leaf.NotAfter.UTC().Format(time.RFC3339)
	switch {
	case now.After(leaf.NotAfter):
		add("tls_certificate", checkFail, "expired at %s", until)
	case now.Before(leaf.NotBefore):
		add("tls_certificate", checkFail, "not valid before %s", leaf.NotBefore.UTC().Format(time.RFC3339))
	case now.Add(certWarnAhead).After(leaf.NotAfter):
		add("tls_certificate", checkWarn, "expires soon, at %s", until)
	default:
		add("tls_certificate", checkOK, "valid until %s", until)
	}
}

func checkBackups(v *viper.Viper, dir storage.DataDir, now time.Time, add addCheck) {
	sched := v.GetString("backup.schedule")
	if sched == "" {
		add("backup", checkSkip, "scheduled backups are off (backup.schedule)")
		return
	}
	every, err := time.ParseDuration(sched)
	if err != nil {
		add("backup", checkFail, "backup.schedule %q is not an interval", sched)
		return
	}
	bdir := backupDir(v, dir)
	as, err := backup.List(bdir)
	if err != nil {
		add("backup", checkFail, "%v", err)
		return
	}
	if len(as) == 0 {
		add("backup", checkFail, "no backup in %s", bdir)
		return
	}
	age := now.Sub(as[0].ModTime).Truncate(time.Second)
	msg := fmt.Sprintf("newest %s, %s old (every %s)", filepath.Base(as[0].Path), age, every)
	switch {
	case age > 2*every+time.Hour:
		add("backup", checkFail, "%s", msg)
	case age > every+time.Hour:
		add("backup", checkWarn, "%s", msg)
	default:
		add("backup", checkOK, "%s", msg)
	}
}

func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
