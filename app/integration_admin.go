package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Admin integrations: the appliance operator's appliance-wide view of the
// providers compiled in, switching a provider off for every organization,
// and the platform OAuth app credentials of a provider.

// Limits of the platform credentials.
const (
	maxClientID        = 500
	maxClientSecret    = 4000
	maxCustomScopes    = 50
	maxCustomScopeLen  = 200
	maxCustomSettingsB = 8 << 10
)

// ProviderSettings is a provider's appliance-wide settings as stored.
type ProviderSettings struct {
	ProviderSlug         string
	IsActive             bool
	ClientID             *string
	SealedClientSecret   []byte
	CustomScopes         []string
	CustomSettings       map[string]any
	CredentialsUpdatedAt *time.Time
	UpdatedBy            string
	UpdatedAt            time.Time
}

// AdminIntegrationStore keeps the providers' appliance-wide settings.
type AdminIntegrationStore interface {
	ListProviderSettings(ctx context.Context) (map[string]ProviderSettings, error)
	PutProviderSettings(ctx context.Context, s *ProviderSettings) error
	// CountConnectionsByProvider counts connections per provider over every
	// organization.
	CountConnectionsByProvider(ctx context.Context) (map[string]int, error)
}

// AdminProvider is a provider as the operator sees it.
type AdminProvider struct {
	ID                     string         `json:"id"`
	Slug                   string         `json:"slug"`
	Name                   string         `json:"name"`
	Description            string         `json:"description"`
	Category               string         `json:"category"`
	DocsURL                string         `json:"docsUrl,omitempty"`
	AuthStrategy           string         `json:"authStrategy"`
	Capabilities           []string       `json:"capabilities"`
	CheckCount             int            `json:"checkCount"`
	IsActive               bool           `json:"isActive"`
	UsesOAuth              bool           `json:"usesOAuth"`
	HasPlatformCredentials bool           `json:"hasPlatformCredentials"`
	ClientID               *string        `json:"clientId"`
	CustomScopes           []string       `json:"customScopes"`
	CustomSettings         map[string]any `json:"customSettings"`
	CredentialsUpdatedAt   *time.Time     `json:"credentialsUpdatedAt"`
	ConnectionCount        int            `json:"connectionCount"`
	UpdatedAt              *time.Time     `json:"updatedAt"`
}

// AdminProviderPatch is the body of PATCH /v1/admin/integrations/{providerSlug}.
type AdminProviderPatch struct {
	IsActive *bool `json:"isActive"`
}

// PlatformCredentialsInput is the body of POST /v1/admin/integrations/credentials.
type PlatformCredentialsInput struct {
	ProviderSlug   string         `json:"providerSlug"`
	ClientID       string         `json:"clientId"`
	ClientSecret   string         `json:"clientSecret"`
	CustomScopes   []string       `json:"customScopes"`
	CustomSettings map[string]any `json:"customSettings"`
}

// adminState caches the providers' settings (one process serves the
// appliance); nil settings are loaded on first use and after each change.
type adminState struct {
	mu       sync.Mutex
	settings map[string]ProviderSettings
}

func (a *App) adminCache() *adminState { return &a.integAdmin }

// providerSettings returns the stored settings, cached.
func (a *App) providerSettings(ctx context.Context) (map[string]ProviderSettings, error) {
	s := a.adminCache()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.settings == nil {
		m, err := a.store.ListProviderSettings(ctx)
		if err != nil {
			return nil, err
		}
		s.settings = m
	}
	return s.settings, nil
}

func (a *App) forgetProviderSettings() {
	s := a.adminCache()
	s.mu.Lock()
	s.settings = nil
	s.mu.Unlock()
}

// providerEnabled reports whether the operator left the provider on. A
// failure to read the settings counts as enabled (it is logged): the
// switch only narrows what organizations see.
func (a *App) providerEnabled(slug string) bool {
	m, err := a.providerSettings(context.Background())
	if err != nil {
		a.log.Error("provider settings read failed", "err", err)
		return true
	}
	st, ok := m[slug]
	return !ok || st.IsActive
}

