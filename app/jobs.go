package app

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"
)

// Job is a named periodic task. Run must be idempotent: a slot interrupted
// by a crash runs again after the restart.
type Job struct {
	Name     string
	Interval time.Duration
	Run      func(ctx context.Context) error
	// Unrecorded keeps a frequent housekeeping job out of the run log.
	Unrecorded bool
}

// Job run statuses.
const (
	JobRunning     = "running"
	JobSucceeded   = "succeeded"
	JobFailed      = "failed"
	JobInterrupted = "interrupted"
)

// JobRun is one run of a job for one scheduled slot.
type JobRun struct {
	ID         int64      `json:"-"`
	Job        string     `json:"job"`
	Slot       time.Time  `json:"scheduledFor"`
	Status     string     `json:"status"`
	Tries      int        `json:"tries"`
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt"`
	DurationMS *int64     `json:"durationMs"`
	Error      string     `json:"error"`
}

// JobRunStore records job runs.
type JobRunStore interface {
	// BeginJobRun records a run of job for slot. started is false when the
	// slot already ran (or is running); an interrupted slot starts again.
	BeginJobRun(ctx context.Context, job string, slot, at time.Time) (id int64, started bool, err error)
	EndJobRun(ctx context.Context, id int64, status string, at time.Time, dur time.Duration, errMsg string) error
	// InterruptJobRuns marks runs left running by a previous process.
	InterruptJobRuns(ctx context.Context) (int64, error)
	RecentJobRuns(ctx context.Context, job string, n int) ([]JobRun, error)
	JobNames(ctx context.Context) ([]string, error)
}

// JobLeaseStore is implemented by a store several processes share (the
// replicas on PostgreSQL). A run holds its slot under a lease its runner
// extends while the job works; a slot whose lease ran out (its process
// died) is run again by the next runner that looks at it, and a starting
// runner interrupts only runs whose lease ended, never a live replica's.
type JobLeaseStore interface {
	// SharedByProcesses reports whether other processes use the store.
	SharedByProcesses() bool
	// ClaimJobRun is BeginJobRun under a lease: it also takes over a
	// running slot whose lease ended before at. busy is true when the slot
	// runs under another live lease (look again later).
	ClaimJobRun(ctx context.Context, job string, slot, at, leaseUntil time.Time) (id int64, started, busy bool, err error)
	// ExtendJobRun moves a running run's lease to leaseUntil.
	ExtendJobRun(ctx context.Context, id int64, leaseUntil time.Time) error
	// InterruptExpiredJobRuns marks running runs whose lease ended by now
	// (or that have none) as interrupted.
	InterruptExpiredJobRuns(ctx context.Context, now time.Time) (int64, error)
}

// jobLease is how long a run holds its slot without its runner extending
// it; the runner extends it every third of that.
const jobLease = time.Minute

// Runner is the scheduler: every job runs once per slot (its interval,
// aligned to UTC midnight) on the runner's clock. With a store each run is
// recorded, a slot that finished is never run again (also across restarts),
// and a slot a crash interrupted runs again. It recovers panics, logs
// durations and errors, and waits for running jobs on stop.
type Runner struct {
	log   *slog.Logger
	store JobRunStore
	// metrics receives every run's status and duration (nil: none).
	metrics Metrics
	now     func() time.Time
	tick    time.Duration
	mu      sync.Mutex
	jobs    []Job
	done    map[string]time.Time
	wg      sync.WaitGroup
	// leases is set when other processes share the store: runs are claimed
	// under a lease (jobLease), and recheck holds when to look again at a
	// slot another process is running.
	leases  JobLeaseStore
	lease   time.Duration
	recheck map[string]time.Time
}

// NewRunner returns a runner that keeps no records, on the real clock.
func NewRunner(log *slog.Logger, jobs ...Job) *Runner {
	return &Runner{log: log, now: time.Now, tick: time.Second, jobs: jobs, done: map[string]time.Time{}}
}

