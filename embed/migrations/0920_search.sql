-- Global search: one full-text index over the records people look for by
-- name (vendors, controls, requirements, policies, risks, findings, people,
-- knowledge-base entries, questionnaires), kept current by triggers on the
-- source tables; indexes of the evidence library; and the getting-started
-- checklist's dismissal.
--
-- search_docs holds one row per searchable record: its organization, type,
-- id, title and body. search_index is the FTS5 index over it (external
-- content), kept in step by the triggers on search_docs. scope holds one
-- token that MATCH narrows on: the organization id (lower case, without
-- the underscore, ending in 0 so that no stemmer touches it). Requirements
-- owner holds the tokens of who else may read the record, for employees
-- and contractors, who read only what is assigned to them: the assigned
-- person's id in the same form, and all0 for what everyone in the
-- organization reads (published policies, requirements). The search
-- service still opens every hit it returns to them through the service
-- that owns the record. Requirements
-- of the built-in framework catalog are shared by every organization:
-- their rows have organization_id '' and the framework's token as scope,
-- and are written by the application when an organization first searches
-- with that framework enabled (search_catalog records which catalog
-- version is indexed). Archived vendors, risks and policies leave the
-- index; restoring them puts them back.

-- A row's id is a sequence number times 16 plus its type's code (vendor 1,
-- control 2, requirement 3, policy 4, risk 5, finding 6, person 7, kb 8,
-- questionnaire 9), so hits are counted per type from the index alone.
CREATE TABLE search_docs (
    id INTEGER PRIMARY KEY,
    organization_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    type TEXT NOT NULL,
    owner TEXT NOT NULL DEFAULT '',
    record_id TEXT NOT NULL,
    parent_id TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (organization_id, type, record_id)
) STRICT;

CREATE VIRTUAL TABLE search_index USING fts5(
    organization_id UNINDEXED,
    scope,
    type,
    owner,
    record_id UNINDEXED,
    parent_id UNINDEXED,
    title,
    body,
    content = 'search_docs',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2',
    prefix = '2 3'
);

-- The rank of ORDER BY rank: BM25 with the six identifying columns
-- weighing nothing and a title match ten times a body match.
INSERT INTO search_index (search_index, rank) VALUES ('rank', 'bm25(0, 0, 0, 0, 0, 0, 10.0, 1.0)');

CREATE TRIGGER search_docs_ai AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_index (rowid, organization_id, scope, type, owner, record_id, parent_id, title, body)
    VALUES (NEW.id, NEW.organization_id, NEW.scope, NEW.type, NEW.owner, NEW.record_id, NEW.parent_id, NEW.title, NEW.body);
END;
CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_index (search_index, rowid, organization_id, scope, type, owner, record_id, parent_id, title, body)
    VALUES ('delete', OLD.id, OLD.organization_id, OLD.scope, OLD.type, OLD.owner, OLD.record_id, OLD.parent_id, OLD.title, OLD.body);
END;
CREATE TRIGGER search_docs_au AFTER UPDATE ON search_docs BEGIN
    INSERT INTO search_index (search_index, rowid, organization_id, scope, type, owner, record_id, parent_id, title, body)
    VALUES ('delete', OLD.id, OLD.organization_id, OLD.scope, OLD.type, OLD.owner, OLD.record_id, OLD.parent_id, OLD.title, OLD.body);
    INSERT INTO search_index (rowid, organization_id, scope, type, owner, record_id, parent_id, title, body)
    VALUES (NEW.id, NEW.organization_id, NEW.scope, NEW.type, NEW.owner, NEW.record_id, NEW.parent_id, NEW.title, NEW.body);
END;

-- Built-in framework catalogs indexed, with the hash of what was indexed.
CREATE TABLE search_catalog (
    framework_id TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    indexed_at TEXT NOT NULL
) STRICT;

-- Vendors: name; description, website, contact, country and the names of
-- their sub-processors. Owner: the assignee.
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

-- Controls: code and name; description. Owner: the control's owner.
CREATE TRIGGER search_controls_ai AFTER INSERT ON controls BEGIN
    INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
    VALUES ((SELECT (coalesce(max(id), 0) / 16 + 1) * 16 + 2 FROM search_docs), NEW.organization_id, lower(replace(NEW.organization_id, '_', '')) || '0', 'control', coalesce(lower(replace(NEW.owner_id, '_', '')) || '0', ''), NEW.id,
        concat_ws(' ', nullif(NEW.code, ''), NEW.name), NEW.description);
