package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Integration OAuth: a connection made through a provider's OAuth app
// (GitHub OAuth app, GitLab OAuth application) instead of a pasted token.
// The app's credentials are the organization's own (OAuthApps) or, when it
// has none, the appliance operator's platform app. A flow is started by a
// signed-in person (session only); its state is random, stored as a hash
// with an expiry, single use and bound to the organization and the person;
// the PKCE verifier is sealed. The callback exchanges the code through the
// outbound client, seals the token like every credential and creates or
// updates the connection.

// OAuth flow limits.
const (
	oauthStateTTL          = 10 * time.Minute
	maxOAuthErrorCode      = 200
	maxOAuthErrorDesc      = 2000
	maxOAuthProviderSlug   = 100
	oauthRefreshMargin     = 2 * time.Minute
	oauthVerifierLength    = 48 // base32 characters: 76, within PKCE's 43..128
	oauthCallbackPath      = "/v1/integrations/oauth/callback"
	oauthCredentialMarker  = "oauthApp"       // credential naming the app of the flow: "organization" or "platform"
	oauthCredentialRefresh = "refreshToken"   // the refresh token, when the provider issues one
	oauthCredentialExpiry  = "tokenExpiresAt" // RFC 3339
)

// OAuth app sources.
const (
	OAuthAppOrganization = "organization"
	OAuthAppPlatform     = "platform"
)

// OAuthAppConfig is what the OAuth client needs for one flow.
type OAuthAppConfig struct {
	ClientID     string
	ClientSecret string
	AuthURL      string
	TokenURL     string
	RedirectURL  string
	Scopes       []string
	PKCE         bool
}

// IntegrationOAuthToken is a token the provider issued.
type IntegrationOAuthToken struct {
	AccessToken  string
	RefreshToken string
	ExpiresIn    time.Duration // 0: does not expire
	Scope        string
}

// OAuthProviderError is an error the provider's token endpoint answered
// (error and error_description of RFC 6749 §5.2).
type OAuthProviderError struct {
	Code        string
	Description string
}

func (e *OAuthProviderError) Error() string {
	if e.Description != "" {
		return e.Code + ": " + e.Description
	}
	return e.Code
}

// IntegrationOAuthClient runs the HTTP side of the flows (an adapter over
// the outbound client).
type IntegrationOAuthClient interface {
	AuthCodeURL(c OAuthAppConfig, state, verifier string) string
	// Exchange redeems a code; a refusal is an *OAuthProviderError.
	Exchange(ctx context.Context, c OAuthAppConfig, code, verifier string) (*IntegrationOAuthToken, error)
	// Refresh redeems a refresh token; a refusal is an *OAuthProviderError.
	Refresh(ctx context.Context, c OAuthAppConfig, refreshToken string) (*IntegrationOAuthToken, error)
}

// SetIntegrationOAuthClient sets the client of the integration OAuth flows;
// without one, no flow starts.
func (a *App) SetIntegrationOAuthClient(c IntegrationOAuthClient) { a.integOAuth = c }

// IntegrationOAuthApp is an organization's OAuth app of a provider; the secret is
// sealed and never returned.
type IntegrationOAuthApp struct {
	ProviderSlug       string    `json:"providerSlug"`
	ClientID           string    `json:"clientId"`
	CustomScopes       []string  `json:"customScopes"`
	IsActive           bool      `json:"isActive"`
	CreatedBy          string    `json:"createdBy"`
	CreatedAt          time.Time `json:"createdAt"`
	UpdatedAt          time.Time `json:"updatedAt"`
	SealedClientSecret []byte    `json:"-"`
}

// IntegrationOAuthAppInput is the body of POST /v1/integrations/oauth-apps.
type IntegrationOAuthAppInput struct {
	ProviderSlug string   `json:"providerSlug"`
	ClientID     string   `json:"clientId"`
	ClientSecret string   `json:"clientSecret"`
	CustomScopes []string `json:"customScopes"`
}

// OAuthAvailability answers GET /v1/integrations/oauth/availability.
type OAuthAvailability struct {
	ProviderSlug           string `json:"providerSlug"`
	Available              bool   `json:"available"`
	SupportsOAuth          bool   `json:"supportsOAuth"`
	HasOrgCredentials      bool   `json:"hasOrgCredentials"`
	HasPlatformCredentials bool   `json:"hasPlatformCredentials"`
	Source                 string `json:"source,omitempty"` // which app a flow would use
	Message                string `json:"message,omitempty"`
}

