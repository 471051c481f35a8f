package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.PolicyStore = (*DB)(nil)

// policyColumns are selected with the alias p; the name, description and
// content expressions are replaced for the published view of the list.
const policyColumns = `p.id, p.name, p.description, p.content, p.frequency, p.department, p.is_required_to_sign, p.review_date,
	p.assignee_id, p.approver_id, p.current_version, p.current_version_id, p.last_published_at, p.has_unpublished_changes,
	p.archived_at, p.created_at, p.updated_at,
	(SELECT group_concat(control_id, ',') FROM (SELECT control_id FROM policy_controls pc
		WHERE pc.organization_id = p.organization_id AND pc.policy_id = p.id ORDER BY control_id))`

func scanPolicy(row interface{ Scan(...any) error }) (*app.Policy, error) {
	var p app.Policy
	var freq, dept, review, assignee, approver, curID, published, archived, controls sql.NullString
	var sign, dirty int
	var created, updated string
	if err := row.Scan(&p.ID, &p.Name, &p.Description, &p.Content, &freq, &dept, &sign, &review, &assignee, &approver,
		&p.Version, &curID, &published, &dirty, &archived, &created, &updated, &controls); err != nil {
		return nil, mapErr(err)
	}
	p.Frequency, p.Department, p.ReviewDate = strPtr(freq), strPtr(dept), strPtr(review)
	p.AssigneeID, p.ApproverID, p.CurrentVersionID = strPtr(assignee), strPtr(approver), strPtr(curID)
	p.IsRequiredToSign, p.HasUnpublishedChanges = sign == 1, dirty == 1
	p.LastPublishedAt, p.ArchivedAt = parseTSPtr(published), parseTSPtr(archived)
	p.CreatedAt, p.UpdatedAt = parseTS(created), parseTS(updated)
	p.ControlIDs = []string{}
	if controls.Valid && controls.String != "" {
		p.ControlIDs = strings.Split(controls.String, ",")
	}
	return &p, nil
}

func policyArgs(p *app.Policy) []any {
	return []any{p.Name, p.Description, p.Content, nullStr(p.Frequency), nullStr(p.Department), boolInt(p.IsRequiredToSign),
		nullStr(p.ReviewDate), nullStr(p.AssigneeID), nullStr(p.ApproverID), p.Version, nullStr(p.CurrentVersionID),
		tsPtr(p.LastPublishedAt), boolInt(p.HasUnpublishedChanges), tsPtr(p.ArchivedAt), ts(p.CreatedAt), ts(p.UpdatedAt)}
}

// CreatePolicy inserts a policy.
func (db *DB) CreatePolicy(ctx context.Context, orgID string, p *app.Policy) error {
	args := policyArgs(p)
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO policies (organization_id, id, name, description, content, frequency,
		department, is_required_to_sign, review_date, assignee_id, approver_id, current_version, current_version_id,
		last_published_at, has_unpublished_changes, archived_at, created_at, updated_at)
		VALUES (?, ?, `+placeholders(len(args))+`)`, append([]any{orgID, p.ID}, args...)...)
	return mapErr(err)
}

// UpdatePolicy writes every mutable column of a policy.
func (db *DB) UpdatePolicy(ctx context.Context, orgID string, p *app.Policy) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE policies SET name = ?, description = ?, content = ?, frequency = ?,
		department = ?, is_required_to_sign = ?, review_date = ?, assignee_id = ?, approver_id = ?, current_version = ?,
		current_version_id = ?, last_published_at = ?, has_unpublished_changes = ?, archived_at = ?, created_at = ?,
		updated_at = ? WHERE organization_id = ? AND id = ?`, append(policyArgs(p), orgID, p.ID)...)
	return affected(res, err)
}

