package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Group commit. With synchronous(FULL) every COMMIT waits for an fsync of
// the WAL, so one transaction per write caps writes at the disk's fsync
// rate. Instead, top-level InTx calls queue for one committer goroutine
// that runs every call waiting at that moment in one SQLite transaction,
// each under its own savepoint, and commits once: a batch costs one fsync.
// A call's error rolls back only its savepoint; no call is answered before
// the COMMIT that makes it durable has returned, and a failed COMMIT fails
// every call of the batch (none of them is acknowledged).

// maxBatch bounds one group commit so a burst cannot starve its first caller.
const maxBatch = 128

// pgWriterLock is the PostgreSQL advisory lock key every write
// transaction holds.
const pgWriterLock = 0x636f6d706c79

var errClosed = errors.New("database is closed")

type commitReq struct {
	ctx      context.Context
	fn       func(ctx context.Context) error
	done     chan error
	panicked any
}

type committer struct {
	reqs chan *commitReq
	quit chan struct{}
	done chan struct{} // closed when the loop has exited
	once sync.Once
	wg   sync.WaitGroup
}

func (db *DB) startCommitter() {
	db.gc = &committer{reqs: make(chan *commitReq, maxBatch), quit: make(chan struct{}), done: make(chan struct{})}
	db.gc.wg.Add(1)
	go db.commitLoop()
}

func (db *DB) stopCommitter() {
	db.gc.once.Do(func() { close(db.gc.quit) })
	db.gc.wg.Wait()
}

// groupCommit runs fn in the next batch and waits for its commit.
func (db *DB) groupCommit(ctx context.Context, fn func(ctx context.Context) error) error {
	r := &commitReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case <-db.gc.quit:
		return errClosed
	default:
	}
	select {
	case db.gc.reqs <- r:
	case <-db.gc.quit:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	var err error
	select {
	case err = <-r.done:
	case <-db.gc.done:
		// The loop has exited: it answered r before, or never saw it.
		select {
		case err = <-r.done:
		default:
			return errClosed
		}
	}
	if r.panicked != nil {
		panic(r.panicked)
	}
	return err
}

func (db *DB) commitLoop() {
	defer db.gc.wg.Done()
	defer close(db.gc.done)
	for {
		var first *commitReq
		select {
		case first = <-db.gc.reqs:
		case <-db.gc.quit:
			// Answer anything still queued.
			for {
				select {
				case r := <-db.gc.reqs:
					r.done <- errClosed
				default:
					return
				}
			}
		}
		batch := []*commitReq{first}
	gather:
		for len(batch) < maxBatch {
			select {
			case r := <-db.gc.reqs:
				batch = append(batch, r)
			default:
				break gather
			}
		}
		db.runBatch(batch)
		db.ws.preparePending(context.Background())
	}
}

// runBatch runs the calls of one batch in one transaction.
func (db *DB) runBatch(batch []*commitReq) {
	bg := context.Background()
	began := time.Now()
	var allocs0 uint64
	if db.batchObserver.Load() != nil {
		allocs0 = heapAllocs()
	}
	tx, err := db.w.BeginTx(bg, nil)
	if err != nil {
		for _, r := range batch {
			r.done <- fmt.Errorf("begin: %w", err)
		}
		return
	}
	if db.pg {
		// One writer at a time across every process on the database, as
		// SQLite's write lock gives: replicas' transactions are applied in
		// one order, so read-then-write code and the audit chain stay
		// correct.
		if _, err := tx.ExecContext(bg, "SELECT pg_advisory_xact_lock(?)", pgWriterLock); err != nil {
			_ = tx.Rollback()
			for _, r := range batch {
				r.done <- fmt.Errorf("writer lock: %w", err)
			}
			return
		}
	}
	b := &txBatch{ws: db.ws, stmts: map[string]*sql.Stmt{}}
	q := txQuerier{&txState{tx: tx, batch: b}}
	var ok []*commitReq
	abort := func(err error) {
		_ = tx.Rollback()
		for _, r := range ok {
			r.done <- fmt.Errorf("group commit aborted: %w", err)
		}
	}
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- err
			continue
		}
		if _, err := q.ExecContext(bg, "SAVEPOINT gc"); err != nil {
			r.done <- fmt.Errorf("savepoint: %w", err)
			abort(err)
			for _, rest := range batch[i+1:] {
				rest.done <- fmt.Errorf("group commit aborted: %w", err)
			}
			return
		}
		// A client going away must not interrupt the shared connection
		// (an interrupt rolls back the whole transaction): the call runs
		// to its end without its request's cancellation.
		tctx := context.WithValue(context.WithoutCancel(r.ctx), txKey{}, &txState{tx: tx, batch: b})
		ferr := runCall(r, tctx)
		if ferr == nil && r.panicked == nil {
			if _, err := q.ExecContext(bg, "RELEASE gc"); err != nil {
				// The transaction is gone (SQLite rolled it back): nothing
				// of this batch may be acknowledged.
				r.done <- fmt.Errorf("release savepoint: %w", err)
				abort(err)
				for _, rest := range batch[i+1:] {
					rest.done <- fmt.Errorf("group commit aborted: %w", err)
				}
				return
			}
			ok = append(ok, r)
			continue
		}
		_, rbErr := q.ExecContext(bg, "ROLLBACK TO gc")
		_, relErr := q.ExecContext(bg, "RELEASE gc")
		r.done <- ferr
		if err := errors.Join(rbErr, relErr); err != nil {
			abort(err)
			for _, rest := range batch[i+1:] {
				rest.done <- fmt.Errorf("group commit aborted: %w", err)
			}
			return
		}
	}
	start := time.Now()
	err = tx.Commit()
	if obs := db.commitObserver.Load(); obs != nil && err == nil {
		(*obs)(len(ok), time.Since(start))
	}
	if obs := db.batchObserver.Load(); obs != nil && err == nil {
		end := time.Now()
		(*obs)(BatchStats{Calls: len(batch), Acked: len(ok), Busy: end.Sub(began), Commit: end.Sub(start), Allocs: heapAllocs() - allocs0})
	}
	if err != nil {
		err = fmt.Errorf("commit: %w", mapErr(err))
		for _, r := range ok {
			r.done <- err
		}
		return
	}
	for _, r := range ok {
		r.done <- nil
	}
}

// runCall runs one call, turning a panic into a value re-raised in the
// caller's goroutine.
func runCall(r *commitReq, ctx context.Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked = p
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return r.fn(ctx)
}
