package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Task statuses (reference: TaskStatus).
const (
	TaskTodo        = "todo"
	TaskInProgress  = "in_progress"
	TaskInReview    = "in_review"
	TaskDone        = "done"
	TaskNotRelevant = "not_relevant"
	TaskFailed      = "failed"
)

// TaskStatuses lists the task statuses.
var TaskStatuses = []string{TaskTodo, TaskInProgress, TaskInReview, TaskDone, TaskNotRelevant, TaskFailed}

// Recurrences are the task recurrence intervals.
var Recurrences = []string{"monthly", "quarterly", "yearly"}

// Departments are the task departments (reference: Departments).
var Departments = []string{"none", "admin", "gov", "hr", "it", "itsm", "qms"}

// maxBulk bounds the ids of one bulk operation.
const maxBulk = 500

// Task is a unit of work, usually an evidence task linked to a control.
// Completing a recurring task schedules the next one in the same series.
type Task struct {
	ID                       string     `json:"id"`
	Title                    string     `json:"title"`
	Description              string     `json:"description"`
	Status                   string     `json:"status"`
	AssigneeID               *string    `json:"assigneeId"`
	ControlID                *string    `json:"controlId"`
	DueDate                  *string    `json:"dueDate"`
	Recurrence               *string    `json:"recurrence"`
	SeriesID                 string     `json:"seriesId"`
	TemplateID               *string    `json:"templateId"`
	Department               *string    `json:"department"`
	NotRelevantJustification *string    `json:"notRelevantJustification"`
	CompletedAt              *time.Time `json:"completedAt"`
	CreatedAt                time.Time  `json:"createdAt"`
	UpdatedAt                time.Time  `json:"updatedAt"`
}

// TaskInput is the body of POST and PATCH /v1/tasks.
type TaskInput struct {
	Title                    *string     `json:"title"`
	Description              *string     `json:"description"`
	Status                   *string     `json:"status"`
	AssigneeID               Opt[string] `json:"assigneeId"`
	ControlID                Opt[string] `json:"controlId"`
	DueDate                  Opt[string] `json:"dueDate"`
	Recurrence               Opt[string] `json:"recurrence"`
	Frequency                Opt[string] `json:"frequency"`
	Department               Opt[string] `json:"department"`
	NotRelevantJustification Opt[string] `json:"notRelevantJustification"`
}

// TaskFilter holds the task list's filters; they combine with AND.
type TaskFilter struct {
	AssigneeID string
	Status     string
	ControlID  string
	DueFrom    string // YYYY-MM-DD, inclusive
	DueTo      string // YYYY-MM-DD, inclusive
	Page       Page
}

// TaskStore persists tasks.
type TaskStore interface {
	CreateTask(ctx context.Context, orgID string, t *Task) error
	GetTask(ctx context.Context, orgID, id string) (*Task, error)
	UpdateTask(ctx context.Context, orgID string, t *Task) error
	DeleteTask(ctx context.Context, orgID, id string) error
	ListTasks(ctx context.Context, orgID string, f TaskFilter) (List[Task], error)
	// LatestDoneTasks returns, per task series of the control, the most
	// recently completed task.
	LatestDoneTasks(ctx context.Context, orgID, controlID string) ([]string, error)
	// ValidTaskEvidence counts the task's evidence that is not expired at now.
	ValidTaskEvidence(ctx context.Context, orgID, taskID string, now time.Time) (int, error)
	TaskIDsForTemplate(ctx context.Context, orgID, templateID string) ([]string, error)
	TaskIDsByAssignee(ctx context.Context, orgID, assigneeID string, openOnly bool) ([]string, error)
}

// canWorkOnTask: managers work on any task; employees and contractors on
// tasks assigned to them (others are invisible to them); auditors on none.
func (a *App) canWorkOnTask(p *Principal, t *Task) error {
	if p.Can(CapManage) {
		return nil
	}
	assigned := t.AssigneeID != nil && *t.AssigneeID == p.UserID && p.UserID != ""
	if p.SeesOnlyAssigned() && !assigned {
		return ErrNotFound
	}
	if assigned && p.Can(CapSelfService) {
		return nil
	}
	return Errorf(ErrForbidden, "the %s role may not do this", p.Role)
}

