package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// Delivery statuses.
const (
	DeliveryPending    = "pending"    // waiting for its first attempt or a retry
	DeliveryHeld       = "held"       // waiting for its paused subscription to resume
	DeliveryDelivering = "delivering" // claimed by a worker, request in flight
	DeliverySucceeded  = "succeeded"  // the receiver answered 2xx
	DeliveryFailed     = "failed"     // retries exhausted (dead-lettered)
)

// DeliveryStatuses lists every delivery status.
var DeliveryStatuses = []string{DeliveryPending, DeliveryHeld, DeliveryDelivering, DeliverySucceeded, DeliveryFailed}

// Delivery is one event bound for one subscription, with its attempts.
type Delivery struct {
	ID             string            `json:"id"`
	WebhookID      string            `json:"webhookId"`
	EventID        string            `json:"eventId"`
	Event          string            `json:"event"`
	Status         string            `json:"status"`
	AttemptCount   int               `json:"attemptCount"`
	NextAttemptAt  *time.Time        `json:"nextAttemptAt"`
	LastAttemptAt  *time.Time        `json:"lastAttemptAt"`
	LastStatusCode *int              `json:"lastStatusCode"`
	LastError      *string           `json:"lastError"`
	RedeliveryOf   *string           `json:"redeliveryOf"`
	ExpiresAt      time.Time         `json:"expiresAt"`
	CreatedAt      time.Time         `json:"createdAt"`
	UpdatedAt      time.Time         `json:"updatedAt"`
	Payload        json.RawMessage   `json:"payload"`
	Attempts       []DeliveryAttempt `json:"attempts"`
	OrganizationID string            `json:"-"`
}

// DeliveryAttempt is one HTTP request of a delivery.
type DeliveryAttempt struct {
	DeliveryID      string    `json:"-"`
	OrganizationID  string    `json:"-"`
	Attempt         int       `json:"attempt"`
	StartedAt       time.Time `json:"startedAt"`
	DurationMS      int64     `json:"durationMs"`
	StatusCode      *int      `json:"statusCode"`
	ResponseSnippet string    `json:"responseSnippet"`
	Error           string    `json:"error"`
}

// DeliveryState is a delivery's state after an attempt.
type DeliveryState struct {
	Status         string
	NextAttemptAt  time.Time
	LastAttemptAt  time.Time
	LastStatusCode *int
	LastError      *string
}

// DeliveryFilter narrows the delivery log.
type DeliveryFilter struct {
	Status string
	Event  string
	Page   Page
}

// ClaimedDelivery is a delivery a worker holds, with what it needs to send.
type ClaimedDelivery struct {
	ID             string
	OrganizationID string
	WebhookID      string
	EventID        string
	EventType      string
	Body           []byte
	AttemptCount   int
	ExpiresAt      time.Time
	Redelivery     bool
	URL            string
	SealedSecret   []byte
}

