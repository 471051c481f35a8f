package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.RiskStore = (*DB)(nil)

const riskColumns = `id, title, description, category, status, inherent_probability, inherent_impact, residual_probability,
	residual_impact, score, treatment, treatment_description, owner_id, archived_at, created_at, updated_at`

func scanRisk(row interface{ Scan(...any) error }) (*app.Risk, error) {
	var r app.Risk
	var resP, resI, treat, treatDesc, owner, archived sql.NullString
	var created, updated string
	if err := row.Scan(&r.ID, &r.Title, &r.Description, &r.Category, &r.Status, &r.InherentProbability, &r.InherentImpact,
		&resP, &resI, &r.Score, &treat, &treatDesc, &owner, &archived, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	r.ResidualProbability, r.ResidualImpact = strPtr(resP), strPtr(resI)
	r.Treatment, r.TreatmentDescription, r.OwnerID = strPtr(treat), strPtr(treatDesc), strPtr(owner)
	r.ArchivedAt = parseTSPtr(archived)
	r.CreatedAt, r.UpdatedAt = parseTS(created), parseTS(updated)
	r.LinkedControlIDs = []string{}
	// Scores and band are functions of the scales; recompute rather than trust.
	score := r.Score
	r.InherentScore = app.RiskScoreOf(r.InherentProbability, r.InherentImpact)
	r.Score = r.InherentScore
	if r.ResidualProbability != nil && r.ResidualImpact != nil {
		r.ResidualScore = app.Ptr(app.RiskScoreOf(*r.ResidualProbability, *r.ResidualImpact))
		r.Score = *r.ResidualScore
	}
	if r.Score == 0 {
		r.Score = score
	}
	r.Band = app.RiskBand(r.Score)
	return &r, nil
}

func riskArgs(r *app.Risk) []any {
	return []any{r.Title, r.Description, r.Category, r.Status, r.InherentProbability, r.InherentImpact,
		nullStr(r.ResidualProbability), nullStr(r.ResidualImpact), r.Score, nullStr(r.Treatment),
		nullStr(r.TreatmentDescription), nullStr(r.OwnerID), tsPtr(r.ArchivedAt), ts(r.CreatedAt), ts(r.UpdatedAt)}
}

// CreateRisk inserts a risk and its control links.
func (db *DB) CreateRisk(ctx context.Context, orgID string, r *app.Risk) error {
	args := riskArgs(r)
	if _, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO risks (organization_id, `+riskColumns+`) VALUES (?, ?, `+placeholders(len(args))+`)`,
		append([]any{orgID, r.ID}, args...)...); err != nil {
		return fmt.Errorf("insert risk: %w", mapErr(err))
	}
	return db.addLinks(ctx, "risk_controls", "risk_id", orgID, r.ID, r.LinkedControlIDs)
}

// UpdateRisk writes every mutable column and replaces the control links.
func (db *DB) UpdateRisk(ctx context.Context, orgID string, r *app.Risk) error {
	return db.InTx(ctx, func(ctx context.Context) error {
		res, err := db.wr(ctx).ExecContext(ctx, `UPDATE risks SET title = ?, description = ?, category = ?, status = ?,
			inherent_probability = ?, inherent_impact = ?, residual_probability = ?, residual_impact = ?, score = ?,
			treatment = ?, treatment_description = ?, owner_id = ?, archived_at = ?, created_at = ?, updated_at = ?
			WHERE organization_id = ? AND id = ?`, append(riskArgs(r), orgID, r.ID)...)
		if err := affected(res, err); err != nil {
			return err
		}
		return db.setLinks(ctx, "risk_controls", "risk_id", orgID, r.ID, r.LinkedControlIDs)
	})
}

// setLinks replaces the control links of one risk or finding. table and
// column are constants of this package. Callers run inside a transaction
// (the app's InTx), so the delete and inserts commit together.
func (db *DB) setLinks(ctx context.Context, table, column, orgID, id string, controlIDs []string) error {
	if _, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM `+table+` WHERE organization_id = ? AND `+column+` = ?`, orgID, id); err != nil {
		return fmt.Errorf("clear %s: %w", table, err)
	}
	return db.addLinks(ctx, table, column, orgID, id, controlIDs)
}

// addLinks inserts control links of one risk or finding in one statement.
func (db *DB) addLinks(ctx context.Context, table, column, orgID, id string, controlIDs []string) error {
	if len(controlIDs) == 0 {
		return nil
	}
	values := make([]string, len(controlIDs))
	args := make([]any, 0, 3*len(controlIDs))
	for i, c := range controlIDs {
		values[i] = "(?, ?, ?)"
		args = append(args, orgID, id, c)
	}
	if _, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO `+table+` (organization_id, `+column+`, control_id) VALUES `+
		strings.Join(values, ", "), args...); err != nil {
		return fmt.Errorf("link %s: %w", table, mapErr(err))
	}
	return nil
}

// links returns the control ids linked to each of ids, in link order.
func (db *DB) links(ctx context.Context, table, column, orgID string, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{orgID}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+column+`, control_id FROM `+table+`
		WHERE organization_id = ? AND `+column+` IN (`+placeholders(len(ids))+`) ORDER BY rowid`, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, c string
		if err := rows.Scan(&id, &c); err != nil {
			return nil, err
		}
		out[id] = append(out[id], c)
	}
	return out, rows.Err()
}

// GetRisk returns one risk with its linked controls.
func (db *DB) GetRisk(ctx context.Context, orgID, id string) (*app.Risk, error) {
	r, err := scanRisk(db.rd(ctx).QueryRowContext(ctx, `SELECT `+riskColumns+` FROM risks WHERE organization_id = ? AND id = ?`, orgID, id))
	if err != nil {
		return nil, err
	}
	l, err := db.links(ctx, "risk_controls", "risk_id", orgID, []string{id})
	if err != nil {
		return nil, err
	}
	if c := l[id]; c != nil {
		r.LinkedControlIDs = c
	}
	return r, nil
}

// ListRisks returns a page of risks matching every filter, oldest first.
func (db *DB) ListRisks(ctx context.Context, orgID string, f app.RiskFilter) (app.List[app.Risk], error) {
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
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if f.OwnerID != "" {
		add("owner_id = ?", f.OwnerID)
	}
	if f.Category != "" {
		add("category = ?", f.Category)
	}
	if f.MinScore != nil {
		add("score >= ?", *f.MinScore)
	}
	if f.MaxScore != nil {
		add("score <= ?", *f.MaxScore)
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.Risk]{Items: []app.Risk{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM risks WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count risks: %w", err)
	}
	if f.Page.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+riskColumns+` FROM risks WHERE `+cond+` ORDER BY id LIMIT ? OFFSET ?`,
		append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list risks: %w", err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		r, err := scanRisk(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *r)
		ids = append(ids, r.ID)
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	rows.Close()
	l, err := db.links(ctx, "risk_controls", "risk_id", orgID, ids)
	if err != nil {
		return out, err
	}
	for i := range out.Items {
		if c := l[out.Items[i].ID]; c != nil {
			out.Items[i].LinkedControlIDs = c
		}
	}
	return out, nil
}
