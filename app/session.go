package app

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// PrefixSession starts session ids shown to people (the stored id is a hash).
const PrefixSession = "ses"

// Session is a signed-in browser session. ID is the SHA-256 of the random
// token the cookie carries; the token itself is never stored.
type Session struct {
	ID         string
	UserID     string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
	RevokedAt  *time.Time
	IP         string
	UserAgent  string
}

// User is a login identity, independent of organizations.
type User struct {
	ID           string     `json:"id"`
	Email        string     `json:"email"`
	Name         string     `json:"name"`
	LastLoginAt  *time.Time `json:"lastLoginAt"`
	PasswordHash string     `json:"-"`
}

// Membership is one organization a person belongs to, with their role there.
type Membership struct {
	OrganizationID string `json:"id"`
	Name           string `json:"name"`
	Slug           string `json:"slug"`
	Plan           string `json:"plan"`
	Role           Role   `json:"role"`
}

// SessionStore persists login identities' sessions.
type SessionStore interface {
	GetUserByEmail(ctx context.Context, email string) (*User, error)
	GetUser(ctx context.Context, id string) (*User, error)
	// ListMemberships returns the user's active memberships, by organization name.
	ListMemberships(ctx context.Context, userID string) ([]Membership, error)
	SetLastLogin(ctx context.Context, userID string, at time.Time) error
	CreateSession(ctx context.Context, s *Session) error
	GetSession(ctx context.Context, id string) (*Session, error)
	TouchSession(ctx context.Context, id string, at time.Time) error
	RevokeSession(ctx context.Context, id string, at time.Time) error
	RevokeUserSessions(ctx context.Context, userID string, at time.Time) error
	PurgeSessions(ctx context.Context, before, idleBefore time.Time) (int, error)
}

// AuthConfig holds the sign-in settings (config keys session_idle_timeout,
// session_absolute_timeout).
type AuthConfig struct {
	// SessionIdle ends a session not used for this long.
	SessionIdle time.Duration
	// SessionAbsolute ends a session this long after sign-in, used or not.
	SessionAbsolute time.Duration
	// AccessTokenLifetime and RefreshTokenLifetime bound OAuth tokens.
	AccessTokenLifetime  time.Duration
	RefreshTokenLifetime time.Duration
}

// Login throttling: failed attempts drain a token bucket per account and
// one per client address; a success refills the account's bucket.
const (
	accountFailures      = 5                // failed attempts in a row per account
	accountRefill        = time.Minute      // one more attempt per minute after that
	addressFailures      = 20               // failed attempts per address
	addressRefill        = 6 * time.Second  // ten more per minute after that
	touchInterval        = time.Minute      // last_seen_at is written at most this often
	maxConcurrentHashing = 4                // password checks at once (64 MiB each)
	throttlePrune        = 10 * time.Minute // idle buckets are full again by then
	registrationBurst    = 10               // anonymous client registrations per address
	registrationRefill   = time.Minute      // one more per minute after that
)

// authState is the in-process state of sign-in: settings and throttles.
type authState struct {
	once     sync.Once
	mu       sync.Mutex
	cfg      AuthConfig
	accounts map[string]*throttleBucket
	address  map[string]*throttleBucket
	// registrations throttles anonymous OAuth client registration per
	// address.
	registrations map[string]*throttleBucket
	hashing       chan struct{}
	dummyMu       sync.Once
	dummy         string
}

type throttleBucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func (s *authState) init() {
	s.once.Do(func() {
		s.accounts = map[string]*throttleBucket{}
		s.address = map[string]*throttleBucket{}
		s.registrations = map[string]*throttleBucket{}
		s.hashing = make(chan struct{}, maxConcurrentHashing)
		if s.cfg.SessionIdle <= 0 {
			s.cfg.SessionIdle = 8 * time.Hour
		}
		if s.cfg.SessionAbsolute <= 0 {
			s.cfg.SessionAbsolute = 7 * 24 * time.Hour
		}
		if s.cfg.AccessTokenLifetime <= 0 {
			s.cfg.AccessTokenLifetime = time.Hour
		}
		if s.cfg.RefreshTokenLifetime <= 0 {
			s.cfg.RefreshTokenLifetime = 30 * 24 * time.Hour
		}
	})
}

// ConfigureAuth sets the sign-in settings; zero values keep the defaults
// (idle 8 h, absolute 7 days, access tokens 1 h, refresh tokens 30 days).
// Call it before serving.
func (a *App) ConfigureAuth(c AuthConfig) {
	a.auth.mu.Lock()
	a.auth.cfg = c
	a.auth.mu.Unlock()
	a.auth.init()
}

// AuthSettings returns the effective sign-in settings.
func (a *App) AuthSettings() AuthConfig {
	a.auth.init()
	return a.auth.cfg
}

// ThrottleError says a sign-in was refused because of too many failures.
type ThrottleError struct {
	RetryAfter time.Duration
}

func (e *ThrottleError) Error() string {
	return fmt.Sprintf("too many failed sign-in attempts; retry after %d seconds", e.RetrySeconds())
}

