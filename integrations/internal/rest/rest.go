// Package rest holds what the directory adapters share to call a JSON API
// over the appliance's outbound client: a bounded read of each response,
// waits that honour ctx, the parsing of Retry-After, and the checks that
// keep a credential on the host it was issued for.
package rest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxBody bounds one response body. A page of 999 Graph users or 500
// Google users with every field is well under 4 MiB.
const MaxBody = 16 << 20

// MaxPages bounds one listing: 10,000 pages of the smallest page size
// (Okta's 200) is two million users. A provider that keeps answering with
// a next page beyond it is looping, and the listing fails.
const MaxPages = 10000

// ErrTooLarge is returned for a body over the limit.
var ErrTooLarge = errors.New("the response is larger than the limit")

// Response is a read response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends req and reads at most limit bytes of the body. A transport
// error is returned without the request's URL, which may hold a query the
// caller does not want in a message; what is left names the cause
// ("connection refused", "certificate signed by unknown authority").
func Do(client *http.Client, req *http.Request, limit int64) (*Response, error) {
	res, err := client.Do(req)
	if err != nil {
		if cerr := req.Context().Err(); cerr != nil {
			return nil, cerr
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("cannot reach %s: %w", req.URL.Host, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		if cerr := req.Context().Err(); cerr != nil {
			return nil, cerr
		}
		return nil, fmt.Errorf("reading the answer of %s failed: %w", req.URL.Host, err)
	}
	// A body that ended as the run's context did (a server that gave up
	// when the caller went) is not an answer.
	if cerr := req.Context().Err(); cerr != nil {
		return nil, cerr
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%s answered more than %d MiB: %w", req.URL.Host, limit>>20, ErrTooLarge)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: body}, nil
}

// Wait sleeps d, or returns ctx's error when it ends first.
func Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
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

// RetryAfter is the wait a Retry-After header asks for (delay-seconds or
// an HTTP date); ok is false when there is none or it cannot be read.
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// SameOrigin reports whether next (a next-page link the provider gave) is
// on the scheme and host of base, so a credential sent with it stays with
// the provider it belongs to.
func SameOrigin(base *url.URL, next string) (*url.URL, bool) {
	u, err := url.Parse(next)
	if err != nil || !u.IsAbs() {
		return nil, false
	}
	return u, strings.EqualFold(u.Scheme, base.Scheme) && strings.EqualFold(u.Host, base.Host)
}

// Scrub removes every non-empty secret from s; a provider's message is
// shown to people and must never echo a credential back.
func Scrub(s string, secrets ...string) string {
	for _, sec := range secrets {
		if sec = strings.TrimSpace(sec); len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}

// Clip shortens a provider's message to n bytes at a rune boundary.
func Clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
