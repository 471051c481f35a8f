package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"time"
)

// EventEvidenceExpiring is raised once per evidence when it enters the
// 30-day window before its expiry (spec: Limits).
const EventEvidenceExpiring = "evidence.expiring"

// EvidenceWarning is how long before expiry evidence.expiring is raised.
const EvidenceWarning = 30 * 24 * time.Hour

// Evidence is a file proving a control works. Past ExpiresAt it no longer
// counts toward the control's status.
type Evidence struct {
	ID          string     `json:"id"`
	ControlID   string     `json:"controlId"`
	TaskID      *string    `json:"taskId"`
	Filename    string     `json:"filename"`
	ContentType string     `json:"contentType"`
	Size        int64      `json:"size"`
	SHA256      string     `json:"sha256"`
	Description string     `json:"description"`
	ExpiresAt   *time.Time `json:"expiresAt"`
	Expired     bool       `json:"expired"`
	UploadedBy  string     `json:"uploadedBy"`
	UploadedAt  time.Time  `json:"uploadedAt"`
}

// EvidenceUpload is a multipart evidence upload.
type EvidenceUpload struct {
	File io.Reader
	// Stored, when set, is File's content already stored by StoreUpload
	// (before the write transaction); File is then not read.
	Stored      *Blob
	Filename    string
	ContentType string
	Description string
	ExpiresAt   string
}

// EvidenceFilter selects evidence.
type EvidenceFilter struct {
	ControlID   string
	TaskID      string
	ControlIDs  []string // export: the controls in scope; nil means all
	OnlyCurrent bool     // unexpired at Now only
	Now         time.Time
	// ExpiringBy, when set, keeps evidence unexpired at Now that expires by
	// then, soonest first.
	ExpiringBy *time.Time
	// ControlOwnerID keeps evidence of the controls this person owns.
	ControlOwnerID string
	Page           Page
}

// ExpiringEvidence is evidence the expiry scan acts on.
type ExpiringEvidence struct {
	OrganizationID string
	Evidence
}

// EvidenceStore persists evidence records.
type EvidenceStore interface {
	CreateEvidence(ctx context.Context, orgID string, e *Evidence) error
	GetEvidence(ctx context.Context, orgID, id string) (*Evidence, error)
	DeleteEvidence(ctx context.Context, orgID, id string) error
	SetEvidenceTask(ctx context.Context, orgID, id string, taskID *string) error
	ListEvidence(ctx context.Context, orgID string, f EvidenceFilter) (List[Evidence], error)
	// EvidenceEnteringWarning lists evidence expiring after now and at or
	// before until that was not yet announced, over every organization.
	EvidenceEnteringWarning(ctx context.Context, now, until time.Time) ([]ExpiringEvidence, error)
	MarkEvidenceWarned(ctx context.Context, orgID, id string, at time.Time) error
	// EvidenceNewlyExpired lists evidence expired at now and not yet processed.
	EvidenceNewlyExpired(ctx context.Context, now time.Time) ([]ExpiringEvidence, error)
	MarkEvidenceExpiredProcessed(ctx context.Context, orgID, id string, at time.Time) error
}

func (e *Evidence) fill(now time.Time) {
	e.Expired = e.ExpiresAt != nil && !e.ExpiresAt.After(now)
}

// maxFilename bounds stored file names.
const maxFilename = 255

func cleanFilename(name string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	name = path.Base(name)
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	if name == "" || name == "." || name == ".." || name == "/" {
		name = "evidence"
	}
	if r := []rune(name); len(r) > maxFilename {
		name = string(r[len(r)-maxFilename:])
	}
	return name
}

