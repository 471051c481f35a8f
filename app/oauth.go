package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// ID prefixes of OAuth resources.
const (
	PrefixOAuthClient = "oap"
	PrefixOAuthGrant  = "gnt"
)

// OAuthClientSecretPrefix starts every confidential app's client secret.
const OAuthClientSecretPrefix = "cmps_"

// OAuth scopes. A token without the write scope may only read.
const (
	ScopeRead  = "compliance:read"
	ScopeWrite = "compliance:write"
)

// Scopes lists every scope the authorization server grants.
var Scopes = []string{ScopeRead, ScopeWrite}

// OAuthClient is an app that may ask people for delegated access: a public
// client from dynamic registration (no organization, no secret) or a
// confidential app an organization registered (with a hashed secret).
type OAuthClient struct {
	ID                      string     `json:"id"`
	OrganizationID          *string    `json:"-"`
	Name                    string     `json:"name"`
	Description             string     `json:"description"`
	ClientURI               *string    `json:"clientUri"`
	RedirectURIs            []string   `json:"redirectUris"`
	GrantTypes              []string   `json:"grantTypes"`
	ResponseTypes           []string   `json:"responseTypes"`
	Scopes                  []string   `json:"scopes"`
	TokenEndpointAuthMethod string     `json:"tokenEndpointAuthMethod"`
	SecretPrefix            string     `json:"secretPrefix,omitempty"`
	CreatedByID             *string    `json:"createdById"`
	CreatedAt               time.Time  `json:"createdAt"`
	UpdatedAt               time.Time  `json:"updatedAt"`
	DeletedAt               *time.Time `json:"-"`
	SecretHash              string     `json:"-"`
	// ClientSecret is set only in the create and rotate responses.
	ClientSecret string `json:"clientSecret,omitempty"`
}

// Public reports whether the client authenticates without a secret.
func (c *OAuthClient) Public() bool { return c.TokenEndpointAuthMethod == "none" }

// OAuthGrant is a person's consent: the client may act as them, with their
// role, in one organization.
type OAuthGrant struct {
	ID             string     `json:"id"`
	OrganizationID string     `json:"organizationId"`
	UserID         string     `json:"userId"`
	ClientID       string     `json:"clientId"`
	ClientName     string     `json:"clientName"`
	Scopes         []string   `json:"scopes"`
	CreatedAt      time.Time  `json:"createdAt"`
	LastUsedAt     *time.Time `json:"lastUsedAt"`
	RevokedAt      *time.Time `json:"-"`
}

// OAuthToken is a stored authorization code, PKCE record, access or refresh
// token: its signature (never the token), its family and the serialized
// request the protocol library needs back.
type OAuthToken struct {
	Signature      string
	Kind           string // code, pkce, access, refresh
	RequestID      string
	GrantID        string
	ClientID       string
	OrganizationID string
	UserID         string
	Active         bool
	Request        []byte
	ExpiresAt      time.Time
	CreatedAt      time.Time
}

// OAuthStore persists OAuth clients, grants and tokens.
type OAuthStore interface {
	CreateOAuthClient(ctx context.Context, c *OAuthClient) error
	// GetOAuthClient returns a client that is not deleted.
	GetOAuthClient(ctx context.Context, id string) (*OAuthClient, error)
	ListOAuthClients(ctx context.Context, orgID string) ([]OAuthClient, error)
	UpdateOAuthClient(ctx context.Context, c *OAuthClient) error
	DeleteOAuthClient(ctx context.Context, orgID, id string, at time.Time) error
	// FindActiveGrant returns the unrevoked grant of a person to a client in an organization.
	FindActiveGrant(ctx context.Context, orgID, userID, clientID string) (*OAuthGrant, error)
	CreateOAuthGrant(ctx context.Context, g *OAuthGrant) error
	UpdateOAuthGrantScopes(ctx context.Context, id string, scopes []string) error
	GetOAuthGrant(ctx context.Context, orgID, id string) (*OAuthGrant, error)
	ListOAuthGrants(ctx context.Context, orgID, userID string) ([]OAuthGrant, error)
	RevokeOAuthGrant(ctx context.Context, orgID, id string, at time.Time) error
	RevokeClientGrants(ctx context.Context, clientID string, at time.Time) error
	TouchOAuthGrant(ctx context.Context, id string, at time.Time) error
	CreateOAuthToken(ctx context.Context, t *OAuthToken) error
	GetOAuthToken(ctx context.Context, kind, signature string) (*OAuthToken, error)
	DeactivateOAuthToken(ctx context.Context, kind, signature string) error
	DeleteOAuthToken(ctx context.Context, kind, signature string) error
	// DeactivateOAuthTokens marks every token of a kind in a request family inactive.
	DeactivateOAuthTokens(ctx context.Context, kind, requestID string) error
	DeleteOAuthTokensOfGrant(ctx context.Context, grantID string) error
	DeleteOAuthTokensOfClient(ctx context.Context, clientID string) error
	PurgeOAuthTokens(ctx context.Context, before time.Time) (int, error)
	// PurgeUnusedOAuthClients deletes anonymously registered clients
	// created before the cut-off that never got a grant or a token.
	PurgeUnusedOAuthClients(ctx context.Context, before time.Time) (int, error)
}

