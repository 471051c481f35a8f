package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkHandlers measures the full handler chain (middleware, auth,
// rate limit, handler, storage) in process, without the network: CPU time
// and allocations per request.
func BenchmarkHandlers(b *testing.B) {
	fe := newFuzzEnv(b)
	for i := 0; i < 200; i++ {
		req := httptest.NewRequest("POST", "/v1/vendors", strings.NewReader(`{"name":"Bench vendor","category":"cloud"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", fe.key)
		fe.srv.ServeHTTP(httptest.NewRecorder(), req)
	}
	for _, c := range []struct{ name, path string }{
		{"health", "/v1/health"},
		{"get_organization", "/v1/organization"},
		{"get_vendor", "/v1/vendors/" + fe.vendor},
		{"list_vendors", "/v1/vendors?perPage=50&criticality=standard"},
		{"list_people", "/v1/people?perPage=25"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			start := benchCPU()
			for b.Loop() {
				req := httptest.NewRequest("GET", c.path, nil)
				req.Header.Set("X-API-Key", fe.key)
				rec := httptest.NewRecorder()
				fe.srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", c.path, rec.Code, rec.Body.String())
				}
			}
			b.ReportMetric(float64((benchCPU()-start).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}

func benchCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