// UploadEvidence stores a file as evidence of a control (and, when taskID is
// set, of one of its tasks). The content is stored content-addressed by
// SHA-256 before the record is written.
func (a *App) UploadEvidence(ctx context.Context, controlID, taskID string, in EvidenceUpload) (*Evidence, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if taskID == "" {
		if err := p.Require(CapManage); err != nil {
			return nil, err
		}
	}
	if a.files == nil {
		return nil, errors.New("upload evidence: no file store configured")
	}
	now := a.Now()
	ev := &Evidence{ID: NewID(PrefixEvidence), Filename: cleanFilename(in.Filename), UploadedAt: now, UploadedBy: p.ActorID()}
	ve := NewValidationError()
	ev.Description = strings.TrimSpace(in.Description)
	maxLen(ve, "description", ev.Description, 5000)
	if s := strings.TrimSpace(in.ExpiresAt); s != "" {
		t, ok := ParseTime(s)
		switch {
		case !ok:
			ve.Add("expiresAt", CodeInvalid, in.ExpiresAt, "expiresAt must be a date (YYYY-MM-DD) or an RFC 3339 time")
		case !t.After(now):
			ve.Add("expiresAt", CodeInvalid, in.ExpiresAt, "expiresAt must be in the future")
		default:
			ev.ExpiresAt = &t
		}
	}
	ev.ContentType = strings.TrimSpace(in.ContentType)
	if _, _, err := mime.ParseMediaType(ev.ContentType); err != nil || ev.ContentType == "" {
		ev.ContentType = "application/octet-stream"
		if t := mime.TypeByExtension(path.Ext(ev.Filename)); t != "" {
			ev.ContentType = t
		}
	}
	// Check the targets before storing the content.
	if taskID != "" {
		t, err := a.store.GetTask(ctx, p.OrgID, taskID)
		if err != nil {
			return nil, err
		}
		if err := a.canWorkOnTask(p, t); err != nil {
			return nil, err
		}
		if t.ControlID == nil {
			ve.Add("taskId", CodeInvalid, taskID, "the task is not linked to a control; link it before attaching evidence")
		} else {
			controlID = *t.ControlID
		}
		ev.TaskID = &taskID
	} else if _, err := a.store.GetControl(ctx, p.OrgID, controlID); err != nil {
		return nil, err
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	ev.ControlID = controlID
	var blob Blob
	if in.Stored != nil {
		blob = *in.Stored
	} else if blob, err = a.files.Put(ctx, in.File); err != nil {
		return nil, fmt.Errorf("upload evidence: %w", err)
	}
	ev.SHA256, ev.Size = blob.SHA256, blob.Size
	// The journal is rendered before the write transaction.
	pm, err := a.prepare(ctx, Mutation{Action: "created", ResourceType: "evidence", ResourceID: ev.ID, After: ev,
		Events: []Event{ResourceEvent("evidence", "created", ev)}})
	if err != nil {
		return nil, fmt.Errorf("upload evidence: %w", err)
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.CreateEvidence(ctx, p.OrgID, ev); err != nil {
			return err
		}
		if err := a.recordPrepared(ctx, pm); err != nil {
			return err
		}
		if err := a.markInProgress(ctx, p.OrgID, controlID); err != nil {
			return err
		}
		return a.reevaluateControl(ctx, p.OrgID, controlID)
	})
	if err != nil {
		return nil, fmt.Errorf("upload evidence: %w", err)
	}
	ev.fill(now)
	return ev, nil
}

// StoreUpload stores an uploaded file's content ahead of the request that
// refers to it (EvidenceUpload.Stored), so that writing and flushing the
// file happens outside the write transaction. Content no record refers to
// is removed by the files sweep.
func (a *App) StoreUpload(ctx context.Context, r io.Reader) (Blob, error) {
	if a.files == nil {
		return Blob{}, errors.New("store upload: no file store configured")
	}
	b, err := a.files.Put(ctx, r)
	if err != nil {
		return Blob{}, fmt.Errorf("store upload: %w", err)
	}
	return b, nil
}