// RetrySeconds is RetryAfter rounded up to whole seconds, at least 1.
func (e *ThrottleError) RetrySeconds() int {
	return max(1, int(math.Ceil(e.RetryAfter.Seconds())))
}

func bucketFor(m map[string]*throttleBucket, key string, burst int, every time.Duration, now time.Time) *throttleBucket {
	b := m[key]
	if b == nil {
		if len(m) > 100_000 {
			for k, v := range m {
				if now.Sub(v.seen) > throttlePrune {
					delete(m, k)
				}
			}
		}
		b = &throttleBucket{lim: rate.NewLimiter(rate.Every(every), burst)}
		m[key] = b
	}
	b.seen = now
	return b
}

// throttled returns a ThrottleError when the account or address has no
// attempt left.
func (a *App) throttled(email, ip string, now time.Time) error {
	s := &a.auth
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	var wait time.Duration
	for _, b := range []*throttleBucket{
		bucketFor(s.accounts, email, accountFailures, accountRefill, now),
		bucketFor(s.address, ip, addressFailures, addressRefill, now),
	} {
		if tokens := b.lim.TokensAt(now); tokens < 1 {
			d := time.Duration((1 - tokens) / float64(b.lim.Limit()) * float64(time.Second))
			wait = max(wait, d)
		}
	}
	if wait > 0 {
		return &ThrottleError{RetryAfter: wait}
	}
	return nil
}

// AllowRegistration takes one anonymous OAuth client registration from the
// address's allowance (10, then one a minute), or says how long to wait.
func (a *App) AllowRegistration(ip string) error {
	s := &a.auth
	s.init()
	now := a.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	b := bucketFor(s.registrations, ip, registrationBurst, registrationRefill, now)
	if b.lim.AllowN(now, 1) {
		return nil
	}
	tokens := b.lim.TokensAt(now)
	return &ThrottleError{RetryAfter: time.Duration((1 - tokens) / float64(b.lim.Limit()) * float64(time.Second))}
}

// recordFailure drains one attempt from both buckets.
func (a *App) recordFailure(email, ip string, now time.Time) {
	s := &a.auth
	s.mu.Lock()
	defer s.mu.Unlock()
	bucketFor(s.accounts, email, accountFailures, accountRefill, now).lim.AllowN(now, 1)
	bucketFor(s.address, ip, addressFailures, addressRefill, now).lim.AllowN(now, 1)
}

// recordSuccess forgets the account's failures.
func (a *App) recordSuccess(email string) {
	s := &a.auth
	s.mu.Lock()
	delete(s.accounts, email)
	s.mu.Unlock()
}