func (in *TaskInput) apply(ctx context.Context, a *App, orgID string, t *Task, ve *ValidationError) error {
	if in.Title != nil {
		t.Title = strings.TrimSpace(*in.Title)
		if t.Title == "" {
			ve.Add("title", CodeRequired, nil, "title must not be empty")
		}
		maxLen(ve, "title", t.Title, 500)
	}
	if in.Description != nil {
		t.Description = strings.TrimSpace(*in.Description)
		maxLen(ve, "description", t.Description, 20000)
	}
	if in.Status != nil {
		if *in.Status == "" {
			ve.Add("status", CodeInvalidEnum, "", "status must be one of "+strings.Join(TaskStatuses, ", "))
		}
		oneOf(ve, "status", *in.Status, TaskStatuses)
		t.Status = *in.Status
	}
	optEnum := func(dst **string, src Opt[string], field string, allowed []string) {
		if !src.Set {
			return
		}
		*dst = nil
		if !src.Null && src.Value != "" {
			oneOf(ve, field, src.Value, allowed)
			*dst = Ptr(src.Value)
		}
	}
	if in.Recurrence.Set {
		optEnum(&t.Recurrence, in.Recurrence, "recurrence", Recurrences)
	} else {
		optEnum(&t.Recurrence, in.Frequency, "frequency", Recurrences)
	}
	optEnum(&t.Department, in.Department, "department", Departments)
	if in.NotRelevantJustification.Set {
		t.NotRelevantJustification = nil
		if !in.NotRelevantJustification.Null && strings.TrimSpace(in.NotRelevantJustification.Value) != "" {
			t.NotRelevantJustification = Ptr(strings.TrimSpace(in.NotRelevantJustification.Value))
			maxLen(ve, "notRelevantJustification", *t.NotRelevantJustification, 5000)
		}
	}
	if in.DueDate.Set {
		t.DueDate = nil
		if !in.DueDate.Null && in.DueDate.Value != "" {
			d, ok := ParseDate(in.DueDate.Value)
			if !ok {
				ve.Add("dueDate", CodeInvalid, in.DueDate.Value, "dueDate must be a date (YYYY-MM-DD)")
			} else {
				t.DueDate = Ptr(d.Format("2006-01-02"))
			}
		}
	}
	if in.AssigneeID.Set {
		t.AssigneeID = nil
		if !in.AssigneeID.Null && strings.TrimSpace(in.AssigneeID.Value) != "" {
			t.AssigneeID = Ptr(strings.TrimSpace(in.AssigneeID.Value))
			if err := a.checkPerson(ctx, orgID, "assigneeId", t.AssigneeID, ve); err != nil {
				return err
			}
		}
	}
	if in.ControlID.Set {
		t.ControlID = nil
		if !in.ControlID.Null && strings.TrimSpace(in.ControlID.Value) != "" {
			id := strings.TrimSpace(in.ControlID.Value)
			if _, err := a.store.GetControl(ctx, orgID, id); errors.Is(err, ErrNotFound) {
				ve.Add("controlId", CodeUnknownReference, id, "controlId must be a control of this organization")
			} else if err != nil {
				return err
			}
			t.ControlID = &id
		}
	}
	return nil
}

// ListTasks lists tasks matching every filter; employees and contractors
// see only tasks assigned to them.
func (a *App) ListTasks(ctx context.Context, f TaskFilter) (List[Task], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Task]{}, err
	}
	ve := NewValidationError()
	oneOf(ve, "status", f.Status, TaskStatuses)
	for field, v := range map[string]*string{"dueFrom": &f.DueFrom, "dueTo": &f.DueTo} {
		if *v == "" {
			continue
		}
		d, err := time.Parse("2006-01-02", *v)
		if err != nil {
			ve.Add(field, CodeInvalid, *v, field+" must be a date (YYYY-MM-DD)")
			continue
		}
		*v = d.Format("2006-01-02")
	}
	if err := ve.Err(); err != nil {
		return List[Task]{}, err
	}
	if p.SeesOnlyAssigned() {
		if p.UserID == "" || (f.AssigneeID != "" && f.AssigneeID != p.UserID) {
			return List[Task]{Items: []Task{}}, nil
		}
		f.AssigneeID = p.UserID
	}
	return a.store.ListTasks(ctx, p.OrgID, f)
}