// AttachEvidence links existing evidence of the task's control to the task.
func (a *App) AttachEvidence(ctx context.Context, taskID, evidenceID string) (*Evidence, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var out *Evidence
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		t, err := a.store.GetTask(ctx, p.OrgID, taskID)
		if err != nil {
			return err
		}
		if err := a.canWorkOnTask(p, t); err != nil {
			return err
		}
		ev, err := a.store.GetEvidence(ctx, p.OrgID, evidenceID)
		if errors.Is(err, ErrNotFound) {
			return Invalid("evidenceId", CodeUnknownReference, evidenceID, "evidenceId must name evidence of this organization")
		}
		if err != nil {
			return err
		}
		if t.ControlID == nil || *t.ControlID != ev.ControlID {
			return Invalid("evidenceId", CodeInvalid, evidenceID, "the evidence belongs to another control than the task")
		}
		before := *ev
		ev.TaskID = &taskID
		if err := a.store.SetEvidenceTask(ctx, p.OrgID, ev.ID, ev.TaskID); err != nil {
			return err
		}
		out = ev
		if err := a.record(ctx, Mutation{Action: "attached", ResourceType: "evidence", ResourceID: ev.ID, Before: &before, After: ev}); err != nil {
			return err
		}
		return a.reevaluateControl(ctx, p.OrgID, ev.ControlID)
	})
	if err != nil {
		return nil, fmt.Errorf("attach evidence %s: %w", evidenceID, err)
	}
	out.fill(a.Now())
	return out, nil
}

// GetEvidence returns one evidence record.
func (a *App) GetEvidence(ctx context.Context, id string) (*Evidence, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	ev, err := a.store.GetEvidence(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() {
		if err := a.seesEvidence(ctx, p, ev); err != nil {
			return nil, err
		}
	}
	ev.fill(a.Now())
	return ev, nil
}

// seesEvidence narrows employees and contractors to evidence of their tasks
// and of the controls they own.
func (a *App) seesEvidence(ctx context.Context, p *Principal, ev *Evidence) error {
	if c, err := a.store.GetControl(ctx, p.OrgID, ev.ControlID); err == nil && ownsControl(p, c) {
		return nil
	}
	if ev.TaskID == nil {
		return ErrNotFound
	}
	t, err := a.store.GetTask(ctx, p.OrgID, *ev.TaskID)
	if err != nil || t.AssigneeID == nil || *t.AssigneeID != p.UserID {
		return ErrNotFound
	}
	return nil
}

// OpenEvidence returns the evidence record and its content.
func (a *App) OpenEvidence(ctx context.Context, id string) (*Evidence, io.ReadSeekCloser, error) {
	ev, err := a.GetEvidence(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if a.files == nil {
		return nil, nil, errors.New("open evidence: no file store configured")
	}
	f, err := a.files.Open(ctx, ev.SHA256)
	if err != nil {
		return nil, nil, fmt.Errorf("open evidence %s: %w", id, err)
	}
	return ev, f, nil
}

// ListEvidence lists a control's or a task's evidence, newest first.
func (a *App) ListEvidence(ctx context.Context, f EvidenceFilter) (List[Evidence], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Evidence]{}, err
	}
	if p.SeesOnlyAssigned() && f.ControlID == "" && f.TaskID == "" {
		// Employees and contractors see evidence of their own controls
		// and tasks only, so they list it per control or task.
		return List[Evidence]{}, Errorf(ErrForbidden, "list evidence by control or task")
	}
	if f.ControlID != "" {
		c, err := a.store.GetControl(ctx, p.OrgID, f.ControlID)
		if err != nil {
			return List[Evidence]{}, err
		}
		if !ownsControl(p, c) {
			return List[Evidence]{}, ErrNotFound
		}
	}
	if f.TaskID != "" {
		t, err := a.store.GetTask(ctx, p.OrgID, f.TaskID)
		if err != nil {
			return List[Evidence]{}, err
		}
		if p.SeesOnlyAssigned() && (t.AssigneeID == nil || *t.AssigneeID != p.UserID) {
			return List[Evidence]{}, ErrNotFound
		}
	}
	now := a.Now()
	f.Now = now
	l, err := a.store.ListEvidence(ctx, p.OrgID, f)
	for i := range l.Items {
		l.Items[i].fill(now)
	}
	return l, err
}

// MaxExpiringWindow bounds the window ExpiringEvidence looks ahead.
const MaxExpiringWindow = 366 * 24 * time.Hour

