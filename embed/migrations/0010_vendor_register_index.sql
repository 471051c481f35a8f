-- The vendor register's filters (criticality, personal data, ICT service)
-- with the archive flag and id: the list counts a filtered set from the
-- index alone and walks its page in id order without a sort.
CREATE INDEX vendors_org_register ON vendors(organization_id, criticality, processes_personal_data, ict_service, archived_at, id);
