package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Job is a named periodic task.
type Job struct {
	Name     string
	Interval time.Duration
	Run      func(ctx context.Context) error
}

// Runner runs jobs on tickers until its context ends. It recovers panics,
// logs durations and errors, and waits for running jobs on stop.
type Runner struct {
	log  *slog.Logger
	jobs []Job
	wg   sync.WaitGroup
}

// NewRunner returns a runner for the given jobs.
func NewRunner(log *slog.Logger, jobs ...Job) *Runner {
	return &Runner{log: log, jobs: jobs}
}

// Start launches one goroutine per job.
func (r *Runner) Start(ctx context.Context) {
	for _, j := range r.jobs {
		r.wg.Add(1)
		go func(j Job) {
			defer r.wg.Done()
			t := time.NewTicker(j.Interval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					r.runOnce(ctx, j)
				}
			}
		}(j)
	}
}

// Wait blocks until every job goroutine has returned.
func (r *Runner) Wait() { r.wg.Wait() }

func (r *Runner) runOnce(ctx context.Context, j Job) {
	start := time.Now()
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return j.Run(ctx)
	}()
	if err != nil && ctx.Err() == nil {
		r.log.Error("job failed", slog.String("job", j.Name), slog.Duration("duration", time.Since(start)), slog.Any("error", err))
		return
	}
	r.log.Debug("job done", slog.String("job", j.Name), slog.Duration("duration", time.Since(start)))
}
