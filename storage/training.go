package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.TrainingStore = (*DB)(nil)

const trainingModuleColumns = `id, title, summary, kind, version, pass_mark, duration_minutes, content, file_sha256, file_name, file_type, file_size, created_at, updated_at`

func scanTrainingModule(row interface{ Scan(...any) error }) (*app.TrainingModule, []byte, error) {
	var m app.TrainingModule
	var content string
	var sha, name, typ sql.NullString
	var size sql.NullInt64
	var created, updated string
	if err := row.Scan(&m.ID, &m.Title, &m.Summary, &m.Kind, &m.Version, &m.PassMark, &m.DurationMinutes, &content,
		&sha, &name, &typ, &size, &created, &updated); err != nil {
		return nil, nil, mapErr(err)
	}
	if sha.Valid {
		m.File = &app.TrainingFile{SHA256: sha.String, Name: name.String, ContentType: typ.String, Size: size.Int64}
	}
	c, u := parseTS(created), parseTS(updated)
	m.CreatedAt, m.UpdatedAt = &c, &u
	m.Controls, m.ControlIDs = []app.TrainingControlRef{}, []string{}
	m.Sections, m.Quiz, m.Required = []app.TrainingSection{}, []app.TrainingQuestion{}, []string{}
	return &m, []byte(content), nil
}

// CreateTrainingModule inserts an organization's module.
func (db *DB) CreateTrainingModule(ctx context.Context, orgID string, m *app.TrainingModule, content []byte, createdBy string) error {
	var sha, name, typ, size any
	if m.File != nil {
		sha, name, typ, size = m.File.SHA256, m.File.Name, m.File.ContentType, m.File.Size
	}
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO training_modules (organization_id, `+trainingModuleColumns+`, created_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		orgID, m.ID, m.Title, m.Summary, m.Kind, m.Version, m.PassMark, m.DurationMinutes, string(content), sha, name, typ, size,
		ts(*m.CreatedAt), ts(*m.UpdatedAt), createdBy)
	return mapErr(err)
}

// GetTrainingModule returns an organization's module and its stored content.
func (db *DB) GetTrainingModule(ctx context.Context, orgID, id string) (*app.TrainingModule, []byte, error) {
	return scanTrainingModule(db.rd(ctx).QueryRowContext(ctx, `SELECT `+trainingModuleColumns+` FROM training_modules
		WHERE organization_id = ? AND id = ?`, orgID, id))
}

// ListTrainingModules lists an organization's modules (without content).
func (db *DB) ListTrainingModules(ctx context.Context, orgID string) ([]app.TrainingModule, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+trainingModuleColumns+` FROM training_modules
		WHERE organization_id = ? ORDER BY id`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []app.TrainingModule{}
	for rows.Next() {
		m, _, err := scanTrainingModule(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *m)
	}
	return out, rows.Err()
}

// SaveTrainingRule records that a module is required for everyone or a role.
func (db *DB) SaveTrainingRule(ctx context.Context, orgID string, r app.TrainingRule) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO training_rules (organization_id, module_id, role, due_days, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (organization_id, module_id, role) DO UPDATE SET due_days = excluded.due_days`,
		orgID, r.ModuleID, r.Role, r.DueDays, ts(r.CreatedAt))
	return mapErr(err)
}

// ListTrainingRules lists an organization's required-module rules.
func (db *DB) ListTrainingRules(ctx context.Context, orgID string) ([]app.TrainingRule, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT module_id, role, due_days, created_at FROM training_rules
		WHERE organization_id = ? ORDER BY module_id, role`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []app.TrainingRule{}
	for rows.Next() {
		var r app.TrainingRule
		var created string
		if err := rows.Scan(&r.ModuleID, &r.Role, &r.DueDays, &created); err != nil {
			return nil, err
		}
		r.CreatedAt = parseTS(created)
		out = append(out, r)
	}
	return out, rows.Err()
}

const trainingAssignmentColumns = `a.id, a.person_id, coalesce(u.name, ''), a.module_id, a.status, a.due_date, a.required, a.source, a.assigned_by,
	a.assigned_at, a.completed_at, a.completion_id, a.reminded_at, a.updated_at,
	(SELECT count(*) FROM training_completions c WHERE c.organization_id = a.organization_id AND c.person_id = a.person_id
		AND c.module_id = a.module_id AND c.completed_at >= a.assigned_at)`

func scanTrainingAssignment(row interface{ Scan(...any) error }) (*app.TrainingAssignment, error) {
	var as app.TrainingAssignment
	var due, completed, completion, reminded sql.NullString
	var required int
	var assigned, updated string
	if err := row.Scan(&as.ID, &as.PersonID, &as.PersonName, &as.ModuleID, &as.Status, &due, &required, &as.Source, &as.AssignedBy,
		&assigned, &completed, &completion, &reminded, &updated, &as.Attempts); err != nil {
		return nil, mapErr(err)
	}
	as.DueDate, as.CompletionID = strPtr(due), strPtr(completion)
	as.Required = required == 1
	as.AssignedAt, as.UpdatedAt = parseTS(assigned), parseTS(updated)
	as.CompletedAt, as.RemindedAt = parseTSPtr(completed), parseTSPtr(reminded)
	return &as, nil
}

