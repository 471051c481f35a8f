package web

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/webhook"
)

// deliveryBenchEnv is a real-clock app with four subscriptions to one local
// receiver that notes when each vendor's event first arrives.
type deliveryBenchEnv struct {
	a     *app.App
	ctx   context.Context
	mu    sync.Mutex
	count int
	first map[string]time.Time // vendor id -> first arrival
	done  chan struct{}
	want  int
}

func newDeliveryBenchEnv(b *testing.B) *deliveryBenchEnv {
	b.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	a := app.New(db, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
	o, err := a.CreateOrganization(ctx, "Bench", "enterprise")
	if err != nil {
		b.Fatal(err)
	}
	be := &deliveryBenchEnv{a: a, ctx: app.SystemContext(ctx, o.ID), first: map[string]time.Time{}, done: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		_ = json.NewDecoder(r.Body).Decode(&env)
		now := time.Now()
		be.mu.Lock()
		be.count++
		if _, ok := be.first[env.Data.ID]; !ok {
			be.first[env.Data.ID] = now
		}
		if be.count == be.want {
			close(be.done)
		}
		be.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	for i := 0; i < 4; i++ {
		if _, err := a.CreateWebhook(be.ctx, app.WebhookInput{URL: app.Ptr(srv.URL), Events: &[]string{"vendor.created"}}); err != nil {
			b.Fatal(err)
		}
	}
	return be
}

func (be *deliveryBenchEnv) vendor(b *testing.B) string {
	v, err := be.a.CreateVendor(be.ctx, app.VendorInput{Name: app.Ptr("Vendor")})
	if err != nil {
		b.Fatal(err)
	}
	return v.ID
}

// BenchmarkWebhookThroughput drains a backlog of b.N events to four
// subscriptions with the default worker pool and reports deliveries/s.
func BenchmarkWebhookThroughput(b *testing.B) {
	be := newDeliveryBenchEnv(b)
	be.want = 4 * b.N
	for i := 0; i < b.N; i++ {
		be.vendor(b)
	}
	d := be.a.NewDeliverer(webhook.NewClient(app.DefaultNetworkPolicy()), app.DeliveryOptions{})
	ctx, stop := context.WithCancel(context.Background())
	b.ResetTimer()
	start := time.Now()
	d.Start(ctx)
	select {
	case <-be.done:
	case <-time.After(10 * time.Minute):
		b.Fatal("backlog not drained")
	}
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	d.Wait()
	b.ReportMetric(float64(be.want)/elapsed.Seconds(), "deliveries/s")
}

// BenchmarkWebhookLatency commits one event every 20 ms with the workers
// running and reports the time from commit to the first request at the
// receiver (p50, p99).
func BenchmarkWebhookLatency(b *testing.B) {
	be := newDeliveryBenchEnv(b)
	be.want = 4 * b.N
	d := be.a.NewDeliverer(webhook.NewClient(app.DefaultNetworkPolicy()), app.DeliveryOptions{})
	ctx, stop := context.WithCancel(context.Background())
	d.Start(ctx)
	committed := map[string]time.Time{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := be.vendor(b)
		committed[id] = time.Now()
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-be.done:
	case <-time.After(5 * time.Minute):
		b.Fatal("not delivered")
	}
	b.StopTimer()
	stop()
	d.Wait()
	var lat []time.Duration
	be.mu.Lock()
	for id, c := range committed {
		lat = append(lat, be.first[id].Sub(c))
	}
	be.mu.Unlock()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
