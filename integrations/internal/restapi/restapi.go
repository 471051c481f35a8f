// Package restapi is the small JSON-over-HTTP client the source-control
// providers (integrations/github, integrations/gitlab) share: bounded
// responses, bounded pagination (Link rel="next" and X-Next-Page), the
// providers' error bodies, rate limits that are waited out only while the
// run's bound allows, and a token that never reaches an error message.
//
// It sends through the *http.Client main hands the provider (the
// appliance's outbound client, which applies timeouts, the network policy
// and simple Retry-After retries); it must still behave when that client
// hands a 429 back, so rate limits are handled here too.
package restapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults for the bounds of a Client whose fields are zero.
const (
	DefaultMaxBody  = 8 << 20 // one response
	DefaultMaxPages = 100     // one listing
	DefaultMaxItems = 10000   // one listing
	DefaultMaxWait  = 2 * time.Minute
	maxRetries      = 3
	messageMax      = 300
)

// Client calls one provider's REST API.
type Client struct {
	HTTP *http.Client
	// Base is the API root every path is relative to
	// ("https://api.github.com", "https://gitlab.example.com/api/v4").
	Base *url.URL
	// Authorize sets the credential on a request.
	Authorize func(*http.Request)
	// Secret is redacted from every message built from a response.
	Secret string
	// Header is added to every request (Accept, API version).
	Header http.Header
	// MaxBody caps one response body; MaxPages and MaxItems cap one listing.
	MaxBody  int64
	MaxPages int
	MaxItems int
	// MaxWait is the longest rate-limit wait the client sits out before
	// retrying; a longer one ends the call with a *RateLimitError. The
	// context's deadline bounds it further.
	MaxWait time.Duration
	// Now and Sleep are the clock (tests replace them).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error

	mu      sync.Mutex
	limited *RateLimitError // a limit not to be waited out: later calls fail at once
}

// APIError is a non-2xx answer that is not a rate limit.
type APIError struct {
	Method  string
	Path    string // without query, never carrying the credential
	Status  int
	Message string // the provider's message, redacted and shortened
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Status, http.StatusText(e.Status), e.Message)
}

// RateLimitError is a rate limit that outlasts what the call may wait.
type RateLimitError struct {
	Path    string
	Status  int
	Reset   time.Time
	Message string
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limited by the provider on %s (%d: %s); the limit resets at %s",
		e.Path, e.Status, e.Message, e.Reset.UTC().Format(time.RFC3339))
}

// TooLargeError is a response body above MaxBody.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("GET %s: response larger than %d bytes, not read", e.Path, e.Limit)
}

// Status returns the HTTP status of an *APIError in err's chain, or 0.
func Status(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// Message returns the provider's message of an *APIError in err's chain.
func Message(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Message
	}
	return ""
}

// Response is a read answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	URL    *url.URL
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Resolve turns a path relative to Base ("/orgs/acme?per_page=100") into
// an absolute URL.
func (c *Client) Resolve(path string) (*url.URL, error) {
	rel, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("bad API path %q: %w", path, err)
	}
	u := *c.Base
	u.Path = strings.TrimSuffix(c.Base.Path, "/") + rel.Path
	if rel.RawPath != "" {
		u.RawPath = strings.TrimSuffix(c.Base.EscapedPath(), "/") + rel.RawPath
	} else {
		u.RawPath = ""
	}
	u.RawQuery = rel.RawQuery
	return &u, nil
}

// Get fetches path; any status in ok (2xx when ok is empty) is an answer,
// anything else an error.
func (c *Client) Get(ctx context.Context, path string, ok ...int) (*Response, error) {
	u, err := c.Resolve(path)
	if err != nil {
		return nil, err
	}
	return c.get(ctx, u, ok)
}

