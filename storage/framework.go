package storage

import (
	"context"
	"database/sql"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.FrameworkStore = (*DB)(nil)

// EnabledFrameworks returns the organization's enabled frameworks and when
// each was enabled.
func (db *DB) EnabledFrameworks(ctx context.Context, orgID string) (map[string]time.Time, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT framework_id, enabled_at FROM organization_frameworks WHERE organization_id = ?`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id, at string
		if err := rows.Scan(&id, &at); err != nil {
			return nil, err
		}
		out[id] = parseTS(at)
	}
	return out, rows.Err()
}

// EnableFramework records a framework as enabled.
func (db *DB) EnableFramework(ctx context.Context, orgID, frameworkID string, at time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO organization_frameworks (organization_id, framework_id, enabled_at) VALUES (?, ?, ?)`,
		orgID, frameworkID, ts(at))
	return mapErr(err)
}

const customFrameworkColumns = `id, slug, name, short_name, version, description, created_at, updated_at`

func scanCustomFramework(row interface{ Scan(...any) error }) (*app.Framework, error) {
	var f app.Framework
	var created, updated string
	if err := row.Scan(&f.ID, &f.Slug, &f.Name, &f.ShortName, &f.Version, &f.Description, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	c, u := parseTS(created), parseTS(updated)
	f.CreatedAt, f.UpdatedAt = &c, &u
	f.Custom, f.Coverage, f.License, f.Sources = true, app.CoverageCustom, "Defined by the organization.", []app.FrameworkPart{}
	return &f, nil
}

// CreateCustomFramework inserts a custom framework.
func (db *DB) CreateCustomFramework(ctx context.Context, orgID string, f *app.Framework) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO custom_frameworks (organization_id, `+customFrameworkColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, f.ID, f.Slug, f.Name, f.ShortName, f.Version, f.Description,
		ts(*f.CreatedAt), ts(*f.UpdatedAt))
	return mapErr(err)
}

// UpdateCustomFramework writes a custom framework's mutable columns.
func (db *DB) UpdateCustomFramework(ctx context.Context, orgID string, f *app.Framework) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE custom_frameworks SET slug = ?, name = ?, short_name = ?, version = ?,
		description = ?, updated_at = ? WHERE organization_id = ? AND id = ?`, f.Slug, f.Name, f.ShortName, f.Version,
		f.Description, ts(*f.UpdatedAt), orgID, f.ID)
	return affected(res, err)
}

// GetCustomFramework returns a custom framework by id or slug, with counts.
func (db *DB) GetCustomFramework(ctx context.Context, orgID, idOrSlug string) (*app.Framework, error) {
	f, err := scanCustomFramework(db.rd(ctx).QueryRowContext(ctx, `SELECT `+customFrameworkColumns+` FROM custom_frameworks
		WHERE organization_id = ? AND (id = ? OR slug = ?)`, orgID, idOrSlug, idOrSlug))
	if err != nil {
		return nil, err
	}
	err = db.rd(ctx).QueryRowContext(ctx, `SELECT count(*), coalesce(sum(assessable), 0) FROM custom_requirements
		WHERE organization_id = ? AND framework_id = ?`, orgID, f.ID).Scan(&f.RequirementCount, &f.AssessableCount)
	return f, err
}

// ListCustomFrameworks returns the organization's custom frameworks.
func (db *DB) ListCustomFrameworks(ctx context.Context, orgID string) ([]app.Framework, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+prefixed("f.", customFrameworkColumns)+`,
		(SELECT count(*) FROM custom_requirements r WHERE r.organization_id = f.organization_id AND r.framework_id = f.id),
		(SELECT coalesce(sum(assessable), 0) FROM custom_requirements r WHERE r.organization_id = f.organization_id AND r.framework_id = f.id)
		FROM custom_frameworks f WHERE f.organization_id = ? ORDER BY f.id`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []app.Framework
	for rows.Next() {
		var f app.Framework
		var created, updated string
		if err := rows.Scan(&f.ID, &f.Slug, &f.Name, &f.ShortName, &f.Version, &f.Description, &created, &updated,
			&f.RequirementCount, &f.AssessableCount); err != nil {
			return nil, err
		}
		c, u := parseTS(created), parseTS(updated)
		f.CreatedAt, f.UpdatedAt = &c, &u
		f.Custom, f.Coverage, f.License, f.Sources = true, app.CoverageCustom, "Defined by the organization.", []app.FrameworkPart{}
		out = append(out, f)
	}
	return out, rows.Err()
}

const customRequirementColumns = `id, framework_id, ref, title, description, parent_ref, assessable, position`

func scanCustomRequirement(row interface{ Scan(...any) error }) (*app.Requirement, error) {
	var r app.Requirement
	var assessable int
	if err := row.Scan(&r.ID, &r.FrameworkID, &r.Ref, &r.Title, &r.Description, &r.ParentRef, &assessable, &r.Position); err != nil {
		return nil, mapErr(err)
	}
	r.Assessable, r.Custom, r.ControlIDs = assessable == 1, true, []string{}
	return &r, nil
}

// CreateCustomRequirement inserts a requirement the organization added.
func (db *DB) CreateCustomRequirement(ctx context.Context, orgID string, r *app.Requirement, at time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO custom_requirements (organization_id, `+customRequirementColumns+`, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, r.ID, r.FrameworkID, r.Ref, r.Title, r.Description, r.ParentRef,
		boolInt(r.Assessable), r.Position, ts(at))
	return mapErr(err)
}

