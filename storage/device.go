package storage

import (
	"context"
	"database/sql"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

const deviceColumns = `id, person_id, name, hostname, platform, os_version, serial_number, is_compliant, last_check_in_at, created_at, updated_at, hardware_model, agent_version`

// deviceSourceSQL is a device's effective source: a device the agent
// reports is "agent" whatever registered it.
const deviceSourceSQL = `CASE WHEN agent_version IS NOT NULL OR last_check_in_at IS NOT NULL THEN 'agent' ELSE source END`

// deviceReadColumns are deviceColumns with the source and the directory's
// fields (scanDeviceDirectory).
const deviceReadColumns = deviceColumns + `, ` + deviceSourceSQL + `, ` + deviceDirectoryColumns

func scanDevice(row interface{ Scan(...any) error }) (*app.Device, error) {
	var d app.Device
	var person, osv, serial, last, model, agentVersion sql.NullString
	var compliant int
	var created, updated string
	dir := &deviceDirectoryScan{}
	dest := append([]any{&d.ID, &person, &d.Name, &d.Hostname, &d.Platform, &osv, &serial, &compliant, &last, &created, &updated, &model, &agentVersion, &d.Source},
		dir.dest()...)
	if err := row.Scan(dest...); err != nil {
		return nil, mapErr(err)
	}
	d.Directory = dir.info()
	d.HardwareModel, d.AgentVersion = strPtr(model), strPtr(agentVersion)
	d.PersonID, d.OSVersion, d.SerialNumber = strPtr(person), strPtr(osv), strPtr(serial)
	d.IsCompliant = compliant == 1
	d.LastCheckIn = parseTSPtr(last)
	d.CreatedAt, d.UpdatedAt = parseTS(created), parseTS(updated)
	return &d, nil
}

// CreateDevice inserts a device.
func (db *DB) CreateDevice(ctx context.Context, orgID string, d *app.Device) error {
	if d.Source == "" {
		d.Source = app.DeviceSourceManual
	}
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO devices (organization_id, `+deviceColumns+`, source, `+deviceDirectoryColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, `+deviceDirectoryParams+`)`,
		append([]any{orgID, d.ID, nullStr(d.PersonID), d.Name, d.Hostname, d.Platform, nullStr(d.OSVersion), nullStr(d.SerialNumber),
			boolInt(d.IsCompliant), tsPtr(d.LastCheckIn), ts(d.CreatedAt), ts(d.UpdatedAt), nullStr(d.HardwareModel), nullStr(d.AgentVersion), d.Source},
			deviceDirectoryArgs(d.Directory)...)...)
	return mapErr(err)
}

// GetDevice returns one device.
func (db *DB) GetDevice(ctx context.Context, orgID, id string) (*app.Device, error) {
	return scanDevice(db.rd(ctx).QueryRowContext(ctx, `SELECT `+deviceReadColumns+` FROM devices WHERE organization_id = ? AND id = ?`, orgID, id))
}

// SetDevicePerson links a device to a person, or unlinks it (nil).
func (db *DB) SetDevicePerson(ctx context.Context, orgID, id string, personID *string, at time.Time) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE devices SET person_id = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		nullStr(personID), ts(at), orgID, id)
	return affected(res, err)
}

// ListDevices returns a page of devices.
func (db *DB) ListDevices(ctx context.Context, orgID string, f app.DeviceFilter) (app.List[app.Device], error) {
	cond := "organization_id = ?"
	args := []any{orgID}
	if f.PersonID != "" {
		cond += " AND person_id = ?"
		args = append(args, f.PersonID)
	}
	if f.Unlinked {
		cond += " AND person_id IS NULL"
	}
	if f.Platform != "" {
		cond += " AND platform = ?"
		args = append(args, f.Platform)
	}
	if f.Source != "" {
		cond += " AND " + deviceSourceSQL + " = ?"
		args = append(args, f.Source)
	}
	if f.Compliant != nil {
		cond += " AND is_compliant = ?"
		args = append(args, boolInt(*f.Compliant))
	}
	if f.Stale != nil {
		if *f.Stale {
			cond += " AND (last_check_in_at IS NULL OR last_check_in_at < ?)"
		} else {
			cond += " AND last_check_in_at >= ?"
		}
		args = append(args, ts(f.StaleBefore))
	}
	out := app.List[app.Device]{Items: []app.Device{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM devices WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+deviceReadColumns+` FROM devices WHERE `+cond+` ORDER BY id LIMIT ? OFFSET ?`,
		append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *d)
	}
	return out, rows.Err()
}