// OAuthSetup answers GET /v1/integrations/oauth-apps/setup/{providerSlug}.
type OAuthSetup struct {
	ProviderSlug string `json:"providerSlug"`
	ProviderName string `json:"providerName"`
	OAuthAvailability
	RequiredScopes []string `json:"requiredScopes"`
	CallbackURL    string   `json:"callbackUrl"`
	SetupURL       string   `json:"setupUrl"`
	SetupHelp      string   `json:"setupHelp"`
	PKCE           bool     `json:"pkce"`
	RefreshTokens  bool     `json:"refreshTokens"`
}

// OAuthStart is the body of POST /v1/integrations/oauth/start.
type OAuthStart struct {
	ProviderSlug string                     `json:"providerSlug"`
	RedirectURL  string                     `json:"redirectUrl"`
	ConnectionID string                     `json:"connectionId"`
	Name         string                     `json:"name"`
	BaseURL      string                     `json:"baseUrl"`
	Variables    map[string]json.RawMessage `json:"variables"`
	// CallbackURL is the absolute callback URL, set by the handler.
	CallbackURL string `json:"-"`
}

// OAuthStarted answers start.
type OAuthStarted struct {
	AuthorizationURL string    `json:"authorizationUrl"`
	ExpiresAt        time.Time `json:"expiresAt"`
}

// OAuthState is a pending flow as stored.
type OAuthState struct {
	StateHash      string
	OrganizationID string
	PersonID       string
	ProviderSlug   string
	ConnectionID   *string
	AppSource      string
	SealedVerifier []byte
	Request        OAuthStateRequest
	ExpiresAt      time.Time
	CreatedAt      time.Time
}

// OAuthStateRequest is what start asked for, kept until the callback.
type OAuthStateRequest struct {
	Name        string            `json:"name,omitempty"`
	BaseURL     string            `json:"baseUrl,omitempty"`
	Variables   map[string]string `json:"variables,omitempty"`
	RedirectURL string            `json:"redirectUrl,omitempty"`
	CallbackURL string            `json:"callbackUrl"`
}

// OAuthCallback is the query of GET /v1/integrations/oauth/callback.
type OAuthCallback struct {
	Code             string
	State            string
	Error            string
	ErrorDescription string
}

// OAuthErrorInput is the body of POST /v1/integrations/oauth-errors.
type OAuthErrorInput struct {
	ProviderSlug     string `json:"providerSlug"`
	Error            string `json:"error"`
	ErrorDescription string `json:"errorDescription"`
}

// OAuthErrorRecord is a recorded OAuth error.
type OAuthErrorRecord struct {
	ID               string    `json:"id"`
	ProviderSlug     string    `json:"providerSlug"`
	Source           string    `json:"source"` // "callback", "exchange", "client"
	Error            string    `json:"error"`
	ErrorDescription string    `json:"errorDescription"`
	PersonID         string    `json:"personId"`
	CreatedAt        time.Time `json:"createdAt"`
}

// IntegrationOAuthStore keeps OAuth apps, pending flows and errors.
type IntegrationOAuthStore interface {
	ListIntegrationOAuthApps(ctx context.Context, orgID string) ([]IntegrationOAuthApp, error)
	GetIntegrationOAuthApp(ctx context.Context, orgID, slug string) (*IntegrationOAuthApp, error)
	PutIntegrationOAuthApp(ctx context.Context, orgID string, o *IntegrationOAuthApp) error
	DeleteIntegrationOAuthApp(ctx context.Context, orgID, slug string) error
	CreateOAuthState(ctx context.Context, orgID string, s *OAuthState) error
	// TakeOAuthState removes a pending flow by its state's hash, over every
	// organization, and returns it (ErrNotFound when absent): a state is
	// used once.
	TakeOAuthState(ctx context.Context, hash string) (*OAuthState, error)
	DeleteExpiredOAuthStates(ctx context.Context, now time.Time) (int, error)
	CreateOAuthError(ctx context.Context, orgID string, e *OAuthErrorRecord) error
	ListOAuthErrors(ctx context.Context, orgID string, limit int) ([]OAuthErrorRecord, error)
}

