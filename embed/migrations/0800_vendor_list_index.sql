-- The vendor list filters active vendors of one organization and counts
-- them. Without this index every list read each of the organization's
-- rows from the table just to test archived_at and the filter columns.
-- Leading with (organization_id, archived_at, id) gives the default order
-- straight from the index; carrying the filter columns lets both the count
-- and the page be evaluated on index entries, touching the table only for
-- the rows returned.
CREATE INDEX vendors_org_list ON vendors(organization_id, archived_at, id, criticality, category, status, country,
    dpa_status, processes_personal_data, ict_service, assignee_id, risk_score);
-- Sorting by name (the register's usual view) reads the index in order
-- instead of sorting every active vendor of the organization.
CREATE INDEX vendors_org_name ON vendors(organization_id, archived_at, name, id);
