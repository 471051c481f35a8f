package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.BrowserStore = (*DB)(nil)

// GetBrowserContext returns the organization's browser context.
func (db *DB) GetBrowserContext(ctx context.Context, orgID string) (*app.BrowserContext, error) {
	var c app.BrowserContext
	var created string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT id, created_at FROM browser_contexts WHERE organization_id = ?`, orgID).Scan(&c.ContextID, &created)
	if err != nil {
		return nil, fmt.Errorf("browser context: %w", mapErr(err))
	}
	c.CreatedAt = parseTS(created)
	return &c, nil
}

// CreateBrowserContext records the organization's browser context.
func (db *DB) CreateBrowserContext(ctx context.Context, orgID string, c *app.BrowserContext) error {
	if _, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO browser_contexts (organization_id, id, created_at) VALUES (?, ?, ?)`,
		orgID, c.ContextID, ts(c.CreatedAt)); err != nil {
		return fmt.Errorf("insert browser context: %w", mapErr(err))
	}
	return nil
}

// DeleteBrowserContext removes the organization's browser context.
func (db *DB) DeleteBrowserContext(ctx context.Context, orgID string) error {
	if _, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM browser_contexts WHERE organization_id = ?`, orgID); err != nil {
		return fmt.Errorf("delete browser context: %w", err)
	}
	return nil
}

// SaveBrowserProfile inserts or replaces an auth profile.
func (db *DB) SaveBrowserProfile(ctx context.Context, orgID string, p *app.BrowserAuthProfile) error {
	doc, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO browser_auth_profiles (id, organization_id, hostname, doc, sealed, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET hostname = excluded.hostname, doc = excluded.doc, sealed = excluded.sealed
		WHERE browser_auth_profiles.organization_id = excluded.organization_id`,
		p.ID, orgID, p.Hostname, string(doc), p.Sealed(), ts(p.CreatedAt))
	if err != nil {
		return fmt.Errorf("save browser profile: %w", mapErr(err))
	}
	return nil
}

func scanProfile(row interface{ Scan(...any) error }) (*app.BrowserAuthProfile, error) {
	var doc string
	var sealed []byte
	if err := row.Scan(&doc, &sealed); err != nil {
		return nil, mapErr(err)
	}
	var p app.BrowserAuthProfile
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		return nil, fmt.Errorf("browser profile document: %w", err)
	}
	p.SetSealed(sealed)
	return &p, nil
}

// GetBrowserProfile returns one auth profile.
func (db *DB) GetBrowserProfile(ctx context.Context, orgID, id string) (*app.BrowserAuthProfile, error) {
	p, err := scanProfile(db.rd(ctx).QueryRowContext(ctx, `SELECT doc, sealed FROM browser_auth_profiles WHERE organization_id = ? AND id = ?`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("browser profile %s: %w", id, err)
	}
	return p, nil
}

// ListBrowserProfiles lists the organization's auth profiles, oldest first.
func (db *DB) ListBrowserProfiles(ctx context.Context, orgID string) ([]app.BrowserAuthProfile, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT doc, sealed FROM browser_auth_profiles WHERE organization_id = ? ORDER BY id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list browser profiles: %w", err)
	}
	defer rows.Close()
	out := []app.BrowserAuthProfile{}
	for rows.Next() {
		p, err := scanProfile(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	return out, rows.Err()
}

func (db *DB) deleteBrowserRow(ctx context.Context, table, what, orgID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM `+table+` WHERE organization_id = ? AND id = ?`, orgID, id)
	if err != nil {
		return fmt.Errorf("delete %s: %w", what, mapErr(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%s %s: %w", what, id, app.ErrNotFound)
	}
	return nil
}

// DeleteBrowserProfile deletes an auth profile.
func (db *DB) DeleteBrowserProfile(ctx context.Context, orgID, id string) error {
	return db.deleteBrowserRow(ctx, "browser_auth_profiles", "browser profile", orgID, id)
}

// SaveBrowserAutomation inserts or replaces an automation.
func (db *DB) SaveBrowserAutomation(ctx context.Context, orgID string, au *app.BrowserAutomation) error {
	doc, err := json.Marshal(au)
	if err != nil {
		return err
	}
	var next any
	if au.NextRunAt != nil {
		next = ts(*au.NextRunAt)
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO browser_automations (id, organization_id, task_id, doc, next_run_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, next_run_at = excluded.next_run_at
		WHERE browser_automations.organization_id = excluded.organization_id`,
		au.ID, orgID, au.TaskID, string(doc), next, ts(au.CreatedAt))
	if err != nil {
		return fmt.Errorf("save browser automation: %w", mapErr(err))
	}
	return nil
}

func scanDoc[T any](row interface{ Scan(...any) error }, what string) (*T, error) {
	var doc string
	if err := row.Scan(&doc); err != nil {
		return nil, mapErr(err)
	}
	var v T
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		return nil, fmt.Errorf("%s document: %w", what, err)
	}
	return &v, nil
}

