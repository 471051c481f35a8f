package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/storage/storagetest"
	"github.com/compliance-appliance/compliance/webhook"
)

// replicaEnvs builds n routers, each with its own connections to one
// fresh PostgreSQL database (n replicas behind a load balancer), sharing
// the clock, the files directory and the secret keys, as the replicas of
// one installation do. Skipped loudly without a PostgreSQL cluster.
func replicaEnvs(t *testing.T, n int) []*testEnv {
	t.Helper()
	url := storagetest.PostgresURL(t)
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)}
	hashKey, blockKey, oauthSecret := bytes.Repeat([]byte{7}, 64), bytes.Repeat([]byte{9}, 32), bytes.Repeat([]byte{5}, 32)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var out []*testEnv
	for i := 0; i < n; i++ {
		db, err := storage.OpenURL(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		files, err := storage.NewFiles(filepath.Join(dir, "files"))
		if err != nil {
			t.Fatal(err)
		}
		a := app.NewWithFiles(db, files, clock.Now, log, app.Config{})
		if err := a.SetWebhookKey(bytes.Repeat([]byte{3}, 32)); err != nil { // the data directory's secrets key
			t.Fatal(err)
		}
		srv, err := New(a, log, Options{Version: "test", Health: db.Ping, Now: clock.Now, MaxUploadBytes: 2 << 20,
			CookieHashKey: hashKey, CookieBlockKey: blockKey, OAuthSecret: oauthSecret})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &testEnv{t: t, db: db, app: a, srv: srv, clock: clock, dir: dir})
	}
	return out
}

// TestReplicasShareTheRateLimit: requests with one key spread over two
// replicas draw from one bucket: the plan's burst in total, then 429 on
// either, with the headers of the shared bucket; the refill is shared too.
func TestReplicasShareTheRateLimit(t *testing.T) {
	rs := replicaEnvs(t, 2)
	org := rs[0].org("Acme", app.PlanFree)
	key := rs[0].key(org, app.RoleAdmin)
	lim := rs[0].app.Limits(app.PlanFree)
	ok := 0
	var last *httptest.ResponseRecorder
	for i := 0; i < lim.Burst+10; i++ {
		rec := rs[i%2].do("GET", "/v1/vendors", key, nil)
		if rec.Code == http.StatusOK {
			ok++
			if got, want := rec.Header()["X-RateLimit-Remaining"][0], strconv.Itoa(lim.Burst-ok); got != want {
				t.Fatalf("request %d on replica %d: remaining %s, want %s", i, i%2, got, want)
			}
			continue
		}
		wantStatus(t, rec, http.StatusTooManyRequests)
		last = rec
	}
	if ok != lim.Burst {
		t.Fatalf("%d requests allowed across the replicas, want the burst %d", ok, lim.Burst)
	}
	if last == nil || last.Header().Get("Retry-After") != strconv.Itoa(60/lim.RatePerMinute) ||
		last.Header()["X-RateLimit-Limit"][0] != strconv.Itoa(lim.RatePerMinute) || last.Header()["X-RateLimit-Remaining"][0] != "0" {
		t.Fatalf("429 headers: %v", last.Header())
	}
	// Ten seconds refill five tokens (30 a minute), shared.
	rs[0].clock.Advance(10 * time.Second)
	ok = 0
	for i := 0; i < 10; i++ {
		if rs[i%2].do("GET", "/v1/vendors", key, nil).Code == http.StatusOK {
			ok++
		}
	}
	if want := lim.RatePerMinute / 6; ok != want {
		t.Fatalf("after 10 s, %d requests allowed, want %d", ok, want)
	}
	// Another key has its own bucket.
	other := rs[1].key(org, app.RoleAdmin)
	wantStatus(t, rs[0].do("GET", "/v1/vendors", other, nil), http.StatusOK)
}

