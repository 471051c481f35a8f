package app

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Corrective action statuses and priorities (DECISIONS: contradictions table).
const (
	ActionOpen       = "open"
	ActionInProgress = "in_progress"
	ActionResolved   = "resolved"
	ActionOverdue    = "overdue"
)

// Corrective action enumerations.
var (
	ActionStatuses   = []string{ActionOpen, ActionInProgress, ActionResolved, ActionOverdue}
	ActionPriorities = []string{"critical", "high", "medium", "low"}
	// settableActionStatuses are the statuses a client may set; overdue is
	// set by the due-date scan only.
	settableActionStatuses = []string{ActionOpen, ActionInProgress, ActionResolved}
)

// EventCorrectiveActionOverdue is raised once when an action becomes overdue.
const EventCorrectiveActionOverdue = "corrective_action.overdue"

// PrefixCorrectiveAction is the id prefix of corrective actions.
const PrefixCorrectiveAction = "cra"

const maxClosureAttachments = 50

// CorrectiveAction is work to remedy a finding. Resolving it requires
// closure evidence: a closureNote saying what was done and how it was
// verified, optionally backed by closureAttachmentIds (attachments of this
// action or of its finding).
type CorrectiveAction struct {
	ID                   string     `json:"id"`
	FindingID            string     `json:"findingId"`
	Title                string     `json:"title"`
	Description          string     `json:"description"`
	Status               string     `json:"status"`
	Priority             string     `json:"priority"`
	OwnerID              *string    `json:"ownerId"`
	DueDate              *string    `json:"dueDate"`
	ClosureNote          *string    `json:"closureNote"`
	ClosureAttachmentIDs []string   `json:"closureAttachmentIds"`
	ResolvedAt           *time.Time `json:"resolvedAt"`
	CreatedAt            time.Time  `json:"createdAt"`
	UpdatedAt            time.Time  `json:"updatedAt"`
}

// CorrectiveActionInput is the body of POST and PATCH
// /v1/findings/{id}/corrective-actions[/{actionId}].
type CorrectiveActionInput struct {
	Title                *string       `json:"title"`
	Description          *string       `json:"description"`
	Status               *string       `json:"status"`
	Priority             *string       `json:"priority"`
	OwnerID              Opt[string]   `json:"ownerId"`
	DueDate              Opt[string]   `json:"dueDate"`
	ClosureNote          Opt[string]   `json:"closureNote"`
	ClosureAttachmentIDs Opt[[]string] `json:"closureAttachmentIds"`
}

// OrgCorrectiveAction is an action with its organization, for jobs that
// span organizations.
type OrgCorrectiveAction struct {
	OrgID  string
	Action CorrectiveAction
}

// CorrectiveActionStore persists corrective actions.
type CorrectiveActionStore interface {
	CreateCorrectiveAction(ctx context.Context, orgID string, c *CorrectiveAction) error
	UpdateCorrectiveAction(ctx context.Context, orgID string, c *CorrectiveAction) error
	GetCorrectiveAction(ctx context.Context, orgID, findingID, id string) (*CorrectiveAction, error)
	ListCorrectiveActions(ctx context.Context, orgID, findingID, ownerID string, p Page) (List[CorrectiveAction], error)
	// DueCorrectiveActions returns up to limit open or in-progress actions of
	// every organization whose due date is before the given YYYY-MM-DD date.
	DueCorrectiveActions(ctx context.Context, before string, limit int) ([]OrgCorrectiveAction, error)
}

func (in *CorrectiveActionInput) apply(c *CorrectiveAction, ve *ValidationError) {
	if in.Title != nil {
		c.Title = strings.TrimSpace(*in.Title)
		if c.Title == "" {
			ve.Add("title", CodeRequired, nil, "title must not be empty")
		}
		maxLen(ve, "title", c.Title, 255)
	}
	if in.Description != nil {
		c.Description = strings.TrimSpace(*in.Description)
		maxLen(ve, "description", c.Description, 20000)
	}
	if in.Priority != nil {
		c.Priority = normEnum(in.Priority)
		enumIn(ve, "priority", c.Priority, ActionPriorities)
	}
	if in.OwnerID.Set {
		c.OwnerID = nil
		if !in.OwnerID.Null && strings.TrimSpace(in.OwnerID.Value) != "" {
			c.OwnerID = Ptr(strings.TrimSpace(in.OwnerID.Value))
		}
	}
	optDate(ve, &c.DueDate, in.DueDate, "dueDate")
	optText(ve, &c.ClosureNote, in.ClosureNote, "closureNote", 5000)
	if in.ClosureAttachmentIDs.Set {
		c.ClosureAttachmentIDs = []string{}
		if !in.ClosureAttachmentIDs.Null {
			c.ClosureAttachmentIDs = cleanIDs(in.ClosureAttachmentIDs.Value)
		}
		if len(c.ClosureAttachmentIDs) > maxClosureAttachments {
			ve.Add("closureAttachmentIds", CodeTooLong, len(c.ClosureAttachmentIDs),
				fmt.Sprintf("closureAttachmentIds may list at most %d attachments", maxClosureAttachments))
		}
	}
}

