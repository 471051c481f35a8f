package app

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Entity types comments and attachments attach to.
const (
	EntityVendor           = "vendor"
	EntityPerson           = "person"
	EntityControl          = "control"
	EntityTask             = "task"
	EntityRisk             = "risk"
	EntityFinding          = "finding"
	EntityCorrectiveAction = "corrective_action"
	EntityComment          = "comment"
	EntityPolicy           = "policy"
	EntityEvidence         = "evidence"
	EntityFramework        = "framework"
	EntityRequirement      = "requirement"
	EntityDevice           = "device"
	EntityESGDataPoint     = "esg_data_point"
	EntityIncident         = "incident"
)

// CommentEntityTypes are the resources comments attach to. A framework is
// one the organization enabled or created; a requirement one that a control
// of the organization serves, or a custom requirement.
var CommentEntityTypes = []string{EntityVendor, EntityPerson, EntityControl, EntityTask, EntityRisk, EntityFinding, EntityCorrectiveAction,
	EntityPolicy, EntityEvidence, EntityFramework, EntityRequirement, EntityDevice, EntityESGDataPoint, EntityIncident}

// AttachmentEntityTypes are the resources files attach to.
var AttachmentEntityTypes = append(append([]string{}, CommentEntityTypes...), EntityComment)

// EntityStore answers whether a resource exists in an organization.
type EntityStore interface {
	// EntityExists reports whether entityType/id is a resource of the
	// organization; with assignee set, only when it is assigned to (or
	// owned by, or is) that person. Unknown types are false.
	EntityExists(ctx context.Context, orgID, entityType, id, assignee string) (bool, error)
}

