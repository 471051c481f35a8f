-- Organizations, people, API keys, devices, vendors, the event outbox, the
-- audit trail and idempotency records.

CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    slug TEXT NOT NULL UNIQUE,
    plan TEXT NOT NULL CHECK (plan IN ('free', 'starter', 'professional', 'enterprise')),
    website TEXT,
    brand_display_name TEXT,
    brand_primary_color TEXT,
    brand_logo_url TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;

-- A login identity; memberships tie it to organizations with a role.
CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    password_hash TEXT NOT NULL DEFAULT '',
    last_login_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE memberships (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'auditor', 'employee', 'contractor')),
    department TEXT,
    job_title TEXT,
    is_active INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, user_id)
) STRICT;
CREATE INDEX memberships_user ON memberships(user_id);
CREATE INDEX memberships_org_role ON memberships(organization_id, role);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'auditor', 'employee', 'contractor')),
    prefix TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    created_by_id TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    last_used_at TEXT,
    revoked_at TEXT
) STRICT;
CREATE INDEX api_keys_org ON api_keys(organization_id, id);

CREATE TABLE devices (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    person_id TEXT REFERENCES users(id),
    name TEXT NOT NULL,
    hostname TEXT NOT NULL,
    platform TEXT NOT NULL CHECK (platform IN ('macos', 'windows', 'linux')),
    os_version TEXT,
    serial_number TEXT,
    is_compliant INTEGER NOT NULL DEFAULT 0,
    last_check_in_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX devices_org ON devices(organization_id, id);
CREATE INDEX devices_org_person ON devices(organization_id, person_id);

CREATE TABLE vendors (
    id TEXT PRIMARY KEY,
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
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX vendors_org ON vendors(organization_id, id);
CREATE INDEX vendors_org_criticality ON vendors(organization_id, criticality, id);
CREATE INDEX vendors_org_assignee ON vendors(organization_id, assignee_id);

-- The outbox: every event is written in the transaction of its change.
CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    organization_id TEXT NOT NULL,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    occurred_at TEXT NOT NULL
) STRICT;
CREATE INDEX events_org ON events(organization_id, seq);

-- The audit trail: append-only, every record chained to the previous by hash.
CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    organization_id TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    actor_type TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    action TEXT NOT NULL,
    resource_type TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    changes TEXT NOT NULL,
    request_id TEXT NOT NULL DEFAULT '',
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
) STRICT;
CREATE INDEX audit_log_org ON audit_log(organization_id, seq);
CREATE INDEX audit_log_resource ON audit_log(organization_id, resource_type, resource_id);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

-- Responses of create requests, replayed for a repeated Idempotency-Key.
CREATE TABLE idempotency_keys (
    organization_id TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    status INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    body BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, key)
) STRICT;
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