// OAuthClientInput is a dynamic registration (RFC 7591) or an app's
// create and update body.
type OAuthClientInput struct {
	Name         *string  `json:"name"`
	Description  *string  `json:"description"`
	ClientURI    *string  `json:"clientUri"`
	RedirectURIs []string `json:"redirectUris"`
	Scopes       []string `json:"scopes"`
}

// validRedirectURI accepts https, http on loopback (native apps on the
// same machine), and private-use schemes (RFC 8252), never fragments.
func validRedirectURI(s string) bool {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Fragment != "" || len(s) > 2000 {
		return false
	}
	switch u.Scheme {
	case "https":
		return u.Host != ""
	case "http":
		h := u.Hostname()
		return h == "localhost" || h == "127.0.0.1" || h == "::1" || strings.HasSuffix(h, ".localhost")
	case "javascript", "data", "file", "vbscript", "blob", "about", "ftp", "ws", "wss":
		return false
	}
	// A native app's private-use scheme (com.example.app:/cb, vscode://...).
	return u.Host != "" || u.Path != ""
}

func (in *OAuthClientInput) validate(v *ValidationError, create bool, nameField, urisField string) {
	if in.Name != nil {
		*in.Name = strings.TrimSpace(*in.Name)
	}
	if create && (in.Name == nil || *in.Name == "") {
		v.Add(nameField, CodeRequired, nil, nameField+" is required")
	}
	if in.Name != nil {
		maxLen(v, nameField, *in.Name, 200)
		if !create && *in.Name == "" {
			v.Add(nameField, CodeRequired, nil, nameField+" must not be empty")
		}
	}
	if in.Description != nil {
		maxLen(v, "description", *in.Description, 2000)
	}
	if in.ClientURI != nil && *in.ClientURI != "" && !validURL(*in.ClientURI) {
		v.Add("clientUri", CodeInvalid, *in.ClientURI, "clientUri must be an http or https URL")
	}
	if create && len(in.RedirectURIs) == 0 {
		v.Add(urisField, CodeRequired, nil, urisField+" must list at least one redirect URI")
	}
	if len(in.RedirectURIs) > 10 {
		v.Add(urisField, CodeTooLong, len(in.RedirectURIs), urisField+" may list at most 10 URIs")
	}
	for _, u := range in.RedirectURIs {
		if !validRedirectURI(u) {
			v.Add(urisField, CodeInvalid, u, urisField+" must be https URLs, http URLs on localhost, or app schemes, without fragments")
			break
		}
	}
	for _, s := range in.Scopes {
		if !slices.Contains(Scopes, s) {
			v.Add("scopes", CodeInvalidEnum, s, "scopes must be among "+strings.Join(Scopes, ", "))
			break
		}
	}
}

// RegisterClient registers a public client (RFC 7591 dynamic registration:
// no secret, authorization code with PKCE and refresh tokens).
func (a *App) RegisterClient(ctx context.Context, in OAuthClientInput) (*OAuthClient, error) {
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		in.Name = Ptr("Unnamed app")
	}
	v := NewValidationError()
	in.validate(v, true, "client_name", "redirect_uris")
	if err := v.Err(); err != nil {
		return nil, err
	}
	now := a.Now()
	scopes := in.Scopes
	if len(scopes) == 0 {
		scopes = Scopes
	}
	c := &OAuthClient{ID: NewID(PrefixOAuthClient), Name: *in.Name, RedirectURIs: in.RedirectURIs,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, Scopes: scopes,
		TokenEndpointAuthMethod: "none", CreatedAt: now, UpdatedAt: now}
	if in.ClientURI != nil && *in.ClientURI != "" {
		c.ClientURI = in.ClientURI
	}
	if err := a.store.CreateOAuthClient(ctx, c); err != nil {
		return nil, fmt.Errorf("register client: %w", err)
	}
	return c, nil
}

