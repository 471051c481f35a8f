package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.VendorAssessmentStore = (*DB)(nil)

const assessmentColumns = `id, organization_id, vendor_id, batch_id, status, website, results, suggested_probability, suggested_impact,
	reasons, error, requested_by, created_at, started_at, finished_at, accepted_at, accepted_by`

func scanAssessment(row interface{ Scan(...any) error }) (*app.VendorAssessment, error) {
	var v app.VendorAssessment
	var batch, prob, impact, errMsg, started, finished, accepted, acceptedBy sql.NullString
	var results, reasons, created string
	if err := row.Scan(&v.ID, &v.OrganizationID, &v.VendorID, &batch, &v.Status, &v.Website, &results, &prob, &impact, &reasons,
		&errMsg, &v.RequestedBy, &created, &started, &finished, &accepted, &acceptedBy); err != nil {
		return nil, mapErr(err)
	}
	v.RunID = v.ID
	str := func(s sql.NullString) *string {
		if !s.Valid {
			return nil
		}
		return &s.String
	}
	v.BatchID, v.SuggestedProbability, v.SuggestedImpact, v.Error, v.AcceptedBy = str(batch), str(prob), str(impact), str(errMsg), str(acceptedBy)
	if err := json.Unmarshal([]byte(results), &v.Results); err != nil {
		return nil, fmt.Errorf("assessment %s results: %w", v.ID, err)
	}
	if err := json.Unmarshal([]byte(reasons), &v.Reasons); err != nil {
		return nil, fmt.Errorf("assessment %s reasons: %w", v.ID, err)
	}
	if v.Results.Checked == nil {
		v.Results.Checked = []string{}
	}
	if v.Results.Checks == nil {
		v.Results.Checks = []app.AssessmentCheck{}
	}
	if v.Results.Logs == nil {
		v.Results.Logs = []app.RunLog{}
	}
	if v.Reasons == nil {
		v.Reasons = []string{}
	}
	v.CreatedAt = parseTS(created)
	v.StartedAt, v.FinishedAt, v.AcceptedAt = parseTSPtr(started), parseTSPtr(finished), parseTSPtr(accepted)
	return &v, nil
}

// CreateVendorAssessment inserts a queued assessment.
func (db *DB) CreateVendorAssessment(ctx context.Context, orgID string, v *app.VendorAssessment) error {
	results, err := json.Marshal(v.Results)
	if err != nil {
		return err
	}
	reasons, err := integJSON(v.Reasons, "[]")
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO vendor_assessments (id, organization_id, vendor_id, batch_id, status, website, results,
		reasons, requested_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		v.ID, orgID, v.VendorID, nullStr(v.BatchID), v.Status, v.Website, string(results), reasons, v.RequestedBy, ts(v.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert vendor assessment: %w", mapErr(err))
	}
	return nil
}

// UpdateVendorAssessment writes an assessment's outcome and acceptance.
func (db *DB) UpdateVendorAssessment(ctx context.Context, orgID string, v *app.VendorAssessment) error {
	results, err := json.Marshal(v.Results)
	if err != nil {
		return err
	}
	reasons, err := integJSON(v.Reasons, "[]")
	if err != nil {
		return err
	}
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE vendor_assessments SET status = ?, results = ?, suggested_probability = ?,
		suggested_impact = ?, reasons = ?, error = ?, started_at = ?, finished_at = ?, accepted_at = ?, accepted_by = ?
		WHERE organization_id = ? AND id = ?`, v.Status, string(results), nullStr(v.SuggestedProbability), nullStr(v.SuggestedImpact),
		reasons, nullStr(v.Error), tsPtr(v.StartedAt), tsPtr(v.FinishedAt), tsPtr(v.AcceptedAt), nullStr(v.AcceptedBy), orgID, v.ID)
	return affected(res, err)
}

// GetVendorAssessment returns one assessment.
func (db *DB) GetVendorAssessment(ctx context.Context, orgID, id string) (*app.VendorAssessment, error) {
	return scanAssessment(db.rd(ctx).QueryRowContext(ctx, `SELECT `+assessmentColumns+` FROM vendor_assessments
		WHERE organization_id = ? AND id = ?`, orgID, id))
}

// ListVendorAssessments lists a vendor's assessments, newest first.
func (db *DB) ListVendorAssessments(ctx context.Context, orgID, vendorID string, limit int) ([]app.VendorAssessment, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+assessmentColumns+` FROM vendor_assessments
		WHERE organization_id = ? AND vendor_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, orgID, vendorID, limit)
	if err != nil {
		return nil, fmt.Errorf("list vendor assessments: %w", err)
	}
	defer rows.Close()
	out := []app.VendorAssessment{}
	for rows.Next() {
		v, err := scanAssessment(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}

// ClaimVendorAssessment moves the oldest queued assessment to running.
func (db *DB) ClaimVendorAssessment(ctx context.Context, now time.Time) (*app.VendorAssessment, error) {
	var out *app.VendorAssessment
	err := db.InTx(ctx, func(ctx context.Context) error {
		var id string
		if err := db.wr(ctx).QueryRowContext(ctx, `SELECT id FROM vendor_assessments WHERE status = 'queued'
			ORDER BY created_at, id LIMIT 1`).Scan(&id); err != nil {
			return mapErr(err)
		}
		if _, err := db.wr(ctx).ExecContext(ctx, `UPDATE vendor_assessments SET status = 'running', started_at = ? WHERE id = ?`, ts(now), id); err != nil {
			return err
		}
		var err error
		out, err = scanAssessment(db.wr(ctx).QueryRowContext(ctx, `SELECT `+assessmentColumns+` FROM vendor_assessments WHERE id = ?`, id))
		return err
	})
	return out, err
}

// FailRunningVendorAssessments marks assessments left running failed.
func (db *DB) FailRunningVendorAssessments(ctx context.Context, now time.Time, reason string) (int, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE vendor_assessments SET status = 'failed', error = ?, finished_at = ? WHERE status = 'running'`,
		reason, ts(now))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