func (a *App) adminProvider(p IntegrationProvider, st ProviderSettings, has bool, conns int) AdminProvider {
	d := p.Definition()
	out := AdminProvider{ID: d.Slug, Slug: d.Slug, Name: d.Name, Description: d.Description, Category: d.Category, DocsURL: d.DocsURL,
		AuthStrategy: d.AuthStrategy, Capabilities: d.Capabilities, CheckCount: len(d.Checks), IsActive: true,
		UsesOAuth: d.AuthStrategy == ProviderAuthOAuth2 || d.OAuth != nil || oauthCapable(d.Slug), CustomScopes: []string{}, CustomSettings: map[string]any{},
		ConnectionCount: conns}
	if out.Capabilities == nil {
		out.Capabilities = []string{}
	}
	if has {
		out.IsActive = st.IsActive
		out.ClientID = st.ClientID
		out.HasPlatformCredentials = st.ClientID != nil && len(st.SealedClientSecret) > 0
		if st.CustomScopes != nil {
			out.CustomScopes = st.CustomScopes
		}
		if st.CustomSettings != nil {
			out.CustomSettings = st.CustomSettings
		}
		out.CredentialsUpdatedAt = st.CredentialsUpdatedAt
		at := st.UpdatedAt
		out.UpdatedAt = &at
	}
	return out
}

// oauthCapable lists the providers whose connections may be made through
// an OAuth app (besides providers whose auth strategy is oauth2).
func oauthCapable(slug string) bool { return slug == "github" }

// AdminListIntegrations lists every provider compiled in, with its
// appliance-wide settings (operator only).
func (a *App) AdminListIntegrations(ctx context.Context) ([]AdminProvider, error) {
	if _, err := a.requireOperator(ctx); err != nil {
		return nil, err
	}
	m, err := a.store.ListProviderSettings(ctx)
	if err != nil {
		return nil, err
	}
	counts, err := a.store.CountConnectionsByProvider(ctx)
	if err != nil {
		return nil, err
	}
	ps := a.compiledProviders()
	out := make([]AdminProvider, 0, len(ps))
	for _, p := range ps {
		slug := p.Definition().Slug
		st, has := m[slug]
		out = append(out, a.adminProvider(p, st, has, counts[slug]))
	}
	return out, nil
}

// AdminGetIntegration returns one provider (operator only).
func (a *App) AdminGetIntegration(ctx context.Context, slug string) (*AdminProvider, error) {
	if _, err := a.requireOperator(ctx); err != nil {
		return nil, err
	}
	return a.adminGet(ctx, slug)
}

func (a *App) adminGet(ctx context.Context, slug string) (*AdminProvider, error) {
	p, ok := a.compiledProvider(slug)
	if !ok {
		return nil, Errorf(ErrNotFound, "no integration provider %q", slug)
	}
	m, err := a.store.ListProviderSettings(ctx)
	if err != nil {
		return nil, err
	}
	counts, err := a.store.CountConnectionsByProvider(ctx)
	if err != nil {
		return nil, err
	}
	st, has := m[slug]
	out := a.adminProvider(p, st, has, counts[slug])
	return &out, nil
}

func (a *App) currentSettings(ctx context.Context, slug string) (ProviderSettings, error) {
	m, err := a.store.ListProviderSettings(ctx)
	if err != nil {
		return ProviderSettings{}, err
	}
	st, ok := m[slug]
	if !ok {
		st = ProviderSettings{ProviderSlug: slug, IsActive: true, CustomScopes: []string{}, CustomSettings: map[string]any{}}
	}
	return st, nil
}

// recordOperator writes an operator's change to the audit trail of the
// organization the operator is signed in to (the trail is per
// organization).
func (a *App) recordOperator(ctx context.Context, p *Principal, action, slug string, after any) error {
	return a.record(ctx, Mutation{Action: action, ResourceType: "integration_provider", ResourceID: slug, After: after})
}

