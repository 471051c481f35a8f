package app

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Operator is a login flagged as the appliance operator.
type Operator struct {
	UserID    string    `json:"id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	GrantedAt time.Time `json:"grantedAt"`
}

// OperatorStore keeps the appliance operator flag of logins.
type OperatorStore interface {
	// SetOperator flags (or, with on false, unflags) a login; it reports
	// whether anything changed.
	SetOperator(ctx context.Context, userID string, on bool, at time.Time) (bool, error)
	IsOperator(ctx context.Context, userID string) (bool, error)
	ListOperators(ctx context.Context) ([]Operator, error)
}

// IsOperator reports whether the principal in ctx is a person flagged as
// the appliance operator. Only a person acting in their own name counts (a
// session or an OAuth token): an API key is an organization's credential.
func (a *App) IsOperator(ctx context.Context) bool {
	p, err := principal(ctx)
	if err != nil || p.UserID == "" || (p.AuthType != AuthSession && p.AuthType != AuthOAuth) {
		return false
	}
	ok, err := a.store.IsOperator(ctx, p.UserID)
	if err != nil {
		a.log.Error("operator lookup failed", "err", err)
		return false
	}
	return ok
}

// IsOperatorUser reports whether the login with this id is an operator.
func (a *App) IsOperatorUser(ctx context.Context, userID string) (bool, error) {
	return a.store.IsOperator(ctx, userID)
}

// requireOperator authorizes the appliance-wide admin routes: anyone
// authenticated who is not the operator gets ErrForbidden.
func (a *App) requireOperator(ctx context.Context) (*Principal, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if !a.IsOperator(ctx) {
		return nil, Errorf(ErrForbidden, "only the appliance operator may do this (compliance operator grant EMAIL)")
	}
	return p, nil
}

// GrantOperator flags the login with this e-mail as the appliance operator
// (CLI only). Granting twice is not an error. The grant is audited in every
// organization the person belongs to.
func (a *App) GrantOperator(ctx context.Context, email string) (*User, error) {
	return a.setOperator(ctx, email, true)
}

// RevokeOperator removes the operator flag (CLI only).
func (a *App) RevokeOperator(ctx context.Context, email string) (*User, error) {
	return a.setOperator(ctx, email, false)
}

func (a *App) setOperator(ctx context.Context, email string, on bool) (*User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	u, err := a.store.GetUserByEmail(ctx, email)
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", email, err)
	}
	action := "operator_granted"
	if !on {
		action = "operator_revoked"
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		changed, err := a.store.SetOperator(ctx, u.ID, on, a.Now())
		if err != nil || !changed {
			return err
		}
		orgs, err := a.store.ListMemberships(ctx, u.ID)
		if err != nil {
			return err
		}
		for _, m := range orgs {
			if err := a.record(SystemContext(ctx, m.OrganizationID), Mutation{Action: action, ResourceType: "person", ResourceID: u.ID}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", strings.ReplaceAll(action, "_", " "), email, err)
	}
	return u, nil
}

// ListOperators lists the operators (CLI only).
func (a *App) ListOperators(ctx context.Context) ([]Operator, error) {
	return a.store.ListOperators(ctx)
}
