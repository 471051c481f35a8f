package app

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Finding enumerations (spec: Finding; DECISIONS: contradictions table).
var (
	FindingTypes      = []string{"soc2", "iso27001", "dora", "gdpr", "hipaa", "pci_dss", "nis2"}
	FindingScopes     = []string{"people", "people_tasks", "people_devices", "people_chart", "security"}
	FindingSeverities = []string{"critical", "high", "medium", "low", "informational"}
	FindingClasses    = []string{"major_nonconformity", "minor_nonconformity", "observation", "opportunity_for_improvement", "not_applicable"}
	FindingStatuses   = []string{FindingOpen, FindingInReview, FindingResolved, FindingClosed}
)

// Finding statuses.
const (
	FindingOpen     = "open"
	FindingInReview = "in_review"
	FindingResolved = "resolved"
	FindingClosed   = "closed"
)

// Finding events (DECISIONS: finding events).
const (
	EventFindingCreated         = "finding.created"
	EventFindingSeverityChanged = "finding.severity.changed"
)

// Finding text limits.
const (
	MaxFindingContent      = 5000
	maxFindingTitle        = 500
	maxFindingSource       = 255
	maxFindingRevisionNote = 2000
)

// SeverityForScore maps a 0-10 scanner score (CVSS) to a severity:
// >= 9 critical, >= 7 high, >= 4 medium, > 0 low, 0 informational.
func SeverityForScore(s float64) string {
	switch {
	case s >= 9:
		return "critical"
	case s >= 7:
		return "high"
	case s >= 4:
		return "medium"
	case s > 0:
		return "low"
	}
	return "informational"
}

// Finding is an audit or scanner finding. It carries every field of both
// documented input shapes.
type Finding struct {
	ID               string     `json:"id"`
	Type             string     `json:"type"`
	Status           string     `json:"status"`
	Severity         string     `json:"severity"`
	FindingClass     *string    `json:"findingClass"`
	Content          string     `json:"content"`
	Title            *string    `json:"title"`
	Description      *string    `json:"description"`
	Source           *string    `json:"source"`
	TaskID           *string    `json:"taskId"`
	Scope            *string    `json:"scope"`
	TemplateID       *string    `json:"templateId"`
	CVSS             *float64   `json:"cvss"`
	DueDate          *time.Time `json:"dueDate"`
	LinkedControlIDs []string   `json:"linkedControlIds"`
	RevisionNote     *string    `json:"revisionNote"`
	CreatedByType    string     `json:"createdByType"`
	CreatedByID      string     `json:"createdById"`
	ClosedAt         *time.Time `json:"closedAt"`
	CreatedAt        time.Time  `json:"createdAt"`
	UpdatedAt        time.Time  `json:"updatedAt"`
}

// FindingCreate is the body of POST /v1/findings in either shape. A body
// with content follows Shape A (exactly one of taskId or scope); a body with
// title and no content follows Shape B (title required, content stored as
// title + description). cvss (alias score) is a 0-10 scanner score that
// sets the severity unless severity is given.
type FindingCreate struct {
	Type             *string  `json:"type"`
	Content          *string  `json:"content"`
	TaskID           *string  `json:"taskId"`
	Scope            *string  `json:"scope"`
	Severity         *string  `json:"severity"`
	FindingClass     *string  `json:"findingClass"`
	TemplateID       *string  `json:"templateId"`
	DueDate          *string  `json:"dueDate"`
	Title            *string  `json:"title"`
	Source           *string  `json:"source"`
	Description      *string  `json:"description"`
	LinkedControlIDs []string `json:"linkedControlIds"`
	CVSS             *float64 `json:"cvss"`
	Score            *float64 `json:"score"`
}

// FindingPatch is the body of PATCH /v1/findings/{id}.
type FindingPatch struct {
	Status           *string       `json:"status"`
	Type             *string       `json:"type"`
	Severity         *string       `json:"severity"`
	CVSS             Opt[float64]  `json:"cvss"`
	Score            Opt[float64]  `json:"score"`
	FindingClass     Opt[string]   `json:"findingClass"`
	Content          *string       `json:"content"`
	Title            Opt[string]   `json:"title"`
	Description      Opt[string]   `json:"description"`
	Source           Opt[string]   `json:"source"`
	DueDate          Opt[string]   `json:"dueDate"`
	LinkedControlIDs Opt[[]string] `json:"linkedControlIds"`
	RevisionNote     Opt[string]   `json:"revisionNote"`
}

