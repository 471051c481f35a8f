package app

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// setArchived archives (archived true) or restores a resource in one
// transaction: it stamps archivedAt, records the change and raises
// <resource>.archived or <resource>.restored. Archiving what is already
// archived (or restoring what is not) changes nothing. fields returns the
// addresses of the copy's archivedAt and updatedAt.
func setArchived[T any](ctx context.Context, a *App, resource, id string, archived bool,
	get func(ctx context.Context, orgID, id string) (*T, error), fields func(*T) (**time.Time, *time.Time),
	update func(ctx context.Context, orgID string, v *T) error) (*T, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *T
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := get(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		v := *before
		archivedAt, updatedAt := fields(&v)
		now := a.Now()
		switch {
		case archived && *archivedAt == nil:
			*archivedAt = &now
		case !archived && *archivedAt != nil:
			*archivedAt = nil
		default:
			out = before
			return nil
		}
		*updatedAt = now
		if err := update(ctx, p.OrgID, &v); err != nil {
			return err
		}
		out = &v
		verb := "archived"
		if !archived {
			verb = "restored"
		}
		return a.record(ctx, Mutation{Action: verb, ResourceType: resource, ResourceID: id, Before: before, After: &v,
			Events: []Event{ResourceEvent(resource, verb, &v)}})
	})
	if err != nil {
		return nil, fmt.Errorf("archive %s %s: %w", resource, id, err)
	}
	return out, nil
}

// deleteRecorded removes a resource of the caller's organization (owner and
// admin) in one transaction with its audit record. get reports ErrNotFound
// for another organization's id, so nothing is touched then.
func deleteRecorded[T any](ctx context.Context, a *App, resource, id string,
	get func(ctx context.Context, orgID, id string) (*T, error), del func(ctx context.Context, orgID, id string) error) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	if err := p.Require(CapManage); err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := get(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if err := del(ctx, p.OrgID, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: resource, ResourceID: id, Before: before})
	})
	if err != nil {
		return fmt.Errorf("delete %s %s: %w", strings.ReplaceAll(resource, "_", " "), id, err)
	}
	return nil
}
