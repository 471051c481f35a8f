package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Single sign-on with OpenID Connect, per organization: the settings (the
// client secret sealed at rest), the e-mail domains that route sign-in to
// the organization's identity provider, the sign-in flow (state, nonce and
// PKCE verifier kept server-side and used once), and the rules that turn a
// verified identity into a session: the e-mail must be verified and in an
// allowed domain, a known person is matched by e-mail, an unknown one is
// created just in time, a deactivated one is refused.

// SSORoleMapping maps an identity provider group to a role.
type SSORoleMapping struct {
	Group string `json:"group"`
	Role  Role   `json:"role"`
}

// SSOSettings is an organization's single sign-on configuration. The client
// secret is never shown: ClientSecretSet says whether one is stored.
type SSOSettings struct {
	Enabled         bool             `json:"enabled"`
	DisplayName     string           `json:"displayName"`
	Issuer          string           `json:"issuer"`
	ClientID        string           `json:"clientId"`
	ClientSecretSet bool             `json:"clientSecretSet"`
	AllowedDomains  []string         `json:"allowedDomains"`
	GroupsClaim     string           `json:"groupsClaim"`
	RoleMapping     []SSORoleMapping `json:"roleMapping"`
	SSORequired     bool             `json:"ssoRequired"`
	OwnerBreakGlass bool             `json:"ownerBreakGlass"`
	// RedirectURI is the address to register at the identity provider
	// (filled in by the web layer, which knows the public URL).
	RedirectURI string     `json:"redirectUri"`
	UpdatedAt   *time.Time `json:"updatedAt"`
	// Protocol is oidc or saml; SAML is the SAML part (sso_saml.go).
	Protocol string        `json:"protocol"`
	SAML     *SAMLSettings `json:"saml"`

	OrganizationID string `json:"-"`
	SealedSecret   []byte `json:"-"`
}

// SSOSettingsInput is the body of PUT /v1/organization/sso. It replaces the
// settings; ClientSecret absent or null keeps the stored secret, "" removes
// it.
type SSOSettingsInput struct {
	Enabled         bool             `json:"enabled"`
	DisplayName     string           `json:"displayName"`
	Issuer          string           `json:"issuer"`
	ClientID        string           `json:"clientId"`
	ClientSecret    *string          `json:"clientSecret"`
	AllowedDomains  []string         `json:"allowedDomains"`
	GroupsClaim     string           `json:"groupsClaim"`
	RoleMapping     []SSORoleMapping `json:"roleMapping"`
	SSORequired     bool             `json:"ssoRequired"`
	OwnerBreakGlass *bool            `json:"ownerBreakGlass"`
	// Protocol absent keeps the stored one; SAML absent keeps the stored
	// SAML part.
	Protocol string             `json:"protocol"`
	SAML     *SAMLSettingsInput `json:"saml"`
}

// SSOFlow is a sign-in in flight, keyed by the hash of its state.
type SSOFlow struct {
	StateHash      string
	OrganizationID string
	Nonce          string
	Verifier       string
	Next           string
	ExpiresAt      time.Time
}

// SSOStore persists the settings, the domains and the flows.
type SSOStore interface {
	// GetSSOSettings returns ErrNotFound when the organization has none.
	GetSSOSettings(ctx context.Context, orgID string) (*SSOSettings, error)
	PutSSOSettings(ctx context.Context, s *SSOSettings) error
	// SetSSODomains replaces the organization's domains; a domain another
	// organization holds is ErrConflict.
	SetSSODomains(ctx context.Context, orgID string, domains []string) error
	// SSODomainOrganization returns the organization holding a domain.
	SSODomainOrganization(ctx context.Context, domain string) (string, error)
	CreateSSOFlow(ctx context.Context, f *SSOFlow) error
	// TakeSSOFlow deletes and returns a flow (ErrNotFound when unknown or
	// already used).
	TakeSSOFlow(ctx context.Context, stateHash string) (*SSOFlow, error)
	PurgeSSOFlows(ctx context.Context, before time.Time) error
}

// OIDCConfig is what the OpenID Connect client needs for one organization.
type OIDCConfig struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	RedirectURL  string
	GroupsClaim  string
}

