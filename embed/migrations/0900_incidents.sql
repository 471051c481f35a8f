-- Incidents with statutory reporting clocks (NIS2, DORA, GDPR, CRA): the
-- incident record, its links, its timeline, the organization's reporting
-- profile, one row per report a regime asks for (the clock), the report
-- versions (append-only: a sent version never changes), and the reminders
-- the scheduler sent (once per report and threshold).

CREATE TABLE incidents (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL CHECK (type IN ('security_incident', 'personal_data_breach', 'ict_incident', 'vulnerability')),
    status TEXT NOT NULL CHECK (status IN ('open', 'contained', 'resolved', 'closed')),
    severity TEXT NOT NULL CHECK (severity IN ('low', 'medium', 'high', 'critical')),
    occurred_at TEXT,
    detected_at TEXT NOT NULL,
    aware_at TEXT NOT NULL,
    contained_at TEXT,
    resolved_at TEXT,
    closed_at TEXT,
    -- Affected services, systems, data categories, countries, counts and
    -- the facts the reporting rules ask for, as one JSON object.
    details TEXT NOT NULL DEFAULT '{}',
    dora_classification TEXT,
    confirmed_regimes TEXT NOT NULL DEFAULT '[]',
    regimes_confirmed_at TEXT,
    regimes_confirmed_by TEXT,
    reported_by_type TEXT NOT NULL,
    reported_by_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX incidents_org ON incidents(organization_id, id);
CREATE INDEX incidents_org_status ON incidents(organization_id, status, id);
CREATE INDEX incidents_org_type ON incidents(organization_id, type, id);
CREATE INDEX incidents_org_reporter ON incidents(organization_id, reported_by_id, id);

CREATE TABLE incident_links (
    organization_id TEXT NOT NULL,
    incident_id TEXT NOT NULL REFERENCES incidents(id),
    entity_type TEXT NOT NULL CHECK (entity_type IN ('risk', 'finding', 'control', 'vendor', 'evidence')),
    entity_id TEXT NOT NULL,
    PRIMARY KEY (incident_id, entity_type, entity_id)
) STRICT;
CREATE INDEX incident_links_org ON incident_links(organization_id, incident_id);
CREATE INDEX incident_links_org_entity ON incident_links(organization_id, entity_type, entity_id);

-- The timeline is the record of what happened and who did what: entries
-- are never changed or removed.
CREATE TABLE incident_timeline (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    incident_id TEXT NOT NULL REFERENCES incidents(id),
    occurred_at TEXT NOT NULL,
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    author_type TEXT NOT NULL,
    author_id TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX incident_timeline_org ON incident_timeline(organization_id, incident_id, occurred_at, id);
CREATE TRIGGER incident_timeline_no_update BEFORE UPDATE ON incident_timeline
BEGIN SELECT RAISE(ABORT, 'incident timeline entries are immutable'); END;
CREATE TRIGGER incident_timeline_no_delete BEFORE DELETE ON incident_timeline
BEGIN SELECT RAISE(ABORT, 'incident timeline entries are immutable'); END;

-- The facts about the organization the regimes depend on (NIS2 entity
-- type, DORA financial entity, GDPR role, CRA manufacturer) and the
-- authorities reports go to.
CREATE TABLE incident_profiles (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id),
    profile TEXT NOT NULL,
    updated_by_type TEXT NOT NULL,
    updated_by_id TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;

-- One row per report (regime and kind) of an incident: its clock.
CREATE TABLE incident_reports (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    incident_id TEXT NOT NULL REFERENCES incidents(id),
    regime TEXT NOT NULL CHECK (regime IN ('nis2', 'dora', 'gdpr', 'cra')),
    kind TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'awaiting_facts', 'on_request', 'not_required', 'sent')),
    due_at TEXT,
    start_event TEXT NOT NULL DEFAULT '',
    start_at TEXT,
    provisional INTEGER NOT NULL DEFAULT 0,
    basis TEXT NOT NULL,
    reasoning TEXT NOT NULL DEFAULT '',
    first_sent_at TEXT,
    last_sent_at TEXT,
    versions INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (incident_id, regime, kind)
) STRICT;
CREATE INDEX incident_reports_org_incident ON incident_reports(organization_id, incident_id, id);
CREATE INDEX incident_reports_org_due ON incident_reports(organization_id, status, due_at);

-- Every saved draft and every sent report is a version. Versions are
-- never changed or removed; an edit after sending is a new version.
CREATE TABLE incident_report_versions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    incident_id TEXT NOT NULL REFERENCES incidents(id),
    report_id TEXT NOT NULL REFERENCES incident_reports(id),
    version INTEGER NOT NULL CHECK (version >= 1),
    state TEXT NOT NULL CHECK (state IN ('draft', 'sent')),
    content TEXT NOT NULL,
    content_sha256 TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    authority TEXT,
    reference TEXT,
    sent_at TEXT,
    created_by_type TEXT NOT NULL,
    created_by_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    CHECK (state = 'draft' OR (authority IS NOT NULL AND sent_at IS NOT NULL)),
    UNIQUE (report_id, version)
) STRICT;
CREATE INDEX incident_report_versions_org ON incident_report_versions(organization_id, report_id, version);
CREATE TRIGGER incident_report_versions_no_update BEFORE UPDATE ON incident_report_versions
BEGIN SELECT RAISE(ABORT, 'incident report versions are immutable'); END;
CREATE TRIGGER incident_report_versions_no_delete BEFORE DELETE ON incident_report_versions
BEGIN SELECT RAISE(ABORT, 'incident report versions are immutable'); END;

-- Reminders sent before (or after) a report's due time: one row per report
-- and threshold makes the scheduler's reminder idempotent.
CREATE TABLE incident_report_reminders (
    organization_id TEXT NOT NULL,
    report_id TEXT NOT NULL REFERENCES incident_reports(id),
    threshold TEXT NOT NULL,
    due_at TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    emitted INTEGER NOT NULL,
    PRIMARY KEY (report_id, threshold)
) STRICT;
CREATE INDEX incident_report_reminders_org ON incident_report_reminders(organization_id, report_id);
