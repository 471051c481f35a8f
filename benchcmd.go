package main

import (
	"time"

	"github.com/compliance-appliance/compliance/bench"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// benchCmds are the hidden measurement commands behind `make load` and
// `make crashtest`.
func benchCmds(v *viper.Viper) []*cobra.Command {
	load := &cobra.Command{
		Use:    "loadtest",
		Short:  "Seed a dataset, drive a mixed workload on loopback and compare with the bare net/http limit",
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			cfg := bench.LoadConfig{Out: cmd.OutOrStdout(), Progress: cmd.ErrOrStderr()}
			cfg.Orgs, _ = f.GetInt("orgs")
			cfg.Scale, _ = f.GetFloat64("scale")
			cfg.Concurrency, _ = f.GetInt("concurrency")
			cfg.Duration, _ = f.GetDuration("duration")
			cfg.DataDir, _ = f.GetString("dir")
			cfg.Profile, _ = f.GetString("profile")
			return bench.Load(cmd.Context(), cfg)
		},
	}
	load.Flags().Int("orgs", 100, "organizations to seed")
	load.Flags().Float64("scale", 1, "multiplies the per-organization counts (1: 20 people, 1,000 vendors, 20 controls, 500 findings and 2,000 evidence records each)")
	load.Flags().Int("concurrency", 32, "client workers")
	load.Flags().Duration("duration", 10*time.Second, "length of each measured phase")
	load.Flags().String("dir", "", "data directory to seed (default: a temporary one, removed after)")
	load.Flags().String("profile", "", "directory for CPU, block and mutex profiles of the mixed phase")
	crash := &cobra.Command{
		Use:    "crashtest",
		Short:  "Kill a serving binary with SIGKILL under write load, restart it, and check no acknowledged write was lost",
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			cfg := bench.CrashConfig{Out: cmd.OutOrStdout(), Progress: cmd.ErrOrStderr()}
			cfg.Binary, _ = f.GetString("binary")
			cfg.Kills, _ = f.GetInt("kills")
			cfg.Concurrency, _ = f.GetInt("concurrency")
			cfg.MinUp, _ = f.GetDuration("min-up")
			cfg.MaxUp, _ = f.GetDuration("max-up")
			cfg.DataDir, _ = f.GetString("dir")
			return bench.Crash(cmd.Context(), cfg)
		},
	}
	crash.Flags().String("binary", "", "compliance binary to run (default: this one)")
	crash.Flags().Int("kills", 100, "SIGKILLs to deliver")
	crash.Flags().Int("concurrency", 8, "concurrent writers")
	crash.Flags().Duration("min-up", 50*time.Millisecond, "earliest kill after the server answers")
	crash.Flags().Duration("max-up", 1500*time.Millisecond, "latest kill after the server answers")
	crash.Flags().String("dir", "", "data directory (default: a temporary one, removed after)")
	return []*cobra.Command{load, crash}
}
