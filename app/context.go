package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// PrefixContext starts the id of a saved version of the organization's context.
const PrefixContext = "ctx"

const (
	maxContextText  = 20_000
	maxContextItems = 200
)

// IssueCategories are the kinds of issue of ISO/IEC 27001 clause 4.1.
var IssueCategories = []string{"internal", "external"}

// ContextScope is the scope of the management system (ISO/IEC 27001 4.3).
type ContextScope struct {
	// Statement is the scope statement as it appears in the Statement of Applicability.
	Statement string `json:"statement"`
	// Exclusions names what is out of scope and why.
	Exclusions string `json:"exclusions"`
	// Locations are the sites, offices and hosting regions in scope.
	Locations []string `json:"locations"`
	// Interfaces are the interfaces and dependencies between activities in
	// scope and those of other organizations.
	Interfaces string `json:"interfaces"`
}

// ContextIssue is an internal or external issue relevant to the
// organization's purpose (ISO/IEC 27001 4.1).
type ContextIssue struct {
	Category    string `json:"category"`
	Description string `json:"description"`
	// Effect is how the issue affects the ability to achieve the intended outcomes.
	Effect string `json:"effect"`
}

// InterestedParty is a party relevant to the management system with its
// requirements (ISO/IEC 27001 4.2).
type InterestedParty struct {
	Name string `json:"name"`
	// Category is free text: customer, regulator, employee, supplier, ...
	Category     string `json:"category"`
	Requirements string `json:"requirements"`
	// AddressedThroughIsms says whether the requirements are addressed
	// through the management system (4.2 c).
	AddressedThroughIsms bool `json:"addressedThroughIsms"`
}

// ContextEntry is a free question and answer about the organization, for
// facts that fit no other field (used when answering questionnaires).
type ContextEntry struct {
	Question string   `json:"question"`
	Answer   string   `json:"answer"`
	Tags     []string `json:"tags"`
}

// ContextDocument is the content of the organization's context.
type ContextDocument struct {
	// Description is what the organization does and its purpose.
	Description string         `json:"description"`
	Scope       ContextScope   `json:"scope"`
	Issues      []ContextIssue `json:"issues"`
	// ClimateChangeRelevant records the determination ISO/IEC 27001:2022
	// Amd 1:2024 asks for in 4.1; null while undetermined.
	ClimateChangeRelevant *bool             `json:"climateChangeRelevant"`
	InterestedParties     []InterestedParty `json:"interestedParties"`
	Entries               []ContextEntry    `json:"entries"`
}

// OrgContext is one saved version of the organization's context. The
// current context is the newest version; older ones are its snapshots.
type OrgContext struct {
	ID                    *string           `json:"id"`
	Version               int               `json:"version"`
	Description           string            `json:"description"`
	Scope                 ContextScope      `json:"scope"`
	Issues                []ContextIssue    `json:"issues"`
	ClimateChangeRelevant *bool             `json:"climateChangeRelevant"`
	InterestedParties     []InterestedParty `json:"interestedParties"`
	Entries               []ContextEntry    `json:"entries"`
	ChangeNote            string            `json:"changeNote"`
	SavedBy               *ActorRef         `json:"savedBy"`
	SavedAt               *time.Time        `json:"savedAt"`
	IsCurrent             bool              `json:"isCurrent"`
}

// Document returns the content part of c.
func (c *OrgContext) Document() ContextDocument {
	return ContextDocument{Description: c.Description, Scope: c.Scope, Issues: c.Issues, ClimateChangeRelevant: c.ClimateChangeRelevant,
		InterestedParties: c.InterestedParties, Entries: c.Entries}
}

// SetDocument copies d into c.
func (c *OrgContext) SetDocument(d ContextDocument) {
	c.Description, c.Scope, c.Issues, c.ClimateChangeRelevant = d.Description, d.Scope, d.Issues, d.ClimateChangeRelevant
	c.InterestedParties, c.Entries = d.InterestedParties, d.Entries
	c.normalize()
}

func (c *OrgContext) normalize() {
	if c.Scope.Locations == nil {
		c.Scope.Locations = []string{}
	}
	if c.Issues == nil {
		c.Issues = []ContextIssue{}
	}
	if c.InterestedParties == nil {
		c.InterestedParties = []InterestedParty{}
	}
	if c.Entries == nil {
		c.Entries = []ContextEntry{}
	}
	for i := range c.Entries {
		if c.Entries[i].Tags == nil {
			c.Entries[i].Tags = []string{}
		}
	}
}