// FindingFilter holds the finding list's filters; they combine with AND.
type FindingFilter struct {
	Status       string
	Severity     string
	Type         string
	TaskID       string
	ControlID    string
	Scope        string
	FindingClass string
	// TaskAssignee narrows to findings on tasks assigned to this person.
	TaskAssignee string
	Page         Page
}

// OpenFinding is an open finding (status open or in_review) linked to a
// control, for framework scoring and the control's view.
type OpenFinding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Status   string `json:"status"`
	// Title is the finding's title, or the start of its content.
	Title string `json:"title"`
	// Blocking tells whether the finding keeps the control from counting
	// as met (findingBlocks).
	Blocking bool `json:"blocking"`
}

// FindingStore persists findings with their linked controls.
type FindingStore interface {
	CreateFinding(ctx context.Context, orgID string, f *Finding) error
	UpdateFinding(ctx context.Context, orgID string, f *Finding) error
	GetFinding(ctx context.Context, orgID, id string) (*Finding, error)
	ListFindings(ctx context.Context, orgID string, f FindingFilter) (List[Finding], error)
	// OpenFindingsByControl returns, per control id, the open findings
	// (status open or in_review) linked to it.
	OpenFindingsByControl(ctx context.Context, orgID string) (map[string][]OpenFinding, error)
}

// composeContent is Shape B's stored content: the title, then the
// description after a blank line.
func composeContent(title, description *string) string {
	t, d := trimmed(title), trimmed(description)
	if d == "" {
		return t
	}
	return t + "\n\n" + d
}

// scoreSeverity validates cvss and its alias score and returns the score.
func scoreSeverity(ve *ValidationError, cvss, score *float64) *float64 {
	check := func(field string, v *float64) {
		if v != nil && (math.IsNaN(*v) || *v < 0 || *v > 10) {
			ve.Add(field, CodeInvalid, *v, field+" must be a number from 0 to 10")
		}
	}
	check("cvss", cvss)
	check("score", score)
	if cvss != nil && score != nil && *cvss != *score {
		ve.Add("score", CodeInvalid, *score, "score is an alias of cvss and must agree with it")
	}
	if cvss != nil {
		return cvss
	}
	return score
}

func normEnum(p *string) string { return strings.ToLower(strings.TrimSpace(*p)) }

// CreateFinding records a finding from either input shape.
func (a *App) CreateFinding(ctx context.Context, in FindingCreate) (*Finding, error) {
	p, err := authorize(ctx, CapReview)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	f := &Finding{ID: NewID(PrefixFinding), Type: "soc2", Status: FindingOpen, Severity: "medium",
		LinkedControlIDs: cleanIDs(in.LinkedControlIDs), CreatedByType: p.ActorType(), CreatedByID: p.ActorID(),
		CreatedAt: now, UpdatedAt: now}
	shapeB := in.Content == nil && in.Title != nil
	ve := NewValidationError()
	// Validated before the write transaction, references read from
	// committed state: the finding is complete before the transaction,
	// which checks again only that its references still exist.
	if in.TemplateID != nil && strings.TrimSpace(*in.TemplateID) != "" {
		id := strings.TrimSpace(*in.TemplateID)
		f.TemplateID = &id
		t, err := a.store.GetFindingTemplate(ctx, p.OrgID, id)
		switch {
		case errors.Is(err, ErrNotFound):
			ve.Add("templateId", CodeUnknownReference, id, "templateId must be a finding template of this organization")
		case err != nil:
			return nil, fmt.Errorf("create finding: %w", err)
		default:
			in.applyTemplate(t, shapeB)
		}
	}
	f.fill(&in, shapeB, ve)
	if err := a.checkFindingRefs(ctx, p.OrgID, f, ve); err != nil {
		return nil, fmt.Errorf("create finding: %w", err)
	}
	if err := ve.Err(); err != nil {
		return nil, fmt.Errorf("create finding: %w", err)
	}
	pm, err := a.prepare(ctx, Mutation{Action: "created", ResourceType: "finding", ResourceID: f.ID, After: f,
		Events: []Event{{Type: EventFindingCreated, Data: f}}})
	if err != nil {
		return nil, fmt.Errorf("create finding: %w", err)
	}
	err = a.createTx(ctx, func(ctx context.Context) error {
		if f.TemplateID != nil || f.TaskID != nil || len(f.LinkedControlIDs) > 0 {
			ve := NewValidationError()
			if f.TemplateID != nil {
				if _, err := a.store.GetFindingTemplate(ctx, p.OrgID, *f.TemplateID); errors.Is(err, ErrNotFound) {
					ve.Add("templateId", CodeUnknownReference, *f.TemplateID, "templateId must be a finding template of this organization")
				} else if err != nil {
					return err
				}
			}
			if err := a.checkFindingRefs(ctx, p.OrgID, f, ve); err != nil {
				return err
			}
			if err := ve.Err(); err != nil {
				return err
			}
		}
		if err := a.store.CreateFinding(ctx, p.OrgID, f); err != nil {
			return err
		}
		return a.recordPrepared(ctx, pm)
	})
	if err != nil {
		return nil, fmt.Errorf("create finding: %w", err)
	}
	return f, nil
}

