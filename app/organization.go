package app

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Plans and their limits (spec: Limits).
const (
	PlanFree         = "free"
	PlanStarter      = "starter"
	PlanProfessional = "professional"
	PlanEnterprise   = "enterprise"
)

// Unlimited marks a plan limit without a ceiling.
const Unlimited = -1

// PlanLimits are the countable limits of a plan.
type PlanLimits struct {
	Frameworks     int
	Members        int
	Integrations   int
	Questionnaires int // per calendar month
	RatePerMinute  int
	Burst          int
}

// planLimits holds the spec's table. The spec gives no questionnaire
// allowance for the free plan; it gets the starter allowance.
var planLimits = map[string]PlanLimits{
	PlanFree:         {Frameworks: 1, Members: 3, Integrations: 0, Questionnaires: 5, RatePerMinute: 30, Burst: 60},
	PlanStarter:      {Frameworks: 1, Members: 10, Integrations: 10, Questionnaires: 5, RatePerMinute: 60, Burst: 120},
	PlanProfessional: {Frameworks: 3, Members: 50, Integrations: 100, Questionnaires: 50, RatePerMinute: 300, Burst: 600},
	PlanEnterprise:   {Frameworks: Unlimited, Members: Unlimited, Integrations: Unlimited, Questionnaires: Unlimited},
}

// ValidPlan reports whether name is a plan.
func ValidPlan(name string) bool { _, ok := planLimits[name]; return ok }

// Limits returns the plan's limits; enterprise rates come from config.
func (a *App) Limits(plan string) PlanLimits {
	l, ok := planLimits[plan]
	if !ok {
		l = planLimits[PlanFree]
	}
	if plan == PlanEnterprise {
		l.RatePerMinute, l.Burst = a.config.EnterpriseRate, a.config.EnterpriseBurst
	}
	return l
}

// CheckLimit returns a LimitError when used has reached the plan's limit.
func (a *App) CheckLimit(plan, limit string, used int) error {
	l := a.Limits(plan)
	var allowed int
	switch limit {
	case "frameworks":
		allowed = l.Frameworks
	case "members":
		allowed = l.Members
	case "integrations":
		allowed = l.Integrations
	case "questionnaires":
		allowed = l.Questionnaires
	default:
		return fmt.Errorf("unknown limit %q", limit)
	}
	if allowed != Unlimited && used >= allowed {
		return &LimitError{Limit: limit, Allowed: allowed, Plan: plan}
	}
	return nil
}

// Branding is how the organization presents itself in the UI and trust portal.
type Branding struct {
	DisplayName  *string `json:"displayName"`
	PrimaryColor *string `json:"primaryColor"`
	LogoURL      *string `json:"logoUrl"`
}

