// Command loadtest seeds a data directory, drives a mixed workload against
// the appliance on loopback and compares it with a bare net/http server
// (`make load`). It is a measurement tool, not part of the appliance's
// binary.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/compliance-appliance/compliance/bench"
)

func main() {
	cfg := bench.LoadConfig{Out: os.Stdout, Progress: os.Stderr}
	flag.IntVar(&cfg.Orgs, "orgs", 100, "organizations to seed")
	flag.Float64Var(&cfg.Scale, "scale", 1, "multiplies the per-organization counts (1: 20 people, 1,000 vendors, 20 controls, 500 findings and 2,000 evidence records each)")
	flag.IntVar(&cfg.Concurrency, "concurrency", 32, "client workers")
	flag.DurationVar(&cfg.Duration, "duration", 10*time.Second, "length of each measured phase")
	flag.StringVar(&cfg.DataDir, "dir", "", "data directory to seed (default: a temporary one, removed after)")
	flag.StringVar(&cfg.DatabaseURL, "database-url", "", "run on this PostgreSQL database (postgres://...; it must be empty or hold only a previous run's schema) instead of SQLite in -dir")
	flag.IntVar(&cfg.Replicas, "replicas", 1, "servers on the one database, each with its own pool, router and listener, requests spread round-robin (above 1 only with -database-url)")
	flag.StringVar(&cfg.Profile, "profile", "", "directory for CPU, block and mutex profiles of the mixed phase")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench.Load(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}
