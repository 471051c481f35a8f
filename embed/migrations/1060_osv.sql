-- The vulnerability database the operator imports offline (OSV records, as
-- osv.dev publishes them): appliance-wide reference data like the framework
-- catalogue, read by every organization's penetration tests. A record is
-- replaced only by one with a later modified time.

CREATE TABLE osv_vulns (
    id TEXT PRIMARY KEY,
    modified TEXT NOT NULL,
    published TEXT,
    withdrawn TEXT,
    aliases TEXT NOT NULL DEFAULT '[]',
    summary TEXT NOT NULL DEFAULT '',
    cvss_vector TEXT NOT NULL DEFAULT '',
    cvss REAL NOT NULL DEFAULT 0,
    refs TEXT NOT NULL DEFAULT '[]',
    imported_at TEXT NOT NULL
) STRICT;

-- One row per (record, affected package). name_key is the package name as
-- looked up (PyPI names normalised); ecosystem keeps the release suffix
-- ("Debian:12"), base_ecosystem drops it.
CREATE TABLE osv_affected (
    vuln_id TEXT NOT NULL REFERENCES osv_vulns(id) ON DELETE CASCADE,
    ecosystem TEXT NOT NULL,
    base_ecosystem TEXT NOT NULL,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    ranges TEXT NOT NULL DEFAULT '[]',
    versions TEXT NOT NULL DEFAULT '[]'
) STRICT;
CREATE INDEX osv_affected_package ON osv_affected(base_ecosystem, name_key);
CREATE INDEX osv_affected_vuln ON osv_affected(vuln_id);

-- Each import: where from, when, and what it did.
CREATE TABLE osv_imports (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    records_read INTEGER NOT NULL,
    inserted INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    unchanged INTEGER NOT NULL,
    rejected INTEGER NOT NULL
) STRICT;
