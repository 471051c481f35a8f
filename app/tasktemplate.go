package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// PrefixTaskTemplate is the id prefix of evidence-task templates.
const PrefixTaskTemplate = "ttp"

// TaskTemplate is an evidence-task template for one requirement of a
// framework (Framework Editor Task Templates). When the framework is
// enabled, each template becomes a task linked to the control serving the
// requirement.
type TaskTemplate struct {
	ID            string    `json:"id"`
	FrameworkID   string    `json:"frameworkId"`
	RequirementID string    `json:"requirementId"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	Frequency     *string   `json:"frequency"`
	Department    *string   `json:"department"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// TaskTemplateInput is the body of POST and PATCH /v1/framework-editor/task-template.
type TaskTemplateInput struct {
	FrameworkID   *string     `json:"frameworkId"`
	RequirementID *string     `json:"requirementId"`
	Name          *string     `json:"name"`
	Description   *string     `json:"description"`
	Frequency     Opt[string] `json:"frequency"`
	Department    Opt[string] `json:"department"`
}

// TaskTemplateStore persists task templates.
type TaskTemplateStore interface {
	CreateTaskTemplate(ctx context.Context, orgID string, t *TaskTemplate) error
	GetTaskTemplate(ctx context.Context, orgID, id string) (*TaskTemplate, error)
	UpdateTaskTemplate(ctx context.Context, orgID string, t *TaskTemplate) error
	DeleteTaskTemplate(ctx context.Context, orgID, id string) error
	ListTaskTemplates(ctx context.Context, orgID, frameworkID string) ([]TaskTemplate, error)
}

func (in *TaskTemplateInput) apply(t *TaskTemplate, ve *ValidationError) {
	if in.Name != nil {
		t.Name = strings.TrimSpace(*in.Name)
		if t.Name == "" {
			ve.Add("name", CodeRequired, nil, "name must not be empty")
		}
		maxLen(ve, "name", t.Name, 255)
	}
	if in.Description != nil {
		t.Description = strings.TrimSpace(*in.Description)
		maxLen(ve, "description", t.Description, 5000)
	}
	opt := func(dst **string, src Opt[string], field string, allowed []string) {
		if !src.Set {
			return
		}
		*dst = nil
		if !src.Null && src.Value != "" {
			oneOf(ve, field, src.Value, allowed)
			*dst = Ptr(src.Value)
		}
	}
	opt(&t.Frequency, in.Frequency, "frequency", Recurrences)
	opt(&t.Department, in.Department, "department", Departments)
}

// ListTaskTemplates lists the organization's templates, optionally of one framework.
func (a *App) ListTaskTemplates(ctx context.Context, frameworkID string) ([]TaskTemplate, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if frameworkID != "" {
		fw, _, err := a.resolveFramework(ctx, p.OrgID, frameworkID)
		if errors.Is(err, ErrNotFound) {
			return nil, Invalid("frameworkId", CodeUnknownReference, frameworkID, "frameworkId must name a framework")
		}
		if err != nil {
			return nil, err
		}
		frameworkID = fw.ID
	}
	return a.store.ListTaskTemplates(ctx, p.OrgID, frameworkID)
}

// GetTaskTemplate returns one template.
func (a *App) GetTaskTemplate(ctx context.Context, id string) (*TaskTemplate, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	return a.store.GetTaskTemplate(ctx, p.OrgID, id)
}

// CreateTaskTemplate adds an evidence-task template for a requirement. When
// the framework is already enabled, the task is created at once.
func (a *App) CreateTaskTemplate(ctx context.Context, in TaskTemplateInput) (*TaskTemplate, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	t := &TaskTemplate{ID: NewID(PrefixTaskTemplate), CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		ve.Add("name", CodeRequired, nil, "name is required")
	}
	in.apply(t, ve)
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		var fw *Framework
		if in.FrameworkID == nil || strings.TrimSpace(*in.FrameworkID) == "" {
			ve.Add("frameworkId", CodeRequired, nil, "frameworkId is required")
		} else {
			f, _, err := a.resolveFramework(ctx, p.OrgID, strings.TrimSpace(*in.FrameworkID))
			if errors.Is(err, ErrNotFound) {
				ve.Add("frameworkId", CodeUnknownReference, *in.FrameworkID, "frameworkId must name a framework")
			} else if err != nil {
				return err
			} else {
				fw = f
				t.FrameworkID = f.ID
			}
		}
		if in.RequirementID == nil || strings.TrimSpace(*in.RequirementID) == "" {
			ve.Add("requirementId", CodeRequired, nil, "requirementId is required")
		} else if fw != nil {
			r, err := a.getRequirement(ctx, p.OrgID, fw.ID, strings.TrimSpace(*in.RequirementID))
			switch {
			case errors.Is(err, ErrNotFound):
				ve.Add("requirementId", CodeUnknownReference, *in.RequirementID, "requirementId must name a requirement of the framework")
			case err != nil:
				return err
			case !r.Assessable:
				ve.Add("requirementId", CodeInvalid, *in.RequirementID, "requirementId must name an assessable requirement, not a heading")
			default:
				t.RequirementID = r.ID
			}
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.CreateTaskTemplate(ctx, p.OrgID, t); err != nil {
			return err
		}
		if err := a.record(ctx, Mutation{Action: "created", ResourceType: "task_template", ResourceID: t.ID, After: t}); err != nil {
			return err
		}
		if fw.Enabled {
			served, err := a.store.OrgRequirementControls(ctx, p.OrgID)
			if err != nil {
				return err
			}
			_, err = a.instantiateTemplates(ctx, p.OrgID, fw.ID, t.ID, served)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create task template: %w", err)
	}
	return t, nil
}

// UpdateTaskTemplate changes a template; tasks already made from it stay.
func (a *App) UpdateTaskTemplate(ctx context.Context, id string, in TaskTemplateInput) (*TaskTemplate, error) {
	return updateRecorded(ctx, a, "task_template", id, a.store.GetTaskTemplate,
		func(t *TaskTemplate, ve *ValidationError) {
			if in.FrameworkID != nil && *in.FrameworkID != t.FrameworkID {
				ve.Add("frameworkId", CodeInvalid, *in.FrameworkID, "frameworkId cannot change; create another template")
			}
			if in.RequirementID != nil && *in.RequirementID != t.RequirementID {
				ve.Add("requirementId", CodeInvalid, *in.RequirementID, "requirementId cannot change; create another template")
			}
			in.apply(t, ve)
		},
		func(t *TaskTemplate) *time.Time { return &t.UpdatedAt }, a.store.UpdateTaskTemplate)
}

// DeleteTaskTemplate removes a template; tasks made from it stay.
func (a *App) DeleteTaskTemplate(ctx context.Context, id string) error {
	return deleteRecorded(ctx, a, "task_template", id, a.store.GetTaskTemplate, a.store.DeleteTaskTemplate)
}

// instantiateTemplates creates a task for each template of the framework
// (or the one template named) that has none yet, linked to the control
// serving the template's requirement.
func (a *App) instantiateTemplates(ctx context.Context, orgID, frameworkID, templateID string, served map[string][]string) (int, error) {
	tpls, err := a.store.ListTaskTemplates(ctx, orgID, frameworkID)
	if err != nil {
		return 0, err
	}
	now := a.Now()
	n := 0
	for _, tp := range tpls {
		if templateID != "" && tp.ID != templateID {
			continue
		}
		have, err := a.store.TaskIDsForTemplate(ctx, orgID, tp.ID)
		if err != nil {
			return n, err
		}
		ctls := served[tp.RequirementID]
		if len(have) > 0 || len(ctls) == 0 {
			continue
		}
		t := &Task{ID: NewID(PrefixTask), Title: tp.Name, Description: tp.Description, Status: TaskTodo,
			ControlID: Ptr(ctls[0]), Recurrence: tp.Frequency, TemplateID: Ptr(tp.ID), Department: tp.Department,
			CreatedAt: now, UpdatedAt: now}
		t.SeriesID = t.ID
		if err := a.store.CreateTask(ctx, orgID, t); err != nil {
			return n, err
		}
		if err := a.record(ctx, Mutation{Action: "created", ResourceType: "task", ResourceID: t.ID, After: t,
			Events: []Event{ResourceEvent("task", "created", t)}}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
