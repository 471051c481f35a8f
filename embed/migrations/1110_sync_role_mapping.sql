-- A directory connection's group-to-role mapping: joiners get the role of
-- their first mapped group (else default_role); with apply_to_existing,
-- people already synced follow their groups too (never an owner).
CREATE TABLE sync_role_mappings (
    organization_id TEXT NOT NULL REFERENCES organizations(id),
    connection_id TEXT NOT NULL,
    default_role TEXT NOT NULL CHECK (default_role IN ('admin', 'auditor', 'employee', 'contractor')),
    group_roles TEXT NOT NULL, -- JSON: [{"group": "...", "role": "..."}], in order
    apply_to_existing INTEGER NOT NULL DEFAULT 0,
    updated_by TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, connection_id)
) STRICT;