// GetPolicy returns one policy with its linked control ids.
func (db *DB) GetPolicy(ctx context.Context, orgID, id string) (*app.Policy, error) {
	return scanPolicy(db.rd(ctx).QueryRowContext(ctx, `SELECT `+policyColumns+` FROM policies p
		WHERE p.organization_id = ? AND p.id = ?`, orgID, id))
}

// DeletePolicy removes a never-published policy with its control links.
func (db *DB) DeletePolicy(ctx context.Context, orgID, id string) error {
	w := db.wr(ctx)
	if _, err := w.ExecContext(ctx, `DELETE FROM policy_controls WHERE organization_id = ? AND policy_id = ?`, orgID, id); err != nil {
		return fmt.Errorf("unlink controls of %s: %w", id, mapErr(err))
	}
	res, err := w.ExecContext(ctx, `DELETE FROM policies WHERE organization_id = ? AND id = ? AND current_version = 0`, orgID, id)
	return affected(res, err)
}

var policySortColumns = map[string]string{
	"name": "p.name", "createdAt": "p.id", "updatedAt": "p.updated_at", "lastPublishedAt": "p.last_published_at",
	"reviewDate": "p.review_date",
}

// ListPolicies returns a page of policies matching every filter. For a
// viewer (employee, contractor) it returns published, unarchived policies
// with their published text, plus the policies assigned to the viewer as
// stored.
func (db *DB) ListPolicies(ctx context.Context, orgID string, f app.PolicyFilter) (app.List[app.Policy], error) {
	where := []string{"p.organization_id = ?"}
	args := []any{orgID}
	add := func(cond string, vs ...any) {
		where = append(where, cond)
		args = append(args, vs...)
	}
	if f.Viewer {
		add("((p.current_version > 0 AND p.archived_at IS NULL) OR p.assignee_id = ?)", f.ViewerID)
	}
	switch {
	case f.Archived:
		add("p.archived_at IS NOT NULL")
	case !f.IncludeArchived:
		add("p.archived_at IS NULL")
	}
	needsReview := "(p.has_unpublished_changes = 1 OR (p.review_date IS NOT NULL AND p.review_date < ?))"
	switch {
	case f.Status == app.PolicyDraft:
		add("p.current_version = 0")
	case f.Status == app.PolicyPublished && f.Viewer:
		// A viewer sees the policies not assigned to them as published.
		add("p.current_version > 0 AND (p.assignee_id IS NULL OR p.assignee_id != ? OR NOT "+needsReview+")", f.ViewerID, f.Today)
	case f.Status == app.PolicyPublished:
		add("p.current_version > 0 AND NOT "+needsReview, f.Today)
	case f.Status == app.PolicyNeedsReview && f.Viewer:
		add("p.current_version > 0 AND p.assignee_id = ? AND "+needsReview, f.ViewerID, f.Today)
	case f.Status == app.PolicyNeedsReview:
		add("p.current_version > 0 AND "+needsReview, f.Today)
	}
	if f.AssigneeID != "" {
		add("p.assignee_id = ?", f.AssigneeID)
	}
	if f.Department != "" {
		add("p.department = ?", f.Department)
	}
	if f.Frequency != "" {
		add("p.frequency = ?", f.Frequency)
	}
	if f.ControlID != "" {
		add("p.id IN (SELECT pc.policy_id FROM policy_controls pc WHERE pc.organization_id = ? AND pc.control_id = ?)", orgID, f.ControlID)
	}
	if f.Search != "" {
		add("instr(lower(p.name), ?) > 0", strings.ToLower(f.Search))
	}
	if f.Acknowledged != nil {
		acked := `EXISTS (SELECT 1 FROM policy_acknowledgements a WHERE a.organization_id = p.organization_id
			AND a.policy_id = p.id AND a.person_id = ? AND a.version = p.current_version)`
		if *f.Acknowledged {
			add(acked, f.AckBy)
		} else {
			add("p.current_version > 0 AND p.is_required_to_sign = 1 AND NOT "+acked, f.AckBy)
		}
	}
	order := "p.id"
	if f.Sort != "" {
		col := policySortColumns[strings.TrimPrefix(f.Sort, "-")]
		dir := "ASC"
		if strings.HasPrefix(f.Sort, "-") {
			dir = "DESC"
		}
		if col == "p.id" {
			order = "p.id " + dir
		} else if col != "" {
			order = col + " " + dir + ", p.id"
		}
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.Policy]{Items: []app.Policy{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM policies p WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count policies: %w", err)
	}
	if f.Page.Offset() >= out.Total {
		return out, nil
	}
	nameE, descE, contentE, join := "p.name", "p.description", "p.content", ""
	var colArgs []any
	if f.Viewer {
		// Rows not assigned to the viewer show the current version's text.
		join = " LEFT JOIN policy_versions v ON v.organization_id = p.organization_id AND v.id = p.current_version_id"
		mine := "(p.assignee_id IS NOT NULL AND p.assignee_id = ?)"
		nameE = "CASE WHEN " + mine + " THEN p.name ELSE coalesce(v.name, p.name) END"
		descE = "CASE WHEN " + mine + " THEN p.description ELSE coalesce(v.description, p.description) END"
		contentE = "CASE WHEN " + mine + " THEN p.content ELSE coalesce(v.content, '') END"
		colArgs = []any{f.ViewerID, f.ViewerID, f.ViewerID}
	}
	if f.ExcludeContent {
		contentE = "''"
		if f.Viewer {
			colArgs = colArgs[:2]
		}
	}
	cols := strings.Replace(policyColumns, "p.name, p.description, p.content,", nameE+", "+descE+", "+contentE+",", 1)
	rows, err := q.QueryContext(ctx, `SELECT `+cols+` FROM policies p`+join+` WHERE `+cond+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
		append(append(colArgs, args...), f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list policies: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		p, err := scanPolicy(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *p)
	}
	return out, rows.Err()
}

const policyVersionColumns = `id, policy_id, version, name, description, content, source, content_sha256, variables,
	unresolved_variables, changelog, published_by_type, published_by_id, published_at`

func scanPolicyVersion(row interface{ Scan(...any) error }) (*app.PolicyVersion, error) {
	var v app.PolicyVersion
	var vars, unresolved, published string
	if err := row.Scan(&v.ID, &v.PolicyID, &v.Version, &v.Name, &v.Description, &v.Content, &v.Source, &v.ContentSHA256,
		&vars, &unresolved, &v.Changelog, &v.PublishedBy.Type, &v.PublishedBy.ID, &published); err != nil {
		return nil, mapErr(err)
	}
	v.Variables, v.UnresolvedVariables = map[string]string{}, []string{}
	if err := json.Unmarshal([]byte(vars), &v.Variables); err != nil {
		return nil, fmt.Errorf("decode variables of %s: %w", v.ID, err)
	}
	if err := json.Unmarshal([]byte(unresolved), &v.UnresolvedVariables); err != nil {
		return nil, fmt.Errorf("decode unresolved variables of %s: %w", v.ID, err)
	}
	v.PublishedAt = parseTS(published)
	return &v, nil
}

// CreatePolicyVersion inserts a published version; it can never change.
func (db *DB) CreatePolicyVersion(ctx context.Context, orgID string, v *app.PolicyVersion) error {
	vars, err := json.Marshal(v.Variables)
	if err != nil {
		return err
	}
	unresolved, err := json.Marshal(v.UnresolvedVariables)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO policy_versions (organization_id, `+policyVersionColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, v.ID, v.PolicyID, v.Version, v.Name, v.Description,
		v.Content, v.Source, v.ContentSHA256, string(vars), string(unresolved), v.Changelog, v.PublishedBy.Type,
		v.PublishedBy.ID, ts(v.PublishedAt))
	return mapErr(err)
}

// GetPolicyVersion returns a version by id, or by number when id is empty.
func (db *DB) GetPolicyVersion(ctx context.Context, orgID, policyID, id string, number int) (*app.PolicyVersion, error) {
	if id != "" {
		return scanPolicyVersion(db.rd(ctx).QueryRowContext(ctx, `SELECT `+policyVersionColumns+` FROM policy_versions
			WHERE organization_id = ? AND policy_id = ? AND id = ?`, orgID, policyID, id))
	}
	return scanPolicyVersion(db.rd(ctx).QueryRowContext(ctx, `SELECT `+policyVersionColumns+` FROM policy_versions
		WHERE organization_id = ? AND policy_id = ? AND version = ?`, orgID, policyID, number))
}

// ListPolicyVersions returns a page of a policy's versions, newest first.
func (db *DB) ListPolicyVersions(ctx context.Context, orgID, policyID string, pg app.Page) (app.List[app.PolicyVersion], error) {
	out := app.List[app.PolicyVersion]{Items: []app.PolicyVersion{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM policy_versions WHERE organization_id = ? AND policy_id = ?`,
		orgID, policyID).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count policy versions: %w", err)
	}
	if pg.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+policyVersionColumns+` FROM policy_versions WHERE organization_id = ? AND policy_id = ?
		ORDER BY version DESC LIMIT ? OFFSET ?`, orgID, policyID, pg.PerPage, pg.Offset())
	if err != nil {
		return out, fmt.Errorf("list policy versions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scanPolicyVersion(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *v)
	}
	return out, rows.Err()
}

// CreatePolicyAck inserts an acknowledgement; a repeat is ErrConflict.
func (db *DB) CreatePolicyAck(ctx context.Context, orgID string, a *app.PolicyAcknowledgement) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO policy_acknowledgements (id, organization_id, policy_id, version_id,
		version, person_id, acknowledged_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.ID, orgID, a.PolicyID, a.VersionID, a.Version, a.PersonID, ts(a.AcknowledgedAt))
	return mapErr(err)
}