// OAuthClient returns a client for the protocol layer (any organization).
func (a *App) OAuthClient(ctx context.Context, id string) (*OAuthClient, error) {
	if len(id) > 100 {
		return nil, ErrNotFound
	}
	return a.store.GetOAuthClient(ctx, id)
}

// CreateOAuthApp registers a confidential app of the organization and
// returns it with its client secret, shown once.
func (a *App) CreateOAuthApp(ctx context.Context, in OAuthClientInput) (*OAuthClient, error) {
	p, err := authorize(ctx, CapManageKeys)
	if err != nil {
		return nil, err
	}
	v := NewValidationError()
	in.validate(v, true, "name", "redirectUris")
	if err := v.Err(); err != nil {
		return nil, err
	}
	now := a.Now()
	scopes := in.Scopes
	if len(scopes) == 0 {
		scopes = Scopes
	}
	secret := OAuthClientSecretPrefix + RandomToken(32)
	c := &OAuthClient{ID: NewID(PrefixOAuthClient), OrganizationID: Ptr(p.OrgID), Name: *in.Name, RedirectURIs: in.RedirectURIs,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, Scopes: scopes,
		TokenEndpointAuthMethod: "client_secret_basic", SecretHash: HashKey(secret), SecretPrefix: secret[:12],
		CreatedAt: now, UpdatedAt: now}
	if in.Description != nil {
		c.Description = *in.Description
	}
	if in.ClientURI != nil && *in.ClientURI != "" {
		c.ClientURI = in.ClientURI
	}
	if p.UserID != "" {
		c.CreatedByID = Ptr(p.UserID)
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.CreateOAuthClient(ctx, c); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "oauth_app", ResourceID: c.ID, After: c,
			Events: []Event{ResourceEvent("oauth_app", "created", c)}})
	})
	if err != nil {
		return nil, fmt.Errorf("create oauth app: %w", err)
	}
	c.ClientSecret = secret
	return c, nil
}

// ListOAuthApps lists the organization's confidential apps.
func (a *App) ListOAuthApps(ctx context.Context) ([]OAuthClient, error) {
	p, err := authorize(ctx, CapManageKeys)
	if err != nil {
		return nil, err
	}
	return a.store.ListOAuthClients(ctx, p.OrgID)
}

// GetOAuthApp returns one of the organization's apps.
func (a *App) GetOAuthApp(ctx context.Context, id string) (*OAuthClient, error) {
	p, err := authorize(ctx, CapManageKeys)
	if err != nil {
		return nil, err
	}
	return a.orgApp(ctx, p.OrgID, id)
}

func (a *App) orgApp(ctx context.Context, orgID, id string) (*OAuthClient, error) {
	c, err := a.store.GetOAuthClient(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.OrganizationID == nil || *c.OrganizationID != orgID {
		return nil, ErrNotFound
	}
	return c, nil
}

// UpdateOAuthApp changes an app's name, description, URL, redirect URIs or
// scopes. Narrowed redirect URIs apply to new authorizations.
func (a *App) UpdateOAuthApp(ctx context.Context, id string, in OAuthClientInput) (*OAuthClient, error) {
	p, err := authorize(ctx, CapManageKeys)
	if err != nil {
		return nil, err
	}
	v := NewValidationError()
	if in.RedirectURIs != nil && len(in.RedirectURIs) == 0 {
		v.Add("redirectUris", CodeRequired, nil, "redirectUris must list at least one redirect URI")
	}
	if in.Scopes != nil && len(in.Scopes) == 0 {
		v.Add("scopes", CodeRequired, nil, "scopes must list at least one scope")
	}
	in.validate(v, false, "name", "redirectUris")
	if err := v.Err(); err != nil {
		return nil, err
	}
	var out *OAuthClient
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.orgApp(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		next := *before
		if in.Name != nil {
			next.Name = *in.Name
		}
		if in.Description != nil {
			next.Description = *in.Description
		}
		if in.ClientURI != nil {
			next.ClientURI = nil
			if *in.ClientURI != "" {
				next.ClientURI = in.ClientURI
			}
		}
		if in.RedirectURIs != nil {
			next.RedirectURIs = in.RedirectURIs
		}
		if in.Scopes != nil {
			next.Scopes = in.Scopes
		}
		next.UpdatedAt = a.Now()
		if err := a.store.UpdateOAuthClient(ctx, &next); err != nil {
			return err
		}
		out = &next
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "oauth_app", ResourceID: id, Before: before, After: &next,
			Events: []Event{ResourceEvent("oauth_app", "updated", &next)}})
	})
	if err != nil {
		return nil, fmt.Errorf("update oauth app %s: %w", id, err)
	}
	return out, nil
}