// oauthProvider returns an enabled provider and its OAuth description, or
// a 400 naming providerSlug.
func (a *App) oauthProvider(slug string) (ProviderDefinition, *ProviderOAuth, error) {
	slug = strings.TrimSpace(slug)
	if slug == "" {
		return ProviderDefinition{}, nil, Invalid("providerSlug", CodeRequired, nil, "providerSlug is required")
	}
	p, ok := a.provider(slug)
	if !ok {
		return ProviderDefinition{}, nil, Invalid("providerSlug", CodeUnknownReference, slug, fmt.Sprintf("%q is not a provider of this appliance", slug))
	}
	d := p.Definition()
	return d, d.OAuth, nil
}

// oauthAppConfig returns the app a flow of the provider uses: the
// organization's own, else the operator's platform app.
func (a *App) oauthAppConfig(ctx context.Context, orgID, slug, prefer string) (source, clientID, secret string, scopes []string, err error) {
	if prefer != OAuthAppPlatform {
		o, err := a.store.GetIntegrationOAuthApp(ctx, orgID, slug)
		switch {
		case err == nil:
			s, err := a.openSecret(oauthAppSealID(orgID, slug), o.SealedClientSecret)
			if err != nil {
				return "", "", "", nil, fmt.Errorf("open the OAuth app secret of %s: %w", slug, err)
			}
			return OAuthAppOrganization, o.ClientID, s, o.CustomScopes, nil
		case !errors.Is(err, ErrNotFound):
			return "", "", "", nil, err
		}
	}
	id, s, sc, ok, err := a.platformOAuthApp(ctx, slug)
	if err != nil || !ok {
		return "", "", "", nil, err
	}
	return OAuthAppPlatform, id, s, sc, nil
}

func oauthAppSealID(orgID, slug string) string { return "org-oauth:" + orgID + ":" + slug }

// GetOAuthAvailability says whether a connection of the provider can be
// made through OAuth, and with which app.
func (a *App) GetOAuthAvailability(ctx context.Context, slug string) (*OAuthAvailability, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	d, o, err := a.oauthProvider(slug)
	if err != nil {
		return nil, err
	}
	return a.availability(ctx, p.OrgID, d, o)
}

