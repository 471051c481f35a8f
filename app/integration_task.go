package app

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Task integrations: the checks that evidence a task (through the
// requirements its control serves and its template's requirement), a run
// of one check for a task, and per-task disconnection of a check.

// maxTaskRunsLimit bounds GET .../tasks/{taskId}/runs.
const maxTaskRunsLimit = 100

// TaskCheckConnection is one of the organization's connections able to run
// a check, as seen from a task.
type TaskCheckConnection struct {
	ConnectionID string        `json:"connectionId"`
	Name         string        `json:"name"`
	Status       string        `json:"status"`
	Disabled     bool          `json:"disabled"`
	LastResult   *CheckSummary `json:"lastResult"`
}

// TaskCheck is a check that applies to a task or a task template.
type TaskCheck struct {
	CheckInfo
	ProviderSlug string                `json:"providerSlug"`
	ProviderName string                `json:"providerName"`
	Connections  []TaskCheckConnection `json:"connections"`
}

// TaskChecks answers GET /v1/integrations/tasks/{taskId}/checks.
type TaskChecks struct {
	Task   *Task       `json:"task"`
	Checks []TaskCheck `json:"checks"`
}

// TemplateChecks answers GET /v1/integrations/tasks/template/{templateId}/checks.
type TemplateChecks struct {
	TemplateID string      `json:"templateId"`
	Checks     []TaskCheck `json:"checks"`
}

// TaskCheckRequest is the body of the task's run-check, disconnect and
// reconnect actions.
type TaskCheckRequest struct {
	ConnectionID string `json:"connectionId"`
	CheckID      string `json:"checkId"`
}

// TaskCheckState answers disconnect and reconnect.
type TaskCheckState struct {
	TaskID       string `json:"taskId"`
	ConnectionID string `json:"connectionId"`
	CheckID      string `json:"checkId"`
	Disabled     bool   `json:"disabled"`
}

// TaskCheckRun answers run-check: the finished run and its totals.
type TaskCheckRun struct {
	*CheckRun
	TaskID        string `json:"taskId"`
	Success       bool   `json:"success"`
	AccountsRun   int    `json:"accountsRun"`
	TotalPassing  int    `json:"totalPassing"`
	TotalFindings int    `json:"totalFindings"`
	HadErrors     bool   `json:"hadErrors"`
}

// TaskRun is a run that evaluated a check of a task, with the results of
// those checks.
type TaskRun struct {
	CheckRun
	ConnectionName string          `json:"connectionLabel"`
	Provider       TaskRunProvider `json:"provider"`
	ForTask        bool            `json:"forTask"`
	Results        []CheckResult   `json:"results"`
}

// TaskRunProvider names a run's provider.
type TaskRunProvider struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
}

// TaskIntegrationStore keeps the per-task state of checks.
type TaskIntegrationStore interface {
	SetTaskCheckDisabled(ctx context.Context, orgID, taskID, connectionID, checkID string, disabled bool, by string, at time.Time) (bool, error)
	// DisabledTaskChecks lists the task's disconnected (connection, check)
	// pairs as "connectionId/checkId".
	DisabledTaskChecks(ctx context.Context, orgID, taskID string) (map[string]bool, error)
	// TasksWithCheckDisabled lists the tasks that disconnected a check.
	TasksWithCheckDisabled(ctx context.Context, orgID, connectionID, checkID string) (map[string]bool, error)
	LinkTaskRun(ctx context.Context, orgID, taskID, runID string) error
	// TaskCheckRuns lists, newest first, the runs of the connections that
	// evaluated one of the checks (or every check), and the runs requested
	// for the task.
	TaskCheckRuns(ctx context.Context, orgID, taskID string, connectionIDs, checkIDs []string, limit int) ([]CheckRun, map[string]bool, error)
	TaskCheckEvidence(ctx context.Context, orgID, connectionID, checkID string) (map[string]string, error)
	SetTaskCheckEvidence(ctx context.Context, orgID, taskID, connectionID, checkID, evidenceID string) error
}

