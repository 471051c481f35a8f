-- Covering indexes for the score: the requirement links join reads each
-- control's organization and status from the index, and counting a custom
-- framework's assessable requirements reads only the index.
CREATE INDEX controls_id_org_status ON controls(id, organization_id, status);
CREATE INDEX custom_requirements_org_fw_assessable ON custom_requirements(organization_id, framework_id, assessable);
