package httpx

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/securecookie"
)

// sessionCookie is the name of the session cookie.
const SessionCookie = "compliance_session"

// csrfHeader carries the CSRF token on cookie-authenticated writes.
const CSRFHeader = "X-CSRF-Token"

// sessions encodes session cookies and derives CSRF tokens.
type Sessions struct {
	codec   *securecookie.SecureCookie
	csrfKey []byte
	Secure  bool // public_url is https
	Proxies []netip.Prefix
}

// ValidateTrustedProxies checks the trusted_proxies setting.
func ValidateTrustedProxies(list []string) error {
	_, err := ParseProxies(list)
	return err
}

// parseProxies reads trusted proxy addresses and CIDR ranges.
func ParseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: not an address or CIDR range", s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

func (ss *Sessions) trusted(a netip.Addr) bool {
	for _, p := range ss.Proxies {
		if p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// clientAddress is the address sign-in throttling counts against: the peer,
// or behind trusted proxies the right-most X-Forwarded-For entry that is not
// a trusted proxy itself.
func (ss *Sessions) ClientAddress(r *http.Request) string {
	peer := ClientIP(r)
	a, err := netip.ParseAddr(peer)
	if err != nil || len(ss.Proxies) == 0 || !ss.trusted(a) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer
		}
		if !ss.trusted(h) {
			return h.Unmap().String()
		}
	}
	return peer
}

func NewSessions(hashKey, blockKey []byte, publicURL string, maxAge time.Duration) *Sessions {
	if len(hashKey) == 0 {
		hashKey = securecookie.GenerateRandomKey(64)
	}
	if len(blockKey) == 0 {
		blockKey = securecookie.GenerateRandomKey(32)
	}
	codec := securecookie.New(hashKey, blockKey)
	codec.MaxAge(int(maxAge / time.Second))
	mac := hmac.New(sha256.New, hashKey)
	mac.Write([]byte("csrf key"))
	return &Sessions{codec: codec, csrfKey: mac.Sum(nil), Secure: strings.HasPrefix(strings.ToLower(publicURL), "https://")}
}

// csrfToken is derived from the session token, so it needs no storage and
// is useless without the cookie.
func (ss *Sessions) CSRFToken(token string) string {
	mac := hmac.New(sha256.New, ss.csrfKey)
	mac.Write([]byte(token))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (ss *Sessions) ValidCSRF(token, got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(ss.CSRFToken(token)), []byte(got)) == 1
}

// token returns the session token of the request's cookie, or "".
func (ss *Sessions) Token(r *http.Request) string {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return ""
	}
	var token string
	if err := ss.codec.Decode(SessionCookie, c.Value, &token); err != nil {
		return ""
	}
	return token
}

// setCookie sets the session cookie for lifetime (the absolute session
// lifetime left; the server enforces it too).
func (ss *Sessions) SetCookie(w http.ResponseWriter, r *http.Request, token string, lifetime time.Duration) error {
	v, err := ss.codec.Encode(SessionCookie, token)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: v, Path: "/", Expires: time.Now().Add(lifetime), MaxAge: int(lifetime / time.Second),
		HttpOnly: true, Secure: ss.Secure || r.TLS != nil, SameSite: http.SameSiteLaxMode})
	return nil
}

func (ss *Sessions) ClearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: ss.Secure || r.TLS != nil, SameSite: http.SameSiteLaxMode})
}

// safeMethod reports whether a method cannot change state.
func SafeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// ownSessionHandling lists path prefixes whose handlers read the session
// cookie themselves (sign-in, sign-out, the OAuth pages), so a stale cookie
// never blocks them.
var ownSessionHandling = []string{"/v1/auth/", "/oauth/", "/.well-known/"}

