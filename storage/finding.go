package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.FindingStore = (*DB)(nil)

const findingColumns = `id, type, status, severity, finding_class, content, title, description, source, task_id, scope,
	template_id, cvss, due_date, revision_note, created_by_type, created_by_id, closed_at, created_at, updated_at`

// findingControlsColumn reads a finding's linked control ids as a JSON
// array in the same query (by the link table's primary key; the outer
// query filters on the organization).
const findingControlsColumn = `(SELECT json_group_array(control_id) FROM (SELECT control_id FROM finding_controls fc
	WHERE fc.finding_id = findings.id))`

func scanFindingWithControls(row interface{ Scan(...any) error }) (*app.Finding, error) {
	var controls string
	f, err := scanFinding(suffixScan{row, &controls})
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(controls), &f.LinkedControlIDs); err != nil {
		return nil, fmt.Errorf("decode controls of finding %s: %w", f.ID, err)
	}
	return f, nil
}

// suffixScan scans the last column into last, the others into the args.
type suffixScan struct {
	row  interface{ Scan(...any) error }
	last any
}

func (s suffixScan) Scan(dest ...any) error { return s.row.Scan(append(dest, s.last)...) }

func scanFinding(row interface{ Scan(...any) error }) (*app.Finding, error) {
	var f app.Finding
	var class, title, desc, source, task, scope, tpl, due, note, closed sql.NullString
	var cvss sql.NullFloat64
	var created, updated string
	if err := row.Scan(&f.ID, &f.Type, &f.Status, &f.Severity, &class, &f.Content, &title, &desc, &source, &task, &scope,
		&tpl, &cvss, &due, &note, &f.CreatedByType, &f.CreatedByID, &closed, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	f.FindingClass, f.Title, f.Description, f.Source = strPtr(class), strPtr(title), strPtr(desc), strPtr(source)
	f.TaskID, f.Scope, f.TemplateID, f.RevisionNote = strPtr(task), strPtr(scope), strPtr(tpl), strPtr(note)
	if cvss.Valid {
		f.CVSS = &cvss.Float64
	}
	f.DueDate, f.ClosedAt = parseTSPtr(due), parseTSPtr(closed)
	f.CreatedAt, f.UpdatedAt = parseTS(created), parseTS(updated)
	f.LinkedControlIDs = []string{}
	return &f, nil
}

func findingArgs(f *app.Finding) []any {
	var cvss any
	if f.CVSS != nil {
		cvss = *f.CVSS
	}
	return []any{f.Type, f.Status, f.Severity, nullStr(f.FindingClass), f.Content, nullStr(f.Title), nullStr(f.Description),
		nullStr(f.Source), nullStr(f.TaskID), nullStr(f.Scope), nullStr(f.TemplateID), cvss, tsPtr(f.DueDate),
		nullStr(f.RevisionNote), f.CreatedByType, f.CreatedByID, tsPtr(f.ClosedAt), ts(f.CreatedAt), ts(f.UpdatedAt)}
}

// CreateFinding inserts a finding and its control links.
func (db *DB) CreateFinding(ctx context.Context, orgID string, f *app.Finding) error {
	args := findingArgs(f)
	if _, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO findings (organization_id, `+findingColumns+`) VALUES (?, ?, `+placeholders(len(args))+`)`,
		append([]any{orgID, f.ID}, args...)...); err != nil {
		return fmt.Errorf("insert finding: %w", mapErr(err))
	}
	return db.addLinks(ctx, "finding_controls", "finding_id", orgID, f.ID, f.LinkedControlIDs)
}

// UpdateFinding writes every mutable column and replaces the control links.
func (db *DB) UpdateFinding(ctx context.Context, orgID string, f *app.Finding) error {
	return db.InTx(ctx, func(ctx context.Context) error {
		res, err := db.wr(ctx).ExecContext(ctx, `UPDATE findings SET type = ?, status = ?, severity = ?, finding_class = ?,
			content = ?, title = ?, description = ?, source = ?, task_id = ?, scope = ?, template_id = ?, cvss = ?, due_date = ?,
			revision_note = ?, created_by_type = ?, created_by_id = ?, closed_at = ?, created_at = ?, updated_at = ?
			WHERE organization_id = ? AND id = ?`, append(findingArgs(f), orgID, f.ID)...)
		if err := affected(res, err); err != nil {
			return err
		}
		return db.setLinks(ctx, "finding_controls", "finding_id", orgID, f.ID, f.LinkedControlIDs)
	})
}

// getFindingSQL returns one finding with its linked controls.
func (db *DB) getFindingSQL(ctx context.Context, orgID, id string) (*app.Finding, error) {
	return scanFindingWithControls(db.rd(ctx).QueryRowContext(ctx, `SELECT `+findingColumns+`, `+findingControlsColumn+`
		FROM findings WHERE organization_id = ? AND id = ?`, orgID, id))
}

// listFindingsSQL returns a page of findings matching every filter, oldest first.
func (db *DB) listFindingsSQL(ctx context.Context, orgID string, f app.FindingFilter) (app.List[app.Finding], error) {
	where := []string{"organization_id = ?"}
	args := []any{orgID}
	add := func(cond string, v ...any) {
		where = append(where, cond)
		args = append(args, v...)
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if f.Severity != "" {
		add("severity = ?", f.Severity)
	}
	if f.Type != "" {
		add("type = ?", f.Type)
	}
	if f.TaskID != "" {
		add("task_id = ?", f.TaskID)
	}
	if f.Scope != "" {
		add("scope = ?", f.Scope)
	}
	if f.FindingClass != "" {
		add("finding_class = ?", f.FindingClass)
	}
	if f.ControlID != "" {
		add("id IN (SELECT finding_id FROM finding_controls WHERE organization_id = ? AND control_id = ?)", orgID, f.ControlID)
	}
	if f.TaskAssignee != "" {
		add("task_id IN (SELECT id FROM tasks WHERE organization_id = ? AND assignee_id = ?)", orgID, f.TaskAssignee)
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.Finding]{Items: []app.Finding{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM findings WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count findings: %w", err)
	}
	if f.Page.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+findingColumns+`, `+findingControlsColumn+` FROM findings WHERE `+cond+`
		ORDER BY id LIMIT ? OFFSET ?`, append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list findings: %w", err)
	}
	defer rows.Close()
	out.Items = make([]app.Finding, 0, min(f.Page.PerPage, out.Total-f.Page.Offset()))
	for rows.Next() {
		fd, err := scanFindingWithControls(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *fd)
	}
	return out, rows.Err()
}

// OpenFindingsByControl returns, per control, the open findings (status
// open or in_review) linked to it.
func (db *DB) OpenFindingsByControl(ctx context.Context, orgID string) (map[string][]app.OpenFinding, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT fc.control_id, f.id, f.severity, f.status, COALESCE(f.title, substr(f.content, 1, 200))
		FROM finding_controls fc JOIN findings f ON f.id = fc.finding_id AND f.organization_id = fc.organization_id
		WHERE fc.organization_id = ? AND f.status IN ('open', 'in_review')
		ORDER BY fc.control_id, f.id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("open findings by control: %w", err)
	}
	defer rows.Close()
	out := map[string][]app.OpenFinding{}
	for rows.Next() {
		var c string
		var o app.OpenFinding
		if err := rows.Scan(&c, &o.ID, &o.Severity, &o.Status, &o.Title); err != nil {
			return nil, fmt.Errorf("open findings by control: %w", err)
		}
		out[c] = append(out[c], o)
	}
	return out, rows.Err()
}