// checkFindingRefs adds a validation error for a task or linked control
// that is not of the organization.
func (a *App) checkFindingRefs(ctx context.Context, orgID string, f *Finding, ve *ValidationError) error {
	if f.TaskID != nil {
		ok, err := a.store.EntityExists(ctx, orgID, EntityTask, *f.TaskID, "")
		if err != nil {
			return err
		}
		if !ok {
			ve.Add("taskId", CodeUnknownReference, *f.TaskID, "taskId must be a task of this organization")
		}
	}
	if len(f.LinkedControlIDs) > 0 {
		return a.checkControlRefs(ctx, orgID, "linkedControlIds", f.LinkedControlIDs, ve)
	}
	return nil
}

// applyTemplate fills fields the body leaves out from a template.
func (in *FindingCreate) applyTemplate(t *FindingTemplate, shapeB bool) {
	if in.Type == nil && t.Type != nil {
		in.Type = t.Type
	}
	if in.Severity == nil && in.CVSS == nil && in.Score == nil && t.Severity != nil {
		in.Severity = t.Severity
	}
	if in.FindingClass == nil && t.FindingClass != nil {
		in.FindingClass = t.FindingClass
	}
	if shapeB {
		if in.Description == nil && t.Content != "" {
			in.Description = Ptr(t.Content)
		}
		return
	}
	if in.Content == nil && t.Content != "" {
		in.Content = Ptr(t.Content)
	}
	if in.Title == nil && t.Title != "" {
		in.Title = Ptr(t.Title)
	}
}

// fill validates a create body and copies it onto f.
func (f *Finding) fill(in *FindingCreate, shapeB bool, ve *ValidationError) {
	text := func(src *string, field string, max int) *string {
		s := trimmed(src)
		if s == "" {
			return nil
		}
		maxLen(ve, field, s, max)
		return &s
	}
	f.Title = text(in.Title, "title", maxFindingTitle)
	f.Description = text(in.Description, "description", MaxFindingContent)
	f.Source = text(in.Source, "source", maxFindingSource)
	f.TaskID = text(in.TaskID, "taskId", 64)
	if in.Scope != nil && strings.TrimSpace(*in.Scope) != "" {
		f.Scope = Ptr(normEnum(in.Scope))
		oneOf(ve, "scope", *f.Scope, FindingScopes)
	}
	if shapeB {
		if f.Title == nil {
			ve.Add("title", CodeRequired, nil, "title is required")
		}
		f.Content = composeContent(f.Title, f.Description)
		if len([]rune(f.Content)) > MaxFindingContent {
			field := "description"
			if f.Description == nil {
				field = "title"
			}
			msg := fmt.Sprintf("content (title and description together) must be at most %d characters", MaxFindingContent)
			ve.Add("content", CodeTooLong, nil, msg)
			ve.Add(field, CodeTooLong, nil, msg)
		}
		if f.TaskID != nil && f.Scope != nil {
			ve.Add("scope", CodeInvalid, *f.Scope, "give taskId or scope, not both")
		}
	} else {
		f.Content = trimmed(in.Content)
		if f.Content == "" {
			ve.Add("content", CodeRequired, nil, "content is required (or title, for a finding without content)")
		}
		maxLen(ve, "content", f.Content, MaxFindingContent)
		switch {
		case f.TaskID == nil && f.Scope == nil:
			ve.Add("taskId", CodeRequired, nil, "exactly one of taskId or scope is required")
		case f.TaskID != nil && f.Scope != nil:
			ve.Add("scope", CodeInvalid, *f.Scope, "exactly one of taskId or scope may be given, not both")
		}
	}
	if in.Type != nil {
		f.Type = normEnum(in.Type)
		enumIn(ve, "type", f.Type, FindingTypes)
	}
	f.CVSS = scoreSeverity(ve, in.CVSS, in.Score)
	switch {
	case in.Severity != nil:
		f.Severity = normEnum(in.Severity)
		enumIn(ve, "severity", f.Severity, FindingSeverities)
	case f.CVSS != nil:
		f.Severity = SeverityForScore(*f.CVSS)
	}
	if in.FindingClass != nil && strings.TrimSpace(*in.FindingClass) != "" {
		f.FindingClass = Ptr(normEnum(in.FindingClass))
		oneOf(ve, "findingClass", *f.FindingClass, FindingClasses)
	}
	if in.DueDate != nil && strings.TrimSpace(*in.DueDate) != "" {
		t, ok := ParseTime(strings.TrimSpace(*in.DueDate))
		if !ok {
			ve.Add("dueDate", CodeInvalid, *in.DueDate, "dueDate must be an ISO 8601 date-time or date")
		} else {
			f.DueDate = &t
		}
	}
}

