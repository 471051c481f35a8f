package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// ID prefixes of the policy resources.
const (
	PrefixPolicyVersion = "plv"
	PrefixPolicyAck     = "pak"
)

// Policy statuses. A policy is a draft until its first publish; a published
// policy needs review while its draft has unpublished changes or its review
// date has passed.
const (
	PolicyDraft       = "draft"
	PolicyPublished   = "published"
	PolicyNeedsReview = "needs_review"
)

// Policy enumerations and limits.
var (
	PolicyStatuses    = []string{PolicyDraft, PolicyPublished, PolicyNeedsReview}
	PolicyFrequencies = []string{"monthly", "quarterly", "yearly"}
	PolicySorts       = []string{"name", "createdAt", "updatedAt", "lastPublishedAt", "reviewDate"}
	maxPolicyContent  = 500_000
	maxPolicyControls = 500
)

// Policy is a document the organization maintains, publishes as immutable
// numbered versions and has its people acknowledge. Content is the draft;
// published text lives in PolicyVersion.
type Policy struct {
	ID                    string     `json:"id"`
	Name                  string     `json:"name"`
	Description           string     `json:"description"`
	Status                string     `json:"status"`
	Content               string     `json:"content"`
	Frequency             *string    `json:"frequency"`
	Department            *string    `json:"department"`
	IsRequiredToSign      bool       `json:"isRequiredToSign"`
	ReviewDate            *string    `json:"reviewDate"`
	AssigneeID            *string    `json:"assigneeId"`
	ApproverID            *string    `json:"approverId"`
	Version               int        `json:"version"`
	CurrentVersionID      *string    `json:"currentVersionId"`
	LastPublishedAt       *time.Time `json:"lastPublishedAt"`
	HasUnpublishedChanges bool       `json:"hasUnpublishedChanges"`
	ControlIDs            []string   `json:"controlIds"`
	IsArchived            bool       `json:"isArchived"`
	ArchivedAt            *time.Time `json:"archivedAt"`
	CreatedAt             time.Time  `json:"createdAt"`
	UpdatedAt             time.Time  `json:"updatedAt"`
}

// PolicyInput is the body of POST and PATCH /v1/policies. Create requires
// name; status, version and the publish fields are server-owned.
type PolicyInput struct {
	Name             *string     `json:"name"`
	Description      *string     `json:"description"`
	Content          *string     `json:"content"`
	Frequency        Opt[string] `json:"frequency"`
	Department       Opt[string] `json:"department"`
	IsRequiredToSign *bool       `json:"isRequiredToSign"`
	ReviewDate       Opt[string] `json:"reviewDate"`
	AssigneeID       Opt[string] `json:"assigneeId"`
	ApproverID       Opt[string] `json:"approverId"`
	IsArchived       *bool       `json:"isArchived"`
	// ControlIDs links controls; on update it replaces the linked set (the
	// controls routes add and remove one by one).
	ControlIDs []string `json:"controlIds"`
}

// PolicyFilter holds the list's filters; they combine with AND.
type PolicyFilter struct {
	Status          string
	AssigneeID      string
	Department      string
	Frequency       string
	ControlID       string
	Search          string
	IncludeArchived bool
	Archived        bool // only archived policies
	// Acknowledged narrows to policies whose current version the caller has
	// (true) or has not (false) acknowledged.
	Acknowledged *bool
	// PersonID makes Acknowledged refer to this person instead of the caller.
	PersonID       string
	ExcludeContent bool
	Sort           string
	Page           Page

	// Set by the service, not by clients.
	Today    string // YYYY-MM-DD, for the needs_review rule
	ViewerID string // employee or contractor: published policies plus those assigned to them
	Viewer   bool   // ViewerID applies (it may be empty for a key without a person)
	AckBy    string // person for Acknowledged: PersonID or the caller
}

// PolicyVersion is one published, immutable version of a policy: the text
// as published with variables substituted, and the draft it came from.
type PolicyVersion struct {
	ID                  string            `json:"id"`
	PolicyID            string            `json:"policyId"`
	Version             int               `json:"version"`
	Name                string            `json:"name"`
	Description         string            `json:"description"`
	Content             string            `json:"content"`
	Source              string            `json:"source"`
	ContentSHA256       string            `json:"contentSha256"`
	Variables           map[string]string `json:"variables"`
	UnresolvedVariables []string          `json:"unresolvedVariables"`
	Changelog           string            `json:"changelog"`
	PublishedBy         ActorRef          `json:"publishedBy"`
	PublishedAt         time.Time         `json:"publishedAt"`
	IsCurrent           bool              `json:"isCurrent"`
}