END;
CREATE TRIGGER search_controls_au AFTER UPDATE ON controls
WHEN OLD.code IS NOT NEW.code OR OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description
    OR OLD.owner_id IS NOT NEW.owner_id BEGIN
    UPDATE search_docs SET title = concat_ws(' ', nullif(NEW.code, ''), NEW.name), body = NEW.description,
        owner = coalesce(lower(replace(NEW.owner_id, '_', '')) || '0', '')
    WHERE organization_id = OLD.organization_id AND type = 'control' AND record_id = OLD.id;
END;
CREATE TRIGGER search_controls_ad AFTER DELETE ON controls BEGIN
    DELETE FROM search_docs WHERE organization_id = OLD.organization_id AND type = 'control' AND record_id = OLD.id;
END;

-- Requirements an organization added (custom frameworks, extended
-- outlines): everyone reads them.
CREATE TRIGGER search_custom_requirements_ai AFTER INSERT ON custom_requirements BEGIN
    INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, parent_id, title, body)
    VALUES ((SELECT (coalesce(max(id), 0) / 16 + 1) * 16 + 3 FROM search_docs), NEW.organization_id, lower(replace(NEW.organization_id, '_', '')) || '0', 'requirement', 'all0', NEW.id,
        NEW.framework_id, concat_ws(' ', NEW.ref, nullif(NEW.title, '')), NEW.description);
END;
CREATE TRIGGER search_custom_requirements_au AFTER UPDATE ON custom_requirements
WHEN OLD.ref IS NOT NEW.ref OR OLD.title IS NOT NEW.title OR OLD.description IS NOT NEW.description BEGIN
    UPDATE search_docs SET title = concat_ws(' ', NEW.ref, nullif(NEW.title, '')), body = NEW.description
    WHERE organization_id = OLD.organization_id AND type = 'requirement' AND record_id = OLD.id;
END;
CREATE TRIGGER search_custom_requirements_ad AFTER DELETE ON custom_requirements BEGIN
    DELETE FROM search_docs WHERE organization_id = OLD.organization_id AND type = 'requirement' AND record_id = OLD.id;
END;

-- Policies: once published, the current version's name and text (what
-- everyone in the organization reads); before that the draft, which only
-- the assignee reads among employees and contractors.
CREATE TRIGGER search_policies_ai AFTER INSERT ON policies WHEN NEW.archived_at IS NULL BEGIN
    INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
    VALUES ((SELECT (coalesce(max(id), 0) / 16 + 1) * 16 + 4 FROM search_docs), NEW.organization_id, lower(replace(NEW.organization_id, '_', '')) || '0', 'policy',
        concat_ws(' ', CASE WHEN NEW.current_version > 0 THEN 'all0' END, coalesce(lower(replace(NEW.assignee_id, '_', '')) || '0', '')), NEW.id,
        coalesce((SELECT name FROM policy_versions WHERE id = NEW.current_version_id), NEW.name),
        coalesce((SELECT concat_ws(' ', description, content) FROM policy_versions WHERE id = NEW.current_version_id),
            concat_ws(' ', NEW.description, NEW.content)));
END;
CREATE TRIGGER search_policies_au AFTER UPDATE ON policies
WHEN OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description OR OLD.content IS NOT NEW.content
    OR OLD.current_version_id IS NOT NEW.current_version_id OR OLD.current_version IS NOT NEW.current_version
    OR OLD.assignee_id IS NOT NEW.assignee_id OR OLD.archived_at IS NOT NEW.archived_at BEGIN
    DELETE FROM search_docs WHERE organization_id = OLD.organization_id AND type = 'policy' AND record_id = OLD.id;
    INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
    SELECT (SELECT (coalesce(max(id), 0) / 16 + 1) * 16 + 4 FROM search_docs), NEW.organization_id, lower(replace(NEW.organization_id, '_', '')) || '0', 'policy',
        concat_ws(' ', CASE WHEN NEW.current_version > 0 THEN 'all0' END, coalesce(lower(replace(NEW.assignee_id, '_', '')) || '0', '')), NEW.id,
        coalesce((SELECT name FROM policy_versions WHERE id = NEW.current_version_id), NEW.name),
        coalesce((SELECT concat_ws(' ', description, content) FROM policy_versions WHERE id = NEW.current_version_id),
            concat_ws(' ', NEW.description, NEW.content))
    WHERE NEW.archived_at IS NULL;
