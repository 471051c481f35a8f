package storage

import (
	"context"
	"database/sql"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.DeviceAgentStore = (*DB)(nil)

// DeleteDevice deletes a device; its checks go with it (ON DELETE CASCADE).
func (db *DB) DeleteDevice(ctx context.Context, orgID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM devices WHERE organization_id = ? AND id = ?`, orgID, id)
	return affected(res, err)
}

// FindDeviceBySerial returns the organization's device with a serial number.
func (db *DB) FindDeviceBySerial(ctx context.Context, orgID, serial string) (*app.Device, error) {
	return scanDevice(db.wr(ctx).QueryRowContext(ctx, `SELECT `+deviceReadColumns+` FROM devices WHERE organization_id = ? AND serial_number = ? ORDER BY created_at LIMIT 1`, orgID, serial))
}

// UpdateDeviceRegistration stores what the agent reports at registration.
func (db *DB) UpdateDeviceRegistration(ctx context.Context, orgID string, d *app.Device) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE devices SET name = ?, hostname = ?, platform = ?, os_version = ?, hardware_model = ?,
		agent_version = ?, person_id = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		d.Name, d.Hostname, d.Platform, nullStr(d.OSVersion), nullStr(d.HardwareModel), nullStr(d.AgentVersion), nullStr(d.PersonID),
		ts(d.UpdatedAt), orgID, d.ID)
	return affected(res, err)
}

// SaveDeviceCheckIn inserts a check-in's results and updates the device's
// compliance and last check-in.
func (db *DB) SaveDeviceCheckIn(ctx context.Context, orgID string, w app.DeviceCheckInWrite) error {
	q := db.wr(ctx)
	for _, c := range w.Checks {
		if _, err := q.ExecContext(ctx, `INSERT INTO device_checks (id, organization_id, device_id, check_type, passed, method, raw, message,
			exception, checked_at, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, orgID, w.DeviceID, c.CheckType, boolInt(c.Passed), c.Details.Method, c.Details.Raw, c.Details.Message,
			nullStr(c.Details.Exception), ts(c.CheckedAt), ts(c.ReceivedAt)); err != nil {
			return mapErr(err)
		}
	}
	res, err := q.ExecContext(ctx, `UPDATE devices SET is_compliant = ?, last_check_in_at = ?, agent_version = coalesce(?, agent_version),
		compliance_changed_at = coalesce(?, compliance_changed_at), updated_at = ? WHERE organization_id = ? AND id = ?`,
		boolInt(w.IsCompliant), ts(w.At), nullStr(w.AgentVersion), tsPtr(w.ComplianceChangedAt), ts(w.At), orgID, w.DeviceID)
	return affected(res, err)
}

const deviceCheckColumns = `id, device_id, check_type, passed, method, raw, message, exception, checked_at, received_at`

func scanDeviceChecks(rows *sql.Rows, err error) ([]app.DeviceCheck, error) {
	out := []app.DeviceCheck{}
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		var c app.DeviceCheck
		var passed int
		var exc sql.NullString
		var checked, received string
		if err := rows.Scan(&c.ID, &c.DeviceID, &c.CheckType, &passed, &c.Details.Method, &c.Details.Raw, &c.Details.Message,
			&exc, &checked, &received); err != nil {
			return out, err
		}
		c.Passed, c.Details.Exception = passed == 1, strPtr(exc)
		c.CheckedAt, c.ReceivedAt = parseTS(checked), parseTS(received)
		out = append(out, c)
	}
	return out, rows.Err()
}

// LatestDeviceChecks returns the latest result of each check type reported
// at the device's last check-in.
func (db *DB) LatestDeviceChecks(ctx context.Context, orgID, deviceID string) ([]app.DeviceCheck, error) {
	return scanDeviceChecks(db.rd(ctx).QueryContext(ctx, `SELECT `+deviceCheckColumns+` FROM device_checks c
		WHERE organization_id = ? AND device_id = ? AND id = (SELECT id FROM device_checks c2 WHERE c2.organization_id = c.organization_id
			AND c2.device_id = c.device_id AND c2.check_type = c.check_type ORDER BY received_at DESC, id DESC LIMIT 1)
		ORDER BY check_type`, orgID, deviceID))
}

// DeviceCheckHistory returns the device's most recent results, newest first.
func (db *DB) DeviceCheckHistory(ctx context.Context, orgID, deviceID string, limit int) ([]app.DeviceCheck, error) {
	return scanDeviceChecks(db.rd(ctx).QueryContext(ctx, `SELECT `+deviceCheckColumns+` FROM device_checks
		WHERE organization_id = ? AND device_id = ? ORDER BY received_at DESC, id DESC LIMIT ?`, orgID, deviceID, limit))
}