// GetJSON fetches path and decodes its JSON body into v.
func (c *Client) GetJSON(ctx context.Context, path string, v any) (*Response, error) {
	resp, err := c.Get(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(resp.Body, v); err != nil {
		return resp, fmt.Errorf("GET %s: unexpected answer (not the JSON expected): %v", resp.URL.Path, err)
	}
	return resp, nil
}

// sameOrigin reports whether u may receive the credential: only the API's
// own scheme and host do, so a next-page link elsewhere is refused.
func (c *Client) sameOrigin(u *url.URL) bool {
	return strings.EqualFold(u.Scheme, c.Base.Scheme) && strings.EqualFold(u.Host, c.Base.Host)
}

func (c *Client) get(ctx context.Context, u *url.URL, ok []int) (*Response, error) {
	if !c.sameOrigin(u) {
		return nil, fmt.Errorf("refused to follow %s://%s%s: not the configured API host", u.Scheme, u.Host, u.Path)
	}
	c.mu.Lock()
	limited := c.limited
	c.mu.Unlock()
	if limited != nil && c.now().Before(limited.Reset) {
		return nil, limited
	}
	for attempt := 0; ; attempt++ {
		resp, err := c.once(ctx, u)
		if err != nil {
			return nil, err
		}
		if reset, limited := c.rateLimited(resp); limited {
			wait := reset.Sub(c.now())
			if wait < 0 {
				wait = 0
			}
			msg := c.message(resp)
			if attempt >= maxRetries || wait > c.maxWait() || !fitsDeadline(ctx, c.now(), wait) {
				rl := &RateLimitError{Path: u.Path, Status: resp.Status, Reset: reset, Message: msg}
				c.mu.Lock()
				c.limited = rl
				c.mu.Unlock()
				return nil, rl
			}
			if err := c.sleep(ctx, wait+time.Second); err != nil {
				return nil, fmt.Errorf("GET %s: waiting out a rate limit: %w", u.Path, err)
			}
			continue
		}
		if accepted(resp.Status, ok) {
			return resp, nil
		}
		return resp, &APIError{Method: http.MethodGet, Path: u.Path, Status: resp.Status, Message: c.message(resp)}
	}
}

func accepted(status int, ok []int) bool {
	if len(ok) == 0 {
		return status >= 200 && status < 300
	}
	for _, s := range ok {
		if s == status {
			return true
		}
	}
	return false
}

func fitsDeadline(ctx context.Context, now time.Time, wait time.Duration) bool {
	dl, ok := ctx.Deadline()
	return !ok || now.Add(wait+time.Second).Before(dl)
}

func (c *Client) maxWait() time.Duration {
	if c.MaxWait > 0 {
		return c.MaxWait
	}
	return DefaultMaxWait
}

func (c *Client) maxBody() int64 {
	if c.MaxBody > 0 {
		return c.MaxBody
	}
	return DefaultMaxBody
}

// once sends one GET and reads at most MaxBody bytes of its answer.
func (c *Client) once(ctx context.Context, u *url.URL) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u.Path, err)
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if c.Authorize != nil {
		c.Authorize(req)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %s", u.Path, c.redact(transportMessage(err)))
	}
	defer res.Body.Close()
	limit := c.maxBody()
	body, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: reading the answer: %s", u.Path, c.redact(transportMessage(err)))
	}
	if int64(len(body)) > limit {
		return nil, &TooLargeError{Path: u.Path, Limit: limit}
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: body, URL: u}, nil
}

// transportMessage is a transport error without the request URL (which
// url.Error repeats, query and all).
func transportMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out waiting for the provider (" + err.Error() + ")"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		return "timed out waiting for the provider (" + err.Error() + ")"
	}
	return err.Error()
}

// rateLimited recognises the providers' rate-limit answers: 429; GitHub's
// 403 with Retry-After, x-ratelimit-remaining: 0 or a secondary-limit
// message. reset is when to try again.
func (c *Client) rateLimited(r *Response) (reset time.Time, ok bool) {
	switch {
	case r.Status == http.StatusTooManyRequests:
	case r.Status == http.StatusForbidden:
		if r.Header.Get("Retry-After") == "" && r.Header.Get("X-Ratelimit-Remaining") != "0" &&
			!strings.Contains(strings.ToLower(string(r.Body)), "secondary rate limit") {
			return time.Time{}, false
		}
	default:
		return time.Time{}, false
	}
	now := c.now()
	if ra := strings.TrimSpace(r.Header.Get("Retry-After")); ra != "" {
		if secs, err := strconv.Atoi(ra); err == nil && secs >= 0 {
			return now.Add(time.Duration(secs) * time.Second), true
		}
		if t, err := http.ParseTime(ra); err == nil {
			return t, true
		}
	}
	for _, h := range []string{"X-Ratelimit-Reset", "Ratelimit-Reset"} {
		if v := r.Header.Get(h); v != "" {
			if epoch, err := strconv.ParseInt(v, 10, 64); err == nil {
				if epoch > 1e9 {
					return time.Unix(epoch, 0), true
				}
				return now.Add(time.Duration(epoch) * time.Second), true
			}
		}
	}
	// GitHub asks to wait at least a minute when it names no time.
	return now.Add(time.Minute), true
}