END;
CREATE TRIGGER search_policies_ad AFTER DELETE ON policies BEGIN
    DELETE FROM search_docs WHERE organization_id = OLD.organization_id AND type = 'policy' AND record_id = OLD.id;
END;

-- Risks: title; description, category and treatment. Owner: the owner.
CREATE TRIGGER search_risks_ai AFTER INSERT ON risks WHEN NEW.archived_at IS NULL BEGIN
    INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
    VALUES ((SELECT (coalesce(max(id), 0) / 16 + 1) * 16 + 5 FROM search_docs), NEW.organization_id, lower(replace(NEW.organization_id, '_', '')) || '0', 'risk', coalesce(lower(replace(NEW.owner_id, '_', '')) || '0', ''), NEW.id, NEW.title,
        concat_ws(' ', NEW.description, NEW.category, NEW.treatment_description));
END;
CREATE TRIGGER search_risks_au AFTER UPDATE ON risks
WHEN OLD.title IS NOT NEW.title OR OLD.description IS NOT NEW.description OR OLD.category IS NOT NEW.category
    OR OLD.treatment_description IS NOT NEW.treatment_description OR OLD.owner_id IS NOT NEW.owner_id
    OR OLD.archived_at IS NOT NEW.archived_at BEGIN
    DELETE FROM search_docs WHERE organization_id = OLD.organization_id AND type = 'risk' AND record_id = OLD.id;
    INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
    SELECT (SELECT (coalesce(max(id), 0) / 16 + 1) * 16 + 5 FROM search_docs), NEW.organization_id, lower(replace(NEW.organization_id, '_', '')) || '0', 'risk', coalesce(lower(replace(NEW.owner_id, '_', '')) || '0', ''), NEW.id, NEW.title,
        concat_ws(' ', NEW.description, NEW.category, NEW.treatment_description)
    WHERE NEW.archived_at IS NULL;
END;
CREATE TRIGGER search_risks_ad AFTER DELETE ON risks BEGIN
    DELETE FROM search_docs WHERE organization_id = OLD.organization_id AND type = 'risk' AND record_id = OLD.id;
END;

-- Findings: the title (Shape B) or the start of the content (Shape A);
-- content, description and source. Owner: the assignee of the finding's
-- task, kept when the task is reassigned or deleted.
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
CREATE TRIGGER search_tasks_au AFTER UPDATE ON tasks WHEN OLD.assignee_id IS NOT NEW.assignee_id BEGIN
    UPDATE search_docs SET owner = coalesce(lower(replace(NEW.assignee_id, '_', '')) || '0', '')
    WHERE organization_id = NEW.organization_id AND type = 'finding'
        AND record_id IN (SELECT id FROM findings WHERE organization_id = NEW.organization_id AND task_id = NEW.id);
END;
CREATE TRIGGER search_tasks_ad AFTER DELETE ON tasks BEGIN
    UPDATE search_docs SET owner = ''
    WHERE organization_id = OLD.organization_id AND type = 'finding'
        AND record_id IN (SELECT id FROM findings WHERE organization_id = OLD.organization_id AND task_id = OLD.id);
END;

-- People: a membership, named by its user; email, job title, department.
-- Owner: the person themselves.
CREATE TRIGGER search_memberships_ai AFTER INSERT ON memberships BEGIN
    INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
    SELECT (SELECT (coalesce(max(id), 0) / 16 + 1) * 16 + 7 FROM search_docs), NEW.organization_id, lower(replace(NEW.organization_id, '_', '')) || '0', 'person', coalesce(lower(replace(NEW.user_id, '_', '')) || '0', ''), NEW.user_id, u.name,
        concat_ws(' ', u.email, NEW.job_title, NEW.department)
    FROM users u WHERE u.id = NEW.user_id;
END;
CREATE TRIGGER search_memberships_au AFTER UPDATE ON memberships
WHEN OLD.job_title IS NOT NEW.job_title OR OLD.department IS NOT NEW.department BEGIN
    UPDATE search_docs SET body = concat_ws(' ', (SELECT email FROM users WHERE id = NEW.user_id), NEW.job_title, NEW.department)
    WHERE organization_id = OLD.organization_id AND type = 'person' AND record_id = OLD.user_id;
