package app

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// updateRecorded changes a resource of the caller's organization (owner
// and admin) in one transaction with its audit record: apply sets the
// input on a copy of the stored resource and reports every field error at
// once, updatedAt gives the copy's updatedAt to stamp, and save writes it.
// get reports ErrNotFound for another organization's id.
func updateRecorded[T any](ctx context.Context, a *App, resource, id string,
	get func(ctx context.Context, orgID, id string) (*T, error), apply func(*T, *ValidationError), updatedAt func(*T) *time.Time,
	save func(ctx context.Context, orgID string, v *T) error) (*T, error) {
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
		ve := NewValidationError()
		apply(&v, ve)
		if err := ve.Err(); err != nil {
			return err
		}
		*updatedAt(&v) = a.Now()
		if err := save(ctx, p.OrgID, &v); err != nil {
			return err
		}
		out = &v
		return a.record(ctx, Mutation{Action: "updated", ResourceType: resource, ResourceID: id, Before: before, After: &v})
	})
	if err != nil {
		return nil, fmt.Errorf("update %s %s: %w", strings.ReplaceAll(resource, "_", " "), id, err)
	}
	return out, nil
}
