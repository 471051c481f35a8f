package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SOA frameworks: the Statement of Applicability covers the Annex A controls
// of ISO 27001 and, when enabled, ISO 42001.
var soaFrameworks = []string{"iso27001-2022", "iso42001-2023"}

// SOAEntry is one Annex A control in the Statement of Applicability.
type SOAEntry struct {
	RequirementID string       `json:"requirementId"`
	FrameworkID   string       `json:"frameworkId"`
	Ref           string       `json:"ref"`
	Title         string       `json:"title"`
	ParentRef     string       `json:"parentRef"`
	Applicable    bool         `json:"applicable"`
	Justification *string      `json:"justification"`
	Implemented   bool         `json:"implemented"`
	Controls      []SOAControl `json:"controls"`
	UpdatedAt     *time.Time   `json:"updatedAt"`
}

// SOAControl is a control serving an SOA entry, with its status.
type SOAControl struct {
	ID     string `json:"id"`
	Code   string `json:"code"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

// SOADecision is a stored applicability decision.
type SOADecision struct {
	FrameworkID   string
	RequirementID string
	Applicable    bool
	Justification *string
	UpdatedAt     time.Time
}

// SOAInput is the body of PATCH /v1/soa/{requirementId}.
type SOAInput struct {
	Applicable    *bool       `json:"applicable"`
	Justification Opt[string] `json:"justification"`
}

// SOADocument is a framework's whole Statement of Applicability.
type SOADocument struct {
	Framework *Framework
	Entries   []SOAEntry
	At        time.Time
}

// SOAStore persists applicability decisions.
type SOAStore interface {
	SOADecisions(ctx context.Context, orgID, frameworkID string) (map[string]SOADecision, error)
	SOAExclusions(ctx context.Context, orgID, frameworkID string) (map[string]bool, error)
	SaveSOADecision(ctx context.Context, orgID string, d SOADecision) error
}

// soaFramework resolves the framework of an SOA request: ISO 27001 by
// default; it must be ISO 27001 or ISO 42001 and enabled.
func (a *App) soaFramework(ctx context.Context, orgID, idOrSlug string) (*Framework, *builtinFramework, error) {
	if idOrSlug == "" {
		idOrSlug = soaFrameworks[0]
	}
	fw, b, err := a.resolveFramework(ctx, orgID, idOrSlug)
	if errors.Is(err, ErrNotFound) {
		return nil, nil, Invalid("frameworkId", CodeUnknownReference, idOrSlug, "frameworkId must name ISO 27001 or ISO 42001")
	}
	if err != nil {
		return nil, nil, err
	}
	ok := false
	for _, s := range soaFrameworks {
		ok = ok || (b != nil && b.fw.Slug == s)
	}
	if !ok {
		return nil, nil, Invalid("frameworkId", CodeInvalid, idOrSlug, "a Statement of Applicability exists for ISO 27001 and ISO 42001 only")
	}
	if !fw.Enabled {
		return nil, nil, Invalid("frameworkId", CodeInvalid, idOrSlug, "enable the framework before keeping its Statement of Applicability")
	}
	return fw, b, nil
}

// soaRequirements are the framework's Annex A controls.
func soaRequirements(b *builtinFramework) []Requirement {
	var out []Requirement
	for _, r := range b.reqs {
		if r.Assessable && strings.HasPrefix(r.Ref, "A.") {
			out = append(out, r)
		}
	}
	return out
}

// SOA returns the Statement of Applicability of ISO 27001 (default) or ISO 42001.
func (a *App) SOA(ctx context.Context, frameworkID string) (*SOADocument, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() {
		return nil, Errorf(ErrForbidden, "the %s role may not read the Statement of Applicability", p.Role)
	}
	fw, b, err := a.soaFramework(ctx, p.OrgID, frameworkID)
	if err != nil {
		return nil, err
	}
	decisions, err := a.store.SOADecisions(ctx, p.OrgID, fw.ID)
	if err != nil {
		return nil, err
	}
	served, err := a.store.OrgRequirementControls(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	states, err := a.store.FrameworkControlStates(ctx, p.OrgID, fw.ID)
	if err != nil {
		return nil, err
	}
	blocking, err := a.blockingFindings(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	status := map[string]string{}
	for _, s := range states {
		status[s.ControlID] = s.Status
	}
	var ctlIDs []string
	for _, r := range soaRequirements(b) {
		ctlIDs = append(ctlIDs, served[r.ID]...)
	}
	ctls, err := a.controlsByID(ctx, p.OrgID, dedupe(ctlIDs))
	if err != nil {
		return nil, err
	}
	doc := &SOADocument{Framework: fw, At: a.Now()}
	for _, r := range soaRequirements(b) {
		e := SOAEntry{RequirementID: r.ID, FrameworkID: fw.ID, Ref: r.Ref, Title: r.Title, ParentRef: r.ParentRef,
			Applicable: true, Controls: []SOAControl{}}
		if d, ok := decisions[r.ID]; ok {
			e.Applicable, e.Justification, e.UpdatedAt = d.Applicable, d.Justification, Ptr(d.UpdatedAt)
		}
		met, applicable := 0, 0
		for _, id := range served[r.ID] {
			c := ctls[id]
			if c == nil {
				continue
			}
			e.Controls = append(e.Controls, SOAControl{ID: c.ID, Code: c.Code, Name: c.Name, Status: c.Status})
			if c.Status != ControlNotApplicable {
				applicable++
				if controlCountsAsMet(ControlState{RequirementID: r.ID, ControlID: c.ID, Status: c.Status, BlockingFindings: blocking[c.ID]}) {
					met++
				}
			}
		}
		e.Implemented = applicable > 0 && met == applicable
		doc.Entries = append(doc.Entries, e)
	}
	return doc, nil
}

func (a *App) controlsByID(ctx context.Context, orgID string, ids []string) (map[string]*Control, error) {
	out := map[string]*Control{}
	for _, id := range ids {
		c, err := a.store.GetControl(ctx, orgID, id)
		if err != nil {
			return nil, err
		}
		out[id] = c
	}
	return out, nil
}

// GetSOAEntry returns one entry of a Statement of Applicability.
func (a *App) GetSOAEntry(ctx context.Context, requirementID string) (*SOAEntry, error) {
	c, err := a.catalog()
	if err != nil {
		return nil, err
	}
	_, b := c.requirement(requirementID)
	if b == nil {
		return nil, ErrNotFound
	}
	doc, err := a.SOA(ctx, b.fw.ID)
	var ve *ValidationError
	if errors.As(err, &ve) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	for i := range doc.Entries {
		if doc.Entries[i].RequirementID == requirementID {
			return &doc.Entries[i], nil
		}
	}
	return nil, ErrNotFound
}

// UpdateSOAEntry marks an Annex A control applicable or not applicable. An
// exclusion needs a justification.
func (a *App) UpdateSOAEntry(ctx context.Context, requirementID string, in SOAInput) (*SOAEntry, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	before, err := a.GetSOAEntry(ctx, requirementID)
	if err != nil {
		return nil, err
	}
	d := SOADecision{FrameworkID: before.FrameworkID, RequirementID: requirementID, Applicable: before.Applicable,
		Justification: before.Justification, UpdatedAt: a.Now()}
	ve := NewValidationError()
	if in.Applicable != nil {
		d.Applicable = *in.Applicable
	}
	if in.Justification.Set {
		d.Justification = nil
		if !in.Justification.Null && strings.TrimSpace(in.Justification.Value) != "" {
			d.Justification = Ptr(strings.TrimSpace(in.Justification.Value))
			maxLen(ve, "justification", *d.Justification, 5000)
		}
	}
	if !d.Applicable && d.Justification == nil {
		ve.Add("justification", CodeRequired, nil, "justification is required to exclude a control from the Statement of Applicability")
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.SaveSOADecision(ctx, p.OrgID, d); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "soa_entry", ResourceID: requirementID,
			Before: map[string]any{"applicable": before.Applicable, "justification": before.Justification},
			After:  map[string]any{"applicable": d.Applicable, "justification": d.Justification}})
	})
	if err != nil {
		return nil, fmt.Errorf("update soa entry %s: %w", requirementID, err)
	}
	return a.GetSOAEntry(ctx, requirementID)
}
