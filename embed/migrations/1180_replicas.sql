-- Several processes on one database (replicas on PostgreSQL).
--
-- A job run in progress holds its slot for a lease its runner extends
-- while it works; a run whose lease ran out (its process died) is taken
-- over by another runner, and a runner starting up interrupts only runs
-- whose lease has ended, never those of a live replica. NULL: no lease (a
-- single process, as on SQLite).
ALTER TABLE job_runs ADD COLUMN lease_until TEXT;

-- Token buckets of the request rate limits, shared by every replica (on
-- SQLite each process keeps them in memory and this table stays empty).
-- tokens is the bucket's level at updated_us (microseconds since the
-- epoch); allowed is whether the last request took a token.
CREATE TABLE rate_buckets (
	id TEXT PRIMARY KEY,
	tokens REAL NOT NULL,
	updated_us INTEGER NOT NULL,
	allowed INTEGER NOT NULL DEFAULT 1
) WITHOUT ROWID, STRICT;
