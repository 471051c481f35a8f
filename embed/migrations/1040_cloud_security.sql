-- Cloud security: the latest result of one resource of one check is read
-- for every cloud finding listed.
CREATE INDEX integration_check_results_resource ON integration_check_results(organization_id, connection_id, check_id, resource_id, id);
CREATE INDEX integration_check_findings_finding ON integration_check_findings(organization_id, finding_id);