// Organization is a tenant: every other resource belongs to one.
type Organization struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Slug      string    `json:"slug"`
	Plan      string    `json:"plan"`
	Website   *string   `json:"website"`
	Branding  Branding  `json:"branding"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// OrganizationPatch is the body of PATCH /v1/organization.
type OrganizationPatch struct {
	Name    *string     `json:"name"`
	Slug    *string     `json:"slug"`
	Website Opt[string] `json:"website"`
}

// BrandingPatch is the body of PATCH /v1/organization/branding.
type BrandingPatch struct {
	DisplayName  Opt[string] `json:"displayName"`
	PrimaryColor Opt[string] `json:"primaryColor"`
	LogoURL      Opt[string] `json:"logoUrl"`
}

// OrganizationStore persists organizations.
type OrganizationStore interface {
	CreateOrganization(ctx context.Context, o *Organization) error
	GetOrganization(ctx context.Context, id string) (*Organization, error)
	UpdateOrganization(ctx context.Context, o *Organization) error
	ListOrganizations(ctx context.Context) ([]Organization, error)
}

var slugRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)
var colorRe = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// Slugify turns a name into a URL slug.
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		default:
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-")
	}
	if s == "" {
		s = "org"
	}
	return s
}

// CreateOrganization creates a tenant (CLI only: no principal needed).
func (a *App) CreateOrganization(ctx context.Context, name, plan string) (*Organization, error) {
	name = strings.TrimSpace(name)
	v := NewValidationError()
	if name == "" {
		v.Add("name", CodeRequired, nil, "name is required")
	}
	maxLen(v, "name", name, 200)
	if plan == "" {
		plan = PlanProfessional
	}
	if !ValidPlan(plan) {
		v.Add("plan", CodeInvalidEnum, plan, "plan must be one of free, starter, professional, enterprise")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	now := a.Now()
	o := &Organization{ID: NewID(PrefixOrganization), Name: name, Slug: Slugify(name) + "-" + strings.ToLower(RandomToken(3)), Plan: plan, CreatedAt: now, UpdatedAt: now}
	ctx = SystemContext(ctx, o.ID)
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.CreateOrganization(ctx, o); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "organization", ResourceID: o.ID, After: o,
			Events: []Event{ResourceEvent("organization", "created", o)}})
	})
	if err != nil {
		return nil, fmt.Errorf("create organization: %w", err)
	}
	return o, nil
}

// GetOrganization returns the caller's organization.
func (a *App) GetOrganization(ctx context.Context) (*Organization, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	return a.store.GetOrganization(ctx, p.OrgID)
}

// UpdateOrganization applies a patch to the caller's organization.
func (a *App) UpdateOrganization(ctx context.Context, in OrganizationPatch) (*Organization, error) {
	return a.mutateOrganization(ctx, func(o *Organization, v *ValidationError) {
		if in.Name != nil {
			n := strings.TrimSpace(*in.Name)
			if n == "" {
				v.Add("name", CodeRequired, nil, "name must not be empty")
			}
			maxLen(v, "name", n, 200)
			o.Name = n
		}
		if in.Slug != nil {
			if !slugRe.MatchString(*in.Slug) {
				v.Add("slug", CodeInvalid, *in.Slug, "slug must be lowercase letters, digits and dashes")
			}
			o.Slug = *in.Slug
		}
		if in.Website.Set {
			o.Website = nil
			if !in.Website.Null {
				if !validURL(in.Website.Value) {
					v.Add("website", CodeInvalid, in.Website.Value, "website must be an http or https URL")
				}
				o.Website = Ptr(in.Website.Value)
			}
		}
	})
}

// UpdateBranding applies a branding patch.
func (a *App) UpdateBranding(ctx context.Context, in BrandingPatch) (*Organization, error) {
	return a.mutateOrganization(ctx, func(o *Organization, v *ValidationError) {
		if in.DisplayName.Set {
			o.Branding.DisplayName = nil
			if !in.DisplayName.Null {
				maxLen(v, "displayName", in.DisplayName.Value, 200)
				o.Branding.DisplayName = Ptr(in.DisplayName.Value)
			}
		}
		if in.PrimaryColor.Set {
			o.Branding.PrimaryColor = nil
			if !in.PrimaryColor.Null {
				if !colorRe.MatchString(in.PrimaryColor.Value) {
					v.Add("primaryColor", CodeInvalid, in.PrimaryColor.Value, "primaryColor must be a #RRGGBB color")
				}
				o.Branding.PrimaryColor = Ptr(strings.ToLower(in.PrimaryColor.Value))
			}
		}
		if in.LogoURL.Set {
			o.Branding.LogoURL = nil
			if !in.LogoURL.Null {
				if !validURL(in.LogoURL.Value) {
					v.Add("logoUrl", CodeInvalid, in.LogoURL.Value, "logoUrl must be an http or https URL")
				}
				o.Branding.LogoURL = Ptr(in.LogoURL.Value)
			}
		}
	})
}

func (a *App) mutateOrganization(ctx context.Context, apply func(o *Organization, v *ValidationError)) (*Organization, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *Organization
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetOrganization(ctx, p.OrgID)
		if err != nil {
			return err
		}
		o := *before
		v := NewValidationError()
		apply(&o, v)
		if err := v.Err(); err != nil {
			return err
		}
		o.UpdatedAt = a.Now()
		if err := a.store.UpdateOrganization(ctx, &o); err != nil {
			return err
		}
		out = &o
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "organization", ResourceID: o.ID, Before: before, After: &o,
			Events: []Event{ResourceEvent("organization", "updated", &o)}})
	})
	if err != nil {
		return nil, fmt.Errorf("update organization: %w", err)
	}
	return out, nil
}

// ListOrganizations lists every organization (CLI).
func (a *App) ListOrganizations(ctx context.Context) ([]Organization, error) {
	return a.store.ListOrganizations(ctx)
}