// UpdateFinding applies a patch to a finding. A severity change raises
// finding.severity.changed.
func (a *App) UpdateFinding(ctx context.Context, id string, in FindingPatch) (*Finding, error) {
	p, err := authorize(ctx, CapReview)
	if err != nil {
		return nil, err
	}
	var out *Finding
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetFinding(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		f := *before
		f.LinkedControlIDs = append([]string{}, before.LinkedControlIDs...)
		ve := NewValidationError()
		now := a.Now()
		f.patch(&in, before, now, ve)
		if in.LinkedControlIDs.Set && len(f.LinkedControlIDs) > 0 {
			if err := a.checkControlRefs(ctx, p.OrgID, "linkedControlIds", f.LinkedControlIDs, ve); err != nil {
				return err
			}
		}
		if err := ve.Err(); err != nil {
			return err
		}
		f.UpdatedAt = now
		if err := a.store.UpdateFinding(ctx, p.OrgID, &f); err != nil {
			return err
		}
		out = &f
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "finding", ResourceID: id, Before: before, After: &f,
			Events: severityEvents(before, &f, now)})
	})
	if err != nil {
		return nil, fmt.Errorf("update finding %s: %w", id, err)
	}
	return out, nil
}

func severityEvents(before, after *Finding, now time.Time) []Event {
	if before.Severity == after.Severity {
		return nil
	}
	return []Event{{Type: EventFindingSeverityChanged, Data: map[string]any{
		"findingId": after.ID, "previousSeverity": before.Severity, "severity": after.Severity, "changedAt": now,
	}}}
}

// patch validates a patch and applies it to f.
func (f *Finding) patch(in *FindingPatch, before *Finding, now time.Time, ve *ValidationError) {
	if in.Status != nil {
		f.setStatus(normEnum(in.Status), now, ve)
	}
	if in.Type != nil {
		f.Type = normEnum(in.Type)
		enumIn(ve, "type", f.Type, FindingTypes)
	}
	var cvss, score *float64
	if in.CVSS.Set && !in.CVSS.Null {
		cvss = &in.CVSS.Value
	}
	if in.Score.Set && !in.Score.Null {
		score = &in.Score.Value
	}
	if in.CVSS.Set || in.Score.Set {
		f.CVSS = scoreSeverity(ve, cvss, score)
		if f.CVSS != nil && in.Severity == nil {
			f.Severity = SeverityForScore(*f.CVSS)
		}
	}
	if in.Severity != nil {
		f.Severity = normEnum(in.Severity)
		enumIn(ve, "severity", f.Severity, FindingSeverities)
	}
	if in.FindingClass.Set {
		f.FindingClass = nil
		if !in.FindingClass.Null && strings.TrimSpace(in.FindingClass.Value) != "" {
			f.FindingClass = Ptr(normEnum(&in.FindingClass.Value))
			oneOf(ve, "findingClass", *f.FindingClass, FindingClasses)
		}
	}
	optText(ve, &f.Title, in.Title, "title", maxFindingTitle)
	optText(ve, &f.Description, in.Description, "description", MaxFindingContent)
	optText(ve, &f.Source, in.Source, "source", maxFindingSource)
	optText(ve, &f.RevisionNote, in.RevisionNote, "revisionNote", maxFindingRevisionNote)
	if in.DueDate.Set {
		f.DueDate = nil
		if !in.DueDate.Null && strings.TrimSpace(in.DueDate.Value) != "" {
			t, ok := ParseTime(strings.TrimSpace(in.DueDate.Value))
			if !ok {
				ve.Add("dueDate", CodeInvalid, in.DueDate.Value, "dueDate must be an ISO 8601 date-time or date")
			} else {
				f.DueDate = &t
			}
		}
	}
	if in.LinkedControlIDs.Set {
		f.LinkedControlIDs = []string{}
		if !in.LinkedControlIDs.Null {
			f.LinkedControlIDs = cleanIDs(in.LinkedControlIDs.Value)
		}
	}
	switch {
	case in.Content != nil:
		f.Content = strings.TrimSpace(*in.Content)
		if f.Content == "" {
			ve.Add("content", CodeRequired, nil, "content must not be empty")
		}
		maxLen(ve, "content", f.Content, MaxFindingContent)
	case (in.Title.Set || in.Description.Set) && before.Title != nil && before.Content == composeContent(before.Title, before.Description):
		// A Shape B finding keeps content = title + description.
		if f.Title == nil {
			ve.Add("title", CodeRequired, nil, "title must not be removed from a finding created with a title")
			return
		}
		f.Content = composeContent(f.Title, f.Description)
		if len([]rune(f.Content)) > MaxFindingContent {
			msg := fmt.Sprintf("content (title and description together) must be at most %d characters", MaxFindingContent)
			ve.Add("content", CodeTooLong, nil, msg)
			ve.Add("description", CodeTooLong, nil, msg)
		}
	}
}

