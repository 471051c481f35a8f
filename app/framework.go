package app

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Framework is a compliance framework: one of the built-in catalogs or an
// organization's custom framework. Enabled, EnabledAt, Score and Counts
// describe the organization's view.
type Framework struct {
	ID               string           `json:"id"`
	Slug             string           `json:"slug"`
	Name             string           `json:"name"`
	ShortName        string           `json:"shortName"`
	Version          string           `json:"version"`
	Publisher        string           `json:"publisher"`
	Description      string           `json:"description"`
	Custom           bool             `json:"custom"`
	Coverage         string           `json:"coverage"`
	Notes            string           `json:"notes"`
	License          string           `json:"license"`
	Sources          []FrameworkPart  `json:"sources"`
	RequirementCount int              `json:"requirementCount"`
	AssessableCount  int              `json:"assessableCount"`
	Enabled          bool             `json:"enabled"`
	EnabledAt        *time.Time       `json:"enabledAt"`
	Score            *int             `json:"score"`
	Counts           *FrameworkCounts `json:"counts,omitempty"`
	CreatedAt        *time.Time       `json:"createdAt,omitempty"`
	UpdatedAt        *time.Time       `json:"updatedAt,omitempty"`
}

// FrameworkCounts are an enabled framework's numbers: its controls per
// status and its assessable requirements by outcome.
type FrameworkCounts struct {
	Controls     map[string]int    `json:"controls"`
	ControlTotal int               `json:"controlTotal"`
	Requirements RequirementCounts `json:"requirements"`
}

// RequirementCounts splits a framework's assessable requirements.
type RequirementCounts struct {
	Total         int `json:"total"`
	Met           int `json:"met"`
	NotMet        int `json:"notMet"`
	NotApplicable int `json:"notApplicable"`
}

