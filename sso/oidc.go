// Package sso is the OpenID Connect relying party of single sign-on
// (coreos/go-oidc over golang.org/x/oauth2), speaking to each
// organization's identity provider through the appliance's outbound HTTP
// client (network policy, proxy, timeouts). It implements app.OIDCClient.
package sso

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/compliance-appliance/compliance/app"
)

// providerTTL is how long a discovery document is reused before it is read
// again.
const providerTTL = 10 * time.Minute

// Client is the OpenID Connect client.
type Client struct {
	http *http.Client
	now  func() time.Time

	mu        sync.Mutex
	providers map[string]cachedProvider
}

type cachedProvider struct {
	p    *oidc.Provider
	read time.Time
}

// New returns a client sending every request through c.
func New(c *http.Client) *Client {
	return &Client{http: c, now: time.Now, providers: map[string]cachedProvider{}}
}

var _ app.OIDCClient = (*Client)(nil)

func (c *Client) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, c.http)
}

// provider returns the issuer's provider, discovering it when not cached.
func (c *Client) provider(ctx context.Context, issuer string, fresh bool) (*oidc.Provider, error) {
	c.mu.Lock()
	cp, ok := c.providers[issuer]
	c.mu.Unlock()
	if ok && !fresh && c.now().Sub(cp.read) < providerTTL {
		return cp.p, nil
	}
	// The provider keeps this context's client for its key set, which
	// outlives the request: only the client is taken from it.
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), c.http), issuer)
	if err != nil {
		return nil, explain(err, issuer)
	}
	c.mu.Lock()
	c.providers[issuer] = cachedProvider{p: p, read: c.now()}
	c.mu.Unlock()
	return p, nil
}

// Discover reads the discovery document and the signing keys.
func (c *Client) Discover(ctx context.Context, issuer string) (*app.OIDCDiscovery, error) {
	p, err := c.provider(ctx, issuer, true)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Issuer   string `json:"issuer"`
		JWKSURI  string `json:"jwks_uri"`
		Userinfo string `json:"userinfo_endpoint"`
	}
	if err := p.Claims(&doc); err != nil {
		return nil, fmt.Errorf("the discovery document of %s is not valid JSON: %w", issuer, err)
	}
	n, err := c.countKeys(ctx, doc.JWKSURI)
	if err != nil {
		return nil, err
	}
	ep := p.Endpoint()
	return &app.OIDCDiscovery{Issuer: doc.Issuer, AuthorizationEndpoint: ep.AuthURL, TokenEndpoint: ep.TokenURL,
		UserinfoEndpoint: doc.Userinfo, SigningKeys: n}, nil
}