func (a *App) availability(ctx context.Context, orgID string, d ProviderDefinition, o *ProviderOAuth) (*OAuthAvailability, error) {
	out := &OAuthAvailability{ProviderSlug: d.Slug, SupportsOAuth: o != nil}
	if o == nil {
		out.Message = d.Name + " does not connect through OAuth; give its credentials instead"
		return out, nil
	}
	if _, err := a.store.GetIntegrationOAuthApp(ctx, orgID, d.Slug); err == nil {
		out.HasOrgCredentials = true
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	m, err := a.providerSettings(ctx)
	if err != nil {
		return nil, err
	}
	if st, ok := m[d.Slug]; ok && st.ClientID != nil && len(st.SealedClientSecret) > 0 {
		out.HasPlatformCredentials = true
	}
	switch {
	case a.integOAuth == nil:
		out.Message = "OAuth is not available in this build"
	case out.HasOrgCredentials:
		out.Available, out.Source = true, OAuthAppOrganization
	case out.HasPlatformCredentials:
		out.Available, out.Source = true, OAuthAppPlatform
	default:
		out.Message = "no OAuth app is configured for " + d.Name + ": save your organization's app, or ask the appliance operator for a platform app"
	}
	return out, nil
}

// safeRedirect accepts a path of this appliance only ("/integrations/..."),
// never another site.
func safeRedirect(s string) bool {
	if s == "" {
		return true
	}
	u, err := url.Parse(s)
	return err == nil && strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//") && !strings.HasPrefix(s, "/\\") &&
		u.Scheme == "" && u.Host == "" && !strings.ContainsAny(s, "\r\n")
}

// StartIntegrationOAuth starts a flow: it returns the provider's
// authorization URL to send the person's browser to. Only a signed-in
// person may start one (not an API key or a token): the callback must come
// back in the same person's session.
func (a *App) StartIntegrationOAuth(ctx context.Context, in OAuthStart) (*OAuthStarted, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	if p.AuthType != AuthSession || p.UserID == "" {
		return nil, Errorf(ErrForbidden, "an OAuth connection is started by a signed-in person in the browser, not with an API key or a token")
	}
	d, o, err := a.oauthProvider(in.ProviderSlug)
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, Invalid("providerSlug", CodeInvalid, d.Slug, d.Name+" does not connect through OAuth")
	}
	if a.integOAuth == nil {
		return nil, Invalid("providerSlug", CodeInvalid, d.Slug, "OAuth is not available in this build")
	}
	ve := NewValidationError()
	req := OAuthStateRequest{Name: strings.TrimSpace(in.Name), BaseURL: strings.TrimRight(strings.TrimSpace(in.BaseURL), "/"),
		RedirectURL: strings.TrimSpace(in.RedirectURL), CallbackURL: in.CallbackURL}
	if !safeRedirect(req.RedirectURL) {
		ve.Add("redirectUrl", CodeInvalid, nil, "redirectUrl must be a path of this appliance, such as /integrations")
	}
	maxLen(ve, "name", req.Name, maxConnectionName)
	if req.BaseURL != "" && !validURL(req.BaseURL) {
		ve.Add("baseUrl", CodeInvalid, nil, "baseUrl must be an http or https URL")
	}
	var connID *string
	if id := strings.TrimSpace(in.ConnectionID); id != "" {
		c, err := a.store.GetConnection(ctx, p.OrgID, id)
		if errors.Is(err, ErrNotFound) {
			return nil, Invalid("connectionId", CodeUnknownReference, id, "no connection "+id)
		}
		if err != nil {
			return nil, err
		}
		if c.ProviderSlug != d.Slug {
			ve.Add("connectionId", CodeInvalid, id, "connection "+id+" is of provider "+c.ProviderSlug)
		}
		if req.BaseURL == "" && o.BaseURLKey != "" {
			if creds, err := a.openCredentials(c); err == nil {
				req.BaseURL = creds[o.BaseURLKey]
			}
		}
		connID = &id
		if in.Variables != nil {
			req.Variables = validateVariables(ve, d, in.Variables, c.Variables)
		}
	} else {
		req.Variables = validateVariables(ve, d, in.Variables, nil)
	}
	authURL, tokenURL, err := o.Endpoints(req.BaseURL)
	if err != nil {
		ve.Add("baseUrl", CodeInvalid, nil, err.Error())
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	source, clientID, _, scopes, err := a.oauthAppConfig(ctx, p.OrgID, d.Slug, "")
	if err != nil {
		return nil, err
	}
	if source == "" {
		return nil, Invalid("providerSlug", CodeInvalid, d.Slug, "no OAuth app is configured for "+d.Name+": save your organization's app (POST /v1/integrations/oauth-apps), or ask the appliance operator for a platform app")
	}
	if len(scopes) == 0 {
		scopes = o.Scopes
	}
	state := RandomToken(32)
	verifier := RandomToken(oauthVerifierLength)
	now := a.Now()
	st := &OAuthState{StateHash: HashKey(state), OrganizationID: p.OrgID, PersonID: p.UserID, ProviderSlug: d.Slug, ConnectionID: connID,
		AppSource: source, Request: req, ExpiresAt: now.Add(oauthStateTTL), CreatedAt: now}
	st.SealedVerifier = a.sealSecret("oauth-verifier:"+st.StateHash, verifier)
	if _, err := a.store.DeleteExpiredOAuthStates(ctx, now); err != nil {
		return nil, err
	}
	if err := a.store.CreateOAuthState(ctx, p.OrgID, st); err != nil {
		return nil, fmt.Errorf("start OAuth for %s: %w", d.Slug, err)
	}
	cfg := OAuthAppConfig{ClientID: clientID, AuthURL: authURL, TokenURL: tokenURL, RedirectURL: req.CallbackURL, Scopes: scopes, PKCE: o.PKCE}
	return &OAuthStarted{AuthorizationURL: a.integOAuth.AuthCodeURL(cfg, state, verifier), ExpiresAt: st.ExpiresAt}, nil
}

// oauthErrorPage is where a failed flow sends the browser.
func oauthErrorPage(code string) string {
	return "/integrations?oauthError=" + url.QueryEscape(code)
}

// CompleteIntegrationOAuth handles the provider's redirect: it returns the
// path to send the browser to (the connection's page, or the integrations
// page with the error). It never fails with an error: every failure is an
// error page, recorded when the flow is known.
func (a *App) CompleteIntegrationOAuth(ctx context.Context, q OAuthCallback) string {
	if q.State == "" {
		return oauthErrorPage("invalid_request")
	}
	st, err := a.store.TakeOAuthState(ctx, HashKey(q.State))
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			a.log.Error("integration OAuth state read failed", "err", err)
		}
		return oauthErrorPage("invalid_state")
	}
	if !st.ExpiresAt.After(a.Now()) {
		return oauthErrorPage("expired_state")
	}
	// The flow is bound to the organization and the person that started it:
	// the callback must come back in that person's session.
	p, err := principal(ctx)
	if err != nil || p.AuthType != AuthSession || p.UserID != st.PersonID || p.OrgID != st.OrganizationID {
		return oauthErrorPage("state_mismatch")
	}
	fail := func(source, code, desc string) string {
		a.recordOAuthError(ctx, st.OrganizationID, st.ProviderSlug, source, code, desc, st.PersonID)
		return oauthErrorPage(code)
	}
	if q.Error != "" {
		return fail("callback", q.Error, q.ErrorDescription)
	}
	if q.Code == "" {
		return fail("callback", "invalid_request", "the provider's redirect has no code")
	}
	prov, ok := a.provider(st.ProviderSlug)
	if !ok || prov.Definition().OAuth == nil || a.integOAuth == nil {
		return fail("callback", "provider_unavailable", "provider "+st.ProviderSlug+" is not available")
	}
	d := prov.Definition()
	o := d.OAuth
	verifier, err := a.openSecret("oauth-verifier:"+st.StateHash, st.SealedVerifier)
	if err != nil {
		return fail("callback", "server_error", "the flow's verifier could not be read")
	}
	cfg, err := a.oauthConfigFor(ctx, st.OrganizationID, d, st.AppSource, st.Request.BaseURL, st.Request.CallbackURL)
	if err != nil {
		return fail("exchange", "unauthorized_client", err.Error())
	}
	tok, err := a.integOAuth.Exchange(ctx, cfg, q.Code, verifier)
	if err != nil {
		var pe *OAuthProviderError
		if errors.As(err, &pe) {
			return fail("exchange", pe.Code, pe.Description)
		}
		return fail("exchange", "exchange_failed", err.Error())
	}
	creds := map[string]string{o.TokenKey: tok.AccessToken, oauthCredentialMarker: st.AppSource}
	if st.Request.BaseURL != "" && o.BaseURLKey != "" {
		creds[o.BaseURLKey] = st.Request.BaseURL
	}
	if tok.RefreshToken != "" {
		creds[oauthCredentialRefresh] = tok.RefreshToken
	}
	if tok.ExpiresIn > 0 {
		creds[oauthCredentialExpiry] = a.Now().Add(tok.ExpiresIn).UTC().Format(time.RFC3339)
	}
	var c *Connection
	if st.ConnectionID != nil {
		c, err = a.reauthorizeConnection(ctx, *st.ConnectionID, st.Request, creds)
	} else {
		c, err = a.createOAuthConnection(ctx, p, d, st.Request, creds)
	}
	if err != nil {
		var ve *ValidationError
		code := "connection_failed"
		switch {
		case errors.As(err, &ve):
			code = "invalid_request"
		case errors.Is(err, ErrForbidden):
			code = "access_denied"
		}
		return fail("callback", code, err.Error())
	}
	if st.Request.RedirectURL != "" {
		sep := "?"
		if strings.Contains(st.Request.RedirectURL, "?") {
			sep = "&"
		}
		return st.Request.RedirectURL + sep + "connectionId=" + url.QueryEscape(c.ID)
	}
	return "/integrations/" + url.PathEscape(c.ID) + "?connected=oauth"
}

