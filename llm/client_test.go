package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/llm"
)

func TestNewRefusesBadConfig(t *testing.T) {
	for _, c := range []llm.Config{{BaseURL: "ftp://model.internal/v1", Model: "m"}, {BaseURL: "http://", Model: "m"}, {BaseURL: "http://127.0.0.1:1/v1"}} {
		if _, err := llm.New(c, app.DefaultNetworkPolicy()); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestNetworkPolicyApplies: the cloud metadata address is refused before
// any connection; a loopback endpoint is refused when the policy denies it.
func TestNetworkPolicyApplies(t *testing.T) {
	c, err := llm.New(llm.Config{BaseURL: "http://169.254.169.254/v1", Model: "m"}, app.DefaultNetworkPolicy())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := c.Chat(ctx, app.ModelRequest{}, nil); !errors.Is(err, app.ErrModelUnavailable) || !strings.Contains(err.Error(), "refused to connect") {
		t.Fatalf("metadata address: %v", err)
	}
	called := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called = true }))
	defer srv.Close()
	deny, err := app.NewNetworkPolicy(nil, []string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	c, err = llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "m"}, deny)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(ctx, app.ModelRequest{}, nil); !errors.Is(err, app.ErrModelUnavailable) || called {
		t.Fatalf("denied loopback: %v (called %v)", err, called)
	}
}

// TestNonStreamingReply reads a plain JSON completion and sends the
// bearer token.
func TestNonStreamingReply(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"Forty-two."},"finish_reason":"stop"}]}`))
	}))
	defer srv.Close()
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1/", Model: "m", APIKey: "sk-local", NoStream: true}, app.DefaultNetworkPolicy())
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	r, err := c.Chat(context.Background(), app.ModelRequest{Messages: []app.ModelMessage{{Role: "user", Content: "?"}}}, func(s string) { got.WriteString(s) })
	if err != nil || r.Content != "Forty-two." || r.FinishReason != "stop" || got.String() != "Forty-two." || auth != "Bearer sk-local" {
		t.Fatalf("reply %+v %v %q %q", r, err, got.String(), auth)
	}
}
