package rest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)
	cases := []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"", 0, false},
		{"7", 7 * time.Second, true},
		{"0", 0, true},
		{"-3", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
	}
	for _, c := range cases {
		h := http.Header{}
		if c.header != "" {
			h.Set("Retry-After", c.header)
		}
		if d, ok := RetryAfter(h, now); d != c.want || ok != c.ok {
			t.Errorf("Retry-After %q = %v %v, want %v %v", c.header, d, ok, c.want, c.ok)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	base, _ := url.Parse("https://graph.microsoft.com")
	for next, want := range map[string]bool{
		"https://graph.microsoft.com/v1.0/users?$skiptoken=x": true,
		"https://GRAPH.microsoft.com/v1.0/users":              true,
		"http://graph.microsoft.com/v1.0/users":               false,
		"https://graph.microsoft.com.evil.example/v1.0/users": false,
		"https://graph.microsoft.com:8443/v1.0/users":         false,
		"/v1.0/users": false,
		"::":          false,
	} {
		if _, ok := SameOrigin(base, next); ok != want {
			t.Errorf("SameOrigin(%q) = %v, want %v", next, ok, want)
		}
	}
}

func TestScrubAndClip(t *testing.T) {
	if got := Scrub("token abcd1234 refused, abcd1234 again", "abcd1234", "", "ab"); got != "token [redacted] refused, [redacted] again" {
		t.Errorf("Scrub = %q", got)
	}
	if got := Clip("  héllo wörld  ", 2); got != "h…" {
		t.Errorf("Clip = %q (must not split a rune)", got)
	}
	if got := Clip("short", 10); got != "short" {
		t.Errorf("Clip = %q", got)
	}
}

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 1000)))
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/?secret=q", nil)
	if res, err := Do(srv.Client(), req, 1000); err != nil || len(res.Body) != 1000 || res.Status != 200 {
		t.Fatalf("at the limit: %v", err)
	}
	req, _ = http.NewRequest(http.MethodGet, srv.URL, nil)
	if _, err := Do(srv.Client(), req, 999); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	addr := srv.Listener.Addr().String()
	srv.Close()
	req, _ = http.NewRequest(http.MethodGet, "http://"+addr+"/?secret=q", nil)
	if _, err := Do(http.DefaultClient, req, 10); err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "cannot reach") {
		t.Fatalf("unreachable: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Wait(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: %v", err)
	}
}