// oauthConfigFor builds a flow's client configuration from the app the
// flow (or the connection) was made with.
func (a *App) oauthConfigFor(ctx context.Context, orgID string, d ProviderDefinition, source, baseURL, callback string) (OAuthAppConfig, error) {
	o := d.OAuth
	got, clientID, secret, scopes, err := a.oauthAppConfig(ctx, orgID, d.Slug, source)
	if err != nil {
		return OAuthAppConfig{}, err
	}
	if got == "" || (source != "" && got != source) {
		return OAuthAppConfig{}, fmt.Errorf("the %s OAuth app of %s is gone", source, d.Name)
	}
	authURL, tokenURL, err := o.Endpoints(baseURL)
	if err != nil {
		return OAuthAppConfig{}, err
	}
	if len(scopes) == 0 {
		scopes = o.Scopes
	}
	return OAuthAppConfig{ClientID: clientID, ClientSecret: secret, AuthURL: authURL, TokenURL: tokenURL, RedirectURL: callback,
		Scopes: scopes, PKCE: o.PKCE}, nil
}

// createOAuthConnection creates a connection with the credentials of a
// completed flow, as CreateConnection does for pasted ones.
func (a *App) createOAuthConnection(ctx context.Context, p *Principal, d ProviderDefinition, req OAuthStateRequest, creds map[string]string) (*Connection, error) {
	if err := p.Require(CapManage); err != nil {
		return nil, err
	}
	now := a.Now()
	c := &Connection{ID: NewID(PrefixConnection), ProviderSlug: d.Slug, Status: ConnectionActive, CreatedBy: p.ActorID(),
		CreatedAt: now, UpdatedAt: now, Name: d.Name, Variables: req.Variables, Services: defaultServices(d), SyncFrequency: DefaultSyncFrequency,
		Metadata: map[string]any{}}
	if req.Name != "" {
		c.Name = req.Name
	}
	if c.Variables == nil {
		c.Variables = map[string]string{}
	}
	var err error
	if c.SealedCredentials, c.CredentialKeys, err = a.sealCredentials(c.ID, creds); err != nil {
		return nil, err
	}
	c.NextRunAt = &now
	err = a.insertConnection(ctx, p.OrgID, c, true)
	if err != nil {
		return nil, fmt.Errorf("create connection through OAuth: %w", err)
	}
	return a.connectionView(c), nil
}