// NewScheduler returns the recording scheduler on the app's clock; GET
// /v1/scheduler/jobs reports its jobs. Register adds jobs before Start.
func (a *App) NewScheduler(jobs ...Job) *Runner {
	r := &Runner{log: a.log, store: a.store, metrics: a.metrics, now: a.now, tick: time.Second, jobs: jobs, done: map[string]time.Time{}}
	if ls, ok := a.store.(JobLeaseStore); ok && ls.SharedByProcesses() {
		r.leases, r.lease, r.recheck = ls, jobLease, map[string]time.Time{}
	}
	a.events.mu.Lock()
	a.events.sched = r
	a.events.mu.Unlock()
	return r
}

// Register adds a job; call it before Start.
func (r *Runner) Register(j Job) *Runner {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = append(r.jobs, j)
	return r
}

// SetTick sets how often the runner looks at the clock (default 1 s).
func (r *Runner) SetTick(d time.Duration) { r.tick = d }

// Jobs returns the registered jobs.
func (r *Runner) Jobs() []Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Job(nil), r.jobs...)
}

// slotOf is the start of the interval now falls in.
func slotOf(now time.Time, every time.Duration) time.Time {
	return now.UTC().Truncate(every)
}

// Start marks runs a previous process left running as interrupted, then
// launches one goroutine per job that runs it whenever its slot is due.
func (r *Runner) Start(ctx context.Context) {
	if r.store != nil {
		interrupt := r.store.InterruptJobRuns
		if r.leases != nil {
			interrupt = func(ctx context.Context) (int64, error) { return r.leases.InterruptExpiredJobRuns(ctx, r.now().UTC()) }
		}
		if n, err := interrupt(ctx); err != nil {
			r.log.Error("mark interrupted job runs", slog.Any("error", err))
		} else if n > 0 {
			r.log.Warn("job runs interrupted by the last stop will run again", slog.Int64("count", n))
		}
	}
	for _, j := range r.Jobs() {
		r.wg.Add(1)
		go func(j Job) {
			defer r.wg.Done()
			t := time.NewTicker(r.tick)
			defer t.Stop()
			for {
				r.runIfDue(ctx, j)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}(j)
	}
}

// Wait blocks until every job goroutine has returned.
func (r *Runner) Wait() { r.wg.Wait() }

// RunDue runs, one after another, every job whose current slot has not run.
func (r *Runner) RunDue(ctx context.Context) {
	for _, j := range r.Jobs() {
		r.runIfDue(ctx, j)
	}
}

type jobSlotKey struct{}

// JobSlot returns the scheduled time of the run in ctx (zero outside a job).
func JobSlot(ctx context.Context) time.Time {
	t, _ := ctx.Value(jobSlotKey{}).(time.Time)
	return t
}

func (r *Runner) runIfDue(ctx context.Context, j Job) {
	if ctx.Err() != nil || j.Interval <= 0 {
		return
	}
	slot := slotOf(r.now(), j.Interval)
	r.mu.Lock()
	last, ok := r.done[j.Name]
	recheck := r.recheck[j.Name]
	r.mu.Unlock()
	if ok && !slot.After(last) {
		return
	}
	if r.now().Before(recheck) {
		return
	}
	var id int64
	record := r.store != nil && !j.Unrecorded
	if record {
		var started, busy bool
		var err error
		if r.leases != nil {
			now := r.now().UTC()
			id, started, busy, err = r.leases.ClaimJobRun(ctx, j.Name, slot, now, now.Add(r.lease))
		} else {
			id, started, err = r.store.BeginJobRun(ctx, j.Name, slot, r.now().UTC())
		}
		if err != nil {
			r.log.Error("record job start", slog.String("job", j.Name), slog.Any("error", err))
			return
		}
		if busy {
			// Another replica runs the slot: look again when its lease
			// could have ended.
			r.mu.Lock()
			r.recheck[j.Name] = r.now().Add(r.lease / 3)
			r.mu.Unlock()
			return
		}
		if !started {
			r.markDone(j.Name, slot)
			return
		}
		if r.leases != nil {
			stop := r.keepLease(ctx, j.Name, id)
			defer stop()
		}
	}
	start := time.Now()
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return j.Run(context.WithValue(ctx, jobSlotKey{}, slot))
	}()
	dur := time.Since(start)
	status, msg := JobSucceeded, ""
	switch {
	case err != nil && ctx.Err() != nil:
		status, msg = JobInterrupted, "stopped by shutdown; runs again at the next start"
	case err != nil:
		status, msg = JobFailed, err.Error()
		r.log.Error("job failed", slog.String("job", j.Name), slog.Duration("duration", dur), slog.Any("error", err))
	default:
		r.log.Debug("job done", slog.String("job", j.Name), slog.Duration("duration", dur))
	}
	if r.metrics != nil {
		r.metrics.JobRun(j.Name, status, dur)
	}
	if record {
		if err := r.store.EndJobRun(context.WithoutCancel(ctx), id, status, r.now().UTC(), dur, msg); err != nil {
			r.log.Error("record job end", slog.String("job", j.Name), slog.Any("error", err))
		}
	}
	if status != JobInterrupted {
		r.markDone(j.Name, slot)
	}
}

