package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Deliverer is the worker pool that sends deliveries. A poller fans the
// outbox out and claims due deliveries in short transactions into a queue;
// Workers goroutines send them, outside any transaction; one recorder
// writes the outcomes, many per transaction (group commit). A delivery is
// marked done only after its receiver answered and the outcome committed,
// so a crash at any point causes a resend, never a loss.
type Deliverer struct {
	a    *App
	send WebhookSender
	o    DeliveryOptions
	log  *slog.Logger
	wg   sync.WaitGroup
	wake chan struct{}
}

// NewDeliverer builds the worker pool over a sender.
func (a *App) NewDeliverer(send WebhookSender, o DeliveryOptions) *Deliverer {
	o = o.withDefaults()
	a.events.mu.Lock()
	a.events.delivery = &o
	a.events.mu.Unlock()
	return &Deliverer{a: a, send: send, o: o, log: a.log, wake: make(chan struct{}, 1)}
}

// deliveryOptions are the options of the process's worker pool (for the
// retry window of redeliveries and pings), or the defaults.
func (a *App) deliveryOptions() DeliveryOptions {
	a.events.mu.Lock()
	defer a.events.mu.Unlock()
	if a.events.delivery != nil {
		return *a.events.delivery
	}
	return DeliveryOptions{}.withDefaults()
}

// Options returns the effective options.
func (d *Deliverer) Options() DeliveryOptions { return d.o }

func (d *Deliverer) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// outcome is a finished request waiting to be recorded.
type outcome struct {
	c       ClaimedDelivery
	token   string
	started time.Time
	dur     time.Duration
	res     OutboundResponse
}

// maxRecordBatch bounds the outcomes written in one transaction.
const maxRecordBatch = 128

// Start runs the pool until ctx ends. Then the poller stops claiming, the
// workers send what is already claimed (each request bounded by Timeout),
// and every outcome is recorded; Wait waits for all of it.
func (d *Deliverer) Start(ctx context.Context) {
	queue := make(chan claimed, 2*d.o.Workers)
	results := make(chan outcome, 2*d.o.Workers)
	var workers sync.WaitGroup
	for i := 0; i < d.o.Workers; i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for c := range queue {
				d.poke()
				results <- d.attempt(ctx, c.ClaimedDelivery, c.token)
			}
		}()
	}
	d.wg.Add(2)
	go func() { // recorder
		defer d.wg.Done()
		base := context.WithoutCancel(ctx)
		for first := range results {
			batch := []outcome{first}
		more:
			for len(batch) < maxRecordBatch {
				select {
				case r, ok := <-results:
					if !ok {
						break more
					}
					batch = append(batch, r)
				default:
					break more
				}
			}
			if err := d.a.recordOutcomes(base, batch, d.o); err != nil {
				d.log.Error("webhook attempts not recorded; they will be retried", slog.Int("count", len(batch)), slog.Any("error", err))
			}
			d.poke()
		}
	}()
	go func() { // poller
		defer d.wg.Done()
		defer func() {
			close(queue)
			workers.Wait()
			close(results)
		}()
		t := time.NewTicker(d.o.PollInterval)
		defer t.Stop()
		var seen int64 = -1
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-d.wake:
			}
			if err := d.dispatchIfNew(ctx, &seen); err != nil && ctx.Err() == nil {
				d.log.Error("webhook dispatch failed", slog.Any("error", err))
			}
			room := cap(queue) - len(queue)
			if room < d.o.Workers && len(queue) > 0 {
				continue
			}
			batch, err := d.claim(ctx, room)
			if err != nil && ctx.Err() == nil {
				d.log.Error("webhook claim failed", slog.Any("error", err))
			}
			for _, c := range batch {
				queue <- c
			}
		}
	}()
}

// Wait blocks until the poller and every request in flight are done.
func (d *Deliverer) Wait() { d.wg.Wait() }

// dispatchIfNew runs the dispatcher when the outbox has grown (a cheap read
// on the reader pool decides).
func (d *Deliverer) dispatchIfNew(ctx context.Context, seen *int64) error {
	last, err := d.a.store.LastEventSeq(ctx)
	if err != nil {
		return err
	}
	if last == *seen {
		return nil
	}
	for {
		n, err := d.a.DispatchEvents(ctx, d.o)
		if err != nil {
			return err
		}
		if n < dispatchBatch {
			break
		}
	}
	*seen = last
	return nil
}

