package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

const vendorColumns = `id, name, description, category, status, inherent_probability, inherent_impact, residual_probability,
	residual_impact, website, assignee_id, contact_email, country, criticality, ict_service, processes_personal_data,
	dpa_status, dpa_signed_at, dpa_url, last_reviewed_at, next_review_due, transfer_mechanism, sub_processors, risk_score,
	archived_at, created_at, updated_at`

func scanVendor(row interface{ Scan(...any) error }) (*app.Vendor, error) {
	var v app.Vendor
	var resP, resI, website, assignee, email, country, dpaSigned, dpaURL, reviewed, nextDue, transfer, archived sql.NullString
	var ict, personal int
	var subs string
	var score sql.NullInt64
	var created, updated string
	if err := row.Scan(&v.ID, &v.Name, &v.Description, &v.Category, &v.Status, &v.InherentProbability, &v.InherentImpact,
		&resP, &resI, &website, &assignee, &email, &country, &v.Criticality, &ict, &personal, &v.DPAStatus, &dpaSigned,
		&dpaURL, &reviewed, &nextDue, &transfer, &subs, &score, &archived, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	v.ResidualProbability, v.ResidualImpact = strPtr(resP), strPtr(resI)
	v.Website, v.AssigneeID, v.ContactEmail, v.Country = strPtr(website), strPtr(assignee), strPtr(email), strPtr(country)
	v.ICTService, v.ProcessesPersonalData = ict == 1, personal == 1
	v.DPASignedAt, v.DPAURL, v.LastReviewedAt = parseTSPtr(dpaSigned), strPtr(dpaURL), parseTSPtr(reviewed)
	v.NextReviewDue, v.TransferMechanism = strPtr(nextDue), strPtr(transfer)
	v.SubProcessors = []app.SubProcessor{}
	if subs != "[]" {
		if err := json.Unmarshal([]byte(subs), &v.SubProcessors); err != nil {
			return nil, fmt.Errorf("decode sub-processors of %s: %w", v.ID, err)
		}
	}
	if score.Valid {
		s := int(score.Int64)
		v.RiskScore = &s
	}
	v.ArchivedAt = parseTSPtr(archived)
	v.CreatedAt, v.UpdatedAt = parseTS(created), parseTS(updated)
	return &v, nil
}

func vendorArgs(v *app.Vendor) ([]any, error) {
	subs, err := json.Marshal(v.SubProcessors)
	if err != nil {
		return nil, err
	}
	var score any
	if v.RiskScore != nil {
		score = *v.RiskScore
	}
	return []any{v.Name, v.Description, v.Category, v.Status, v.InherentProbability, v.InherentImpact,
		nullStr(v.ResidualProbability), nullStr(v.ResidualImpact), nullStr(v.Website), nullStr(v.AssigneeID),
		nullStr(v.ContactEmail), nullStr(v.Country), v.Criticality, boolInt(v.ICTService), boolInt(v.ProcessesPersonalData),
		v.DPAStatus, tsPtr(v.DPASignedAt), nullStr(v.DPAURL), tsPtr(v.LastReviewedAt), nullStr(v.NextReviewDue),
		nullStr(v.TransferMechanism), string(subs), score, tsPtr(v.ArchivedAt), ts(v.CreatedAt), ts(v.UpdatedAt)}, nil
}

// CreateVendor inserts a vendor.
func (db *DB) CreateVendor(ctx context.Context, orgID string, v *app.Vendor) error {
	args, err := vendorArgs(v)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO vendors (organization_id, `+vendorColumns+`) VALUES (?, ?, `+placeholders(len(args))+`)`,
		append([]any{orgID, v.ID}, args...)...)
	return mapErr(err)
}

// UpdateVendor writes every mutable column.
func (db *DB) UpdateVendor(ctx context.Context, orgID string, v *app.Vendor) error {
	args, err := vendorArgs(v)
	if err != nil {
		return err
	}
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE vendors SET name = ?, description = ?, category = ?, status = ?,
		inherent_probability = ?, inherent_impact = ?, residual_probability = ?, residual_impact = ?, website = ?,
		assignee_id = ?, contact_email = ?, country = ?, criticality = ?, ict_service = ?, processes_personal_data = ?,
		dpa_status = ?, dpa_signed_at = ?, dpa_url = ?, last_reviewed_at = ?, next_review_due = ?, transfer_mechanism = ?,
		sub_processors = ?, risk_score = ?, archived_at = ?, created_at = ?, updated_at = ?
		WHERE organization_id = ? AND id = ?`, append(args, orgID, v.ID)...)
	return affected(res, err)
}

