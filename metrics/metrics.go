// Package metrics exposes the appliance's measurements in the Prometheus
// text format (github.com/prometheus/client_golang): HTTP requests by route
// template, method and status; group commits and connection pool waits of
// the database; scheduler job runs; the webhook queue and delivery
// outcomes; the Go runtime and process. No label carries organization
// data: routes are templates, jobs are names.
package metrics

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const namespace = "compliance"

// Sources are the callbacks read at scrape time.
type Sources struct {
	// Pools returns the database's writer and reader pool statistics.
	Pools func() (writer, readers sql.DBStats)
	// DeliveryQueue counts webhook deliveries per open status.
	DeliveryQueue func(ctx context.Context) (map[string]int64, error)
}

// Registry holds every metric of one process.
type Registry struct {
	reg        *prometheus.Registry
	requests   *prometheus.HistogramVec
	commits    prometheus.Histogram
	commitTime prometheus.Histogram
	jobs       *prometheus.HistogramVec
	deliveries *prometheus.HistogramVec
}

// New registers the metrics; version labels the build info.
func New(version string, src Sources, log *slog.Logger) *Registry {
	m := &Registry{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: "http", Name: "request_duration_seconds",
		Help:    "HTTP requests by route template, method and status, and how long they took.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
	}, []string{"route", "method", "status"})
	m.commits = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: "db", Name: "commit_batch_calls",
		Help:    "Writes acknowledged per group commit (one fsync each).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128},
	})
	m.commitTime = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: "db", Name: "commit_duration_seconds",
		Help:    "Time of COMMIT, with its fsync, per group commit.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
	})
	m.jobs = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: "scheduler", Name: "job_duration_seconds",
		Help:    "Scheduled job runs by job and status, and how long they ran.",
		Buckets: []float64{.01, .1, 1, 10, 60, 300, 1800},
	}, []string{"job", "status"})
	m.deliveries = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: "webhook", Name: "delivery_attempt_duration_seconds",
		Help:    "Webhook delivery attempts by the delivery's status afterwards (succeeded, pending: retried later, failed: given up, held), and how long the receiver took.",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"status"})
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "build_info",
		Help: "The running binary's version (always 1)."}, []string{"version"})
	build.WithLabelValues(version).Set(1)
	m.reg.MustRegister(m.requests, m.commits, m.commitTime, m.jobs, m.deliveries, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if src.Pools != nil {
		m.reg.MustRegister(&poolCollector{pools: src.Pools})
	}
	if src.DeliveryQueue != nil {
		m.reg.MustRegister(&queueCollector{count: src.DeliveryQueue, log: log})
	}
	return m
}

// ObserveRequest records one answered request (httpx.RequestObserver).
func (m *Registry) ObserveRequest(route, method string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Observe(d.Seconds())
}

// ObserveCommit records one group commit of the database.
func (m *Registry) ObserveCommit(calls int, d time.Duration) {
	m.commits.Observe(float64(calls))
	m.commitTime.Observe(d.Seconds())
}

// JobRun records one scheduled job run (app.Metrics).
func (m *Registry) JobRun(job, status string, d time.Duration) {
	m.jobs.WithLabelValues(job, status).Observe(d.Seconds())
}

// DeliveryAttempt records one webhook delivery attempt (app.Metrics).
func (m *Registry) DeliveryAttempt(status string, d time.Duration) {
	m.deliveries.WithLabelValues(status).Observe(d.Seconds())
}

// Handler serves the exposition. A non-empty token is required as
// "Authorization: Bearer <token>".
func (m *Registry) Handler(token string) http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	if token == "" {
		return h
	}
	want := "Bearer " + token
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !constantTimeEqual(r.Header.Get("Authorization"), want) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "metrics need the configured bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

var (
	poolWaits = prometheus.NewDesc(namespace+"_db_pool_waits_total",
		"Times a query waited for a free connection, per pool (writer, readers).", []string{"pool"}, nil)
	poolWaitTime = prometheus.NewDesc(namespace+"_db_pool_wait_seconds_total",
		"Time spent waiting for a free connection, per pool.", []string{"pool"}, nil)
	poolInUse = prometheus.NewDesc(namespace+"_db_pool_connections_in_use",
		"Connections in use, per pool.", []string{"pool"}, nil)
	queueDepth = prometheus.NewDesc(namespace+"_webhook_queue_deliveries",
		"Webhook deliveries waiting or in flight, per status (pending, delivering, held), across organizations.", []string{"status"}, nil)
)

// poolCollector reads the pools' statistics at scrape time.
type poolCollector struct {
	pools func() (writer, readers sql.DBStats)
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- poolWaits
	ch <- poolWaitTime
	ch <- poolInUse
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	w, r := c.pools()
	for _, p := range []struct {
		name string
		s    sql.DBStats
	}{{"writer", w}, {"readers", r}} {
		ch <- prometheus.MustNewConstMetric(poolWaits, prometheus.CounterValue, float64(p.s.WaitCount), p.name)
		ch <- prometheus.MustNewConstMetric(poolWaitTime, prometheus.CounterValue, p.s.WaitDuration.Seconds(), p.name)
		ch <- prometheus.MustNewConstMetric(poolInUse, prometheus.GaugeValue, float64(p.s.InUse), p.name)
	}
}

// queueCollector counts the webhook queue at scrape time.
type queueCollector struct {
	count func(ctx context.Context) (map[string]int64, error)
	log   *slog.Logger
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- queueDepth }

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := c.count(ctx)
	if err != nil {
		c.log.Warn("metrics: webhook queue not counted", slog.Any("error", err))
		ch <- prometheus.NewInvalidMetric(queueDepth, err)
		return
	}
	for status, v := range n {
		ch <- prometheus.MustNewConstMetric(queueDepth, prometheus.GaugeValue, float64(v), status)
	}
}

// constantTimeEqual compares a presented credential in constant time.
func constantTimeEqual(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