// CreateTrainingAssignment inserts an assignment unless the person already
// has one for the module.
func (db *DB) CreateTrainingAssignment(ctx context.Context, orgID string, as *app.TrainingAssignment) (bool, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO training_assignments (organization_id, id, person_id, module_id, status,
		due_date, required, source, assigned_by, assigned_at, completed_at, completion_id, reminded_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (organization_id, person_id, module_id) DO NOTHING`,
		orgID, as.ID, as.PersonID, as.ModuleID, as.Status, nullStr(as.DueDate), boolInt(as.Required), as.Source, as.AssignedBy,
		ts(as.AssignedAt), tsPtr(as.CompletedAt), nullStr(as.CompletionID), tsPtr(as.RemindedAt), ts(as.UpdatedAt))
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// GetTrainingAssignment returns a person's assignment of a module.
func (db *DB) GetTrainingAssignment(ctx context.Context, orgID, personID, moduleID string) (*app.TrainingAssignment, error) {
	return scanTrainingAssignment(db.rd(ctx).QueryRowContext(ctx, `SELECT `+trainingAssignmentColumns+`
		FROM training_assignments a LEFT JOIN users u ON u.id = a.person_id
		WHERE a.organization_id = ? AND a.person_id = ? AND a.module_id = ?`, orgID, personID, moduleID))
}

// UpdateTrainingAssignment writes an assignment's state.
func (db *DB) UpdateTrainingAssignment(ctx context.Context, orgID string, as *app.TrainingAssignment) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE training_assignments SET status = ?, due_date = ?, required = ?, source = ?,
		assigned_by = ?, assigned_at = ?, completed_at = ?, completion_id = ?, reminded_at = ?, updated_at = ?
		WHERE organization_id = ? AND id = ?`,
		as.Status, nullStr(as.DueDate), boolInt(as.Required), as.Source, as.AssignedBy, ts(as.AssignedAt), tsPtr(as.CompletedAt),
		nullStr(as.CompletionID), tsPtr(as.RemindedAt), ts(as.UpdatedAt), orgID, as.ID)
	return affected(res, err)
}

