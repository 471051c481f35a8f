package storage

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.DeviceSyncStore = (*DB)(nil)

// deviceDirectoryColumns are a device's directory fields, in the order of
// deviceDirectoryScan.dest and deviceDirectoryArgs.
const deviceDirectoryColumns = `directory_connection_id, directory_provider, directory_external_id, directory_owner_email,
	directory_model, directory_status, directory_compliance, directory_encrypted, directory_last_sync_at, directory_removed_at,
	directory_updated_at`

const deviceDirectoryParams = `?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?`

type deviceDirectoryScan struct {
	conn, provider, ext, owner, model, status, compliance, lastSync, removed, updated sql.NullString
	encrypted                                                                         sql.NullInt64
}

func (s *deviceDirectoryScan) dest() []any {
	return []any{&s.conn, &s.provider, &s.ext, &s.owner, &s.model, &s.status, &s.compliance, &s.encrypted, &s.lastSync, &s.removed, &s.updated}
}

func (s *deviceDirectoryScan) info() *app.DeviceDirectoryInfo {
	if !s.conn.Valid || !s.ext.Valid {
		return nil
	}
	return &app.DeviceDirectoryInfo{ConnectionID: s.conn.String, Provider: s.provider.String, ExternalID: s.ext.String,
		OwnerEmail: strPtr(s.owner), Model: strPtr(s.model), Status: strPtr(s.status), ComplianceState: strPtr(s.compliance),
		Encrypted: boolPtr(s.encrypted), LastSyncAt: parseTSPtr(s.lastSync), RemovedAt: parseTSPtr(s.removed), UpdatedAt: parseTSPtr(s.updated)}
}

func deviceDirectoryArgs(d *app.DeviceDirectoryInfo) []any {
	if d == nil {
		return make([]any, 11)
	}
	return []any{d.ConnectionID, d.Provider, d.ExternalID, nullStr(d.OwnerEmail), nullStr(d.Model), nullStr(d.Status),
		nullStr(d.ComplianceState), nullBool(d.Encrypted), tsPtr(d.LastSyncAt), tsPtr(d.RemovedAt), tsPtr(d.UpdatedAt)}
}

// DeviceSyncDevices lists every device of the organization.
func (db *DB) DeviceSyncDevices(ctx context.Context, orgID string) ([]app.Device, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+deviceReadColumns+` FROM devices WHERE organization_id = ? ORDER BY id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list devices for sync: %w", err)
	}
	defer rows.Close()
	var out []app.Device
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, rows.Err()
}

// SaveDirectoryDevice writes a directory-owned device's fields, person and
// directory fields.
func (db *DB) SaveDirectoryDevice(ctx context.Context, orgID string, d *app.Device) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE devices SET name = ?, hostname = ?, platform = ?, os_version = ?, serial_number = ?,
		hardware_model = ?, person_id = ?, is_compliant = ?, updated_at = ?,
		(`+deviceDirectoryColumns+`) = (`+deviceDirectoryParams+`)
		WHERE organization_id = ? AND id = ?`,
		append(append([]any{d.Name, d.Hostname, d.Platform, nullStr(d.OSVersion), nullStr(d.SerialNumber), nullStr(d.HardwareModel),
			nullStr(d.PersonID), boolInt(d.IsCompliant), ts(d.UpdatedAt)}, deviceDirectoryArgs(d.Directory)...), orgID, d.ID)...)
	return affected(res, mapErr(err))
}

// SetDeviceDirectory writes only a device's directory fields.
func (db *DB) SetDeviceDirectory(ctx context.Context, orgID, id string, dir *app.DeviceDirectoryInfo) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE devices SET (`+deviceDirectoryColumns+`) = (`+deviceDirectoryParams+`)
		WHERE organization_id = ? AND id = ?`, append(deviceDirectoryArgs(dir), orgID, id)...)
	return affected(res, mapErr(err))
}

// LastSyncRunOfType is the connection's latest run of a type that was not
// a dry run.
func (db *DB) LastSyncRunOfType(ctx context.Context, orgID, connectionID, syncType string) (*app.SyncRun, error) {
	return scanSyncRun(db.rd(ctx).QueryRowContext(ctx, `SELECT `+syncRunColumns+` FROM sync_runs
		WHERE organization_id = ? AND connection_id = ? AND dry_run = 0 AND sync_type = ? ORDER BY started_at DESC, id DESC LIMIT 1`,
		orgID, connectionID, syncType))
}

// DeviceSyncOrganizations lists the organizations with a device sync
// provider chosen.
func (db *DB) DeviceSyncOrganizations(ctx context.Context) (map[string]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT organization_id, device_provider FROM sync_settings WHERE device_provider IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("list device sync organizations: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var org, slug string
		if err := rows.Scan(&org, &slug); err != nil {
			return nil, err
		}
		out[org] = slug
	}
	return out, rows.Err()
}