func queryDocs[T any](ctx context.Context, q querier, what, query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scanDoc[T](rows, what)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}

// GetBrowserAutomation returns one automation.
func (db *DB) GetBrowserAutomation(ctx context.Context, orgID, id string) (*app.BrowserAutomation, error) {
	au, err := scanDoc[app.BrowserAutomation](db.rd(ctx).QueryRowContext(ctx,
		`SELECT doc FROM browser_automations WHERE organization_id = ? AND id = ?`, orgID, id), "browser automation")
	if err != nil {
		return nil, fmt.Errorf("browser automation %s: %w", id, err)
	}
	return au, nil
}

// ListBrowserAutomations lists a task's automations (every one of the
// organization when taskID is empty), oldest first.
func (db *DB) ListBrowserAutomations(ctx context.Context, orgID, taskID string) ([]app.BrowserAutomation, error) {
	if taskID == "" {
		return queryDocs[app.BrowserAutomation](ctx, db.rd(ctx), "browser automations",
			`SELECT doc FROM browser_automations WHERE organization_id = ? ORDER BY id`, orgID)
	}
	return queryDocs[app.BrowserAutomation](ctx, db.rd(ctx), "browser automations",
		`SELECT doc FROM browser_automations WHERE organization_id = ? AND task_id = ? ORDER BY id`, orgID, taskID)
}

// DeleteBrowserAutomation deletes an automation with its runs.
func (db *DB) DeleteBrowserAutomation(ctx context.Context, orgID, id string) error {
	return db.deleteBrowserRow(ctx, "browser_automations", "browser automation", orgID, id)
}

// DueBrowserAutomations lists the automations due at now over every
// organization (the scheduler's query; no organization filter by design).
func (db *DB) DueBrowserAutomations(ctx context.Context, now time.Time) ([]app.OrgBrowserAutomation, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT organization_id, doc FROM browser_automations
		WHERE next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at LIMIT 100`, ts(now))
	if err != nil {
		return nil, fmt.Errorf("due browser automations: %w", err)
	}
	defer rows.Close()
	var out []app.OrgBrowserAutomation
	for rows.Next() {
		var org, doc string
		if err := rows.Scan(&org, &doc); err != nil {
			return nil, err
		}
		var au app.BrowserAutomation
		if err := json.Unmarshal([]byte(doc), &au); err != nil {
			return nil, fmt.Errorf("browser automation document: %w", err)
		}
		out = append(out, app.OrgBrowserAutomation{OrgID: org, BrowserAutomation: au})
	}
	return out, rows.Err()
}

// SaveBrowserRun inserts or replaces a run.
func (db *DB) SaveBrowserRun(ctx context.Context, orgID string, r *app.BrowserAutomationRun) error {
	doc, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO browser_automation_runs (id, organization_id, automation_id, task_id, status, doc, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status, doc = excluded.doc
		WHERE browser_automation_runs.organization_id = excluded.organization_id`,
		r.ID, orgID, nullStr(r.AutomationID), nullStr(r.TaskID), r.Status, string(doc), ts(r.CreatedAt))
	if err != nil {
		return fmt.Errorf("save browser run: %w", mapErr(err))
	}
	return nil
}

// GetBrowserRun returns one run.
func (db *DB) GetBrowserRun(ctx context.Context, orgID, id string) (*app.BrowserAutomationRun, error) {
	r, err := scanDoc[app.BrowserAutomationRun](db.rd(ctx).QueryRowContext(ctx,
		`SELECT doc FROM browser_automation_runs WHERE organization_id = ? AND id = ?`, orgID, id), "browser run")
	if err != nil {
		return nil, fmt.Errorf("browser run %s: %w", id, err)
	}
	return r, nil
}

