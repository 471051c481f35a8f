// Package webhook is the outbound HTTP client of webhook deliveries. app
// builds and signs each request; this package sends it under the network
// policy and reports what the receiver answered.
package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/compliance-appliance/compliance/app"
)

// snippetBytes is how much of a receiver's answer an attempt keeps.
const snippetBytes = 1024

// Client sends webhook requests. The network policy is checked on
// the address actually dialed, after name resolution, so a name that
// resolves (or re-resolves) to a denied address is refused: DNS rebinding
// cannot get around it. Proxies from the environment are not used and
// redirects are not followed, for the same reason.
type Client struct {
	client *http.Client
}

var _ app.WebhookSender = (*Client)(nil)

// NewClient returns a client enforcing policy.
func NewClient(policy *app.NetworkPolicy) *Client {
	dialer := &net.Dialer{
		Timeout:   5 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   policy.DialControl("webhooks.allow_networks"),
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &Client{client: &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Send POSTs one delivery. Only a 2xx answer counts as delivered (a
// redirect is a failure: the target must be configured directly).
func (c *Client) Send(ctx context.Context, req app.OutboundRequest) app.OutboundResponse {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return app.OutboundResponse{Err: fmt.Errorf("build request: %w", err)}
	}
	for k, v := range req.Header {
		r.Header.Set(k, v)
	}
	resp, err := c.client.Do(r)
	if err != nil {
		return app.OutboundResponse{Err: sendError(ctx, err)}
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, snippetBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	return app.OutboundResponse{StatusCode: resp.StatusCode, Snippet: strings.ToValidUTF8(string(head), string(utf8.RuneError))}
}

func sendError(ctx context.Context, err error) error {
	var denied *app.DeniedAddressError
	if errors.As(err, &denied) {
		return denied
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return errors.New("timed out waiting for the receiver")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errors.New("timed out waiting for the receiver")
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err // the URL is the subscription's own; no need to repeat it
	}
	return err
}