// getVendorSQL returns one vendor.
func (db *DB) getVendorSQL(ctx context.Context, orgID, id string) (*app.Vendor, error) {
	return scanVendor(db.rd(ctx).QueryRowContext(ctx, `SELECT `+vendorColumns+` FROM vendors WHERE organization_id = ? AND id = ?`, orgID, id))
}

var vendorSortColumns = map[string]string{
	"name": "name", "createdAt": "id", "updatedAt": "updated_at", "riskScore": "risk_score", "nextReviewDue": "next_review_due",
}

// listVendorsSQL returns a page of vendors matching every filter.
func (db *DB) listVendorsSQL(ctx context.Context, orgID string, f app.VendorFilter) (app.List[app.Vendor], error) {
	where := []string{"organization_id = ?"}
	args := []any{orgID}
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if f.Archived {
		where = append(where, "archived_at IS NOT NULL")
	} else {
		where = append(where, "archived_at IS NULL")
	}
	if f.Criticality != "" {
		add("criticality = ?", f.Criticality)
	}
	if f.ProcessesPersonalData != nil {
		add("processes_personal_data = ?", boolInt(*f.ProcessesPersonalData))
	}
	if f.ICTService != nil {
		add("ict_service = ?", boolInt(*f.ICTService))
	}
	if f.Category != "" {
		add("category = ?", f.Category)
	}
	if f.Country != "" {
		add("country = ?", f.Country)
	}
	if f.DPAStatus != "" {
		add("dpa_status = ?", f.DPAStatus)
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if f.AssigneeID != "" {
		add("assignee_id = ?", f.AssigneeID)
	}
	if f.Search != "" {
		add("instr(lower(name), ?) > 0", strings.ToLower(f.Search))
	}
	order := "id"
	if f.Sort != "" {
		col := vendorSortColumns[strings.TrimPrefix(f.Sort, "-")]
		dir := "ASC"
		if strings.HasPrefix(f.Sort, "-") {
			dir = "DESC"
		}
		if col != "" && col != "id" {
			order = col + " " + dir + ", id"
		} else if col == "id" {
			order = "id " + dir
		}
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.Vendor]{Items: []app.Vendor{}}
	q := db.rd(ctx)
	var rows *sql.Rows
	var err error
	if f.Search != "" {
		// A text search tests every name of the organization: one pass
		// finds the matches in order, which gives the total and the page,
		// instead of a count and a page query each testing every name.
		var ids []string
		if ids, err = queryIDs(ctx, q, `SELECT id FROM vendors WHERE `+cond+` ORDER BY `+order, args...); err != nil {
			return out, err
		}
		out.Total = len(ids)
		if f.Page.Offset() >= out.Total {
			return out, nil
		}
		page, err := json.Marshal(ids[f.Page.Offset():min(f.Page.Offset()+f.Page.PerPage, len(ids))])
		if err != nil {
			return out, err
		}
		rows, err = q.QueryContext(ctx, `SELECT `+vendorColumns+` FROM vendors WHERE organization_id = ? AND id IN
			(SELECT value FROM json_each(?)) ORDER BY `+order, orgID, string(page))
		if err != nil {
			return out, err
		}
	} else {
		if err := countRows(ctx, q, `SELECT count(*) FROM vendors WHERE `+cond, args, &out.Total); err != nil {
			return out, err
		}
		if f.Page.Offset() >= out.Total {
			return out, nil
		}
		// The page's ids come from the list index alone (filters and sort
		// keys other than name live in it); only the page's rows are read
		// in full.
		rows, err = q.QueryContext(ctx, `SELECT `+vendorColumns+` FROM vendors WHERE organization_id = ? AND id IN
			(SELECT id FROM vendors WHERE `+cond+` ORDER BY `+order+` LIMIT ? OFFSET ?) ORDER BY `+order,
			append(append([]any{orgID}, args...), f.Page.PerPage, f.Page.Offset())...)
		if err != nil {
			return out, err
		}
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scanVendor(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *v)
	}
	return out, rows.Err()
}