END;
CREATE TRIGGER search_memberships_ad AFTER DELETE ON memberships BEGIN
    DELETE FROM search_docs WHERE organization_id = OLD.organization_id AND type = 'person' AND record_id = OLD.user_id;
END;
CREATE TRIGGER search_users_au AFTER UPDATE ON users WHEN OLD.name IS NOT NEW.name OR OLD.email IS NOT NEW.email BEGIN
    UPDATE search_docs SET title = NEW.name,
        body = concat_ws(' ', NEW.email, (SELECT concat_ws(' ', m.job_title, m.department) FROM memberships m
            WHERE m.organization_id = search_docs.organization_id AND m.user_id = NEW.id))
    WHERE organization_id IN (SELECT organization_id FROM memberships WHERE user_id = NEW.id)
        AND type = 'person' AND record_id = NEW.id;
END;

-- Knowledge-base entries: question; answer and tags. Owner: the owner.
CREATE TRIGGER search_kb_entries_ai AFTER INSERT ON kb_entries BEGIN
    INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
    VALUES ((SELECT (coalesce(max(id), 0) / 16 + 1) * 16 + 8 FROM search_docs), NEW.organization_id, lower(replace(NEW.organization_id, '_', '')) || '0', 'kb', coalesce(lower(replace(NEW.owner_id, '_', '')) || '0', ''), NEW.id, NEW.question,
        concat_ws(' ', NEW.answer, (SELECT group_concat(value, ' ') FROM json_each(NEW.tags))));
END;
CREATE TRIGGER search_kb_entries_au AFTER UPDATE ON kb_entries
WHEN OLD.question IS NOT NEW.question OR OLD.answer IS NOT NEW.answer OR OLD.tags IS NOT NEW.tags
    OR OLD.owner_id IS NOT NEW.owner_id BEGIN
    UPDATE search_docs SET title = NEW.question,
        body = concat_ws(' ', NEW.answer, (SELECT group_concat(value, ' ') FROM json_each(NEW.tags))),
        owner = coalesce(lower(replace(NEW.owner_id, '_', '')) || '0', '')
    WHERE organization_id = OLD.organization_id AND type = 'kb' AND record_id = OLD.id;
END;
CREATE TRIGGER search_kb_entries_ad AFTER DELETE ON kb_entries BEGIN
    DELETE FROM search_docs WHERE organization_id = OLD.organization_id AND type = 'kb' AND record_id = OLD.id;
END;

-- Questionnaires: name; the uploaded file's name. Staff only: no owner.
CREATE TRIGGER search_questionnaires_ai AFTER INSERT ON questionnaires BEGIN
    INSERT INTO search_docs (id, organization_id, scope, type, record_id, title, body)
    VALUES ((SELECT (coalesce(max(id), 0) / 16 + 1) * 16 + 9 FROM search_docs), NEW.organization_id, lower(replace(NEW.organization_id, '_', '')) || '0', 'questionnaire', NEW.id, NEW.name,
        coalesce(NEW.file_name, ''));
END;
CREATE TRIGGER search_questionnaires_au AFTER UPDATE ON questionnaires
WHEN OLD.name IS NOT NEW.name OR OLD.file_name IS NOT NEW.file_name BEGIN
    UPDATE search_docs SET title = NEW.name, body = coalesce(NEW.file_name, '')
    WHERE organization_id = OLD.organization_id AND type = 'questionnaire' AND record_id = OLD.id;
END;
CREATE TRIGGER search_questionnaires_ad AFTER DELETE ON questionnaires BEGIN
    DELETE FROM search_docs WHERE organization_id = OLD.organization_id AND type = 'questionnaire' AND record_id = OLD.id;
END;

-- The records that exist already.
INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
SELECT ((SELECT coalesce(max(id), 0) / 16 FROM search_docs) + row_number() OVER ()) * 16 + 1, organization_id, lower(replace(vendors.organization_id, '_', '')) || '0', 'vendor', coalesce(lower(replace(assignee_id, '_', '')) || '0', ''), id, name,
    concat_ws(' ', description, website, contact_email, country,
        (SELECT group_concat(json_extract(value, '$.name'), ' ') FROM json_each(sub_processors)))
