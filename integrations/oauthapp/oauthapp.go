// Package oauthapp runs the HTTP side of the integration OAuth flows
// (authorization code with PKCE, refresh) with golang.org/x/oauth2, through
// the appliance's outbound client (network policy, proxy, timeouts,
// retries). It implements app.IntegrationOAuthClient.
package oauthapp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/compliance-appliance/compliance/app"
)

// Client is the integration OAuth client.
type Client struct {
	http *http.Client
}

var _ app.IntegrationOAuthClient = (*Client)(nil)

// New returns a client sending every request through c.
func New(c *http.Client) *Client { return &Client{http: c} }

func config(c app.OAuthAppConfig) *oauth2.Config {
	return &oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, RedirectURL: c.RedirectURL, Scopes: c.Scopes,
		// Both GitHub and GitLab take the client credentials in the body;
		// naming the style avoids a second, probing request.
		Endpoint: oauth2.Endpoint{AuthURL: c.AuthURL, TokenURL: c.TokenURL, AuthStyle: oauth2.AuthStyleInParams}}
}

func (c *Client) ctx(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, c.http)
}

// AuthCodeURL is the provider's authorization URL for the flow.
func (c *Client) AuthCodeURL(cfg app.OAuthAppConfig, state, verifier string) string {
	var opts []oauth2.AuthCodeOption
	if cfg.PKCE {
		opts = append(opts, oauth2.S256ChallengeOption(verifier))
	}
	return config(cfg).AuthCodeURL(state, opts...)
}

// Exchange redeems an authorization code.
func (c *Client) Exchange(ctx context.Context, cfg app.OAuthAppConfig, code, verifier string) (*app.IntegrationOAuthToken, error) {
	var opts []oauth2.AuthCodeOption
	if cfg.PKCE {
		opts = append(opts, oauth2.VerifierOption(verifier))
	}
	tok, err := config(cfg).Exchange(c.ctx(ctx), code, opts...)
	if err != nil {
		return nil, explain(err)
	}
	return convert(tok), nil
}

// Refresh redeems a refresh token.
func (c *Client) Refresh(ctx context.Context, cfg app.OAuthAppConfig, refreshToken string) (*app.IntegrationOAuthToken, error) {
	tok, err := config(cfg).TokenSource(c.ctx(ctx), &oauth2.Token{RefreshToken: refreshToken}).Token()
	if err != nil {
		return nil, explain(err)
	}
	return convert(tok), nil
}

func convert(t *oauth2.Token) *app.IntegrationOAuthToken {
	out := &app.IntegrationOAuthToken{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken}
	if !t.Expiry.IsZero() {
		// As a duration: the appliance's clock decides when it is due.
		out.ExpiresIn = max(time.Until(t.Expiry).Round(time.Second), time.Second)
	}
	if s, ok := t.Extra("scope").(string); ok {
		out.Scope = s
	}
	return out
}

// explain turns a token endpoint's refusal into the provider's error code
// and description (GitHub answers them with status 200, GitLab with 400
// or 401); other failures (network, policy) keep their message.
func explain(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		pe := &app.OAuthProviderError{Code: re.ErrorCode, Description: re.ErrorDescription}
		if pe.Code == "" {
			pe.Code = "token_request_failed"
			if re.Response != nil {
				pe.Description = fmt.Sprintf("the token endpoint answered HTTP %d", re.Response.StatusCode)
			}
		}
		return pe
	}
	msg := err.Error()
	// oauth2 prefixes its own package name; keep the cause.
	msg = strings.TrimPrefix(msg, "oauth2: ")
	return errors.New(msg)
}