// today is the service clock's UTC date.
func (a *App) today() string { return a.Now().Format("2006-01-02") }

// setStatus applies a requested status with the workflow's rules: overdue
// is never set by a client; resolving requires closure evidence; leaving
// resolved clears resolvedAt.
func (c *CorrectiveAction) setStatus(status, today string, now time.Time, ve *ValidationError) {
	if status == ActionOverdue {
		ve.Add("status", CodeInvalid, status, "overdue is set when the due date passes; set open, in_progress or resolved")
		return
	}
	enumIn(ve, "status", status, settableActionStatuses)
	if status == c.Status {
		return
	}
	c.Status = status
	c.ResolvedAt = nil
	if status == ActionResolved {
		c.ResolvedAt = &now
		return
	}
	if c.DueDate != nil && *c.DueDate < today {
		c.Status = ActionOverdue
	}
}

// checkClosure enforces closure evidence on resolved actions and that the
// attachments named belong to the action or its finding.
func (a *App) checkClosure(ctx context.Context, orgID string, c *CorrectiveAction, in *CorrectiveActionInput, ve *ValidationError) error {
	if c.Status == ActionResolved && c.ClosureNote == nil {
		ve.Add("closureNote", CodeRequired, nil, "resolving a corrective action requires closure evidence: a closureNote (and optionally closureAttachmentIds)")
	}
	if !in.ClosureAttachmentIDs.Set {
		return nil
	}
	for _, id := range c.ClosureAttachmentIDs {
		at, err := a.store.GetAttachment(ctx, orgID, id)
		if err != nil && !isNotFound(err) {
			return err
		}
		if err != nil || !((at.EntityType == EntityCorrectiveAction && at.EntityID == c.ID) || (at.EntityType == EntityFinding && at.EntityID == c.FindingID)) {
			ve.Add("closureAttachmentIds", CodeUnknownReference, id, "closureAttachmentIds must name attachments of this corrective action or its finding")
			return nil
		}
	}
	return nil
}

// findingFor loads the finding an action belongs to (ErrNotFound for
// another organization's).
func (a *App) findingFor(ctx context.Context, p *Principal, findingID string) (*Finding, error) {
	return a.store.GetFinding(ctx, p.OrgID, findingID)
}

// CreateCorrectiveAction adds a corrective action to a finding.
func (a *App) CreateCorrectiveAction(ctx context.Context, findingID string, in CorrectiveActionInput) (*CorrectiveAction, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	c := &CorrectiveAction{ID: NewID(PrefixCorrectiveAction), FindingID: findingID, Status: ActionOpen, Priority: "medium",
		ClosureAttachmentIDs: []string{}, CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if in.Title == nil || strings.TrimSpace(*in.Title) == "" {
		ve.Add("title", CodeRequired, nil, "title is required")
	}
	in.apply(c, ve)
	if in.Status != nil {
		c.setStatus(normEnum(in.Status), a.today(), now, ve)
	} else if c.DueDate != nil && *c.DueDate < a.today() {
		c.Status = ActionOverdue
	}
	var out *CorrectiveAction
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := a.findingFor(ctx, p, findingID); err != nil {
			return err
		}
		if err := a.checkPersonRef(ctx, p.OrgID, "ownerId", c.OwnerID, ve); err != nil {
			return err
		}
		if err := a.checkClosure(ctx, p.OrgID, c, &in, ve); err != nil {
			return err
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.CreateCorrectiveAction(ctx, p.OrgID, c); err != nil {
			return err
		}
		out = c
		return a.record(ctx, Mutation{Action: "created", ResourceType: "corrective_action", ResourceID: c.ID, After: c,
			Events: []Event{ResourceEvent("corrective_action", "created", c)}})
	})
	if err != nil {
		return nil, fmt.Errorf("create corrective action: %w", err)
	}
	return out, nil
}

