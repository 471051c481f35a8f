package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.ESGStore = (*DB)(nil)

const esgColumns = `id, esrs_code, standard, data_point_id, value, unit, period, methodology, notes, created_at, updated_at`

func scanESG(row interface{ Scan(...any) error }) (*app.ESGDataPoint, error) {
	var d app.ESGDataPoint
	var created, updated string
	if err := row.Scan(&d.ID, &d.ESRSCode, &d.Standard, &d.DataPointID, &d.Value, &d.Unit, &d.Period, &d.Methodology,
		&d.Notes, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	d.CreatedAt, d.UpdatedAt = parseTS(created), parseTS(updated)
	return &d, nil
}

// CreateESGDataPoint inserts a value; a second value for the same code,
// data point and period is ErrConflict.
func (db *DB) CreateESGDataPoint(ctx context.Context, orgID string, d *app.ESGDataPoint) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO esg_data_points (organization_id, `+esgColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, d.ID, d.ESRSCode, d.Standard, d.DataPointID, d.Value, d.Unit,
		d.Period, d.Methodology, d.Notes, ts(d.CreatedAt), ts(d.UpdatedAt))
	return mapErr(err)
}

// UpdateESGDataPoint writes every mutable column.
func (db *DB) UpdateESGDataPoint(ctx context.Context, orgID string, d *app.ESGDataPoint) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE esg_data_points SET esrs_code = ?, standard = ?, data_point_id = ?,
		value = ?, unit = ?, period = ?, methodology = ?, notes = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		d.ESRSCode, d.Standard, d.DataPointID, d.Value, d.Unit, d.Period, d.Methodology, d.Notes, ts(d.UpdatedAt), orgID, d.ID)
	return affected(res, err)
}

// GetESGDataPoint returns one value.
func (db *DB) GetESGDataPoint(ctx context.Context, orgID, id string) (*app.ESGDataPoint, error) {
	return scanESG(db.rd(ctx).QueryRowContext(ctx, `SELECT `+esgColumns+` FROM esg_data_points WHERE organization_id = ? AND id = ?`, orgID, id))
}

// FindESGDataPoint returns the value of a data point for a period.
func (db *DB) FindESGDataPoint(ctx context.Context, orgID, esrsCode, dataPointID, period string) (*app.ESGDataPoint, error) {
	return scanESG(db.rd(ctx).QueryRowContext(ctx, `SELECT `+esgColumns+` FROM esg_data_points
		WHERE organization_id = ? AND esrs_code = ? AND data_point_id = ? AND period = ?`, orgID, esrsCode, dataPointID, period))
}

// ListESGDataPoints returns a page of values by standard, code, period.
func (db *DB) ListESGDataPoints(ctx context.Context, orgID string, f app.ESGFilter) (app.List[app.ESGDataPoint], error) {
	where := []string{"organization_id = ?"}
	args := []any{orgID}
	if f.Standard != "" {
		where, args = append(where, "standard = ?"), append(args, f.Standard)
	}
	if f.Period != "" {
		where, args = append(where, "period = ?"), append(args, f.Period)
	}
	if f.ESRSCode != "" {
		where, args = append(where, "esrs_code = ?"), append(args, f.ESRSCode)
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.ESGDataPoint]{Items: []app.ESGDataPoint{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM esg_data_points WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count esg data points: %w", err)
	}
	if f.Page.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+esgColumns+` FROM esg_data_points WHERE `+cond+`
		ORDER BY period, standard, esrs_code, data_point_id, id LIMIT ? OFFSET ?`, append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list esg data points: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanESG(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *d)
	}
	return out, rows.Err()
}
