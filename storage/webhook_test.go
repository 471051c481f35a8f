package storage

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

func TestMigrateTwiceIsNoOp(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	applied, err := db.Migrate(context.Background())
	if err != nil || len(applied) != 0 {
		t.Fatalf("second migrate applied %v, %v", applied, err)
	}
}

func TestDeliveryClaims(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := db.w.Exec(`INSERT INTO organizations (id, name, slug, plan, created_at, updated_at) VALUES ('org_a', 'A', 'a', 'free', '', '')`); err != nil {
		t.Fatal(err)
	}
	w := &app.Webhook{ID: "whk_1", OrganizationID: "org_a", URL: "http://r", Events: []string{"*"}, Active: true, SealedSecret: []byte{1}, CreatedAt: t0, UpdatedAt: t0}
	if err := db.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	d := func(id, event string, at time.Time, redelivery *string) app.Delivery {
		return app.Delivery{ID: id, OrganizationID: "org_a", WebhookID: "whk_1", EventID: event, Event: "vendor.created", Status: app.DeliveryPending,
			NextAttemptAt: &at, RedeliveryOf: redelivery, ExpiresAt: at.Add(24 * time.Hour), CreatedAt: at, UpdatedAt: at, Payload: []byte(`{}`)}
	}
	ds := []app.Delivery{d("dlv_1", "evt_1", t0, nil), d("dlv_2", "evt_2", t0.Add(time.Minute), nil)}
	if err := db.InsertDeliveries(ctx, ds); err != nil {
		t.Fatal(err)
	}
	// The dispatcher running twice over an event adds nothing; a redelivery is a new row.
	if err := db.InsertDeliveries(ctx, []app.Delivery{d("dlv_3", "evt_1", t0, nil), d("dlv_4", "evt_1", t0, app.Ptr("dlv_1"))}); err != nil {
		t.Fatal(err)
	}
	l, _ := db.ListDeliveries(ctx, "org_a", "whk_1", app.DeliveryFilter{Page: app.Page{Page: 1, PerPage: 10}})
	if l.Total != 3 {
		t.Fatalf("%d deliveries, want 3", l.Total)
	}
	claim := func(now time.Time, token string) []app.ClaimedDelivery {
		var cs []app.ClaimedDelivery
		err := db.InTx(ctx, func(ctx context.Context) error {
			var err error
			cs, err = db.ClaimDeliveries(ctx, now, now.Add(30*time.Second), token, 10)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	if cs := claim(t0, "a"); len(cs) != 2 || cs[0].URL != "http://r" { // dlv_1 and its redelivery; dlv_2 not yet due
		t.Fatalf("claimed %+v", cs)
	}
	if cs := claim(t0.Add(10*time.Second), "b"); len(cs) != 0 {
		t.Fatalf("claimed deliveries held by a live lease: %+v", cs)
	}
	next, _ := db.NextDeliveryDue(ctx)
	if next == nil || !next.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("next due %v", next)
	}
	// The lease ran out (the worker died): another claim takes them, and the
	// first worker's late result is refused.
	cs := claim(t0.Add(2*time.Minute), "c")
	if len(cs) != 3 {
		t.Fatalf("after the lease: %+v", cs)
	}
	at := app.DeliveryAttempt{DeliveryID: "dlv_1", OrganizationID: "org_a", Attempt: 1, StartedAt: t0}
	st := app.DeliveryState{Status: app.DeliverySucceeded, NextAttemptAt: t0, LastAttemptAt: t0}
	if err := db.FinishAttempt(ctx, "a", at, st); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("stale claim accepted: %v", err)
	}
	if err := db.FinishAttempt(ctx, "c", at, st); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetDelivery(ctx, "org_a", "whk_1", "dlv_1")
	if err != nil || got.Status != app.DeliverySucceeded || got.AttemptCount != 1 || len(got.Attempts) != 1 || got.NextAttemptAt != nil {
		t.Fatalf("finished delivery %+v %v", got, err)
	}
	if _, err := db.GetDelivery(ctx, "org_b", "whk_1", "dlv_1"); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("another organization's delivery: %v", err)
	}
	// A paused subscription's deliveries are held; pings and redeliveries
	// still go. dlv_2 and dlv_4, left claimed by "c", are released: dlv_2 to
	// held, the redelivery dlv_4 to pending.
	w.Active = false
	if err := db.SetWebhookHealth(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := db.InsertDeliveries(ctx, []app.Delivery{d("dlv_5", "evt_5", t0, nil), d("dlv_6", "evt_5", t0, app.Ptr("dlv_5"))}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetDeliveriesHeld(ctx, "org_a", "whk_1", true); err != nil {
		t.Fatal(err)
	}
	if cs := claim(t0.Add(3*time.Minute), "d"); len(cs) != 2 || cs[0].ID != "dlv_4" || cs[1].ID != "dlv_6" || !cs[0].Redelivery {
		t.Fatalf("claimed while paused: %+v", cs)
	}
	held, _ := db.ListDeliveries(ctx, "org_a", "whk_1", app.DeliveryFilter{Status: app.DeliveryHeld, Page: app.Page{Page: 1, PerPage: 10}})
	if held.Total != 2 {
		t.Fatalf("%d held, want 2 (dlv_2, dlv_5)", held.Total)
	}
	if err := db.SetDeliveriesHeld(ctx, "org_a", "whk_1", false); err != nil {
		t.Fatal(err)
	}
	if cs := claim(t0.Add(4*time.Minute), "e"); len(cs) != 4 { // the two held, and the two whose lease ran out
		t.Fatalf("after resume: %+v", cs)
	}
	// Deleting the subscription removes its deliveries and attempts.
	if err := db.DeleteWebhook(ctx, "org_a", "whk_1"); err != nil {
		t.Fatal(err)
	}
	var n int
	_ = db.r.QueryRow(`SELECT (SELECT count(*) FROM webhook_deliveries) + (SELECT count(*) FROM webhook_delivery_attempts)`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d rows left after delete", n)
	}
}

func TestJobRunSlots(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	ctx := context.Background()
	slot := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	id, ok, err := db.BeginJobRun(ctx, "j", slot, slot)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, ok, _ := db.BeginJobRun(ctx, "j", slot, slot); ok {
		t.Fatal("running slot started again")
	}
	if err := db.EndJobRun(ctx, id, app.JobSucceeded, slot, time.Second, ""); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.BeginJobRun(ctx, "j", slot, slot); ok {
		t.Fatal("finished slot started again")
	}
	if _, ok, _ := db.BeginJobRun(ctx, "j", slot.Add(time.Hour), slot); !ok {
		t.Fatal("next slot did not start")
	}
	if n, _ := db.InterruptJobRuns(ctx); n != 1 {
		t.Fatalf("interrupted %d", n)
	}
	if _, ok, _ := db.BeginJobRun(ctx, "j", slot.Add(time.Hour), slot); !ok {
		t.Fatal("interrupted slot did not start again")
	}
	runs, _ := db.RecentJobRuns(ctx, "j", 5)
	if len(runs) != 2 || runs[0].Tries != 2 || runs[0].Status != app.JobRunning || runs[1].DurationMS == nil || *runs[1].DurationMS != 1000 {
		t.Fatalf("runs %+v", runs)
	}
}

// TestPurgeEvents: only events that are both older than the cut-off and
// already fanned out go, in batches, and the newest event always stays.
func TestPurgeEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	old, recent := now.AddDate(0, 0, -60), now.AddDate(0, 0, -1)
	cut := now.AddDate(0, 0, -30)
	seed := func(t *testing.T, olds, recents int) *DB {
		t.Helper()
		db := migrated(t)
		tx, err := db.w.Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		for i := range olds + recents {
			at := old.Add(time.Duration(i) * time.Second)
			if i >= olds {
				at = recent
			}
			if _, err := tx.Exec(`INSERT INTO events (id, organization_id, type, payload, occurred_at) VALUES (?, 'org_1', 'vendor.created', '{}', ?)`,
				fmt.Sprintf("evt_%06d", i), ts(at)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		return db
	}
	left := func(t *testing.T, db *DB) (n int, first int64) {
		t.Helper()
		if err := db.w.QueryRow(`SELECT count(*), coalesce(min(seq), 0) FROM events`).Scan(&n, &first); err != nil {
			t.Fatal(err)
		}
		return n, first
	}
	cases := []struct {
		name          string
		olds, recents int
		cursor        int64
		notifyCursor  int64 // the notify job's cursor; 0: at cursor
		wantDeleted   int64
		wantLeft      int
		wantFirstSeq  int64
	}{
		{"fanned out and old", 10, 2, 12, 0, 10, 2, 11},
		{"not yet fanned out stays", 10, 2, 5, 0, 5, 7, 6},
		{"not yet notified stays", 10, 2, 12, 4, 4, 8, 5},
		{"nothing fanned out", 10, 0, 0, 0, 0, 10, 1},
		{"the newest stays", 10, 0, 10, 0, 9, 1, 10},
		{"recent stays", 0, 5, 5, 0, 0, 5, 1},
		{"several batches", 2*purgeEventsBatch + 7, 1, 2*purgeEventsBatch + 8, 0, 2*purgeEventsBatch + 7, 1, 2*purgeEventsBatch + 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := seed(t, c.olds, c.recents)
			if err := db.SetWebhookCursor(ctx, c.cursor); err != nil {
				t.Fatal(err)
			}
			nc := c.notifyCursor
			if nc == 0 {
				nc = c.cursor
			}
			if err := db.SetNotifyCursor(ctx, nc); err != nil {
				t.Fatal(err)
			}
			n, err := db.PurgeEvents(ctx, cut)
			if err != nil {
				t.Fatal(err)
			}
			if n != c.wantDeleted {
				t.Errorf("deleted %d, want %d", n, c.wantDeleted)
			}
			if l, first := left(t, db); l != c.wantLeft || first != c.wantFirstSeq {
				t.Errorf("left %d from seq %d, want %d from %d", l, first, c.wantLeft, c.wantFirstSeq)
			}
			// A second run finds nothing more to do.
			if n, err := db.PurgeEvents(ctx, cut); err != nil || n != 0 {
				t.Errorf("second run: %d, %v", n, err)
			}
		})
	}
}
