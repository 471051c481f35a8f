package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

const cloudFindingQuery = `SELECT f.id, icf.connection_id, c.name, c.provider_slug, icf.check_id, icf.resource_id, f.severity, f.status,
	f.created_at, f.updated_at, COALESCE(r.resource_type, ''), COALESCE(r.resource_name, icf.resource_id), COALESCE(r.message, ''),
	COALESCE(r.status, ''), r.run_id
	FROM integration_check_findings icf
	JOIN findings f ON f.organization_id = icf.organization_id AND f.id = icf.finding_id
	JOIN integration_connections c ON c.organization_id = icf.organization_id AND c.id = icf.connection_id
	LEFT JOIN integration_check_results r ON r.id = (SELECT MAX(x.id) FROM integration_check_results x
		WHERE x.organization_id = icf.organization_id AND x.connection_id = icf.connection_id
		AND x.check_id = icf.check_id AND x.resource_id = icf.resource_id)
	WHERE icf.organization_id = ?`

func scanCloudFinding(row interface{ Scan(...any) error }) (*app.CloudFinding, error) {
	var f app.CloudFinding
	var created, updated string
	var run sql.NullString
	if err := row.Scan(&f.ID, &f.ConnectionID, &f.ConnectionName, &f.ProviderSlug, &f.CheckID, &f.ResourceID, &f.Severity, &f.FindingStatus,
		&created, &updated, &f.ResourceType, &f.ResourceName, &f.Message, &f.LastResult, &run); err != nil {
		return nil, err
	}
	f.CreatedAt, f.UpdatedAt = parseTS(created), parseTS(updated)
	if run.Valid {
		f.LastRunID = &run.String
	}
	return &f, nil
}

// CloudFindings lists the findings linked to check resources of the
// connections, newest first.
func (db *DB) CloudFindings(ctx context.Context, orgID string, connectionIDs []string, severity string) ([]app.CloudFinding, error) {
	q := cloudFindingQuery
	args := []any{orgID}
	if len(connectionIDs) > 0 {
		q += ` AND icf.connection_id IN (?` + strings.Repeat(", ?", len(connectionIDs)-1) + `)`
		for _, id := range connectionIDs {
			args = append(args, id)
		}
	}
	if severity != "" {
		q += ` AND f.severity = ?`
		args = append(args, severity)
	}
	q += ` ORDER BY f.created_at DESC, f.id DESC`
	rows, err := db.rd(ctx).QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("cloud findings: %w", err)
	}
	defer rows.Close()
	out := []app.CloudFinding{}
	for rows.Next() {
		f, err := scanCloudFinding(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *f)
	}
	return out, rows.Err()
}

// CloudFindingByID returns one finding linked to a check resource.
func (db *DB) CloudFindingByID(ctx context.Context, orgID, findingID string) (*app.CloudFinding, error) {
	row := db.rd(ctx).QueryRowContext(ctx, cloudFindingQuery+` AND icf.finding_id = ? LIMIT 1`, orgID, findingID)
	f, err := scanCloudFinding(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.Errorf(app.ErrNotFound, "cloud finding %s not found", findingID)
	}
	return f, err
}
