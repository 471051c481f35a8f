package app_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/storage/storagetest"
)

// replicaApps opens n Apps, each over its own connections to one fresh
// PostgreSQL database (n replicas), on one clock. It needs a cluster:
// skipped loudly without one.
func replicaApps(t *testing.T, n int) ([]*app.App, []*storage.DB, *clock) {
	t.Helper()
	url := storagetest.PostgresURL(t)
	c := &clock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	var apps []*app.App
	var dbs []*storage.DB
	for i := 0; i < n; i++ {
		db, err := storage.OpenURL(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
		apps = append(apps, app.New(db, c.Now, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{}))
	}
	return apps, dbs, c
}

// TestReplicaSchedulersRunEachSlotOnce: two schedulers on one PostgreSQL
// database tick the same slots at the same moments; every slot of every
// job runs exactly once, on one of them.
func TestReplicaSchedulersRunEachSlotOnce(t *testing.T) {
	apps, _, c := replicaApps(t, 2)
	ctx := context.Background()
	var mu sync.Mutex
	runs := map[string]int{}
	byReplica := [2]int{}
	job := func(replica int, name string, every time.Duration) app.Job {
		return app.Job{Name: name, Interval: every, Run: func(ctx context.Context) error {
			mu.Lock()
			runs[name+"@"+app.JobSlot(ctx).Format(time.RFC3339)]++
			byReplica[replica]++
			mu.Unlock()
			time.Sleep(time.Millisecond) // overlap with the other replica's claim
			return nil
		}}
	}
	var scheds []*app.Runner
	for i, a := range apps {
		scheds = append(scheds, a.NewScheduler(job(i, "minutely", time.Minute), job(i, "five", 5*time.Minute), job(i, "hourly", time.Hour)))
	}
	const steps = 40
	for step := 0; step < steps; step++ {
		var wg sync.WaitGroup
		for _, s := range scheds {
			wg.Add(1)
			go func(s *app.Runner) {
				defer wg.Done()
				s.RunDue(ctx)
			}(s)
		}
		wg.Wait()
		c.Advance(30 * time.Second)
	}
	want := map[string]int{"minutely": steps / 2, "five": steps / 10, "hourly": 1}
	got := map[string]int{}
	for k, n := range runs {
		if n != 1 {
			t.Errorf("slot %s ran %d times", k, n)
		}
		got[k[:len(k)-len("@2026-03-01T10:00:00Z")]]++
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: %d slots ran, want %d", name, got[name], n)
		}
	}
	t.Logf("runs by replica: %v", byReplica)
}

// TestReplicaTakesOverADeadReplicasSlot: a run whose replica stopped
// extending its lease (it died) is run again by another replica once the
// lease ends; a live lease is neither interrupted by a starting replica
// nor run twice.
func TestReplicaTakesOverADeadReplicasSlot(t *testing.T) {
	apps, dbs, c := replicaApps(t, 2)
	ctx := context.Background()
	// Replica 0 claimed the 10:00 slot and died without finishing.
	now := c.Now()
	if _, started, _, err := dbs[0].ClaimJobRun(ctx, "hourly", now, now, now.Add(time.Minute)); err != nil || !started {
		t.Fatalf("claim: %v %v", started, err)
	}
	ran := 0
	s := apps[1].NewScheduler(app.Job{Name: "hourly", Interval: time.Hour, Run: func(context.Context) error { ran++; return nil }})
	// Replica 1 starts: the live lease is not interrupted.
	if n, err := dbs[1].InterruptExpiredJobRuns(ctx, c.Now()); err != nil || n != 0 {
		t.Fatalf("interrupted %d live runs (%v)", n, err)
	}
	s.RunDue(ctx)
	if ran != 0 {
		t.Fatal("a slot under a live lease ran again")
	}
	c.Advance(61 * time.Second)
	s.RunDue(ctx) // within the recheck delay: not looked at yet
	c.Advance(20 * time.Second)
	s.RunDue(ctx)
	if ran != 1 {
		t.Fatalf("the dead replica's slot ran %d times after its lease ended, want 1", ran)
	}
	runs, err := dbs[1].RecentJobRuns(ctx, "hourly", 5)
	if err != nil || len(runs) != 1 || runs[0].Tries != 2 || runs[0].Status != app.JobSucceeded {
		t.Fatalf("taken-over run: %+v (%v)", runs, err)
	}
	s.RunDue(ctx)
	if ran != 1 {
		t.Fatal("a finished slot ran again")
	}
}
