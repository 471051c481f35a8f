package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.TaskAutomationStore = (*DB)(nil)

const automationColumns = `id, organization_id, task_id, name, description, is_enabled, evaluation_criteria, schedule_frequency,
	hosts, template_id, pinned_version, latest_version, last_run_at, last_run_status, next_run_at, evidence_id, finding_id,
	created_at, updated_at`

func scanAutomation(row interface{ Scan(...any) error }) (*app.TaskAutomation, error) {
	var t app.TaskAutomation
	var freq, tpl, lastAt, lastStatus, next, evd, fnd sql.NullString
	var pinned sql.NullInt64
	var enabled int
	var hosts, created, updated string
	if err := row.Scan(&t.ID, &t.OrganizationID, &t.TaskID, &t.Name, &t.Description, &enabled, &t.EvaluationCriteria, &freq,
		&hosts, &tpl, &pinned, &t.LatestVersion, &lastAt, &lastStatus, &next, &evd, &fnd, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	t.IsEnabled = enabled == 1
	t.ScheduleFrequency, t.TemplateID, t.LastRunStatus = strPtr(freq), strPtr(tpl), strPtr(lastStatus)
	t.EvidenceID, t.FindingID = strPtr(evd), strPtr(fnd)
	t.LastRunAt, t.NextRunAt = parseTSPtr(lastAt), parseTSPtr(next)
	t.CreatedAt, t.UpdatedAt = parseTS(created), parseTS(updated)
	if pinned.Valid {
		v := int(pinned.Int64)
		t.PinnedVersion = &v
	}
	t.Hosts = []string{}
	if err := json.Unmarshal([]byte(hosts), &t.Hosts); err != nil {
		return nil, fmt.Errorf("automation %s hosts: %w", t.ID, err)
	}
	return &t, nil
}

func nullInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// CreateTaskAutomation inserts an automation.
func (db *DB) CreateTaskAutomation(ctx context.Context, orgID string, t *app.TaskAutomation) error {
	hosts, err := integJSON(t.Hosts, "[]")
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO task_automations (`+automationColumns+`) VALUES
		(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, orgID, t.TaskID, t.Name, t.Description, boolInt(t.IsEnabled), t.EvaluationCriteria, nullStr(t.ScheduleFrequency),
		hosts, nullStr(t.TemplateID), nullInt(t.PinnedVersion), t.LatestVersion, tsPtr(t.LastRunAt), nullStr(t.LastRunStatus),
		tsPtr(t.NextRunAt), nullStr(t.EvidenceID), nullStr(t.FindingID), ts(t.CreatedAt), ts(t.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert task automation: %w", mapErr(err))
	}
	return nil
}

// GetTaskAutomation returns one automation of a task.
func (db *DB) GetTaskAutomation(ctx context.Context, orgID, taskID, id string) (*app.TaskAutomation, error) {
	return scanAutomation(db.rd(ctx).QueryRowContext(ctx, `SELECT `+automationColumns+` FROM task_automations
		WHERE organization_id = ? AND task_id = ? AND id = ?`, orgID, taskID, id))
}

// UpdateTaskAutomation writes every mutable column.
func (db *DB) UpdateTaskAutomation(ctx context.Context, orgID string, t *app.TaskAutomation) error {
	hosts, err := integJSON(t.Hosts, "[]")
	if err != nil {
		return err
	}
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE task_automations SET name = ?, description = ?, is_enabled = ?,
		evaluation_criteria = ?, schedule_frequency = ?, hosts = ?, pinned_version = ?, latest_version = ?, last_run_at = ?,
		last_run_status = ?, next_run_at = ?, evidence_id = ?, finding_id = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		t.Name, t.Description, boolInt(t.IsEnabled), t.EvaluationCriteria, nullStr(t.ScheduleFrequency), hosts, nullInt(t.PinnedVersion),
		t.LatestVersion, tsPtr(t.LastRunAt), nullStr(t.LastRunStatus), tsPtr(t.NextRunAt), nullStr(t.EvidenceID), nullStr(t.FindingID),
		ts(t.UpdatedAt), orgID, t.ID)
	return affected(res, err)
}

// DeleteTaskAutomation deletes an automation; its versions and runs go
// with it.
func (db *DB) DeleteTaskAutomation(ctx context.Context, orgID, taskID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM task_automations WHERE organization_id = ? AND task_id = ? AND id = ?`, orgID, taskID, id)
	return affected(res, err)
}

// ListTaskAutomations lists a task's automations, oldest first.
func (db *DB) ListTaskAutomations(ctx context.Context, orgID, taskID string, pg app.Page) (app.List[app.TaskAutomation], error) {
	out := app.List[app.TaskAutomation]{Items: []app.TaskAutomation{}}
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM task_automations WHERE organization_id = ? AND task_id = ?`,
		orgID, taskID).Scan(&out.Total); err != nil {
		return out, err
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+automationColumns+` FROM task_automations WHERE organization_id = ? AND task_id = ?
		ORDER BY created_at, id LIMIT ? OFFSET ?`, orgID, taskID, pg.PerPage, pg.Offset())
	if err != nil {
		return out, fmt.Errorf("list task automations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanAutomation(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *t)
	}
	return out, rows.Err()
}

// DueTaskAutomations lists enabled automations whose next run is due.
func (db *DB) DueTaskAutomations(ctx context.Context, now time.Time) ([]app.TaskAutomation, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+automationColumns+` FROM task_automations
		WHERE next_run_at IS NOT NULL AND is_enabled = 1 AND next_run_at <= ? ORDER BY next_run_at LIMIT 500`, ts(now))
	if err != nil {
		return nil, fmt.Errorf("due task automations: %w", err)
	}
	defer rows.Close()
	var out []app.TaskAutomation
	for rows.Next() {
		t, err := scanAutomation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, rows.Err()
}

const versionColumns = `id, automation_id, version, script, changelog, created_by, created_at`

func scanVersion(row interface{ Scan(...any) error }) (*app.TaskAutomationVersion, error) {
	var v app.TaskAutomationVersion
	var created string
	if err := row.Scan(&v.ID, &v.AutomationID, &v.Version, &v.Script, &v.Changelog, &v.CreatedBy, &created); err != nil {
		return nil, mapErr(err)
	}
	v.CreatedAt = parseTS(created)
	return &v, nil
}

// CreateAutomationVersion inserts a version; a taken number is ErrConflict.
func (db *DB) CreateAutomationVersion(ctx context.Context, orgID string, v *app.TaskAutomationVersion) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO task_automation_versions (id, organization_id, automation_id, version, script,
		changelog, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		v.ID, orgID, v.AutomationID, v.Version, v.Script, v.Changelog, v.CreatedBy, ts(v.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert automation version: %w", mapErr(err))
	}
	return nil
}

// GetAutomationVersion returns one version by number.
func (db *DB) GetAutomationVersion(ctx context.Context, orgID, automationID string, version int) (*app.TaskAutomationVersion, error) {
	return scanVersion(db.rd(ctx).QueryRowContext(ctx, `SELECT `+versionColumns+` FROM task_automation_versions
		WHERE organization_id = ? AND automation_id = ? AND version = ?`, orgID, automationID, version))
}

// ListAutomationVersions lists versions, newest first.
func (db *DB) ListAutomationVersions(ctx context.Context, orgID, automationID string, pg app.Page) (app.List[app.TaskAutomationVersion], error) {
	out := app.List[app.TaskAutomationVersion]{Items: []app.TaskAutomationVersion{}}
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM task_automation_versions WHERE organization_id = ? AND automation_id = ?`,
		orgID, automationID).Scan(&out.Total); err != nil {
		return out, err
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+versionColumns+` FROM task_automation_versions
		WHERE organization_id = ? AND automation_id = ? ORDER BY version DESC LIMIT ? OFFSET ?`, orgID, automationID, pg.PerPage, pg.Offset())
	if err != nil {
		return out, fmt.Errorf("list automation versions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *v)
	}
	return out, rows.Err()
}

const automationRunColumns = `r.id, r.organization_id, r.automation_id, COALESCE(a.name, ''), r.task_id, r.version, r.trigger, r.status,
	r.evaluation_status, r.evaluation_reason, r.stop_reason, r.error, r.result, r.logs, r.steps, r.http_requests, r.duration_ms,
	r.evidence_id, r.finding_id, r.requested_by, r.created_at, r.started_at, r.finished_at`

const automationRunFrom = ` FROM task_automation_runs r LEFT JOIN task_automations a ON a.id = r.automation_id`

func scanAutomationRun(row interface{ Scan(...any) error }, withLogs bool) (*app.TaskAutomationRun, error) {
	var r app.TaskAutomationRun
	var evs, evr, stop, errMsg, evd, fnd, started, finished sql.NullString
	var result, logs, created string
	if err := row.Scan(&r.ID, &r.OrganizationID, &r.AutomationID, &r.AutomationName, &r.TaskID, &r.Version, &r.Trigger, &r.Status,
		&evs, &evr, &stop, &errMsg, &result, &logs, &r.Steps, &r.HTTPRequests, &r.DurationMs, &evd, &fnd, &r.RequestedBy,
		&created, &started, &finished); err != nil {
		return nil, mapErr(err)
	}
	r.EvaluationStatus, r.EvaluationReason, r.StopReason, r.Error = strPtr(evs), strPtr(evr), strPtr(stop), strPtr(errMsg)
	r.EvidenceID, r.FindingID = strPtr(evd), strPtr(fnd)
	r.CreatedAt, r.StartedAt, r.FinishedAt = parseTS(created), parseTSPtr(started), parseTSPtr(finished)
	r.Result = map[string]any{}
	if err := json.Unmarshal([]byte(result), &r.Result); err != nil || r.Result == nil {
		r.Result = map[string]any{}
	}
	r.Logs = []app.RunLog{}
	if withLogs {
		if err := json.Unmarshal([]byte(logs), &r.Logs); err != nil {
			return nil, fmt.Errorf("automation run %s logs: %w", r.ID, err)
		}
	}
	return &r, nil
}

// CreateAutomationRun inserts a pending run; a second active run of the
// same automation violates the partial unique index (ErrConflict).
func (db *DB) CreateAutomationRun(ctx context.Context, orgID string, r *app.TaskAutomationRun) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO task_automation_runs (id, organization_id, automation_id, task_id, version,
		trigger, status, requested_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, orgID, r.AutomationID, r.TaskID, r.Version, r.Trigger, r.Status, r.RequestedBy, ts(r.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert automation run: %w", mapErr(err))
	}
	return nil
}

// GetAutomationRun returns one run with its logs.
func (db *DB) GetAutomationRun(ctx context.Context, orgID, id string) (*app.TaskAutomationRun, error) {
	return scanAutomationRun(db.rd(ctx).QueryRowContext(ctx, `SELECT `+automationRunColumns+automationRunFrom+`
		WHERE r.organization_id = ? AND r.id = ?`, orgID, id), true)
}

// ListAutomationRuns lists runs of a task or of one automation, newest
// first, without logs.
func (db *DB) ListAutomationRuns(ctx context.Context, orgID string, f app.AutomationRunFilter) (app.List[app.TaskAutomationRun], error) {
	where := `r.organization_id = ? AND r.task_id = ?`
	args := []any{orgID, f.TaskID}
	if f.AutomationID != "" {
		where += ` AND r.automation_id = ?`
		args = append(args, f.AutomationID)
	}
	out := app.List[app.TaskAutomationRun]{Items: []app.TaskAutomationRun{}}
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM task_automation_runs r WHERE `+where, args...).Scan(&out.Total); err != nil {
		return out, err
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+automationRunColumns+automationRunFrom+` WHERE `+where+`
		ORDER BY r.created_at DESC, r.id DESC LIMIT ? OFFSET ?`, append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list automation runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanAutomationRun(rows, false)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *r)
	}
	return out, rows.Err()
}