// Requirement is one node of a framework: a requirement, or a heading when
// not assessable. ControlIDs are the organization's controls serving it.
type Requirement struct {
	ID          string   `json:"id"`
	FrameworkID string   `json:"frameworkId"`
	Ref         string   `json:"ref"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	ParentRef   string   `json:"parentRef"`
	ParentID    *string  `json:"parentId"`
	Assessable  bool     `json:"assessable"`
	Custom      bool     `json:"custom"`
	Position    int      `json:"position"`
	ControlIDs  []string `json:"controlIds"`
}

// RequirementLink is a requirement a control serves, with its framework.
type RequirementLink struct {
	FrameworkID   string `json:"frameworkId"`
	FrameworkSlug string `json:"frameworkSlug"`
	FrameworkName string `json:"frameworkName"`
	RequirementID string `json:"requirementId"`
	Ref           string `json:"ref"`
	Title         string `json:"title"`
}

// FrameworkInput is the body of POST and PATCH /v1/frameworks (custom frameworks).
type FrameworkInput struct {
	Name        *string `json:"name"`
	Slug        *string `json:"slug"`
	ShortName   *string `json:"shortName"`
	Version     *string `json:"version"`
	Description *string `json:"description"`
}

// RequirementInput is the body of POST /v1/frameworks/{id}/requirements.
type RequirementInput struct {
	Ref         *string  `json:"ref"`
	Title       *string  `json:"title"`
	Description *string  `json:"description"`
	ParentRef   *string  `json:"parentRef"`
	Assessable  *bool    `json:"assessable"`
	ControlIDs  []string `json:"controlIds"`
}

// RequirementControl links a requirement to a control.
type RequirementControl struct {
	FrameworkID   string
	RequirementID string
	ControlID     string
}

// ControlState is what the score needs of a control serving a requirement.
type ControlState struct {
	RequirementID string
	ControlID     string
	Status        string
	// BlockingFindings counts the open findings linked to the control
	// whose severity keeps it from counting as met.
	BlockingFindings int
}

// FrameworkStore persists organizations' frameworks and requirement links.
type FrameworkStore interface {
	EnabledFrameworks(ctx context.Context, orgID string) (map[string]time.Time, error)
	EnableFramework(ctx context.Context, orgID, frameworkID string, at time.Time) error
	CreateCustomFramework(ctx context.Context, orgID string, f *Framework) error
	UpdateCustomFramework(ctx context.Context, orgID string, f *Framework) error
	GetCustomFramework(ctx context.Context, orgID, idOrSlug string) (*Framework, error)
	ListCustomFrameworks(ctx context.Context, orgID string) ([]Framework, error)
	CreateCustomRequirement(ctx context.Context, orgID string, r *Requirement, at time.Time) error
	ListCustomRequirements(ctx context.Context, orgID, frameworkID string) ([]Requirement, error)
	GetCustomRequirement(ctx context.Context, orgID, id string) (*Requirement, error)
	OrgRequirementControls(ctx context.Context, orgID string) (map[string][]string, error)
	LinkRequirementControls(ctx context.Context, orgID string, links []RequirementControl, at time.Time) error
	FrameworkControlStates(ctx context.Context, orgID, frameworkID string) ([]ControlState, error)
	ControlRequirementLinks(ctx context.Context, orgID string, controlIDs []string) (map[string][]RequirementControl, error)
	CreateControls(ctx context.Context, orgID string, cs []*Control) error
}

// controlCountsAsMet is the single "counts as met" rule: whether a control
// counts toward a framework's score. A control counts as met when it is
// implemented and no blocking finding (see findingBlocks) is linked to it.
func controlCountsAsMet(c ControlState) bool {
	return c.Status == ControlImplemented && c.BlockingFindings == 0
}

// findingBlocks: an open or in-review finding of severity critical, high or
// medium linked to a control keeps the control from counting as met; low and
// informational findings are shown on the control but do not block it.
// Resolved and closed findings never block.
func findingBlocks(f OpenFinding) bool {
	if f.Status != "" && f.Status != FindingOpen && f.Status != FindingInReview {
		return false
	}
	switch f.Severity {
	case "critical", "high", "medium":
		return true
	}
	return false
}

// blockingFindings counts, per control id, the blocking findings linked to
// it, from one query over the organization's open findings.
func (a *App) blockingFindings(ctx context.Context, orgID string) (map[string]int, error) {
	open, err := a.store.OpenFindingsByControl(ctx, orgID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(open))
	for id, fs := range open {
		for _, f := range fs {
			if findingBlocks(f) {
				out[id]++
			}
		}
	}
	return out, nil
}

var slugRx = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// catalog returns the built-in catalog or an internal error.
func (a *App) catalog() (*Catalog, error) { return BuiltinCatalog() }

// resolveFramework finds a built-in (by id or slug) or an organization's
// custom framework; enablement is filled in.
func (a *App) resolveFramework(ctx context.Context, orgID, idOrSlug string) (*Framework, *builtinFramework, error) {
	c, err := a.catalog()
	if err != nil {
		return nil, nil, err
	}
	var fw Framework
	b := c.lookup(idOrSlug)
	if b != nil {
		fw = b.fw
		fw.Sources = append([]FrameworkPart{}, b.fw.Sources...)
	} else {
		cf, err := a.store.GetCustomFramework(ctx, orgID, idOrSlug)
		if err != nil {
			return nil, nil, err
		}
		fw = *cf
	}
	enabled, err := a.store.EnabledFrameworks(ctx, orgID)
	if err != nil {
		return nil, nil, err
	}
	if at, ok := enabled[fw.ID]; ok {
		fw.Enabled, fw.EnabledAt = true, Ptr(at)
	}
	if b != nil && fw.Coverage == CoverageOutline {
		extra, err := a.store.ListCustomRequirements(ctx, orgID, fw.ID)
		if err != nil {
			return nil, nil, err
		}
		fw.RequirementCount += len(extra)
		for _, r := range extra {
			if r.Assessable {
				fw.AssessableCount++
			}
		}
	}
	return &fw, b, nil
}

// frameworkRequirements returns every requirement of a framework: the
// built-in catalog's plus those the organization added.
func (a *App) frameworkRequirements(ctx context.Context, orgID string, fw *Framework, b *builtinFramework) ([]Requirement, error) {
	var out []Requirement
	if b != nil {
		out = append(out, b.reqs...)
		if fw.Coverage != CoverageOutline {
			return out, nil
		}
	}
	extra, err := a.store.ListCustomRequirements(ctx, orgID, fw.ID)
	if err != nil {
		return nil, err
	}
	for _, r := range extra {
		r.Position += len(out)
		out = append(out, r)
	}
	return out, nil
}

// ListFrameworks lists the built-in frameworks and the organization's custom
// ones, each with enabled and, when enabled, score.
func (a *App) ListFrameworks(ctx context.Context, enabledOnly *bool, page Page) (List[Framework], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Framework]{}, err
	}
	c, err := a.catalog()
	if err != nil {
		return List[Framework]{}, err
	}
	all := c.Frameworks()
	custom, err := a.store.ListCustomFrameworks(ctx, p.OrgID)
	if err != nil {
		return List[Framework]{}, err
	}
	all = append(all, custom...)
	enabled, err := a.store.EnabledFrameworks(ctx, p.OrgID)
	if err != nil {
		return List[Framework]{}, err
	}
	var sel []Framework
	for _, f := range all {
		at, on := enabled[f.ID]
		if enabledOnly != nil && *enabledOnly != on {
			continue
		}
		if on {
			f.Enabled, f.EnabledAt = true, Ptr(at)
		}
		sel = append(sel, f)
	}
	out := List[Framework]{Total: len(sel), Items: []Framework{}}
	for i := page.Offset(); i < len(sel) && i < page.Offset()+page.PerPage; i++ {
		f := sel[i]
		if f.Enabled {
			fw, b, err := a.resolveFramework(ctx, p.OrgID, f.ID)
			if err != nil {
				return out, err
			}
			_, score, err := a.score(ctx, p.OrgID, fw, b)
			if err != nil {
				return out, err
			}
			f.Score = &score
			f.RequirementCount, f.AssessableCount = fw.RequirementCount, fw.AssessableCount
		}
		out.Items = append(out.Items, f)
	}
	return out, nil
}

// GetFramework returns a framework by id or slug with its source and
// licence note and, when enabled, its score and counts.
func (a *App) GetFramework(ctx context.Context, idOrSlug string) (*Framework, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	fw, b, err := a.resolveFramework(ctx, p.OrgID, idOrSlug)
	if err != nil {
		return nil, err
	}
	if fw.Enabled {
		counts, score, err := a.score(ctx, p.OrgID, fw, b)
		if err != nil {
			return nil, err
		}
		fw.Score, fw.Counts = &score, counts
	}
	return fw, nil
}

// FrameworkScore computes an enabled framework's score (0-100) and counts.
func (a *App) FrameworkScore(ctx context.Context, idOrSlug string) (int, *FrameworkCounts, error) {
	p, err := principal(ctx)
	if err != nil {
		return 0, nil, err
	}
	fw, b, err := a.resolveFramework(ctx, p.OrgID, idOrSlug)
	if err != nil {
		return 0, nil, err
	}
	counts, score, err := a.score(ctx, p.OrgID, fw, b)
	return score, counts, err
}

// score: every assessable requirement is met when each control serving it
// that is not not-applicable counts as met (implemented, with no blocking
// open finding linked); it is not applicable when all
// its controls are, or when the Statement of Applicability excludes it; a
// requirement no control serves is not met. The score is
// met / (total - not applicable), rounded, 0 when nothing applies.
func (a *App) score(ctx context.Context, orgID string, fw *Framework, _ *builtinFramework) (*FrameworkCounts, int, error) {
	states, err := a.store.FrameworkControlStates(ctx, orgID, fw.ID)
	if err != nil {
		return nil, 0, err
	}
	excluded, err := a.store.SOAExclusions(ctx, orgID, fw.ID)
	if err != nil {
		return nil, 0, err
	}
	blocking, err := a.blockingFindings(ctx, orgID)
	if err != nil {
		return nil, 0, err
	}
	counts := &FrameworkCounts{Controls: make(map[string]int, len(ControlStatuses))}
	for _, s := range ControlStatuses {
		counts.Controls[s] = 0
	}
	type tally struct{ applicable, met int }
	byReq := make(map[string]*tally, len(states))
	seen := make(map[string]bool, len(states))
	for _, s := range states {
		if !seen[s.ControlID] {
			seen[s.ControlID] = true
			counts.Controls[s.Status]++
			counts.ControlTotal++
		}
		t := byReq[s.RequirementID]
		if t == nil {
			t = &tally{}
			byReq[s.RequirementID] = t
		}
		if s.Status == ControlNotApplicable {
			continue
		}
		t.applicable++
		s.BlockingFindings = blocking[s.ControlID]
		if controlCountsAsMet(s) {
			t.met++
		}
	}
	r := &counts.Requirements
	r.Total = fw.AssessableCount
	r.NotApplicable = len(excluded)
	for id, t := range byReq {
		switch {
		case excluded[id]:
		case t.applicable == 0:
			r.NotApplicable++
		case t.met == t.applicable:
			r.Met++
		}
	}
	// Requirements no control serves are not met.
	r.NotMet = max(0, r.Total-r.NotApplicable-r.Met)
	applicable := r.Total - r.NotApplicable
	score := 0
	if applicable > 0 {
		score = (r.Met*100 + applicable/2) / applicable
	}
	return counts, score, nil
}

// EnableFrameworkResult reports what enabling did.
type EnableFrameworkResult struct {
	Framework       *Framework `json:"framework"`
	ControlsCreated int        `json:"controlsCreated"`
	ControlsReused  int        `json:"controlsReused"`
	TasksCreated    int        `json:"tasksCreated"`
	AlreadyEnabled  bool       `json:"alreadyEnabled"`
}

// EnableFramework adds a framework to the organization: each assessable
// requirement is linked to a control. When a mapping ties the requirement to
// one already served by a control (of an enabled framework), that control is
// reused (each existing control for at most one requirement of the
// framework); otherwise a control is created. Task templates of the framework
// become tasks. The plan's framework limit applies.
func (a *App) EnableFramework(ctx context.Context, idOrSlug string) (*EnableFrameworkResult, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	c, err := a.catalog()
	if err != nil {
		return nil, err
	}
	res := &EnableFrameworkResult{}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		fw, b, err := a.resolveFramework(ctx, p.OrgID, idOrSlug)
		if err != nil {
			return err
		}
		if fw.Enabled {
			res.Framework, res.AlreadyEnabled = fw, true
			return nil
		}
		enabled, err := a.store.EnabledFrameworks(ctx, p.OrgID)
		if err != nil {
			return err
		}
		org, err := a.store.GetOrganization(ctx, p.OrgID)
		if err != nil {
			return err
		}
		if err := a.CheckLimit(org.Plan, "frameworks", len(enabled)); err != nil {
			return err
		}
		now := a.Now()
		if err := a.store.EnableFramework(ctx, p.OrgID, fw.ID, now); err != nil {
			return err
		}
		served, err := a.store.OrgRequirementControls(ctx, p.OrgID)
		if err != nil {
			return err
		}
		reqs, err := a.frameworkRequirements(ctx, p.OrgID, fw, b)
		if err != nil {
			return err
		}
		var links []RequirementControl
		var created []*Control
		reused := map[string]bool{}
		for i := range reqs {
			r := &reqs[i]
			if !r.Assessable || len(served[r.ID]) > 0 {
				continue
			}
			// Reuse the control of the first mapped requirement that is
			// served (served holds requirements of enabled frameworks and
			// explicitly linked ones). A control is reused for at most one
			// requirement of the framework being enabled: crosswalk pairs
			// mean "intersects", not "equals", so several requirements of
			// one framework never collapse into one control.
			ctl := ""
		candidates:
			for _, rel := range c.related[r.ID] {
				for _, id := range served[rel] {
					if !reused[id] {
						ctl = id
						break candidates
					}
				}
			}
			if ctl == "" {
				ctrl := newControlFor(fw, r, now)
				created = append(created, ctrl)
				ctl = ctrl.ID
			} else {
				reused[ctl] = true
			}
			served[r.ID] = []string{ctl}
			links = append(links, RequirementControl{FrameworkID: fw.ID, RequirementID: r.ID, ControlID: ctl})
		}
		if err := a.store.CreateControls(ctx, p.OrgID, created); err != nil {
			return err
		}
		if err := a.store.LinkRequirementControls(ctx, p.OrgID, links, now); err != nil {
			return err
		}
		n, err := a.instantiateTemplates(ctx, p.OrgID, fw.ID, "", served)
		if err != nil {
			return err
		}
		fw.Enabled, fw.EnabledAt = true, &now
		res.Framework, res.ControlsCreated, res.ControlsReused, res.TasksCreated = fw, len(created), len(reused), n
		return a.record(ctx, Mutation{Action: "enabled", ResourceType: "framework", ResourceID: fw.ID,
			After: map[string]any{"frameworkId": fw.ID, "slug": fw.Slug, "controlsCreated": len(created),
				"controlsReused": len(reused), "tasksCreated": n},
			Events: []Event{{Type: "framework.enabled", Data: map[string]any{"frameworkId": fw.ID, "slug": fw.Slug,
				"controlsCreated": len(created), "controlsReused": len(reused), "enabledAt": now}}}})
	})
	if err != nil {
		return nil, fmt.Errorf("enable framework %s: %w", idOrSlug, err)
	}
	counts, score, err := a.score(ctx, p.OrgID, res.Framework, c.lookup(res.Framework.ID))
	if err != nil {
		return nil, fmt.Errorf("score framework %s: %w", idOrSlug, err)
	}
	res.Framework.Score, res.Framework.Counts = &score, counts
	return res, nil
}

// newControlFor builds the control that first serves a requirement.
func newControlFor(fw *Framework, r *Requirement, now time.Time) *Control {
	short := fw.ShortName
	if short == "" {
		short = fw.Name
	}
	name := strings.TrimSpace(r.Title)
	if name == "" {
		name = truncate(strings.TrimSpace(r.Description), 200)
	}
	if name == "" {
		name = short + " " + r.Ref
	}
	return &Control{ID: NewID(PrefixControl), Code: short + " " + r.Ref, Name: name, Description: r.Description,
		Status: ControlNotStarted, CreatedAt: now, UpdatedAt: now}
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// ListRequirements lists a framework's requirements with the organization's
// controls serving each.
func (a *App) ListRequirements(ctx context.Context, idOrSlug string, page Page) (List[Requirement], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Requirement]{}, err
	}
	fw, b, err := a.resolveFramework(ctx, p.OrgID, idOrSlug)
	if err != nil {
		return List[Requirement]{}, err
	}
	reqs, err := a.frameworkRequirements(ctx, p.OrgID, fw, b)
	if err != nil {
		return List[Requirement]{}, err
	}
	served, err := a.store.OrgRequirementControls(ctx, p.OrgID)
	if err != nil {
		return List[Requirement]{}, err
	}
	out := List[Requirement]{Total: len(reqs), Items: []Requirement{}}
	for i := page.Offset(); i < len(reqs) && i < page.Offset()+page.PerPage; i++ {
		r := reqs[i]
		r.ControlIDs = append([]string{}, served[r.ID]...)
		out.Items = append(out.Items, r)
	}
	return out, nil
}

// GetRequirement returns one requirement of a framework.
func (a *App) GetRequirement(ctx context.Context, frameworkID, requirementID string) (*Requirement, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	return a.getRequirement(ctx, p.OrgID, frameworkID, requirementID)
}

func (a *App) getRequirement(ctx context.Context, orgID, frameworkID, requirementID string) (*Requirement, error) {
	fw, _, err := a.resolveFramework(ctx, orgID, frameworkID)
	if err != nil {
		return nil, err
	}
	c, err := a.catalog()
	if err != nil {
		return nil, err
	}
	r, _ := c.requirement(requirementID)
	if r == nil {
		r, err = a.store.GetCustomRequirement(ctx, orgID, requirementID)
		if err != nil {
			return nil, err
		}
	}
	if r.FrameworkID != fw.ID {
		return nil, ErrNotFound
	}
	served, err := a.store.OrgRequirementControls(ctx, orgID)
	if err != nil {
		return nil, err
	}
	r.ControlIDs = append([]string{}, served[r.ID]...)
	return r, nil
}

func (in *FrameworkInput) apply(f *Framework, ve *ValidationError) {
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
	set(&f.Name, in.Name, "name", 255, true)
	set(&f.ShortName, in.ShortName, "shortName", 64, false)
	set(&f.Version, in.Version, "version", 64, false)
	set(&f.Description, in.Description, "description", 20000, false)
	if in.Slug != nil {
		s := strings.TrimSpace(*in.Slug)
		if !slugRx.MatchString(s) {
			ve.Add("slug", CodeInvalid, *in.Slug, "slug must be 1-63 lowercase letters, digits, '.', '_' or '-'")
		}
		f.Slug = s
	}
}

func slugify(name string) string {
	var sb strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			sb.WriteRune(r)
			dash = false
		default:
			if !dash && sb.Len() > 0 {
				sb.WriteByte('-')
				dash = true
			}
		}
	}
	s := strings.Trim(sb.String(), "-")
	if len(s) > 48 {
		s = strings.Trim(s[:48], "-")
	}
	if s == "" {
		s = "framework"
	}
	return s
}

// CreateCustomFramework adds an organization's own framework. It behaves like
// a built-in one: add requirements, enable it, map requirements to controls.
func (a *App) CreateCustomFramework(ctx context.Context, in FrameworkInput) (*Framework, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	f := &Framework{ID: NewID(PrefixFramework), Custom: true, Coverage: CoverageCustom, Sources: []FrameworkPart{},
		Publisher: "", License: "Defined by the organization.", CreatedAt: &now, UpdatedAt: &now}
	ve := NewValidationError()
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		ve.Add("name", CodeRequired, nil, "name is required")
	}
	in.apply(f, ve)
	if in.Slug == nil {
		f.Slug = "custom-" + slugify(f.Name)
	}
	c, err := a.catalog()
	if err != nil {
		return nil, err
	}
	if c.bySlug[f.Slug] != nil {
		ve.Add("slug", CodeInvalid, f.Slug, "slug is taken by a built-in framework")
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.CreateCustomFramework(ctx, p.OrgID, f); err != nil {
			if errors.Is(err, ErrConflict) {
				return Errorf(ErrConflict, "a framework with slug %q already exists", f.Slug)
			}
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "framework", ResourceID: f.ID, After: f})
	})
	if err != nil {
		return nil, fmt.Errorf("create framework: %w", err)
	}
	return f, nil
}

// UpdateCustomFramework changes a custom framework's name, slug, version or
// description. Built-in frameworks are read-only.
func (a *App) UpdateCustomFramework(ctx context.Context, idOrSlug string, in FrameworkInput) (*Framework, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	c, err := a.catalog()
	if err != nil {
		return nil, err
	}
	if c.lookup(idOrSlug) != nil {
		return nil, Errorf(ErrConflict, "built-in frameworks cannot be changed; outline frameworks take added requirements")
	}
	var out *Framework
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetCustomFramework(ctx, p.OrgID, idOrSlug)
		if err != nil {
			return err
		}
		f := *before
		ve := NewValidationError()
		in.apply(&f, ve)
		if c.bySlug[f.Slug] != nil {
			ve.Add("slug", CodeInvalid, f.Slug, "slug is taken by a built-in framework")
		}
		if err := ve.Err(); err != nil {
			return err
		}
		now := a.Now()
		f.UpdatedAt = &now
		if err := a.store.UpdateCustomFramework(ctx, p.OrgID, &f); err != nil {
			if errors.Is(err, ErrConflict) {
				return Errorf(ErrConflict, "a framework with slug %q already exists", f.Slug)
			}
			return err
		}
		out = &f
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "framework", ResourceID: f.ID, Before: before, After: &f})
	})
	if err != nil {
		return nil, fmt.Errorf("update framework %s: %w", idOrSlug, err)
	}
	return a.GetFramework(ctx, out.ID)
}

// AddRequirement adds a requirement to a custom framework or to a built-in
// outline. When the framework is enabled, the requirement is linked to the
// controls named in controlIds or, without them, to a new control.
func (a *App) AddRequirement(ctx context.Context, frameworkID string, in RequirementInput) (*Requirement, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *Requirement
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		fw, b, err := a.resolveFramework(ctx, p.OrgID, frameworkID)
		if err != nil {
			return err
		}
		if b != nil && fw.Coverage != CoverageOutline {
			return Errorf(ErrConflict, "requirements can be added to custom frameworks and to outline frameworks only")
		}
		ve := NewValidationError()
		r := &Requirement{ID: NewID(PrefixRequirement), FrameworkID: fw.ID, Custom: true, Assessable: true}
		if in.Ref == nil || strings.TrimSpace(*in.Ref) == "" {
			ve.Add("ref", CodeRequired, nil, "ref is required")
		} else {
			r.Ref = strings.TrimSpace(*in.Ref)
			maxLen(ve, "ref", r.Ref, 100)
		}
		if in.Title != nil {
			r.Title = strings.TrimSpace(*in.Title)
			maxLen(ve, "title", r.Title, 500)
		}
		if in.Description != nil {
			r.Description = strings.TrimSpace(*in.Description)
			maxLen(ve, "description", r.Description, 20000)
		}
		if r.Title == "" && r.Description == "" && ve.Fields["ref"] == "" {
			ve.Add("title", CodeRequired, nil, "title or description is required")
		}
		if in.Assessable != nil {
			r.Assessable = *in.Assessable
		}
		reqs, err := a.frameworkRequirements(ctx, p.OrgID, fw, b)
		if err != nil {
			return err
		}
		refs := map[string]bool{}
		for _, x := range reqs {
			refs[x.Ref] = true
		}
		if refs[r.Ref] {
			ve.Add("ref", CodeInvalid, r.Ref, "ref already exists in this framework")
		}
		if in.ParentRef != nil && strings.TrimSpace(*in.ParentRef) != "" {
			r.ParentRef = strings.TrimSpace(*in.ParentRef)
			if !refs[r.ParentRef] {
				ve.Add("parentRef", CodeUnknownReference, r.ParentRef, "parentRef must be the ref of a requirement of this framework")
			}
		}
		controls := dedupe(in.ControlIDs)
		if len(controls) > 0 {
			if !r.Assessable {
				ve.Add("controlIds", CodeInvalid, nil, "a heading (assessable false) cannot be linked to controls")
			}
			missing, err := a.store.MissingControls(ctx, p.OrgID, controls)
			if err != nil {
				return err
			}
			if len(missing) > 0 {
				ve.Add("controlIds", CodeUnknownReference, missing, "controlIds must name controls of this organization")
			}
		}
		if err := ve.Err(); err != nil {
			return err
		}
		for _, x := range reqs {
			if x.Ref == r.ParentRef && r.ParentRef != "" {
				r.ParentID = Ptr(x.ID)
			}
		}
		r.Position = len(reqs)
		now := a.Now()
		if err := a.store.CreateCustomRequirement(ctx, p.OrgID, r, now); err != nil {
			return err
		}
		if r.Assessable && len(controls) == 0 && fw.Enabled {
			ctrl := newControlFor(fw, r, now)
			if err := a.store.CreateControls(ctx, p.OrgID, []*Control{ctrl}); err != nil {
				return err
			}
			controls = []string{ctrl.ID}
		}
		var links []RequirementControl
		for _, id := range controls {
			links = append(links, RequirementControl{FrameworkID: fw.ID, RequirementID: r.ID, ControlID: id})
		}
		if err := a.store.LinkRequirementControls(ctx, p.OrgID, links, now); err != nil {
			return err
		}
		r.ControlIDs = controls
		if r.ControlIDs == nil {
			r.ControlIDs = []string{}
		}
		out = r
		return a.record(ctx, Mutation{Action: "created", ResourceType: "requirement", ResourceID: r.ID, After: r})
	})
	if err != nil {
		return nil, fmt.Errorf("add requirement to %s: %w", frameworkID, err)
	}
	return out, nil
}

// MapRequirementControls links a requirement (custom or built-in) to
// existing controls of the organization, in addition to any it has.
func (a *App) MapRequirementControls(ctx context.Context, frameworkID, requirementID string, controlIDs []string) (*Requirement, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *Requirement
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		r, err := a.getRequirement(ctx, p.OrgID, frameworkID, requirementID)
		if err != nil {
			return err
		}
		ids := dedupe(controlIDs)
		ve := NewValidationError()
		if len(ids) == 0 {
			ve.Add("controlIds", CodeRequired, nil, "controlIds must name at least one control")
		} else if !r.Assessable {
			ve.Add("controlIds", CodeInvalid, nil, "a heading (assessable false) cannot be linked to controls")
		} else {
			missing, err := a.store.MissingControls(ctx, p.OrgID, ids)
			if err != nil {
				return err
			}
			if len(missing) > 0 {
				ve.Add("controlIds", CodeUnknownReference, missing, "controlIds must name controls of this organization")
			}
		}
		if err := ve.Err(); err != nil {
			return err
		}
		var links []RequirementControl
		have := map[string]bool{}
		for _, id := range r.ControlIDs {
			have[id] = true
		}
		for _, id := range ids {
			if !have[id] {
				links = append(links, RequirementControl{FrameworkID: r.FrameworkID, RequirementID: r.ID, ControlID: id})
				r.ControlIDs = append(r.ControlIDs, id)
			}
		}
		if err := a.store.LinkRequirementControls(ctx, p.OrgID, links, a.Now()); err != nil {
			return err
		}
		out = r
		return a.record(ctx, Mutation{Action: "mapped", ResourceType: "requirement", ResourceID: r.ID,
			After: map[string]any{"controlIds": r.ControlIDs}})
	})
	if err != nil {
		return nil, fmt.Errorf("map requirement %s: %w", requirementID, err)
	}
	return out, nil
}

func dedupe(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}