// ActorRef names who did something: a person, an API key or the system.
type ActorRef struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// PublishInput is the body of POST /v1/policies/{id}/publish.
type PublishInput struct {
	Changelog string `json:"changelog"`
	// AllowUnresolved publishes even when the content uses variables that
	// are not defined, leaving their placeholders in the text.
	AllowUnresolved bool `json:"allowUnresolved"`
}

// PolicyAcknowledgement records that a person acknowledged one published
// version of a policy.
type PolicyAcknowledgement struct {
	ID             string    `json:"id"`
	PolicyID       string    `json:"policyId"`
	VersionID      string    `json:"versionId"`
	Version        int       `json:"version"`
	PersonID       string    `json:"personId"`
	AcknowledgedAt time.Time `json:"acknowledgedAt"`
}

// AcknowledgeInput is the optional body of POST /v1/policies/{id}/acknowledge.
// Version or VersionID, when given, must name the current version, so that
// nobody acknowledges a text other than the one they read.
type AcknowledgeInput struct {
	Version   *int    `json:"version"`
	VersionID *string `json:"versionId"`
}

// PolicyAckStatus is one person's acknowledgement state for a policy.
type PolicyAckStatus struct {
	PersonID   string  `json:"personId"`
	Name       string  `json:"name"`
	Email      string  `json:"email"`
	Role       Role    `json:"role"`
	Department *string `json:"department"`
	// Acknowledged is true when the person acknowledged the current version.
	Acknowledged   bool       `json:"acknowledged"`
	AcknowledgedAt *time.Time `json:"acknowledgedAt"`
	// LastAcknowledgedVersion is the newest version the person acknowledged, if any.
	LastAcknowledgedVersion *int `json:"lastAcknowledgedVersion"`
}

// PolicyAckSummary counts the people who must acknowledge the current version.
type PolicyAckSummary struct {
	PolicyID     string  `json:"policyId"`
	Version      int     `json:"version"`
	VersionID    *string `json:"versionId"`
	Required     int     `json:"required"`
	Acknowledged int     `json:"acknowledged"`
	Pending      int     `json:"pending"`
}

// PolicyAckFilter narrows the acknowledgement status list.
type PolicyAckFilter struct {
	Status   string // acknowledged, pending
	Role     string
	PersonID string // set by the service for employees and contractors
	Page     Page
}

// PolicyAckReport is the acknowledgement status of a policy.
type PolicyAckReport struct {
	Summary PolicyAckSummary
	People  List[PolicyAckStatus]
}

// PolicyPreview is what publishing the draft now would produce.
type PolicyPreview struct {
	PolicyID            string            `json:"policyId"`
	NextVersion         int               `json:"nextVersion"`
	Content             string            `json:"content"`
	Variables           map[string]string `json:"variables"`
	UnresolvedVariables []string          `json:"unresolvedVariables"`
}

// PolicyStore persists policies, versions, acknowledgements and control links.
type PolicyStore interface {
	CreatePolicy(ctx context.Context, orgID string, p *Policy) error
	UpdatePolicy(ctx context.Context, orgID string, p *Policy) error
	GetPolicy(ctx context.Context, orgID, id string) (*Policy, error)
	// DeletePolicy removes a never-published policy and its control links.
	DeletePolicy(ctx context.Context, orgID, id string) error
	ListPolicies(ctx context.Context, orgID string, f PolicyFilter) (List[Policy], error)
	CreatePolicyVersion(ctx context.Context, orgID string, v *PolicyVersion) error
	// GetPolicyVersion finds a version by id, or by number when id is empty.
	GetPolicyVersion(ctx context.Context, orgID, policyID, id string, number int) (*PolicyVersion, error)
	ListPolicyVersions(ctx context.Context, orgID, policyID string, pg Page) (List[PolicyVersion], error)
	CreatePolicyAck(ctx context.Context, orgID string, a *PolicyAcknowledgement) error
	GetPolicyAck(ctx context.Context, orgID, versionID, personID string) (*PolicyAcknowledgement, error)
	// ListPolicyAckStatus lists the active people other than auditors with
	// their state for version (0: none published), plus the counts.
	ListPolicyAckStatus(ctx context.Context, orgID, policyID string, version int, f PolicyAckFilter) (List[PolicyAckStatus], PolicyAckSummary, error)
	LinkPolicyControls(ctx context.Context, orgID, policyID string, controlIDs []string, at time.Time) error
	UnlinkPolicyControl(ctx context.Context, orgID, policyID, controlID string) error
	// ListPolicyControls lists the linked controls; ownerID, when set, keeps
	// only the controls that person owns.
	ListPolicyControls(ctx context.Context, orgID, policyID, ownerID string, pg Page) (List[Control], error)
}

