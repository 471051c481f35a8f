package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Control statuses (DECISIONS: the control editor vocabulary).
const (
	ControlNotStarted    = "not_started"
	ControlInProgress    = "in_progress"
	ControlImplemented   = "implemented"
	ControlNotApplicable = "not_applicable"
)

// ControlStatuses lists the stored control statuses.
var ControlStatuses = []string{ControlNotStarted, ControlInProgress, ControlImplemented, ControlNotApplicable}

// Assessment values: the concept view of a control's status (DECISIONS).
const (
	AssessmentMet           = "met"
	AssessmentPartial       = "partial"
	AssessmentNotMet        = "not_met"
	AssessmentNotApplicable = "not_applicable"
)

// EventControlStatusChanged is raised on every control status change.
const EventControlStatusChanged = "control.status.changed"

// Control is one of the organization's controls. A control implemented once
// satisfies every framework requirement mapped to it.
type Control struct {
	ID            string  `json:"id"`
	Code          string  `json:"code"`
	Name          string  `json:"name"`
	Description   string  `json:"description"`
	Status        string  `json:"status"`
	Assessment    string  `json:"assessment"`
	OwnerID       *string `json:"ownerId"`
	Justification *string `json:"justification"`
	EvidenceCount int     `json:"evidenceCount"`
	// CountsAsMet is the score's rule for this control: implemented with no
	// blocking open finding linked (controlCountsAsMet).
	CountsAsMet bool `json:"countsAsMet"`
	// OpenFindingCount counts the open and in-review findings linked to it.
	OpenFindingCount int `json:"openFindingCount"`
	// OpenFindings lists them; only a single control's view carries it.
	OpenFindings    *[]OpenFinding    `json:"openFindings,omitempty"`
	Requirements    []RequirementLink `json:"requirements"`
	StatusChangedAt *time.Time        `json:"statusChangedAt"`
	CreatedAt       time.Time         `json:"createdAt"`
	UpdatedAt       time.Time         `json:"updatedAt"`
}

// ControlFilter holds the control list's filters; they combine with AND.
type ControlFilter struct {
	FrameworkID string
	Status      string
	OwnerID     string
	Search      string // text the code or name contains, case-insensitive
	Page        Page
}

// ControlInput is the body of POST and PATCH /v1/controls.
type ControlInput struct {
	Code          *string     `json:"code"`
	Name          *string     `json:"name"`
	Description   *string     `json:"description"`
	Status        *string     `json:"status"`
	OwnerID       Opt[string] `json:"ownerId"`
	Justification Opt[string] `json:"justification"`
}

// ControlStore persists controls.
type ControlStore interface {
	CreateControl(ctx context.Context, orgID string, c *Control) error
	GetControl(ctx context.Context, orgID, id string) (*Control, error)
	UpdateControl(ctx context.Context, orgID string, c *Control) error
	ListControls(ctx context.Context, orgID string, f ControlFilter) (List[Control], error)
	// ValidEvidenceCounts counts each control's evidence that is not expired at now.
	ValidEvidenceCounts(ctx context.Context, orgID string, controlIDs []string, now time.Time) (map[string]int, error)
	// MissingControls returns the ids among ids that are not controls of the organization.
	MissingControls(ctx context.Context, orgID string, ids []string) ([]string, error)
}

// StatusChange is the data of a control.status.changed event.
type StatusChange struct {
	ControlID      string    `json:"controlId"`
	PreviousStatus string    `json:"previousStatus"`
	Status         string    `json:"status"`
	ChangedAt      time.Time `json:"changedAt"`
}

// assess derives the concept view from the stored status.
func assess(status string, evidence int) string {
	switch {
	case status == ControlImplemented:
		return AssessmentMet
	case status == ControlNotApplicable:
		return AssessmentNotApplicable
	case status == ControlInProgress || evidence > 0:
		return AssessmentPartial
	}
	return AssessmentNotMet
}