// ContextPatch is the body of PATCH /v1/context: each field given replaces
// the stored one (lists as a whole).
type ContextPatch struct {
	Description           *string            `json:"description"`
	Scope                 *ContextScope      `json:"scope"`
	Issues                *[]ContextIssue    `json:"issues"`
	ClimateChangeRelevant Opt[bool]          `json:"climateChangeRelevant"`
	InterestedParties     *[]InterestedParty `json:"interestedParties"`
	Entries               *[]ContextEntry    `json:"entries"`
	// ChangeNote says why, kept with the saved version.
	ChangeNote string `json:"changeNote"`
	// BaseVersion, when given, must be the current version: an update based
	// on an older version is a conflict instead of overwriting someone's work.
	BaseVersion *int `json:"baseVersion"`
}

// ContextStore persists the versions of the organization's context.
type ContextStore interface {
	// CurrentContext returns the newest version or ErrNotFound.
	CurrentContext(ctx context.Context, orgID string) (*OrgContext, error)
	SaveContext(ctx context.Context, orgID string, c *OrgContext) error
	// GetContextVersion finds a version by id, or by number when id is empty.
	GetContextVersion(ctx context.Context, orgID, id string, number int) (*OrgContext, error)
	ListContextVersions(ctx context.Context, orgID string, pg Page) (List[OrgContext], error)
}

func emptyContext() *OrgContext {
	c := &OrgContext{}
	c.normalize()
	c.IsCurrent = true
	return c
}

// GetContext returns the organization's current context; version 0 with
// empty fields before the first update.
func (a *App) GetContext(ctx context.Context) (*OrgContext, error) {
	pr, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := readsOrgSettings(pr); err != nil {
		return nil, err
	}
	c, err := a.store.CurrentContext(ctx, pr.OrgID)
	if errors.Is(err, ErrNotFound) {
		return emptyContext(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("get context: %w", err)
	}
	c.IsCurrent = true
	return c, nil
}

func trimContextList(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (in *ContextPatch) apply(c *OrgContext, ve *ValidationError) {
	text := func(field string, s *string, required bool) {
		*s = strings.TrimSpace(*s)
		if required && *s == "" {
			ve.Add(field, CodeRequired, nil, field+" is required")
		}
		maxLen(ve, field, *s, maxContextText)
	}
	items := func(field string, n int) {
		if n > maxContextItems {
			ve.Add(field, CodeTooLong, n, fmt.Sprintf("%s may list at most %d entries", field, maxContextItems))
		}
	}
	if in.Description != nil {
		c.Description = *in.Description
		text("description", &c.Description, false)
	}
	if in.Scope != nil {
		s := *in.Scope
		text("scope.statement", &s.Statement, false)
		text("scope.exclusions", &s.Exclusions, false)
		text("scope.interfaces", &s.Interfaces, false)
		s.Locations = trimContextList(s.Locations)
		items("scope.locations", len(s.Locations))
		for i := range s.Locations {
			maxLen(ve, fmt.Sprintf("scope.locations[%d]", i), s.Locations[i], 500)
		}
		c.Scope = s
	}
	if in.Issues != nil {
		list := append([]ContextIssue{}, (*in.Issues)...)
		items("issues", len(list))
		for i := range list {
			f := fmt.Sprintf("issues[%d]", i)
			if list[i].Category == "" {
				ve.Add(f+".category", CodeRequired, nil, f+".category is required (internal or external)")
			}
			oneOf(ve, f+".category", list[i].Category, IssueCategories)
			text(f+".description", &list[i].Description, true)
			text(f+".effect", &list[i].Effect, false)
		}
		c.Issues = list
	}
	if in.ClimateChangeRelevant.Set {
		c.ClimateChangeRelevant = nil
		if !in.ClimateChangeRelevant.Null {
			c.ClimateChangeRelevant = Ptr(in.ClimateChangeRelevant.Value)
		}
	}
	if in.InterestedParties != nil {
		list := append([]InterestedParty{}, (*in.InterestedParties)...)
		items("interestedParties", len(list))
		for i := range list {
			f := fmt.Sprintf("interestedParties[%d]", i)
			text(f+".name", &list[i].Name, true)
			maxLen(ve, f+".name", list[i].Name, 255)
			text(f+".category", &list[i].Category, false)
			maxLen(ve, f+".category", list[i].Category, 64)
			text(f+".requirements", &list[i].Requirements, false)
		}
		c.InterestedParties = list
	}
	if in.Entries != nil {
		list := append([]ContextEntry{}, (*in.Entries)...)
		items("entries", len(list))
		for i := range list {
			f := fmt.Sprintf("entries[%d]", i)
			text(f+".question", &list[i].Question, true)
			text(f+".answer", &list[i].Answer, true)
			list[i].Tags = trimContextList(list[i].Tags)
			if len(list[i].Tags) > 20 {
				ve.Add(f+".tags", CodeTooLong, len(list[i].Tags), f+".tags may list at most 20 tags")
			}
			for j := range list[i].Tags {
				maxLen(ve, fmt.Sprintf("%s.tags[%d]", f, j), list[i].Tags[j], 64)
			}
		}
		c.Entries = list
	}
	c.normalize()
}

// RestoreContextSnapshot saves a saved version's content as a new current
// version; the versions in between stay as snapshots.
func (a *App) RestoreContextSnapshot(ctx context.Context, ref, changeNote string) (*OrgContext, error) {
	pr, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *OrgContext
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		var snap *OrgContext
		var err error
		if n, ok := policyVersionNumber(ref); ok {
			snap, err = a.store.GetContextVersion(ctx, pr.OrgID, "", n)
		} else {
			snap, err = a.store.GetContextVersion(ctx, pr.OrgID, ref, 0)
		}
		if err != nil {
			return err
		}
		d := snap.Document()
		if strings.TrimSpace(changeNote) == "" {
			changeNote = fmt.Sprintf("restored version %d", snap.Version)
		}
		out, err = a.UpdateContext(ctx, ContextPatch{Description: &d.Description, Scope: &d.Scope, Issues: &d.Issues,
			ClimateChangeRelevant: Opt[bool]{Set: true, Null: d.ClimateChangeRelevant == nil, Value: d.ClimateChangeRelevant != nil && *d.ClimateChangeRelevant},
			InterestedParties:     &d.InterestedParties, Entries: &d.Entries, ChangeNote: changeNote})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("restore context %s: %w", ref, err)
	}
	return out, nil
}

// UpdateContext saves a new version of the context with the patch applied.
// The previous version stays retrievable as a snapshot. A patch that
// changes nothing saves nothing.
func (a *App) UpdateContext(ctx context.Context, in ContextPatch) (*OrgContext, error) {
	pr, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	in.ChangeNote = strings.TrimSpace(in.ChangeNote)
	var out *OrgContext
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.CurrentContext(ctx, pr.OrgID)
		if errors.Is(err, ErrNotFound) {
			before, err = emptyContext(), nil
		}
		if err != nil {
			return err
		}
		if in.BaseVersion != nil && *in.BaseVersion != before.Version {
			return Errorf(ErrConflict, "the context is at version %d, not %d; reload it and apply your change again", before.Version, *in.BaseVersion)
		}
		c := *before
		ve := NewValidationError()
		in.apply(&c, ve)
		maxLen(ve, "changeNote", in.ChangeNote, 2000)
		if err := ve.Err(); err != nil {
			return err
		}
		if before.Version > 0 && sameDocument(before.Document(), c.Document()) {
			before.IsCurrent = true
			out = before
			return nil
		}
		now := a.Now()
		c.ID = Ptr(NewID(PrefixContext))
		c.Version = before.Version + 1
		c.ChangeNote = in.ChangeNote
		c.SavedBy = &ActorRef{Type: pr.ActorType(), ID: pr.ActorID()}
		c.SavedAt = &now
		c.IsCurrent = true
		if err := a.store.SaveContext(ctx, pr.OrgID, &c); err != nil {
			return err
		}
		out = &c
		var prev any
		if before.Version > 0 {
			prev = before.Document()
		}
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "context", ResourceID: *c.ID, Before: prev, After: c.Document()})
	})
	if err != nil {
		return nil, fmt.Errorf("update context: %w", err)
	}
	return out, nil
}