// ListBrowserRuns lists runs of an automation, or of a task when
// automationID is empty, newest first.
func (db *DB) ListBrowserRuns(ctx context.Context, orgID, automationID, taskID string, limit int) ([]app.BrowserAutomationRun, error) {
	if automationID != "" {
		return queryDocs[app.BrowserAutomationRun](ctx, db.rd(ctx), "browser runs",
			`SELECT doc FROM browser_automation_runs WHERE organization_id = ? AND automation_id = ? ORDER BY id DESC LIMIT ?`, orgID, automationID, limit)
	}
	return queryDocs[app.BrowserAutomationRun](ctx, db.rd(ctx), "browser runs",
		`SELECT doc FROM browser_automation_runs WHERE organization_id = ? AND task_id = ? ORDER BY id DESC LIMIT ?`, orgID, taskID, limit)
}

// BrowserRunsByStatus lists runs in a status over every organization
// (start-up recovery).
func (db *DB) BrowserRunsByStatus(ctx context.Context, status string) ([]app.OrgBrowserRun, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT organization_id, doc FROM browser_automation_runs WHERE status = ?`, status)
	if err != nil {
		return nil, fmt.Errorf("browser runs by status: %w", err)
	}
	defer rows.Close()
	var out []app.OrgBrowserRun
	for rows.Next() {
		var org, doc string
		if err := rows.Scan(&org, &doc); err != nil {
			return nil, err
		}
		var r app.BrowserAutomationRun
		if err := json.Unmarshal([]byte(doc), &r); err != nil {
			return nil, fmt.Errorf("browser run document: %w", err)
		}
		out = append(out, app.OrgBrowserRun{OrgID: org, BrowserAutomationRun: r})
	}
	return out, rows.Err()
}

// AddBrowserScreenshot records a screenshot a run stored in the file store.
func (db *DB) AddBrowserScreenshot(ctx context.Context, orgID, runID string, s app.BrowserScreenshot) error {
	if _, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO browser_run_screenshots (run_id, organization_id, seq, name, sha256, size)
		VALUES (?, ?, ?, ?, ?, ?)`, runID, orgID, s.Seq, s.Name, s.SHA256, s.Size); err != nil {
		return fmt.Errorf("add browser screenshot: %w", mapErr(err))
	}
	return nil
}

// SaveBrowserDraft inserts or replaces a draft.
func (db *DB) SaveBrowserDraft(ctx context.Context, orgID string, d *app.BrowserDraft) error {
	doc, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO browser_automation_drafts (id, organization_id, task_id, doc, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc
		WHERE browser_automation_drafts.organization_id = excluded.organization_id`, d.ID, orgID, d.TaskID, string(doc), ts(d.CreatedAt))
	if err != nil {
		return fmt.Errorf("save browser draft: %w", mapErr(err))
	}
	return nil
}

// GetBrowserDraft returns one draft.
func (db *DB) GetBrowserDraft(ctx context.Context, orgID, id string) (*app.BrowserDraft, error) {
	d, err := scanDoc[app.BrowserDraft](db.rd(ctx).QueryRowContext(ctx,
		`SELECT doc FROM browser_automation_drafts WHERE organization_id = ? AND id = ?`, orgID, id), "browser draft")
	if err != nil {
		return nil, fmt.Errorf("browser draft %s: %w", id, err)
	}
	return d, nil
}

// ListBrowserDrafts lists a task's drafts, oldest first.
func (db *DB) ListBrowserDrafts(ctx context.Context, orgID, taskID string) ([]app.BrowserDraft, error) {
	return queryDocs[app.BrowserDraft](ctx, db.rd(ctx), "browser drafts",
		`SELECT doc FROM browser_automation_drafts WHERE organization_id = ? AND task_id = ? ORDER BY id`, orgID, taskID)
}

// DeleteBrowserDraft deletes a draft.
func (db *DB) DeleteBrowserDraft(ctx context.Context, orgID, id string) error {
	return db.deleteBrowserRow(ctx, "browser_automation_drafts", "browser draft", orgID, id)
}