// AdminUpdateIntegration switches a provider on or off for every
// organization (operator only). A provider switched off is absent from the
// organizations' catalog, cannot be connected, and its connections stop
// running (kept, with their history, for when it is switched on again).
func (a *App) AdminUpdateIntegration(ctx context.Context, slug string, in AdminProviderPatch) (*AdminProvider, error) {
	p, err := a.requireOperator(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := a.compiledProvider(slug); !ok {
		return nil, Errorf(ErrNotFound, "no integration provider %q", slug)
	}
	if in.IsActive == nil {
		return nil, Invalid("isActive", CodeRequired, nil, "isActive is required (true or false)")
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		st, err := a.currentSettings(ctx, slug)
		if err != nil {
			return err
		}
		st.IsActive, st.UpdatedBy, st.UpdatedAt = *in.IsActive, p.ActorID(), a.Now()
		if err := a.store.PutProviderSettings(ctx, &st); err != nil {
			return err
		}
		action := "provider_enabled"
		if !st.IsActive {
			action = "provider_disabled"
		}
		return a.recordOperator(ctx, p, action, slug, map[string]any{"providerSlug": slug, "isActive": st.IsActive})
	})
	a.forgetProviderSettings()
	if err != nil {
		return nil, fmt.Errorf("update provider %s: %w", slug, err)
	}
	return a.adminGet(ctx, slug)
}

// validateOAuthApp checks an OAuth app's client id, secret and custom
// scopes (the operator's platform app and an organization's own app take
// the same fields) and returns the scopes trimmed.
func validateOAuthApp(ve *ValidationError, clientID, clientSecret string, customScopes []string) []string {
	switch {
	case clientID == "":
		ve.Add("clientId", CodeRequired, nil, "clientId is required")
	case len(clientID) > maxClientID:
		ve.Add("clientId", CodeTooLong, nil, fmt.Sprintf("clientId is at most %d characters", maxClientID))
	}
	switch {
	case clientSecret == "":
		ve.Add("clientSecret", CodeRequired, nil, "clientSecret is required")
	case len(clientSecret) > maxClientSecret:
		ve.Add("clientSecret", CodeTooLong, nil, fmt.Sprintf("clientSecret is at most %d characters", maxClientSecret))
	}
	if len(customScopes) > maxCustomScopes {
		ve.Add("customScopes", CodeInvalid, nil, fmt.Sprintf("at most %d scopes", maxCustomScopes))
	}
	scopes := []string{}
	for i, s := range customScopes {
		s = strings.TrimSpace(s)
		if s == "" || len(s) > maxCustomScopeLen || strings.ContainsAny(s, " \t\r\n") {
			ve.Add(fmt.Sprintf("customScopes[%d]", i), CodeInvalid, s, "a scope is one word of at most 200 characters")
			continue
		}
		scopes = append(scopes, s)
	}
	return scopes
}

