package scanner

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// BenchmarkPentestScan scans the weak fixture site with the real port list
// of each depth (on loopback, so closed ports answer at once) and reports
// the requests and connection attempts sent and the peak heap in use.
// Listeners of other programs on the machine are scanned too.
func BenchmarkPentestScan(b *testing.B) {
	for _, depth := range []string{"quick", "standard"} {
		b.Run(depth, func(b *testing.B) {
			f := newFixture(b)
			s := New(Options{LookupIP: lookup, RootCAs: f.roots, ConnectTimeout: 500 * time.Millisecond, BannerTimeout: 300 * time.Millisecond})
			var peak atomic.Uint64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				var ms runtime.MemStats
				for {
					runtime.ReadMemStats(&ms)
					if ms.HeapInuse > peak.Load() {
						peak.Store(ms.HeapInuse)
					}
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			}()
			var requests int64
			b.ResetTimer()
			for range b.N {
				res, err := s.Scan(context.Background(), app.ScanRequest{TargetURL: hostURL(f.weakHTTP, "weak.test"), Depth: depth,
					Guard: loopbackGuard, RatePerSecond: 5000})
				if err != nil {
					b.Fatal(err)
				}
				requests += res.RequestsSent
			}
			b.StopTimer()
			close(stop)
			wg.Wait()
			b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
		})
	}
}
