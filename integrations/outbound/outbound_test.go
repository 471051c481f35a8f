package outbound

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// noSleep records the waits instead of sleeping.
type noSleep struct{ waits []time.Duration }

func (n *noSleep) sleep(_ context.Context, d time.Duration) error {
	n.waits = append(n.waits, d)
	return nil
}

func client(t *testing.T, o Options) (*http.Client, *noSleep) {
	t.Helper()
	ns := &noSleep{}
	o.sleep = ns.sleep
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c, ns
}

func TestRetryAfterThenSuccess(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		case 2:
			w.Header().Set("Retry-After", time.Now().Add(3*time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	defer srv.Close()
	c, ns := client(t, Options{})
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadBody(resp, 10)
	if err != nil || string(b) != "ok" || calls.Load() != 3 {
		t.Fatalf("body %q err %v calls %d", b, err, calls.Load())
	}
	if len(ns.waits) != 2 || ns.waits[0] != 7*time.Second || ns.waits[1] < time.Second || ns.waits[1] > 3*time.Second {
		t.Fatalf("waits %v, want 7s then the HTTP date's ~3s", ns.waits)
	}
}

func TestRetryAfterBeyondBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	c, _ := client(t, Options{MaxRetryAfter: time.Minute})
	_, err := c.Get(srv.URL)
	var ra *RetryAfterError
	if !errors.As(err, &ra) || ra.Wait != time.Hour || !strings.Contains(err.Error(), "asked to retry after 1h0m0s") {
		t.Fatalf("err %v", err)
	}
}

func TestRetriesExhaustedAndPostNotRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	c, ns := client(t, Options{MaxRetries: 2})
	resp, err := c.Get(srv.URL)
	if err != nil || resp.StatusCode != http.StatusBadGateway || calls.Load() != 3 || len(ns.waits) != 2 {
		t.Fatalf("resp %v err %v calls %d waits %v", resp, err, calls.Load(), ns.waits)
	}
	resp.Body.Close()
	calls.Store(0)
	resp, err = c.Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil || calls.Load() != 1 {
		t.Fatalf("a POST without Idempotency-Key was retried: calls %d err %v", calls.Load(), err)
	}
	resp.Body.Close()
}

func TestDeniedAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("reached a denied address") }))
	defer srv.Close()
	policy, err := app.NewNetworkPolicy(nil, []string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	c, ns := client(t, Options{Policy: policy})
	_, err = c.Get(srv.URL)
	var denied *DeniedError
	if !errors.As(err, &denied) || len(ns.waits) != 0 {
		t.Fatalf("err %v waits %v", err, ns.waits)
	}
	// The metadata address is refused by default, before any connection.
	c, _ = client(t, Options{ConnectTimeout: time.Second})
	if _, err := c.Get("http://169.254.169.254/latest/meta-data/"); !errors.As(err, &denied) {
		t.Fatalf("metadata address: %v", err)
	}
}

func TestProxyUsed(t *testing.T) {
	var seen atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.URL.String())
		_, _ = w.Write([]byte("via proxy"))
	}))
	defer proxy.Close()
	c, _ := client(t, Options{Proxy: proxy.URL})
	resp, err := c.Get("http://api.example.test/v1/users")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ReadBody(resp, 100)
	if string(b) != "via proxy" || seen.Load() != "http://api.example.test/v1/users" {
		t.Fatalf("body %q, proxy saw %v", b, seen.Load())
	}
	// A denied IP literal target is refused even through the proxy.
	if _, err := c.Get("http://169.254.169.254/"); err == nil {
		t.Fatal("a metadata target went through the proxy")
	}
	if _, err := New(Options{Proxy: "socks5://x"}); err == nil {
		t.Fatal("a socks proxy was accepted")
	}
}

func TestReadBodyCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 2048)))
	}))
	defer srv.Close()
	c, _ := client(t, Options{})
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBody(resp, 1024); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{"0": 0, "120": 2 * time.Minute, "Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second, "Wed, 31 Dec 2025 00:00:00 GMT": 0} {
		if got, ok := parseRetryAfter(in, now); !ok || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, ok, want)
		}
	}
	if _, ok := parseRetryAfter("soon", now); ok {
		t.Error("garbage accepted")
	}
}