// OIDCDiscovery is what an issuer's discovery document announced.
type OIDCDiscovery struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorizationEndpoint"`
	TokenEndpoint         string `json:"tokenEndpoint"`
	UserinfoEndpoint      string `json:"userinfoEndpoint"`
	SigningKeys           int    `json:"signingKeys"`
}

// SSOIdentity is a person as the identity provider vouched for them.
type SSOIdentity struct {
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
	Groups        []string
}

// OIDCClient is the OpenID Connect relying party (implemented by the sso
// adapter over the outbound client). Its errors are shown to people, so
// they say what went wrong in words.
type OIDCClient interface {
	// Discover reads the issuer's discovery document and signing keys.
	Discover(ctx context.Context, issuer string) (*OIDCDiscovery, error)
	// AuthCodeURL is the authorization request (code flow with PKCE S256
	// and a nonce).
	AuthCodeURL(ctx context.Context, c OIDCConfig, state, nonce, verifier string) (string, error)
	// Exchange redeems the code, verifies the ID token (signature, issuer,
	// audience, expiry, nonce) and returns the identity.
	Exchange(ctx context.Context, c OIDCConfig, code, verifier, nonce string) (*SSOIdentity, error)
}

// SetOIDCClient sets the OpenID Connect client; without one, single
// sign-on cannot start.
func (a *App) SetOIDCClient(c OIDCClient) { a.oidc = c }

// SSOError is a sign-in refused or failed, with a message for the person.
// Upstream is true when the identity provider failed (not the person).
type SSOError struct {
	Msg      string
	Upstream bool
}

func (e *SSOError) Error() string { return e.Msg }

// OIDCCallbackPath is the redirect URI's path under the public URL.
const OIDCCallbackPath = "/sso/oidc/callback"

// ssoFlowLifetime bounds the time between leaving for the identity
// provider and coming back.
const ssoFlowLifetime = 10 * time.Minute

var domainRe = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)

func ssoDefaults(orgID string) *SSOSettings {
	return &SSOSettings{OrganizationID: orgID, GroupsClaim: "groups", OwnerBreakGlass: true,
		AllowedDomains: []string{}, RoleMapping: []SSORoleMapping{}}
}

// GetSSOSettings returns the organization's settings (owners, admins and
// auditors).
func (a *App) GetSSOSettings(ctx context.Context) (*SSOSettings, error) {
	p, err := authorize(ctx, CapReadAudit)
	if err != nil {
		return nil, err
	}
	return a.ssoSettings(ctx, p.OrgID)
}

func (a *App) ssoSettings(ctx context.Context, orgID string) (*SSOSettings, error) {
	s, err := a.store.GetSSOSettings(ctx, orgID)
	if errors.Is(err, ErrNotFound) {
		s, err = ssoDefaults(orgID), nil
	}
	if err != nil {
		return nil, fmt.Errorf("sso settings: %w", err)
	}
	s.ClientSecretSet = len(s.SealedSecret) > 0
	if err := a.loadSAML(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}

// PutSSOSettings replaces the settings (owners and admins; a mapping to
// admin only by an owner).
func (a *App) PutSSOSettings(ctx context.Context, in SSOSettingsInput) (*SSOSettings, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	before, err := a.ssoSettings(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	s, v := a.validateSSO(p, before, in)
	a.validateSAML(ctx, before, in, s, v)
	if err := a.finishSAML(s, v); err != nil {
		return nil, err
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	now := a.Now()
	s.UpdatedAt = &now
	if in.ClientSecret != nil {
		if *in.ClientSecret == "" {
			s.SealedSecret = nil
		} else {
			s.SealedSecret = a.sealSecret("sso:"+p.OrgID, *in.ClientSecret)
		}
	}
	s.ClientSecretSet = len(s.SealedSecret) > 0
	if s.Enabled && !s.ClientSecretSet && s.Protocol != SSOProtocolSAML {
		v.Add("clientSecret", CodeRequired, nil, "clientSecret is required to enable single sign-on")
		return nil, v.Err()
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.SetSSODomains(ctx, p.OrgID, s.AllowedDomains); err != nil {
			if errors.Is(err, ErrConflict) {
				v.Add("allowedDomains", CodeInvalid, nil, "allowedDomains: a domain is already used for single sign-on by another organization")
				return v.Err()
			}
			return err
		}
		if err := a.store.PutSSOSettings(ctx, s); err != nil {
			return err
		}
		if err := a.store.PutSAMLSettings(ctx, p.OrgID, s.Protocol, s.SAML); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "sso_settings", ResourceID: p.OrgID, Before: before, After: s})
	})
	if err != nil {
		return nil, fmt.Errorf("put sso settings: %w", err)
	}
	return s, nil
}