// ListCustomRequirements returns the requirements the organization added to a framework.
func (db *DB) ListCustomRequirements(ctx context.Context, orgID, frameworkID string) ([]app.Requirement, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+customRequirementColumns+` FROM custom_requirements
		WHERE organization_id = ? AND framework_id = ? ORDER BY position, id`, orgID, frameworkID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []app.Requirement
	byRef := map[string]string{}
	for rows.Next() {
		r, err := scanCustomRequirement(rows)
		if err != nil {
			return nil, err
		}
		byRef[r.Ref] = r.ID
		out = append(out, *r)
	}
	for i := range out {
		if id, ok := byRef[out[i].ParentRef]; ok && out[i].ParentRef != "" {
			out[i].ParentID = &id
		}
	}
	return out, rows.Err()
}

// GetCustomRequirement returns one requirement the organization added.
func (db *DB) GetCustomRequirement(ctx context.Context, orgID, id string) (*app.Requirement, error) {
	return scanCustomRequirement(db.rd(ctx).QueryRowContext(ctx, `SELECT `+customRequirementColumns+` FROM custom_requirements
		WHERE organization_id = ? AND id = ?`, orgID, id))
}

// OrgRequirementControls maps each requirement the organization serves to its controls.
func (db *DB) OrgRequirementControls(ctx context.Context, orgID string) (map[string][]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT requirement_id, control_id FROM requirement_controls
		WHERE organization_id = ? ORDER BY created_at, rowid`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var r, c string
		if err := rows.Scan(&r, &c); err != nil {
			return nil, err
		}
		out[r] = append(out[r], c)
	}
	return out, rows.Err()
}

// LinkRequirementControls inserts requirement-to-control links (existing ones are kept).
func (db *DB) LinkRequirementControls(ctx context.Context, orgID string, links []app.RequirementControl, at time.Time) error {
	if len(links) == 0 {
		return nil
	}
	return db.InTx(ctx, func(ctx context.Context) error {
		tx := ctx.Value(txKey{}).(*txState).tx
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO requirement_controls (organization_id, framework_id, requirement_id,
			control_id, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, l := range links {
			if _, err := stmt.ExecContext(ctx, orgID, l.FrameworkID, l.RequirementID, l.ControlID, ts(at)); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
}

// FrameworkControlStates returns each (requirement, control) pair of a
// framework with the control's status, in one query.
func (db *DB) FrameworkControlStates(ctx context.Context, orgID, frameworkID string) ([]app.ControlState, error) {
	hint := "INDEXED BY controls_id_org_status" // SQLite's planner hint; PostgreSQL has none
	if db.pg {
		hint = ""
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT rc.requirement_id, rc.control_id, c.status FROM requirement_controls rc
		JOIN controls c `+hint+` ON c.id = rc.control_id AND c.organization_id = rc.organization_id
		WHERE rc.organization_id = ? AND rc.framework_id = ?`, orgID, frameworkID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []app.ControlState
	for rows.Next() {
		var s app.ControlState
		if err := rows.Scan(&s.RequirementID, &s.ControlID, &s.Status); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// ControlRequirementLinks returns the requirements each control serves.
func (db *DB) ControlRequirementLinks(ctx context.Context, orgID string, controlIDs []string) (map[string][]app.RequirementControl, error) {
	out := map[string][]app.RequirementControl{}
	if len(controlIDs) == 0 {
		return out, nil
	}
	args := []any{orgID}
	for _, id := range controlIDs {
		args = append(args, id)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT framework_id, requirement_id, control_id FROM requirement_controls
		WHERE organization_id = ? AND control_id IN (`+placeholders(len(controlIDs))+`) ORDER BY created_at, rowid`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var l app.RequirementControl
		if err := rows.Scan(&l.FrameworkID, &l.RequirementID, &l.ControlID); err != nil {
			return nil, err
		}
		out[l.ControlID] = append(out[l.ControlID], l)
	}
	return out, rows.Err()
}

// SOADecisions returns the stored applicability decisions of a framework.
func (db *DB) SOADecisions(ctx context.Context, orgID, frameworkID string) (map[string]app.SOADecision, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT requirement_id, applicable, justification, updated_at FROM soa_entries
		WHERE organization_id = ? AND framework_id = ?`, orgID, frameworkID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]app.SOADecision{}
	for rows.Next() {
		d := app.SOADecision{FrameworkID: frameworkID}
		var applicable int
		var just sql.NullString
		var updated string
		if err := rows.Scan(&d.RequirementID, &applicable, &just, &updated); err != nil {
			return nil, err
		}
		d.Applicable, d.Justification, d.UpdatedAt = applicable == 1, strPtr(just), parseTS(updated)
		out[d.RequirementID] = d
	}
	return out, rows.Err()
}

// SOAExclusions returns the requirements the Statement of Applicability excludes.
func (db *DB) SOAExclusions(ctx context.Context, orgID, frameworkID string) (map[string]bool, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT requirement_id FROM soa_entries WHERE organization_id = ? AND framework_id = ?
		AND applicable = 0`, orgID, frameworkID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// SaveSOADecision inserts or replaces an applicability decision.
func (db *DB) SaveSOADecision(ctx context.Context, orgID string, d app.SOADecision) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO soa_entries (organization_id, framework_id, requirement_id, applicable,
		justification, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (organization_id, requirement_id) DO UPDATE SET
		applicable = excluded.applicable, justification = excluded.justification, updated_at = excluded.updated_at`,
		orgID, d.FrameworkID, d.RequirementID, boolInt(d.Applicable), nullStr(d.Justification), ts(d.UpdatedAt))
	return mapErr(err)
}