// GetPolicyAck returns a person's acknowledgement of one version.
func (db *DB) GetPolicyAck(ctx context.Context, orgID, versionID, personID string) (*app.PolicyAcknowledgement, error) {
	var a app.PolicyAcknowledgement
	var at string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT id, policy_id, version_id, version, person_id, acknowledged_at
		FROM policy_acknowledgements WHERE organization_id = ? AND version_id = ? AND person_id = ?`, orgID, versionID, personID).
		Scan(&a.ID, &a.PolicyID, &a.VersionID, &a.Version, &a.PersonID, &at)
	if err != nil {
		return nil, mapErr(err)
	}
	a.AcknowledgedAt = parseTS(at)
	return &a, nil
}

// ListPolicyAckStatus lists the active people other than auditors with
// their acknowledgement of version, and counts them.
func (db *DB) ListPolicyAckStatus(ctx context.Context, orgID, policyID string, version int, f app.PolicyAckFilter) (app.List[app.PolicyAckStatus], app.PolicyAckSummary, error) {
	out := app.List[app.PolicyAckStatus]{Items: []app.PolicyAckStatus{}}
	var sum app.PolicyAckSummary
	base := []string{"m.organization_id = ?", "m.is_active = 1", "m.role != 'auditor'"}
	baseArgs := []any{orgID}
	if f.PersonID != "" {
		base = append(base, "m.user_id = ?")
		baseArgs = append(baseArgs, f.PersonID)
	}
	acked := `EXISTS (SELECT 1 FROM policy_acknowledgements a WHERE a.organization_id = m.organization_id
		AND a.policy_id = ? AND a.person_id = m.user_id AND a.version = ?)`
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(CASE WHEN `+acked+` THEN 1 ELSE 0 END), 0) FROM memberships m WHERE `+strings.Join(base, " AND "),
		append([]any{policyID, version}, baseArgs...)...).Scan(&sum.Required, &sum.Acknowledged); err != nil {
		return out, sum, fmt.Errorf("count acknowledgements: %w", err)
	}
	sum.Pending = sum.Required - sum.Acknowledged

	where, args := append([]string{}, base...), append([]any{}, baseArgs...)
	if f.Role != "" {
		where = append(where, "m.role = ?")
		args = append(args, f.Role)
	}
	switch f.Status {
	case "acknowledged":
		where = append(where, acked)
		args = append(args, policyID, version)
	case "pending":
		where = append(where, "NOT "+acked)
		args = append(args, policyID, version)
	}
	cond := strings.Join(where, " AND ")
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM memberships m WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, sum, fmt.Errorf("count people: %w", err)
	}
	if f.Page.Offset() >= out.Total {
		return out, sum, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT u.id, u.name, u.email, m.role, m.department,
		(SELECT a.acknowledged_at FROM policy_acknowledgements a WHERE a.organization_id = m.organization_id
			AND a.policy_id = ? AND a.person_id = m.user_id AND a.version = ?),
		(SELECT max(a.version) FROM policy_acknowledgements a WHERE a.organization_id = m.organization_id
			AND a.policy_id = ? AND a.person_id = m.user_id)
		FROM memberships m JOIN users u ON u.id = m.user_id WHERE `+cond+` ORDER BY u.name, u.id LIMIT ? OFFSET ?`,
		append(append([]any{policyID, version, policyID}, args...), f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, sum, fmt.Errorf("list acknowledgement status: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s app.PolicyAckStatus
		var dept, at sql.NullString
		var last sql.NullInt64
		if err := rows.Scan(&s.PersonID, &s.Name, &s.Email, &s.Role, &dept, &at, &last); err != nil {
			return out, sum, err
		}
		s.Department, s.AcknowledgedAt = strPtr(dept), parseTSPtr(at)
		s.Acknowledged = at.Valid
		if last.Valid {
			n := int(last.Int64)
			s.LastAcknowledgedVersion = &n
		}
		out.Items = append(out.Items, s)
	}
	return out, sum, rows.Err()
}

// LinkPolicyControls links controls to a policy, ignoring existing links.
func (db *DB) LinkPolicyControls(ctx context.Context, orgID, policyID string, controlIDs []string, at time.Time) error {
	w := db.wr(ctx)
	for _, id := range controlIDs {
		if _, err := w.ExecContext(ctx, `INSERT INTO policy_controls (organization_id, policy_id, control_id, created_at)
			VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, orgID, policyID, id, ts(at)); err != nil {
			return fmt.Errorf("link control %s: %w", id, mapErr(err))
		}
	}
	return nil
}

