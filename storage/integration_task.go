package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.TaskIntegrationStore = (*DB)(nil)

// SetTaskCheckDisabled disconnects or reconnects a check from a task; it
// reports whether anything changed.
func (db *DB) SetTaskCheckDisabled(ctx context.Context, orgID, taskID, connectionID, checkID string, disabled bool, by string, at time.Time) (bool, error) {
	var q string
	args := []any{orgID, taskID, connectionID, checkID}
	if disabled {
		q = `INSERT INTO integration_task_disabled_checks (organization_id, task_id, connection_id, check_id, disabled_by, disabled_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
		args = append(args, by, ts(at))
	} else {
		q = `DELETE FROM integration_task_disabled_checks WHERE organization_id = ? AND task_id = ? AND connection_id = ? AND check_id = ?`
	}
	res, err := db.wr(ctx).ExecContext(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("set task check: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// DisabledTaskChecks lists a task's disconnected checks as
// "connectionId/checkId".
func (db *DB) DisabledTaskChecks(ctx context.Context, orgID, taskID string) (map[string]bool, error) {
	return db.stringSet(ctx, `SELECT connection_id || '/' || check_id FROM integration_task_disabled_checks
		WHERE organization_id = ? AND task_id = ?`, orgID, taskID)
}

// TasksWithCheckDisabled lists the tasks that disconnected a check.
func (db *DB) TasksWithCheckDisabled(ctx context.Context, orgID, connectionID, checkID string) (map[string]bool, error) {
	return db.stringSet(ctx, `SELECT task_id FROM integration_task_disabled_checks
		WHERE organization_id = ? AND connection_id = ? AND check_id = ?`, orgID, connectionID, checkID)
}

func (db *DB) stringSet(ctx context.Context, q string, args ...any) (map[string]bool, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out[s] = true
	}
	return out, rows.Err()
}

// LinkTaskRun records that a run was requested for a task.
func (db *DB) LinkTaskRun(ctx context.Context, orgID, taskID, runID string) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO integration_task_runs (organization_id, task_id, run_id) VALUES (?, ?, ?)
		ON CONFLICT DO NOTHING`, orgID, taskID, runID)
	if err != nil {
		return fmt.Errorf("link task run: %w", mapErr(err))
	}
	return nil
}

// TaskCheckRuns lists, newest first, the runs requested for the task and
// the runs of the connections that evaluated one of the checks (or every
// check); the second answer says which were requested for the task.
func (db *DB) TaskCheckRuns(ctx context.Context, orgID, taskID string, connectionIDs, checkIDs []string, limit int) ([]app.CheckRun, map[string]bool, error) {
	forTask, err := db.stringSet(ctx, `SELECT run_id FROM integration_task_runs WHERE organization_id = ? AND task_id = ?`, orgID, taskID)
	if err != nil {
		return nil, nil, fmt.Errorf("task check runs: %w", err)
	}
	where := `r.organization_id = ? AND (r.id IN (SELECT run_id FROM integration_task_runs WHERE organization_id = ? AND task_id = ?)`
	args := []any{orgID, orgID, taskID}
	if len(connectionIDs) > 0 && len(checkIDs) > 0 {
		where += ` OR (r.connection_id IN (` + placeholders(len(connectionIDs)) + `) AND (r.check_id IS NULL OR r.check_id IN (` +
			placeholders(len(checkIDs)) + `)))`
		for _, id := range connectionIDs {
			args = append(args, id)
		}
		for _, id := range checkIDs {
			args = append(args, id)
		}
	}
	where += `)`
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+runColumns+runFrom+` WHERE `+where+` ORDER BY r.queued_at DESC, r.id DESC LIMIT ?`,
		append(args, limit)...)
	if err != nil {
		return nil, nil, fmt.Errorf("task check runs: %w", err)
	}
	defer rows.Close()
	out := []app.CheckRun{}
	for rows.Next() {
		r, err := scanRun(rows, true)
		if err != nil {
			return nil, nil, fmt.Errorf("task check runs: %w", err)
		}
		out = append(out, *r)
	}
	return out, forTask, rows.Err()
}

// TaskCheckEvidence returns, per task, the evidence a check keeps there.
func (db *DB) TaskCheckEvidence(ctx context.Context, orgID, connectionID, checkID string) (map[string]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT task_id, evidence_id FROM integration_task_evidence
		WHERE organization_id = ? AND connection_id = ? AND check_id = ?`, orgID, connectionID, checkID)
	if err != nil {
		return nil, fmt.Errorf("task check evidence: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var t, e string
		if err := rows.Scan(&t, &e); err != nil {
			return nil, err
		}
		out[t] = e
	}
	return out, rows.Err()
}

// SetTaskCheckEvidence records the evidence a check keeps on a task.
func (db *DB) SetTaskCheckEvidence(ctx context.Context, orgID, taskID, connectionID, checkID, evidenceID string) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO integration_task_evidence (organization_id, task_id, connection_id, check_id, evidence_id)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (organization_id, task_id, connection_id, check_id) DO UPDATE SET evidence_id = excluded.evidence_id`,
		orgID, taskID, connectionID, checkID, evidenceID)
	if err != nil {
		return fmt.Errorf("set task check evidence: %w", mapErr(err))
	}
	return nil
}
