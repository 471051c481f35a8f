package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// twoFactorProviders are the directories that report each user's
// two-factor status (docs/directory-sync.md); LDAP does not.
var twoFactorProviders = map[string]bool{"google_workspace": true, "entra_id": true, "okta": true}

// SyncProviderChoice is the body and answer of the provider settings.
type SyncProviderChoice struct {
	Success  bool    `json:"success,omitempty"`
	Provider *string `json:"provider"`
}

// SyncProviderChoiceInput is the body of the set operations.
type SyncProviderChoiceInput struct {
	OrganizationID *string     `json:"organizationId"`
	Provider       Opt[string] `json:"provider"`
}

// SyncProviderStatus is one provider in available-providers.
type SyncProviderStatus struct {
	Slug             string     `json:"slug"`
	Name             string     `json:"name"`
	LogoURL          *string    `json:"logoUrl"`
	Connected        bool       `json:"connected"`
	ConnectionStatus *string    `json:"connectionStatus"`
	ConnectionID     *string    `json:"connectionId"`
	LastSyncAt       *time.Time `json:"lastSyncAt"`
	NextSyncAt       *time.Time `json:"nextSyncAt"`
}

// SyncProviders is the answer of available-providers and available-2fa-sources.
type SyncProviders struct {
	Providers []SyncProviderStatus `json:"providers"`
}

// ProviderSyncStatus is the answer of a provider's status operation.
type ProviderSyncStatus struct {
	Connected    bool       `json:"connected"`
	ConnectionID *string    `json:"connectionId"`
	LastSyncAt   *time.Time `json:"lastSyncAt"`
	NextSyncAt   *time.Time `json:"nextSyncAt"`
}

// TwoFactorStatus is one person's two-factor status.
type TwoFactorStatus struct {
	PersonID  string     `json:"personId"`
	Email     string     `json:"email"`
	Name      string     `json:"name"`
	Source    string     `json:"source"`
	Enrolled  *bool      `json:"enrolled"`
	CheckedAt *time.Time `json:"checkedAt"`
}

// TwoFactorStatuses is the answer of two-factor-statuses.
type TwoFactorStatuses struct {
	Configured bool              `json:"configured"`
	Source     *string           `json:"source"`
	Statuses   []TwoFactorStatus `json:"statuses"`
	Total      int               `json:"total"`
}

// SyncSettingKinds are the three provider settings.
const (
	SyncSettingEmployee  = "employee"
	SyncSettingDevice    = "device"
	SyncSettingTwoFactor = "two_factor"
)

