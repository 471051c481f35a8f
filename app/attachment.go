package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Attachment is a file attached to a resource. The content lives in the
// file store, addressed by its SHA-256.
type Attachment struct {
	ID             string    `json:"id"`
	EntityType     string    `json:"entityType"`
	EntityID       string    `json:"entityId"`
	Name           string    `json:"name"`
	Type           string    `json:"type"`
	Size           int64     `json:"size"`
	SHA256         string    `json:"sha256"`
	Description    string    `json:"description"`
	UploadedByType string    `json:"uploadedByType"`
	UploadedByID   string    `json:"uploadedById"`
	DownloadURL    string    `json:"downloadUrl"`
	CreatedAt      time.Time `json:"createdAt"`
}

// AttachmentUpload is one uploaded file and its form fields.
type AttachmentUpload struct {
	EntityType  string
	EntityID    string
	Name        string
	ContentType string
	Description string
	Body        io.Reader
}

// AttachmentStore persists attachment records.
type AttachmentStore interface {
	CreateAttachment(ctx context.Context, orgID string, at *Attachment) error
	GetAttachment(ctx context.Context, orgID, id string) (*Attachment, error)
	ListAttachments(ctx context.Context, orgID, entityType, entityID string, p Page) (List[Attachment], error)
}

// ErrNoFileStore means the app was built without a file store.
var ErrNoFileStore = errors.New("no file store configured")

func (at *Attachment) setURL() { at.DownloadURL = "/v1/attachments/" + at.ID + "/download" }

// CreateAttachment stores an uploaded file and attaches it to a resource of
// the organization.
func (a *App) CreateAttachment(ctx context.Context, in AttachmentUpload) (*Attachment, error) {
	p, err := authorize(ctx, CapReview)
	if err != nil {
		return nil, err
	}
	if a.files == nil {
		return nil, ErrNoFileStore
	}
	at := &Attachment{ID: NewID(PrefixAttachment), EntityType: strings.ToLower(strings.TrimSpace(in.EntityType)),
		EntityID: strings.TrimSpace(in.EntityID), Name: strings.TrimSpace(in.Name), Type: strings.TrimSpace(in.ContentType),
		Description: strings.TrimSpace(in.Description), UploadedByType: p.ActorType(), UploadedByID: p.ActorID(), CreatedAt: a.Now()}
	ve := NewValidationError()
	if at.Name == "" {
		ve.Add("file", CodeRequired, nil, "the file must have a name")
	}
	maxLen(ve, "fileName", at.Name, 255)
	maxLen(ve, "description", at.Description, 500)
	if at.Type == "" {
		at.Type = "application/octet-stream"
	}
	maxLen(ve, "fileType", at.Type, 255)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	// Check the target first so a refused upload stores nothing.
	if err := a.entityRef(ctx, p, at.EntityType, at.EntityID, AttachmentEntityTypes); err != nil {
		return nil, err
	}
	blob, err := a.files.Put(ctx, in.Body)
	if err != nil {
		return nil, fmt.Errorf("store attachment: %w", err)
	}
	at.SHA256, at.Size = blob.SHA256, blob.Size
	at.setURL()
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.entityRef(ctx, p, at.EntityType, at.EntityID, AttachmentEntityTypes); err != nil {
			return err
		}
		if err := a.store.CreateAttachment(ctx, p.OrgID, at); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "attachment", ResourceID: at.ID, After: at,
			Events: []Event{ResourceEvent("attachment", "created", at)}})
	})
	if err != nil {
		return nil, fmt.Errorf("create attachment: %w", err)
	}
	return at, nil
}

// GetAttachment returns an attachment whose resource the principal may see.
func (a *App) GetAttachment(ctx context.Context, id string) (*Attachment, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	at, err := a.store.GetAttachment(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() {
		if err := a.entityRef(ctx, p, at.EntityType, at.EntityID, AttachmentEntityTypes); err != nil {
			return nil, ErrNotFound
		}
	}
	at.setURL()
	return at, nil
}

// OpenAttachment returns an attachment and its content. The caller closes it.
func (a *App) OpenAttachment(ctx context.Context, id string) (*Attachment, io.ReadSeekCloser, error) {
	at, err := a.GetAttachment(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if a.files == nil {
		return nil, nil, ErrNoFileStore
	}
	f, err := a.files.Open(ctx, at.SHA256)
	if err != nil {
		return nil, nil, fmt.Errorf("open attachment %s: %w", id, err)
	}
	return at, f, nil
}

// ListAttachments lists the files attached to one resource, oldest first.
func (a *App) ListAttachments(ctx context.Context, entityType, entityID string, pg Page) (List[Attachment], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Attachment]{}, err
	}
	entityType = strings.ToLower(strings.TrimSpace(entityType))
	entityID = strings.TrimSpace(entityID)
	if err := a.entityRef(ctx, p, entityType, entityID, AttachmentEntityTypes); err != nil {
		return List[Attachment]{}, err
	}
	l, err := a.store.ListAttachments(ctx, p.OrgID, entityType, entityID, pg)
	for i := range l.Items {
		l.Items[i].setURL()
	}
	return l, err
}
