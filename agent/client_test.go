package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// fakeAppliance answers check-ins with the statuses queued in codes (201
// when empty) and records the bodies it accepted.
type fakeAppliance struct {
	mu       sync.Mutex
	codes    []int
	accepted []CheckIn
	tokens   []string
}

func (f *fakeAppliance) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	code := http.StatusCreated
	if len(f.codes) > 0 {
		code, f.codes = f.codes[0], f.codes[1:]
	}
	f.tokens = append(f.tokens, r.Header.Get("X-Device-Token"))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if code != http.StatusCreated {
		io.WriteString(w, `{"message":"refused"}`)
		return
	}
	var ci CheckIn
	_ = json.NewDecoder(r.Body).Decode(&ci)
	f.accepted = append(f.accepted, ci)
	json.NewEncoder(w).Encode(map[string]any{"isCompliant": true, "failedChecks": []string{}, "nextCheckIn": time.Now().Add(time.Hour)})
}

func testClient(url string) *Client {
	c := NewClient(url, "test")
	c.Sleep = func(context.Context, time.Duration) error { return nil }
	return c
}

func TestDeliverRetriesAndQueues(t *testing.T) {
	f := &fakeAppliance{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st := &State{Server: srv.URL, DeviceID: "dev_1", DeviceToken: "cdt_x"}
	c := testClient(srv.URL)
	ci := func(n int) CheckIn {
		return NewCheckIn("dev_1", "test", []Result{{CheckType: Firewall, Passed: n%2 == 0, Method: "m", Message: "n"}})
	}

	// Two 503s then success: delivered by the retries.
	f.codes = []int{503, 503}
	if _, err := c.Deliver(context.Background(), st, ci(0), log); err != nil || len(st.Pending) != 0 || len(f.accepted) != 1 {
		t.Fatalf("retries: err %v pending %d accepted %d", err, len(st.Pending), len(f.accepted))
	}
	// The appliance is down for a whole run: the check-in stays queued.
	f.codes = []int{502, 502, 502}
	if _, err := c.Deliver(context.Background(), st, ci(1), log); err == nil || len(st.Pending) != 1 {
		t.Fatalf("down: err %v pending %d", err, len(st.Pending))
	}
	// Next run: the queued one goes first, then the new one.
	if _, err := c.Deliver(context.Background(), st, ci(2), log); err != nil || len(st.Pending) != 0 || len(f.accepted) != 3 {
		t.Fatalf("catch-up: err %v pending %d accepted %d", err, len(st.Pending), len(f.accepted))
	}
	if f.accepted[1].Checks[0].Passed || !f.accepted[2].Checks[0].Passed {
		t.Error("queued check-ins were not sent in order")
	}
	// A refused body (400) is dropped, not retried forever.
	f.codes = []int{400}
	if _, err := c.Deliver(context.Background(), st, ci(3), log); err != nil || len(st.Pending) != 0 {
		t.Fatalf("400: err %v pending %d", err, len(st.Pending))
	}
	// The queue keeps only the newest maxPending.
	f.codes = make([]int, 3*(maxPending+2))
	for i := range f.codes {
		f.codes[i] = 503
	}
	for i := 0; i < maxPending+2; i++ {
		c.Deliver(context.Background(), st, ci(i), log)
	}
	if len(st.Pending) != maxPending {
		t.Fatalf("queue length %d, want %d", len(st.Pending), maxPending)
	}
	// 401 and 404 stop the agent with a clear error.
	f.codes = []int{401}
	if _, err := c.Deliver(context.Background(), st, ci(0), log); !errors.Is(err, ErrRevoked) {
		t.Fatalf("401: %v", err)
	}
	f.codes = []int{404}
	if _, err := c.Deliver(context.Background(), st, ci(0), log); !errors.Is(err, ErrDeviceGone) {
		t.Fatalf("404: %v", err)
	}
	for _, tok := range f.tokens {
		if tok != "cdt_x" {
			t.Fatalf("token header %q", tok)
		}
	}
}

func TestStateFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadState(dir); !errors.Is(err, ErrNotEnrolled) {
		t.Fatalf("empty dir: %v", err)
	}
	st := &State{Server: "http://x", DeviceID: "dev_1", DeviceToken: "cdt_secret"}
	if err := st.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := LoadState(dir)
	if err != nil || got.DeviceToken != "cdt_secret" {
		t.Fatalf("load: %v %+v", err, got)
	}
}