func sameDocument(a, b ContextDocument) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// ListContextSnapshots lists every saved version of the context, newest
// (the current one) first.
func (a *App) ListContextSnapshots(ctx context.Context, pg Page) (List[OrgContext], error) {
	pr, err := principal(ctx)
	if err != nil {
		return List[OrgContext]{}, err
	}
	if err := readsOrgSettings(pr); err != nil {
		return List[OrgContext]{}, err
	}
	l, err := a.store.ListContextVersions(ctx, pr.OrgID, pg)
	if err != nil {
		return l, fmt.Errorf("list context snapshots: %w", err)
	}
	cur, err := a.store.CurrentContext(ctx, pr.OrgID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return l, err
	}
	for i := range l.Items {
		l.Items[i].IsCurrent = cur != nil && l.Items[i].Version == cur.Version
	}
	return l, nil
}

// GetContextSnapshot returns one saved version by id or by number.
func (a *App) GetContextSnapshot(ctx context.Context, ref string) (*OrgContext, error) {
	pr, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := readsOrgSettings(pr); err != nil {
		return nil, err
	}
	var c *OrgContext
	if n, ok := policyVersionNumber(ref); ok {
		c, err = a.store.GetContextVersion(ctx, pr.OrgID, "", n)
	} else {
		c, err = a.store.GetContextVersion(ctx, pr.OrgID, ref, 0)
	}
	if err != nil {
		return nil, err
	}
	cur, err := a.store.CurrentContext(ctx, pr.OrgID)
	if err != nil {
		return nil, err
	}
	c.IsCurrent = c.Version == cur.Version
	return c, nil
}
