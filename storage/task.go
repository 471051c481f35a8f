package storage

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var (
	_ app.TaskStore         = (*DB)(nil)
	_ app.TaskTemplateStore = (*DB)(nil)
)

const taskColumns = `id, title, description, status, assignee_id, control_id, due_date, recurrence, series_id, template_id,
	department, not_relevant_justification, completed_at, created_at, updated_at`

func scanTask(row interface{ Scan(...any) error }) (*app.Task, error) {
	var t app.Task
	var assignee, control, due, rec, series, tpl, dept, just, completed sql.NullString
	var created, updated string
	if err := row.Scan(&t.ID, &t.Title, &t.Description, &t.Status, &assignee, &control, &due, &rec, &series, &tpl, &dept,
		&just, &completed, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	t.AssigneeID, t.ControlID, t.DueDate, t.Recurrence = strPtr(assignee), strPtr(control), strPtr(due), strPtr(rec)
	t.SeriesID = t.ID
	if series.Valid {
		t.SeriesID = series.String
	}
	t.TemplateID, t.Department, t.NotRelevantJustification = strPtr(tpl), strPtr(dept), strPtr(just)
	t.CompletedAt = parseTSPtr(completed)
	t.CreatedAt, t.UpdatedAt = parseTS(created), parseTS(updated)
	return &t, nil
}

func taskArgs(t *app.Task) []any {
	return []any{t.Title, t.Description, t.Status, nullStr(t.AssigneeID), nullStr(t.ControlID), nullStr(t.DueDate),
		nullStr(t.Recurrence), t.SeriesID, nullStr(t.TemplateID), nullStr(t.Department), nullStr(t.NotRelevantJustification),
		tsPtr(t.CompletedAt), ts(t.CreatedAt), ts(t.UpdatedAt)}
}

// CreateTask inserts a task.
func (db *DB) CreateTask(ctx context.Context, orgID string, t *app.Task) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO tasks (organization_id, `+taskColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, append([]any{orgID, t.ID}, taskArgs(t)...)...)
	return mapErr(err)
}

// GetTask returns one task.
func (db *DB) GetTask(ctx context.Context, orgID, id string) (*app.Task, error) {
	return scanTask(db.rd(ctx).QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE organization_id = ? AND id = ?`, orgID, id))
}

// UpdateTask writes every mutable column.
func (db *DB) UpdateTask(ctx context.Context, orgID string, t *app.Task) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE tasks SET title = ?, description = ?, status = ?, assignee_id = ?,
		control_id = ?, due_date = ?, recurrence = ?, series_id = ?, template_id = ?, department = ?,
		not_relevant_justification = ?, completed_at = ?, created_at = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		append(taskArgs(t), orgID, t.ID)...)
	return affected(res, err)
}

// DeleteTask removes a task; evidence attached to it stays on its control.
func (db *DB) DeleteTask(ctx context.Context, orgID, id string) error {
	if _, err := db.wr(ctx).ExecContext(ctx, `UPDATE evidence SET task_id = NULL WHERE organization_id = ? AND task_id = ?`, orgID, id); err != nil {
		return err
	}
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM tasks WHERE organization_id = ? AND id = ?`, orgID, id)
	return affected(res, err)
}

// ListTasks returns a page of tasks matching every filter, by due date then id.
func (db *DB) ListTasks(ctx context.Context, orgID string, f app.TaskFilter) (app.List[app.Task], error) {
	where := []string{"organization_id = ?"}
	args := []any{orgID}
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if f.AssigneeID != "" {
		add("assignee_id = ?", f.AssigneeID)
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if f.ControlID != "" {
		add("control_id = ?", f.ControlID)
	}
	if f.DueFrom != "" {
		add("due_date >= ?", f.DueFrom)
	}
	if f.DueTo != "" {
		add("due_date <= ?", f.DueTo)
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.Task]{Items: []app.Task{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM tasks WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, err
	}
	if f.Page.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE `+cond+`
		ORDER BY due_date IS NULL, due_date, id LIMIT ? OFFSET ?`, append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *t)
	}
	return out, rows.Err()
}

