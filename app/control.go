package app

import (
	"context"
	"time"
)

// Control statuses (DECISIONS: the control editor vocabulary).
const (
	ControlNotStarted    = "not_started"
	ControlInProgress    = "in_progress"
	ControlImplemented   = "implemented"
	ControlNotApplicable = "not_applicable"
)

// ControlStatuses lists the stored control statuses.
var ControlStatuses = []string{ControlNotStarted, ControlInProgress, ControlImplemented, ControlNotApplicable}

// Control is one of the organization's controls. A control implemented once
// satisfies every framework requirement mapped to it.
type Control struct {
	ID            string    `json:"id"`
	Code          string    `json:"code"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	Status        string    `json:"status"`
	OwnerID       *string   `json:"ownerId"`
	Justification *string   `json:"justification"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// ControlStore persists controls.
type ControlStore interface {
	CreateControl(ctx context.Context, orgID string, c *Control) error
	GetControl(ctx context.Context, orgID, id string) (*Control, error)
	// MissingControls returns the ids among ids that are not controls of the organization.
	MissingControls(ctx context.Context, orgID string, ids []string) ([]string, error)
}