// CreateDeviceAgentToken stores an agent token's hash.
func (db *DB) CreateDeviceAgentToken(ctx context.Context, t *app.DeviceAgentToken) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO device_agent_tokens (id, organization_id, device_id, token_hash, created_at)
		VALUES (?, ?, ?, ?, ?)`, t.ID, t.OrganizationID, t.DeviceID, t.Hash, ts(t.CreatedAt))
	return mapErr(err)
}

// DeviceAgentTokenByHash finds an agent token by its hash; this lookup
// decides the organization, like an API key's.
func (db *DB) DeviceAgentTokenByHash(ctx context.Context, hash string) (*app.DeviceAgentToken, error) {
	var t app.DeviceAgentToken
	var created string
	var used, revoked sql.NullString
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT id, organization_id, device_id, token_hash, created_at, last_used_at, revoked_at
		FROM device_agent_tokens WHERE token_hash = ?`, hash).Scan(&t.ID, &t.OrganizationID, &t.DeviceID, &t.Hash, &created, &used, &revoked)
	if err != nil {
		return nil, mapErr(err)
	}
	t.CreatedAt, t.LastUsedAt, t.RevokedAt = parseTS(created), parseTSPtr(used), parseTSPtr(revoked)
	return &t, nil
}

// TouchDeviceAgentToken records the token's last use.
func (db *DB) TouchDeviceAgentToken(ctx context.Context, orgID, id string, at time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `UPDATE device_agent_tokens SET last_used_at = ? WHERE organization_id = ? AND id = ?`, ts(at), orgID, id)
	return mapErr(err)
}

// RevokeDeviceAgentTokens revokes every live token of a device.
func (db *DB) RevokeDeviceAgentTokens(ctx context.Context, orgID, deviceID string, at time.Time) (int, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE device_agent_tokens SET revoked_at = ? WHERE organization_id = ? AND device_id = ? AND revoked_at IS NULL`,
		ts(at), orgID, deviceID)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

const enrolmentColumns = `id, organization_id, name, token_hash, prefix, max_uses, uses, person_id, expires_at, created_by, created_at, revoked_at`

func scanEnrolmentToken(row interface{ Scan(...any) error }) (*app.EnrolmentToken, error) {
	var t app.EnrolmentToken
	var maxUses sql.NullInt64
	var person, createdBy, revoked sql.NullString
	var expires, created string
	if err := row.Scan(&t.ID, &t.OrganizationID, &t.Name, &t.Hash, &t.Prefix, &maxUses, &t.Uses, &person, &expires, &createdBy, &created, &revoked); err != nil {
		return nil, mapErr(err)
	}
	if maxUses.Valid {
		t.MaxUses = app.Ptr(int(maxUses.Int64))
	}
	t.PersonID, t.CreatedBy, t.RevokedAt = strPtr(person), strPtr(createdBy), parseTSPtr(revoked)
	t.ExpiresAt, t.CreatedAt = parseTS(expires), parseTS(created)
	return &t, nil
}

// CreateEnrolmentToken stores an enrolment token's hash.
func (db *DB) CreateEnrolmentToken(ctx context.Context, t *app.EnrolmentToken) error {
	var maxUses any
	if t.MaxUses != nil {
		maxUses = *t.MaxUses
	}
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO device_enrolment_tokens (`+enrolmentColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.OrganizationID, t.Name, t.Hash, t.Prefix, maxUses, t.Uses, nullStr(t.PersonID), ts(t.ExpiresAt), nullStr(t.CreatedBy),
		ts(t.CreatedAt), tsPtr(t.RevokedAt))
	return mapErr(err)
}

// ListEnrolmentTokens lists the organization's enrolment tokens, newest first.
func (db *DB) ListEnrolmentTokens(ctx context.Context, orgID string) ([]app.EnrolmentToken, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+enrolmentColumns+` FROM device_enrolment_tokens WHERE organization_id = ?
		ORDER BY created_at DESC, id DESC LIMIT 500`, orgID)
	out := []app.EnrolmentToken{}
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanEnrolmentToken(rows)
		if err != nil {
			return out, err
		}
		out = append(out, *t)
	}
	return out, rows.Err()
}

// EnrolmentTokenByHash finds an enrolment token by its hash.
func (db *DB) EnrolmentTokenByHash(ctx context.Context, hash string) (*app.EnrolmentToken, error) {
	return scanEnrolmentToken(db.rd(ctx).QueryRowContext(ctx, `SELECT `+enrolmentColumns+` FROM device_enrolment_tokens WHERE token_hash = ?`, hash))
}

// UseEnrolmentToken counts one use, atomically refusing (ErrNotFound) a
// token that is used up or revoked.
func (db *DB) UseEnrolmentToken(ctx context.Context, orgID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE device_enrolment_tokens SET uses = uses + 1 WHERE organization_id = ? AND id = ?
		AND revoked_at IS NULL AND (max_uses IS NULL OR uses < max_uses)`, orgID, id)
	return affected(res, err)
}

// RevokeEnrolmentToken revokes an enrolment token.
func (db *DB) RevokeEnrolmentToken(ctx context.Context, orgID, id string, at time.Time) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE device_enrolment_tokens SET revoked_at = coalesce(revoked_at, ?) WHERE organization_id = ? AND id = ?`,
		ts(at), orgID, id)
	return affected(res, err)
}