func taskCheckKey(connectionID, checkID string) string { return connectionID + "/" + checkID }

// applicableChecks lists the compiled-in checks whose requirements (direct
// or mapped) meet reqs, provider by provider.
func (a *App) applicableChecks(cat *Catalog, reqs map[string]bool) []TaskCheck {
	out := []TaskCheck{}
	if len(reqs) == 0 {
		return out
	}
	for _, p := range a.providerList() {
		d := p.Definition()
		for _, ch := range d.Checks {
			ci := checkInfo(cat, ch)
			hit := false
			for _, r := range ci.Requirements {
				if reqs[r.RequirementID] {
					hit = true
					break
				}
			}
			if hit {
				out = append(out, TaskCheck{CheckInfo: ci, ProviderSlug: d.Slug, ProviderName: d.Name, Connections: []TaskCheckConnection{}})
			}
		}
	}
	return out
}

// taskRequirements are the requirements a task evidences: those its control
// serves and its template's requirement.
func (a *App) taskRequirements(ctx context.Context, orgID string, t *Task) (map[string]bool, error) {
	reqs := map[string]bool{}
	if t.ControlID != nil {
		served, err := a.store.OrgRequirementControls(ctx, orgID)
		if err != nil {
			return nil, err
		}
		for req, ctls := range served {
			if containsString(ctls, *t.ControlID) {
				reqs[req] = true
			}
		}
	}
	if t.TemplateID != nil {
		tt, err := a.store.GetTaskTemplate(ctx, orgID, *t.TemplateID)
		switch {
		case err == nil:
			reqs[tt.RequirementID] = true
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	return reqs, nil
}

// GetChecksForTaskTemplate lists the checks that evidence a task template's
// requirement.
func (a *App) GetChecksForTaskTemplate(ctx context.Context, templateID string) (*TemplateChecks, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	tt, err := a.store.GetTaskTemplate(ctx, p.OrgID, templateID)
	if err != nil {
		return nil, err
	}
	cat, err := a.catalog()
	if err != nil {
		return nil, err
	}
	checks := a.applicableChecks(cat, map[string]bool{tt.RequirementID: true})
	if err := a.fillTaskCheckConnections(ctx, p.OrgID, "", checks); err != nil {
		return nil, err
	}
	return &TemplateChecks{TemplateID: tt.ID, Checks: checks}, nil
}

// GetChecksForTask lists the checks that evidence a task, each with the
// organization's connections of its provider, whether the check is
// disconnected from the task and its last result there.
func (a *App) GetChecksForTask(ctx context.Context, taskID string) (*TaskChecks, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	t, checks, err := a.taskChecks(ctx, p.OrgID, taskID)
	if err != nil {
		return nil, err
	}
	if err := a.fillTaskCheckConnections(ctx, p.OrgID, t.ID, checks); err != nil {
		return nil, err
	}
	return &TaskChecks{Task: t, Checks: checks}, nil
}

func (a *App) taskChecks(ctx context.Context, orgID, taskID string) (*Task, []TaskCheck, error) {
	t, err := a.store.GetTask(ctx, orgID, taskID)
	if err != nil {
		return nil, nil, err
	}
	reqs, err := a.taskRequirements(ctx, orgID, t)
	if err != nil {
		return nil, nil, err
	}
	cat, err := a.catalog()
	if err != nil {
		return nil, nil, err
	}
	return t, a.applicableChecks(cat, reqs), nil
}

func (a *App) fillTaskCheckConnections(ctx context.Context, orgID, taskID string, checks []TaskCheck) error {
	if len(checks) == 0 {
		return nil
	}
	conns, err := a.store.ListConnections(ctx, orgID)
	if err != nil {
		return err
	}
	disabled := map[string]bool{}
	if taskID != "" {
		if disabled, err = a.store.DisabledTaskChecks(ctx, orgID, taskID); err != nil {
			return err
		}
	}
	latest := map[string]map[string]CheckSummary{}
	for i := range checks {
		ch := &checks[i]
		for _, c := range conns {
			if c.ProviderSlug != ch.ProviderSlug {
				continue
			}
			if _, ok := latest[c.ID]; !ok {
				l, err := a.store.LatestCheckResults(ctx, orgID, c.ID)
				if err != nil {
					return err
				}
				latest[c.ID] = l
			}
			tc := TaskCheckConnection{ConnectionID: c.ID, Name: c.Name, Status: c.Status, Disabled: disabled[taskCheckKey(c.ID, ch.ID)]}
			if s, ok := latest[c.ID][ch.ID]; ok {
				tc.LastResult = &s
			}
			ch.Connections = append(ch.Connections, tc)
		}
	}
	return nil
}

// taskCheckTarget validates a task action's body: the task, the
// connection (of this organization) and a check of its provider that
// applies to the task.
func (a *App) taskCheckTarget(ctx context.Context, orgID, taskID string, in TaskCheckRequest) (*Task, *Connection, error) {
	t, checks, err := a.taskChecks(ctx, orgID, taskID)
	if err != nil {
		return nil, nil, err
	}
	ve := NewValidationError()
	in.ConnectionID, in.CheckID = strings.TrimSpace(in.ConnectionID), strings.TrimSpace(in.CheckID)
	if in.ConnectionID == "" {
		ve.Add("connectionId", CodeRequired, nil, "connectionId is required")
	}
	if in.CheckID == "" {
		ve.Add("checkId", CodeRequired, nil, "checkId is required")
	}
	if !ve.Empty() {
		return nil, nil, ve
	}
	c, err := a.store.GetConnection(ctx, orgID, in.ConnectionID)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, nil, Invalid("connectionId", CodeUnknownReference, in.ConnectionID, "no connection "+in.ConnectionID+" in this organization")
		}
		return nil, nil, err
	}
	for _, ch := range checks {
		if ch.ID == in.CheckID && ch.ProviderSlug == c.ProviderSlug {
			return t, c, nil
		}
	}
	return nil, nil, Invalid("checkId", CodeInvalid, in.CheckID, fmt.Sprintf("check %q of provider %s does not evidence this task", in.CheckID, c.ProviderSlug))
}

