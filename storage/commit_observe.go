package storage

import "time"

// BatchStats describes one group commit from the writer's side.
type BatchStats struct {
	Calls  int           // write transactions run in the batch
	Acked  int           // of which committed (the others returned an error)
	Busy   time.Duration // writer time: BEGIN to the end of COMMIT
	Commit time.Duration // COMMIT alone, with its fsync
}

// SetBatchObserver makes fn see every committed group commit: how many
// calls it ran and how long it held the writer. Benchmarks use it to
// measure writer time per write; fn must not block.
func (db *DB) SetBatchObserver(fn func(BatchStats)) {
	db.batchObserver.Store(&fn)
}