// RotateOAuthAppSecret replaces an app's client secret (the old one stops
// working at once) and returns the new one, shown once. Issued tokens stay
// valid.
func (a *App) RotateOAuthAppSecret(ctx context.Context, id string) (*OAuthClient, error) {
	p, err := authorize(ctx, CapManageKeys)
	if err != nil {
		return nil, err
	}
	secret := OAuthClientSecretPrefix + RandomToken(32)
	var out *OAuthClient
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		c, err := a.orgApp(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		c.SecretHash, c.SecretPrefix, c.UpdatedAt = HashKey(secret), secret[:12], a.Now()
		if err := a.store.UpdateOAuthClient(ctx, c); err != nil {
			return err
		}
		out = c
		return a.record(ctx, Mutation{Action: "secret_rotated", ResourceType: "oauth_app", ResourceID: id})
	})
	if err != nil {
		return nil, fmt.Errorf("rotate secret of oauth app %s: %w", id, err)
	}
	out.ClientSecret = secret
	return out, nil
}

// DeleteOAuthApp deletes an app with its grants and tokens.
func (a *App) DeleteOAuthApp(ctx context.Context, id string) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	if err := p.Require(CapManageKeys); err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.orgApp(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		now := a.Now()
		if err := a.store.DeleteOAuthClient(ctx, p.OrgID, id, now); err != nil {
			return err
		}
		if err := a.store.RevokeClientGrants(ctx, id, now); err != nil {
			return err
		}
		if err := a.store.DeleteOAuthTokensOfClient(ctx, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "oauth_app", ResourceID: id, Before: before,
			Events: []Event{ResourceEvent("oauth_app", "deleted", before)}})
	})
	if err != nil {
		return fmt.Errorf("delete oauth app %s: %w", id, err)
	}
	return nil
}

// Consent records that the person in ctx lets a client act as them in
// the principal's organization with the scopes, reusing an existing grant.
// The client must be public or belong to that organization.
func (a *App) Consent(ctx context.Context, clientID string, scopes []string) (*OAuthGrant, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if p.UserID == "" || p.AuthType != AuthSession {
		return nil, Errorf(ErrForbidden, "only a signed-in person can approve an app")
	}
	var out *OAuthGrant
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		c, err := a.store.GetOAuthClient(ctx, clientID)
		if err != nil {
			return err
		}
		if c.OrganizationID != nil && *c.OrganizationID != p.OrgID {
			return Errorf(ErrForbidden, "this app belongs to another organization")
		}
		g, err := a.store.FindActiveGrant(ctx, p.OrgID, p.UserID, clientID)
		verb := "created"
		switch {
		case errors.Is(err, ErrNotFound):
			g = &OAuthGrant{ID: NewID(PrefixOAuthGrant), OrganizationID: p.OrgID, UserID: p.UserID, ClientID: clientID,
				ClientName: c.Name, Scopes: scopes, CreatedAt: a.Now()}
			if err := a.store.CreateOAuthGrant(ctx, g); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			merged := slices.Clone(g.Scopes)
			for _, s := range scopes {
				if !slices.Contains(merged, s) {
					merged = append(merged, s)
				}
			}
			if err := a.store.UpdateOAuthGrantScopes(ctx, g.ID, merged); err != nil {
				return err
			}
			g.Scopes = merged
			verb = "updated"
		}
		out = g
		return a.record(ctx, Mutation{Action: verb, ResourceType: "oauth_grant", ResourceID: g.ID, After: g,
			Events: []Event{ResourceEvent("oauth_grant", verb, g)}})
	})
	if err != nil {
		return nil, fmt.Errorf("consent: %w", err)
	}
	return out, nil
}

// ListMyGrants lists the grants the person in ctx gave in the organization.
func (a *App) ListMyGrants(ctx context.Context) ([]OAuthGrant, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if p.UserID == "" || p.AuthType == AuthAPIKey {
		return nil, Errorf(ErrForbidden, "grants belong to people; sign in to manage yours")
	}
	return a.store.ListOAuthGrants(ctx, p.OrgID, p.UserID)
}