// message extracts the provider's error text: {"message": "..."} (GitHub,
// GitLab; GitLab's may be an object of field errors), {"error": "...",
// "error_description": "..."} (GitLab's OAuth errors), else the start of
// a text body, else the status text.
func (c *Client) message(r *Response) string {
	var body struct {
		Message          json.RawMessage `json:"message"`
		Error            json.RawMessage `json:"error"`
		ErrorDescription string          `json:"error_description"`
	}
	var msg string
	if json.Unmarshal(r.Body, &body) == nil {
		msg = rawText(body.Message)
		if e := rawText(body.Error); e != "" {
			if msg != "" {
				msg += ": "
			}
			msg += e
		}
		if body.ErrorDescription != "" {
			msg += ": " + body.ErrorDescription
		}
	} else if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/plain") || ct == "" {
		msg = strings.TrimSpace(string(r.Body))
	}
	if msg == "" {
		msg = http.StatusText(r.Status)
	}
	return c.redact(shorten(msg))
}

func rawText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

var spaces = regexp.MustCompile(`\s+`)

func shorten(s string) string {
	s = spaces.ReplaceAllString(strings.ToValidUTF8(s, "?"), " ")
	if len(s) > messageMax {
		s = strings.ToValidUTF8(s[:messageMax], "") + "…"
	}
	return s
}

func (c *Client) redact(s string) string {
	if c.Secret == "" {
		return s
	}
	return strings.ReplaceAll(s, c.Secret, "[redacted]")
}

// Page is one page of a listing.
type Page struct {
	Number int
	Body   []byte
}

// ListResult says how a listing ended.
type ListResult struct {
	Pages int
	Items int
	// Truncated is set when a cap stopped the listing early; Reason says
	// which.
	Truncated bool
	Reason    string
}

// List fetches path and every following page (Link rel="next", else
// X-Next-Page), decoding each page's JSON array into items and calling fn
// with them. It stops at MaxPages pages or MaxItems items (Truncated), and
// when a next link repeats a page already read (an error: the provider's
// pagination loops).
func List[T any](ctx context.Context, c *Client, path string, fn func([]T) error) (ListResult, error) {
	var res ListResult
	u, err := c.Resolve(path)
	if err != nil {
		return res, err
	}
	maxPages, maxItems := c.MaxPages, c.MaxItems
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	if maxItems <= 0 {
		maxItems = DefaultMaxItems
	}
	seen := map[string]bool{}
	for u != nil {
		if seen[u.String()] {
			return res, fmt.Errorf("GET %s: the provider's pagination loops (page %d links back to a page already read); stopped after %d items", u.Path, res.Pages, res.Items)
		}
		seen[u.String()] = true
		resp, err := c.get(ctx, u, nil)
		if err != nil {
			return res, err
		}
		var items []T
		if err := json.Unmarshal(resp.Body, &items); err != nil {
			return res, fmt.Errorf("GET %s: unexpected answer (not the JSON list expected): %v", u.Path, err)
		}
		res.Pages++
		if left := maxItems - res.Items; len(items) > left {
			items = items[:left]
			res.Truncated, res.Reason = true, fmt.Sprintf("stopped at the cap of %d items", maxItems)
		}
		res.Items += len(items)
		if err := fn(items); err != nil {
			return res, err
		}
		if res.Truncated {
			return res, nil
		}
		next, err := nextPage(resp)
		if err != nil {
			return res, err
		}
		if next != nil && res.Pages >= maxPages {
			res.Truncated, res.Reason = true, fmt.Sprintf("stopped at the cap of %d pages", maxPages)
			return res, nil
		}
		u = next
	}
	return res, nil
}

var linkNext = regexp.MustCompile(`<([^>]*)>\s*;[^,]*\brel="?next"?`)

// nextPage finds the next page's URL: Link rel="next" (GitHub, GitLab,
// keyset pagination), else GitLab's X-Next-Page on the current URL.
func nextPage(r *Response) (*url.URL, error) {
	if m := linkNext.FindStringSubmatch(strings.Join(r.Header.Values("Link"), ",")); m != nil {
		next, err := r.URL.Parse(m[1])
		if err != nil {
			return nil, fmt.Errorf("GET %s: unreadable next-page link: %v", r.URL.Path, err)
		}
		return next, nil
	}
	if np := strings.TrimSpace(r.Header.Get("X-Next-Page")); np != "" {
		if _, err := strconv.Atoi(np); err != nil {
			return nil, fmt.Errorf("GET %s: unreadable X-Next-Page %q", r.URL.Path, np)
		}
		next := *r.URL
		q := next.Query()
		q.Set("page", np)
		next.RawQuery = q.Encode()
		return &next, nil
	}
	return nil, nil
}
