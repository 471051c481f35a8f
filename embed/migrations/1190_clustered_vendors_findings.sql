-- postgres: addendum only
-- migrate: foreign_keys off
-- Vendors and findings clustered by organization: both tables become
-- WITHOUT ROWID tables keyed by (organization_id, id), so one
-- organization's rows sit on a few adjacent pages in id order (the lists'
-- default order) instead of being spread over the whole file in insertion
-- order. A list page's 50 row lookups then touch a handful of pages, which
-- is what a read after another connection's commit pays for (it starts
-- with an empty page cache). The measurement is in docs/proof.md
-- (BenchmarkClusteredShape in bench/).
--
-- id stays unique on its own (UNIQUE (id)): the foreign keys of
-- vendor_assessments, finding_controls and corrective_actions point at it.
-- The indexes on (organization_id, id) alone are gone: the table itself is
-- that index now. Every other index and trigger is recreated as it was;
-- the read model's counter triggers are recreated after the migrations
-- (ensureReadModel).
--
-- The rebuild runs with foreign keys off (the migration runner turns them
-- off for a migration marked so, and checks PRAGMA foreign_key_check before
-- committing): with them on, dropping the old table would delete its rows
-- first and cascade to the children. legacy_alter_table keeps the
-- children's REFERENCES vendors(id) / findings(id) pointing at the name,
-- which the new table takes.
PRAGMA legacy_alter_table = ON;

ALTER TABLE vendors RENAME TO vendors_rowid;
CREATE TABLE vendors (
    id TEXT NOT NULL UNIQUE,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    category TEXT NOT NULL,
    status TEXT NOT NULL,
    inherent_probability TEXT NOT NULL,
    inherent_impact TEXT NOT NULL,
    residual_probability TEXT,
    residual_impact TEXT,
    website TEXT,
    assignee_id TEXT,
    contact_email TEXT,
    country TEXT,
    criticality TEXT NOT NULL,
    ict_service INTEGER NOT NULL DEFAULT 0,
    processes_personal_data INTEGER NOT NULL DEFAULT 0,
    dpa_status TEXT NOT NULL,
    dpa_signed_at TEXT,
    dpa_url TEXT,
    last_reviewed_at TEXT,
    next_review_due TEXT,
    transfer_mechanism TEXT,
    sub_processors TEXT NOT NULL DEFAULT '[]',
    risk_score INTEGER,
    archived_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, id)
) WITHOUT ROWID, STRICT;
INSERT INTO vendors (id, organization_id, name, description, category, status, inherent_probability, inherent_impact,
    residual_probability, residual_impact, website, assignee_id, contact_email, country, criticality, ict_service,
    processes_personal_data, dpa_status, dpa_signed_at, dpa_url, last_reviewed_at, next_review_due, transfer_mechanism,
    sub_processors, risk_score, archived_at, created_at, updated_at)
SELECT id, organization_id, name, description, category, status, inherent_probability, inherent_impact,
    residual_probability, residual_impact, website, assignee_id, contact_email, country, criticality, ict_service,
    processes_personal_data, dpa_status, dpa_signed_at, dpa_url, last_reviewed_at, next_review_due, transfer_mechanism,
    sub_processors, risk_score, archived_at, created_at, updated_at
FROM vendors_rowid ORDER BY organization_id, id;
DROP TABLE vendors_rowid;
CREATE INDEX vendors_org_criticality ON vendors(organization_id, criticality, id);
CREATE INDEX vendors_org_assignee ON vendors(organization_id, assignee_id);
CREATE INDEX vendors_org_register ON vendors(organization_id, criticality, processes_personal_data, ict_service, archived_at, id);
CREATE INDEX vendors_org_list ON vendors(organization_id, archived_at, id, criticality, category, status, country,
    dpa_status, processes_personal_data, ict_service, assignee_id, risk_score);
CREATE INDEX vendors_org_name ON vendors(organization_id, archived_at, name, id);

ALTER TABLE findings RENAME TO findings_rowid;
CREATE TABLE findings (
    id TEXT NOT NULL UNIQUE,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    type TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'in_review', 'resolved', 'closed')),
    severity TEXT NOT NULL CHECK (severity IN ('critical', 'high', 'medium', 'low', 'informational')),
    finding_class TEXT,
    content TEXT NOT NULL,
    title TEXT,
    description TEXT,
    source TEXT,
    task_id TEXT,
    scope TEXT,
    template_id TEXT,
    cvss REAL,
    due_date TEXT,
    revision_note TEXT,
    created_by_type TEXT NOT NULL,
    created_by_id TEXT NOT NULL,
    closed_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, id)
) WITHOUT ROWID, STRICT;
INSERT INTO findings (id, organization_id, type, status, severity, finding_class, content, title, description, source,
    task_id, scope, template_id, cvss, due_date, revision_note, created_by_type, created_by_id, closed_at, created_at, updated_at)
