-- PostgreSQL only: vendors and findings take SQLite's new keys (primary
-- key (organization_id, id), id unique for the foreign keys pointing at
-- it) and lose the rowid column (the SQLite tables have no rowid any more;
-- a copy between the engines matches columns). PostgreSQL stores rows in a
-- heap either way, so nothing is rebuilt: the constraints change in place.
-- The foreign keys on id depend on the old primary key's index, so they are
-- dropped and added again as they were.
ALTER TABLE vendors ADD CONSTRAINT vendors_id_key UNIQUE (id);
ALTER TABLE vendor_assessments DROP CONSTRAINT vendor_assessments_vendor_id_fkey;
ALTER TABLE vendors DROP CONSTRAINT vendors_pkey;
ALTER TABLE vendors ADD CONSTRAINT vendors_pkey PRIMARY KEY (organization_id, id);
ALTER TABLE vendor_assessments ADD CONSTRAINT vendor_assessments_vendor_id_fkey
    FOREIGN KEY (vendor_id) REFERENCES vendors(id) ON DELETE CASCADE;
DROP INDEX vendors_org;
ALTER TABLE vendors DROP COLUMN rowid;

ALTER TABLE findings ADD CONSTRAINT findings_id_key UNIQUE (id);
ALTER TABLE finding_controls DROP CONSTRAINT finding_controls_finding_id_fkey;
ALTER TABLE corrective_actions DROP CONSTRAINT corrective_actions_finding_id_fkey;
ALTER TABLE findings DROP CONSTRAINT findings_pkey;
ALTER TABLE findings ADD CONSTRAINT findings_pkey PRIMARY KEY (organization_id, id);
ALTER TABLE finding_controls ADD CONSTRAINT finding_controls_finding_id_fkey
    FOREIGN KEY (finding_id) REFERENCES findings(id) ON DELETE CASCADE;
ALTER TABLE corrective_actions ADD CONSTRAINT corrective_actions_finding_id_fkey
    FOREIGN KEY (finding_id) REFERENCES findings(id);
DROP INDEX findings_org;
ALTER TABLE findings DROP COLUMN rowid;