// LatestDoneTasks returns, per task series of the control, its most
// recently completed task.
func (db *DB) LatestDoneTasks(ctx context.Context, orgID, controlID string) ([]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT id FROM (
		SELECT id, row_number() OVER (PARTITION BY coalesce(series_id, id) ORDER BY completed_at DESC, id DESC) AS n
		FROM tasks WHERE organization_id = ? AND control_id = ? AND status = 'done') WHERE n = 1 ORDER BY id`, orgID, controlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// ValidTaskEvidence counts the task's evidence not expired at now.
func (db *DB) ValidTaskEvidence(ctx context.Context, orgID, taskID string, now time.Time) (int, error) {
	var n int
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM evidence WHERE organization_id = ? AND task_id = ?
		AND (expires_at IS NULL OR expires_at > ?)`, orgID, taskID, ts(now)).Scan(&n)
	return n, err
}

func (db *DB) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// TaskIDsForTemplate returns the tasks made from a template.
func (db *DB) TaskIDsForTemplate(ctx context.Context, orgID, templateID string) ([]string, error) {
	return db.ids(ctx, `SELECT id FROM tasks WHERE organization_id = ? AND template_id = ? ORDER BY id`, orgID, templateID)
}

// TaskIDsByAssignee returns a person's tasks, only open ones when openOnly.
func (db *DB) TaskIDsByAssignee(ctx context.Context, orgID, assigneeID string, openOnly bool) ([]string, error) {
	q := `SELECT id FROM tasks WHERE organization_id = ? AND assignee_id = ?`
	if openOnly {
		q += ` AND status NOT IN ('done', 'not_relevant')`
	}
	return db.ids(ctx, q+` ORDER BY id`, orgID, assigneeID)
}

const taskTemplateColumns = `id, framework_id, requirement_id, name, description, frequency, department, created_at, updated_at`

func scanTaskTemplate(row interface{ Scan(...any) error }) (*app.TaskTemplate, error) {
	var t app.TaskTemplate
	var freq, dept sql.NullString
	var created, updated string
	if err := row.Scan(&t.ID, &t.FrameworkID, &t.RequirementID, &t.Name, &t.Description, &freq, &dept, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	t.Frequency, t.Department = strPtr(freq), strPtr(dept)
	t.CreatedAt, t.UpdatedAt = parseTS(created), parseTS(updated)
	return &t, nil
}

// CreateTaskTemplate inserts a template.
func (db *DB) CreateTaskTemplate(ctx context.Context, orgID string, t *app.TaskTemplate) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO task_templates (organization_id, `+taskTemplateColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, t.ID, t.FrameworkID, t.RequirementID, t.Name, t.Description,
		nullStr(t.Frequency), nullStr(t.Department), ts(t.CreatedAt), ts(t.UpdatedAt))
	return mapErr(err)
}

// GetTaskTemplate returns one template.
func (db *DB) GetTaskTemplate(ctx context.Context, orgID, id string) (*app.TaskTemplate, error) {
	return scanTaskTemplate(db.rd(ctx).QueryRowContext(ctx, `SELECT `+taskTemplateColumns+` FROM task_templates
		WHERE organization_id = ? AND id = ?`, orgID, id))
}

// UpdateTaskTemplate writes a template's mutable columns.
func (db *DB) UpdateTaskTemplate(ctx context.Context, orgID string, t *app.TaskTemplate) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE task_templates SET name = ?, description = ?, frequency = ?, department = ?,
		updated_at = ? WHERE organization_id = ? AND id = ?`, t.Name, t.Description, nullStr(t.Frequency), nullStr(t.Department),
		ts(t.UpdatedAt), orgID, t.ID)
	return affected(res, err)
}

// DeleteTaskTemplate removes a template.
func (db *DB) DeleteTaskTemplate(ctx context.Context, orgID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM task_templates WHERE organization_id = ? AND id = ?`, orgID, id)
	return affected(res, err)
}

// ListTaskTemplates returns the templates, of one framework when frameworkID is set.
func (db *DB) ListTaskTemplates(ctx context.Context, orgID, frameworkID string) ([]app.TaskTemplate, error) {
	q := `SELECT ` + taskTemplateColumns + ` FROM task_templates WHERE organization_id = ?`
	args := []any{orgID}
	if frameworkID != "" {
		q += ` AND framework_id = ?`
		args = append(args, frameworkID)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []app.TaskTemplate{}
	for rows.Next() {
		t, err := scanTaskTemplate(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, rows.Err()
}
