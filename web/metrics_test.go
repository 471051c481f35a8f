package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/metrics"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// TestRequestMetrics: every request is counted under its route template,
// method and status (API routes, web pages, unmatched paths); no label
// carries an id, an organization or a query.
func TestRequestMetrics(t *testing.T) {
	t.Parallel()
	reg := metrics.New("test", metrics.Sources{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	e := newTestServerWith(t, func(o *Options) { o.Observer = reg })
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	rec := e.do("POST", "/v1/vendors", key, map[string]any{"name": "Cloudy"})
	wantStatus(t, rec, http.StatusCreated)
	id := obj(t, rec)["id"].(string)
	wantStatus(t, e.do("GET", "/v1/vendors/"+id+"?secret=x", key, nil), http.StatusOK)
	wantStatus(t, e.do("GET", "/v1/vendors/vnd_nope", key, nil), http.StatusNotFound)
	wantStatus(t, e.do("GET", "/v1/no-such-route/"+id, key, nil), http.StatusNotFound)
	wantStatus(t, e.do("GET", "/login", "", nil), http.StatusOK)

	req := httptest.NewRequest("GET", "/metrics", nil)
	out := httptest.NewRecorder()
	reg.Handler("").ServeHTTP(out, req)
	body := out.Body.String()
	for _, want := range []string{
		`compliance_http_request_duration_seconds_count{method="POST",route="/v1/vendors",status="201"} 1`,
		`compliance_http_request_duration_seconds_count{method="GET",route="/v1/vendors/{id}",status="200"} 1`,
		`compliance_http_request_duration_seconds_count{method="GET",route="/v1/vendors/{id}",status="404"} 1`,
		`compliance_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"} 1`,
		`compliance_http_request_duration_seconds_count{method="GET",route="/login",status="200"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
	for _, leak := range []string{id, org, "vnd_nope", "secret", "Cloudy", "no-such-route"} {
		if strings.Contains(body, leak) {
			t.Errorf("exposition carries %q", leak)
		}
	}
}

// BenchmarkListVendorsMetrics is a page of 50 vendors with the request
// metrics off and on: the difference is the metrics' cost per request.
func BenchmarkListVendorsMetrics(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		var obs httpx.RequestObserver
		if on {
			name = "on"
			obs = metrics.New("bench", metrics.Sources{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		}
		b.Run(name, func(b *testing.B) {
			srv, key := benchServerWith(b, obs)
			for i := 0; i < 50; i++ {
				req := httptest.NewRequest("POST", "/v1/vendors", strings.NewReader(`{"name":"Vendor `+strconv.Itoa(i)+`"}`))
				req.Header.Set("X-API-Key", key)
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, req)
				if w.Code != http.StatusCreated {
					b.Fatal(w.Code, w.Body.String())
				}
			}
			req := httptest.NewRequest("GET", "/v1/vendors?perPage=50", nil)
			req.Header.Set("X-API-Key", key)
			b.ReportAllocs()
			b.ResetTimer()
			defer cpuTime(b)()
			for b.Loop() {
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatal(w.Code)
				}
			}
		})
	}
}