// GetTask returns one task.
func (a *App) GetTask(ctx context.Context, id string) (*Task, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	t, err := a.store.GetTask(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() && (t.AssigneeID == nil || *t.AssigneeID != p.UserID) {
		return nil, ErrNotFound
	}
	return t, nil
}

// CreateTask adds a task.
func (a *App) CreateTask(ctx context.Context, in TaskInput) (*Task, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	t := &Task{ID: NewID(PrefixTask), Status: TaskTodo, CreatedAt: now, UpdatedAt: now}
	t.SeriesID = t.ID
	ve := NewValidationError()
	if in.Title == nil || strings.TrimSpace(*in.Title) == "" {
		ve.Add("title", CodeRequired, nil, "title is required")
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := in.apply(ctx, a, p.OrgID, t, ve); err != nil {
			return err
		}
		if t.Status == TaskDone {
			ve.Add("status", CodeInvalid, t.Status, "create the task, then complete it")
		}
		if t.Status == TaskNotRelevant && t.NotRelevantJustification == nil {
			ve.Add("notRelevantJustification", CodeRequired, nil, "notRelevantJustification is required for a not relevant task")
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.CreateTask(ctx, p.OrgID, t); err != nil {
			return err
		}
		if err := a.record(ctx, Mutation{Action: "created", ResourceType: "task", ResourceID: t.ID, After: t,
			Events: []Event{ResourceEvent("task", "created", t)}}); err != nil {
			return err
		}
		if t.ControlID != nil && t.Status == TaskInProgress {
			return a.markInProgress(ctx, p.OrgID, *t.ControlID)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create task: %w", err)
	}
	return t, nil
}

// UpdateTask applies a patch. Employees and contractors may change only the
// status of tasks assigned to them. Moving a task to done completes it.
func (a *App) UpdateTask(ctx context.Context, id string, in TaskInput) (*Task, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var out *Task
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		var err error
		out, err = a.updateTask(ctx, p, id, in)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update task %s: %w", id, err)
	}
	return out, nil
}

func (a *App) updateTask(ctx context.Context, p *Principal, id string, in TaskInput) (*Task, error) {
	before, err := a.store.GetTask(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if err := a.canWorkOnTask(p, before); err != nil {
		return nil, err
	}
	if !p.Can(CapManage) {
		only := TaskInput{Status: in.Status, NotRelevantJustification: in.NotRelevantJustification}
		if in.Title != nil || in.Description != nil || in.AssigneeID.Set || in.ControlID.Set || in.DueDate.Set ||
			in.Recurrence.Set || in.Frequency.Set || in.Department.Set {
			return nil, Errorf(ErrForbidden, "the %s role may change only the status of tasks assigned to it", p.Role)
		}
		in = only
	}
	t := *before
	ve := NewValidationError()
	if err := in.apply(ctx, a, p.OrgID, &t, ve); err != nil {
		return nil, err
	}
	if t.Status == TaskNotRelevant && t.NotRelevantJustification == nil {
		ve.Add("notRelevantJustification", CodeRequired, nil, "notRelevantJustification is required for a not relevant task")
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	now := a.Now()
	t.UpdatedAt = now
	completing := t.Status == TaskDone && before.Status != TaskDone
	if completing {
		t.CompletedAt = &now
	} else if t.Status != TaskDone {
		t.CompletedAt = nil
	}
	if err := a.store.UpdateTask(ctx, p.OrgID, &t); err != nil {
		return nil, err
	}
	events := []Event{ResourceEvent("task", "updated", &t)}
	if completing {
		events = append(events, ResourceEvent("task", "completed", &t))
	}
	if err := a.record(ctx, Mutation{Action: "updated", ResourceType: "task", ResourceID: id, Before: before, After: &t, Events: events}); err != nil {
		return nil, err
	}
	if completing {
		if err := a.scheduleNext(ctx, p.OrgID, &t, now); err != nil {
			return nil, err
		}
	}
	if t.ControlID != nil && (t.Status == TaskInProgress || t.Status == TaskInReview || t.Status == TaskDone) {
		if err := a.markInProgress(ctx, p.OrgID, *t.ControlID); err != nil {
			return nil, err
		}
	}
	for _, c := range controlsOf(before, &t) {
		if err := a.reevaluateControl(ctx, p.OrgID, c); err != nil {
			return nil, err
		}
	}
	return &t, nil
}

func controlsOf(ts ...*Task) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if t.ControlID != nil && !seen[*t.ControlID] {
			seen[*t.ControlID] = true
			out = append(out, *t.ControlID)
		}
	}
	return out
}

// CompleteTask marks a task done: a recurring task schedules its next
// occurrence, and the linked control is re-evaluated (it becomes
// implemented when all its required evidence is collected and unexpired).
func (a *App) CompleteTask(ctx context.Context, id string) (*Task, error) {
	return a.UpdateTask(ctx, id, TaskInput{Status: Ptr(TaskDone)})
}

// addInterval moves a date by the recurrence, clamping to the month's end
// (31 January + 1 month = 28/29 February).
func addInterval(d time.Time, recurrence string) time.Time {
	months := map[string]int{"monthly": 1, "quarterly": 3, "yearly": 12}[recurrence]
	y, m, day := d.Date()
	first := time.Date(y, m+time.Month(months), 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	if day > last {
		day = last
	}
	return time.Date(first.Year(), first.Month(), day, 0, 0, 0, 0, time.UTC)
}

// scheduleNext creates the next occurrence of a completed recurring task.
func (a *App) scheduleNext(ctx context.Context, orgID string, t *Task, now time.Time) error {
	if t.Recurrence == nil {
		return nil
	}
	base := now
	if t.DueDate != nil {
		if d, ok := ParseDate(*t.DueDate); ok {
			base = d
		}
	}
	next := addInterval(base, *t.Recurrence).Format("2006-01-02")
	n := &Task{ID: NewID(PrefixTask), Title: t.Title, Description: t.Description, Status: TaskTodo, AssigneeID: t.AssigneeID,
		ControlID: t.ControlID, DueDate: &next, Recurrence: t.Recurrence, SeriesID: t.SeriesID, TemplateID: t.TemplateID,
		Department: t.Department, CreatedAt: now, UpdatedAt: now}
	if err := a.store.CreateTask(ctx, orgID, n); err != nil {
		return err
	}
	return a.record(ctx, Mutation{Action: "scheduled", ResourceType: "task", ResourceID: n.ID, After: n,
		Events: []Event{ResourceEvent("task", "created", n)}})
}

// DeleteTask removes a task; its evidence stays on the control.
func (a *App) DeleteTask(ctx context.Context, id string) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	if err := p.Require(CapManage); err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		t, err := a.store.GetTask(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if err := a.store.DeleteTask(ctx, p.OrgID, id); err != nil {
			return err
		}
		if err := a.record(ctx, Mutation{Action: "deleted", ResourceType: "task", ResourceID: id, Before: t,
			Events: []Event{ResourceEvent("task", "deleted", map[string]any{"id": id})}}); err != nil {
			return err
		}
		if t.ControlID != nil {
			return a.reevaluateControl(ctx, p.OrgID, *t.ControlID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete task %s: %w", id, err)
	}
	return nil
}

// BulkTaskStatus is the body of PATCH /v1/tasks/bulk.
type BulkTaskStatus struct {
	TaskIDs                  []string `json:"taskIds"`
	Status                   *string  `json:"status"`
	NotRelevantJustification *string  `json:"notRelevantJustification"`
}

// BulkTaskAssignee is the body of PATCH /v1/tasks/bulk/assignee.
type BulkTaskAssignee struct {
	TaskIDs    []string    `json:"taskIds"`
	AssigneeID Opt[string] `json:"assigneeId"`
}

func checkBulkIDs(ids []string, ve *ValidationError) []string {
	ids = dedupe(ids)
	if len(ids) == 0 {
		ve.Add("taskIds", CodeRequired, nil, "taskIds must list at least one task")
	}
	if len(ids) > maxBulk {
		ve.Add("taskIds", CodeTooLong, len(ids), fmt.Sprintf("taskIds may list at most %d tasks", maxBulk))
	}
	return ids
}

// BulkUpdateTaskStatus sets the status of many tasks at once, all or none.
// Tasks moved to done are completed (recurrence, control re-evaluation).
func (a *App) BulkUpdateTaskStatus(ctx context.Context, in BulkTaskStatus) (int, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return 0, err
	}
	ve := NewValidationError()
	ids := checkBulkIDs(in.TaskIDs, ve)
	if in.Status == nil || *in.Status == "" {
		ve.Add("status", CodeRequired, nil, "status is required")
	} else {
		oneOf(ve, "status", *in.Status, TaskStatuses)
	}
	if err := ve.Err(); err != nil {
		return 0, err
	}
	patch := TaskInput{Status: in.Status}
	if in.NotRelevantJustification != nil {
		patch.NotRelevantJustification = Opt[string]{Set: true, Value: *in.NotRelevantJustification}
	}
	n := 0
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		for _, id := range ids {
			t, err := a.store.GetTask(ctx, p.OrgID, id)
			if errors.Is(err, ErrNotFound) {
				return Invalid("taskIds", CodeUnknownReference, id, "taskIds must name tasks of this organization")
			}
			if err != nil {
				return err
			}
			if t.Status == *in.Status {
				continue
			}
			if _, err := a.updateTask(ctx, p, id, patch); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("bulk update tasks: %w", err)
	}
	return n, nil
}

// BulkUpdateTaskAssignee assigns many tasks to one person (or nobody).
func (a *App) BulkUpdateTaskAssignee(ctx context.Context, in BulkTaskAssignee) (int, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return 0, err
	}
	ve := NewValidationError()
	ids := checkBulkIDs(in.TaskIDs, ve)
	if !in.AssigneeID.Set {
		ve.Add("assigneeId", CodeRequired, nil, "assigneeId is required (null to unassign)")
	}
	if err := ve.Err(); err != nil {
		return 0, err
	}
	n := 0
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		for _, id := range ids {
			if _, err := a.store.GetTask(ctx, p.OrgID, id); errors.Is(err, ErrNotFound) {
				return Invalid("taskIds", CodeUnknownReference, id, "taskIds must name tasks of this organization")
			} else if err != nil {
				return err
			}
			if _, err := a.updateTask(ctx, p, id, TaskInput{AssigneeID: in.AssigneeID}); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("bulk assign tasks: %w", err)
	}
	return n, nil
}

// TaskReassignment is the body of POST /v1/tasks/reassign.
type TaskReassignment struct {
	FromAssigneeID *string `json:"fromAssigneeId"`
	ToAssigneeID   *string `json:"toAssigneeId"`
	IncludeDone    bool    `json:"includeCompleted"`
}

// ReassignTasks hands every open task (or every task) of one person to
// another, e.g. when someone leaves.
func (a *App) ReassignTasks(ctx context.Context, in TaskReassignment) (int, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return 0, err
	}
	ve := NewValidationError()
	from, to := "", ""
	if in.FromAssigneeID == nil || strings.TrimSpace(*in.FromAssigneeID) == "" {
		ve.Add("fromAssigneeId", CodeRequired, nil, "fromAssigneeId is required")
	} else {
		from = strings.TrimSpace(*in.FromAssigneeID)
	}
	if in.ToAssigneeID == nil || strings.TrimSpace(*in.ToAssigneeID) == "" {
		ve.Add("toAssigneeId", CodeRequired, nil, "toAssigneeId is required")
	} else {
		to = strings.TrimSpace(*in.ToAssigneeID)
	}
	n := 0
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if from != "" {
			if err := a.checkPerson(ctx, p.OrgID, "fromAssigneeId", &from, ve); err != nil {
				return err
			}
		}
		if to != "" {
			if err := a.checkPerson(ctx, p.OrgID, "toAssigneeId", &to, ve); err != nil {
				return err
			}
		}
		if err := ve.Err(); err != nil {
			return err
		}
		ids, err := a.store.TaskIDsByAssignee(ctx, p.OrgID, from, !in.IncludeDone)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := a.updateTask(ctx, p, id, TaskInput{AssigneeID: Opt[string]{Set: true, Value: to}}); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reassign tasks: %w", err)
	}
	return n, nil
}