// TestReplicasShareKeysSessionsAndIdempotency: an Idempotency-Key replayed
// on the other replica returns the stored response; a key revoked on one
// replica is refused by the other at once; a session cookie of one
// replica works on the other (same secret keys).
func TestReplicasShareKeysSessionsAndIdempotency(t *testing.T) {
	rs := replicaEnvs(t, 2)
	org := rs[0].org("Acme", app.PlanEnterprise)
	owner := rs[0].key(org, app.RoleOwner)

	first := rs[0].do("POST", "/v1/vendors", owner, map[string]any{"name": "Globex"}, "Idempotency-Key", "create-globex")
	wantStatus(t, first, http.StatusCreated)
	replay := rs[1].do("POST", "/v1/vendors", owner, map[string]any{"name": "Globex"}, "Idempotency-Key", "create-globex")
	wantStatus(t, replay, http.StatusCreated)
	if obj(t, replay)["id"] != obj(t, first)["id"] || replay.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay on the other replica: %s %v", replay.Body.String(), replay.Header())
	}
	list := obj(t, rs[1].do("GET", "/v1/vendors", owner, nil))["data"].([]any)
	if len(list) != 1 {
		t.Fatalf("%d vendors after a replayed create", len(list))
	}

	victim := rs[0].do("POST", "/v1/api-keys", owner, map[string]any{"name": "ci", "role": "admin"})
	wantStatus(t, victim, http.StatusCreated)
	vk, vid := obj(t, victim)["key"].(string), obj(t, victim)["id"].(string)
	wantStatus(t, rs[1].do("GET", "/v1/vendors", vk, nil), http.StatusOK) // cached on replica 1, if it cached
	wantStatus(t, rs[0].do("DELETE", "/v1/api-keys/"+vid, owner, nil), http.StatusNoContent)
	wantError(t, rs[1].do("GET", "/v1/vendors", vk, nil), http.StatusUnauthorized, "unauthorized")

	rs[0].withPassword(org, "owner@acme.test", app.RoleOwner)
	b := rs[0].browser()
	b.signIn("owner@acme.test")
	b2 := rs[1].browser()
	b2.cookies = b.cookies
	rec := b2.get("/vendors")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Globex")
}

// TestReplicaDeliverersSendEachDeliveryOnce: two delivery pools, one per
// replica, run at once over one outbox; every event reaches the receiver,
// and no delivery is sent twice.
func TestReplicaDeliverersSendEachDeliveryOnce(t *testing.T) {
	rs := replicaEnvs(t, 2)
	org := rs[0].org("Acme", app.PlanEnterprise)
	owner := rs[0].key(org, app.RoleOwner)
	rc := newReceiver(t, nil)
	rs[0].createWebhook(owner, rc.srv.URL, "vendor.created")
	const n = 60
	ids := map[string]bool{}
	for i := 0; i < n; i++ {
		rec := rs[i%2].do("POST", "/v1/vendors", owner, map[string]any{"name": fmt.Sprintf("Vendor %d", i)})
		wantStatus(t, rec, http.StatusCreated)
		ids[obj(t, rec)["id"].(string)] = true
	}
	ctx, stop := context.WithCancel(context.Background())
	var ds []*app.Deliverer
	for _, e := range rs {
		d := e.app.NewDeliverer(webhook.NewClient(e.app.NetworkPolicy()), app.DeliveryOptions{PollInterval: 2 * time.Millisecond, Workers: 4})
		d.Start(ctx)
		ds = append(ds, d)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(rc.requests()) < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // a duplicate would arrive now
	stop()
	for _, d := range ds {
		d.Wait()
	}
	deliveries := map[string]int{}
	for _, r := range rc.requests() {
		deliveries[r.hdr.Get("X-Service-Delivery")]++
		var env struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.body, &env); err != nil {
			t.Fatal(err)
		}
		delete(ids, env.Data.ID)
	}
	if len(ids) != 0 {
		t.Fatalf("%d events never delivered", len(ids))
	}
	for id, c := range deliveries {
		if c != 1 {
			t.Errorf("delivery %s sent %d times", id, c)
		}
	}
	if len(deliveries) != n {
		t.Fatalf("%d deliveries, want %d", len(deliveries), n)
	}
}

// TestReplicasAppendOneAuditChain: writes through two replicas at once
// append to one hash chain, which verifies.
func TestReplicasAppendOneAuditChain(t *testing.T) {
	rs := replicaEnvs(t, 2)
	org := rs[0].org("Acme", app.PlanEnterprise)
	owner := rs[0].key(org, app.RoleOwner)
	var wg sync.WaitGroup
	for r := range rs {
		wg.Add(1)
		go func(e *testEnv) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				rec := e.do("POST", "/v1/vendors", owner, map[string]any{"name": fmt.Sprintf("Vendor %d", i)})
				if rec.Code != http.StatusCreated {
					t.Errorf("create: %d %s", rec.Code, rec.Body.String())
				}
			}
		}(rs[r])
	}
	wg.Wait()
	for _, e := range rs {
		v, err := e.app.VerifyAuditChain(e.ctx(org))
		if err != nil {
			t.Fatal(err)
		}
		if !v.OK || v.Checked < 50 || v.FirstBroken != nil {
			t.Fatalf("audit chain after concurrent writes: %+v", v)
		}
	}
}
