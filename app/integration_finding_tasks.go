package app

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Findings bound to tasks: a finding a failing check opens (or keeps open)
// is linked to the tasks the check is mapped to: the newest task of each
// series of the controls the check evidences, unless the task disconnected
// the check or is not relevant. The links live in their own table; the
// finding itself is unchanged. Disconnecting a check from a task stops new
// links; the links already made stay (they are the task's history).

// maxTaskFindings bounds the findings listed for one task.
const maxTaskFindings = 500

// FindingTaskLink is one finding linked to a task by a check.
type FindingTaskLink struct {
	FindingID    string    `json:"findingId"`
	TaskID       string    `json:"taskId"`
	ConnectionID string    `json:"connectionId"`
	CheckID      string    `json:"checkId"`
	LinkedAt     time.Time `json:"linkedAt"`
}

// TaskFinding is a finding of a task's checks, with the check that opened
// it.
type TaskFinding struct {
	Finding
	ConnectionID string    `json:"connectionId"`
	CheckID      string    `json:"checkId"`
	LinkedAt     time.Time `json:"linkedAt"`
}

// TaskFindings answers GET /v1/integrations/tasks/{taskId}/findings.
type TaskFindings struct {
	TaskID   string        `json:"taskId"`
	Findings []TaskFinding `json:"findings"`
}

// FindingTaskStore keeps the links between findings and tasks.
type FindingTaskStore interface {
	// LinkFindingTask links a finding to a task; an existing link is kept.
	LinkFindingTask(ctx context.Context, orgID string, l FindingTaskLink) error
	// TaskFindingLinks lists a task's links, newest first.
	TaskFindingLinks(ctx context.Context, orgID, taskID string, limit int) ([]FindingTaskLink, error)
	// FindingTaskIDs lists the tasks a finding is linked to.
	FindingTaskIDs(ctx context.Context, orgID, findingID string) ([]string, error)
}

// checkTasks returns the tasks a check is mapped to through its controls:
// the newest task of each series, skipping tasks that disconnected the
// check and tasks that are not relevant.
func (a *App) checkTasks(ctx context.Context, orgID, connectionID, checkID string, controls []string) ([]string, error) {
	if len(controls) == 0 {
		return nil, nil
	}
	disabled, err := a.store.TasksWithCheckDisabled(ctx, orgID, connectionID, checkID)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, ctl := range controls {
		tasks, err := a.store.ListTasks(ctx, orgID, TaskFilter{ControlID: ctl, Page: Page{Page: 1, PerPage: MaxPerPage}})
		if err != nil {
			return nil, err
		}
		newest := map[string]Task{}
		for _, t := range tasks.Items {
			if cur, ok := newest[t.SeriesID]; !ok || t.CreatedAt.After(cur.CreatedAt) || (t.CreatedAt.Equal(cur.CreatedAt) && t.ID > cur.ID) {
				newest[t.SeriesID] = t
			}
		}
		for _, series := range sortedKeys(newest) {
			t := newest[series]
			if disabled[t.ID] || t.Status == TaskNotRelevant || seen[t.ID] {
				continue
			}
			seen[t.ID] = true
			out = append(out, t.ID)
		}
	}
	return out, nil
}

// findingTaskLinker links the findings of one run's failing results to
// their check's tasks, computing each check's tasks once.
type findingTaskLinker struct {
	a      *App
	orgID  string
	connID string
	tasks  map[string][]string
}

func (a *App) newFindingTaskLinker(orgID, connID string) *findingTaskLinker {
	return &findingTaskLinker{a: a, orgID: orgID, connID: connID, tasks: map[string][]string{}}
}

// link binds a failing result's finding to the check's tasks.
func (l *findingTaskLinker) link(ctx context.Context, checkID string, controls []string, findingID string) error {
	ids, ok := l.tasks[checkID]
	if !ok {
		var err error
		if ids, err = l.a.checkTasks(ctx, l.orgID, l.connID, checkID, controls); err != nil {
			return fmt.Errorf("tasks of check %s: %w", checkID, err)
		}
		l.tasks[checkID] = ids
	}
	now := l.a.Now()
	for _, t := range ids {
		if err := l.a.store.LinkFindingTask(ctx, l.orgID, FindingTaskLink{FindingID: findingID, TaskID: t, ConnectionID: l.connID,
			CheckID: checkID, LinkedAt: now}); err != nil {
			return err
		}
	}
	return nil
}

// ListTaskFindings lists the findings the task's checks opened, newest
// link first. status narrows them: "open" (open or in review), "all"
// (default), or one finding status.
func (a *App) ListTaskFindings(ctx context.Context, taskID, status string) (*TaskFindings, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := a.store.GetTask(ctx, p.OrgID, taskID); err != nil {
		return nil, err
	}
	switch status {
	case "", "all", "open":
	default:
		if !containsString(FindingStatuses, status) {
			return nil, Invalid("status", CodeInvalidEnum, status, "status must be open, all or a finding status")
		}
	}
	links, err := a.store.TaskFindingLinks(ctx, p.OrgID, taskID, maxTaskFindings)
	if err != nil {
		return nil, fmt.Errorf("findings of task %s: %w", taskID, err)
	}
	out := &TaskFindings{TaskID: taskID, Findings: []TaskFinding{}}
	for _, l := range links {
		f, err := a.store.GetFinding(ctx, p.OrgID, l.FindingID)
		if errors.Is(err, ErrNotFound) {
			continue // deleted by a person
		}
		if err != nil {
			return nil, err
		}
		switch {
		case status == "open" && f.Status != FindingOpen && f.Status != FindingInReview:
			continue
		case status != "" && status != "all" && status != "open" && f.Status != status:
			continue
		}
		out.Findings = append(out.Findings, TaskFinding{Finding: *f, ConnectionID: l.ConnectionID, CheckID: l.CheckID, LinkedAt: l.LinkedAt})
	}
	return out, nil
}
