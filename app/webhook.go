package app

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

// Webhook event names the subscription machinery itself raises.
const (
	// EventPing is the test event POST /v1/webhooks/{id}/ping sends.
	EventPing = "ping"
	// EventWebhookPaused is raised when an endpoint failing for
	// WebhookFailingLimit is paused automatically.
	EventWebhookPaused = "webhook.paused"
)

// Webhook limits.
const (
	// WebhookFailingLimit is how long an endpoint may fail every attempt
	// before it is paused.
	WebhookFailingLimit = 24 * time.Hour
	// WebhookSecretPrefix starts every signing secret.
	WebhookSecretPrefix = "whsec_"
	maxWebhookEvents    = 100
	maxWebhooksPerOrg   = 50
)

// Pause reasons.
const (
	PausedManual  = "manual"
	PausedFailing = "failing"
)

// Webhook is a subscription: events matching Events are delivered to URL,
// signed with the secret shown once at creation and at each rotation.
type Webhook struct {
	ID             string     `json:"id"`
	URL            string     `json:"url"`
	Description    string     `json:"description"`
	Events         []string   `json:"events"`
	Active         bool       `json:"active"`
	PausedReason   *string    `json:"pausedReason"`
	PausedAt       *time.Time `json:"pausedAt"`
	FailingSince   *time.Time `json:"failingSince"`
	LastSuccessAt  *time.Time `json:"lastSuccessAt"`
	LastFailureAt  *time.Time `json:"lastFailureAt"`
	SecretHint     string     `json:"secretHint"`
	CreatedAt      time.Time  `json:"createdAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
	Secret         string     `json:"secret,omitempty"` // create and rotate responses only
	OrganizationID string     `json:"-"`
	SealedSecret   []byte     `json:"-"`
	StartSeq       int64      `json:"-"`
}

// WebhookInput is the body of POST and PATCH /v1/webhooks. Create requires
// url and events.
type WebhookInput struct {
	URL         *string   `json:"url"`
	Description *string   `json:"description"`
	Events      *[]string `json:"events"`
	Active      *bool     `json:"active"`
}

// WebhookStore persists subscriptions, deliveries and the dispatcher cursor.
type WebhookStore interface {
	CreateWebhook(ctx context.Context, w *Webhook) error
	UpdateWebhook(ctx context.Context, w *Webhook) error
	DeleteWebhook(ctx context.Context, orgID, id string) error
	GetWebhook(ctx context.Context, orgID, id string) (*Webhook, error)
	ListWebhooks(ctx context.Context, orgID string, p Page) (List[Webhook], error)
	// ActiveWebhooks returns the organization's active subscriptions.
	ActiveWebhooks(ctx context.Context, orgID string) ([]Webhook, error)
	// LastEventSeq is the highest outbox sequence number.
	LastEventSeq(ctx context.Context) (int64, error)
	// WebhookCursor is the last outbox sequence fanned out.
	WebhookCursor(ctx context.Context) (int64, error)
	SetWebhookCursor(ctx context.Context, seq int64) error
	// EventsAfter returns up to limit outbox events above seq, in order.
	EventsAfter(ctx context.Context, seq int64, limit int) ([]StoredEvent, error)
	// InsertDeliveries adds deliveries, skipping an original delivery of an
	// event a subscription already has.
	InsertDeliveries(ctx context.Context, ds []Delivery) error
	GetDelivery(ctx context.Context, orgID, webhookID, id string) (*Delivery, error)
	ListDeliveries(ctx context.Context, orgID, webhookID string, f DeliveryFilter) (List[Delivery], error)
	// NextDeliveryDue is the earliest time a delivery becomes claimable, or
	// nil when none waits.
	NextDeliveryDue(ctx context.Context) (*time.Time, error)
	ClaimDeliveries(ctx context.Context, now, until time.Time, token string, limit int) ([]ClaimedDelivery, error)
	// FinishAttempt records an attempt and the delivery's new state; it is
	// ErrNotFound when the claim was lost (or the delivery deleted).
	FinishAttempt(ctx context.Context, token string, at DeliveryAttempt, next DeliveryState) error
	// SetWebhookHealth stores the health fields and pause state.
	SetWebhookHealth(ctx context.Context, w *Webhook) error
	// SetDeliveriesHeld holds a paused subscription's pending deliveries,
	// or releases them when it resumes.
	SetDeliveriesHeld(ctx context.Context, orgID, webhookID string, held bool) error
	PurgeDeliveries(ctx context.Context, before time.Time) (int64, error)
	// PurgeEvents deletes outbox events older than before that have been
	// fanned out, keeping the newest.
	PurgeEvents(ctx context.Context, before time.Time) (int64, error)
}

// StoredEvent is an outbox row.
type StoredEvent struct {
	Seq            int64
	ID             string
	OrganizationID string
	Type           string
	Payload        []byte
	OccurredAt     time.Time
}

// eventState holds the webhook and scheduler machinery's process state; its
// zero value is ready (a random secret key, the default network policy).
type eventState struct {
	mu       sync.Mutex
	aead     cipher.AEAD
	policy   *NetworkPolicy
	sched    *Runner
	delivery *DeliveryOptions
}

func (a *App) ev() *eventState { return &a.events }

// SetWebhookKey sets the 32-byte key that seals signing secrets at rest.
// Without it a random key lives for the process only (tests).
func (a *App) SetWebhookKey(key []byte) error {
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return fmt.Errorf("webhook key: %w", err)
	}
	s := a.ev()
	s.mu.Lock()
	s.aead = aead
	s.mu.Unlock()
	return nil
}

// SetNetworkPolicy sets the outbound network policy for webhook targets.
func (a *App) SetNetworkPolicy(p *NetworkPolicy) {
	s := a.ev()
	s.mu.Lock()
	s.policy = p
	s.mu.Unlock()
}

// NetworkPolicy returns the outbound network policy.
func (a *App) NetworkPolicy() *NetworkPolicy {
	s := a.ev()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.policy == nil {
		s.policy = DefaultNetworkPolicy()
	}
	return s.policy
}

func (a *App) secretAEAD() cipher.AEAD {
	s := a.ev()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aead == nil {
		key := make([]byte, chacha20poly1305.KeySize)
		if _, err := rand.Read(key); err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		s.aead, _ = chacha20poly1305.NewX(key)
	}
	return s.aead
}

// sealSecret encrypts a signing secret bound to its webhook id.
func (a *App) sealSecret(webhookID, secret string) []byte {
	aead := a.secretAEAD()
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(secret)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return aead.Seal(nonce, nonce, []byte(secret), []byte(webhookID))
}

// openSecret decrypts a sealed signing secret.
func (a *App) openSecret(webhookID string, sealed []byte) (string, error) {
	aead := a.secretAEAD()
	if len(sealed) < aead.NonceSize() {
		return "", errors.New("sealed webhook secret is truncated")
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(webhookID))
	if err != nil {
		return "", fmt.Errorf("open secret of webhook %s (wrong data-dir key?): %w", webhookID, err)
	}
	return string(plain), nil
}

func newWebhookSecret() string { return WebhookSecretPrefix + RandomToken(32) }

func secretHint(secret string) string { return secret[:len(WebhookSecretPrefix)+4] + "…" }

var eventPatternRe = regexp.MustCompile(`^(\*|[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*(\.\*)?)$`)

// EventMatches reports whether an event type matches a subscription's
// filter: "*" (every event), an exact name, or "resource.*" (every event
// whose name starts with "resource.").
func EventMatches(filter []string, eventType string) bool {
	for _, f := range filter {
		switch {
		case f == "*":
			return true
		case strings.HasSuffix(f, ".*"):
			if strings.HasPrefix(eventType, strings.TrimSuffix(f, "*")) {
				return true
			}
		case f == eventType:
			return true
		}
	}
	return false
}

func (in *WebhookInput) apply(w *Webhook, policy *NetworkPolicy, ve *ValidationError) {
	if in.URL != nil {
		s := strings.TrimSpace(*in.URL)
		u, err := url.Parse(s)
		switch {
		case s == "":
			ve.Add("url", CodeRequired, nil, "url is required")
		case len(s) > 2048:
			ve.Add("url", CodeTooLong, nil, "url must be at most 2048 characters")
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "":
			ve.Add("url", CodeInvalid, s, "url must be an absolute http or https URL")
		case u.User != nil:
			ve.Add("url", CodeInvalid, s, "url must not carry credentials; authenticate deliveries by their signature")
		case u.Fragment != "":
			ve.Add("url", CodeInvalid, s, "url must not have a fragment")
		default:
			if err := policy.CheckHost(u.Hostname()); err != nil {
				ve.Add("url", CodeInvalid, s, "url: "+err.Error())
			}
		}
		w.URL = s
	}
	if in.Description != nil {
		d := strings.TrimSpace(*in.Description)
		maxLen(ve, "description", d, 500)
		w.Description = d
	}
	if in.Events != nil {
		evs := *in.Events
		seen := map[string]bool{}
		out := []string{}
		if len(evs) == 0 {
			ve.Add("events", CodeRequired, nil, `events must list at least one event name, or "*"`)
		}
		if len(evs) > maxWebhookEvents {
			ve.Add("events", CodeTooLong, len(evs), fmt.Sprintf("events may list at most %d names", maxWebhookEvents))
		}
		for i, e := range evs {
			e = strings.TrimSpace(e)
			if len(e) > 100 || !eventPatternRe.MatchString(e) || e == EventPing {
				ve.Add(fmt.Sprintf("events[%d]", i), CodeInvalid, e,
					`each event must be an event name such as vendor.created, a prefix such as vendor.*, or "*"`)
				continue
			}
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
		w.Events = out
	}
	if in.Active != nil && *in.Active != w.Active {
		w.Active = *in.Active
		if w.Active {
			w.PausedReason, w.PausedAt, w.FailingSince = nil, nil, nil
		} else {
			now := w.UpdatedAt
			w.PausedReason, w.PausedAt = Ptr(PausedManual), &now
		}
	}
}

// redacted returns the webhook without its plaintext secret (for the
// journal: the secret never enters the audit trail or an event).
func (w *Webhook) redacted() *Webhook {
	c := *w
	c.Secret = ""
	return &c
}

// CreateWebhook subscribes an endpoint. The response carries the signing
// secret; it is not shown again.
func (a *App) CreateWebhook(ctx context.Context, in WebhookInput) (*Webhook, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	w := &Webhook{ID: NewID(PrefixWebhook), OrganizationID: p.OrgID, Active: true, Events: []string{}, CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if in.URL == nil {
		ve.Add("url", CodeRequired, nil, "url is required")
	}
	if in.Events == nil {
		ve.Add("events", CodeRequired, nil, `events is required: a list of event names, or ["*"]`)
	}
	in.apply(w, a.NetworkPolicy(), ve)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	w.Secret = newWebhookSecret()
	w.SecretHint = secretHint(w.Secret)
	w.SealedSecret = a.sealSecret(w.ID, w.Secret)
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		l, err := a.store.ListWebhooks(ctx, p.OrgID, Page{Page: 1, PerPage: 1})
		if err != nil {
			return err
		}
		if l.Total >= maxWebhooksPerOrg {
			return Errorf(ErrConflict, "an organization may have at most %d webhooks", maxWebhooksPerOrg)
		}
		if err := a.record(ctx, Mutation{Action: "created", ResourceType: "webhook", ResourceID: w.ID, After: w.redacted(),
			Events: []Event{ResourceEvent("webhook", "created", w.redacted())}}); err != nil {
			return err
		}
		// Events committed before the subscription are not its to receive.
		if w.StartSeq, err = a.store.LastEventSeq(ctx); err != nil {
			return err
		}
		return a.store.CreateWebhook(ctx, w)
	})
	if err != nil {
		return nil, fmt.Errorf("create webhook: %w", err)
	}
	return w, nil
}

// GetWebhook returns one subscription.
func (a *App) GetWebhook(ctx context.Context, id string) (*Webhook, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	return a.store.GetWebhook(ctx, p.OrgID, id)
}

// ListWebhooks lists the organization's subscriptions.
func (a *App) ListWebhooks(ctx context.Context, pg Page) (List[Webhook], error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return List[Webhook]{}, err
	}
	return a.store.ListWebhooks(ctx, p.OrgID, pg)
}

// UpdateWebhook changes url, description, events or the active flag.
// Setting active pauses (false) or resumes (true) deliveries; resuming
// clears the failure streak.
func (a *App) UpdateWebhook(ctx context.Context, id string, in WebhookInput) (*Webhook, error) {
	return a.mutateWebhook(ctx, id, "updated", func(w *Webhook, ve *ValidationError) {
		if in.URL != nil && strings.TrimSpace(*in.URL) == "" {
			ve.Add("url", CodeRequired, nil, "url must not be empty")
		}
		in.apply(w, a.NetworkPolicy(), ve)
	})
}

// RotateWebhookSecret replaces the signing secret and returns the webhook
// with the new secret, shown once. Deliveries sent from now on are signed
// with it, retries included.
func (a *App) RotateWebhookSecret(ctx context.Context, id string) (*Webhook, error) {
	var secret string
	w, err := a.mutateWebhook(ctx, id, "secret_rotated", func(w *Webhook, _ *ValidationError) {
		secret = newWebhookSecret()
		w.SecretHint = secretHint(secret)
		w.SealedSecret = a.sealSecret(w.ID, secret)
	})
	if err != nil {
		return nil, err
	}
	w.Secret = secret
	return w, nil
}

func (a *App) mutateWebhook(ctx context.Context, id, action string, fn func(w *Webhook, ve *ValidationError)) (*Webhook, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *Webhook
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetWebhook(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		w := *before
		w.Events = append([]string{}, before.Events...)
		w.UpdatedAt = a.Now()
		ve := NewValidationError()
		fn(&w, ve)
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.UpdateWebhook(ctx, &w); err != nil {
			return err
		}
		if w.Active != before.Active {
			if err := a.store.SetDeliveriesHeld(ctx, p.OrgID, id, !w.Active); err != nil {
				return err
			}
		}
		out = &w
		return a.record(ctx, Mutation{Action: action, ResourceType: "webhook", ResourceID: id, Before: before, After: &w,
			Events: []Event{ResourceEvent("webhook", "updated", &w)}})
	})
	if err != nil {
		return nil, fmt.Errorf("update webhook %s: %w", id, err)
	}
	return out, nil
}

// DeleteWebhook removes a subscription and its delivery log.
func (a *App) DeleteWebhook(ctx context.Context, id string) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	if err := p.Require(CapManage); err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetWebhook(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if err := a.store.DeleteWebhook(ctx, p.OrgID, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "webhook", ResourceID: id, Before: before,
			Events: []Event{ResourceEvent("webhook", "deleted", map[string]any{"id": id, "url": before.URL})}})
	})
	if err != nil {
		return fmt.Errorf("delete webhook %s: %w", id, err)
	}
	return nil
}