// SetTaskCheckDisabled disconnects (disabled true) or reconnects a check
// from a task. A disconnected check's passing results no longer attach
// evidence to the task; the control's evidence is unchanged.
func (a *App) SetTaskCheckDisabled(ctx context.Context, taskID string, in TaskCheckRequest, disabled bool) (*TaskCheckState, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	in.ConnectionID, in.CheckID = strings.TrimSpace(in.ConnectionID), strings.TrimSpace(in.CheckID)
	out := &TaskCheckState{TaskID: taskID, ConnectionID: in.ConnectionID, CheckID: in.CheckID, Disabled: disabled}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if _, _, err := a.taskCheckTarget(ctx, p.OrgID, taskID, in); err != nil {
			return err
		}
		changed, err := a.store.SetTaskCheckDisabled(ctx, p.OrgID, taskID, in.ConnectionID, in.CheckID, disabled, p.ActorID(), a.Now())
		if err != nil || !changed {
			return err
		}
		action := "check_reconnected"
		if disabled {
			action = "check_disconnected"
		}
		return a.record(ctx, Mutation{Action: action, ResourceType: "task", ResourceID: taskID, After: out})
	})
	if err != nil {
		return nil, fmt.Errorf("set check %s of task %s: %w", in.CheckID, taskID, err)
	}
	return out, nil
}

