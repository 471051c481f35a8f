package app_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

func newJobsApp(t testing.TB) (*app.App, *storage.DB, *clock) {
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 3, 1, 10, 20, 0, 0, time.UTC)}
	return app.New(db, c.Now, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{}), db, c
}

func at(h, m int) time.Time { return time.Date(2026, 3, 1, h, m, 0, 0, time.UTC) }

func TestSchedulerRunsEachSlotOnce(t *testing.T) {
	t.Parallel()
	a, db, c := newJobsApp(t)
	ctx := context.Background()
	var slots []time.Time
	s := a.NewScheduler(app.Job{Name: "hourly", Interval: time.Hour, Run: func(ctx context.Context) error {
		slots = append(slots, app.JobSlot(ctx))
		return nil
	}})
	s.RunDue(ctx) // 10:20: the 10:00 slot is due at once
	s.RunDue(ctx)
	c.Set(at(10, 59))
	s.RunDue(ctx)
	c.Set(at(11, 0))
	s.RunDue(ctx)
	c.Set(at(13, 30)) // slots missed while stopped are not replayed one by one
	s.RunDue(ctx)
	want := []time.Time{at(10, 0), at(11, 0), at(13, 0)}
	if len(slots) != len(want) {
		t.Fatalf("ran for slots %v, want %v", slots, want)
	}
	for i := range want {
		if !slots[i].Equal(want[i]) {
			t.Fatalf("slot %d = %v, want %v", i, slots[i], want[i])
		}
	}
	// A new scheduler (a restart) does not run a finished slot again.
	again := a.NewScheduler(app.Job{Name: "hourly", Interval: time.Hour, Run: func(context.Context) error {
		t.Error("a finished slot ran again after a restart")
		return nil
	}})
	again.RunDue(ctx)
	runs, err := db.RecentJobRuns(ctx, "hourly", 10)
	if err != nil || len(runs) != 3 || runs[0].Status != app.JobSucceeded || !runs[0].Slot.Equal(at(13, 0)) || runs[0].Tries != 1 {
		t.Fatalf("runs %+v %v", runs, err)
	}
}

func TestSchedulerRecordsFailuresAndPanics(t *testing.T) {
	t.Parallel()
	a, db, c := newJobsApp(t)
	ctx := context.Background()
	calls := 0
	s := a.NewScheduler(
		app.Job{Name: "failing", Interval: time.Hour, Run: func(context.Context) error { calls++; return errors.New("disk full") }},
		app.Job{Name: "panicking", Interval: time.Hour, Run: func(context.Context) error { panic("boom") }},
	)
	s.RunDue(ctx)
	s.RunDue(ctx) // a failed slot is not hammered: it waits for the next slot
	if calls != 1 {
		t.Fatalf("failing job ran %d times in one slot", calls)
	}
	c.Set(at(11, 1))
	s.RunDue(ctx)
	if calls != 2 {
		t.Fatalf("failing job did not run in the next slot")
	}
	runs, _ := db.RecentJobRuns(ctx, "failing", 10)
	if len(runs) != 2 || runs[0].Status != app.JobFailed || runs[0].Error != "disk full" || runs[0].FinishedAt == nil || runs[0].DurationMS == nil {
		t.Fatalf("failing runs: %+v", runs)
	}
	runs, _ = db.RecentJobRuns(ctx, "panicking", 10)
	if len(runs) != 2 || runs[0].Status != app.JobFailed || runs[0].Error != "panic: boom" {
		t.Fatalf("panicking runs: %+v", runs)
	}
	jobs, err := a.ListJobs(app.SystemContext(ctx, "org_x"))
	if err != nil || len(jobs) != 2 || jobs[0].Name != "failing" || jobs[0].LastRun.Error != "disk full" || len(jobs[0].RecentRuns) != 2 ||
		!jobs[0].NextRunAt.Equal(at(12, 0)) {
		t.Fatalf("ListJobs: %+v %v", jobs, err)
	}
}

