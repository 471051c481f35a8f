package app

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// integrationState is the integrations engine's process state: the
// providers compiled in (registered by main) and the run worker's wake-up.
type integrationState struct {
	mu        sync.Mutex
	providers map[string]IntegrationProvider
	order     []string
	wake      chan struct{}
	opts      IntegrationOptions
}

// IntegrationOptions tunes the run worker.
type IntegrationOptions struct {
	// Workers is how many runs execute at once (default 2).
	Workers int
	// RunTimeout bounds one run against a provider (default 5 minutes).
	RunTimeout time.Duration
	// EvidenceGrace is added to a connection's sync interval to make the
	// expiry of the evidence a passing check attaches (default 24 hours).
	EvidenceGrace time.Duration
}

// RegisterIntegrationProviders adds providers to the catalog. main calls it
// once at start-up with every provider compiled in; a slug registered twice
// replaces the earlier provider.
func (a *App) RegisterIntegrationProviders(ps ...IntegrationProvider) {
	s := &a.integ
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.providers == nil {
		s.providers = map[string]IntegrationProvider{}
	}
	for _, p := range ps {
		slug := p.Definition().Slug
		if _, ok := s.providers[slug]; !ok {
			s.order = append(s.order, slug)
		}
		s.providers[slug] = p
	}
}

// SetIntegrationOptions sets the run worker's options.
func (a *App) SetIntegrationOptions(o IntegrationOptions) {
	s := &a.integ
	s.mu.Lock()
	s.opts = o
	s.mu.Unlock()
}

func (a *App) integOptions() IntegrationOptions {
	s := &a.integ
	s.mu.Lock()
	o := s.opts
	s.mu.Unlock()
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.RunTimeout <= 0 {
		o.RunTimeout = 5 * time.Minute
	}
	if o.EvidenceGrace <= 0 {
		o.EvidenceGrace = 24 * time.Hour
	}
	return o
}

// provider returns a provider compiled in and not switched off by the
// appliance operator.
func (a *App) provider(slug string) (IntegrationProvider, bool) {
	p, ok := a.compiledProvider(slug)
	if !ok || !a.providerEnabled(slug) {
		return nil, false
	}
	return p, true
}

// compiledProvider returns a provider compiled in, switched off or not.
func (a *App) compiledProvider(slug string) (IntegrationProvider, bool) {
	s := &a.integ
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.providers[slug]
	return p, ok
}

// providerList lists the providers compiled in and not switched off.
func (a *App) providerList() []IntegrationProvider {
	all := a.compiledProviders()
	out := make([]IntegrationProvider, 0, len(all))
	for _, p := range all {
		if a.providerEnabled(p.Definition().Slug) {
			out = append(out, p)
		}
	}
	return out
}

// compiledProviders lists every provider compiled in.
func (a *App) compiledProviders() []IntegrationProvider {
	s := &a.integ
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]IntegrationProvider, 0, len(s.order))
	for _, slug := range s.order {
		out = append(out, s.providers[slug])
	}
	return out
}

// ProviderInfo is a provider's catalog entry as the API shows it: the
// definition, whether the provider is available, and each check's
// requirement references resolved against the built-in catalog.
type ProviderInfo struct {
	ProviderDefinition
	ID       string      `json:"id"`
	IsActive bool        `json:"isActive"`
	Checks   []CheckInfo `json:"checks"`
}

// CheckInfo is a check with the requirements it is evidence for.
type CheckInfo struct {
	CheckDefinition
	Requirements []CheckRequirement `json:"requirements"`
}

// CheckRequirement is one requirement a check's evidence serves: named by
// the check itself (direct) or related to one by a cross-framework mapping.
type CheckRequirement struct {
	RequirementID string `json:"requirementId"`
	Framework     string `json:"framework"`
	Ref           string `json:"ref"`
	Title         string `json:"title"`
	Direct        bool   `json:"direct"`
}

// ListIntegrationProviders returns the providers compiled in, in
// registration order.
func (a *App) ListIntegrationProviders(ctx context.Context) ([]ProviderInfo, error) {
	if _, err := principal(ctx); err != nil {
		return nil, err
	}
	c, err := a.catalog()
	if err != nil {
		return nil, err
	}
	ps := a.providerList()
	out := make([]ProviderInfo, 0, len(ps))
	for _, p := range ps {
		out = append(out, providerInfo(c, p.Definition()))
	}
	return out, nil
}

// GetIntegrationProvider returns one provider by slug.
func (a *App) GetIntegrationProvider(ctx context.Context, slug string) (*ProviderInfo, error) {
	if _, err := principal(ctx); err != nil {
		return nil, err
	}
	p, ok := a.provider(slug)
	if !ok {
		return nil, Errorf(ErrNotFound, "no integration provider %q", slug)
	}
	c, err := a.catalog()
	if err != nil {
		return nil, err
	}
	info := providerInfo(c, p.Definition())
	return &info, nil
}