// RunCheckForTask runs one check of a connection for a task, at once, and
// answers the finished run with its totals. A check disconnected from the
// task is a conflict (reconnect it first).
func (a *App) RunCheckForTask(ctx context.Context, taskID string, in TaskCheckRequest) (*TaskCheckRun, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	in.ConnectionID, in.CheckID = strings.TrimSpace(in.ConnectionID), strings.TrimSpace(in.CheckID)
	var run *CheckRun
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		t, c, err := a.taskCheckTarget(ctx, p.OrgID, taskID, in)
		if err != nil {
			return err
		}
		disabled, err := a.store.DisabledTaskChecks(ctx, p.OrgID, t.ID)
		if err != nil {
			return err
		}
		if disabled[taskCheckKey(c.ID, in.CheckID)] {
			return Errorf(ErrConflict, "check %s of this connection is disconnected from the task; reconnect it first", in.CheckID)
		}
		if c.Status == ConnectionDisconnected || c.Status == ConnectionPaused {
			return Errorf(ErrConflict, "the connection is %s", c.Status)
		}
		prov, ok := a.provider(c.ProviderSlug)
		if !ok || prov.Definition().AuthStrategy == ProviderAuthPush {
			return Invalid("connectionId", CodeInvalid, c.ID, "this connection's results are pushed; the appliance has nothing to run")
		}
		run, err = a.queueRun(ctx, p.OrgID, c, in.CheckID, TriggerManual, p.ActorID())
		if err != nil {
			return err
		}
		// Claimed at once: this request runs it, not the worker.
		now := a.Now()
		run.Status, run.StartedAt = RunRunning, &now
		if err := a.store.FinishCheckRun(ctx, p.OrgID, run); err != nil {
			return err
		}
		return a.store.LinkTaskRun(ctx, p.OrgID, t.ID, run.ID)
	})
	if err != nil {
		if errors.Is(err, ErrConflict) && !isPublic(err) {
			return nil, Errorf(ErrConflict, "a run of this connection is already queued or running")
		}
		return nil, fmt.Errorf("run check %s for task %s: %w", in.CheckID, taskID, err)
	}
	if err := a.executeRun(ctx, run); err != nil {
		return nil, err
	}
	done, err := a.store.GetCheckRun(ctx, p.OrgID, run.ID)
	if err != nil {
		return nil, err
	}
	return &TaskCheckRun{CheckRun: done, TaskID: taskID, Success: done.Status == RunSucceeded, AccountsRun: 1,
		TotalPassing: done.Passed, TotalFindings: done.Failed, HadErrors: done.Errored > 0 || done.Status != RunSucceeded}, nil
}

