package storage

import (
	"runtime/metrics"
	"time"
)

// BatchStats describes one group commit from the writer's side.
type BatchStats struct {
	Calls  int           // write transactions run in the batch
	Acked  int           // of which committed (the others returned an error)
	Busy   time.Duration // writer time: BEGIN to the end of COMMIT
	Commit time.Duration // COMMIT alone, with its fsync
	// Allocs is the process's heap allocations during the batch: the
	// writer's own when nothing else runs (one client, GOMAXPROCS=1).
	Allocs uint64
}

// heapAllocs is the process's count of heap allocations so far.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// SetBatchObserver makes fn see every committed group commit: how many
// calls it ran and how long it held the writer. Benchmarks use it to
// measure writer time per write; fn must not block.
func (db *DB) SetBatchObserver(fn func(BatchStats)) {
	db.batchObserver.Store(&fn)
}
