package storage

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.DashboardStore = (*DB)(nil)

// ExpiringEvidence lists evidence expiring after now and at or before
// until, soonest first, with the total.
func (db *DB) ExpiringEvidence(ctx context.Context, orgID string, now, until time.Time, limit int) ([]app.ExpiringItem, int, error) {
	var total int
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM evidence
		WHERE organization_id = ? AND expires_at > ? AND expires_at <= ?`, orgID, ts(now), ts(until)).Scan(&total)
	if err != nil {
		return nil, 0, fmt.Errorf("count expiring evidence: %w", err)
	}
	items := []app.ExpiringItem{}
	if total == 0 {
		return items, 0, nil
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT e.id, e.control_id, c.name, e.filename, e.expires_at
		FROM evidence e JOIN controls c ON c.id = e.control_id AND c.organization_id = e.organization_id
		WHERE e.organization_id = ? AND e.expires_at > ? AND e.expires_at <= ?
		ORDER BY e.expires_at, e.id LIMIT ?`, orgID, ts(now), ts(until), limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list expiring evidence: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var it app.ExpiringItem
		var exp string
		if err := rows.Scan(&it.EvidenceID, &it.ControlID, &it.ControlName, &it.Filename, &exp); err != nil {
			return nil, 0, fmt.Errorf("list expiring evidence: %w", err)
		}
		it.ExpiresAt = parseTS(exp)
		items = append(items, it)
	}
	return items, total, rows.Err()
}

// OpenFindingsBySeverity counts open and in-review findings per severity.
func (db *DB) OpenFindingsBySeverity(ctx context.Context, orgID string) (map[string]int, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT severity, count(*) FROM findings
		WHERE organization_id = ? AND status IN ('open', 'in_review') GROUP BY severity`, orgID)
	if err != nil {
		return nil, fmt.Errorf("count open findings: %w", err)
	}
	defer rows.Close()
	m := map[string]int{}
	for rows.Next() {
		var sev string
		var n int
		if err := rows.Scan(&sev, &n); err != nil {
			return nil, fmt.Errorf("count open findings: %w", err)
		}
		m[sev] = n
	}
	return m, rows.Err()
}

// OverdueTasks lists tasks due before today that are not done or set
// aside, earliest due first; assigneeID narrows to one person when set.
func (db *DB) OverdueTasks(ctx context.Context, orgID, assigneeID, today string, limit int) ([]app.OverdueItem, int, error) {
	where := `organization_id = ? AND due_date IS NOT NULL AND due_date < ? AND status NOT IN ('done', 'not_relevant')`
	args := []any{orgID, today}
	if assigneeID != "" {
		where += ` AND assignee_id = ?`
		args = append(args, assigneeID)
	}
	var total int
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM tasks WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count overdue tasks: %w", err)
	}
	items := []app.OverdueItem{}
	if total == 0 {
		return items, 0, nil
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT id, '', title, status, due_date, assignee_id FROM tasks WHERE `+where+
		` ORDER BY due_date, id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list overdue tasks: %w", err)
	}
	items, err = scanOverdue(rows, items)
	if err != nil {
		return nil, 0, fmt.Errorf("list overdue tasks: %w", err)
	}
	return items, total, nil
}

// OverdueCorrectiveActions lists unresolved corrective actions that are
// marked overdue or due before today, earliest due first.
func (db *DB) OverdueCorrectiveActions(ctx context.Context, orgID, today string, limit int) ([]app.OverdueItem, int, error) {
	const where = `organization_id = ? AND status <> 'resolved' AND (status = 'overdue' OR (due_date IS NOT NULL AND due_date < ?))`
	var total int
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM corrective_actions WHERE `+where, orgID, today).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count overdue corrective actions: %w", err)
	}
	items := []app.OverdueItem{}
	if total == 0 {
		return items, 0, nil
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT id, finding_id, title, status, due_date, owner_id FROM corrective_actions WHERE `+where+
		` ORDER BY due_date, id LIMIT ?`, orgID, today, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list overdue corrective actions: %w", err)
	}
	items, err = scanOverdue(rows, items)
	if err != nil {
		return nil, 0, fmt.Errorf("list overdue corrective actions: %w", err)
	}
	return items, total, nil
}

func scanOverdue(rows *sql.Rows, items []app.OverdueItem) ([]app.OverdueItem, error) {
	defer rows.Close()
	for rows.Next() {
		var it app.OverdueItem
		var due, owner sql.NullString
		if err := rows.Scan(&it.ID, &it.ParentID, &it.Title, &it.Status, &due, &owner); err != nil {
			return nil, err
		}
		it.DueDate = due.String
		it.OwnerID = strPtr(owner)
		items = append(items, it)
	}
	return items, rows.Err()
}

// RiskCells counts unarchived risks per (probability, impact) pair,
// inherent and residual; ownerID narrows to one owner when set.
func (db *DB) RiskCells(ctx context.Context, orgID, ownerID string) (inherent, residual map[[2]string]int, unassessed int, err error) {
	where := `organization_id = ? AND archived_at IS NULL`
	args := []any{orgID}
	if ownerID != "" {
		where += ` AND owner_id = ?`
		args = append(args, ownerID)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT inherent_probability, inherent_impact, residual_probability, residual_impact, count(*)
		FROM risks WHERE `+where+` GROUP BY 1, 2, 3, 4`, args...)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("risk cells: %w", err)
	}
	defer rows.Close()
	inherent, residual = map[[2]string]int{}, map[[2]string]int{}
	for rows.Next() {
		var ip, ii string
		var rp, ri sql.NullString
		var n int
		if err := rows.Scan(&ip, &ii, &rp, &ri, &n); err != nil {
			return nil, nil, 0, fmt.Errorf("risk cells: %w", err)
		}
		inherent[[2]string{ip, ii}] += n
		if rp.Valid && ri.Valid {
			residual[[2]string{rp.String, ri.String}] += n
		} else {
			unassessed += n
		}
	}
	return inherent, residual, unassessed, rows.Err()
}