// attachTaskEvidence records a passing check's evidence on the tasks of
// its controls (the newest task of each series), except tasks that
// disconnected the check, replacing the check's previous evidence there.
func (a *App) attachTaskEvidence(ctx context.Context, run *CheckRun, c *Connection, def CheckDefinition, f evidenceFile, controls []string) (int, error) {
	if len(controls) == 0 {
		return 0, nil
	}
	orgID := run.OrganizationID
	disabled, err := a.store.TasksWithCheckDisabled(ctx, orgID, c.ID, def.ID)
	if err != nil {
		return 0, err
	}
	prev, err := a.store.TaskCheckEvidence(ctx, orgID, c.ID, def.ID)
	if err != nil {
		return 0, err
	}
	now := a.Now()
	every := SyncFrequencies[c.SyncFrequency]
	if every == 0 {
		every = 7 * 24 * time.Hour
	}
	exp := now.Add(every + a.integOptions().EvidenceGrace)
	n := 0
	for _, ctl := range controls {
		tasks, err := a.store.ListTasks(ctx, orgID, TaskFilter{ControlID: ctl, Page: Page{Page: 1, PerPage: MaxPerPage}})
		if err != nil {
			return n, err
		}
		newest := map[string]Task{}
		for _, t := range tasks.Items {
			if cur, ok := newest[t.SeriesID]; !ok || t.CreatedAt.After(cur.CreatedAt) || (t.CreatedAt.Equal(cur.CreatedAt) && t.ID > cur.ID) {
				newest[t.SeriesID] = t
			}
		}
		for _, series := range sortedKeys(newest) {
			t := newest[series]
			if disabled[t.ID] || t.Status == TaskNotRelevant {
				continue
			}
			ev := &Evidence{ID: NewID(PrefixEvidence), ControlID: ctl, TaskID: Ptr(t.ID), Filename: f.name,
				ContentType: "text/markdown; charset=utf-8", Size: f.size, SHA256: f.sha, ExpiresAt: &exp,
				UploadedBy: "integration:" + c.ID, UploadedAt: now,
				Description: fmt.Sprintf("Automated check %s passed (%s, run %s)", def.ID, c.Name, run.ID)}
			if err := a.store.CreateEvidence(ctx, orgID, ev); err != nil {
				return n, err
			}
			if old, ok := prev[t.ID]; ok {
				if err := a.store.DeleteEvidence(ctx, orgID, old); err != nil && !errors.Is(err, ErrNotFound) {
					return n, err
				}
			}
			if err := a.store.SetTaskCheckEvidence(ctx, orgID, t.ID, c.ID, def.ID, ev.ID); err != nil {
				return n, err
			}
			if err := a.record(ctx, Mutation{Action: "created", ResourceType: "evidence", ResourceID: ev.ID, After: ev,
				Events: []Event{ResourceEvent("evidence", "created", ev)}}); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// ListTaskCheckRuns lists the runs that evaluated a check of the task
// (limit, default 20, at most 100), newest first, with the results of the
// task's checks and the logs.
func (a *App) ListTaskCheckRuns(ctx context.Context, taskID string, limit int) ([]TaskRun, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = 20
	}
	if limit < 1 || limit > maxTaskRunsLimit {
		return nil, Invalid("limit", CodeInvalid, limit, fmt.Sprintf("limit must be between 1 and %d", maxTaskRunsLimit))
	}
	t, checks, err := a.taskChecks(ctx, p.OrgID, taskID)
	if err != nil {
		return nil, err
	}
	conns, err := a.store.ListConnections(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	slugs := map[string]bool{}
	checkIDs := []string{}
	names := map[string]string{}
	for _, ch := range checks {
		slugs[ch.ProviderSlug] = true
		checkIDs = append(checkIDs, ch.ID)
		names[ch.ProviderSlug] = ch.ProviderName
	}
	sort.Strings(checkIDs)
	var connIDs []string
	connNames := map[string]string{}
	for _, c := range conns {
		if slugs[c.ProviderSlug] {
			connIDs = append(connIDs, c.ID)
			connNames[c.ID] = c.Name
		}
	}
	runs, forTask, err := a.store.TaskCheckRuns(ctx, p.OrgID, t.ID, connIDs, checkIDs, limit)
	if err != nil {
		return nil, err
	}
	out := make([]TaskRun, 0, len(runs))
	for _, r := range runs {
		tr := TaskRun{CheckRun: r, ConnectionName: connNames[r.ConnectionID], Provider: TaskRunProvider{Slug: r.ProviderSlug, Name: names[r.ProviderSlug]},
			ForTask: forTask[r.ID], Results: []CheckResult{}}
		for _, id := range checkIDs {
			if r.CheckID != nil && *r.CheckID != id {
				continue
			}
			res, err := a.store.ListCheckResults(ctx, p.OrgID, CheckResultFilter{RunID: r.ID, CheckID: id, Page: Page{Page: 1, PerPage: MaxPerPage}})
			if err != nil {
				return nil, err
			}
			tr.Results = append(tr.Results, res.Items...)
		}
		out = append(out, tr)
	}
	return out, nil
}

// GetChecksForControl lists the checks that evidence a control (through
// the requirements it serves), each with the organization's connections
// of its provider and their last result: the control page's automated
// checks. Only integration readers (owners, admins, auditors) see them.
func (a *App) GetChecksForControl(ctx context.Context, controlID string) ([]TaskCheck, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	served, err := a.store.OrgRequirementControls(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	reqs := map[string]bool{}
	for req, ctls := range served {
		if containsString(ctls, controlID) {
			reqs[req] = true
		}
	}
	cat, err := a.catalog()
	if err != nil {
		return nil, err
	}
	checks := a.applicableChecks(cat, reqs)
	if err := a.fillTaskCheckConnections(ctx, p.OrgID, "", checks); err != nil {
		return nil, err
	}
	return checks, nil
}