FROM vendors WHERE archived_at IS NULL;
INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
SELECT ((SELECT coalesce(max(id), 0) / 16 FROM search_docs) + row_number() OVER ()) * 16 + 2, organization_id, lower(replace(controls.organization_id, '_', '')) || '0', 'control', coalesce(lower(replace(owner_id, '_', '')) || '0', ''), id, concat_ws(' ', nullif(code, ''), name), description
FROM controls;
INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, parent_id, title, body)
SELECT ((SELECT coalesce(max(id), 0) / 16 FROM search_docs) + row_number() OVER ()) * 16 + 3, organization_id, lower(replace(custom_requirements.organization_id, '_', '')) || '0', 'requirement', 'all0', id, framework_id,
    concat_ws(' ', ref, nullif(title, '')), description
FROM custom_requirements;
INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
SELECT ((SELECT coalesce(max(id), 0) / 16 FROM search_docs) + row_number() OVER ()) * 16 + 4, p.organization_id, lower(replace(p.organization_id, '_', '')) || '0', 'policy',
    concat_ws(' ', CASE WHEN p.current_version > 0 THEN 'all0' END, coalesce(lower(replace(p.assignee_id, '_', '')) || '0', '')), p.id, coalesce(v.name, p.name),
    coalesce(concat_ws(' ', v.description, v.content), concat_ws(' ', p.description, p.content))
FROM policies p LEFT JOIN policy_versions v ON v.id = p.current_version_id WHERE p.archived_at IS NULL;
INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
SELECT ((SELECT coalesce(max(id), 0) / 16 FROM search_docs) + row_number() OVER ()) * 16 + 5, organization_id, lower(replace(risks.organization_id, '_', '')) || '0', 'risk', coalesce(lower(replace(owner_id, '_', '')) || '0', ''), id, title,
    concat_ws(' ', description, category, treatment_description)
FROM risks WHERE archived_at IS NULL;
INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
SELECT ((SELECT coalesce(max(id), 0) / 16 FROM search_docs) + row_number() OVER ()) * 16 + 6, f.organization_id, lower(replace(f.organization_id, '_', '')) || '0', 'finding', coalesce(lower(replace(t.assignee_id, '_', '')) || '0', ''), f.id,
    coalesce(nullif(f.title, ''), substr(f.content, 1, 200)), concat_ws(' ', f.content, f.description, f.source)
FROM findings f LEFT JOIN tasks t ON t.organization_id = f.organization_id AND t.id = f.task_id;
INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
SELECT ((SELECT coalesce(max(id), 0) / 16 FROM search_docs) + row_number() OVER ()) * 16 + 7, m.organization_id, lower(replace(m.organization_id, '_', '')) || '0', 'person', coalesce(lower(replace(m.user_id, '_', '')) || '0', ''), m.user_id, u.name,
    concat_ws(' ', u.email, m.job_title, m.department)
FROM memberships m JOIN users u ON u.id = m.user_id;
INSERT INTO search_docs (id, organization_id, scope, type, owner, record_id, title, body)
SELECT ((SELECT coalesce(max(id), 0) / 16 FROM search_docs) + row_number() OVER ()) * 16 + 8, organization_id, lower(replace(kb_entries.organization_id, '_', '')) || '0', 'kb', coalesce(lower(replace(owner_id, '_', '')) || '0', ''), id, question,
    concat_ws(' ', answer, (SELECT group_concat(value, ' ') FROM json_each(tags)))
FROM kb_entries;
INSERT INTO search_docs (id, organization_id, scope, type, record_id, title, body)
SELECT ((SELECT coalesce(max(id), 0) / 16 FROM search_docs) + row_number() OVER ()) * 16 + 9, organization_id, lower(replace(questionnaires.organization_id, '_', '')) || '0', 'questionnaire', id, name, coalesce(file_name, '')
FROM questionnaires;

-- The evidence library filters and sorts an organization's evidence by
-- expiry and by upload date.
CREATE INDEX evidence_org_expires ON evidence(organization_id, expires_at, id);
CREATE INDEX evidence_org_uploaded ON evidence(organization_id, uploaded_at, id);

-- The getting-started checklist on the dashboard: dismissed per
-- organization by an owner or admin.
CREATE TABLE onboarding_dismissals (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id),
    dismissed_by TEXT NOT NULL,
    dismissed_at TEXT NOT NULL
) STRICT;