// derive sets the computed fields from the stored ones.
func (p *Policy) derive(today string) {
	p.IsArchived = p.ArchivedAt != nil
	if p.ControlIDs == nil {
		p.ControlIDs = []string{}
	}
	switch {
	case p.Version == 0:
		p.Status = PolicyDraft
	case p.HasUnpublishedChanges || (p.ReviewDate != nil && *p.ReviewDate < today):
		p.Status = PolicyNeedsReview
	default:
		p.Status = PolicyPublished
	}
}

// publishedView turns a policy into what an employee who is not its
// assignee may see: the current published text, never the draft.
func (p *Policy) publishedView(v *PolicyVersion) {
	if v != nil {
		p.Name, p.Description, p.Content = v.Name, v.Description, v.Content
	}
	p.Status = PolicyPublished
	p.HasUnpublishedChanges = false
	p.ControlIDs = []string{}
}

func policyToday(t time.Time) string { return t.UTC().Format("2006-01-02") }

// apply copies the set fields of in onto p and validates them.
func (in *PolicyInput) apply(p *Policy, ve *ValidationError) (draftChanged bool) {
	if in.Name != nil {
		s := strings.TrimSpace(*in.Name)
		if s == "" {
			ve.Add("name", CodeRequired, nil, "name must not be empty")
		}
		maxLen(ve, "name", s, 255)
		draftChanged = draftChanged || s != p.Name
		p.Name = s
	}
	if in.Description != nil {
		s := strings.TrimSpace(*in.Description)
		maxLen(ve, "description", s, 5000)
		draftChanged = draftChanged || s != p.Description
		p.Description = s
	}
	if in.Content != nil {
		maxLen(ve, "content", *in.Content, maxPolicyContent)
		draftChanged = draftChanged || *in.Content != p.Content
		p.Content = *in.Content
	}
	if in.Frequency.Set {
		p.Frequency = nil
		if !in.Frequency.Null && in.Frequency.Value != "" {
			oneOf(ve, "frequency", in.Frequency.Value, PolicyFrequencies)
			p.Frequency = Ptr(in.Frequency.Value)
		}
	}
	if in.Department.Set {
		p.Department = nil
		if s := strings.TrimSpace(in.Department.Value); !in.Department.Null && s != "" {
			maxLen(ve, "department", s, 64)
			p.Department = &s
		}
	}
	if in.IsRequiredToSign != nil {
		p.IsRequiredToSign = *in.IsRequiredToSign
	}
	if in.ReviewDate.Set {
		p.ReviewDate = nil
		if !in.ReviewDate.Null && in.ReviewDate.Value != "" {
			if t, ok := ParseDate(in.ReviewDate.Value); ok {
				p.ReviewDate = Ptr(t.Format("2006-01-02"))
			} else {
				ve.Add("reviewDate", CodeInvalid, in.ReviewDate.Value, "reviewDate must be a date (YYYY-MM-DD)")
			}
		}
	}
	return draftChanged
}

// checkPolicyPeople validates assigneeId and approverId against the people
// of the organization.
func (a *App) checkPolicyPeople(ctx context.Context, orgID string, in PolicyInput, p *Policy, ve *ValidationError) error {
	for _, f := range []struct {
		name string
		src  Opt[string]
		dst  **string
	}{{"assigneeId", in.AssigneeID, &p.AssigneeID}, {"approverId", in.ApproverID, &p.ApproverID}} {
		if !f.src.Set {
			continue
		}
		*f.dst = nil
		id := strings.TrimSpace(f.src.Value)
		if f.src.Null || id == "" {
			continue
		}
		_, err := a.store.GetPerson(ctx, orgID, id)
		if errors.Is(err, ErrNotFound) {
			ve.Add(f.name, CodeUnknownReference, id, f.name+" must be a person of this organization")
			continue
		}
		if err != nil {
			return err
		}
		*f.dst = Ptr(id)
	}
	return nil
}

// checkControlIDs validates a list of control ids of the organization and
// returns it without duplicates.
func (a *App) checkControlIDs(ctx context.Context, orgID string, ids []string, ve *ValidationError) ([]string, error) {
	seen := map[string]bool{}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" {
			ve.Add("controlIds", CodeInvalid, id, "controlIds must not contain empty ids")
			continue
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(out) > maxPolicyControls {
		ve.Add("controlIds", CodeTooLong, len(out), fmt.Sprintf("controlIds may list at most %d controls", maxPolicyControls))
		return nil, nil
	}
	missing, err := a.store.MissingControls(ctx, orgID, out)
	if err != nil {
		return nil, fmt.Errorf("check controls: %w", err)
	}
	if len(missing) > 0 {
		ve.Add("controlIds", CodeUnknownReference, missing, "controlIds must be controls of this organization; unknown: "+strings.Join(missing, ", "))
	}
	return out, nil
}

