package app

import (
	"context"
	"fmt"
	"time"
)

// Getting started: the checklist a new organization sees on the dashboard.
// Each step is ticked by the organization's own data, never by a click, so
// doing the work through the API ticks it too. Owners and admins may
// dismiss the checklist for the whole organization.

// OnboardingFacts are the numbers the steps are ticked from.
type OnboardingFacts struct {
	Frameworks        int  // enabled frameworks
	Members           int  // people in the organization
	PublishedPolicies int  // policies with a published version
	Evidence          int  // evidence items
	Connections       int  // integration connections
	TrustPortal       bool // the trust portal is enabled
}

// OnboardingStore reads the facts and keeps the dismissal.
type OnboardingStore interface {
	OnboardingFacts(ctx context.Context, orgID string) (OnboardingFacts, error)
	// OnboardingDismissed returns when the checklist was dismissed, or nil.
	OnboardingDismissed(ctx context.Context, orgID string) (*time.Time, error)
	DismissOnboarding(ctx context.Context, orgID, by string, at time.Time) error
}

// OnboardingStep is one step of the checklist.
type OnboardingStep struct {
	Key   string
	Title string
	Hint  string
	Href  string
	Done  bool
}

// Onboarding is the checklist as the organization's data ticks it.
type Onboarding struct {
	Steps       []OnboardingStep
	Done        int
	DismissedAt *time.Time
}

// Complete reports whether every step is done.
func (o *Onboarding) Complete() bool { return o.Done == len(o.Steps) }

// Onboarding returns the getting-started checklist of the organization,
// each step ticked by its data. Owners and admins, who can take the steps,
// read it.
func (a *App) Onboarding(ctx context.Context) (*Onboarding, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	f, err := a.store.OnboardingFacts(ctx, p.OrgID)
	if err != nil {
		return nil, fmt.Errorf("onboarding: %w", err)
	}
	o := &Onboarding{Steps: []OnboardingStep{
		{Key: "framework", Title: "Enable a framework", Hint: "Choose the standard you work towards; its controls appear at once.",
			Href: "/frameworks", Done: f.Frameworks > 0},
		{Key: "people", Title: "Invite people", Hint: "Add the colleagues who own controls, tasks and policies.",
			Href: "/people", Done: f.Members > 1},
		{Key: "policy", Title: "Publish your first policy", Hint: "Write or import a policy and publish it for acknowledgement.",
			Href: "/policies", Done: f.PublishedPolicies > 0},
		{Key: "evidence", Title: "Upload your first evidence", Hint: "Open a control and upload the file that proves it works.",
			Href: "/controls", Done: f.Evidence > 0},
		{Key: "integration", Title: "Connect a system", Hint: "Let the appliance test a service you run (a URL, GitHub, GitLab) and keep the evidence current.",
			Href: "/integrations", Done: f.Connections > 0},
		{Key: "trust", Title: "Set up the trust portal", Hint: "Publish what customers may see about your compliance.",
			Href: "/trust-settings", Done: f.TrustPortal},
	}}
	for _, s := range o.Steps {
		if s.Done {
			o.Done++
		}
	}
	if o.DismissedAt, err = a.store.OnboardingDismissed(ctx, p.OrgID); err != nil {
		return nil, fmt.Errorf("onboarding: %w", err)
	}
	return o, nil
}

// DismissOnboarding hides the checklist for the whole organization (owner,
// admin). Dismissing it again changes nothing.
func (a *App) DismissOnboarding(ctx context.Context) error {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		at, err := a.store.OnboardingDismissed(ctx, p.OrgID)
		if err != nil || at != nil {
			return err
		}
		now := a.Now()
		if err := a.store.DismissOnboarding(ctx, p.OrgID, p.ActorID(), now); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "dismissed", ResourceType: "onboarding", ResourceID: p.OrgID,
			After: map[string]any{"dismissedAt": now}})
	})
	if err != nil {
		return fmt.Errorf("dismiss onboarding: %w", err)
	}
	return nil
}