// UpdateCorrectiveAction applies a patch. Owners and admins may change
// anything; the action's owner (a person) may update its status and
// closure evidence.
func (a *App) UpdateCorrectiveAction(ctx context.Context, findingID, id string, in CorrectiveActionInput) (*CorrectiveAction, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var out *CorrectiveAction
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetCorrectiveAction(ctx, p.OrgID, findingID, id)
		if err != nil {
			return err
		}
		isOwner := p.UserID != "" && before.OwnerID != nil && *before.OwnerID == p.UserID
		if !p.Can(CapManage) {
			if !isOwner {
				if p.SeesOnlyAssigned() {
					return ErrNotFound
				}
				return Errorf(ErrForbidden, "the %s role may not change this corrective action", p.Role)
			}
			if in.Title != nil || in.Description != nil || in.Priority != nil || in.OwnerID.Set || in.DueDate.Set {
				return Errorf(ErrForbidden, "the action's owner may change only status, closureNote and closureAttachmentIds")
			}
		}
		c := *before
		c.ClosureAttachmentIDs = append([]string{}, before.ClosureAttachmentIDs...)
		ve := NewValidationError()
		now := a.Now()
		today := a.today()
		in.apply(&c, ve)
		if in.Status != nil {
			c.setStatus(normEnum(in.Status), today, now, ve)
		}
		// A moved due date re-evaluates overdue.
		if in.DueDate.Set && c.Status == ActionOverdue && (c.DueDate == nil || *c.DueDate >= today) {
			c.Status = ActionOpen
		}
		if in.DueDate.Set && (c.Status == ActionOpen || c.Status == ActionInProgress) && c.DueDate != nil && *c.DueDate < today {
			c.Status = ActionOverdue
		}
		if in.OwnerID.Set {
			if err := a.checkPersonRef(ctx, p.OrgID, "ownerId", c.OwnerID, ve); err != nil {
				return err
			}
		}
		if err := a.checkClosure(ctx, p.OrgID, &c, &in, ve); err != nil {
			return err
		}
		if err := ve.Err(); err != nil {
			return err
		}
		c.UpdatedAt = now
		if err := a.store.UpdateCorrectiveAction(ctx, p.OrgID, &c); err != nil {
			return err
		}
		out = &c
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "corrective_action", ResourceID: id, Before: before, After: &c,
			Events: []Event{ResourceEvent("corrective_action", "updated", &c)}})
	})
	if err != nil {
		return nil, fmt.Errorf("update corrective action %s: %w", id, err)
	}
	return out, nil
}

// GetCorrectiveAction returns one action of a finding. Employees and
// contractors see only actions they own.
func (a *App) GetCorrectiveAction(ctx context.Context, findingID, id string) (*CorrectiveAction, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.store.GetCorrectiveAction(ctx, p.OrgID, findingID, id)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() && (c.OwnerID == nil || *c.OwnerID != p.UserID) {
		return nil, ErrNotFound
	}
	return c, nil
}

// ListCorrectiveActions lists a finding's actions, oldest first.
func (a *App) ListCorrectiveActions(ctx context.Context, findingID string, pg Page) (List[CorrectiveAction], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[CorrectiveAction]{}, err
	}
	owner := ""
	if p.SeesOnlyAssigned() {
		if p.UserID == "" {
			return List[CorrectiveAction]{}, ErrNotFound
		}
		owner = p.UserID
	} else if _, err := a.findingFor(ctx, p, findingID); err != nil {
		return List[CorrectiveAction]{}, err
	}
	return a.store.ListCorrectiveActions(ctx, p.OrgID, findingID, owner, pg)
}

// overdueBatch bounds one transaction of the overdue scan.
const overdueBatch = 200

// MarkOverdueCorrectiveActions marks every open or in-progress corrective
// action whose due date has passed (it is before today on the app clock,
// UTC) as overdue, in every organization, and raises
// corrective_action.overdue once per action. It returns how many changed and
// is safe to run at any interval.
func (a *App) MarkOverdueCorrectiveActions(ctx context.Context) (int, error) {
	today := a.today()
	total := 0
	for {
		due, err := a.store.DueCorrectiveActions(ctx, today, overdueBatch)
		if err != nil {
			return total, fmt.Errorf("find overdue corrective actions: %w", err)
		}
		if len(due) == 0 {
			return total, nil
		}
		n := 0
		err = a.store.InTx(ctx, func(ctx context.Context) error {
			for _, d := range due {
				octx := SystemContext(ctx, d.OrgID)
				before, err := a.store.GetCorrectiveAction(octx, d.OrgID, d.Action.FindingID, d.Action.ID)
				if err != nil {
					return err
				}
				if (before.Status != ActionOpen && before.Status != ActionInProgress) || before.DueDate == nil || *before.DueDate >= today {
					continue
				}
				c := *before
				c.Status = ActionOverdue
				c.UpdatedAt = a.Now()
				if err := a.store.UpdateCorrectiveAction(octx, d.OrgID, &c); err != nil {
					return err
				}
				n++
				if err := a.record(octx, Mutation{Action: "overdue", ResourceType: "corrective_action", ResourceID: c.ID, Before: before, After: &c,
					Events: []Event{{Type: EventCorrectiveActionOverdue, Data: map[string]any{
						"correctiveActionId": c.ID, "findingId": c.FindingID, "dueDate": *c.DueDate, "previousStatus": before.Status,
					}}}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("mark corrective actions overdue: %w", err)
		}
		total += n
		if len(due) < overdueBatch || n == 0 {
			return total, nil
		}
	}
}