// CreatePolicy adds a draft policy.
func (a *App) CreatePolicy(ctx context.Context, in PolicyInput) (*Policy, error) {
	pr, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	p := &Policy{ID: NewID(PrefixPolicy), IsRequiredToSign: true, HasUnpublishedChanges: true, ControlIDs: []string{},
		CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		ve.Add("name", CodeRequired, nil, "name is required")
	}
	in.apply(p, ve)
	if in.IsArchived != nil && *in.IsArchived {
		ve.Add("isArchived", CodeInvalid, true, "a policy cannot be created archived")
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.checkPolicyPeople(ctx, pr.OrgID, in, p, ve); err != nil {
			return err
		}
		ids, err := a.checkControlIDs(ctx, pr.OrgID, in.ControlIDs, ve)
		if err != nil {
			return err
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.CreatePolicy(ctx, pr.OrgID, p); err != nil {
			return err
		}
		if len(ids) > 0 {
			if err := a.store.LinkPolicyControls(ctx, pr.OrgID, p.ID, ids, now); err != nil {
				return err
			}
			sort.Strings(ids)
			p.ControlIDs = ids
		}
		p.derive(policyToday(now))
		return a.record(ctx, Mutation{Action: "created", ResourceType: "policy", ResourceID: p.ID, After: p,
			Events: []Event{ResourceEvent("policy", "created", p)}})
	})
	if err != nil {
		return nil, fmt.Errorf("create policy: %w", err)
	}
	return p, nil
}

// UpdatePolicy applies a patch to a policy's draft and settings. Published
// versions are never touched.
func (a *App) UpdatePolicy(ctx context.Context, id string, in PolicyInput) (*Policy, error) {
	pr, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *Policy
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetPolicy(ctx, pr.OrgID, id)
		if err != nil {
			return err
		}
		now := a.Now()
		before.derive(policyToday(now))
		p := *before
		ve := NewValidationError()
		if in.apply(&p, ve) {
			p.HasUnpublishedChanges = true
		}
		if err := a.checkPolicyPeople(ctx, pr.OrgID, in, &p, ve); err != nil {
			return err
		}
		var ids []string
		if in.ControlIDs != nil {
			if ids, err = a.checkControlIDs(ctx, pr.OrgID, in.ControlIDs, ve); err != nil {
				return err
			}
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if in.ControlIDs != nil {
			if err := a.replacePolicyControls(ctx, pr.OrgID, id, before.ControlIDs, ids, now); err != nil {
				return err
			}
			sort.Strings(ids)
			p.ControlIDs = ids
		}
		if in.IsArchived != nil {
			switch {
			case *in.IsArchived && p.ArchivedAt == nil:
				p.ArchivedAt = &now
			case !*in.IsArchived:
				p.ArchivedAt = nil
			}
		}
		p.UpdatedAt = now
		p.derive(policyToday(now))
		if err := a.store.UpdatePolicy(ctx, pr.OrgID, &p); err != nil {
			return err
		}
		out = &p
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "policy", ResourceID: id, Before: before, After: &p,
			Events: []Event{ResourceEvent("policy", "updated", &p)}})
	})
	if err != nil {
		return nil, fmt.Errorf("update policy %s: %w", id, err)
	}
	return out, nil
}

// DeletePolicy removes a policy that was never published. A published
// policy keeps its versions and acknowledgements as records; archive it.
func (a *App) DeletePolicy(ctx context.Context, id string) error {
	pr, err := principal(ctx)
	if err != nil {
		return err
	}
	if err := pr.Require(CapManage); err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetPolicy(ctx, pr.OrgID, id)
		if err != nil {
			return err
		}
		if before.Version > 0 {
			return Errorf(ErrConflict, "policy %s has published versions, which are kept as records; archive it instead (isArchived: true)", id)
		}
		before.derive(policyToday(a.Now()))
		if err := a.store.DeletePolicy(ctx, pr.OrgID, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "policy", ResourceID: id, Before: before,
			Events: []Event{ResourceEvent("policy", "deleted", before)}})
	})
	if err != nil {
		return fmt.Errorf("delete policy %s: %w", id, err)
	}
	return nil
}

// replacePolicyControls makes the linked set of a policy equal to want.
func (a *App) replacePolicyControls(ctx context.Context, orgID, id string, have, want []string, at time.Time) error {
	keep := map[string]bool{}
	for _, c := range want {
		keep[c] = true
	}
	for _, c := range have {
		if !keep[c] {
			if err := a.store.UnlinkPolicyControl(ctx, orgID, id, c); err != nil {
				return fmt.Errorf("unlink control %s: %w", c, err)
			}
		}
	}
	return a.store.LinkPolicyControls(ctx, orgID, id, want, at)
}