// setStatus moves the finding to status, keeping closedAt in step.
func (f *Finding) setStatus(status string, now time.Time, ve *ValidationError) {
	enumIn(ve, "status", status, FindingStatuses)
	if status == f.Status {
		return
	}
	f.Status = status
	f.ClosedAt = nil
	if status == FindingClosed {
		f.ClosedAt = &now
	}
}

// CloseFinding sets a finding's status to closed. Closing a closed finding
// changes nothing.
func (a *App) CloseFinding(ctx context.Context, id string) (*Finding, error) {
	p, err := authorize(ctx, CapReview)
	if err != nil {
		return nil, err
	}
	var out *Finding
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetFinding(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if before.Status == FindingClosed {
			out = before
			return nil
		}
		f := *before
		now := a.Now()
		f.setStatus(FindingClosed, now, NewValidationError())
		f.UpdatedAt = now
		if err := a.store.UpdateFinding(ctx, p.OrgID, &f); err != nil {
			return err
		}
		out = &f
		return a.record(ctx, Mutation{Action: "closed", ResourceType: "finding", ResourceID: id, Before: before, After: &f})
	})
	if err != nil {
		return nil, fmt.Errorf("close finding %s: %w", id, err)
	}
	return out, nil
}

// visibleFinding applies the employee/contractor narrowing: they see
// findings on tasks assigned to them.
func (a *App) visibleFinding(ctx context.Context, p *Principal, f *Finding) error {
	if !p.SeesOnlyAssigned() {
		return nil
	}
	if f.TaskID == nil || p.UserID == "" {
		return ErrNotFound
	}
	ok, err := a.store.EntityExists(ctx, p.OrgID, EntityTask, *f.TaskID, p.UserID)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotFound
	}
	return nil
}

// GetFinding returns one finding.
func (a *App) GetFinding(ctx context.Context, id string) (*Finding, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	f, err := a.store.GetFinding(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if err := a.visibleFinding(ctx, p, f); err != nil {
		return nil, err
	}
	return f, nil
}

// ListFindings lists findings matching every filter given, oldest first.
func (a *App) ListFindings(ctx context.Context, f FindingFilter) (List[Finding], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Finding]{}, err
	}
	ve := NewValidationError()
	oneOf(ve, "status", f.Status, FindingStatuses)
	oneOf(ve, "severity", f.Severity, FindingSeverities)
	oneOf(ve, "type", f.Type, FindingTypes)
	oneOf(ve, "scope", f.Scope, FindingScopes)
	oneOf(ve, "findingClass", f.FindingClass, FindingClasses)
	if err := ve.Err(); err != nil {
		return List[Finding]{}, err
	}
	if p.SeesOnlyAssigned() {
		if p.UserID == "" {
			return List[Finding]{Items: []Finding{}}, nil
		}
		f.TaskAssignee = p.UserID
	}
	return a.store.ListFindings(ctx, p.OrgID, f)
}

// OpenFindingsByControl returns the organization's open findings (open or
// in_review) per linked control id, for framework scoring.
func (a *App) OpenFindingsByControl(ctx context.Context) (map[string][]OpenFinding, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	return a.store.OpenFindingsByControl(ctx, p.OrgID)
}
