// Package outbound is the one HTTP client every integration provider uses:
// connect and overall timeouts, retries with backoff for idempotent
// requests (honouring Retry-After up to a bound), the appliance's network
// policy checked on every address actually dialed, an optional HTTP(S)
// proxy, and capped response reads.
package outbound

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// Options configures a client. Zero values take the defaults.
type Options struct {
	// Policy decides which addresses may be dialed (default: the
	// appliance's default policy, refusing link-local and metadata).
	Policy *app.NetworkPolicy
	// Proxy is an http:// or https:// proxy URL; every request goes
	// through it. The policy then applies to the proxy's address, and to
	// a target given as an IP literal.
	Proxy string
	// ConnectTimeout bounds dialing and the TLS handshake (default 10 s).
	ConnectTimeout time.Duration
	// Timeout bounds one attempt, body included (default 30 s).
	Timeout time.Duration
	// MaxRetries is how many times an idempotent request is retried after
	// a 429, 502, 503 or 504 answer or a network error (default 3).
	MaxRetries int
	// RetryBase is the first backoff, doubled each retry with jitter
	// (default 500 ms).
	RetryBase time.Duration
	// MaxRetryAfter is the longest Retry-After the client waits for; a
	// longer one ends the retries with an error saying so (default 60 s).
	MaxRetryAfter time.Duration
	// TLSConfig, when set, is the base TLS configuration (tests add their
	// CA here).
	TLSConfig *tls.Config
	// sleep waits between attempts (tests).
	sleep func(ctx context.Context, d time.Duration) error
}

// DeniedError is a connection the network policy refused.
type DeniedError = app.DeniedAddressError

// RetryAfterError is a server asking to wait longer than the bound.
type RetryAfterError struct {
	Status int
	Wait   time.Duration
	Max    time.Duration
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("the server answered %d and asked to retry after %s, longer than the %s the appliance waits", e.Status, e.Wait.Round(time.Second), e.Max)
}

// New returns the outbound client as an *http.Client, which providers take
// in their constructors. Its transport applies the policy, proxy, timeouts
// and retries.
func New(o Options) (*http.Client, error) {
	if o.Policy == nil {
		o.Policy = app.DefaultNetworkPolicy()
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxRetries < 0 {
		o.MaxRetries = 0
	} else if o.MaxRetries == 0 {
		o.MaxRetries = 3
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 500 * time.Millisecond
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = 60 * time.Second
	}
	if o.sleep == nil {
		o.sleep = sleepCtx
	}
	policy := o.Policy
	dialer := &net.Dialer{
		Timeout:   o.ConnectTimeout,
		KeepAlive: 30 * time.Second,
		Control:   policy.DialControl("integrations.allow_networks"),
	}
	tr := &http.Transport{
		Proxy:                 nil, // never from the environment: only the configured proxy
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   o.ConnectTimeout,
		ResponseHeaderTimeout: o.Timeout,
		ExpectContinueTimeout: time.Second,
	}
	if o.TLSConfig != nil {
		tr.TLSClientConfig = o.TLSConfig.Clone()
	}
	if o.Proxy != "" {
		u, err := url.Parse(o.Proxy)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("integrations.proxy %q must be an http:// or https:// URL", o.Proxy)
		}
		tr.Proxy = http.ProxyURL(u)
	}
	rt := &retryTransport{next: tr, o: o}
	return &http.Client{
		Transport: rt,
		// Redirects are followed (APIs redirect renamed resources), at most
		// five, each target checked against the policy when dialed.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			return nil
		},
	}, nil
}

// DialContext returns the policy-checking dialer of a client New built, for
// providers that speak another protocol than HTTP over the same policy (a
// TLS handshake probe). For any other client it returns a dialer under the
// default policy.
func DialContext(c *http.Client) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if rt, ok := c.Transport.(*retryTransport); ok {
		if tr, ok := rt.next.(*http.Transport); ok && tr.DialContext != nil {
			return tr.DialContext
		}
	}
	o, _ := New(Options{})
	return DialContext(o)
}

// Dialer returns a dialer under the network policy and connect timeout of a
// client New built, for providers that speak another protocol than HTTP
// (LDAP). For any other client it returns a dialer under the default policy.
func Dialer(c *http.Client) *net.Dialer {
	o := Options{Policy: app.DefaultNetworkPolicy(), ConnectTimeout: 10 * time.Second}
	if rt, ok := c.Transport.(*retryTransport); ok {
		o = rt.o
	}
	return &net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second, Control: o.Policy.DialControl("integrations.allow_networks")}
}

// TLSConfig returns the base TLS configuration of a client New built (its
// root CAs), or nil.
func TLSConfig(c *http.Client) *tls.Config {
	if rt, ok := c.Transport.(*retryTransport); ok {
		if tr, ok := rt.next.(*http.Transport); ok && tr.TLSClientConfig != nil {
			return tr.TLSClientConfig.Clone()
		}
	}
	return nil
}

// retryTransport retries idempotent requests and bounds each attempt.
type retryTransport struct {
	next http.RoundTripper
	o    Options
}

func idempotent(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return r.Body == nil || r.GetBody != nil
	}
	return r.Header.Get("Idempotency-Key") != "" && (r.Body == nil || r.GetBody != nil)
}

func retryable(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// Without a proxy the dialer checks every resolved address; with one,
	// the target is resolved by the proxy, so at least a target that is a
	// denied IP literal is refused here.
	if t.o.Proxy != "" {
		if err := t.o.Policy.CheckHost(req.URL.Hostname()); err != nil {
			return nil, err
		}
	}
	attempts := 1
	if idempotent(req) {
		attempts += t.o.MaxRetries
	}
	var lastErr error
	for i := 0; i < attempts; i++ {
		r := req
		if i > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(req.Context())
			r.Body = body
		}
		resp, err := t.attempt(r)
		if err != nil {
			var denied *DeniedError
			if errors.As(err, &denied) || req.Context().Err() != nil {
				return nil, err
			}
			lastErr = err
			if i+1 < attempts {
				if err := t.o.sleep(req.Context(), t.backoff(i)); err != nil {
					return nil, lastErr
				}
			}
			continue
		}
		if !retryable(resp.StatusCode) || i+1 >= attempts {
			return resp, nil
		}
		wait := t.backoff(i)
		if ra, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			if ra > t.o.MaxRetryAfter {
				drain(resp)
				return nil, &RetryAfterError{Status: resp.StatusCode, Wait: ra, Max: t.o.MaxRetryAfter}
			}
			wait = ra
		}
		drain(resp)
		if err := t.o.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
	return nil, lastErr
}

// attempt runs one request under the per-attempt timeout; the timer stops
// when the body is closed.
func (t *retryTransport) attempt(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(r.Context(), t.o.Timeout)
	resp, err := t.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func (t *retryTransport) backoff(i int) time.Duration {
	d := t.o.RetryBase << i
	return d/2 + time.Duration(rand.Int64N(int64(d)))
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// parseRetryAfter reads Retry-After as seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// ErrTooLarge is a response body beyond the cap.
var ErrTooLarge = errors.New("the response is larger than the appliance reads")

// ReadBody reads at most limit bytes of a response body and closes it; a
// longer body is ErrTooLarge.
func ReadBody(resp *http.Response, limit int64) ([]byte, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, limit)
	}
	return b, nil
}