// AdminSavePlatformCredentials stores a provider's platform OAuth app
// (operator only): the client id, and the client secret sealed at rest and
// never returned.
func (a *App) AdminSavePlatformCredentials(ctx context.Context, in PlatformCredentialsInput) (*AdminProvider, error) {
	p, err := a.requireOperator(ctx)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	in.ProviderSlug, in.ClientID = strings.TrimSpace(in.ProviderSlug), strings.TrimSpace(in.ClientID)
	switch prov, ok := a.compiledProvider(in.ProviderSlug); {
	case in.ProviderSlug == "":
		ve.Add("providerSlug", CodeRequired, nil, "providerSlug is required")
	case !ok:
		ve.Add("providerSlug", CodeUnknownReference, in.ProviderSlug, "no integration provider "+in.ProviderSlug)
	default:
		if d := prov.Definition(); d.AuthStrategy != ProviderAuthOAuth2 && d.OAuth == nil && !oauthCapable(d.Slug) {
			ve.Add("providerSlug", CodeInvalid, in.ProviderSlug, "provider "+in.ProviderSlug+" does not connect through OAuth")
		}
	}
	scopes := validateOAuthApp(ve, in.ClientID, in.ClientSecret, in.CustomScopes)
	if in.CustomSettings != nil {
		if raw, err := json.Marshal(in.CustomSettings); err != nil || len(raw) > maxCustomSettingsB {
			ve.Add("customSettings", CodeInvalid, nil, fmt.Sprintf("customSettings is a JSON object of at most %d bytes", maxCustomSettingsB))
		}
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		st, err := a.currentSettings(ctx, in.ProviderSlug)
		if err != nil {
			return err
		}
		now := a.Now()
		st.ClientID, st.SealedClientSecret = Ptr(in.ClientID), a.sealSecret("platform-oauth:"+in.ProviderSlug, in.ClientSecret)
		st.CustomScopes, st.CustomSettings = scopes, in.CustomSettings
		if st.CustomSettings == nil {
			st.CustomSettings = map[string]any{}
		}
		st.CredentialsUpdatedAt, st.UpdatedBy, st.UpdatedAt = &now, p.ActorID(), now
		if err := a.store.PutProviderSettings(ctx, &st); err != nil {
			return err
		}
		return a.recordOperator(ctx, p, "platform_credentials_saved", in.ProviderSlug,
			map[string]any{"providerSlug": in.ProviderSlug, "clientId": in.ClientID, "clientSecret": "changed", "customScopes": scopes})
	})
	a.forgetProviderSettings()
	if err != nil {
		return nil, fmt.Errorf("save platform credentials of %s: %w", in.ProviderSlug, err)
	}
	return a.adminGet(ctx, in.ProviderSlug)
}

// AdminDeletePlatformCredentials removes a provider's platform OAuth app
// (operator only). Connections made through it keep their own tokens.
func (a *App) AdminDeletePlatformCredentials(ctx context.Context, slug string) error {
	p, err := a.requireOperator(ctx)
	if err != nil {
		return err
	}
	if _, ok := a.compiledProvider(slug); !ok {
		return Errorf(ErrNotFound, "no integration provider %q", slug)
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		st, err := a.currentSettings(ctx, slug)
		if err != nil {
			return err
		}
		if st.ClientID == nil && len(st.SealedClientSecret) == 0 {
			return Errorf(ErrNotFound, "provider %s has no platform credentials", slug)
		}
		st.ClientID, st.SealedClientSecret, st.CredentialsUpdatedAt = nil, nil, nil
		st.CustomScopes, st.CustomSettings = []string{}, map[string]any{}
		st.UpdatedBy, st.UpdatedAt = p.ActorID(), a.Now()
		if err := a.store.PutProviderSettings(ctx, &st); err != nil {
			return err
		}
		return a.recordOperator(ctx, p, "platform_credentials_deleted", slug, map[string]any{"providerSlug": slug})
	})
	a.forgetProviderSettings()
	if err != nil {
		return fmt.Errorf("delete platform credentials of %s: %w", slug, err)
	}
	return nil
}

// platformOAuthApp returns a provider's platform OAuth client id and secret,
// if the operator stored them.
func (a *App) platformOAuthApp(ctx context.Context, slug string) (clientID, secret string, scopes []string, ok bool, err error) {
	m, err := a.providerSettings(ctx)
	if err != nil {
		return "", "", nil, false, err
	}
	st, has := m[slug]
	if !has || st.ClientID == nil || len(st.SealedClientSecret) == 0 {
		return "", "", nil, false, nil
	}
	secret, err = a.openSecret("platform-oauth:"+slug, st.SealedClientSecret)
	if err != nil {
		return "", "", nil, false, fmt.Errorf("open platform credentials of %s: %w", slug, err)
	}
	return *st.ClientID, secret, st.CustomScopes, true, nil
}