// decorate fills evidence counts, assessments and requirement links.
func (a *App) decorate(ctx context.Context, orgID string, cs []Control) error {
	if len(cs) == 0 {
		return nil
	}
	ids := make([]string, len(cs))
	for i := range cs {
		ids[i] = cs[i].ID
	}
	counts, err := a.store.ValidEvidenceCounts(ctx, orgID, ids, a.Now())
	if err != nil {
		return err
	}
	links, err := a.store.ControlRequirementLinks(ctx, orgID, ids)
	if err != nil {
		return err
	}
	open, err := a.store.OpenFindingsByControl(ctx, orgID)
	if err != nil {
		return err
	}
	cat, err := a.catalog()
	if err != nil {
		return err
	}
	fwCache := map[string]*Framework{}
	for i := range cs {
		c := &cs[i]
		c.EvidenceCount = counts[c.ID]
		c.Assessment = assess(c.Status, c.EvidenceCount)
		st := ControlState{ControlID: c.ID, Status: c.Status}
		for _, f := range open[c.ID] {
			if findingBlocks(f) {
				st.BlockingFindings++
			}
		}
		c.CountsAsMet = controlCountsAsMet(st)
		c.OpenFindingCount = len(open[c.ID])
		c.Requirements = []RequirementLink{}
		for _, l := range links[c.ID] {
			link := RequirementLink{FrameworkID: l.FrameworkID, RequirementID: l.RequirementID}
			if r, b := cat.requirement(l.RequirementID); r != nil {
				link.Ref, link.Title = r.Ref, r.Title
				link.FrameworkSlug, link.FrameworkName = b.fw.Slug, b.fw.Name
			} else {
				if r, err := a.store.GetCustomRequirement(ctx, orgID, l.RequirementID); err == nil {
					link.Ref, link.Title = r.Ref, r.Title
				}
				fw := fwCache[l.FrameworkID]
				if fw == nil {
					if b := cat.lookup(l.FrameworkID); b != nil {
						fw = &b.fw
					} else if cf, err := a.store.GetCustomFramework(ctx, orgID, l.FrameworkID); err == nil {
						fw = cf
					}
					fwCache[l.FrameworkID] = fw
				}
				if fw != nil {
					link.FrameworkSlug, link.FrameworkName = fw.Slug, fw.Name
				}
			}
			c.Requirements = append(c.Requirements, link)
		}
	}
	return nil
}

// ListControls lists the organization's controls matching every filter.
func (a *App) ListControls(ctx context.Context, f ControlFilter) (List[Control], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Control]{}, err
	}
	ve := NewValidationError()
	oneOf(ve, "status", f.Status, ControlStatuses)
	f.Search = strings.TrimSpace(f.Search)
	maxLen(ve, "q", f.Search, 200)
	if err := ve.Err(); err != nil {
		return List[Control]{}, err
	}
	if p.SeesOnlyAssigned() {
		// Employees and contractors see the controls they own.
		if p.UserID == "" || (f.OwnerID != "" && f.OwnerID != p.UserID) {
			return List[Control]{Items: []Control{}}, nil
		}
		f.OwnerID = p.UserID
	}
	if f.FrameworkID != "" {
		fw, _, err := a.resolveFramework(ctx, p.OrgID, f.FrameworkID)
		if errors.Is(err, ErrNotFound) {
			return List[Control]{}, Invalid("frameworkId", CodeUnknownReference, f.FrameworkID, "frameworkId must name a framework")
		}
		if err != nil {
			return List[Control]{}, err
		}
		f.FrameworkID = fw.ID
	}
	l, err := a.store.ListControls(ctx, p.OrgID, f)
	if err != nil {
		return l, err
	}
	return l, a.decorate(ctx, p.OrgID, l.Items)
}