func TestSchedulerSurvivesRestartMidRun(t *testing.T) {
	t.Parallel()
	a, db, _ := newJobsApp(t)
	ctx := context.Background()
	// A previous process started the 10:00 slot and died during it.
	if _, started, err := db.BeginJobRun(ctx, "scan", at(10, 0), at(10, 0)); err != nil || !started {
		t.Fatalf("begin: %v %v", started, err)
	}
	if _, started, _ := db.BeginJobRun(ctx, "scan", at(10, 0), at(10, 1)); started {
		t.Fatal("a running slot started twice")
	}
	ran := make(chan time.Time, 1)
	s := a.NewScheduler(app.Job{Name: "scan", Interval: time.Hour, Run: func(ctx context.Context) error {
		ran <- app.JobSlot(ctx)
		return nil
	}})
	s.SetTick(10 * time.Millisecond)
	runCtx, stop := context.WithCancel(ctx)
	s.Start(runCtx)
	select {
	case slot := <-ran:
		if !slot.Equal(at(10, 0)) {
			t.Fatalf("reran slot %v", slot)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the interrupted slot did not run again")
	}
	time.Sleep(50 * time.Millisecond)
	stop()
	s.Wait()
	runs, _ := db.RecentJobRuns(ctx, "scan", 10)
	if len(runs) != 1 || runs[0].Status != app.JobSucceeded || runs[0].Tries != 2 {
		t.Fatalf("runs: %+v", runs)
	}
	select {
	case <-ran:
		t.Fatal("the slot ran twice after the restart")
	default:
	}
}

func TestSchedulerShutdownMidRunRunsAgain(t *testing.T) {
	t.Parallel()
	a, db, _ := newJobsApp(t)
	ctx := context.Background()
	started := make(chan struct{})
	s := a.NewScheduler(app.Job{Name: "long", Interval: time.Hour, Run: func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}})
	runCtx, stop := context.WithCancel(ctx)
	s.Start(runCtx)
	<-started
	stop()
	s.Wait()
	runs, _ := db.RecentJobRuns(ctx, "long", 10)
	if len(runs) != 1 || runs[0].Status != app.JobInterrupted {
		t.Fatalf("runs: %+v", runs)
	}
	done := false
	s2 := a.NewScheduler(app.Job{Name: "long", Interval: time.Hour, Run: func(context.Context) error { done = true; return nil }})
	s2.RunDue(ctx)
	runs, _ = db.RecentJobRuns(ctx, "long", 10)
	if !done || runs[0].Status != app.JobSucceeded || runs[0].Tries != 2 {
		t.Fatalf("after restart: %v %+v", done, runs)
	}
}

func TestPurgeRulesOnInjectedClock(t *testing.T) {
	t.Parallel()
	a, db, c := newJobsApp(t)
	ctx := context.Background()
	org, err := a.CreateOrganization(ctx, "A", "professional")
	if err != nil {
		t.Fatal(err)
	}
	sys := app.SystemContext(ctx, org.ID)
	run := func(ctx context.Context) *app.StoredResponse {
		return &app.StoredResponse{Status: 201, ContentType: "application/json", Body: []byte(`{}`)}
	}
	if _, _, err := a.Idempotent(sys, "k1", "h", run); err != nil {
		t.Fatal(err)
	}
	c.Set(c.Now().Add(23 * time.Hour))
	if n, err := a.PurgeIdempotency(ctx); err != nil || n != 0 {
		t.Fatalf("purged a live record: %d %v", n, err)
	}
	if _, replayed, _ := a.Idempotent(sys, "k1", "h", run); !replayed {
		t.Fatal("not replayed within 24 h")
	}
	c.Set(c.Now().Add(90 * time.Minute))
	if n, err := a.PurgeIdempotency(ctx); err != nil || n != 1 {
		t.Fatalf("purge after 24 h: %d %v", n, err)
	}
	if _, err := db.GetIdempotency(ctx, org.ID, "k1"); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("record still there: %v", err)
	}
}
