package app

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// The device agent's browser sign-in. `compliance agent enroll --server URL`
// without an enrolment token listens on a loopback port and prints the
// appliance's /agent/authorize page address, carrying that port, a state
// and the SHA-256 challenge of a verifier only the agent knows. The person,
// signed in, approves; the appliance makes a one-time code (5 minutes,
// single use) for them and sends the browser back to the agent's loopback
// address with it. The agent exchanges code and verifier for a sign-in
// token (10 minutes) that lists the person's organizations and registers
// one device for them, in the organization they pick.

// Agent sign-in timing and token prefixes.
const (
	AgentAuthCodeTTL     = 5 * time.Minute
	AgentSessionTTL      = 10 * time.Minute
	AgentAuthCodePrefix  = "cac_"
	AgentSessionPrefix   = "cas_"
	AuthAgentSession     = "agent-session"
	agentCodePurgeMargin = 24 * time.Hour
)

// AgentAuthCode is an approved agent sign-in.
type AgentAuthCode struct {
	ID               string
	CodeHash         string
	Challenge        string
	CallbackPort     int
	State            string
	UserID           string
	CreatedAt        time.Time
	ExpiresAt        time.Time
	UsedAt           *time.Time
	SessionHash      *string
	SessionExpiresAt *time.Time
	SessionUsedAt    *time.Time
}

// AgentSignInStore persists agent sign-in codes and their sign-in tokens.
type AgentSignInStore interface {
	CreateAgentAuthCode(ctx context.Context, c *AgentAuthCode) error
	AgentAuthCodeByHash(ctx context.Context, codeHash string) (*AgentAuthCode, error)
	// UseAgentAuthCode marks an unused code used, with the sign-in token
	// it gave (empty: refused); false when it was used already.
	UseAgentAuthCode(ctx context.Context, id string, at time.Time, sessionHash string, sessionExpires time.Time) (bool, error)
	AgentSessionByHash(ctx context.Context, sessionHash string) (*AgentAuthCode, error)
	// EndAgentSession marks a sign-in token used; false when it was.
	EndAgentSession(ctx context.Context, id string, at time.Time) (bool, error)
	PurgeAgentAuthCodes(ctx context.Context, before time.Time) error
}

// AgentAuthCodeInput is the body of POST /v1/device-agent/auth-code.
type AgentAuthCodeInput struct {
	CallbackPort  *int   `json:"callback_port"`
	State         string `json:"state"`
	CodeChallenge string `json:"code_challenge"`
}

// AgentAuthCodeResult is the approved code and where to send it.
type AgentAuthCodeResult struct {
	Code        string    `json:"code"`
	ExpiresAt   time.Time `json:"expiresAt"`
	RedirectURL string    `json:"redirectUrl"`
}

// AgentExchangeInput is the body of POST /v1/device-agent/exchange-code.
type AgentExchangeInput struct {
	Code         string `json:"code"`
	CodeVerifier string `json:"code_verifier"`
}

// AgentSession is the answer of the exchange.
type AgentSession struct {
	SessionToken string    `json:"session_token"`
	UserID       string    `json:"user_id"`
	ExpiresAt    time.Time `json:"expiresAt"`
}

// AgentChallenge is the challenge of a verifier: base64url(SHA-256), no padding.
func AgentChallenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// ValidateAgentAuthRequest checks the parameters of an agent sign-in
// request (the authorize page and the API share it).
func ValidateAgentAuthRequest(in AgentAuthCodeInput) error {
	v := NewValidationError()
	if in.CallbackPort == nil {
		v.Add("callback_port", CodeRequired, nil, "callback_port is required: the agent's loopback port")
	} else if *in.CallbackPort < 1 || *in.CallbackPort > 65535 {
		v.Add("callback_port", CodeInvalid, *in.CallbackPort, "callback_port must be between 1 and 65535")
	}
	if in.State == "" {
		v.Add("state", CodeRequired, nil, "state is required")
	}
	maxLen(v, "state", in.State, 200)
	if in.CodeChallenge == "" {
		v.Add("code_challenge", CodeRequired, nil, "code_challenge is required: base64url(SHA-256(verifier)) without padding")
	} else if b, err := base64.RawURLEncoding.DecodeString(in.CodeChallenge); err != nil || len(b) != sha256.Size {
		v.Add("code_challenge", CodeInvalid, in.CodeChallenge, "code_challenge must be base64url(SHA-256(verifier)) without padding (43 characters)")
	}
	return v.Err()
}

