package storage

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.JobRunStore = (*DB)(nil)

// BeginJobRun records the start of a slot's run. A slot that already has a
// run is left alone (started false) unless that run was interrupted, in
// which case it starts again with one more try.
func (db *DB) BeginJobRun(ctx context.Context, job string, slot, at time.Time) (int64, bool, error) {
	var id int64
	err := db.wr(ctx).QueryRowContext(ctx, `INSERT INTO job_runs (job, slot, status, tries, started_at) VALUES (?, ?, 'running', 1, ?)
		ON CONFLICT (job, slot) DO UPDATE SET status = 'running', tries = job_runs.tries + 1, started_at = excluded.started_at,
			finished_at = NULL, duration_ms = NULL, error = ''
		WHERE job_runs.status = 'interrupted'
		RETURNING id`, job, ts(slot), ts(at)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, mapErr(err)
	}
	return id, true, nil
}

// EndJobRun records a run's outcome.
func (db *DB) EndJobRun(ctx context.Context, id int64, status string, at time.Time, dur time.Duration, errMsg string) error {
	_, err := db.wr(ctx).ExecContext(ctx, `UPDATE job_runs SET status = ?, finished_at = ?, duration_ms = ?, error = ? WHERE id = ?`,
		status, ts(at), dur.Milliseconds(), errMsg, id)
	return err
}

// InterruptJobRuns marks every run still "running" as interrupted; it runs
// at start, when no run of this process exists yet.
func (db *DB) InterruptJobRuns(ctx context.Context) (int64, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE job_runs SET status = 'interrupted', error = 'the process stopped during the run'
		WHERE status = 'running'`)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// RecentJobRuns returns a job's last n runs, newest first.
func (db *DB) RecentJobRuns(ctx context.Context, job string, n int) ([]app.JobRun, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT id, job, slot, status, tries, started_at, finished_at, duration_ms, error
		FROM job_runs WHERE job = ? ORDER BY slot DESC, id DESC LIMIT ?`, job, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []app.JobRun{}
	for rows.Next() {
		var r app.JobRun
		var slot, started string
		var finished sql.NullString
		var dur sql.NullInt64
		if err := rows.Scan(&r.ID, &r.Job, &slot, &r.Status, &r.Tries, &started, &finished, &dur, &r.Error); err != nil {
			return nil, err
		}
		r.Slot, r.StartedAt, r.FinishedAt = parseTS(slot), parseTS(started), parseTSPtr(finished)
		if dur.Valid {
			r.DurationMS = app.Ptr(dur.Int64)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// JobNames lists every job that has a recorded run.
func (db *DB) JobNames(ctx context.Context) ([]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT DISTINCT job FROM job_runs ORDER BY job`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

var _ app.JobLeaseStore = (*DB)(nil)

// SharedByProcesses reports whether replicas share the database
// (PostgreSQL); a SQLite file has one serving process.
func (db *DB) SharedByProcesses() bool { return db.pg }

// ClaimJobRun starts a slot's run under a lease. Besides an interrupted
// run, it takes over a running one whose lease ended before at (its
// process died). busy reports a slot running under a live lease.
func (db *DB) ClaimJobRun(ctx context.Context, job string, slot, at, leaseUntil time.Time) (int64, bool, bool, error) {
	var id int64
	err := db.wr(ctx).QueryRowContext(ctx, `INSERT INTO job_runs (job, slot, status, tries, started_at, lease_until) VALUES (?, ?, 'running', 1, ?, ?)
		ON CONFLICT (job, slot) DO UPDATE SET status = 'running', tries = job_runs.tries + 1, started_at = excluded.started_at,
			lease_until = excluded.lease_until, finished_at = NULL, duration_ms = NULL, error = ''
		WHERE job_runs.status = 'interrupted'
			OR (job_runs.status = 'running' AND job_runs.lease_until IS NOT NULL AND job_runs.lease_until <= excluded.started_at)
		RETURNING id`, job, ts(slot), ts(at), ts(leaseUntil)).Scan(&id)
	if err == nil {
		return id, true, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, false, mapErr(err)
	}
	var status string
	err = db.wr(ctx).QueryRowContext(ctx, `SELECT status FROM job_runs WHERE job = ? AND slot = ?`, job, ts(slot)).Scan(&status)
	if err != nil {
		return 0, false, false, mapErr(err)
	}
	return 0, false, status == app.JobRunning, nil
}

// ExtendJobRun moves the lease of a running run.
func (db *DB) ExtendJobRun(ctx context.Context, id int64, leaseUntil time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `UPDATE job_runs SET lease_until = ? WHERE id = ? AND status = 'running'`, ts(leaseUntil), id)
	return err
}

// InterruptExpiredJobRuns marks running runs whose lease ended by now, or
// that have none, as interrupted; live replicas' runs stay running.
func (db *DB) InterruptExpiredJobRuns(ctx context.Context, now time.Time) (int64, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE job_runs SET status = 'interrupted', error = 'the process stopped during the run'
		WHERE status = 'running' AND (lease_until IS NULL OR lease_until <= ?)`, ts(now))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
