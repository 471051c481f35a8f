package app

import (
	"context"
	"fmt"
)

// Role is a person's or key's role in an organization.
type Role string

// The built-in roles.
const (
	RoleOwner      Role = "owner"
	RoleAdmin      Role = "admin"
	RoleAuditor    Role = "auditor"
	RoleEmployee   Role = "employee"
	RoleContractor Role = "contractor"
)

// Roles lists every built-in role.
var Roles = []Role{RoleOwner, RoleAdmin, RoleAuditor, RoleEmployee, RoleContractor}

// ParseRole validates a role name.
func ParseRole(s string) (Role, bool) {
	for _, r := range Roles {
		if string(r) == s {
			return r, true
		}
	}
	return "", false
}

// Auth types reported as authType in responses.
const (
	AuthAPIKey  = "api-key"
	AuthSession = "session"
	AuthOAuth   = "oauth"
	AuthSystem  = "system" // CLI and background jobs
	// AuthVendorLink is a vendor answering a questionnaire through its
	// link, without an account.
	AuthVendorLink = "vendor-link"
)

// Principal is who is acting, in which organization, with which role.
type Principal struct {
	OrgID    string
	Plan     string
	Role     Role
	AuthType string
	UserID   string // person acting (session, OAuth, or the key's owner); may be empty for keys
	Email    string
	KeyID    string // API key id when AuthType is api-key
	ClientID string // OAuth client when AuthType is oauth
	// Scopes are the scopes granted to the OAuth access token when
	// AuthType is oauth.
	Scopes []string
	LinkID string // questionnaire link when AuthType is vendor-link
}

// ActorType and ActorID identify the principal in the audit trail.
func (p *Principal) ActorType() string {
	switch {
	case p.AuthType == AuthAPIKey:
		return "api_key"
	case p.AuthType == AuthVendorLink:
		return "vendor_link"
	case p.UserID != "":
		return "person"
	default:
		return "system"
	}
}

// ActorID is the key id, the questionnaire link id, the person id or
// "system".
func (p *Principal) ActorID() string {
	switch {
	case p.AuthType == AuthAPIKey:
		return p.KeyID
	case p.AuthType == AuthVendorLink:
		return p.LinkID
	case p.UserID != "":
		return p.UserID
	default:
		return "system"
	}
}

// Capability is a permission a route or service operation requires.
type Capability int

// Capabilities of the permission matrix (DECISIONS: Auth).
const (
	// CapRead reads organization data; employee and contractor reads are
	// narrowed to what is assigned to them by the services.
	CapRead Capability = iota
	// CapManage creates, updates and deletes organization data.
	CapManage
	// CapManageKeys creates and revokes API keys.
	CapManageKeys
	// CapTransferOwnership hands the organization to another person.
	CapTransferOwnership
	// CapReview creates and updates findings and comments: owners, admins,
	// and auditors signed in as people (auditor keys stay read-only).
	CapReview
	// CapSelfService acknowledges policies, completes own tasks and
	// training, and checks in devices.
	CapSelfService
	// CapReadAudit reads the audit trail.
	CapReadAudit
)

// Can reports whether the principal holds the capability.
func (p *Principal) Can(c Capability) bool {
	switch p.Role {
	case RoleOwner:
		return true
	case RoleAdmin:
		return c != CapTransferOwnership
	case RoleAuditor:
		switch c {
		case CapRead, CapReadAudit:
			return true
		case CapReview:
			return p.AuthType != AuthAPIKey
		}
		return false
	case RoleEmployee, RoleContractor:
		return c == CapRead || c == CapSelfService
	}
	return false
}

// Require returns ErrForbidden when the principal lacks c.
func (p *Principal) Require(c Capability) error {
	if p.Can(c) {
		return nil
	}
	return Errorf(ErrForbidden, "the %s role may not do this", p.Role)
}

// SeesOnlyAssigned reports whether reads are narrowed to what is assigned
// to the principal (employees and contractors).
func (p *Principal) SeesOnlyAssigned() bool {
	return p.Role == RoleEmployee || p.Role == RoleContractor
}

type ctxKey int

const (
	principalKey ctxKey = iota
	requestIDKey
)

// WithPrincipal stores p in ctx.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey, p)
}

// PrincipalFrom returns the principal in ctx or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey).(*Principal)
	return p
}

// principal returns the principal in ctx or ErrUnauthenticated.
func principal(ctx context.Context) (*Principal, error) {
	p := PrincipalFrom(ctx)
	if p == nil || p.OrgID == "" {
		return nil, fmt.Errorf("no principal in context: %w", ErrUnauthenticated)
	}
	return p, nil
}

// authorize returns the principal in ctx when it holds the capability:
// ErrUnauthenticated without one, a forbidden error when its role lacks it.
func authorize(ctx context.Context, c Capability) (*Principal, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.Require(c); err != nil {
		return nil, err
	}
	return p, nil
}

// SystemContext returns ctx acting as the system with owner rights in org,
// for the CLI and background jobs.
func SystemContext(ctx context.Context, orgID string) context.Context {
	return WithPrincipal(ctx, &Principal{OrgID: orgID, Role: RoleOwner, AuthType: AuthSystem})
}

// WithRequestID stores the request id in ctx for the audit trail.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

// RequestIDFrom returns the request id in ctx or "".
func RequestIDFrom(ctx context.Context) string {
	s, _ := ctx.Value(requestIDKey).(string)
	return s
}