// visiblePolicy loads a policy as the caller may see it: employees and
// contractors see published, unarchived policies in their published form,
// and the policies assigned to them as stored.
func (a *App) visiblePolicy(ctx context.Context, pr *Principal, id string) (*Policy, error) {
	p, err := a.store.GetPolicy(ctx, pr.OrgID, id)
	if err != nil {
		return nil, err
	}
	p.derive(policyToday(a.Now()))
	if !pr.SeesOnlyAssigned() {
		return p, nil
	}
	if pr.UserID != "" && p.AssigneeID != nil && *p.AssigneeID == pr.UserID {
		return p, nil
	}
	if p.Version == 0 || p.ArchivedAt != nil || p.CurrentVersionID == nil {
		return nil, ErrNotFound
	}
	v, err := a.store.GetPolicyVersion(ctx, pr.OrgID, p.ID, *p.CurrentVersionID, 0)
	if err != nil {
		return nil, fmt.Errorf("load current version of %s: %w", p.ID, err)
	}
	p.publishedView(v)
	return p, nil
}

// GetPolicy returns one policy as the caller may see it.
func (a *App) GetPolicy(ctx context.Context, id string) (*Policy, error) {
	pr, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	return a.visiblePolicy(ctx, pr, id)
}

// ListPolicies lists policies matching every filter given.
func (a *App) ListPolicies(ctx context.Context, f PolicyFilter) (List[Policy], error) {
	pr, err := principal(ctx)
	if err != nil {
		return List[Policy]{}, err
	}
	ve := NewValidationError()
	oneOf(ve, "status", f.Status, PolicyStatuses)
	oneOf(ve, "frequency", f.Frequency, PolicyFrequencies)
	if f.Sort != "" {
		key := strings.TrimPrefix(f.Sort, "-")
		ok := false
		for _, s := range PolicySorts {
			ok = ok || s == key
		}
		if !ok {
			ve.Add("sort", CodeInvalidEnum, f.Sort, "sort must be one of "+strings.Join(PolicySorts, ", ")+" with an optional - prefix")
		}
	}
	f.AckBy = pr.UserID
	if f.PersonID != "" {
		if f.Acknowledged == nil {
			ve.Add("personId", CodeInvalid, f.PersonID, "personId applies to the acknowledged filter; give acknowledged=true or false")
		}
		if pr.SeesOnlyAssigned() && f.PersonID != pr.UserID {
			return List[Policy]{Items: []Policy{}}, nil
		}
		f.AckBy = f.PersonID
	}
	if f.Acknowledged != nil && f.AckBy == "" {
		ve.Add("acknowledged", CodeInvalid, *f.Acknowledged, "acknowledged filters by the caller's own acknowledgements unless personId is given; this credential does not act for a person")
	}
	if err := ve.Err(); err != nil {
		return List[Policy]{}, err
	}
	if f.PersonID != "" {
		if _, err := a.store.GetPerson(ctx, pr.OrgID, f.PersonID); errors.Is(err, ErrNotFound) {
			return List[Policy]{}, Invalid("personId", CodeUnknownReference, f.PersonID, "personId must be a person of this organization")
		} else if err != nil {
			return List[Policy]{}, err
		}
	}
	now := a.Now()
	f.Today = policyToday(now)
	if pr.SeesOnlyAssigned() {
		f.Viewer, f.ViewerID = true, pr.UserID
	}
	l, err := a.store.ListPolicies(ctx, pr.OrgID, f)
	if err != nil {
		return l, fmt.Errorf("list policies: %w", err)
	}
	for i := range l.Items {
		p := &l.Items[i]
		p.derive(f.Today)
		if f.Viewer && (p.AssigneeID == nil || *p.AssigneeID != f.ViewerID) {
			// The store already selected the published text for these rows.
			p.publishedView(nil)
		}
	}
	return l, nil
}

// ListPolicyVersions lists a policy's published versions, newest first.
func (a *App) ListPolicyVersions(ctx context.Context, id string, pg Page) (List[PolicyVersion], error) {
	pr, err := principal(ctx)
	if err != nil {
		return List[PolicyVersion]{}, err
	}
	p, err := a.visiblePolicy(ctx, pr, id)
	if err != nil {
		return List[PolicyVersion]{}, err
	}
	l, err := a.store.ListPolicyVersions(ctx, pr.OrgID, id, pg)
	if err != nil {
		return l, fmt.Errorf("list versions of policy %s: %w", id, err)
	}
	for i := range l.Items {
		l.Items[i].IsCurrent = l.Items[i].Version == p.Version
	}
	return l, nil
}