// GetSyncProvider returns one of the organization's provider choices.
func (a *App) GetSyncProvider(ctx context.Context, kind string) (*SyncProviderChoice, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	s, err := a.store.GetSyncSettings(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	return &SyncProviderChoice{Provider: *settingOf(s, kind)}, nil
}

func settingOf(s *SyncSettings, kind string) **string {
	switch kind {
	case SyncSettingDevice:
		return &s.DeviceProvider
	case SyncSettingTwoFactor:
		return &s.TwoFactorSource
	}
	return &s.EmployeeProvider
}

// SetSyncProvider sets (or, with null, clears) one provider choice. The
// provider must be able to do the job and the organization must have a
// connection to it.
func (a *App) SetSyncProvider(ctx context.Context, kind string, in SyncProviderChoiceInput) (*SyncProviderChoice, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	if in.OrganizationID != nil && *in.OrganizationID != p.OrgID {
		return nil, Invalid("organizationId", CodeInvalid, *in.OrganizationID, "organizationId must be your own organization's id (or left out)")
	}
	var choice *string
	if in.Provider.Set && !in.Provider.Null {
		slug := strings.TrimSpace(in.Provider.Value)
		if slug == "" {
			return nil, Invalid("provider", CodeRequired, nil, "provider must be a provider slug, or null to clear the choice")
		}
		var allowed []string
		switch kind {
		case SyncSettingDevice:
			allowed = a.syncProviderSlugs(CapabilityDeviceSync)
		case SyncSettingTwoFactor:
			for _, s := range a.syncProviderSlugs(CapabilityEmployeeSync) {
				if twoFactorProviders[s] {
					allowed = append(allowed, s)
				}
			}
		default:
			allowed = a.syncProviderSlugs(CapabilityEmployeeSync)
		}
		if !containsString(allowed, slug) {
			what := map[string]string{SyncSettingDevice: "sync devices", SyncSettingTwoFactor: "report two-factor status"}[kind]
			if what == "" {
				what = "sync employees"
			}
			msg := fmt.Sprintf("provider %q cannot %s", slug, what)
			if len(allowed) == 0 {
				msg += ": no provider of this appliance can yet"
			} else {
				msg += "; choose one of " + strings.Join(allowed, ", ")
			}
			return nil, Invalid("provider", CodeInvalidEnum, slug, msg)
		}
		conns, err := a.store.ListConnections(ctx, p.OrgID)
		if err != nil {
			return nil, err
		}
		found := false
		for _, c := range conns {
			if c.ProviderSlug == slug && c.Status != ConnectionDisconnected {
				found = true
			}
		}
		if !found {
			return nil, Invalid("provider", CodeInvalid, slug, fmt.Sprintf("the organization has no connection to %s; create one first (POST /v1/integrations/connections)", slug))
		}
		choice = &slug
	} else if !in.Provider.Set {
		return nil, Invalid("provider", CodeRequired, nil, "provider is required: a provider slug, or null to clear the choice")
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		s, err := a.store.GetSyncSettings(ctx, p.OrgID)
		if err != nil {
			return err
		}
		before := *s
		*settingOf(s, kind) = choice
		if err := a.store.SaveSyncSettings(ctx, p.OrgID, s, a.Now()); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "sync_settings", ResourceID: p.OrgID,
			Before: syncSettingsAudit(&before), After: syncSettingsAudit(s)})
	})
	if err != nil {
		return nil, fmt.Errorf("set sync provider: %w", err)
	}
	return &SyncProviderChoice{Success: true, Provider: choice}, nil
}

func syncSettingsAudit(s *SyncSettings) map[string]any {
	return map[string]any{"employeeSyncProvider": s.EmployeeProvider, "deviceSyncProvider": s.DeviceProvider, "twoFactorSource": s.TwoFactorSource}
}

// AvailableSyncProviders lists the providers that can sync employees (or
// devices), with the organization's connection to each.
func (a *App) AvailableSyncProviders(ctx context.Context, syncType string) (*SyncProviders, error) {
	capability := CapabilityEmployeeSync
	switch syncType {
	case "", SyncTypeEmployee:
	case SyncTypeDevice:
		capability = CapabilityDeviceSync
	default:
		return nil, Invalid("syncType", CodeInvalidEnum, syncType, "syncType must be one of employee, device")
	}
	kind := SyncTypeEmployee
	if capability == CapabilityDeviceSync {
		kind = SyncTypeDevice
	}
	return a.syncProviders(ctx, kind, func(d ProviderDefinition) bool { return containsString(d.Capabilities, capability) })
}

// AvailableTwoFactorSources lists the directories that report two-factor
// status.
func (a *App) AvailableTwoFactorSources(ctx context.Context) (*SyncProviders, error) {
	return a.syncProviders(ctx, SyncTypeEmployee, func(d ProviderDefinition) bool {
		return containsString(d.Capabilities, CapabilityEmployeeSync) && twoFactorProviders[d.Slug]
	})
}

