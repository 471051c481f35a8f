package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.RateBucketStore = (*DB)(nil)

// rateRefill is a bucket's level at ?4 (microseconds): its stored level
// plus what the rate ?3 (tokens per microsecond) refilled since, capped at
// the burst ?2. CASE rather than min/max so both engines read it alike.
const rateRefill = `(CASE WHEN rate_buckets.tokens + (CASE WHEN ?4 > rate_buckets.updated_us THEN ?4 - rate_buckets.updated_us ELSE 0 END) * CAST(?3 AS DOUBLE PRECISION) > CAST(?2 AS DOUBLE PRECISION)
	THEN CAST(?2 AS DOUBLE PRECISION)
	ELSE rate_buckets.tokens + (CASE WHEN ?4 > rate_buckets.updated_us THEN ?4 - rate_buckets.updated_us ELSE 0 END) * CAST(?3 AS DOUBLE PRECISION) END)`

// TakeRateToken takes one token from the bucket id (perMinute a minute,
// up to burst) in one atomic statement, and returns whether it had one and
// the level left. On PostgreSQL it runs on its own small pool, in
// autocommit, so a request never waits for the writer lock; concurrent
// requests on the same key queue on the bucket's row only.
func (db *DB) TakeRateToken(ctx context.Context, id string, perMinute, burst int, now time.Time) (bool, float64, error) {
	q := querier(db.w)
	if db.free != nil {
		q = db.free
	}
	var tokens float64
	var allowed int64
	err := q.QueryRowContext(ctx, `INSERT INTO rate_buckets (id, tokens, updated_us, allowed) VALUES (?1, CAST(?2 AS DOUBLE PRECISION) - 1, ?4, 1)
		ON CONFLICT (id) DO UPDATE SET
			tokens = CASE WHEN `+rateRefill+` >= 1 THEN `+rateRefill+` - 1 ELSE `+rateRefill+` END,
			allowed = CASE WHEN `+rateRefill+` >= 1 THEN 1 ELSE 0 END,
			updated_us = CASE WHEN ?4 > rate_buckets.updated_us THEN ?4 ELSE rate_buckets.updated_us END
		RETURNING tokens, allowed`, id, float64(burst), float64(perMinute)/60e6, now.UnixMicro()).Scan(&tokens, &allowed)
	if err != nil {
		return false, 0, fmt.Errorf("take rate token: %w", err)
	}
	return allowed == 1, tokens, nil
}

// PurgeRateBuckets deletes buckets unused since before: a bucket idle
// that long is full again, the same as no row.
func (db *DB) PurgeRateBuckets(ctx context.Context, before time.Time) (int64, error) {
	q := querier(db.w)
	if db.free != nil {
		q = db.free
	}
	res, err := q.ExecContext(ctx, `DELETE FROM rate_buckets WHERE updated_us < ?`, before.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("purge rate buckets: %w", err)
	}
	return res.RowsAffected()
}
