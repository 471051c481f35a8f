// Command crashtest kills a serving appliance binary with SIGKILL under
// write load, restarts it and checks that no acknowledged write or event was
// lost (`make crashtest`). It is a fault-injection tool, not part of the
// appliance's binary.
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
	cfg := bench.CrashConfig{Out: os.Stdout, Progress: os.Stderr}
	flag.StringVar(&cfg.Binary, "binary", "./compliance", "compliance binary to run and kill")
	flag.IntVar(&cfg.Kills, "kills", 100, "SIGKILLs to deliver")
	flag.IntVar(&cfg.Concurrency, "concurrency", 8, "concurrent writers")
	flag.DurationVar(&cfg.MinUp, "min-up", 50*time.Millisecond, "earliest kill after the server answers")
	flag.DurationVar(&cfg.MaxUp, "max-up", 1500*time.Millisecond, "latest kill after the server answers")
	flag.StringVar(&cfg.DataDir, "dir", "", "data directory (default: a temporary one, removed after)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench.Crash(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		os.Exit(1)
	}
}
