package app

import (
	"context"
	"time"
)

// RateBucketStore keeps the request rate limits' token buckets in the
// database, where every replica sharing it sees them (PostgreSQL). On a
// store one process owns (SQLite) the buckets stay in that process's
// memory and the store is not asked.
type RateBucketStore interface {
	SharedByProcesses() bool
	// TakeRateToken takes one token from bucket id (refilled at perMinute
	// a minute up to burst) at now, atomically, and returns whether there
	// was one and the level left.
	TakeRateToken(ctx context.Context, id string, perMinute, burst int, now time.Time) (ok bool, tokens float64, err error)
	PurgeRateBuckets(ctx context.Context, before time.Time) (int64, error)
}

// SharedRateLimits reports whether rate limits are kept in the database,
// shared by every replica, rather than in this process.
func (a *App) SharedRateLimits() bool {
	s, ok := a.store.(RateBucketStore)
	return ok && s.SharedByProcesses()
}

// TakeRateToken takes a token from a shared bucket (SharedRateLimits).
func (a *App) TakeRateToken(ctx context.Context, id string, perMinute, burst int, now time.Time) (bool, float64, error) {
	s, ok := a.store.(RateBucketStore)
	if !ok {
		return true, float64(burst), nil
	}
	return s.TakeRateToken(ctx, id, perMinute, burst, now)
}

// rateBucketIdle is how long a shared bucket is kept unused; the slowest
// plan refills its burst well within it.
const rateBucketIdle = time.Hour

// PurgeRateBuckets drops shared buckets idle for an hour (full again, the
// same as none). A no-op when the buckets are in memory.
func (a *App) PurgeRateBuckets(ctx context.Context) error {
	s, ok := a.store.(RateBucketStore)
	if !ok || !s.SharedByProcesses() {
		return nil
	}
	_, err := s.PurgeRateBuckets(ctx, a.Now().Add(-rateBucketIdle))
	return err
}