// CheckPassword verifies an email and password with throttling, without
// creating a session (the OAuth sign-in page and Login use it). Unknown
// emails cost the same as wrong passwords.
func (a *App) CheckPassword(ctx context.Context, email, password, ip string) (*User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	v := NewValidationError()
	if email == "" {
		v.Add("email", CodeRequired, nil, "email is required")
	}
	if password == "" {
		v.Add("password", CodeRequired, nil, "password is required")
	}
	if len(email) > 320 {
		v.Add("email", CodeTooLong, nil, "email must be at most 320 characters")
	}
	if len(password) > 1024 {
		v.Add("password", CodeTooLong, nil, "password must be at most 1024 characters")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	now := a.now()
	if err := a.throttled(email, ip, now); err != nil {
		return nil, err
	}
	u, err := a.store.GetUserByEmail(ctx, email)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	var hash string
	if u != nil && u.PasswordHash != "" {
		hash = u.PasswordHash
	} else {
		// Unknown people cost as much as wrong passwords.
		a.auth.dummyMu.Do(func() { a.auth.dummy, _ = HashPassword(RandomToken(16)) })
		hash = a.auth.dummy
	}
	select {
	case a.auth.hashing <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	ok := VerifyPassword(hash, password)
	<-a.auth.hashing
	if !ok || u == nil || u.PasswordHash == "" {
		a.recordFailure(email, ip, now)
		return nil, Errorf(ErrUnauthenticated, "wrong email or password")
	}
	a.recordSuccess(email)
	if err := a.passwordAllowed(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// LoginResult is a new session: the cookie token (shown once), the person
// and their organizations.
type LoginResult struct {
	Token         string
	Session       *Session
	User          *User
	Organizations []Membership
}

// Login checks the password and opens a session.
func (a *App) Login(ctx context.Context, email, password, ip, userAgent string) (*LoginResult, error) {
	u, err := a.CheckPassword(ctx, email, password, ip)
	if err != nil {
		return nil, err
	}
	return a.OpenSession(ctx, u, ip, userAgent)
}

// OpenSession starts a session for a person whose password was checked.
func (a *App) OpenSession(ctx context.Context, u *User, ip, userAgent string) (*LoginResult, error) {
	cfg := a.AuthSettings()
	now := a.Now()
	token := RandomToken(32)
	if len(userAgent) > 512 {
		userAgent = userAgent[:512]
	}
	s := &Session{ID: HashKey(token), UserID: u.ID, CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(cfg.SessionAbsolute),
		IP: ip, UserAgent: userAgent}
	var orgs []Membership
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.CreateSession(ctx, s); err != nil {
			return err
		}
		if err := a.store.SetLastLogin(ctx, u.ID, now); err != nil {
			return err
		}
		var err error
		orgs, err = a.store.ListMemberships(ctx, u.ID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open session: %w", err)
	}
	u.LastLoginAt = &now
	return &LoginResult{Token: token, Session: s, User: u, Organizations: orgs}, nil
}

// SessionInfo is an authenticated session with its person and organizations.
type SessionInfo struct {
	Session       *Session
	User          *User
	Organizations []Membership
}

// AuthenticateSession resolves a session token. Unknown, revoked, idle and
// expired sessions are ErrUnauthenticated.
func (a *App) AuthenticateSession(ctx context.Context, token string) (*SessionInfo, error) {
	if token == "" || len(token) > 200 {
		return nil, ErrUnauthenticated
	}
	cfg := a.AuthSettings()
	s, err := a.store.GetSession(ctx, HashKey(token))
	if errors.Is(err, ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, fmt.Errorf("get session: %w", err)
	}
	now := a.Now()
	if s.RevokedAt != nil || !now.Before(s.ExpiresAt) || now.Sub(s.LastSeenAt) >= cfg.SessionIdle {
		return nil, ErrUnauthenticated
	}
	if now.Sub(s.LastSeenAt) >= touchInterval {
		if err := a.store.TouchSession(ctx, s.ID, now); err != nil {
			return nil, fmt.Errorf("touch session: %w", err)
		}
		s.LastSeenAt = now
	}
	u, err := a.store.GetUser(ctx, s.UserID)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, fmt.Errorf("get user: %w", err)
	}
	orgs, err := a.store.ListMemberships(ctx, u.ID)
	if err != nil {
		return nil, fmt.Errorf("list memberships: %w", err)
	}
	return &SessionInfo{Session: s, User: u, Organizations: orgs}, nil
}

// IdleExpiry is when the session ends unless used again.
func (a *App) IdleExpiry(s *Session) time.Time {
	t := s.LastSeenAt.Add(a.AuthSettings().SessionIdle)
	if t.After(s.ExpiresAt) {
		return s.ExpiresAt
	}
	return t
}

// ErrOrganizationRequired means a person of several organizations did not
// say which one the request is for.
var ErrOrganizationRequired = errors.New("organization required")

// PrincipalFor picks the organization a person acts in: orgID when given
// (ErrNotFound unless they are an active member), else their only
// organization (ErrOrganizationRequired when they have several, ErrForbidden
// when none).
func PrincipalFor(u *User, orgs []Membership, orgID, authType string) (*Principal, error) {
	var m *Membership
	switch {
	case orgID != "":
		for i := range orgs {
			if orgs[i].OrganizationID == orgID {
				m = &orgs[i]
			}
		}
		if m == nil {
			return nil, Errorf(ErrNotFound, "organization not found")
		}
	case len(orgs) == 1:
		m = &orgs[0]
	case len(orgs) == 0:
		return nil, Errorf(ErrForbidden, "you are not an active member of any organization")
	default:
		return nil, ErrOrganizationRequired
	}
	return &Principal{OrgID: m.OrganizationID, Plan: m.Plan, Role: m.Role, AuthType: authType, UserID: u.ID, Email: u.Email}, nil
}

// Logout ends the session of a token. An unknown token is not an error.
func (a *App) Logout(ctx context.Context, token string) error {
	err := a.store.RevokeSession(ctx, HashKey(token), a.Now())
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("logout: %w", err)
	}
	return nil
}

// SetUserPassword sets the password of the login identity with this email
// and ends all of its sessions (CLI: user set-password).
func (a *App) SetUserPassword(ctx context.Context, email, password string) (*User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	hash, err := HashPassword(password)
	if err != nil {
		return nil, err
	}
	u, err := a.store.GetUserByEmail(ctx, email)
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", email, err)
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.SetPasswordHash(ctx, u.ID, hash); err != nil {
			return err
		}
		if err := a.store.RevokeUserSessions(ctx, u.ID, a.Now()); err != nil {
			return err
		}
		orgs, err := a.store.ListMemberships(ctx, u.ID)
		if err != nil {
			return err
		}
		for _, m := range orgs {
			if err := a.record(SystemContext(ctx, m.OrganizationID), Mutation{Action: "password_set", ResourceType: "person", ResourceID: u.ID}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set password of %s: %w", email, err)
	}
	return u, nil
}

// PurgeSessions deletes sessions that ended more than a day ago (job).
func (a *App) PurgeSessions(ctx context.Context) error {
	now := a.Now()
	_, err := a.store.PurgeSessions(ctx, now.Add(-24*time.Hour), now.Add(-24*time.Hour-a.AuthSettings().SessionIdle))
	if err != nil {
		return fmt.Errorf("purge sessions: %w", err)
	}
	return nil
}
