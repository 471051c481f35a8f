package web

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestAssistantIdempotentMessageDoesNotHoldTheWriter: a model-mode message
// sent with an Idempotency-Key runs outside the idempotency transaction:
// while the model is blocked, another write completes; a retry during the
// call is 409; after it, the retry replays the stored answer without
// asking the model again.
func TestAssistantIdempotentMessageDoesNotHoldTheWriter(t *testing.T) {
	e := newTestServer(t)
	org := e.org("Acme", "enterprise")
	owner := e.key(org, app.RoleOwner)
	asked, release := make(chan struct{}), make(chan struct{})
	f := &fakeModel{steps: []func(http.ResponseWriter){func(w http.ResponseWriter) {
		close(asked)
		<-release
		jsonText("The records do not say.")(w)
	}}}
	withModel(t, e, f, modelLimit)
	rec := e.do("POST", "/v1/assistant-chat/sessions", owner, map[string]any{})
	wantStatus(t, rec, http.StatusCreated)
	path := "/v1/assistant-chat/sessions/" + obj(t, rec)["id"].(string) + "/messages"
	body := map[string]any{"text": "what does our policy say about MFA?"}

	var done atomic.Bool
	first := make(chan *httptest.ResponseRecorder)
	go func() {
		r := e.do("POST", path, owner, body, "Idempotency-Key", "msg-1")
		done.Store(true)
		first <- r
	}()
	<-asked
	// The model is blocked: a write and a retry both answer now.
	wantStatus(t, e.do("POST", "/v1/vendors", owner, map[string]any{"name": "Written while the model thinks"}), http.StatusCreated)
	wantStatus(t, e.do("POST", path, owner, body, "Idempotency-Key", "msg-1"), http.StatusConflict)
	if done.Load() {
		t.Fatal("the message finished before the model answered")
	}
	close(release)
	r1 := <-first
	wantStatus(t, r1, http.StatusCreated)
	r2 := e.do("POST", path, owner, body, "Idempotency-Key", "msg-1")
	wantStatus(t, r2, http.StatusCreated)
	if r2.Header().Get("Idempotent-Replayed") != "true" || r2.Body.String() != r1.Body.String() {
		t.Errorf("retry not replayed: %s %s", r2.Header(), r2.Body)
	}
	if a := answerOf(t, r1); a.Mode != "model" {
		t.Errorf("answer mode = %q", a.Mode)
	}
	f.mu.Lock()
	n := len(f.requests)
	f.mu.Unlock()
	if n != 1 {
		t.Errorf("the model was asked %d times, want 1", n)
	}
	wantStatus(t, e.do("POST", path, owner, map[string]any{"text": "another question"}, "Idempotency-Key", "msg-1"), http.StatusConflict)
}