// CreateAgentAuthCode approves an agent sign-in for the signed-in person.
func (a *App) CreateAgentAuthCode(ctx context.Context, in AgentAuthCodeInput) (*AgentAuthCodeResult, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if p.UserID == "" || p.AuthType == AuthDeviceAgent || p.AuthType == AuthAgentSession {
		return nil, Errorf(ErrForbidden, "an agent sign-in is approved by a person: sign in or use a key of a person")
	}
	if err := ValidateAgentAuthRequest(in); err != nil {
		return nil, err
	}
	now := a.Now()
	code := AgentAuthCodePrefix + RandomToken(32)
	c := &AgentAuthCode{ID: NewID(PrefixAgentAuthCode), CodeHash: hashToken(code), Challenge: in.CodeChallenge, CallbackPort: *in.CallbackPort,
		State: in.State, UserID: p.UserID, CreatedAt: now, ExpiresAt: now.Add(AgentAuthCodeTTL)}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.PurgeAgentAuthCodes(ctx, now.Add(-agentCodePurgeMargin)); err != nil {
			return err
		}
		if err := a.store.CreateAgentAuthCode(ctx, c); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "approved", ResourceType: "device_agent_sign_in", ResourceID: c.ID,
			After: map[string]any{"callbackPort": c.CallbackPort, "expiresAt": c.ExpiresAt}})
	})
	if err != nil {
		return nil, fmt.Errorf("agent auth code: %w", err)
	}
	return &AgentAuthCodeResult{Code: code, ExpiresAt: c.ExpiresAt,
		RedirectURL: fmt.Sprintf("http://127.0.0.1:%d/callback?code=%s&state=%s", c.CallbackPort, code, url.QueryEscape(in.State))}, nil
}

// ExchangeAgentCode trades an approved code and its verifier for a sign-in
// token. A code works once: a wrong verifier uses it up too.
func (a *App) ExchangeAgentCode(ctx context.Context, in AgentExchangeInput) (*AgentSession, error) {
	v := NewValidationError()
	if in.Code == "" {
		v.Add("code", CodeRequired, nil, "code is required")
	}
	if in.CodeVerifier == "" {
		v.Add("code_verifier", CodeRequired, nil, "code_verifier is required")
	}
	maxLen(v, "code", in.Code, 200)
	maxLen(v, "code_verifier", in.CodeVerifier, 200)
	if err := v.Err(); err != nil {
		return nil, err
	}
	now := a.Now()
	invalid := func() error {
		v := NewValidationError()
		v.Add("code", CodeInvalid, nil, "the code is unknown, expired or used: sign in again from the agent")
		return v.Err()
	}
	c, err := a.store.AgentAuthCodeByHash(ctx, hashToken(in.Code))
	if errors.Is(err, ErrNotFound) {
		return nil, invalid()
	}
	if err != nil {
		return nil, err
	}
	if c.UsedAt != nil || !now.Before(c.ExpiresAt) {
		return nil, invalid()
	}
	if subtle.ConstantTimeCompare([]byte(AgentChallenge(in.CodeVerifier)), []byte(c.Challenge)) != 1 {
		if _, err := a.store.UseAgentAuthCode(ctx, c.ID, now, "", now); err != nil {
			return nil, err
		}
		v := NewValidationError()
		v.Add("code_verifier", CodeInvalid, nil, "code_verifier does not match the challenge the sign-in started with; the code is used up")
		return nil, v.Err()
	}
	token := AgentSessionPrefix + RandomToken(32)
	out := &AgentSession{SessionToken: token, UserID: c.UserID, ExpiresAt: now.Add(AgentSessionTTL)}
	ok, err := a.store.UseAgentAuthCode(ctx, c.ID, now, hashToken(token), out.ExpiresAt)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, invalid()
	}
	return out, nil
}