// GetPolicyVersion returns one published version by id or by number.
func (a *App) GetPolicyVersion(ctx context.Context, id, versionRef string) (*PolicyVersion, error) {
	pr, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	p, err := a.visiblePolicy(ctx, pr, id)
	if err != nil {
		return nil, err
	}
	var v *PolicyVersion
	if n, ok := policyVersionNumber(versionRef); ok {
		v, err = a.store.GetPolicyVersion(ctx, pr.OrgID, id, "", n)
	} else {
		v, err = a.store.GetPolicyVersion(ctx, pr.OrgID, id, versionRef, 0)
	}
	if err != nil {
		return nil, err
	}
	v.IsCurrent = v.Version == p.Version
	return v, nil
}

func policyVersionNumber(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n > 0
}

// renderPolicy substitutes the organization's variables into the draft.
func (a *App) renderPolicy(ctx context.Context, orgID string, p *Policy, version int, at time.Time) (Rendered, error) {
	vars, err := a.variableValues(ctx, orgID, map[string]string{
		"policy_name":    p.Name,
		"policy_version": itoa(version),
		"published_date": policyToday(at),
	})
	if err != nil {
		return Rendered{}, err
	}
	return Render(p.Content, vars), nil
}

// PreviewPolicy renders the draft as publishing it now would, without
// publishing. Employees and contractors may preview only policies assigned
// to them.
func (a *App) PreviewPolicy(ctx context.Context, id string) (*PolicyPreview, error) {
	pr, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	p, err := a.store.GetPolicy(ctx, pr.OrgID, id)
	if err != nil {
		return nil, err
	}
	if pr.SeesOnlyAssigned() && (pr.UserID == "" || p.AssigneeID == nil || *p.AssigneeID != pr.UserID) {
		return nil, ErrNotFound
	}
	r, err := a.renderPolicy(ctx, pr.OrgID, p, p.Version+1, a.Now())
	if err != nil {
		return nil, fmt.Errorf("preview policy %s: %w", id, err)
	}
	return &PolicyPreview{PolicyID: p.ID, NextVersion: p.Version + 1, Content: r.Content, Variables: r.Used, UnresolvedVariables: r.Unresolved}, nil
}

// PublishPolicy publishes the draft as the next numbered, immutable version
// with the organization's variables substituted. Unknown variables are a
// validation error naming them unless in.AllowUnresolved is set.
func (a *App) PublishPolicy(ctx context.Context, id string, in PublishInput) (*PolicyVersion, error) {
	pr, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	in.Changelog = strings.TrimSpace(in.Changelog)
	var out *PolicyVersion
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetPolicy(ctx, pr.OrgID, id)
		if err != nil {
			return err
		}
		now := a.Now()
		before.derive(policyToday(now))
		if before.ArchivedAt != nil {
			return Errorf(ErrConflict, "policy %s is archived; restore it (isArchived: false) before publishing", id)
		}
		ve := NewValidationError()
		if strings.TrimSpace(before.Content) == "" {
			ve.Add("content", CodeRequired, nil, "the policy has no content to publish")
		}
		maxLen(ve, "changelog", in.Changelog, 5000)
		if err := ve.Err(); err != nil {
			return err
		}
		next := before.Version + 1
		r, err := a.renderPolicy(ctx, pr.OrgID, before, next, now)
		if err != nil {
			return err
		}
		if len(r.Unresolved) > 0 && !in.AllowUnresolved {
			names := make([]string, len(r.Unresolved))
			for i, n := range r.Unresolved {
				names[i] = "{{" + n + "}}"
			}
			return Invalid("content", CodeUnknownReference, r.Unresolved,
				"content uses variables that are not defined: "+strings.Join(names, ", ")+
					"; define them under /v1/variables or publish with allowUnresolved: true to keep the placeholders")
		}
		sum := sha256.Sum256([]byte(r.Content))
		v := &PolicyVersion{ID: NewID(PrefixPolicyVersion), PolicyID: id, Version: next, Name: before.Name,
			Description: before.Description, Content: r.Content, Source: before.Content, ContentSHA256: hex.EncodeToString(sum[:]),
			Variables: r.Used, UnresolvedVariables: r.Unresolved, Changelog: in.Changelog,
			PublishedBy: ActorRef{Type: pr.ActorType(), ID: pr.ActorID()}, PublishedAt: now, IsCurrent: true}
		if err := a.store.CreatePolicyVersion(ctx, pr.OrgID, v); err != nil {
			return err
		}
		p := *before
		p.Version, p.CurrentVersionID, p.LastPublishedAt = next, &v.ID, &now
		p.HasUnpublishedChanges = false
		if p.Frequency != nil {
			// Publishing is the review: the next one is due a period later.
			p.ReviewDate = Ptr(nextReview(now, *p.Frequency))
		}
		p.UpdatedAt = now
		p.derive(policyToday(now))
		if err := a.store.UpdatePolicy(ctx, pr.OrgID, &p); err != nil {
			return err
		}
		out = v
		return a.record(ctx, Mutation{Action: "published", ResourceType: "policy", ResourceID: id, Before: before, After: &p,
			Events: []Event{ResourceEvent("policy", "published", policyPublishedData{Policy: &p, Version: versionSummary(v)})}})
	})
	if err != nil {
		return nil, fmt.Errorf("publish policy %s: %w", id, err)
	}
	return out, nil
}

