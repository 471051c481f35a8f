package app

import (
	"context"
	"time"
)

// Metrics receives measurements of the appliance's background work for
// monitoring. Implementations must be safe for concurrent use and must not
// block. No organization data is passed: labels are job names and
// outcomes only.
type Metrics interface {
	// JobRun is one run of a scheduled job: its name, its status
	// (JobSucceeded, JobFailed, JobInterrupted) and how long it ran.
	JobRun(job, status string, d time.Duration)
	// DeliveryAttempt is one webhook delivery attempt and what became of
	// the delivery: DeliverySucceeded, DeliveryPending (retried later),
	// DeliveryFailed (given up) or DeliveryHeld (webhook paused).
	DeliveryAttempt(status string, d time.Duration)
}

// noMetrics is the Metrics of an App nobody asked to measure.
type noMetrics struct{}

func (noMetrics) JobRun(string, string, time.Duration)  {}
func (noMetrics) DeliveryAttempt(string, time.Duration) {}

// SetMetrics makes m receive the App's measurements; call it before the
// scheduler and the deliverer start.
func (a *App) SetMetrics(m Metrics) {
	if m == nil {
		m = noMetrics{}
	}
	a.metrics = m
}

// DeliveryQueueStore counts webhook deliveries waiting or in flight, across
// organizations.
type DeliveryQueueStore interface {
	CountOpenDeliveries(ctx context.Context) (map[string]int64, error)
}

// DeliveryQueue is the number of webhook deliveries per open status
// (pending, delivering, held) across every organization: the queue depth a
// monitor watches. It reveals no organization's data.
func (a *App) DeliveryQueue(ctx context.Context) (map[string]int64, error) {
	return a.store.CountOpenDeliveries(ctx)
}