SELECT id, organization_id, type, status, severity, finding_class, content, title, description, source,
    task_id, scope, template_id, cvss, due_date, revision_note, created_by_type, created_by_id, closed_at, created_at, updated_at
FROM findings_rowid ORDER BY organization_id, id;
DROP TABLE findings_rowid;
CREATE INDEX findings_org_status ON findings(organization_id, status, severity, id);
CREATE INDEX findings_org_severity ON findings(organization_id, severity, id);
CREATE INDEX findings_org_type ON findings(organization_id, type, id);
CREATE INDEX findings_org_task ON findings(organization_id, task_id, id);

-- The full-text triggers, as 0920_search.sql made them.
CREATE TRIGGER search_vendors_ai AFTER INSERT ON vendors WHEN NEW.archived_at IS NULL BEGIN
    INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
    VALUES ((SELECT (coalesce(max(id), 0) / 16 + 1) * 16 + 1 FROM search_docs), NEW.organization_id, lower(replace(NEW.organization_id, '_', '')) || '0', 'vendor', coalesce(lower(replace(NEW.assignee_id, '_', '')) || '0', ''), NEW.id, NEW.name,
        concat_ws(' ', NEW.description, NEW.website, NEW.contact_email, NEW.country,
            (SELECT group_concat(json_extract(value, '$.name'), ' ') FROM json_each(NEW.sub_processors))));
END;
CREATE TRIGGER search_vendors_au AFTER UPDATE ON vendors
WHEN OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description OR OLD.website IS NOT NEW.website
    OR OLD.contact_email IS NOT NEW.contact_email OR OLD.country IS NOT NEW.country
    OR OLD.sub_processors IS NOT NEW.sub_processors OR OLD.assignee_id IS NOT NEW.assignee_id
    OR OLD.archived_at IS NOT NEW.archived_at BEGIN
    DELETE FROM search_docs WHERE organization_id = OLD.organization_id AND type = 'vendor' AND record_id = OLD.id;
    INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
    SELECT (SELECT (coalesce(max(id), 0) / 16 + 1) * 16 + 1 FROM search_docs), NEW.organization_id, lower(replace(NEW.organization_id, '_', '')) || '0', 'vendor', coalesce(lower(replace(NEW.assignee_id, '_', '')) || '0', ''), NEW.id, NEW.name,
        concat_ws(' ', NEW.description, NEW.website, NEW.contact_email, NEW.country,
            (SELECT group_concat(json_extract(value, '$.name'), ' ') FROM json_each(NEW.sub_processors)))
    WHERE NEW.archived_at IS NULL;
END;
CREATE TRIGGER search_vendors_ad AFTER DELETE ON vendors BEGIN
    DELETE FROM search_docs WHERE organization_id = OLD.organization_id AND type = 'vendor' AND record_id = OLD.id;
END;
CREATE TRIGGER search_findings_ai AFTER INSERT ON findings BEGIN
    INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
    VALUES ((SELECT (coalesce(max(id), 0) / 16 + 1) * 16 + 6 FROM search_docs), NEW.organization_id, lower(replace(NEW.organization_id, '_', '')) || '0', 'finding',
        coalesce(lower(replace((SELECT assignee_id FROM tasks WHERE organization_id = NEW.organization_id AND id = NEW.task_id), '_', '')) || '0', ''), NEW.id,
        coalesce(nullif(NEW.title, ''), substr(NEW.content, 1, 200)),
        concat_ws(' ', NEW.content, NEW.description, NEW.source));
END;
CREATE TRIGGER search_findings_au AFTER UPDATE ON findings
WHEN OLD.title IS NOT NEW.title OR OLD.content IS NOT NEW.content OR OLD.description IS NOT NEW.description
    OR OLD.source IS NOT NEW.source OR OLD.task_id IS NOT NEW.task_id BEGIN
    UPDATE search_docs SET title = coalesce(nullif(NEW.title, ''), substr(NEW.content, 1, 200)),
        body = concat_ws(' ', NEW.content, NEW.description, NEW.source),
        owner = coalesce(lower(replace((SELECT assignee_id FROM tasks WHERE organization_id = NEW.organization_id AND id = NEW.task_id), '_', '')) || '0', '')
    WHERE organization_id = OLD.organization_id AND type = 'finding' AND record_id = OLD.id;
END;
CREATE TRIGGER search_findings_ad AFTER DELETE ON findings BEGIN
    DELETE FROM search_docs WHERE organization_id = OLD.organization_id AND type = 'finding' AND record_id = OLD.id;
END;

PRAGMA legacy_alter_table = OFF;
