package storage

import (
	"context"
	"database/sql"

	"github.com/compliance-appliance/compliance/app"
)

// GetDeviceEvidenceLink returns the task and evidence device compliance keeps on a control.
func (db *DB) GetDeviceEvidenceLink(ctx context.Context, orgID, controlID string) (*app.DeviceEvidenceLink, error) {
	var l app.DeviceEvidenceLink
	var sum, det sql.NullString
	var at string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT control_id, task_id, summary_evidence_id, detail_evidence_id, compliant, total, refreshed_at
		FROM device_evidence WHERE organization_id = ? AND control_id = ?`, orgID, controlID).
		Scan(&l.ControlID, &l.TaskID, &sum, &det, &l.Compliant, &l.Total, &at)
	if err != nil {
		return nil, mapErr(err)
	}
	l.SummaryEvidenceID, l.DetailEvidenceID, l.RefreshedAt = strPtr(sum), strPtr(det), parseTS(at)
	return &l, nil
}

// SaveDeviceEvidenceLink records the task and evidence device compliance keeps on a control.
func (db *DB) SaveDeviceEvidenceLink(ctx context.Context, orgID string, l *app.DeviceEvidenceLink) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO device_evidence (organization_id, control_id, task_id, summary_evidence_id,
		detail_evidence_id, compliant, total, refreshed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (organization_id, control_id) DO UPDATE SET task_id = excluded.task_id, summary_evidence_id = excluded.summary_evidence_id,
		detail_evidence_id = excluded.detail_evidence_id, compliant = excluded.compliant, total = excluded.total, refreshed_at = excluded.refreshed_at`,
		orgID, l.ControlID, l.TaskID, nullStr(l.SummaryEvidenceID), nullStr(l.DetailEvidenceID), l.Compliant, l.Total, ts(l.RefreshedAt))
	return mapErr(err)
}