// Comment is a note on a resource.
type Comment struct {
	ID         string    `json:"id"`
	EntityType string    `json:"entityType"`
	EntityID   string    `json:"entityId"`
	Content    string    `json:"content"`
	AuthorType string    `json:"authorType"`
	AuthorID   string    `json:"authorId"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// CommentInput is the body of POST /v1/comments and of its updates (only
// content changes on update).
type CommentInput struct {
	EntityType *string `json:"entityType"`
	EntityID   *string `json:"entityId"`
	Content    *string `json:"content"`
}

// CommentStore persists comments.
type CommentStore interface {
	CreateComment(ctx context.Context, orgID string, c *Comment) error
	UpdateComment(ctx context.Context, orgID string, c *Comment) error
	DeleteComment(ctx context.Context, orgID, id string) error
	GetComment(ctx context.Context, orgID, id string) (*Comment, error)
	ListComments(ctx context.Context, orgID, entityType, entityID string, p Page) (List[Comment], error)
}

const maxCommentContent = 50000

// entityRef validates an entity type and id and checks the entity is
// visible to the principal (employees and contractors: assigned to them).
func (a *App) entityRef(ctx context.Context, p *Principal, entityType, entityID string, allowed []string) error {
	ve := NewValidationError()
	if entityType == "" {
		ve.Add("entityType", CodeRequired, nil, "entityType is required: one of "+strings.Join(allowed, ", "))
	} else {
		oneOf(ve, "entityType", entityType, allowed)
	}
	if entityID == "" {
		ve.Add("entityId", CodeRequired, nil, "entityId is required")
	}
	if err := ve.Err(); err != nil {
		return err
	}
	assignee := ""
	if p.SeesOnlyAssigned() {
		if p.UserID == "" {
			return Errorf(ErrNotFound, "%s %s not found", entityType, entityID)
		}
		assignee = p.UserID
	}
	ok, err := a.store.EntityExists(ctx, p.OrgID, entityType, entityID, assignee)
	if err != nil {
		return fmt.Errorf("check %s %s: %w", entityType, entityID, err)
	}
	if !ok {
		return Errorf(ErrNotFound, "%s %s not found", entityType, entityID)
	}
	return nil
}

// mayEdit reports whether the principal wrote the item or is an owner or
// admin.
func mayEdit(p *Principal, authorType, authorID string) bool {
	if p.Role == RoleOwner || p.Role == RoleAdmin {
		return true
	}
	return p.ActorType() == authorType && p.ActorID() == authorID
}

// CreateComment adds a comment to a resource of the organization.
func (a *App) CreateComment(ctx context.Context, in CommentInput) (*Comment, error) {
	p, err := authorize(ctx, CapReview)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	c := &Comment{ID: NewID(PrefixComment), EntityType: strings.ToLower(trimmed(in.EntityType)), EntityID: trimmed(in.EntityID),
		Content: trimmed(in.Content), AuthorType: p.ActorType(), AuthorID: p.ActorID(), CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if c.Content == "" {
		ve.Add("content", CodeRequired, nil, "content is required")
	}
	maxLen(ve, "content", c.Content, maxCommentContent)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.entityRef(ctx, p, c.EntityType, c.EntityID, CommentEntityTypes); err != nil {
			return err
		}
		if err := a.store.CreateComment(ctx, p.OrgID, c); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "comment", ResourceID: c.ID, After: c,
			Events: []Event{ResourceEvent("comment", "created", c)}})
	})
	if err != nil {
		return nil, fmt.Errorf("create comment: %w", err)
	}
	return c, nil
}

// UpdateComment changes a comment's content; only its author or an owner
// or admin may.
func (a *App) UpdateComment(ctx context.Context, id string, in CommentInput) (*Comment, error) {
	p, err := authorize(ctx, CapReview)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	if in.Content == nil || trimmed(in.Content) == "" {
		ve.Add("content", CodeRequired, nil, "content is required")
	}
	maxLen(ve, "content", trimmed(in.Content), maxCommentContent)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	var out *Comment
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetComment(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if !mayEdit(p, before.AuthorType, before.AuthorID) {
			return Errorf(ErrForbidden, "only the comment's author or an owner or admin may change it")
		}
		c := *before
		c.Content = trimmed(in.Content)
		c.UpdatedAt = a.Now()
		if err := a.store.UpdateComment(ctx, p.OrgID, &c); err != nil {
			return err
		}
		out = &c
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "comment", ResourceID: id, Before: before, After: &c,
			Events: []Event{ResourceEvent("comment", "updated", &c)}})
	})
	if err != nil {
		return nil, fmt.Errorf("update comment %s: %w", id, err)
	}
	return out, nil
}

// DeleteComment removes a comment; only its author or an owner or admin may.
func (a *App) DeleteComment(ctx context.Context, id string) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	if err := p.Require(CapReview); err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetComment(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if !mayEdit(p, before.AuthorType, before.AuthorID) {
			return Errorf(ErrForbidden, "only the comment's author or an owner or admin may delete it")
		}
		if err := a.store.DeleteComment(ctx, p.OrgID, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "comment", ResourceID: id, Before: before,
			Events: []Event{ResourceEvent("comment", "deleted", map[string]any{"id": id, "entityType": before.EntityType, "entityId": before.EntityID})}})
	})
	if err != nil {
		return fmt.Errorf("delete comment %s: %w", id, err)
	}
	return nil
}

// GetComment returns one comment whose resource the principal may see.
func (a *App) GetComment(ctx context.Context, id string) (*Comment, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.store.GetComment(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if err := a.entityRef(ctx, p, c.EntityType, c.EntityID, CommentEntityTypes); err != nil {
		return nil, ErrNotFound
	}
	return c, nil
}

// ListComments lists the comments on one resource, oldest first.
func (a *App) ListComments(ctx context.Context, entityType, entityID string, pg Page) (List[Comment], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Comment]{}, err
	}
	entityType = strings.ToLower(strings.TrimSpace(entityType))
	if err := a.entityRef(ctx, p, entityType, strings.TrimSpace(entityID), CommentEntityTypes); err != nil {
		return List[Comment]{}, err
	}
	return a.store.ListComments(ctx, p.OrgID, entityType, strings.TrimSpace(entityID), pg)
}
