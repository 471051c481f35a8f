-- Change counters of the in-memory read model: one row per organization
-- and cached resource, incremented by triggers (created by storage after
-- the migrations, so a later table rebuild cannot lose them) in the same
-- transaction as every write to a table the resource's lists read. A
-- cached list or row is served only while its counter is unchanged, which
-- holds for writes by any process or code path.
CREATE TABLE read_versions (
	organization_id TEXT NOT NULL,
	resource TEXT NOT NULL,
	n INTEGER NOT NULL,
	PRIMARY KEY (organization_id, resource)
) WITHOUT ROWID, STRICT;