// ListTrainingAssignments lists assignments, oldest first; all of them when
// the page size is 0.
func (db *DB) ListTrainingAssignments(ctx context.Context, orgID string, f app.TrainingAssignmentFilter) (app.List[app.TrainingAssignment], error) {
	cond := "a.organization_id = ?"
	args := []any{orgID}
	if f.PersonID != "" {
		cond += " AND a.person_id = ?"
		args = append(args, f.PersonID)
	}
	if f.ModuleID != "" {
		cond += " AND a.module_id = ?"
		args = append(args, f.ModuleID)
	}
	if f.Status != "" {
		cond += " AND a.status = ?"
		args = append(args, f.Status)
	}
	if f.Open {
		cond += " AND a.status IN ('assigned', 'overdue')"
	}
	out := app.List[app.TrainingAssignment]{Items: []app.TrainingAssignment{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM training_assignments a WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, err
	}
	limit := ""
	if f.Page.PerPage > 0 {
		limit = fmt.Sprintf(" LIMIT %d OFFSET %d", f.Page.PerPage, f.Page.Offset())
	}
	rows, err := q.QueryContext(ctx, `SELECT `+trainingAssignmentColumns+` FROM training_assignments a LEFT JOIN users u ON u.id = a.person_id
		WHERE `+cond+` ORDER BY a.id`+limit, args...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		as, err := scanTrainingAssignment(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *as)
	}
	return out, rows.Err()
}

const trainingCompletionColumns = `c.id, c.person_id, coalesce(u.name, ''), c.module_id, c.module_title, c.module_version, c.status, c.score,
	c.pass_mark, c.answers, c.verification_code, c.completed_at`

func scanTrainingCompletion(row interface{ Scan(...any) error }) (*app.TrainingCompletion, error) {
	var c app.TrainingCompletion
	var score sql.NullInt64
	var answers, completed string
	var code sql.NullString
	if err := row.Scan(&c.ID, &c.PersonID, &c.PersonName, &c.ModuleID, &c.ModuleTitle, &c.ModuleVersion, &c.Status, &score,
		&c.PassMark, &answers, &code, &completed); err != nil {
		return nil, mapErr(err)
	}
	if score.Valid {
		n := int(score.Int64)
		c.Score = &n
	}
	c.VerificationCode = strPtr(code)
	c.CompletedAt = parseTS(completed)
	c.Answers = []app.TrainingAnswer{}
	if err := json.Unmarshal([]byte(answers), &c.Answers); err != nil {
		return nil, fmt.Errorf("decode answers of %s: %w", c.ID, err)
	}
	return &c, nil
}

// CreateTrainingCompletion inserts an attempt.
func (db *DB) CreateTrainingCompletion(ctx context.Context, orgID string, c *app.TrainingCompletion) error {
	answers, err := json.Marshal(c.Answers)
	if err != nil {
		return err
	}
	var score any
	if c.Score != nil {
		score = *c.Score
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO training_completions (organization_id, id, person_id, module_id, module_title,
		module_version, status, score, pass_mark, answers, verification_code, completed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		orgID, c.ID, c.PersonID, c.ModuleID, c.ModuleTitle, c.ModuleVersion, c.Status, score, c.PassMark, string(answers),
		nullStr(c.VerificationCode), ts(c.CompletedAt))
	return mapErr(err)
}

// GetTrainingCompletion returns one attempt.
func (db *DB) GetTrainingCompletion(ctx context.Context, orgID, id string) (*app.TrainingCompletion, error) {
	return scanTrainingCompletion(db.rd(ctx).QueryRowContext(ctx, `SELECT `+trainingCompletionColumns+`
		FROM training_completions c LEFT JOIN users u ON u.id = c.person_id WHERE c.organization_id = ? AND c.id = ?`, orgID, id))
}

// ListTrainingCompletions lists attempts, oldest first; all of them when
// the page size is 0.
func (db *DB) ListTrainingCompletions(ctx context.Context, orgID string, f app.TrainingCompletionFilter) (app.List[app.TrainingCompletion], error) {
	cond := "c.organization_id = ?"
	args := []any{orgID}
	if f.PersonID != "" {
		cond += " AND c.person_id = ?"
		args = append(args, f.PersonID)
	}
	if f.ModuleID != "" {
		cond += " AND c.module_id = ?"
		args = append(args, f.ModuleID)
	}
	if f.Status != "" {
		cond += " AND c.status = ?"
		args = append(args, f.Status)
	}
	out := app.List[app.TrainingCompletion]{Items: []app.TrainingCompletion{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM training_completions c WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, err
	}
	limit := ""
	if f.Page.PerPage > 0 {
		limit = fmt.Sprintf(" LIMIT %d OFFSET %d", f.Page.PerPage, f.Page.Offset())
	}
	rows, err := q.QueryContext(ctx, `SELECT `+trainingCompletionColumns+` FROM training_completions c LEFT JOIN users u ON u.id = c.person_id
		WHERE `+cond+` ORDER BY c.completed_at, c.id`+limit, args...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanTrainingCompletion(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *c)
	}
	return out, rows.Err()
}

// TrainingCompletionByCode finds a certificate by its verification code in
// any organization, with the organization's name: the public verification
// page has no organization to scope by, and the code is unguessable.
func (db *DB) TrainingCompletionByCode(ctx context.Context, code string) (*app.TrainingCompletion, error) {
	var orgName string
	row := db.rd(ctx).QueryRowContext(ctx, `SELECT `+trainingCompletionColumns+`, o.name FROM training_completions c
		LEFT JOIN users u ON u.id = c.person_id JOIN organizations o ON o.id = c.organization_id
		WHERE c.verification_code = ? AND c.status != 'failed'`, code)
	c, err := scanTrainingCompletion(scanExtra{row, &orgName})
	if err != nil {
		return nil, err
	}
	c.OrganizationName = orgName
	return c, nil
}

// scanExtra scans a row whose last column follows a scan helper's columns.
type scanExtra struct {
	row   interface{ Scan(...any) error }
	extra any
}

func (s scanExtra) Scan(dest ...any) error { return s.row.Scan(append(dest, s.extra)...) }

// GetTrainingEvidenceLink returns the task and evidence a module keeps on a control.
func (db *DB) GetTrainingEvidenceLink(ctx context.Context, orgID, moduleID, controlID string) (*app.TrainingEvidenceLink, error) {
	var l app.TrainingEvidenceLink
	var ev sql.NullString
	var at string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT module_id, control_id, task_id, evidence_id, refreshed_at FROM training_evidence
		WHERE organization_id = ? AND module_id = ? AND control_id = ?`, orgID, moduleID, controlID).Scan(&l.ModuleID, &l.ControlID, &l.TaskID, &ev, &at)
	if err != nil {
		return nil, mapErr(err)
	}
	l.EvidenceID, l.RefreshedAt = strPtr(ev), parseTS(at)
	return &l, nil
}

// SaveTrainingEvidenceLink records the task and evidence a module keeps on a control.
func (db *DB) SaveTrainingEvidenceLink(ctx context.Context, orgID string, l *app.TrainingEvidenceLink) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO training_evidence (organization_id, module_id, control_id, task_id, evidence_id, refreshed_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (organization_id, module_id, control_id) DO UPDATE SET task_id = excluded.task_id,
		evidence_id = excluded.evidence_id, refreshed_at = excluded.refreshed_at`,
		orgID, l.ModuleID, l.ControlID, l.TaskID, nullStr(l.EvidenceID), ts(l.RefreshedAt))
	return mapErr(err)
}
