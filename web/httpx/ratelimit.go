package httpx

import (
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"golang.org/x/time/rate"
)

// anonymousRate applies to requests without a credential, per address.
const (
	anonymousPerMinute = 300
	anonymousBurst     = 600
	limiterPruneSize   = 50_000
)

// The rate-limit headers as the spec spells them.
const (
	hdrLimit            = "X-RateLimit-Limit"
	HeaderRateRemaining = "X-RateLimit-Remaining"
	hdrReset            = "X-RateLimit-Reset"
)

type bucket struct {
	lim       *rate.Limiter
	perMinute int
	burst     int
	lastSeen  time.Time
}

// rateLimiter keeps one token bucket per credential (or address).
type rateLimiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	now     func() time.Time
}

func newRateLimiter(now func() time.Time) *rateLimiter {
	return &rateLimiter{buckets: map[string]*bucket{}, now: now}
}

// take consumes a token and reports the header values.
func (l *rateLimiter) take(id string, perMinute, burst int) (ok bool, remaining int, reset int64, retryAfter int) {
	now := l.now()
	l.mu.Lock()
	b := l.buckets[id]
	if b == nil || b.perMinute != perMinute || b.burst != burst {
		if len(l.buckets) >= limiterPruneSize {
			l.prune(now)
		}
		b = &bucket{lim: rate.NewLimiter(rate.Limit(float64(perMinute)/60), burst), perMinute: perMinute, burst: burst}
		l.buckets[id] = b
	}
	b.lastSeen = now
	ok = b.lim.AllowN(now, 1)
	tokens := b.lim.TokensAt(now)
	l.mu.Unlock()
	remaining, reset, retryAfter = rateHeaders(now, ok, tokens, perMinute, burst)
	return ok, remaining, reset, retryAfter
}

// rateHeaders are the header values of a bucket left with tokens at now
// after a request that took one (ok) or found none.
func rateHeaders(now time.Time, ok bool, tokens float64, perMinute, burst int) (remaining int, reset int64, retryAfter int) {
	perSec := float64(perMinute) / 60
	remaining = int(math.Max(0, math.Floor(tokens)))
	reset = now.Add(time.Duration((float64(burst) - tokens) / perSec * float64(time.Second))).Unix()
	if reset < now.Unix() {
		reset = now.Unix()
	}
	if !ok {
		retryAfter = int(math.Ceil((1 - tokens) / perSec))
		if retryAfter < 1 {
			retryAfter = 1
		}
	}
	return remaining, reset, retryAfter
}

// takeShared takes the token from the bucket every replica shares in the
// database (app.SharedRateLimits); if the database does not answer, the
// process's own bucket decides, so an outage of the buckets never refuses
// or frees every request.
func (s *Server) takeShared(r *http.Request, id string, perMinute, burst int) (ok bool, remaining int, reset int64, retryAfter int) {
	now := s.limiter.now()
	ok, tokens, err := s.app.TakeRateToken(r.Context(), id, perMinute, burst, now)
	if err != nil {
		s.log.Warn("shared rate limit unavailable; this process's limit applies", slog.Any("error", err))
		return s.limiter.take(id, perMinute, burst)
	}
	remaining, reset, retryAfter = rateHeaders(now, ok, tokens, perMinute, burst)
	return ok, remaining, reset, retryAfter
}

// prune drops buckets idle long enough to be full again.
func (l *rateLimiter) prune(now time.Time) {
	for id, b := range l.buckets {
		if now.Sub(b.lastSeen) > 10*time.Minute {
			delete(l.buckets, id)
		}
	}
}

// limit applies the principal's plan limit (or the anonymous one), sets the
// three headers, and reports whether the request may proceed.
func (s *Server) Limit(w http.ResponseWriter, r *http.Request, p *app.Principal) bool {
	id, perMinute, burst := "ip:"+s.ClientAddress(r), anonymousPerMinute, anonymousBurst
	if p != nil {
		l := s.app.Limits(p.Plan)
		perMinute, burst = l.RatePerMinute, l.Burst
		switch {
		case p.KeyID != "":
			id = "key:" + p.KeyID
		case p.ClientID != "":
			id = "oauth:" + p.ClientID + ":" + p.UserID
		default:
			id = "user:" + p.UserID
		}
	}
	var ok bool
	var remaining, retry int
	var reset int64
	if s.sharedLimits {
		ok, remaining, reset, retry = s.takeShared(r, id, perMinute, burst)
	} else {
		ok, remaining, reset, retry = s.limiter.take(id, perMinute, burst)
	}
	// Set directly, not with Header.Set, to keep the documented spelling
	// on the wire (Set would send X-Ratelimit-Limit).
	h := w.Header()
	h[hdrLimit] = []string{strconv.Itoa(perMinute)}
	h[HeaderRateRemaining] = []string{strconv.Itoa(remaining)}
	h[hdrReset] = []string{strconv.FormatInt(reset, 10)}
	if !ok {
		h.Set("Retry-After", strconv.Itoa(retry))
		s.writeError(w, r, &HTTPError{Status: http.StatusTooManyRequests, Code: "rate_limited",
			Msg: "rate limit exceeded; retry after " + strconv.Itoa(retry) + " seconds", Details: map[string]any{"retryAfter": retry, "limit": perMinute}})
	}
	return ok
}

// clientAddress is the client's address for anonymous rate limits and
// what public forms record: the peer, or behind a reverse proxy listed in
// trusted_proxies the address it forwarded (the rule sign-in throttling
// uses).
func (s *Server) ClientAddress(r *http.Request) string {
	if s.Sess != nil {
		return s.Sess.ClientAddress(r)
	}
	return ClientIP(r)
}

// clientIP is the TCP peer's address.
func ClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