// UnlinkPolicyControl removes one link; ErrNotFound when there is none.
func (db *DB) UnlinkPolicyControl(ctx context.Context, orgID, policyID, controlID string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM policy_controls WHERE organization_id = ? AND policy_id = ? AND control_id = ?`,
		orgID, policyID, controlID)
	return affected(res, err)
}

// ListPolicyControls returns a page of the controls linked to a policy,
// only those ownerID owns when it is set.
func (db *DB) ListPolicyControls(ctx context.Context, orgID, policyID, ownerID string, pg app.Page) (app.List[app.Control], error) {
	out := app.List[app.Control]{Items: []app.Control{}}
	cond := "pc.organization_id = ? AND pc.policy_id = ?"
	args := []any{orgID, policyID}
	if ownerID != "" {
		cond += " AND c.owner_id = ?"
		args = append(args, ownerID)
	}
	from := ` FROM policy_controls pc JOIN controls c ON c.organization_id = pc.organization_id AND c.id = pc.control_id WHERE ` + cond
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*)`+from, args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count policy controls: %w", err)
	}
	if pg.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+prefixed("c.", controlColumns)+from+` ORDER BY c.code, c.id LIMIT ? OFFSET ?`,
		append(args, pg.PerPage, pg.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list policy controls: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanControl(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *c)
	}
	return out, rows.Err()
}
