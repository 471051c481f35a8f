package storage

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// TestCommitObserver: each group commit reports the writes it
// acknowledged and its commit time.
func TestCommitObserver(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	var mu sync.Mutex
	calls, commits := 0, 0
	db.SetCommitObserver(func(n int, d time.Duration) {
		mu.Lock()
		calls += n
		commits++
		mu.Unlock()
		if d < 0 {
			t.Errorf("commit time %v", d)
		}
	})
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		o := &app.Organization{ID: app.NewID("org"), Name: "Acme", Slug: app.NewID("acme"), Plan: app.PlanFree}
		if err := db.InTx(ctx, func(ctx context.Context) error { return db.CreateOrganization(ctx, o) }); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if calls < 3 || commits < 1 || commits > calls {
		t.Fatalf("observed %d calls in %d commits", calls, commits)
	}
	w, r := db.PoolStats()
	if w.MaxOpenConnections != 1 || r.MaxOpenConnections < 1 {
		t.Fatalf("pool stats: writer %+v readers %+v", w, r)
	}
}
