package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/compliance-appliance/compliance/storage"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// copyCmd moves an installation between SQLite and PostgreSQL.
func copyCmd(v *viper.Viper) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "copy --from sqlite:PATH|postgres://... --to sqlite:PATH|postgres://...",
		Short: "Copy every table from one database to another (SQLite to PostgreSQL and back), verified by row counts and hashes",
		Long: `Copy every table of the source database into the target in one
transaction on the target, then compare both sides table by table (row
count and a hash of the rows in primary-key order). Stop the servers using
the source first. The target is migrated to this binary's schema when it
has none; its schema version must equal the source's. A target that holds
data is refused unless --force, which replaces its rows. Full-text indexes
are rebuilt on the target, identity sequences moved past the copied ids.
Uploaded files and the data directory's secrets are not in the database:
copy the data directory's files/ and secrets/ beside it. With files_url
(an object store) the files stay where they are: give the target
installation the same files_url.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from, _ := cmd.Flags().GetString("from")
			to, _ := cmd.Flags().GetString("to")
			force, _ := cmd.Flags().GetBool("force")
			batch, _ := cmd.Flags().GetInt("batch")
			if err := runCopy(cmd, from, to, force, batch); err != nil {
				return err
			}
			if loc := filesLocation(v); loc != "" && !jsonOut(cmd) {
				fmt.Fprintf(cmd.OutOrStdout(), "uploaded files stay in the object store %s: give the target the same files_url\n", loc)
			} else if !jsonOut(cmd) {
				fmt.Fprintln(cmd.OutOrStdout(), "uploaded files and secrets are not copied: copy the data directory's files/ and secrets/ beside the target")
			}
			return nil
		},
	}
	cmd.Flags().String("from", "", "source: sqlite:PATH or a postgres:// URL")
	cmd.Flags().String("to", "", "target: sqlite:PATH or a postgres:// URL")
	cmd.Flags().Bool("force", false, "replace the rows of a target that already holds data")
	cmd.Flags().Int("batch", 500, "rows per INSERT statement")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// copyLocation turns sqlite:PATH or a postgres:// URL into what
// storage.OpenURL takes.
func copyLocation(flag, s string, mustExist bool) (string, error) {
	if storage.IsPostgresURL(s) {
		return s, nil
	}
	path, ok := strings.CutPrefix(s, "sqlite:")
	if !ok || path == "" {
		return "", fmt.Errorf("--%s: want sqlite:PATH or a postgres:// URL, got %q", flag, s)
	}
	if mustExist {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("--%s: %w", flag, err)
		}
	}
	return path, nil
}

func runCopy(cmd *cobra.Command, from, to string, force bool, batch int) error {
	ctx := cmd.Context()
	srcLoc, err := copyLocation("from", from, true)
	if err != nil {
		return err
	}
	dstLoc, err := copyLocation("to", to, false)
	if err != nil {
		return err
	}
	if srcLoc == dstLoc {
		return errors.New("--from and --to are the same database")
	}
	src, err := storage.OpenURL(ctx, srcLoc)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	defer src.Close()
	dst, err := storage.OpenURL(ctx, dstLoc)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	defer dst.Close()
	// A new target gets this binary's schema; one with a schema keeps it
	// (Copy refuses versions that differ).
	if applied, _, err := dst.SchemaVersion(ctx); err != nil {
		return fmt.Errorf("target: %w", err)
	} else if applied == 0 {
		if _, err := dst.Migrate(ctx); err != nil {
			return fmt.Errorf("migrate the target: %w", err)
		}
	}
	errw := cmd.ErrOrStderr()
	start := time.Now()
	rep, err := storage.Copy(ctx, src, dst, storage.CopyOptions{
		Force:     force,
		BatchRows: batch,
		Progress: func(table string, rows int64) {
			if !jsonOut(cmd) {
				fmt.Fprintf(errw, "%s copied %s: %d rows\n", time.Since(start).Round(time.Millisecond), table, rows)
			}
		},
	})
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if jsonOut(cmd) {
		tables := make([]map[string]any, 0, len(rep.Tables))
		for _, t := range rep.Tables {
			tables = append(tables, map[string]any{"table": t.Name, "sourceRows": t.SourceRows, "targetRows": t.TargetRows,
				"sourceHash": t.SourceHash, "targetHash": t.TargetHash, "equal": t.Equal()})
		}
		if err := printJSON(out, map[string]any{"ok": rep.OK(), "schemaVersion": rep.SchemaVersion, "rows": rep.Rows,
			"rebuilt": rep.Rebuilt, "copySeconds": rep.Copied.Seconds(), "totalSeconds": rep.Total.Seconds(), "tables": tables}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TABLE\tSOURCE ROWS\tTARGET ROWS\tHASH")
		for _, t := range rep.Tables {
			verdict := "equal"
			if !t.Equal() {
				verdict = "DIFFERS"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", t.Name, t.SourceRows, t.TargetRows, verdict)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(rep.Rebuilt) > 0 {
			fmt.Fprintf(out, "rebuilt on the target: %s\n", strings.Join(rep.Rebuilt, ", "))
		}
		fmt.Fprintf(out, "%d tables, %d rows at schema version %d; copied in %s, verified in %s\n",
			len(rep.Tables), rep.Rows, rep.SchemaVersion, rep.Copied.Round(time.Millisecond), (rep.Total - rep.Copied).Round(time.Millisecond))
	}
	if !rep.OK() {
		var bad []string
		for _, t := range rep.Tables {
			if !t.Equal() {
				bad = append(bad, t.Name)
			}
		}
		return fmt.Errorf("verification FAILED: %s differ between source and target", strings.Join(bad, ", "))
	}
	if !jsonOut(cmd) {
		fmt.Fprintln(out, "verified: every table equal on both sides")
	}
	return nil
}
