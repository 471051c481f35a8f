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
	load.Flags().Float64("scale", 1, "multiplies the per-organization counts (1: 1,000 vendors and 20 people each)")
	load.Flags().Int("concurrency", 32, "client workers")
	load.Flags().Duration("duration", 10*time.Second, "length of each measured phase")
	load.Flags().String("dir", "", "data directory to seed (default: a temporary one, removed after)")
	load.Flags().String("profile", "", "directory for CPU, block and mutex profiles of the mixed phase")
	return []*cobra.Command{load}
}