// Envelope is the body of every delivery (DECISIONS: Webhooks). ID is the
// event id: the same across retries and redeliveries, for de-duplication.
type Envelope struct {
	ID        string          `json:"id"`
	Event     string          `json:"event"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// SignWebhook returns the X-Service-Signature of a body: lowercase hex
// HMAC-SHA256 keyed with the secret exactly as shown to the customer.
func SignWebhook(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// VerifyWebhookSignature reports whether signature (the
// X-Service-Signature header a receiver got) is the HMAC-SHA256 of body
// keyed with secret, in hex of either case. The comparison is in constant
// time; anything that is not 64 hex digits is false.
func VerifyWebhookSignature(secret string, body []byte, signature string) bool {
	if len(signature) != 2*sha256.Size {
		return false
	}
	got, err := hex.DecodeString(signature)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// OutboundRequest is one webhook HTTP POST.
type OutboundRequest struct {
	URL    string
	Body   []byte
	Header map[string]string
}

// OutboundResponse is what came back: a status code and the start of the
// body, or the transport error.
type OutboundResponse struct {
	StatusCode int
	Snippet    string
	Err        error
}

// WebhookSender performs webhook requests; web implements it with the
// network policy enforced at dial time.
type WebhookSender interface {
	Send(ctx context.Context, req OutboundRequest) OutboundResponse
}

// DeliveryOptions tune the delivery workers. Zero values take the defaults.
type DeliveryOptions struct {
	Workers      int           // concurrent requests (4)
	PollInterval time.Duration // how often the outbox and the retry queue are checked (25 ms)
	Timeout      time.Duration // per request (10 s)
	RetryBase    time.Duration // first retry delay before jitter (10 s)
	RetryCap     time.Duration // longest delay between retries (1 h)
	RetryWindow  time.Duration // retries stop this long after the delivery was scheduled (24 h)
	Retention    time.Duration // finished deliveries are kept this long (30 days)
	// Jitter returns a number in [0, 1); each delay is scaled by 0.5 + Jitter().
	Jitter func() float64
}

func (o DeliveryOptions) withDefaults() DeliveryOptions {
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 25 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 10 * time.Second
	}
	if o.RetryCap <= 0 {
		o.RetryCap = time.Hour
	}
	if o.RetryWindow <= 0 {
		o.RetryWindow = 24 * time.Hour
	}
	if o.Retention <= 0 {
		o.Retention = 30 * 24 * time.Hour
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	return o
}

// lease is how long a claim protects a delivery: a wait in the queue (at
// most two requests' time), the request itself, and margin. A process that
// dies with claims leaves them to be claimed again when the lease runs out.
func (o DeliveryOptions) lease() time.Duration { return 3*o.Timeout + 5*time.Second }

// Backoff is the delay after the n-th failed attempt (n from 1):
// RetryBase doubling per attempt up to RetryCap, scaled by 0.5 + jitter.
func (o DeliveryOptions) Backoff(n int) time.Duration {
	o = o.withDefaults()
	d := o.RetryBase
	for i := 1; i < n && d < o.RetryCap; i++ {
		d *= 2
	}
	d = min(d, o.RetryCap)
	return time.Duration(float64(d) * (0.5 + o.Jitter()))
}

const dispatchBatch = 500

// DispatchEvents fans outbox events past the cursor out to the matching
// subscriptions as delivery rows, and moves the cursor, in one transaction:
// a crash either keeps both or neither. It returns the events handled.
func (a *App) DispatchEvents(ctx context.Context, o DeliveryOptions) (int, error) {
	o = o.withDefaults()
	n := 0
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		cur, err := a.store.WebhookCursor(ctx)
		if err != nil {
			return err
		}
		evs, err := a.store.EventsAfter(ctx, cur, dispatchBatch)
		if err != nil || len(evs) == 0 {
			return err
		}
		now := a.Now()
		hooks := map[string][]Webhook{}
		var ds []Delivery
		for _, e := range evs {
			hs, ok := hooks[e.OrganizationID]
			if !ok {
				if hs, err = a.store.ActiveWebhooks(ctx, e.OrganizationID); err != nil {
					return err
				}
				hooks[e.OrganizationID] = hs
			}
			for _, h := range hs {
				if e.Seq <= h.StartSeq || !EventMatches(h.Events, e.Type) {
					continue
				}
				body, err := json.Marshal(Envelope{ID: e.ID, Event: e.Type, Timestamp: e.OccurredAt, Data: json.RawMessage(e.Payload)})
				if err != nil {
					// A payload that is not JSON cannot be sent; it must not
					// hold up every event behind it.
					a.log.Error("event payload is not JSON; not delivered", slog.String("event_id", e.ID), slog.Any("error", err))
					break
				}
				ds = append(ds, newDelivery(h.OrganizationID, h.ID, e.ID, e.Type, body, now, o))
			}
		}
		if err := a.store.InsertDeliveries(ctx, ds); err != nil {
			return err
		}
		n = len(evs)
		return a.store.SetWebhookCursor(ctx, evs[len(evs)-1].Seq)
	})
	if err != nil {
		return 0, fmt.Errorf("dispatch events: %w", err)
	}
	return n, nil
}

func newDelivery(orgID, webhookID, eventID, eventType string, body []byte, now time.Time, o DeliveryOptions) Delivery {
	return Delivery{ID: NewID(PrefixDelivery), OrganizationID: orgID, WebhookID: webhookID, EventID: eventID, Event: eventType,
		Status: DeliveryPending, NextAttemptAt: &now, ExpiresAt: now.Add(o.RetryWindow), CreatedAt: now, UpdatedAt: now,
		Payload: body}
}

// ListDeliveries returns a subscription's delivery log, newest first, with
// every attempt.
func (a *App) ListDeliveries(ctx context.Context, webhookID string, f DeliveryFilter) (List[Delivery], error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return List[Delivery]{}, err
	}
	ve := NewValidationError()
	oneOf(ve, "status", f.Status, DeliveryStatuses)
	if err := ve.Err(); err != nil {
		return List[Delivery]{}, err
	}
	if _, err := a.store.GetWebhook(ctx, p.OrgID, webhookID); err != nil {
		return List[Delivery]{}, err
	}
	return a.store.ListDeliveries(ctx, p.OrgID, webhookID, f)
}

// GetDelivery returns one delivery with its attempts.
func (a *App) GetDelivery(ctx context.Context, webhookID, id string) (*Delivery, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	return a.store.GetDelivery(ctx, p.OrgID, webhookID, id)
}

// Redeliver sends a delivery's exact body again as a new delivery (with
// its own attempts and 24 h of retries), whatever the original's status.
func (a *App) Redeliver(ctx context.Context, webhookID, deliveryID string) (*Delivery, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out Delivery
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		orig, err := a.store.GetDelivery(ctx, p.OrgID, webhookID, deliveryID)
		if err != nil {
			return err
		}
		out = newDelivery(p.OrgID, webhookID, orig.EventID, orig.Event, orig.Payload, a.Now(), a.deliveryOptions())
		out.RedeliveryOf = &orig.ID
		out.Attempts = []DeliveryAttempt{}
		if err := a.store.InsertDeliveries(ctx, []Delivery{out}); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "redelivered", ResourceType: "webhook_delivery", ResourceID: out.ID,
			After: map[string]any{"webhookId": webhookID, "redeliveryOf": orig.ID, "eventId": orig.EventID, "event": orig.Event}})
	})
	if err != nil {
		return nil, fmt.Errorf("redeliver %s: %w", deliveryID, err)
	}
	return &out, nil
}

// PingWebhook queues a "ping" delivery to the endpoint, even while it is
// paused, so a receiver can be tested before it is resumed.
func (a *App) PingWebhook(ctx context.Context, webhookID string) (*Delivery, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out Delivery
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		w, err := a.store.GetWebhook(ctx, p.OrgID, webhookID)
		if err != nil {
			return err
		}
		now := a.Now()
		data, _ := json.Marshal(map[string]any{"webhookId": w.ID, "url": w.URL, "events": w.Events,
			"message": "This is a test delivery from the compliance appliance."})
		eventID := NewID(PrefixEvent)
		body, err := json.Marshal(Envelope{ID: eventID, Event: EventPing, Timestamp: now, Data: data})
		if err != nil {
			return err
		}
		out = newDelivery(p.OrgID, w.ID, eventID, EventPing, body, now, a.deliveryOptions())
		out.Attempts = []DeliveryAttempt{}
		if err := a.store.InsertDeliveries(ctx, []Delivery{out}); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "pinged", ResourceType: "webhook", ResourceID: w.ID,
			After: map[string]any{"deliveryId": out.ID}})
	})
	if err != nil {
		return nil, fmt.Errorf("ping webhook %s: %w", webhookID, err)
	}
	return &out, nil
}

// PurgeDeliveries removes finished deliveries older than the retention.
func (a *App) PurgeDeliveries(ctx context.Context, retention time.Duration) (int64, error) {
	if retention <= 0 {
		retention = a.deliveryOptions().Retention
	}
	return a.store.PurgeDeliveries(ctx, a.Now().Add(-retention))
}

// PurgeEvents removes outbox events older than the retention once the
// dispatcher has fanned them out: every delivery keeps its own copy of the
// body it sends, and a new subscription starts after the newest event, so
// nothing reads them again.
func (a *App) PurgeEvents(ctx context.Context, retention time.Duration) (int64, error) {
	if retention <= 0 {
		retention = a.deliveryOptions().Retention
	}
	return a.store.PurgeEvents(ctx, a.Now().Add(-retention))
}