// RevokeMyGrant withdraws a grant the person in ctx gave; every token
// issued under it stops working at once.
func (a *App) RevokeMyGrant(ctx context.Context, id string) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	if p.UserID == "" || p.AuthType == AuthAPIKey {
		return Errorf(ErrForbidden, "grants belong to people; sign in to manage yours")
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		g, err := a.store.GetOAuthGrant(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if g.UserID != p.UserID || g.RevokedAt != nil {
			return ErrNotFound
		}
		if err := a.store.RevokeOAuthGrant(ctx, p.OrgID, id, a.Now()); err != nil {
			return err
		}
		if err := a.store.DeleteOAuthTokensOfGrant(ctx, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "revoked", ResourceType: "oauth_grant", ResourceID: id, Before: g,
			Events: []Event{ResourceEvent("oauth_grant", "revoked", g)}})
	})
	if err != nil {
		return fmt.Errorf("revoke grant %s: %w", id, err)
	}
	return nil
}

// OAuthPrincipal resolves the person behind a valid access token: their
// current role in the grant's organization. A revoked grant, a deleted
// client or an ended membership is ErrUnauthenticated.
func (a *App) OAuthPrincipal(ctx context.Context, grantID, userID, orgID, clientID string) (*Principal, error) {
	g, err := a.store.GetOAuthGrant(ctx, orgID, grantID)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, fmt.Errorf("get grant: %w", err)
	}
	if g.RevokedAt != nil || g.UserID != userID || g.ClientID != clientID {
		return nil, ErrUnauthenticated
	}
	u, err := a.store.GetUser(ctx, userID)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, fmt.Errorf("get user: %w", err)
	}
	orgs, err := a.store.ListMemberships(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("list memberships: %w", err)
	}
	p, err := PrincipalFor(u, orgs, orgID, AuthOAuth)
	if err != nil {
		return nil, ErrUnauthenticated
	}
	p.ClientID = clientID
	if now := a.Now(); g.LastUsedAt == nil || now.Sub(*g.LastUsedAt) > touchInterval {
		if err := a.store.TouchOAuthGrant(ctx, grantID, now); err != nil {
			return nil, fmt.Errorf("touch grant: %w", err)
		}
	}
	return p, nil
}

// The protocol layer's token storage. Each call is a thin pass-through so
// that the web layer never touches storage.

// SaveOAuthToken stores a code, PKCE record or token.
func (a *App) SaveOAuthToken(ctx context.Context, t *OAuthToken) error {
	t.CreatedAt = a.Now()
	return a.store.CreateOAuthToken(ctx, t)
}

// LoadOAuthToken returns a stored code, PKCE record or token.
func (a *App) LoadOAuthToken(ctx context.Context, kind, signature string) (*OAuthToken, error) {
	return a.store.GetOAuthToken(ctx, kind, signature)
}

// DeactivateOAuthToken marks a code or token used; presenting it again is
// detected as reuse.
func (a *App) DeactivateOAuthToken(ctx context.Context, kind, signature string) error {
	return a.store.DeactivateOAuthToken(ctx, kind, signature)
}

// DeleteOAuthToken removes a stored code, PKCE record or token.
func (a *App) DeleteOAuthToken(ctx context.Context, kind, signature string) error {
	return a.store.DeleteOAuthToken(ctx, kind, signature)
}

// RevokeOAuthFamily deactivates every token of a kind issued under one
// authorization (refresh-token reuse, RFC 7009 revocation).
func (a *App) RevokeOAuthFamily(ctx context.Context, kind, requestID string) error {
	return a.store.DeactivateOAuthTokens(ctx, kind, requestID)
}

// InOAuthTx runs fn in one transaction (token rotation).
func (a *App) InOAuthTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return a.store.InTx(ctx, fn)
}

// PurgeOAuthTokens deletes codes and tokens expired more than a day ago,
// and anonymously registered clients nobody used within a day (job).
func (a *App) PurgeOAuthTokens(ctx context.Context) error {
	if _, err := a.store.PurgeOAuthTokens(ctx, a.Now().Add(-24*time.Hour)); err != nil {
		return fmt.Errorf("purge oauth tokens: %w", err)
	}
	if _, err := a.store.PurgeUnusedOAuthClients(ctx, a.Now().Add(-24*time.Hour)); err != nil {
		return fmt.Errorf("purge oauth clients: %w", err)
	}
	return nil
}