func providerInfo(c *Catalog, d ProviderDefinition) ProviderInfo {
	info := ProviderInfo{ProviderDefinition: d, ID: d.Slug, IsActive: true, Checks: make([]CheckInfo, 0, len(d.Checks))}
	if info.Credentials == nil {
		info.Credentials = []CredentialField{}
	}
	if info.Variables == nil {
		info.Variables = []ProviderVariable{}
	}
	if info.Services == nil {
		info.Services = []ProviderService{}
	}
	if info.Capabilities == nil {
		info.Capabilities = []string{}
	}
	for _, ch := range d.Checks {
		info.Checks = append(info.Checks, checkInfo(c, ch))
	}
	info.ProviderDefinition.Checks = nil
	return info
}

func checkInfo(c *Catalog, ch CheckDefinition) CheckInfo {
	if ch.Evidences == nil {
		ch.Evidences = []RequirementRef{}
	}
	ci := CheckInfo{CheckDefinition: ch, Requirements: []CheckRequirement{}}
	direct, related := c.ResolveRequirementRefs(ch.Evidences)
	for _, id := range direct {
		ci.Requirements = append(ci.Requirements, c.checkRequirement(id, true))
	}
	for _, id := range related {
		ci.Requirements = append(ci.Requirements, c.checkRequirement(id, false))
	}
	return ci
}

func (c *Catalog) checkRequirement(id string, direct bool) CheckRequirement {
	r, b := c.requirement(id)
	if r == nil {
		return CheckRequirement{RequirementID: id, Direct: direct}
	}
	return CheckRequirement{RequirementID: id, Framework: b.fw.Slug, Ref: r.Ref, Title: r.Title, Direct: direct}
}

// RequirementByRef returns the built-in requirement a reference names.
func (c *Catalog) RequirementByRef(ref RequirementRef) (*Requirement, bool) {
	b := c.bySlug[ref.Framework]
	if b == nil {
		return nil, false
	}
	i, ok := b.byRef[ref.Ref]
	if !ok {
		return nil, false
	}
	r := b.reqs[i]
	return &r, true
}

// ResolveRequirementRefs returns the requirement ids the references name
// (a structural, not assessable, requirement stands for its assessable
// descendants) and, apart, the ids the cross-framework mappings relate to
// them. Unknown references are left out; ValidateRequirementRefs reports
// them.
func (c *Catalog) ResolveRequirementRefs(refs []RequirementRef) (direct, related []string) {
	seen := map[string]bool{}
	for _, ref := range refs {
		r, ok := c.RequirementByRef(ref)
		if !ok {
			continue
		}
		for _, id := range c.assessableUnder(r) {
			if !seen[id] {
				seen[id] = true
				direct = append(direct, id)
			}
		}
	}
	for _, id := range direct {
		for _, rel := range c.related[id] {
			if !seen[rel] {
				seen[rel] = true
				related = append(related, rel)
			}
		}
	}
	return direct, related
}

// assessableUnder is r itself when assessable, else its assessable
// descendants.
func (c *Catalog) assessableUnder(r *Requirement) []string {
	if r.Assessable {
		return []string{r.ID}
	}
	b := c.reqFW[r.ID]
	if b == nil {
		return nil
	}
	var out []string
	parents := map[string]bool{r.ID: true}
	// Requirements are listed parents first, so one pass finds every
	// descendant.
	for i := range b.reqs {
		q := &b.reqs[i]
		if q.ParentID != nil && parents[*q.ParentID] {
			parents[q.ID] = true
			if q.Assessable {
				out = append(out, q.ID)
			}
		}
	}
	return out
}

// ValidateRequirementRefs reports references that name no built-in
// requirement, under field[i].
func (c *Catalog) ValidateRequirementRefs(ve *ValidationError, field string, refs []RequirementRef) {
	for i, ref := range refs {
		if _, ok := c.RequirementByRef(ref); !ok {
			ve.Add(fmt.Sprintf("%s[%d]", field, i), CodeUnknownReference, ref.Framework+" "+ref.Ref,
				fmt.Sprintf("%s %q is not a requirement of a built-in framework", ref.Framework, ref.Ref))
		}
	}
}

// findingTypeFor picks a finding type from the frameworks a check maps to:
// the first reference whose framework has a finding type, else soc2.
func findingTypeFor(refs []RequirementRef) string {
	types := map[string]string{"soc2-2017": "soc2", "iso27001-2022": "iso27001", "dora": "dora", "gdpr": "gdpr",
		"hipaa": "hipaa", "pci-dss-4.0": "pci_dss", "nis2": "nis2"}
	for _, r := range refs {
		if t, ok := types[r.Framework]; ok {
			return t
		}
	}
	return "soc2"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
