package app

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// FindingTemplate holds defaults a finding created with its id takes:
// title and content (Shape A) or description (Shape B), type, severity and
// findingClass, each only where the finding's body leaves it out.
type FindingTemplate struct {
	ID           string    `json:"id"`
	Title        string    `json:"title"`
	Content      string    `json:"content"`
	Category     string    `json:"category"`
	Type         *string   `json:"type"`
	Severity     *string   `json:"severity"`
	FindingClass *string   `json:"findingClass"`
	Order        int       `json:"order"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// FindingTemplateInput is the body of POST and PATCH /v1/finding-template.
type FindingTemplateInput struct {
	Title        *string     `json:"title"`
	Content      *string     `json:"content"`
	Category     *string     `json:"category"`
	Type         Opt[string] `json:"type"`
	Severity     Opt[string] `json:"severity"`
	FindingClass Opt[string] `json:"findingClass"`
	Order        *int        `json:"order"`
}

// FindingTemplateStore persists finding templates.
type FindingTemplateStore interface {
	CreateFindingTemplate(ctx context.Context, orgID string, t *FindingTemplate) error
	UpdateFindingTemplate(ctx context.Context, orgID string, t *FindingTemplate) error
	DeleteFindingTemplate(ctx context.Context, orgID, id string) error
	GetFindingTemplate(ctx context.Context, orgID, id string) (*FindingTemplate, error)
	ListFindingTemplates(ctx context.Context, orgID string, p Page) (List[FindingTemplate], error)
}

func (in *FindingTemplateInput) apply(t *FindingTemplate, ve *ValidationError) {
	if in.Title != nil {
		t.Title = strings.TrimSpace(*in.Title)
		if t.Title == "" {
			ve.Add("title", CodeRequired, nil, "title must not be empty")
		}
		maxLen(ve, "title", t.Title, maxFindingTitle)
	}
	if in.Content != nil {
		t.Content = strings.TrimSpace(*in.Content)
		maxLen(ve, "content", t.Content, MaxFindingContent)
	}
	if in.Category != nil {
		t.Category = strings.TrimSpace(*in.Category)
		maxLen(ve, "category", t.Category, 100)
	}
	optEnum := func(dst **string, src Opt[string], field string, allowed []string) {
		if !src.Set {
			return
		}
		*dst = nil
		if !src.Null && strings.TrimSpace(src.Value) != "" {
			s := normEnum(&src.Value)
			oneOf(ve, field, s, allowed)
			*dst = &s
		}
	}
	optEnum(&t.Type, in.Type, "type", FindingTypes)
	optEnum(&t.Severity, in.Severity, "severity", FindingSeverities)
	optEnum(&t.FindingClass, in.FindingClass, "findingClass", FindingClasses)
	if in.Order != nil {
		if *in.Order < 0 || *in.Order > 1_000_000 {
			ve.Add("order", CodeInvalid, *in.Order, "order must be from 0 to 1000000")
		}
		t.Order = *in.Order
	}
}

// CreateFindingTemplate adds a finding template.
func (a *App) CreateFindingTemplate(ctx context.Context, in FindingTemplateInput) (*FindingTemplate, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	t := &FindingTemplate{ID: NewID(PrefixFindingTpl), CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if in.Title == nil || strings.TrimSpace(*in.Title) == "" {
		ve.Add("title", CodeRequired, nil, "title is required")
	}
	in.apply(t, ve)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.CreateFindingTemplate(ctx, p.OrgID, t); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "finding_template", ResourceID: t.ID, After: t})
	})
	if err != nil {
		return nil, fmt.Errorf("create finding template: %w", err)
	}
	return t, nil
}

// UpdateFindingTemplate applies a patch to a template. Findings created
// from it before keep the values they took.
func (a *App) UpdateFindingTemplate(ctx context.Context, id string, in FindingTemplateInput) (*FindingTemplate, error) {
	return updateRecorded(ctx, a, "finding_template", id, a.store.GetFindingTemplate, in.apply,
		func(t *FindingTemplate) *time.Time { return &t.UpdatedAt }, a.store.UpdateFindingTemplate)
}

// DeleteFindingTemplate removes a template; findings created from it keep
// its id as a historical reference.
func (a *App) DeleteFindingTemplate(ctx context.Context, id string) error {
	return deleteRecorded(ctx, a, "finding_template", id, a.store.GetFindingTemplate, a.store.DeleteFindingTemplate)
}

// GetFindingTemplate returns one template.
func (a *App) GetFindingTemplate(ctx context.Context, id string) (*FindingTemplate, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	return a.store.GetFindingTemplate(ctx, p.OrgID, id)
}

// ListFindingTemplates lists templates by order, then creation.
func (a *App) ListFindingTemplates(ctx context.Context, pg Page) (List[FindingTemplate], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[FindingTemplate]{}, err
	}
	return a.store.ListFindingTemplates(ctx, p.OrgID, pg)
}