// sessionAuth resolves the session cookie: CSRF on writes, then the
// organization from X-Organization-Id (required with several).
func (s *Server) SessionAuth(r *http.Request) (*app.Principal, error) {
	if _, err := r.Cookie(SessionCookie); err != nil {
		return nil, nil
	}
	for _, p := range ownSessionHandling {
		if strings.HasPrefix(r.URL.Path, p) {
			return nil, nil
		}
	}
	token := s.Sess.Token(r)
	if token == "" {
		return nil, app.ErrUnauthenticated
	}
	info, err := s.app.AuthenticateSession(r.Context(), token)
	if err != nil {
		return nil, err
	}
	if !SafeMethod(r.Method) && !s.Sess.ValidCSRF(token, r.Header.Get(CSRFHeader)) {
		return nil, &HTTPError{Status: http.StatusForbidden, Code: "forbidden",
			Msg: "cookie-authenticated writes need the X-CSRF-Token header from sign-in", Details: map[string]any{"field": CSRFHeader}}
	}
	return s.principalForPerson(info.User, info.Organizations, r, app.AuthSession)
}

// principalForPerson applies the organization-selection rules.
func (s *Server) principalForPerson(u *app.User, orgs []app.Membership, r *http.Request, authType string) (*app.Principal, error) {
	orgID := r.Header.Get("X-Organization-Id")
	p, err := app.PrincipalFor(u, orgs, orgID, authType)
	if errors.Is(err, app.ErrOrganizationRequired) {
		return nil, BadRequest("X-Organization-Id", nil, "X-Organization-Id is required: you belong to %d organizations", len(orgs))
	}
	if errors.Is(err, app.ErrNotFound) {
		return nil, &HTTPError{Status: http.StatusNotFound, Code: "not_found", Msg: "organization not found", Details: map[string]any{"field": "X-Organization-Id", "value": orgID}}
	}
	return p, err
}

// sessionBody is the answer of sign-in and of /v1/auth/me.
type sessionBody struct {
	Person        *app.User        `json:"person"`
	User          *app.User        `json:"user"`
	Organizations []app.Membership `json:"organizations"`
	CSRFToken     string           `json:"csrfToken"`
	ExpiresAt     time.Time        `json:"expiresAt"`
	IdleExpiresAt time.Time        `json:"idleExpiresAt"`
}

type loginInput struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// throttleError turns a sign-in throttle into 429 with Retry-After.
func throttleError(w http.ResponseWriter, err error) error {
	var te *app.ThrottleError
	if !errors.As(err, &te) {
		return err
	}
	secs := te.RetrySeconds()
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return &HTTPError{Status: http.StatusTooManyRequests, Code: "rate_limited", Msg: te.Error(), Details: map[string]any{"retryAfter": secs}}
}

func (s *Server) Login(w http.ResponseWriter, r *http.Request) error {
	var in loginInput
	if err := Decode(r, &in); err != nil {
		return err
	}
	res, err := s.app.Login(r.Context(), in.Email, in.Password, s.Sess.ClientAddress(r), r.UserAgent())
	if err != nil {
		return throttleError(w, err)
	}
	if err := s.Sess.SetCookie(w, r, res.Token, res.Session.ExpiresAt.Sub(res.Session.CreatedAt)); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, sessionBody{Person: res.User, User: res.User, Organizations: res.Organizations,
		CSRFToken: s.Sess.CSRFToken(res.Token), ExpiresAt: res.Session.ExpiresAt, IdleExpiresAt: s.app.IdleExpiry(res.Session)})
	return nil
}

func (s *Server) Logout(w http.ResponseWriter, r *http.Request) error {
	token := s.Sess.Token(r)
	if token != "" {
		if _, err := s.app.AuthenticateSession(r.Context(), token); err == nil && !s.Sess.ValidCSRF(token, r.Header.Get(CSRFHeader)) {
			return &HTTPError{Status: http.StatusForbidden, Code: "forbidden",
				Msg: "cookie-authenticated writes need the X-CSRF-Token header from sign-in", Details: map[string]any{"field": CSRFHeader}}
		}
		if err := s.app.Logout(r.Context(), token); err != nil {
			return err
		}
	}
	s.Sess.ClearCookie(w, r)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) Me(w http.ResponseWriter, r *http.Request) error {
	token := s.Sess.Token(r)
	if token == "" {
		return app.ErrUnauthenticated
	}
	info, err := s.app.AuthenticateSession(r.Context(), token)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, sessionBody{Person: info.User, User: info.User, Organizations: info.Organizations,
		CSRFToken: s.Sess.CSRFToken(token), ExpiresAt: info.Session.ExpiresAt, IdleExpiresAt: s.app.IdleExpiry(info.Session)})
	return nil
}

// randomString returns n random bytes, URL-safe base64.
func RandomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