// nextReview is the date a review is due after one at t.
func nextReview(t time.Time, frequency string) string {
	switch frequency {
	case "monthly":
		t = t.AddDate(0, 1, 0)
	case "quarterly":
		t = t.AddDate(0, 3, 0)
	default:
		t = t.AddDate(1, 0, 0)
	}
	return policyToday(t)
}

// policyPublishedData is the payload of policy.published.
type policyPublishedData struct {
	Policy  *Policy           `json:"policy"`
	Version *publishedVersion `json:"version"`
}

type publishedVersion struct {
	ID                  string    `json:"id"`
	Version             int       `json:"version"`
	ContentSHA256       string    `json:"contentSha256"`
	UnresolvedVariables []string  `json:"unresolvedVariables"`
	Changelog           string    `json:"changelog"`
	PublishedBy         ActorRef  `json:"publishedBy"`
	PublishedAt         time.Time `json:"publishedAt"`
}

func versionSummary(v *PolicyVersion) *publishedVersion {
	return &publishedVersion{ID: v.ID, Version: v.Version, ContentSHA256: v.ContentSHA256, UnresolvedVariables: v.UnresolvedVariables,
		Changelog: v.Changelog, PublishedBy: v.PublishedBy, PublishedAt: v.PublishedAt}
}

// AcknowledgePolicy records that the caller's person acknowledged the
// current published version. It reports created=false when they already had.
func (a *App) AcknowledgePolicy(ctx context.Context, id string, in AcknowledgeInput) (*PolicyAcknowledgement, bool, error) {
	pr, err := authorize(ctx, CapSelfService)
	if err != nil {
		return nil, false, err
	}
	if pr.UserID == "" {
		return nil, false, Errorf(ErrForbidden, "acknowledging a policy needs a person: this credential does not act for one")
	}
	var out *PolicyAcknowledgement
	created := false
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		p, err := a.visiblePolicy(ctx, pr, id)
		if err != nil {
			return err
		}
		if p.ArchivedAt != nil {
			return Errorf(ErrConflict, "policy %s is archived", id)
		}
		if p.Version == 0 || p.CurrentVersionID == nil {
			return Errorf(ErrConflict, "policy %s has no published version to acknowledge", id)
		}
		if in.Version != nil && *in.Version != p.Version {
			return Errorf(ErrConflict, "version %d is not the current version of policy %s (%d)", *in.Version, id, p.Version)
		}
		if in.VersionID != nil && *in.VersionID != *p.CurrentVersionID {
			return Errorf(ErrConflict, "version %s is not the current version of policy %s (%s)", *in.VersionID, id, *p.CurrentVersionID)
		}
		person, err := a.store.GetPerson(ctx, pr.OrgID, pr.UserID)
		if errors.Is(err, ErrNotFound) || (err == nil && !person.IsActive) {
			return Errorf(ErrForbidden, "acknowledging a policy needs an active person of this organization")
		}
		if err != nil {
			return err
		}
		existing, err := a.store.GetPolicyAck(ctx, pr.OrgID, *p.CurrentVersionID, pr.UserID)
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		ack := &PolicyAcknowledgement{ID: NewID(PrefixPolicyAck), PolicyID: id, VersionID: *p.CurrentVersionID, Version: p.Version,
			PersonID: pr.UserID, AcknowledgedAt: a.Now()}
		if err := a.store.CreatePolicyAck(ctx, pr.OrgID, ack); err != nil {
			return err
		}
		out, created = ack, true
		return a.record(ctx, Mutation{Action: "acknowledged", ResourceType: "policy", ResourceID: id, After: ack,
			Events: []Event{ResourceEvent("policy", "acknowledged", ack)}})
	})
	if err != nil {
		return nil, false, fmt.Errorf("acknowledge policy %s: %w", id, err)
	}
	return out, created, nil
}

