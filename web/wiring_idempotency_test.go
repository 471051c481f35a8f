package web

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestIdempotentResponsesSealedAtRest: responses carrying a secret shown
// once (API key, webhook secret, OAuth app secret) are stored encrypted; a
// replay still returns the original response.
func TestIdempotentResponsesSealedAtRest(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	owner := e.key(org, app.RoleOwner)
	cases := []struct {
		name, path, secretField string
		body                    map[string]any
	}{
		{"api key", "/v1/api-keys", "key", map[string]any{"name": "ci", "role": "admin"}},
		{"webhook", "/v1/webhooks", "secret", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"*"}}},
		{"oauth app", "/v1/integrations/oauth-apps", "clientSecret", map[string]any{"name": "Agent", "redirectUris": []string{"https://agent.example.com/cb"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := []string{"Idempotency-Key", "secret-" + c.name}
			first := e.do("POST", c.path, owner, c.body, hdr...)
			wantStatus(t, first, http.StatusCreated)
			secret, _ := obj(t, first)[c.secretField].(string)
			if len(secret) < 16 {
				t.Fatalf("no %s in %s", c.secretField, first.Body.String())
			}
			var stored []byte
			if err := e.raw().QueryRow(`SELECT body FROM idempotency_keys WHERE organization_id = ? AND key = ?`, org, hdr[1]).Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(stored, []byte(secret)) || bytes.Contains(stored, []byte(c.secretField)) || len(stored) == 0 {
				t.Fatalf("stored body holds plaintext: %q", stored)
			}
			again := e.do("POST", c.path, owner, c.body, hdr...)
			wantStatus(t, again, http.StatusCreated)
			if again.Header().Get("Idempotent-Replayed") != "true" || again.Body.String() != first.Body.String() {
				t.Fatalf("replay: %s %s", again.Header().Get("Idempotent-Replayed"), again.Body.String())
			}
		})
	}
	// A sealed body copied to another key does not open (the key is bound).
	if _, err := e.raw().Exec(`INSERT INTO idempotency_keys (organization_id, key, request_hash, status, content_type, body, created_at)
		SELECT organization_id, 'copied', request_hash, status, content_type, body, created_at FROM idempotency_keys WHERE key = 'secret-api key'`); err != nil {
		t.Fatal(err)
	}
	// The retry is refused, never run (a second key would be created).
	rec := e.do("POST", "/v1/api-keys", owner, map[string]any{"name": "ci", "role": "admin"}, "Idempotency-Key", "copied")
	wantError(t, rec, http.StatusConflict, "conflict")
}

// TestIdempotentPlaintextRecordStillReplays: a record stored before bodies
// were sealed still replays.
func TestIdempotentPlaintextRecordStillReplays(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	body := map[string]any{"title": "Legacy"}
	first := e.do("POST", "/v1/findings", key, body, "Idempotency-Key", "legacy")
	wantStatus(t, first, http.StatusCreated)
	if _, err := e.raw().Exec(`UPDATE idempotency_keys SET body = ? WHERE organization_id = ? AND key = 'legacy'`, first.Body.Bytes(), org); err != nil {
		t.Fatal(err)
	}
	again := e.do("POST", "/v1/findings", key, body, "Idempotency-Key", "legacy")
	if again.Code != http.StatusCreated || again.Body.String() != first.Body.String() {
		t.Fatalf("replay of a plaintext record: %d %s", again.Code, again.Body.String())
	}
}

// TestIdempotentReplayRequestID: a replayed body carries the first
// request's requestId, and so does the replay's X-Request-Id header.
func TestIdempotentReplayRequestID(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	bad := map[string]any{"title": " "}
	first := e.do("POST", "/v1/findings", key, bad, "Idempotency-Key", "bad-1")
	wantError(t, first, http.StatusBadRequest, "validation_error")
	id, _ := obj(t, first)["requestId"].(string)
	if first.Header().Get("X-Request-Id") != id {
		t.Fatalf("first: header %s body %s", first.Header().Get("X-Request-Id"), id)
	}
	again := e.do("POST", "/v1/findings", key, bad, "Idempotency-Key", "bad-1")
	if again.Header().Get("Idempotent-Replayed") != "true" || again.Body.String() != first.Body.String() {
		t.Fatalf("replay: %v %s", again.Header(), again.Body.String())
	}
	wantError(t, again, http.StatusBadRequest, "validation_error") // checks requestId == X-Request-Id
	if got := again.Header().Get("X-Request-Id"); got != id {
		t.Errorf("replay X-Request-Id %s, want the body's requestId %s", got, id)
	}
	// A replayed body without requestId keeps the new request's id.
	ok := e.do("POST", "/v1/findings", key, map[string]any{"title": "t"}, "Idempotency-Key", "ok-1")
	rep := e.do("POST", "/v1/findings", key, map[string]any{"title": "t"}, "Idempotency-Key", "ok-1")
	if rep.Header().Get("X-Request-Id") == "" || rep.Header().Get("X-Request-Id") == ok.Header().Get("X-Request-Id") {
		t.Errorf("replay without requestId in its body: header %q", rep.Header().Get("X-Request-Id"))
	}
}