// GetControl returns a control with every requirement of every framework it
// satisfies. Employees and contractors see the controls they own.
func (a *App) GetControl(ctx context.Context, id string) (*Control, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.getControl(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if !ownsControl(p, c) {
		return nil, ErrNotFound
	}
	if err := a.attachOpenFindings(ctx, p, c); err != nil {
		return nil, err
	}
	return c, nil
}

// attachOpenFindings lists a control's open findings on its single view.
// Employees and contractors, who see only findings on their own tasks, get
// the count alone.
func (a *App) attachOpenFindings(ctx context.Context, p *Principal, c *Control) error {
	if p.SeesOnlyAssigned() {
		return nil
	}
	open, err := a.store.OpenFindingsByControl(ctx, p.OrgID)
	if err != nil {
		return err
	}
	fs := make([]OpenFinding, 0, len(open[c.ID]))
	for _, f := range open[c.ID] {
		f.Blocking = findingBlocks(f)
		fs = append(fs, f)
	}
	c.OpenFindings = &fs
	return nil
}

// ownsControl: managers and auditors see every control, employees and
// contractors the ones they own.
func ownsControl(p *Principal, c *Control) bool {
	return !p.SeesOnlyAssigned() || (p.UserID != "" && c.OwnerID != nil && *c.OwnerID == p.UserID)
}

func (a *App) getControl(ctx context.Context, orgID, id string) (*Control, error) {
	c, err := a.store.GetControl(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	cs := []Control{*c}
	if err := a.decorate(ctx, orgID, cs); err != nil {
		return nil, err
	}
	return &cs[0], nil
}

func (in *ControlInput) apply(c *Control, ve *ValidationError) {
	set := func(dst *string, src *string, field string, max int, required bool) {
		if src == nil {
			return
		}
		s := strings.TrimSpace(*src)
		if required && s == "" {
			ve.Add(field, CodeRequired, nil, field+" must not be empty")
		}
		maxLen(ve, field, s, max)
		*dst = s
	}
	set(&c.Code, in.Code, "code", 100, false)
	set(&c.Name, in.Name, "name", 500, true)
	set(&c.Description, in.Description, "description", 20000, false)
}

// CreateControl adds a control of the organization's own, e.g. to serve
// requirements of a custom framework.
func (a *App) CreateControl(ctx context.Context, in ControlInput) (*Control, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	c := &Control{ID: NewID(PrefixControl), Status: ControlNotStarted, CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		ve.Add("name", CodeRequired, nil, "name is required")
	}
	in.apply(c, ve)
	if in.Status != nil && *in.Status != ControlNotStarted {
		ve.Add("status", CodeInvalid, *in.Status, "a new control starts as not_started")
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if in.OwnerID.Set && !in.OwnerID.Null && in.OwnerID.Value != "" {
			c.OwnerID = Ptr(strings.TrimSpace(in.OwnerID.Value))
			if err := a.checkPerson(ctx, p.OrgID, "ownerId", c.OwnerID, ve); err != nil {
				return err
			}
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.CreateControl(ctx, p.OrgID, c); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "control", ResourceID: c.ID, After: c})
	})
	if err != nil {
		return nil, fmt.Errorf("create control: %w", err)
	}
	return a.getControl(ctx, p.OrgID, c.ID)
}

func (a *App) checkPerson(ctx context.Context, orgID, field string, id *string, ve *ValidationError) error {
	if id == nil {
		return nil
	}
	_, err := a.store.GetPerson(ctx, orgID, *id)
	if errors.Is(err, ErrNotFound) {
		ve.Add(field, CodeUnknownReference, *id, field+" must be a person of this organization")
		return nil
	}
	return err
}