// ExpiringEvidence lists the organization's evidence that has not expired
// and expires within the window (EvidenceWarning, 30 days, when zero),
// soonest first. Employees and contractors see the evidence of the
// controls they own.
func (a *App) ExpiringEvidence(ctx context.Context, within time.Duration, pg Page) (List[Evidence], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Evidence]{}, err
	}
	if within == 0 {
		within = EvidenceWarning
	}
	if within < 0 || within > MaxExpiringWindow {
		return List[Evidence]{}, Invalid("days", CodeInvalid, int(within/(24*time.Hour)), "days must be between 1 and 366")
	}
	now := a.Now()
	by := now.Add(within)
	f := EvidenceFilter{Now: now, ExpiringBy: &by, Page: pg}
	if p.SeesOnlyAssigned() {
		if p.UserID == "" {
			return List[Evidence]{Items: []Evidence{}}, nil
		}
		f.ControlOwnerID = p.UserID
	}
	l, err := a.store.ListEvidence(ctx, p.OrgID, f)
	if err != nil {
		return l, fmt.Errorf("list expiring evidence: %w", err)
	}
	for i := range l.Items {
		l.Items[i].fill(now)
	}
	return l, nil
}

// DeleteEvidence removes an evidence record; its control is re-evaluated.
// The stored content stays while other records share it.
func (a *App) DeleteEvidence(ctx context.Context, id string) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	if err := p.Require(CapManage); err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		ev, err := a.store.GetEvidence(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if err := a.store.DeleteEvidence(ctx, p.OrgID, id); err != nil {
			return err
		}
		if err := a.record(ctx, Mutation{Action: "deleted", ResourceType: "evidence", ResourceID: id, Before: ev,
			Events: []Event{ResourceEvent("evidence", "deleted", map[string]any{"id": id, "controlId": ev.ControlID})}}); err != nil {
			return err
		}
		return a.reevaluateControl(ctx, p.OrgID, ev.ControlID)
	})
	if err != nil {
		return fmt.Errorf("delete evidence %s: %w", id, err)
	}
	return nil
}

// ExpiringData is the data of an evidence.expiring event.
type ExpiringData struct {
	EvidenceID string    `json:"evidenceId"`
	ControlID  string    `json:"controlId"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// ScanEvidenceExpiry is the scheduled expiry job. It is idempotent: it
// raises evidence.expiring once per evidence when the evidence enters the
// 30-day window, and re-evaluates the control of evidence that has expired,
// so an implemented control whose evidence lapsed drops out of implemented
// (with control.status.changed).
func (a *App) ScanEvidenceExpiry(ctx context.Context) error {
	now := a.Now()
	warn, err := a.store.EvidenceEnteringWarning(ctx, now, now.Add(EvidenceWarning))
	if err != nil {
		return fmt.Errorf("scan evidence expiry: %w", err)
	}
	for _, ev := range warn {
		sys := SystemContext(ctx, ev.OrganizationID)
		err := a.store.InTx(sys, func(ctx context.Context) error {
			if err := a.store.MarkEvidenceWarned(ctx, ev.OrganizationID, ev.ID, now); err != nil {
				return err
			}
			return a.record(ctx, Mutation{Action: "expiring", ResourceType: "evidence", ResourceID: ev.ID,
				Events: []Event{{Type: EventEvidenceExpiring, Data: ExpiringData{EvidenceID: ev.ID, ControlID: ev.ControlID, ExpiresAt: *ev.ExpiresAt}}}})
		})
		if err != nil {
			return fmt.Errorf("scan evidence expiry %s: %w", ev.ID, err)
		}
	}
	expired, err := a.store.EvidenceNewlyExpired(ctx, now)
	if err != nil {
		return fmt.Errorf("scan evidence expiry: %w", err)
	}
	for _, ev := range expired {
		sys := SystemContext(ctx, ev.OrganizationID)
		err := a.store.InTx(sys, func(ctx context.Context) error {
			if err := a.store.MarkEvidenceExpiredProcessed(ctx, ev.OrganizationID, ev.ID, now); err != nil {
				return err
			}
			return a.reevaluateControl(ctx, ev.OrganizationID, ev.ControlID)
		})
		if err != nil {
			return fmt.Errorf("scan evidence expiry %s: %w", ev.ID, err)
		}
	}
	return nil
}