func (a *App) validateSSO(p *Principal, before *SSOSettings, in SSOSettingsInput) (*SSOSettings, *ValidationError) {
	v := NewValidationError()
	s := &SSOSettings{OrganizationID: p.OrgID, Enabled: in.Enabled, SealedSecret: before.SealedSecret,
		DisplayName: strings.TrimSpace(in.DisplayName), Issuer: strings.TrimRight(strings.TrimSpace(in.Issuer), "/"),
		ClientID: strings.TrimSpace(in.ClientID), GroupsClaim: strings.TrimSpace(in.GroupsClaim),
		SSORequired: in.SSORequired, OwnerBreakGlass: in.OwnerBreakGlass == nil || *in.OwnerBreakGlass,
		AllowedDomains: []string{}, RoleMapping: []SSORoleMapping{}}
	if s.GroupsClaim == "" {
		s.GroupsClaim = "groups"
	}
	maxLen(v, "displayName", s.DisplayName, 100)
	maxLen(v, "issuer", s.Issuer, 500)
	maxLen(v, "clientId", s.ClientID, 500)
	maxLen(v, "groupsClaim", s.GroupsClaim, 100)
	if in.ClientSecret != nil {
		maxLen(v, "clientSecret", *in.ClientSecret, 2000)
	}
	if s.Issuer != "" {
		u, err := url.Parse(s.Issuer)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			v.Add("issuer", CodeInvalid, s.Issuer, "issuer must be an https:// URL without query or fragment")
		}
	}
	if len(in.AllowedDomains) > 50 {
		v.Add("allowedDomains", CodeTooLong, nil, "allowedDomains holds at most 50 domains")
	}
	for i, d := range in.AllowedDomains {
		d = strings.TrimPrefix(NormalizeEmail(d), "@")
		if !domainRe.MatchString(d) || len(d) > 253 {
			v.Add(fmt.Sprintf("allowedDomains[%d]", i), CodeInvalid, d, "allowedDomains must be domain names such as example.com")
			continue
		}
		if !slices.Contains(s.AllowedDomains, d) {
			s.AllowedDomains = append(s.AllowedDomains, d)
		}
	}
	if len(in.RoleMapping) > 100 {
		v.Add("roleMapping", CodeTooLong, nil, "roleMapping holds at most 100 entries")
	}
	for i, m := range in.RoleMapping {
		f := fmt.Sprintf("roleMapping[%d]", i)
		m.Group = strings.TrimSpace(m.Group)
		if m.Group == "" {
			v.Add(f+".group", CodeRequired, nil, f+".group is required")
		}
		maxLen(v, f+".group", m.Group, 200)
		switch m.Role {
		case RoleAuditor, RoleEmployee, RoleContractor:
		case RoleAdmin:
			if p.Role != RoleOwner {
				v.Add(f+".role", CodeInvalid, m.Role, "only an owner may map a group to admin")
			}
		default:
			v.Add(f+".role", CodeInvalidEnum, m.Role, f+".role must be one of admin, auditor, employee, contractor (never owner)")
		}
		s.RoleMapping = append(s.RoleMapping, m)
	}
	if s.Enabled && in.Protocol != SSOProtocolSAML && (in.Protocol == SSOProtocolOIDC || before.Protocol != SSOProtocolSAML) {
		if s.Issuer == "" {
			v.Add("issuer", CodeRequired, nil, "issuer is required to enable single sign-on")
		}
		if s.ClientID == "" {
			v.Add("clientId", CodeRequired, nil, "clientId is required to enable single sign-on")
		}
		if len(s.AllowedDomains) == 0 {
			v.Add("allowedDomains", CodeRequired, nil, "allowedDomains needs at least one domain to enable single sign-on")
		}
	}
	if s.SSORequired && !s.Enabled {
		v.Add("ssoRequired", CodeInvalid, true, "ssoRequired needs single sign-on enabled")
	}
	return s, v
}

