-- Knowledge base, questionnaires, the trust portal and trust access.

CREATE TABLE kb_entries (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    source_document TEXT,
    owner_id TEXT,
    review_date TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX kb_entries_org ON kb_entries(organization_id, id);

-- The full-text index of everything answers may come from: knowledge-base
-- entries (source_type 'entry', ref = entry id) and documents of other
-- knowledge sources such as published policies (source_type = the source's
-- name, ref = its id). Kept in step by the storage code, in the same
-- transaction as the change. org_token holds the organization id as one
-- token so that MATCH itself narrows to one organization.
CREATE VIRTUAL TABLE kb_index USING fts5(
    organization_id UNINDEXED,
    org_token,
    source_type UNINDEXED,
    ref UNINDEXED,
    name UNINDEXED,
    question,
    answer,
    tags,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TABLE questionnaires (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    direction TEXT NOT NULL CHECK (direction IN ('outgoing', 'incoming')),
    status TEXT NOT NULL CHECK (status IN ('draft', 'sent', 'submitted')),
    vendor_id TEXT,
    template_id TEXT,
    file_name TEXT,
    file_type TEXT CHECK (file_type IN ('csv', 'xlsx')),
    file_sha256 TEXT,
    layout TEXT NOT NULL DEFAULT '[]',
    due_date TEXT,
    sent_at TEXT,
    submitted_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX questionnaires_org ON questionnaires(organization_id, id);
CREATE INDEX questionnaires_org_created ON questionnaires(organization_id, created_at);
CREATE INDEX questionnaires_org_vendor ON questionnaires(organization_id, vendor_id);

-- Questionnaires created per calendar month (YYYY-MM), for the plan limit;
-- deleting a questionnaire does not give its allowance back.
CREATE TABLE questionnaire_usage (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    month TEXT NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (organization_id, month)
) STRICT;

CREATE TABLE questionnaire_questions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    questionnaire_id TEXT NOT NULL REFERENCES questionnaires(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    section TEXT NOT NULL DEFAULT '',
    question TEXT NOT NULL,
    answer TEXT,
    comment TEXT,
    status TEXT NOT NULL CHECK (status IN ('untouched', 'generated', 'manual')),
    confidence REAL,
    source_type TEXT,
    source_ref TEXT,
    source_name TEXT,
    sheet TEXT NOT NULL DEFAULT '',
    row_num INTEGER NOT NULL DEFAULT 0,
    answer_col INTEGER NOT NULL DEFAULT 0,
    comment_col INTEGER NOT NULL DEFAULT -1,
    updated_at TEXT NOT NULL,
    UNIQUE (questionnaire_id, position)
) STRICT;
CREATE INDEX questionnaire_questions_org ON questionnaire_questions(organization_id, questionnaire_id, position);

-- A secret, expiring link that lets one vendor fill one questionnaire.
CREATE TABLE questionnaire_links (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    questionnaire_id TEXT NOT NULL REFERENCES questionnaires(id) ON DELETE CASCADE,
    vendor_id TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    csrf_secret TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    revoked_at TEXT,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX questionnaire_links_org ON questionnaire_links(organization_id, questionnaire_id);

CREATE TABLE trust_settings (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id),
    enabled INTEGER NOT NULL DEFAULT 0,
    slug TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL DEFAULT '',
    overview TEXT NOT NULL DEFAULT '',
    contact_email TEXT,
    primary_color TEXT,
    logo_url TEXT,
    frameworks TEXT NOT NULL DEFAULT '[]',
    show_controls INTEGER NOT NULL DEFAULT 0,
    nda_version TEXT NOT NULL,
    nda_text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE trust_documents (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    access TEXT NOT NULL CHECK (access IN ('public', 'nda')),
    file_name TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX trust_documents_org ON trust_documents(organization_id, id);

CREATE TABLE trust_access_requests (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    company TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('under_review', 'approved', 'denied', 'revoked')),
    token_hash TEXT NOT NULL UNIQUE,
    token_expires_at TEXT NOT NULL,
    nda_signed_at TEXT,
    decided_at TEXT,
    decided_by TEXT,
    decision_reason TEXT,
    access_expires_at TEXT,
    ip_address TEXT NOT NULL DEFAULT '',
    user_agent TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX trust_access_requests_org ON trust_access_requests(organization_id, id);

CREATE TABLE trust_nda_signatures (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    request_id TEXT NOT NULL REFERENCES trust_access_requests(id),
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    company TEXT NOT NULL DEFAULT '',
    nda_version TEXT NOT NULL,
    nda_sha256 TEXT NOT NULL,
    ip_address TEXT NOT NULL,
    user_agent TEXT NOT NULL DEFAULT '',
    signed_at TEXT NOT NULL
) STRICT;
CREATE INDEX trust_nda_signatures_org ON trust_nda_signatures(organization_id, id);

CREATE TABLE trust_downloads (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    document_id TEXT NOT NULL,
    request_id TEXT,
    ip_address TEXT NOT NULL,
    user_agent TEXT NOT NULL DEFAULT '',
    downloaded_at TEXT NOT NULL
) STRICT;
CREATE INDEX trust_downloads_org ON trust_downloads(organization_id, id);
