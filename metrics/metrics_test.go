package metrics

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// scrape fetches the exposition through h and parses it with the
// Prometheus text parser.
func scrape(t *testing.T, h http.Handler, auth string) map[string]*dto.MetricFamily {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	return fams
}

// sample returns the metric of fam whose labels include want.
func sample(t *testing.T, fams map[string]*dto.MetricFamily, fam string, want map[string]string) *dto.Metric {
	t.Helper()
	f, ok := fams[fam]
	if !ok {
		t.Fatalf("no metric family %s", fam)
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m
	}
	t.Fatalf("%s has no sample with %v", fam, want)
	return nil
}

func TestExposition(t *testing.T) {
	t.Parallel()
	src := Sources{
		Pools: func() (sql.DBStats, sql.DBStats) {
			return sql.DBStats{WaitCount: 3, WaitDuration: 1500 * time.Millisecond, InUse: 1}, sql.DBStats{InUse: 2}
		},
		DeliveryQueue: func(context.Context) (map[string]int64, error) {
			return map[string]int64{"pending": 7, "delivering": 1, "held": 0}, nil
		},
	}
	m := New("1.2.3", src, discard())
	m.ObserveRequest("/v1/vendors/{id}", "GET", 200, 3*time.Millisecond)
	m.ObserveRequest("/v1/vendors/{id}", "GET", 200, 40*time.Millisecond)
	m.ObserveRequest("unmatched", "other", 404, time.Millisecond)
	m.ObserveCommit(5, 2*time.Millisecond)
	m.JobRun("expiry_scan", "succeeded", 20*time.Millisecond)
	m.DeliveryAttempt("pending", 300*time.Millisecond)
	fams := scrape(t, m.Handler(""), "")

	req := sample(t, fams, "compliance_http_request_duration_seconds", map[string]string{"route": "/v1/vendors/{id}", "method": "GET", "status": "200"})
	if req.Histogram.GetSampleCount() != 2 || req.Histogram.GetSampleSum() < 0.042 {
		t.Errorf("requests: %v", req.Histogram)
	}
	sample(t, fams, "compliance_http_request_duration_seconds", map[string]string{"route": "unmatched", "method": "other", "status": "404"})
	if c := sample(t, fams, "compliance_db_commit_batch_calls", nil); c.Histogram.GetSampleSum() != 5 {
		t.Errorf("commit batch: %v", c.Histogram)
	}
	sample(t, fams, "compliance_db_commit_duration_seconds", nil)
	sample(t, fams, "compliance_scheduler_job_duration_seconds", map[string]string{"job": "expiry_scan", "status": "succeeded"})
	sample(t, fams, "compliance_webhook_delivery_attempt_duration_seconds", map[string]string{"status": "pending"})
	if q := sample(t, fams, "compliance_webhook_queue_deliveries", map[string]string{"status": "pending"}); q.Gauge.GetValue() != 7 {
		t.Errorf("queue: %v", q)
	}
	if w := sample(t, fams, "compliance_db_pool_waits_total", map[string]string{"pool": "writer"}); w.Counter.GetValue() != 3 {
		t.Errorf("pool waits: %v", w)
	}
	if w := sample(t, fams, "compliance_db_pool_wait_seconds_total", map[string]string{"pool": "writer"}); w.Counter.GetValue() != 1.5 {
		t.Errorf("pool wait time: %v", w)
	}
	sample(t, fams, "compliance_db_pool_connections_in_use", map[string]string{"pool": "readers"})
	sample(t, fams, "compliance_build_info", map[string]string{"version": "1.2.3"})
	sample(t, fams, "go_goroutines", nil)
}

func TestToken(t *testing.T) {
	t.Parallel()
	m := New("dev", Sources{}, discard())
	h := m.Handler("0123456789abcdef-token")
	for _, auth := range []string{"", "Bearer wrong", "0123456789abcdef-token", "Bearer 0123456789abcdef-toke"} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("auth %q: %d", auth, rec.Code)
		}
		if strings.Contains(rec.Body.String(), "go_goroutines") {
			t.Errorf("auth %q: metrics leaked", auth)
		}
	}
	scrape(t, h, "Bearer 0123456789abcdef-token")
}

// A failing queue count leaves the rest of the exposition intact.
func TestQueueCountFailure(t *testing.T) {
	t.Parallel()
	m := New("dev", Sources{DeliveryQueue: func(context.Context) (map[string]int64, error) {
		return nil, errors.New("database is closed")
	}}, discard())
	m.JobRun("purge_events", "failed", time.Second)
	req := httptest.NewRequest("GET", "/metrics", nil)
	rec := httptest.NewRecorder()
	m.Handler("").ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), `compliance_scheduler_job_duration_seconds_count{job="purge_events",status="failed"} 1`) {
		t.Fatalf("the other metrics must still be served:\n%s", rec.Body)
	}
}

// BenchmarkObserveRequest is what the metrics add to every request.
func BenchmarkObserveRequest(b *testing.B) {
	m := New("bench", Sources{}, discard())
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveRequest("/v1/vendors/{id}", "GET", 200, 3*time.Millisecond)
	}
}