func (a *App) syncProviders(ctx context.Context, syncType string, keep func(ProviderDefinition) bool) (*SyncProviders, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	conns, err := a.store.ListConnections(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	out := &SyncProviders{Providers: []SyncProviderStatus{}}
	for _, prov := range a.providerList() {
		d := prov.Definition()
		if !keep(d) {
			continue
		}
		st := SyncProviderStatus{Slug: d.Slug, Name: d.Name}
		if c := firstConnection(conns, d.Slug); c != nil {
			ps, err := a.providerStatusOf(ctx, p.OrgID, c, syncType)
			if err != nil {
				return nil, err
			}
			st.Connected, st.ConnectionStatus, st.ConnectionID = true, Ptr(c.Status), ps.ConnectionID
			st.LastSyncAt, st.NextSyncAt = ps.LastSyncAt, ps.NextSyncAt
		}
		out.Providers = append(out.Providers, st)
	}
	sort.Slice(out.Providers, func(i, j int) bool { return out.Providers[i].Slug < out.Providers[j].Slug })
	return out, nil
}

func firstConnection(conns []Connection, slug string) *Connection {
	for i := range conns {
		if conns[i].ProviderSlug == slug && conns[i].Status != ConnectionDisconnected {
			return &conns[i]
		}
	}
	return nil
}

func (a *App) providerStatus(ctx context.Context, orgID string, c *Connection) (*ProviderSyncStatus, error) {
	return a.providerStatusOf(ctx, orgID, c, SyncTypeEmployee)
}

// providerStatusOf is a connection's last and next sync of a type.
func (a *App) providerStatusOf(ctx context.Context, orgID string, c *Connection, syncType string) (*ProviderSyncStatus, error) {
	out := &ProviderSyncStatus{Connected: true, ConnectionID: Ptr(c.ID)}
	last, err := a.store.LastSyncRunOfType(ctx, orgID, c.ID, syncType)
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	if last != nil {
		out.LastSyncAt = &last.StartedAt
	}
	s, err := a.store.GetSyncSettings(ctx, orgID)
	if err != nil {
		return nil, err
	}
	every := SyncFrequencies[c.SyncFrequency]
	chosen := s.EmployeeProvider
	if syncType == SyncTypeDevice {
		chosen = s.DeviceProvider
	}
	if chosen != nil && *chosen == c.ProviderSlug && every > 0 && c.Status == ConnectionActive {
		next := a.Now()
		if last != nil && last.StartedAt.Add(every).After(next) {
			next = last.StartedAt.Add(every)
		}
		out.NextSyncAt = &next
	}
	return out, nil
}

// ProviderSyncStatusOf answers a provider's status operation: the
// organization's first connection to it and its syncs.
func (a *App) ProviderSyncStatusOf(ctx context.Context, slug string) (*ProviderSyncStatus, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	conns, err := a.store.ListConnections(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	c := firstConnection(conns, slug)
	if c == nil {
		return &ProviderSyncStatus{}, nil
	}
	return a.providerStatus(ctx, p.OrgID, c)
}

// ListTwoFactorStatuses lists the active people's two-factor status.
func (a *App) ListTwoFactorStatuses(ctx context.Context, page Page) (*TwoFactorStatuses, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	s, err := a.store.GetSyncSettings(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	l, err := a.store.ListPeople(ctx, p.OrgID, PersonFilter{Page: page})
	if err != nil {
		return nil, err
	}
	if err := a.attachSyncInfo(ctx, p.OrgID, l.Items); err != nil {
		return nil, err
	}
	out := &TwoFactorStatuses{Configured: s.TwoFactorSource != nil, Source: s.TwoFactorSource, Statuses: []TwoFactorStatus{}, Total: l.Total}
	for _, per := range l.Items {
		src := per.Source.Type
		if src == "" {
			src = PersonSourceManual
		}
		out.Statuses = append(out.Statuses, TwoFactorStatus{PersonID: per.ID, Email: per.Email, Name: per.Name, Source: src,
			Enrolled: per.TwoFactor.Enrolled, CheckedAt: per.TwoFactor.CheckedAt})
	}
	return out, nil
}
