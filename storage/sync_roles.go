package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

// GetSyncRoleMapping returns a connection's group-to-role mapping, or nil
// when none was saved.
func (db *DB) GetSyncRoleMapping(ctx context.Context, orgID, connectionID string) (*app.SyncRoleMapping, error) {
	var m app.SyncRoleMapping
	var groups, at string
	var existing int
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT default_role, group_roles, apply_to_existing, updated_by, updated_at
		FROM sync_role_mappings WHERE organization_id = ? AND connection_id = ?`, orgID, connectionID).
		Scan(&m.DefaultRole, &groups, &existing, &m.UpdatedBy, &at)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get sync role mapping: %w", err)
	}
	if err := json.Unmarshal([]byte(groups), &m.GroupRoles); err != nil {
		return nil, fmt.Errorf("get sync role mapping: %w", err)
	}
	m.ConnectionID, m.ApplyToExisting, m.UpdatedAt = connectionID, existing == 1, parseTSPtr(sql.NullString{String: at, Valid: true})
	return &m, nil
}

// SaveSyncRoleMapping writes a connection's group-to-role mapping.
func (db *DB) SaveSyncRoleMapping(ctx context.Context, orgID string, m *app.SyncRoleMapping) error {
	groups, err := json.Marshal(m.GroupRoles)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO sync_role_mappings (organization_id, connection_id, default_role, group_roles,
		apply_to_existing, updated_by, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (organization_id, connection_id) DO UPDATE SET default_role = excluded.default_role,
		group_roles = excluded.group_roles, apply_to_existing = excluded.apply_to_existing,
		updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		orgID, m.ConnectionID, string(m.DefaultRole), string(groups), boolInt(m.ApplyToExisting), m.UpdatedBy, ts(*m.UpdatedAt))
	return mapErr(err)
}