// PolicyAcknowledgements reports who acknowledged the current version and
// who has not. Everyone active in the organization except auditors is
// expected to acknowledge; employees and contractors see only themselves.
func (a *App) PolicyAcknowledgements(ctx context.Context, id string, f PolicyAckFilter) (*PolicyAckReport, error) {
	pr, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	oneOf(ve, "status", f.Status, []string{"acknowledged", "pending"})
	if f.Role != "" {
		if _, ok := ParseRole(f.Role); !ok {
			ve.Add("role", CodeInvalidEnum, f.Role, "role must be one of owner, admin, auditor, employee, contractor")
		}
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	p, err := a.visiblePolicy(ctx, pr, id)
	if err != nil {
		return nil, err
	}
	if pr.SeesOnlyAssigned() {
		f.PersonID = pr.UserID
		if f.PersonID == "" {
			f.PersonID = "-"
		}
	}
	l, sum, err := a.store.ListPolicyAckStatus(ctx, pr.OrgID, id, p.Version, f)
	if err != nil {
		return nil, fmt.Errorf("acknowledgement status of policy %s: %w", id, err)
	}
	sum.PolicyID, sum.Version, sum.VersionID = id, p.Version, p.CurrentVersionID
	return &PolicyAckReport{Summary: sum, People: l}, nil
}

// LinkPolicyControls links controls to a policy; linking a linked control
// again changes nothing.
func (a *App) LinkPolicyControls(ctx context.Context, id string, controlIDs []string) (*Policy, error) {
	pr, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *Policy
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetPolicy(ctx, pr.OrgID, id)
		if err != nil {
			return err
		}
		now := a.Now()
		before.derive(policyToday(now))
		ve := NewValidationError()
		if len(controlIDs) == 0 {
			ve.Add("controlIds", CodeRequired, nil, "controlIds must list at least one control")
		}
		ids, err := a.checkControlIDs(ctx, pr.OrgID, controlIDs, ve)
		if err != nil {
			return err
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.LinkPolicyControls(ctx, pr.OrgID, id, ids, now); err != nil {
			return err
		}
		after, err := a.store.GetPolicy(ctx, pr.OrgID, id)
		if err != nil {
			return err
		}
		after.derive(policyToday(now))
		out = after
		if len(after.ControlIDs) == len(before.ControlIDs) {
			return nil
		}
		return a.record(ctx, Mutation{Action: "controls_linked", ResourceType: "policy", ResourceID: id, Before: before, After: after,
			Events: []Event{ResourceEvent("policy", "updated", after)}})
	})
	if err != nil {
		return nil, fmt.Errorf("link controls to policy %s: %w", id, err)
	}
	return out, nil
}

// UnlinkPolicyControl removes one control link; an unlinked control is 404.
func (a *App) UnlinkPolicyControl(ctx context.Context, id, controlID string) error {
	pr, err := principal(ctx)
	if err != nil {
		return err
	}
	if err := pr.Require(CapManage); err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetPolicy(ctx, pr.OrgID, id)
		if err != nil {
			return err
		}
		now := a.Now()
		before.derive(policyToday(now))
		if err := a.store.UnlinkPolicyControl(ctx, pr.OrgID, id, controlID); err != nil {
			if errors.Is(err, ErrNotFound) {
				return Errorf(ErrNotFound, "control %s is not linked to policy %s", controlID, id)
			}
			return err
		}
		after, err := a.store.GetPolicy(ctx, pr.OrgID, id)
		if err != nil {
			return err
		}
		after.derive(policyToday(now))
		return a.record(ctx, Mutation{Action: "control_unlinked", ResourceType: "policy", ResourceID: id, Before: before, After: after,
			Events: []Event{ResourceEvent("policy", "updated", after)}})
	})
	if err != nil {
		return fmt.Errorf("unlink control from policy %s: %w", id, err)
	}
	return nil
}

// ListPolicyControls lists the controls linked to a policy; employees and
// contractors see only those they own.
func (a *App) ListPolicyControls(ctx context.Context, id string, pg Page) (List[Control], error) {
	pr, err := principal(ctx)
	if err != nil {
		return List[Control]{}, err
	}
	if _, err := a.visiblePolicy(ctx, pr, id); err != nil {
		return List[Control]{}, err
	}
	owner := ""
	if pr.SeesOnlyAssigned() {
		// Employees and contractors see the controls they own, nothing else.
		if owner = pr.UserID; owner == "" {
			return List[Control]{Items: []Control{}}, nil
		}
	}
	l, err := a.store.ListPolicyControls(ctx, pr.OrgID, id, owner, pg)
	if err != nil {
		return l, fmt.Errorf("list controls of policy %s: %w", id, err)
	}
	return l, nil
}
