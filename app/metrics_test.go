package app_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// recMetrics records what the app reports.
type recMetrics struct {
	mu   sync.Mutex
	jobs []string
}

func (m *recMetrics) JobRun(job, status string, d time.Duration) {
	m.mu.Lock()
	m.jobs = append(m.jobs, job+" "+status)
	m.mu.Unlock()
}
func (m *recMetrics) DeliveryAttempt(string, time.Duration) {}

// TestSchedulerReportsJobRuns: every run reaches the metrics with its job
// name and status, a panic as failed; and the delivery queue is counted
// per open status.
func TestSchedulerReportsJobRuns(t *testing.T) {
	t.Parallel()
	a, _, _ := newJobsApp(t)
	m := &recMetrics{}
	a.SetMetrics(m)
	ctx := context.Background()
	s := a.NewScheduler(
		app.Job{Name: "ok", Interval: time.Hour, Run: func(context.Context) error { return nil }},
		app.Job{Name: "bad", Interval: time.Hour, Run: func(context.Context) error { return errors.New("no") }},
		app.Job{Name: "boom", Interval: time.Hour, Run: func(context.Context) error { panic("boom") }},
	)
	s.RunDue(ctx)
	got := map[string]bool{}
	for _, j := range m.jobs {
		got[j] = true
	}
	for _, want := range []string{"ok succeeded", "bad failed", "boom failed"} {
		if !got[want] {
			t.Errorf("metrics lack %q: %v", want, m.jobs)
		}
	}
	q, err := a.DeliveryQueue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{app.DeliveryPending, app.DeliveryDelivering, app.DeliveryHeld} {
		if n, ok := q[st]; !ok || n != 0 {
			t.Errorf("queue %s: %d, %v", st, n, ok)
		}
	}
}