// SSOTestResult is what the settings test found.
type SSOTestResult struct {
	OK        bool           `json:"ok"`
	Message   string         `json:"message"`
	Discovery *OIDCDiscovery `json:"discovery"`
	// SAML is what the identity provider's metadata says (SAML only).
	SAML *SAMLIdP `json:"saml"`
}

// TestSSO reads the issuer's discovery document and keys with the stored
// settings and says what is wrong, if anything (owners and admins).
func (a *App) TestSSO(ctx context.Context) (*SSOTestResult, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	s, err := a.ssoSettings(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	switch {
	case s.Protocol == SSOProtocolSAML:
		return a.testSAML(ctx, s), nil
	case s.Issuer == "":
		return &SSOTestResult{Message: "No issuer is set."}, nil
	case a.oidc == nil:
		return &SSOTestResult{Message: "Single sign-on is not available on this appliance."}, nil
	}
	d, err := a.oidc.Discover(ctx, s.Issuer)
	if err != nil {
		return &SSOTestResult{Message: err.Error()}, nil
	}
	msg := "The identity provider answered: discovery document and signing keys are valid."
	if !s.ClientSecretSet || s.ClientID == "" {
		msg += " Set the client id and secret before enabling."
	}
	return &SSOTestResult{OK: true, Message: msg, Discovery: d}, nil
}

// SSOStart is where a person of an e-mail domain signs in.
type SSOStart struct {
	OrganizationID string
	DisplayName    string
	Required       bool
}

// SSOForEmail returns the organization whose single sign-on serves the
// e-mail's domain, or ErrNotFound (no authentication: the sign-in page).
func (a *App) SSOForEmail(ctx context.Context, email string) (*SSOStart, error) {
	email = NormalizeEmail(email)
	at := strings.LastIndexByte(email, '@')
	if at < 0 || len(email) > 320 {
		return nil, ErrNotFound
	}
	orgID, err := a.store.SSODomainOrganization(ctx, email[at+1:])
	if err != nil {
		return nil, err
	}
	s, err := a.ssoSettings(ctx, orgID)
	if err != nil {
		return nil, err
	}
	if !s.Enabled {
		return nil, ErrNotFound
	}
	return &SSOStart{OrganizationID: orgID, DisplayName: ssoName(s), Required: s.SSORequired}, nil
}

func ssoName(s *SSOSettings) string {
	if s.DisplayName != "" {
		return s.DisplayName
	}
	return "single sign-on"
}

// BeginSSO starts a sign-in with the organization's identity provider and
// returns the address to send the browser to. baseURL is the appliance's
// public URL; next is the local page to land on afterwards.
func (a *App) BeginSSO(ctx context.Context, orgID, baseURL, next string) (string, error) {
	if !HasPrefix(orgID, PrefixOrganization) {
		return "", &SSOError{Msg: "This organization does not use single sign-on."}
	}
	s, err := a.store.GetSSOSettings(ctx, orgID)
	if errors.Is(err, ErrNotFound) || (err == nil && !s.Enabled) {
		return "", &SSOError{Msg: "This organization does not use single sign-on."}
	}
	if err != nil {
		return "", fmt.Errorf("begin sso: %w", err)
	}
	if err := a.loadSAML(ctx, s); err != nil {
		return "", err
	}
	if s.Protocol == SSOProtocolSAML {
		return a.beginSAML(ctx, s, baseURL, next)
	}
	redirectURL := baseURL + OIDCCallbackPath
	if a.oidc == nil {
		return "", &SSOError{Msg: "Single sign-on is not available on this appliance.", Upstream: true}
	}
	cfg, err := a.oidcConfig(s, redirectURL)
	if err != nil {
		return "", err
	}
	now := a.Now()
	if err := a.store.PurgeSSOFlows(ctx, now); err != nil {
		return "", fmt.Errorf("purge sso flows: %w", err)
	}
	state, nonce, verifier := RandomToken(32), RandomToken(32), RandomToken(40)
	u, err := a.oidc.AuthCodeURL(ctx, cfg, state, nonce, verifier)
	if err != nil {
		return "", &SSOError{Msg: "The identity provider could not be reached: " + err.Error(), Upstream: true}
	}
	f := &SSOFlow{StateHash: HashKey(state), OrganizationID: orgID, Nonce: nonce, Verifier: verifier, Next: next,
		ExpiresAt: now.Add(ssoFlowLifetime)}
	if err := a.store.CreateSSOFlow(ctx, f); err != nil {
		return "", fmt.Errorf("begin sso: %w", err)
	}
	return u, nil
}

func (a *App) oidcConfig(s *SSOSettings, redirectURL string) (OIDCConfig, error) {
	secret, err := a.openSecret("sso:"+s.OrganizationID, s.SealedSecret)
	if err != nil {
		return OIDCConfig{}, fmt.Errorf("open sso client secret: %w", err)
	}
	return OIDCConfig{Issuer: s.Issuer, ClientID: s.ClientID, ClientSecret: secret, RedirectURL: redirectURL,
		GroupsClaim: s.GroupsClaim}, nil
}

// SSOLogin is a completed single sign-on: the session and where to go.
type SSOLogin struct {
	*LoginResult
	Next string
}

// CompleteSSO finishes a sign-in the identity provider sent back: the state
// must be one this appliance issued, unused and fresh; the code is
// redeemed and the ID token verified; then the person is matched or
// created and a session opened.
func (a *App) CompleteSSO(ctx context.Context, state, code, idpError, redirectURL, ip, userAgent string) (*SSOLogin, error) {
	if state == "" || len(state) > 200 {
		return nil, &SSOError{Msg: "The sign-in response is missing its state. Start the sign-in again."}
	}
	f, err := a.store.TakeSSOFlow(ctx, HashKey(state))
	if errors.Is(err, ErrNotFound) || (err == nil && !a.Now().Before(f.ExpiresAt)) {
		return nil, &SSOError{Msg: "This sign-in has expired or was already used. Start the sign-in again."}
	}
	if err != nil {
		return nil, fmt.Errorf("complete sso: %w", err)
	}
	if idpError != "" {
		return nil, &SSOError{Msg: "The identity provider refused the sign-in: " + clipRunes(idpError, 200), Upstream: true}
	}
	if code == "" {
		return nil, &SSOError{Msg: "The identity provider sent no authorization code."}
	}
	s, err := a.store.GetSSOSettings(ctx, f.OrganizationID)
	if errors.Is(err, ErrNotFound) || (err == nil && !s.Enabled) {
		return nil, &SSOError{Msg: "This organization no longer uses single sign-on."}
	}
	if err != nil {
		return nil, fmt.Errorf("complete sso: %w", err)
	}
	if a.oidc == nil {
		return nil, &SSOError{Msg: "Single sign-on is not available on this appliance.", Upstream: true}
	}
	cfg, err := a.oidcConfig(s, redirectURL)
	if err != nil {
		return nil, err
	}
	id, err := a.oidc.Exchange(ctx, cfg, code, f.Verifier, f.Nonce)
	if err != nil {
		return nil, &SSOError{Msg: "The sign-in could not be verified: " + err.Error(), Upstream: true}
	}
	res, err := a.ssoSignIn(ctx, s, id, ip, userAgent)
	if err != nil {
		return nil, err
	}
	return &SSOLogin{LoginResult: res, Next: f.Next}, nil
}

// ssoRole is the most privileged role the person's groups map to, or "".
func ssoRole(mapping []SSORoleMapping, groups []string) Role {
	rank := map[Role]int{RoleContractor: 1, RoleEmployee: 2, RoleAuditor: 3, RoleAdmin: 4}
	var best Role
	for _, m := range mapping {
		if slices.Contains(groups, m.Group) && rank[m.Role] > rank[best] {
			best = m.Role
		}
	}
	return best
}

// ssoSignIn turns a verified identity into a session in the settings'
// organization.
func (a *App) ssoSignIn(ctx context.Context, s *SSOSettings, id *SSOIdentity, ip, userAgent string) (*LoginResult, error) {
	refuse := func(format string, args ...any) error { return &SSOError{Msg: fmt.Sprintf(format, args...)} }
	email := NormalizeEmail(id.Email)
	at := strings.LastIndexByte(email, '@')
	switch {
	case email == "" || at < 0 || !validEmail(email):
		return nil, refuse("The identity provider did not send an e-mail address for this account.")
	case !id.EmailVerified:
		return nil, refuse("The identity provider has not verified the e-mail address %s.", email)
	case !slices.Contains(s.AllowedDomains, email[at+1:]):
		return nil, refuse("The e-mail domain %s is not allowed to sign in to this organization.", email[at+1:])
	}
	orgID := s.OrganizationID
	sys := SystemContext(ctx, orgID)
	role := ssoRole(s.RoleMapping, id.Groups)
	userID, err := a.store.FindUserByEmail(ctx, email)
	switch {
	case errors.Is(err, ErrNotFound):
		name := strings.TrimSpace(id.Name)
		if name == "" {
			name = email
		}
		if role == "" {
			role = RoleEmployee
		}
		p, err := a.CreatePerson(sys, PersonCreate{Name: clipRunes(name, 200), Email: email, Role: string(role)})
		if err != nil {
			var pe *PublicError
			if errors.As(err, &pe) || errors.As(err, new(*ValidationError)) {
				return nil, refuse("Your account could not be created: %s", err.Error())
			}
			return nil, err
		}
		userID = p.ID
	case err != nil:
		return nil, fmt.Errorf("sso sign-in: %w", err)
	default:
		person, err := a.store.GetPerson(ctx, orgID, userID)
		if errors.Is(err, ErrNotFound) {
			return nil, refuse("The account %s belongs to another organization on this appliance; it cannot sign in here with this identity provider.", email)
		}
		if err != nil {
			return nil, fmt.Errorf("sso sign-in: %w", err)
		}
		if !person.IsActive {
			return nil, refuse("Your account in this organization is deactivated. Ask an administrator.")
		}
		orgs, err := a.store.ListMemberships(ctx, userID)
		if err != nil {
			return nil, fmt.Errorf("sso sign-in: %w", err)
		}
		for _, m := range orgs {
			if m.OrganizationID != orgID {
				return nil, refuse("The account %s also belongs to another organization; sign in with your password instead.", email)
			}
		}
		if role != "" && person.Role != RoleOwner && person.Role != role {
			r := string(role)
			if _, err := a.UpdatePerson(sys, userID, PersonPatch{Role: &r}); err != nil {
				return nil, fmt.Errorf("sso role mapping: %w", err)
			}
		}
	}
	u, err := a.store.GetUser(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("sso sign-in: %w", err)
	}
	return a.OpenSession(ctx, u, ip, userAgent)
}

// passwordAllowed refuses a password sign-in of a person of an
// organization that requires single sign-on, unless they are one of its
// owners and its owners keep a break-glass password.
func (a *App) passwordAllowed(ctx context.Context, u *User) error {
	orgs, err := a.store.ListMemberships(ctx, u.ID)
	if err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	for _, m := range orgs {
		s, err := a.store.GetSSOSettings(ctx, m.OrganizationID)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sign in: %w", err)
		}
		if !s.Enabled || !s.SSORequired || (m.Role == RoleOwner && s.OwnerBreakGlass) {
			continue
		}
		return Errorf(ErrForbidden, "%s requires single sign-on: sign in with %s", m.Name, ssoName(s))
	}
	return nil
}