// ClaimAutomationRun moves the oldest pending run to running.
func (db *DB) ClaimAutomationRun(ctx context.Context, now time.Time) (*app.TaskAutomationRun, error) {
	var out *app.TaskAutomationRun
	err := db.InTx(ctx, func(ctx context.Context) error {
		var id string
		err := db.wr(ctx).QueryRowContext(ctx, `SELECT id FROM task_automation_runs WHERE status = 'pending'
			ORDER BY created_at, id LIMIT 1`).Scan(&id)
		if err != nil {
			return mapErr(err)
		}
		if _, err := db.wr(ctx).ExecContext(ctx, `UPDATE task_automation_runs SET status = 'running', started_at = ? WHERE id = ?`,
			ts(now), id); err != nil {
			return err
		}
		out, err = scanAutomationRun(db.wr(ctx).QueryRowContext(ctx, `SELECT `+automationRunColumns+automationRunFrom+` WHERE r.id = ?`, id), true)
		return err
	})
	return out, err
}

// FinishAutomationRun writes a run's outcome.
func (db *DB) FinishAutomationRun(ctx context.Context, orgID string, r *app.TaskAutomationRun) error {
	logs, err := integJSON(r.Logs, "[]")
	if err != nil {
		return err
	}
	result, err := integJSON(r.Result, "{}")
	if err != nil {
		return err
	}
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE task_automation_runs SET status = ?, evaluation_status = ?, evaluation_reason = ?,
		stop_reason = ?, error = ?, result = ?, logs = ?, steps = ?, http_requests = ?, duration_ms = ?, evidence_id = ?, finding_id = ?,
		finished_at = ? WHERE organization_id = ? AND id = ?`, r.Status, nullStr(r.EvaluationStatus), nullStr(r.EvaluationReason),
		nullStr(r.StopReason), nullStr(r.Error), result, logs, r.Steps, r.HTTPRequests, r.DurationMs, nullStr(r.EvidenceID),
		nullStr(r.FindingID), tsPtr(r.FinishedAt), orgID, r.ID)
	return affected(res, err)
}

// InterruptRunningAutomationRuns marks every running run interrupted.
func (db *DB) InterruptRunningAutomationRuns(ctx context.Context, now time.Time, reason string) (int, error) {
	logs, _ := json.Marshal([]app.RunLog{{At: now, Level: "error", Message: reason}})
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE task_automation_runs SET status = 'interrupted', error = ?, finished_at = ?,
		logs = CASE WHEN logs = '[]' THEN ? ELSE logs END WHERE status = 'running'`, reason, ts(now), string(logs))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