// keepLease extends the lease of run id every third of the lease until
// the returned stop is called.
func (r *Runner) keepLease(ctx context.Context, job string, id int64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(r.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := r.leases.ExtendJobRun(context.WithoutCancel(ctx), id, r.now().UTC().Add(r.lease)); err != nil {
					r.log.Error("extend job lease", slog.String("job", job), slog.Any("error", err))
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (r *Runner) markDone(name string, slot time.Time) {
	r.mu.Lock()
	r.done[name] = slot
	r.mu.Unlock()
}

// JobStatus is a job as GET /v1/scheduler/jobs shows it.
type JobStatus struct {
	Name            string     `json:"name"`
	IntervalSeconds int64      `json:"intervalSeconds"`
	Scheduled       bool       `json:"scheduled"`
	NextRunAt       *time.Time `json:"nextRunAt"`
	LastRun         *JobRun    `json:"lastRun"`
	RecentRuns      []JobRun   `json:"recentRuns"`
}

// ListJobs reports every job this process schedules, plus jobs that ran
// before but are no longer scheduled, with their last runs.
func (a *App) ListJobs(ctx context.Context) ([]JobStatus, error) {
	_, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	a.events.mu.Lock()
	sched := a.events.sched
	a.events.mu.Unlock()
	byName := map[string]*JobStatus{}
	var jobs []Job
	if sched != nil {
		jobs = sched.Jobs()
	}
	now := a.Now()
	for _, j := range jobs {
		byName[j.Name] = &JobStatus{Name: j.Name, IntervalSeconds: int64(j.Interval / time.Second), Scheduled: true}
	}
	names, err := a.store.JobNames(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if byName[n] == nil {
			byName[n] = &JobStatus{Name: n}
		}
	}
	out := make([]JobStatus, 0, len(byName))
	for _, st := range byName {
		runs, err := a.store.RecentJobRuns(ctx, st.Name, 10)
		if err != nil {
			return nil, err
		}
		st.RecentRuns = runs
		if len(runs) > 0 {
			st.LastRun = &runs[0]
		}
		if st.Scheduled {
			every := time.Duration(st.IntervalSeconds) * time.Second
			next := slotOf(now, every)
			if st.LastRun != nil && !st.LastRun.Slot.Before(next) && st.LastRun.Status != JobRunning && st.LastRun.Status != JobInterrupted {
				next = next.Add(every)
			}
			if next.Before(now) {
				next = now
			}
			st.NextRunAt = &next
		}
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
