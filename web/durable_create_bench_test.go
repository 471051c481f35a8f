package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/storage"
)

// BenchmarkDurableCreate is a durable create through the real router
// (authentication, rate limit, idempotency, handler, group commit with
// synchronous=FULL) from 32 parallel clients, each request with its own
// Idempotency-Key. Besides time and allocations per create it reports
// how long the single writer was busy per create (BEGIN to the end of
// COMMIT, summed over batches), the COMMIT's (fsync's) share of that, and
// the mean batch size; -v logs the batch size histogram.
func BenchmarkDurableCreate(b *testing.B) {
	cases := []struct{ name, path, body string }{
		{"finding", "/v1/findings", `{"title":"CVE-2026-%d on host a","cvss":7.5,"source":"scanner","description":"found by the nightly scan"}`},
		{"vendor", "/v1/vendors", `{"name":"Vendor %d","category":"cloud","processesPersonalData":true,"country":"DE"}`},
	}
	for _, c := range cases {
		for _, par := range []int{16, 0} {
			name := c.name
			if par == 0 {
				name += "/serial"
			}
			b.Run(name, func(b *testing.B) {
				e := newRegistersBenchEnv(b, 1)
				var (
					mu             sync.Mutex
					batches, calls int
					busy, commit   time.Duration
					allocs         uint64
					sizes          = map[int]int{}
				)
				e.db.SetBatchObserver(func(s storage.BatchStats) {
					mu.Lock()
					batches++
					calls += s.Calls
					busy += s.Busy
					commit += s.Commit
					allocs += s.Allocs
					sizes[s.Calls]++
					mu.Unlock()
				})
				var seq atomic.Int64
				key := e.keys[0]
				// 32 clients on 2 cores, as make load; serial is one client,
				// where the writer's time is close to its CPU time.
				b.SetParallelism(max(par, 1))
				if par == 0 {
					runtime.GOMAXPROCS(1)
					defer runtime.GOMAXPROCS(runtime.NumCPU())
				}
				b.ReportAllocs()
				stop := cpuTime(b)
				start := time.Now()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						n := seq.Add(1)
						req := httptest.NewRequest("POST", c.path, strings.NewReader(fmt.Sprintf(c.body, n)))
						req.Header.Set("X-API-Key", key)
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Idempotency-Key", fmt.Sprintf("bench-%d", n))
						rec := httptest.NewRecorder()
						e.srv.ServeHTTP(rec, req)
						if rec.Code != http.StatusCreated {
							b.Errorf("status %d: %s", rec.Code, rec.Body.String())
							return
						}
					}
				})
				elapsed := time.Since(start)
				stop()
				mu.Lock()
				defer mu.Unlock()
				if calls == 0 {
					return
				}
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
				b.ReportMetric(float64(busy.Microseconds())/float64(calls), "writer-us/create")
				b.ReportMetric(float64(commit.Microseconds())/float64(calls), "commit-us/create")
				b.ReportMetric(float64((busy-commit).Microseconds())/float64(calls), "intx-us/create")
				b.ReportMetric(float64(calls)/float64(batches), "calls/batch")
				if par == 0 {
					// Only the writer runs while one client waits for it.
					b.ReportMetric(float64(allocs)/float64(calls), "writer-allocs/create")
				}
				var ks []int
				for k := range sizes {
					ks = append(ks, k)
				}
				sort.Ints(ks)
				var hist []string
				for _, k := range ks {
					hist = append(hist, fmt.Sprintf("%d:%d", k, sizes[k]))
				}
				b.Logf("N=%d batches=%d sizes(calls:batches) %s", b.N, batches, strings.Join(hist, " "))
			})
		}
	}
}