// reauthorizeConnection replaces a connection's credentials with those of a
// completed flow (a new token), and its variables when the flow gave some.
func (a *App) reauthorizeConnection(ctx context.Context, id string, req OAuthStateRequest, creds map[string]string) (*Connection, error) {
	return a.mutateConnection(ctx, id, "credentials_updated", func(c *Connection, d ProviderDefinition, ve *ValidationError) (bool, error) {
		var err error
		c.SealedCredentials, c.CredentialKeys, err = a.sealCredentials(c.ID, creds)
		if req.Variables != nil {
			c.Variables = req.Variables
		}
		if req.Name != "" {
			c.Name = req.Name
		}
		if c.Status == ConnectionError || c.Status == ConnectionDisconnected {
			c.Status, c.ErrorMessage = ConnectionActive, nil
			if every := SyncFrequencies[c.SyncFrequency]; every > 0 {
				now := a.Now()
				c.NextRunAt = &now
			}
		}
		return true, err
	})
}

func (a *App) recordOAuthError(ctx context.Context, orgID, slug, source, code, desc, person string) {
	e := &OAuthErrorRecord{ID: NewID(PrefixOAuthError), ProviderSlug: truncRunes(slug, maxOAuthProviderSlug), Source: source,
		Error: truncRunes(code, maxOAuthErrorCode), ErrorDescription: truncRunes(desc, maxOAuthErrorDesc), PersonID: person, CreatedAt: a.Now()}
	if err := a.store.CreateOAuthError(ctx, orgID, e); err != nil {
		a.log.Error("integration OAuth error not recorded", "err", err)
		return
	}
	a.log.Warn("integration OAuth failed", "org", orgID, "provider", slug, "source", source, "error", e.Error)
}

func truncRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// RecordOAuthError records an error the browser saw in a flow (the
// provider's error page, a closed window).
func (a *App) RecordOAuthError(ctx context.Context, in OAuthErrorInput) (*OAuthErrorRecord, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	in.ProviderSlug = strings.TrimSpace(in.ProviderSlug)
	switch {
	case in.ProviderSlug == "":
		ve.Add("providerSlug", CodeRequired, nil, "providerSlug is required")
	case len([]rune(in.ProviderSlug)) > maxOAuthProviderSlug:
		ve.Add("providerSlug", CodeTooLong, nil, fmt.Sprintf("providerSlug is at most %d characters", maxOAuthProviderSlug))
	}
	maxLen(ve, "error", in.Error, maxOAuthErrorCode)
	maxLen(ve, "errorDescription", in.ErrorDescription, maxOAuthErrorDesc)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	if in.Error == "" {
		in.Error = "unknown_error"
	}
	e := &OAuthErrorRecord{ID: NewID(PrefixOAuthError), ProviderSlug: in.ProviderSlug, Source: "client", Error: in.Error,
		ErrorDescription: in.ErrorDescription, PersonID: p.UserID, CreatedAt: a.Now()}
	if err := a.store.CreateOAuthError(ctx, p.OrgID, e); err != nil {
		return nil, fmt.Errorf("record OAuth error: %w", err)
	}
	return e, nil
}

// ListOAuthErrors lists the organization's recent OAuth errors.
func (a *App) ListOAuthErrors(ctx context.Context, limit int) ([]OAuthErrorRecord, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 100 {
		limit = 20
	}
	return a.store.ListOAuthErrors(ctx, p.OrgID, limit)
}

// ListIntegrationOAuthApps lists the organization's OAuth apps (never a secret).
func (a *App) ListIntegrationOAuthApps(ctx context.Context) ([]IntegrationOAuthApp, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	out, err := a.store.ListIntegrationOAuthApps(ctx, p.OrgID)
	if err != nil {
		return nil, fmt.Errorf("list OAuth apps: %w", err)
	}
	return out, nil
}

// GetIntegrationOAuthSetup tells an administrator how to register the provider's
// OAuth app: the callback URL to give it and the scopes it needs.
func (a *App) GetIntegrationOAuthSetup(ctx context.Context, slug, callbackURL string) (*OAuthSetup, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	p2, ok := a.provider(slug)
	if !ok {
		return nil, Errorf(ErrNotFound, "no integration provider %q", slug)
	}
	d := p2.Definition()
	av, err := a.availability(ctx, p.OrgID, d, d.OAuth)
	if err != nil {
		return nil, err
	}
	out := &OAuthSetup{ProviderSlug: d.Slug, ProviderName: d.Name, OAuthAvailability: *av, RequiredScopes: []string{}, CallbackURL: callbackURL}
	if d.OAuth != nil {
		out.RequiredScopes = append(out.RequiredScopes, d.OAuth.Scopes...)
		out.SetupURL, out.SetupHelp, out.PKCE, out.RefreshTokens = d.OAuth.SetupURL, d.OAuth.SetupHelp, d.OAuth.PKCE, d.OAuth.RefreshTokens
	}
	return out, nil
}

// SaveIntegrationOAuthApp stores the organization's OAuth app of a provider; it takes
// precedence over the platform app. The secret is sealed, never returned.
func (a *App) SaveIntegrationOAuthApp(ctx context.Context, in IntegrationOAuthAppInput) (*IntegrationOAuthApp, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	in.ProviderSlug, in.ClientID = strings.TrimSpace(in.ProviderSlug), strings.TrimSpace(in.ClientID)
	if in.ProviderSlug == "" {
		ve.Add("providerSlug", CodeRequired, nil, "providerSlug is required")
	} else if _, o, err := a.oauthProvider(in.ProviderSlug); err != nil {
		return nil, err
	} else if o == nil {
		ve.Add("providerSlug", CodeInvalid, in.ProviderSlug, "provider "+in.ProviderSlug+" does not connect through OAuth")
	}
	scopes := validateOAuthApp(ve, in.ClientID, in.ClientSecret, in.CustomScopes)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	now := a.Now()
	o := &IntegrationOAuthApp{ProviderSlug: in.ProviderSlug, ClientID: in.ClientID, CustomScopes: scopes, IsActive: true, CreatedBy: p.ActorID(),
		CreatedAt: now, UpdatedAt: now, SealedClientSecret: a.sealSecret(oauthAppSealID(p.OrgID, in.ProviderSlug), in.ClientSecret)}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		prev, err := a.store.GetIntegrationOAuthApp(ctx, p.OrgID, in.ProviderSlug)
		action := "created"
		switch {
		case err == nil:
			o.CreatedAt, o.CreatedBy, action = prev.CreatedAt, prev.CreatedBy, "updated"
		case !errors.Is(err, ErrNotFound):
			return err
		}
		if err := a.store.PutIntegrationOAuthApp(ctx, p.OrgID, o); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: action, ResourceType: "integration_oauth_app", ResourceID: in.ProviderSlug,
			After: map[string]any{"providerSlug": in.ProviderSlug, "clientId": in.ClientID, "clientSecret": "[redacted: changed]", "customScopes": scopes}})
	})
	if err != nil {
		return nil, fmt.Errorf("save OAuth app of %s: %w", in.ProviderSlug, err)
	}
	return o, nil
}