// UpdateControl changes a control's owner, texts or status. Marking it not
// applicable needs a justification. Implemented is reached through the
// status rule (a completed evidence task with current evidence); asking for
// it is accepted only when the rule holds.
func (a *App) UpdateControl(ctx context.Context, id string, in ControlInput) (*Control, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetControl(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		c := *before
		ve := NewValidationError()
		in.apply(&c, ve)
		if in.OwnerID.Set {
			c.OwnerID = nil
			if !in.OwnerID.Null && strings.TrimSpace(in.OwnerID.Value) != "" {
				c.OwnerID = Ptr(strings.TrimSpace(in.OwnerID.Value))
				if err := a.checkPerson(ctx, p.OrgID, "ownerId", c.OwnerID, ve); err != nil {
					return err
				}
			}
		}
		if in.Justification.Set {
			c.Justification = nil
			if !in.Justification.Null && strings.TrimSpace(in.Justification.Value) != "" {
				c.Justification = Ptr(strings.TrimSpace(in.Justification.Value))
				maxLen(ve, "justification", *c.Justification, 5000)
			}
		}
		target := c.Status
		if in.Status != nil {
			target = *in.Status
			if target == "" {
				ve.Add("status", CodeInvalidEnum, target, "status must be one of "+strings.Join(ControlStatuses, ", "))
			}
			oneOf(ve, "status", target, ControlStatuses)
		}
		if target == ControlNotApplicable && c.Justification == nil {
			ve.Add("justification", CodeRequired, nil, "justification is required to mark a control not applicable")
		}
		if target == ControlImplemented && before.Status != ControlImplemented {
			ok, err := a.qualifies(ctx, p.OrgID, id)
			if err != nil {
				return err
			}
			if !ok {
				ve.Add("status", CodeInvalid, target, "a control becomes implemented when an evidence task linked to it is completed and all its evidence is collected and unexpired")
			}
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if target != ControlNotApplicable && before.Status == ControlNotApplicable && !in.Justification.Set {
			c.Justification = nil
		}
		now := a.Now()
		c.UpdatedAt = now
		var events []Event
		if target != before.Status {
			c.Status = target
			c.StatusChangedAt = &now
			events = append(events, statusEvent(id, before.Status, target, now))
		}
		if err := a.store.UpdateControl(ctx, p.OrgID, &c); err != nil {
			return err
		}
		if err := a.record(ctx, Mutation{Action: "updated", ResourceType: "control", ResourceID: id, Before: before, After: &c, Events: events}); err != nil {
			return err
		}
		if before.Status == ControlNotApplicable && target != ControlNotApplicable {
			return a.reevaluateControl(ctx, p.OrgID, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update control %s: %w", id, err)
	}
	return a.getControl(ctx, p.OrgID, id)
}

func statusEvent(id, prev, status string, at time.Time) Event {
	return Event{Type: EventControlStatusChanged, Data: StatusChange{ControlID: id, PreviousStatus: prev, Status: status, ChangedAt: at}}
}

// qualifies applies the status rule: at least one evidence task linked to
// the control is done, and for every task series of the control, its most
// recently completed task has at least one evidence attached that is not
// expired.
func (a *App) qualifies(ctx context.Context, orgID, controlID string) (bool, error) {
	done, err := a.store.LatestDoneTasks(ctx, orgID, controlID)
	if err != nil {
		return false, err
	}
	if len(done) == 0 {
		return false, nil
	}
	now := a.Now()
	for _, t := range done {
		n, err := a.store.ValidTaskEvidence(ctx, orgID, t, now)
		if err != nil {
			return false, err
		}
		if n == 0 {
			return false, nil
		}
	}
	return true, nil
}

// reevaluateControl applies the status rule inside the caller's transaction:
// a control that qualifies becomes implemented; an implemented control that
// no longer does drops to in progress. Not-applicable controls stay.
func (a *App) reevaluateControl(ctx context.Context, orgID, controlID string) error {
	c, err := a.store.GetControl(ctx, orgID, controlID)
	if err != nil {
		return err
	}
	if c.Status == ControlNotApplicable {
		return nil
	}
	ok, err := a.qualifies(ctx, orgID, controlID)
	if err != nil {
		return err
	}
	target := c.Status
	switch {
	case ok:
		target = ControlImplemented
	case c.Status == ControlImplemented:
		target = ControlInProgress
	}
	if target == c.Status {
		return nil
	}
	before := *c
	now := a.Now()
	c.Status, c.StatusChangedAt, c.UpdatedAt = target, &now, now
	if err := a.store.UpdateControl(ctx, orgID, c); err != nil {
		return err
	}
	return a.record(ctx, Mutation{Action: "status_changed", ResourceType: "control", ResourceID: controlID,
		Before: &before, After: c, Events: []Event{statusEvent(controlID, before.Status, target, now)}})
}

// markInProgress moves a not-started control to in progress when work on it
// begins (evidence uploaded, a task started).
func (a *App) markInProgress(ctx context.Context, orgID, controlID string) error {
	c, err := a.store.GetControl(ctx, orgID, controlID)
	if err != nil {
		return err
	}
	if c.Status != ControlNotStarted {
		return nil
	}
	before := *c
	now := a.Now()
	c.Status, c.StatusChangedAt, c.UpdatedAt = ControlInProgress, &now, now
	if err := a.store.UpdateControl(ctx, orgID, c); err != nil {
		return err
	}
	return a.record(ctx, Mutation{Action: "status_changed", ResourceType: "control", ResourceID: controlID,
		Before: &before, After: c, Events: []Event{statusEvent(controlID, before.Status, ControlInProgress, now)}})
}
