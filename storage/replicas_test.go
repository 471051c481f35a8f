package storage_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/storage/storagetest"
)

// TestReplicasClaimEachMailOnce: two processes on one PostgreSQL database
// claim the mail outbox at once; each message is claimed by one of them,
// and a claim whose lease ran out (its process died) is claimed again.
func TestReplicasClaimEachMailOnce(t *testing.T) {
	url := storagetest.PostgresURL(t)
	ctx := context.Background()
	var dbs []*storage.DB
	for i := 0; i < 2; i++ {
		db, err := storage.OpenURL(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	const n = 100
	for i := 0; i < n; i++ {
		m := &app.QueuedMail{ID: fmt.Sprintf("mail_%03d", i), Kind: "test", To: "a@example.com", Subject: "s", Text: "t",
			Status: "queued", NextAttemptAt: now, CreatedAt: now}
		if err := dbs[i%2].EnqueueMail(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for _, db := range dbs {
		wg.Add(1)
		go func(db *storage.DB) {
			defer wg.Done()
			for {
				ms, err := db.ClaimMail(ctx, now, now.Add(time.Minute), 7)
				if err != nil {
					t.Error(err)
					return
				}
				if len(ms) == 0 {
					return
				}
				mu.Lock()
				for _, m := range ms {
					claimed[m.ID]++
				}
				mu.Unlock()
			}
		}(db)
	}
	wg.Wait()
	if len(claimed) != n {
		t.Fatalf("%d messages claimed, want %d", len(claimed), n)
	}
	for id, c := range claimed {
		if c != 1 {
			t.Errorf("%s claimed %d times", id, c)
		}
	}
	// Nobody finished them: after the lease, they are claimed again.
	again, err := dbs[1].ClaimMail(ctx, now.Add(2*time.Minute), now.Add(3*time.Minute), 2*n)
	if err != nil || len(again) != n {
		t.Fatalf("after the lease: %d reclaimed (%v), want %d", len(again), err, n)
	}
}

// TestRateBucket: the shared token bucket takes the burst, then refuses,
// refills at the rate, never above the burst, and ignores a clock that
// went back.
func TestRateBucket(t *testing.T) {
	db := storagetest.Open(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	take := func(at time.Time) (bool, float64) {
		t.Helper()
		ok, tokens, err := db.TakeRateToken(ctx, "key:k1", 60, 3, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok, tokens
	}
	for i, want := range []float64{2, 1, 0} {
		if ok, tokens := take(now); !ok || tokens != want {
			t.Fatalf("take %d: %v %v, want true %v", i, ok, tokens, want)
		}
	}
	if ok, tokens := take(now); ok || tokens != 0 {
		t.Fatalf("empty bucket: %v %v", ok, tokens)
	}
	if ok, tokens := take(now.Add(-time.Hour)); ok || tokens != 0 {
		t.Fatalf("clock back: %v %v", ok, tokens)
	}
	if ok, tokens := take(now.Add(1500 * time.Millisecond)); !ok || tokens < 0.49 || tokens > 0.51 {
		t.Fatalf("after 1.5 s at 1/s: %v %v", ok, tokens)
	}
	if ok, tokens := take(now.Add(time.Hour)); !ok || tokens != 2 {
		t.Fatalf("after an hour (capped at the burst): %v %v", ok, tokens)
	}
	if n, err := db.PurgeRateBuckets(ctx, now.Add(2*time.Hour)); err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
}