// DeleteIntegrationOAuthApp removes the organization's OAuth app of a provider.
// Connections made with it keep their tokens until they expire; a refresh
// then fails and the connection shows the error.
func (a *App) DeleteIntegrationOAuthApp(ctx context.Context, slug string) error {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		prev, err := a.store.GetIntegrationOAuthApp(ctx, p.OrgID, slug)
		if err != nil {
			return err
		}
		if err := a.store.DeleteIntegrationOAuthApp(ctx, p.OrgID, slug); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "integration_oauth_app", ResourceID: slug,
			Before: map[string]any{"providerSlug": slug, "clientId": prev.ClientID, "customScopes": prev.CustomScopes}})
	})
	if err != nil {
		return fmt.Errorf("delete OAuth app of %s: %w", slug, err)
	}
	return nil
}

// refreshOAuthToken renews a connection's OAuth token before it is used
// when the provider issued a refresh token and the token expires within
// two minutes; the new token is sealed back. A refusal is the run's error.
func (a *App) refreshOAuthToken(ctx context.Context, orgID string, c *Connection) error {
	if !containsString(c.CredentialKeys, oauthCredentialRefresh) || !containsString(c.CredentialKeys, oauthCredentialExpiry) {
		return nil
	}
	creds, err := a.openCredentials(c)
	if err != nil {
		return err
	}
	exp, err := time.Parse(time.RFC3339, creds[oauthCredentialExpiry])
	if err == nil && exp.After(a.Now().Add(oauthRefreshMargin)) {
		return nil
	}
	prov, ok := a.compiledProvider(c.ProviderSlug)
	if !ok || prov.Definition().OAuth == nil || a.integOAuth == nil {
		return fmt.Errorf("the OAuth token of connection %s expired and provider %s cannot refresh it", c.ID, c.ProviderSlug)
	}
	d := prov.Definition()
	cfg, err := a.oauthConfigFor(ctx, orgID, d, creds[oauthCredentialMarker], creds[d.OAuth.BaseURLKey], "")
	if err != nil {
		return fmt.Errorf("refresh the OAuth token: %w", err)
	}
	tok, err := a.integOAuth.Refresh(ctx, cfg, creds[oauthCredentialRefresh])
	if err != nil {
		return fmt.Errorf("refresh the OAuth token (connect again through OAuth): %w", err)
	}
	creds[d.OAuth.TokenKey] = tok.AccessToken
	if tok.RefreshToken != "" {
		creds[oauthCredentialRefresh] = tok.RefreshToken
	}
	delete(creds, oauthCredentialExpiry)
	if tok.ExpiresIn > 0 {
		creds[oauthCredentialExpiry] = a.Now().Add(tok.ExpiresIn).UTC().Format(time.RFC3339)
	}
	sealed, keys, err := a.sealCredentials(c.ID, creds)
	if err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		cur, err := a.store.GetConnection(ctx, orgID, c.ID)
		if err != nil {
			return err
		}
		cur.SealedCredentials, cur.CredentialKeys, cur.UpdatedAt = sealed, keys, a.Now()
		if err := a.store.UpdateConnection(ctx, orgID, cur); err != nil {
			return err
		}
		*c = *cur
		return nil
	})
	if err != nil {
		return fmt.Errorf("store the refreshed OAuth token: %w", err)
	}
	a.log.Info("integration OAuth token refreshed", "org", orgID, "connection", c.ID)
	return nil
}

// oauthConnection reports whether a connection was made through OAuth.
func oauthConnection(c *Connection) bool {
	return containsString(c.CredentialKeys, oauthCredentialMarker)
}
