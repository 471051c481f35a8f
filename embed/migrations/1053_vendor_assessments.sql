-- Vendor risk assessments: what the appliance checked of a vendor's public
-- site (the HTTPS endpoint checks, security.txt, a linked trust or security
-- page) and the inherent probability and impact it suggests, with reasons,
-- for a person to accept. Only run when asked.
CREATE TABLE vendor_assessments (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    vendor_id TEXT NOT NULL REFERENCES vendors(id) ON DELETE CASCADE,
    batch_id TEXT,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
    website TEXT NOT NULL,
    -- JSON: the checks' results, the security.txt fields, the trust page,
    -- the run's log
    results TEXT NOT NULL DEFAULT '{}',
    suggested_probability TEXT,
    suggested_impact TEXT,
    reasons TEXT NOT NULL DEFAULT '[]',
    error TEXT,
    requested_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    accepted_at TEXT,
    accepted_by TEXT
) STRICT;
CREATE INDEX vendor_assessments_vendor ON vendor_assessments(organization_id, vendor_id, created_at);
CREATE INDEX vendor_assessments_status ON vendor_assessments(status, created_at);