type claimed struct {
	ClaimedDelivery
	token string
}

func (d *Deliverer) claim(ctx context.Context, limit int) ([]claimed, error) {
	now := d.a.Now()
	due, err := d.a.store.NextDeliveryDue(ctx)
	if err != nil || due == nil || due.After(now) {
		return nil, err
	}
	token := RandomToken(12)
	var cs []ClaimedDelivery
	err = d.a.store.InTx(ctx, func(ctx context.Context) error {
		var err error
		cs, err = d.a.store.ClaimDeliveries(ctx, now, now.Add(d.o.lease()), token, limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	out := make([]claimed, len(cs))
	for i, c := range cs {
		out[i] = claimed{c, token}
	}
	return out, nil
}

// RunOnce dispatches the whole outbox, then claims and sends every due
// delivery one by one; tests and benchmarks drive delivery with it on an
// injected clock. It returns the number of requests made.
func (d *Deliverer) RunOnce(ctx context.Context) (int, error) {
	var seen int64 = -1
	if err := d.dispatchIfNew(ctx, &seen); err != nil {
		return 0, err
	}
	sent := 0
	for {
		cs, err := d.claim(ctx, d.o.Workers) // a small claim: sent one by one, within the lease
		if err != nil {
			return sent, err
		}
		if len(cs) == 0 {
			return sent, nil
		}
		for _, c := range cs {
			d.deliver(ctx, c.ClaimedDelivery, c.token)
			sent++
		}
	}
}

// attempt makes one request. It does not inherit cancellation from ctx,
// so shutdown lets it finish and be recorded.
func (d *Deliverer) attempt(ctx context.Context, c ClaimedDelivery, token string) outcome {
	out := outcome{c: c, token: token, started: d.a.Now()}
	t0 := time.Now()
	secret, err := d.a.openSecret(c.WebhookID, c.SealedSecret)
	if err != nil {
		out.res.Err = errors.New("the signing secret could not be decrypted with this data directory's key")
		d.log.Error("webhook secret unavailable", slog.String("webhook_id", c.WebhookID), slog.Any("error", err))
	} else {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.o.Timeout)
		out.res = d.send.Send(rctx, OutboundRequest{URL: c.URL, Body: c.Body, Header: map[string]string{
			"Content-Type":        "application/json",
			"User-Agent":          "compliance-webhooks/1",
			"X-Service-Signature": SignWebhook(secret, c.Body),
			"X-Service-Event":     c.EventType,
			"X-Service-Delivery":  c.ID,
		}})
		cancel()
	}
	out.dur = time.Since(t0)
	return out
}

// deliver makes one attempt and records it at once (RunOnce).
func (d *Deliverer) deliver(ctx context.Context, c ClaimedDelivery, token string) {
	if err := d.a.recordOutcomes(context.WithoutCancel(ctx), []outcome{d.attempt(ctx, c, token)}, d.o); err != nil {
		d.log.Error("webhook attempt not recorded", slog.String("delivery_id", c.ID), slog.Any("error", err))
	}
}

// recordOutcomes writes attempts in one transaction; an outcome that fails
// to record is rolled back alone (its claim runs out and it is resent).
// Each endpoint's health is written once per batch.
func (a *App) recordOutcomes(ctx context.Context, batch []outcome, o DeliveryOptions) error {
	return a.store.InTx(ctx, func(ctx context.Context) error {
		hb := &healthBatch{hooks: map[string]*Webhook{}, dirty: map[string]bool{}}
		for _, r := range batch {
			err := a.store.InTx(ctx, func(ctx context.Context) error { return a.finishAttempt(ctx, r, o, hb) })
			if err != nil {
				a.log.Error("webhook attempt not recorded", slog.String("delivery_id", r.c.ID), slog.Any("error", err))
			}
		}
		for id := range hb.dirty {
			if err := a.store.SetWebhookHealth(ctx, hb.hooks[id]); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		return nil
	})
}

// healthBatch holds the endpoints a batch of outcomes touches.
type healthBatch struct {
	hooks map[string]*Webhook
	dirty map[string]bool
}

// finishAttempt records an attempt, schedules the retry or dead-letters the
// delivery, and keeps the endpoint's failure streak, pausing an endpoint
// that has failed for WebhookFailingLimit.
func (a *App) finishAttempt(ctx context.Context, r outcome, o DeliveryOptions, hb *healthBatch) error {
	c, res, started := r.c, r.res, r.started
	now := a.Now()
	ok := res.Err == nil && res.StatusCode >= 200 && res.StatusCode < 300
	at := DeliveryAttempt{DeliveryID: c.ID, OrganizationID: c.OrganizationID, Attempt: c.AttemptCount + 1, StartedAt: started,
		DurationMS: r.dur.Milliseconds(), ResponseSnippet: res.Snippet}
	st := DeliveryState{Status: DeliverySucceeded, NextAttemptAt: now, LastAttemptAt: started}
	if res.StatusCode != 0 {
		at.StatusCode = Ptr(res.StatusCode)
		st.LastStatusCode = at.StatusCode
	}
	if !ok {
		msg := fmt.Sprintf("the receiver answered %d", res.StatusCode)
		if res.Err != nil {
			msg = res.Err.Error()
		}
		at.Error, st.LastError = msg, &msg
		st.Status = DeliveryPending
		st.NextAttemptAt = now.Add(o.Backoff(at.Attempt))
		if st.NextAttemptAt.After(c.ExpiresAt) {
			st.NextAttemptAt = c.ExpiresAt
		}
		if !now.Before(c.ExpiresAt) {
			st.Status = DeliveryFailed
		}
	}
	var w *Webhook
	if c.EventType != EventPing {
		if w = hb.hooks[c.WebhookID]; w == nil {
			var err error
			if w, err = a.store.GetWebhook(ctx, c.OrganizationID, c.WebhookID); errors.Is(err, ErrNotFound) {
				return nil // deleted meanwhile, with its deliveries
			} else if err != nil {
				return err
			}
			hb.hooks[c.WebhookID] = w
		}
		if st.Status == DeliveryPending && !w.Active && !c.Redelivery {
			st.Status = DeliveryHeld // paused while the request was in flight
		}
	}
	err := a.store.FinishAttempt(ctx, r.token, at, st)
	if err == nil {
		a.metrics.DeliveryAttempt(st.Status, r.dur)
	}
	if errors.Is(err, ErrNotFound) {
		return nil // the claim ran out and another worker took it, or the webhook was deleted
	}
	if err != nil || w == nil {
		return err
	}
	if ok {
		w.LastSuccessAt, w.FailingSince = &now, nil
		hb.dirty[w.ID] = true
		return nil
	}
	w.LastFailureAt = &now
	if w.FailingSince == nil {
		w.FailingSince = &started
	}
	hb.dirty[w.ID] = true
	if !w.Active || now.Sub(*w.FailingSince) < WebhookFailingLimit {
		return nil
	}
	before := *w
	before.Active, before.PausedReason, before.PausedAt = true, nil, nil
	w.Active, w.PausedReason, w.PausedAt, w.UpdatedAt = false, Ptr(PausedFailing), &now, now
	if err := a.store.SetWebhookHealth(ctx, w); err != nil {
		return err
	}
	if err := a.store.SetDeliveriesHeld(ctx, w.OrganizationID, w.ID, true); err != nil {
		return err
	}
	a.log.Warn("webhook paused after failing for 24 h", slog.String("org_id", c.OrganizationID), slog.String("webhook_id", w.ID),
		slog.Time("failing_since", *w.FailingSince))
	return a.record(SystemContext(ctx, c.OrganizationID), Mutation{Action: "paused", ResourceType: "webhook", ResourceID: w.ID,
		Before: &before, After: w, Events: []Event{{Type: EventWebhookPaused, Data: map[string]any{
			"webhookId": w.ID, "url": w.URL, "reason": PausedFailing, "failingSince": w.FailingSince, "pausedAt": now,
			"lastError": strings.TrimSpace(at.Error),
		}}}})
}