func (c *Client) countKeys(ctx context.Context, uri string) (int, error) {
	if uri == "" {
		return 0, errors.New("the discovery document names no jwks_uri (signing keys)")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return 0, fmt.Errorf("the jwks_uri %q is not a valid URL", uri)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, explain(err, uri)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("the signing keys at %s answered HTTP %d", uri, resp.StatusCode)
	}
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Use string `json:"use"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return 0, fmt.Errorf("the signing keys at %s are not a JSON Web Key Set: %w", uri, err)
	}
	n := 0
	for _, k := range set.Keys {
		if k.Kty != "" && k.Use != "enc" {
			n++
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("the key set at %s holds no signing key", uri)
	}
	return n, nil
}

func (c *Client) oauth(p *oidc.Provider, cfg app.OIDCConfig) *oauth2.Config {
	return &oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: cfg.RedirectURL, Scopes: []string{oidc.ScopeOpenID, "email", "profile", "groups"}}
}

// AuthCodeURL is the authorization request: code flow, PKCE S256, nonce.
func (c *Client) AuthCodeURL(ctx context.Context, cfg app.OIDCConfig, state, nonce, verifier string) (string, error) {
	p, err := c.provider(ctx, cfg.Issuer, false)
	if err != nil {
		return "", err
	}
	return c.oauth(p, cfg).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), nil
}

// Exchange redeems the code with the PKCE verifier, verifies the ID token
// (signature from the issuer's keys, issuer, audience, expiry) and its
// nonce, and reads the identity from its claims, completed from the
// userinfo endpoint when the ID token leaves the e-mail out.
func (c *Client) Exchange(ctx context.Context, cfg app.OIDCConfig, code, verifier, nonce string) (*app.SSOIdentity, error) {
	p, err := c.provider(ctx, cfg.Issuer, false)
	if err != nil {
		return nil, err
	}
	oc := c.oauth(p, cfg)
	tok, err := oc.Exchange(c.ctx(ctx), code, oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			msg := re.ErrorCode
			if re.ErrorDescription != "" {
				msg += ": " + re.ErrorDescription
			}
			if msg == "" {
				msg = fmt.Sprintf("HTTP %d", re.Response.StatusCode)
			}
			return nil, fmt.Errorf("the identity provider refused the code (%s); check the client id and secret", msg)
		}
		return nil, explain(err, cfg.Issuer)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, errors.New("the identity provider returned no ID token")
	}
	idt, err := p.VerifierContext(c.ctx(ctx), &oidc.Config{ClientID: cfg.ClientID}).Verify(c.ctx(ctx), raw)
	if err != nil {
		return nil, fmt.Errorf("the ID token is not valid: %w", err)
	}
	if idt.Nonce != nonce {
		return nil, errors.New("the ID token's nonce does not match this sign-in")
	}
	claims := map[string]any{}
	if err := idt.Claims(&claims); err != nil {
		return nil, fmt.Errorf("the ID token's claims are not readable: %w", err)
	}
	if _, ok := claims["email"]; !ok && p.UserInfoEndpoint() != "" {
		ui, err := p.UserInfo(c.ctx(ctx), oauth2.StaticTokenSource(tok))
		if err != nil {
			return nil, fmt.Errorf("the userinfo endpoint failed: %w", err)
		}
		if ui.Subject != idt.Subject {
			return nil, errors.New("the userinfo answer is about another subject than the ID token")
		}
		extra := map[string]any{}
		if err := ui.Claims(&extra); err != nil {
			return nil, fmt.Errorf("the userinfo claims are not readable: %w", err)
		}
		for k, v := range extra {
			if _, ok := claims[k]; !ok {
				claims[k] = v
			}
		}
	}
	id := &app.SSOIdentity{Subject: idt.Subject, Groups: stringList(claims[cfg.GroupsClaim])}
	id.Email, _ = claims["email"].(string)
	id.Name, _ = claims["name"].(string)
	switch v := claims["email_verified"].(type) {
	case bool:
		id.EmailVerified = v
	case string: // some providers send "true"
		id.EmailVerified = v == "true"
	}
	return id, nil
}

// stringList reads a claim that is a list of strings or one string.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// explain turns a transport or discovery error into words for the
// settings test and the sign-in error page.
func explain(err error, target string) error {
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var im *oidc.IssuerMismatchError
	var denied *app.DeniedAddressError
	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.As(err, &im):
		return fmt.Errorf("wrong issuer: the discovery document says %q, the settings say %q", im.Discovered, im.Provided)
	case errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci):
		return fmt.Errorf("bad certificate: the TLS certificate of %s is not trusted (%v)", target, err)
	case errors.As(err, &denied):
		return fmt.Errorf("the network policy refuses %s (%v)", target, err)
	case errors.As(err, &dns):
		return fmt.Errorf("unreachable: the name of %s does not resolve (%v)", target, err)
	case errors.As(err, &op):
		return fmt.Errorf("unreachable: could not connect to %s (%v)", target, err)
	case strings.Contains(err.Error(), "404 Not Found"):
		return fmt.Errorf("no discovery document at %s/.well-known/openid-configuration (HTTP 404)", target)
	}
	return fmt.Errorf("the identity provider at %s failed: %w", target, err)
}