// agentSessionUser resolves a sign-in token to its person and memberships.
func (a *App) agentSessionUser(ctx context.Context, token string) (*AgentAuthCode, *User, []Membership, error) {
	if !strings.HasPrefix(token, AgentSessionPrefix) || len(token) > 200 {
		return nil, nil, nil, ErrUnauthenticated
	}
	c, err := a.store.AgentSessionByHash(ctx, hashToken(token))
	if errors.Is(err, ErrNotFound) {
		return nil, nil, nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if c.SessionUsedAt != nil || c.SessionExpiresAt == nil || !a.Now().Before(*c.SessionExpiresAt) {
		return nil, nil, nil, ErrUnauthenticated
	}
	u, err := a.store.GetUser(ctx, c.UserID)
	if errors.Is(err, ErrNotFound) {
		return nil, nil, nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, nil, nil, err
	}
	orgs, err := a.store.ListMemberships(ctx, u.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	return c, u, enrollableOrgs(orgs), nil
}

// enrollableOrgs are the memberships in which a person may enrol a device
// (every role but auditor, which is read-only).
func enrollableOrgs(orgs []Membership) []Membership {
	out := []Membership{}
	for _, m := range orgs {
		if m.Role != RoleAuditor {
			out = append(out, m)
		}
	}
	return out
}

// MyAgentOrganizations lists the organizations the person of an agent
// sign-in token (or the caller, without one) can enrol a device into.
func (a *App) MyAgentOrganizations(ctx context.Context, sessionToken string) ([]Membership, error) {
	if sessionToken != "" {
		_, _, orgs, err := a.agentSessionUser(ctx, sessionToken)
		return orgs, err
	}
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if p.UserID == "" || p.AuthType == AuthDeviceAgent {
		return nil, Errorf(ErrForbidden, "organizations belong to a person: sign in, use a key of a person or an agent sign-in token")
	}
	orgs, err := a.store.ListMemberships(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	return enrollableOrgs(orgs), nil
}

// RegisterDeviceWithAgentSession registers a device for the person of a
// sign-in token in the organization named by in.OrganizationID (required
// when they belong to several). The token then ends.
func (a *App) RegisterDeviceWithAgentSession(ctx context.Context, sessionToken string, in DeviceRegister) (*DeviceRegistration, error) {
	c, u, orgs, err := a.agentSessionUser(ctx, sessionToken)
	if err != nil {
		return nil, err
	}
	if len(orgs) > 1 && in.OrganizationID == "" {
		v := NewValidationError()
		v.Add("organizationId", CodeRequired, nil, fmt.Sprintf("organizationId is required: you can enrol into %d organizations (GET /v1/device-agent/my-organizations)", len(orgs)))
		return nil, v.Err()
	}
	p, err := PrincipalFor(u, orgs, in.OrganizationID, AuthAgentSession)
	if errors.Is(err, ErrNotFound) {
		v := NewValidationError()
		v.Add("organizationId", CodeInvalid, in.OrganizationID, "organizationId is not an organization you can enrol a device into")
		return nil, v.Err()
	}
	if err != nil {
		return nil, err
	}
	reg, err := a.RegisterDevice(WithPrincipal(ctx, p), "", in)
	if err != nil {
		return nil, err
	}
	if _, err := a.store.EndAgentSession(ctx, c.ID, a.Now()); err != nil {
		return nil, err
	}
	return reg, nil
}
