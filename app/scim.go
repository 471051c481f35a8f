package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SCIM 2.0 provisioning (RFC 7643/7644): an organization's identity
// provider creates, updates and deactivates people through /scim/v2 with a
// bearer token of the organization. The token is stored as its SHA-256
// hash; a new one replaces the old. The protocol's representation lives in
// web/api; people are created and changed through the people services, so
// the audit trail, plan limits and the owner rules apply as for any change.

// SCIMTokenPrefix starts every SCIM token.
const SCIMTokenPrefix = "scim_"

// AuthSCIM is the auth type of a SCIM request. Unlike the system, it may
// not change the name, e-mail or password of a person who also belongs to
// another organization.
const AuthSCIM = "scim"

// SCIMToken describes the organization's SCIM token. Token is the
// plaintext, only in the answer that created it.
type SCIMToken struct {
	Configured bool       `json:"configured"`
	Hint       string     `json:"hint"`
	CreatedAt  *time.Time `json:"createdAt"`
	Token      string     `json:"token,omitempty"`
}

// SCIMTokenStore persists the tokens.
type SCIMTokenStore interface {
	// PutSCIMToken replaces the organization's token.
	PutSCIMToken(ctx context.Context, orgID, hash, hint, createdBy string, at time.Time) error
	// GetSCIMToken returns the hint and creation time, or ErrNotFound.
	GetSCIMToken(ctx context.Context, orgID string) (hint string, at time.Time, err error)
	DeleteSCIMToken(ctx context.Context, orgID string) error
	// SCIMTokenOrganization returns the organization of a token hash.
	SCIMTokenOrganization(ctx context.Context, hash string) (string, error)
}

// GetSCIMToken says whether the organization has a SCIM token (owners,
// admins, auditors).
func (a *App) GetSCIMToken(ctx context.Context) (*SCIMToken, error) {
	p, err := authorize(ctx, CapReadAudit)
	if err != nil {
		return nil, err
	}
	hint, at, err := a.store.GetSCIMToken(ctx, p.OrgID)
	if errors.Is(err, ErrNotFound) {
		return &SCIMToken{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scim token: %w", err)
	}
	return &SCIMToken{Configured: true, Hint: hint, CreatedAt: &at}, nil
}

// CreateSCIMToken makes a new token, replacing any previous one, and
// returns it once (owners, admins).
func (a *App) CreateSCIMToken(ctx context.Context) (*SCIMToken, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	plain := SCIMTokenPrefix + RandomToken(32)
	hint := plain[:len(SCIMTokenPrefix)+4] + "…"
	now := a.Now()
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.PutSCIMToken(ctx, p.OrgID, HashKey(plain), hint, p.ActorID(), now); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "scim_token", ResourceID: p.OrgID,
			After: map[string]string{"hint": hint}})
	})
	if err != nil {
		return nil, fmt.Errorf("create scim token: %w", err)
	}
	return &SCIMToken{Configured: true, Hint: hint, CreatedAt: &now, Token: plain}, nil
}

// RevokeSCIMToken removes the token; provisioning stops (owners, admins).
func (a *App) RevokeSCIMToken(ctx context.Context) error {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.DeleteSCIMToken(ctx, p.OrgID); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "scim_token", ResourceID: p.OrgID})
	})
	if errors.Is(err, ErrNotFound) {
		return Errorf(ErrNotFound, "the organization has no SCIM token")
	}
	if err != nil {
		return fmt.Errorf("revoke scim token: %w", err)
	}
	return nil
}

// AuthenticateSCIM resolves a SCIM bearer token to a context acting for
// its organization with an owner's rights (AuthSCIM); unknown tokens are ErrUnauthenticated.
func (a *App) AuthenticateSCIM(ctx context.Context, token string) (context.Context, error) {
	if !strings.HasPrefix(token, SCIMTokenPrefix) || len(token) > 200 {
		return nil, ErrUnauthenticated
	}
	orgID, err := a.store.SCIMTokenOrganization(ctx, HashKey(token))
	if errors.Is(err, ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, fmt.Errorf("scim token: %w", err)
	}
	o, err := a.store.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("scim token: %w", err)
	}
	return WithPrincipal(ctx, &Principal{OrgID: orgID, Plan: o.Plan, Role: RoleOwner, AuthType: AuthSCIM}), nil
}

// ListAllPeople returns every person of the organization, deactivated
// ones too, in pages of MaxPerPage (SCIM filters and pages them itself).
func (a *App) ListAllPeople(ctx context.Context) ([]Person, error) {
	var out []Person
	for page := 1; ; page++ {
		l, err := a.ListPeople(ctx, PersonFilter{Inactive: true, Page: Page{Page: page, PerPage: MaxPerPage}})
		if err != nil {
			return nil, err
		}
		out = append(out, l.Items...)
		if len(l.Items) < MaxPerPage {
			return out, nil
		}
	}
}
