package web

import (
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestDirectorySyncFigures measures a sync of 10,000 users from a real
// slapd and a second, unchanged sync, and logs the figures (no timed
// assertion). It runs only when asked:
//
//	COMPLIANCE_SYNC_FIGURES=1 go test ./web/ -run TestDirectorySyncFigures -v
func TestDirectorySyncFigures(t *testing.T) {
	if os.Getenv("COMPLIANCE_SYNC_FIGURES") == "" {
		t.Skip("set COMPLIANCE_SYNC_FIGURES=1 to measure a 10,000-user sync")
	}
	const users = 10000
	s := newSyncEnv(t, users)
	peak := func(run func()) (time.Duration, uint64) {
		runtime.GC()
		var mu sync.Mutex
		var max uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				mu.Lock()
				if ms.HeapInuse > max {
					max = ms.HeapInuse
				}
				mu.Unlock()
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		start := time.Now()
		run()
		d := time.Since(start)
		close(stop)
		<-done
		return d, max
	}
	lastWrite := "9999"
	tables := []string{"users", "memberships", "person_directory", "audit_log", "events", "tasks", "training_assignments", "sync_run_results"}
	rows := func() map[string]int {
		out := map[string]int{}
		for _, tb := range tables {
			out[tb] = s.count(t, "SELECT count(*) FROM "+tb)
		}
		out["memberships.updated"] = s.count(t, `SELECT count(*) FROM memberships WHERE updated_at > created_at`)
		// Rows written after the first sync's last write.
		out["person_directory.updated"] = s.count(t, `SELECT count(*) FROM person_directory WHERE updated_at > ?`, lastWrite)
		return out
	}
	var first, second map[string]any
	d1, m1 := peak(func() { first = s.sync(t, "") })
	if err := s.raw().QueryRow(`SELECT max(updated_at) FROM person_directory`).Scan(&lastWrite); err != nil {
		t.Fatal(err)
	}
	before := rows()
	s.clock.Advance(time.Hour)
	d2, m2 := peak(func() { second = s.sync(t, "") })
	after := rows()
	t.Logf("first sync of %d users: %s, peak heap in use %.1f MiB, counts created=%v skipped=%v", users, d1.Round(time.Millisecond), float64(m1)/(1<<20), first["created"], first["skipped"])
	t.Logf("second, unchanged sync: %s, peak heap in use %.1f MiB, counts unchanged=%v created=%v updated=%v", d2.Round(time.Millisecond), float64(m2)/(1<<20), second["unchanged"], second["created"], second["updated"])
	for _, k := range append(tables, "memberships.updated", "person_directory.updated") {
		t.Logf("second sync wrote %s: %d", k, after[k]-before[k])
	}
	if second["created"].(float64) != 0 || second["updated"].(float64) != 0 || after["memberships"] != before["memberships"] || after["person_directory.updated"] != 0 {
		t.Fatalf("the unchanged sync changed people: %v", second)
	}
}
