package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pquerna/otp/totp"
)

// BrowserConfig is the appliance-wide browser configuration.
type BrowserConfig struct {
	// MaxSessions caps open sessions on the appliance (browser.max_sessions, 4).
	MaxSessions int
	// MaxSessionsPerOrg caps open sessions per organization
	// (browser.max_sessions_per_org, 2).
	MaxSessionsPerOrg int
	// SessionTimeout closes a session idle this long (browser.session_timeout, 5 min).
	SessionTimeout time.Duration
	// RunTimeout ends a run that takes longer (5 min).
	RunTimeout time.Duration
}

type browserState struct {
	mu       sync.Mutex
	browser  Browser
	cfg      BrowserConfig
	base     context.Context
	sessions map[string]*liveSession
	running  map[string]string // automation id -> run id
	wg       sync.WaitGroup
}

// liveSession is an open browser session.
type liveSession struct {
	ID        string
	OrgID     string
	s         BrowserSession
	hosts     []string
	CreatedAt time.Time
	LastUsed  time.Time
	RunID     string
	busy      bool
}

// BrowserSessionInfo describes an open session.
type BrowserSessionInfo struct {
	SessionID   string    `json:"sessionId"`
	LiveViewURL string    `json:"liveViewUrl"`
	RunID       *string   `json:"runId"`
	Hosts       []string  `json:"hosts"`
	CreatedAt   time.Time `json:"createdAt"`
	LastUsedAt  time.Time `json:"lastUsedAt"`
}

// ConfigureBrowser wires the browser in. Without one, every browser
// operation answers 503 naming what to install.
func (a *App) ConfigureBrowser(b Browser, cfg BrowserConfig) {
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 4
	}
	if cfg.MaxSessionsPerOrg <= 0 {
		cfg.MaxSessionsPerOrg = 2
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 5 * time.Minute
	}
	if cfg.RunTimeout <= 0 {
		cfg.RunTimeout = 5 * time.Minute
	}
	st := &a.browser
	st.mu.Lock()
	st.browser, st.cfg = b, cfg
	if st.sessions == nil {
		st.sessions, st.running = map[string]*liveSession{}, map[string]string{}
	}
	st.mu.Unlock()
}

// StartBrowser marks runs left running by a previous process interrupted
// and closes idle sessions until ctx ends.
func (a *App) StartBrowser(ctx context.Context) error {
	st := &a.browser
	st.mu.Lock()
	st.base = ctx
	if st.sessions == nil {
		st.sessions, st.running = map[string]*liveSession{}, map[string]string{}
	}
	st.mu.Unlock()
	for _, status := range []string{BrowserRunRunning, BrowserRunPending} {
		left, err := a.store.BrowserRunsByStatus(ctx, status)
		if err != nil {
			return fmt.Errorf("start browser: %w", err)
		}
		for i := range left {
			r := &left[i].BrowserAutomationRun
			now := a.Now()
			r.Status, r.CompletedAt = BrowserRunInterrupted, &now
			r.Error = Ptr("the appliance stopped during the run; start a new run")
			if err := a.store.SaveBrowserRun(ctx, left[i].OrgID, r); err != nil {
				return fmt.Errorf("interrupt browser run %s: %w", r.ID, err)
			}
		}
	}
	st.wg.Add(1)
	go func() {
		defer st.wg.Done()
		t := time.NewTicker(15 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				a.closeAllSessions()
				return
			case <-t.C:
				a.CloseIdleBrowserSessions()
			}
		}
	}()
	return nil
}

// WaitBrowser waits for runs and the janitor to end after StartBrowser's
// context ended.
func (a *App) WaitBrowser() { a.browser.wg.Wait() }

func (a *App) browserBase() context.Context {
	a.browser.mu.Lock()
	defer a.browser.mu.Unlock()
	if a.browser.base != nil {
		return a.browser.base
	}
	return context.Background()
}

func (a *App) browserAdapter() (Browser, BrowserConfig, error) {
	st := &a.browser
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.browser == nil {
		return nil, st.cfg, Errorf(ErrBrowserUnavailable, "browser automations are not configured on this appliance: install the chromium package and restart")
	}
	return st.browser, st.cfg, nil
}

// CloseIdleBrowserSessions closes sessions idle longer than the timeout.
func (a *App) CloseIdleBrowserSessions() int {
	st := &a.browser
	st.mu.Lock()
	var idle []*liveSession
	now := time.Now()
	for id, ls := range st.sessions {
		if !ls.busy && now.Sub(ls.LastUsed) > st.cfg.SessionTimeout {
			idle = append(idle, ls)
			delete(st.sessions, id)
		}
	}
	st.mu.Unlock()
	for _, ls := range idle {
		ls.s.Close()
	}
	return len(idle)
}

func (a *App) closeAllSessions() {
	st := &a.browser
	st.mu.Lock()
	all := make([]*liveSession, 0, len(st.sessions))
	for id, ls := range st.sessions {
		all = append(all, ls)
		delete(st.sessions, id)
	}
	st.mu.Unlock()
	for _, ls := range all {
		ls.s.Close()
	}
}

// hostAllowed reports whether host matches one of hosts ("*.example.com"
// matches subdomains of example.com).
func hostAllowed(host string, hosts []string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, h := range hosts {
		if d, ok := strings.CutPrefix(h, "*."); ok {
			if host == d || strings.HasSuffix(host, "."+d) {
				return true
			}
		} else if host == h {
			return true
		}
	}
	return false
}

// browserGuard decides every request of a session: http(s) and ws(s) only,
// to the target hosts only, to addresses the network policy allows.
func (a *App) browserGuard(hosts []string) func(u *url.URL) error {
	pol := a.NetworkPolicy()
	var mu sync.Mutex
	resolved := map[string]error{}
	return func(u *url.URL) error {
		switch u.Scheme {
		case "data", "blob", "about":
			return nil
		case "http", "https", "ws", "wss":
		default:
			return fmt.Errorf("scheme %s is not allowed", u.Scheme)
		}
		host := u.Hostname()
		if !hostAllowed(host, hosts) {
			return fmt.Errorf("host %s is not one of the automation's target hosts", host)
		}
		mu.Lock()
		err, ok := resolved[host]
		mu.Unlock()
		if ok {
			return err
		}
		err = checkPolicy(pol, host)
		mu.Lock()
		resolved[host] = err
		mu.Unlock()
		return err
	}
}

func checkPolicy(pol *NetworkPolicy, host string) error {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if !pol.Allowed(ip) {
			return fmt.Errorf("%s is in a network outbound connections may not reach", ip)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("host %s does not resolve", host)
	}
	for _, ip := range ips {
		if !pol.Allowed(ip) {
			return fmt.Errorf("%s resolves to %s, in a network outbound connections may not reach", host, ip.Unmap())
		}
	}
	return nil
}

// openSession opens a session for the organization limited to hosts,
// within the caps.
func (a *App) openSession(ctx context.Context, orgID string, hosts []string, runID string, busy bool) (*liveSession, error) {
	b, cfg, err := a.browserAdapter()
	if err != nil {
		return nil, err
	}
	st := &a.browser
	st.mu.Lock()
	n, perOrg := len(st.sessions), 0
	for _, ls := range st.sessions {
		if ls.OrgID == orgID {
			perOrg++
		}
	}
	if n >= cfg.MaxSessions {
		st.mu.Unlock()
		return nil, Errorf(ErrBrowserBusy, "the appliance already holds %d browser sessions (browser.max_sessions); close one or wait for a run to end", cfg.MaxSessions)
	}
	if perOrg >= cfg.MaxSessionsPerOrg {
		st.mu.Unlock()
		return nil, Errorf(ErrBrowserBusy, "this organization already holds %d browser sessions (browser.max_sessions_per_org); close one or wait for a run to end", cfg.MaxSessionsPerOrg)
	}
	now := time.Now()
	ls := &liveSession{ID: NewID(PrefixBrowserSession), OrgID: orgID, hosts: hosts, CreatedAt: now, LastUsed: now, RunID: runID, busy: busy}
	st.sessions[ls.ID] = ls // reserve the slot while Chromium starts
	st.mu.Unlock()
	s, err := b.Open(ctx, BrowserOpen{OrgID: orgID, Allow: a.browserGuard(hosts)})
	if err != nil {
		st.mu.Lock()
		delete(st.sessions, ls.ID)
		st.mu.Unlock()
		return nil, err
	}
	ls.s = s
	return ls, nil
}

func (a *App) closeSession(ls *liveSession) {
	a.forgetSession(ls)
	ls.s.Close()
}

// forgetSession removes a session from the open ones (its slot is free).
func (a *App) forgetSession(ls *liveSession) {
	st := &a.browser
	st.mu.Lock()
	delete(st.sessions, ls.ID)
	st.mu.Unlock()
}

// CloseAllBrowserSessions closes every open session (shutdown, tests).
func (a *App) CloseAllBrowserSessions() { a.closeAllSessions() }

// session returns an open session of the organization (404 otherwise).
func (a *App) session(orgID, id string) (*liveSession, error) {
	st := &a.browser
	st.mu.Lock()
	defer st.mu.Unlock()
	ls := st.sessions[id]
	if ls == nil || ls.OrgID != orgID || ls.s == nil {
		return nil, fmt.Errorf("browser session %s: %w", id, ErrNotFound)
	}
	ls.LastUsed = time.Now()
	return ls, nil
}

func (a *App) sessionInfo(ls *liveSession) *BrowserSessionInfo {
	a.browser.mu.Lock()
	defer a.browser.mu.Unlock()
	out := &BrowserSessionInfo{SessionID: ls.ID, LiveViewURL: "/browser-sessions/" + ls.ID, Hosts: ls.hosts, CreatedAt: ls.CreatedAt, LastUsedAt: ls.LastUsed}
	if ls.RunID != "" {
		out.RunID = Ptr(ls.RunID)
	}
	return out
}

// orgHosts are the hosts a free session may reach: every target host of
// the organization's automations and auth profiles.
func (a *App) orgHosts(ctx context.Context, orgID string) ([]string, error) {
	profiles, err := a.store.ListBrowserProfiles(ctx, orgID)
	if err != nil {
		return nil, err
	}
	autos, err := a.store.ListBrowserAutomations(ctx, orgID, "")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range profiles {
		out = append(out, p.Hostname)
	}
	for i := range autos {
		out = append(out, autos[i].targetHosts(nil)...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// CreateBrowserSession opens a session in the organization's browser
// context; it may reach the hosts of the organization's automations and
// auth profiles.
func (a *App) CreateBrowserSession(ctx context.Context, contextID string) (*BrowserSessionInfo, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	bc, err := a.store.GetBrowserContext(ctx, p.OrgID)
	if errors.Is(err, ErrNotFound) || (err == nil && bc.ContextID != contextID) {
		return nil, Invalid("contextId", CodeUnknownReference, contextID, "contextId must be this organization's browser context (POST /v1/browserbase/org-context)")
	}
	if err != nil {
		return nil, err
	}
	hosts, err := a.orgHosts(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	ls, err := a.openSession(ctx, p.OrgID, hosts, "", false)
	if err != nil {
		return nil, err
	}
	return a.sessionInfo(ls), nil
}

// GetBrowserSession describes an open session.
func (a *App) GetBrowserSession(ctx context.Context, id string) (*BrowserSessionInfo, error) {
	p, err := a.browserReader(ctx)
	if err != nil {
		return nil, err
	}
	ls, err := a.session(p.OrgID, id)
	if err != nil {
		return nil, err
	}
	return a.sessionInfo(ls), nil
}

// BrowserSessionFrame returns the latest screen of a session (JPEG) and
// its sequence number.
func (a *App) BrowserSessionFrame(ctx context.Context, id string) ([]byte, int64, error) {
	p, err := a.browserReader(ctx)
	if err != nil {
		return nil, 0, err
	}
	ls, err := a.session(p.OrgID, id)
	if err != nil {
		return nil, 0, err
	}
	f, seq := ls.s.Frame()
	return f, seq, nil
}

// CloseBrowserSession closes a session.
func (a *App) CloseBrowserSession(ctx context.Context, id string) error {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	ls, err := a.session(p.OrgID, id)
	if err != nil {
		return err
	}
	a.closeSession(ls)
	return nil
}

// NavigateBrowserSession loads a URL in a session. A page that did not
// load (refused, unreachable, timed out) is reported in loadErr, not err.
func (a *App) NavigateBrowserSession(ctx context.Context, id, rawURL string) (loadErr string, err error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return "", err
	}
	if !validURL(rawURL) {
		return "", Invalid("url", CodeInvalid, rawURL, "url must be an absolute http or https URL")
	}
	ls, err := a.session(p.OrgID, id)
	if err != nil {
		return "", err
	}
	nctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := ls.s.Navigate(nctx, rawURL); err != nil {
		return clip(err.Error(), 500), nil
	}
	return "", nil
}

// BrowserAuthCheck says whether a session is signed in.
type BrowserAuthCheck struct {
	IsLoggedIn bool    `json:"isLoggedIn"`
	Username   *string `json:"username"`
	Reason     string  `json:"reason"`
}

// CheckBrowserAuth loads a URL in a session and tells whether it shows a
// signed-in page: the expected text or URL of the host's auth profile when
// it has one, else the absence of a password field.
func (a *App) CheckBrowserAuth(ctx context.Context, id, rawURL string) (*BrowserAuthCheck, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	if !validURL(rawURL) {
		return nil, Invalid("url", CodeInvalid, rawURL, "url must be an absolute http or https URL")
	}
	ls, err := a.session(p.OrgID, id)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(rawURL)
	var prof *BrowserAuthProfile
	profiles, err := a.store.ListBrowserProfiles(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	for i := range profiles {
		if profiles[i].Hostname == strings.ToLower(u.Hostname()) {
			prof = &profiles[i]
			break
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := ls.s.Navigate(cctx, rawURL); err != nil {
		return nil, Errorf(ErrConflict, "the page did not load: %s", clip(err.Error(), 300))
	}
	return a.authState(cctx, ls.s, prof), nil
}

func (a *App) authState(ctx context.Context, s BrowserSession, prof *BrowserAuthProfile) *BrowserAuthCheck {
	out := &BrowserAuthCheck{}
	sel := loginSelectors(prof)
	if prof != nil && prof.LoginIdentity != "" {
		out.Username = Ptr(prof.LoginIdentity)
	}
	if prof != nil && prof.VerifyURLContains != "" {
		cur, _ := s.URL(ctx)
		if !strings.Contains(cur, prof.VerifyURLContains) {
			out.Reason = "the page's URL does not contain " + prof.VerifyURLContains
			return out
		}
	}
	if prof != nil && prof.VerifyText != "" {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		txt, _ := s.Text(tctx, "")
		if !strings.Contains(txt, prof.VerifyText) {
			out.Reason = "the page does not show " + prof.VerifyText
			return out
		}
		out.IsLoggedIn, out.Reason = true, "the page shows "+prof.VerifyText
		return out
	}
	if has, _ := s.Exists(ctx, sel.Password); has {
		out.Reason = "the page shows a password field"
		return out
	}
	out.IsLoggedIn, out.Reason = true, "the page shows no sign-in form"
	return out
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Default sign-in form selectors: by autocomplete, type, name and id.
var defaultLogin = BrowserLoginSelectors{
	Username: `input[autocomplete="username"], input[type="email"], input[name*="user" i], input[name*="login" i], input[name*="email" i], input[id*="user" i]`,
	Password: `input[type="password"]`,
	TOTP:     `input[autocomplete="one-time-code"], input[name*="otp" i], input[name*="totp" i], input[name*="code" i], input[id*="otp" i], input[id*="code" i]`,
	Submit:   `button[type="submit"], input[type="submit"], form button:not([type])`,
}

func loginSelectors(p *BrowserAuthProfile) BrowserLoginSelectors {
	s := defaultLogin
	if p == nil {
		return s
	}
	if p.Selectors.Username != "" {
		s.Username = p.Selectors.Username
	}
	if p.Selectors.Password != "" {
		s.Password = p.Selectors.Password
	}
	if p.Selectors.TOTP != "" {
		s.TOTP = p.Selectors.TOTP
	}
	if p.Selectors.Submit != "" {
		s.Submit = p.Selectors.Submit
	}
	return s
}

// waitFor polls until cond holds or ctx ends.
func waitFor(ctx context.Context, cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// signIn fills the profile's sign-in form at loginURL: username (and a
// second page for the password when the form asks in two steps), extra
// fields, password, then the TOTP code when a code field appears. A page
// without a sign-in form means the session is already signed in.
func (a *App) signIn(ctx context.Context, s BrowserSession, p *BrowserAuthProfile, c *browserCredentials, loginURL string) error {
	sel := loginSelectors(p)
	if err := s.Navigate(ctx, loginURL); err != nil {
		return fmt.Errorf("the sign-in page did not load: %w", err)
	}
	exists := func(q string) bool { ok, _ := s.Exists(ctx, q); return ok }
	if !exists(sel.Password) && !exists(sel.Username) {
		return nil
	}
	if c.Username == "" && c.Password == "" {
		return errors.New("the profile has no stored credentials")
	}
	submit := func(field string) error {
		if exists(sel.Submit) {
			return s.Click(ctx, sel.Submit)
		}
		return s.Submit(ctx, field)
	}
	if !exists(sel.Password) {
		if err := s.Fill(ctx, sel.Username, c.Username); err != nil {
			return errors.New("the username field could not be filled")
		}
		if err := submit(sel.Username); err != nil {
			return errors.New("the username step could not be submitted")
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ok := waitFor(wctx, func() bool { return exists(sel.Password) })
		cancel()
		if !ok {
			return errors.New("no password field appeared after the username step")
		}
	} else if exists(sel.Username) {
		if err := s.Fill(ctx, sel.Username, c.Username); err != nil {
			return errors.New("the username field could not be filled")
		}
	}
	for _, f := range c.ExtraFields {
		q := strings.ReplaceAll(f.Label, `"`, `\"`)
		fs := fmt.Sprintf(`input[name="%s"], input[id="%s"], input[aria-label="%s"], input[placeholder="%s"]`, q, q, q, q)
		if exists(fs) {
			if err := s.Fill(ctx, fs, f.Value); err != nil {
				return fmt.Errorf("the field %q could not be filled", f.Label)
			}
		}
	}
	if err := s.Fill(ctx, sel.Password, c.Password); err != nil {
		return errors.New("the password field could not be filled")
	}
	if err := submit(sel.Password); err != nil {
		return errors.New("the sign-in form could not be submitted")
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	waitFor(wctx, func() bool { return !exists(sel.Password) || exists(sel.TOTP) })
	if exists(sel.TOTP) && !exists(sel.Password) {
		if c.TOTPSeed == "" {
			return errors.New("the site asks for a one-time code and the profile has no TOTP seed")
		}
		code, err := totp.GenerateCode(c.TOTPSeed, a.Now())
		if err != nil {
			return errors.New("the TOTP seed could not produce a code")
		}
		if err := s.Fill(ctx, sel.TOTP, code); err != nil {
			return errors.New("the one-time code field could not be filled")
		}
		if err := submit(sel.TOTP); err != nil {
			return errors.New("the one-time code could not be submitted")
		}
		waitFor(wctx, func() bool { return !exists(sel.TOTP) })
	}
	if exists(sel.Password) {
		return errors.New("the site still shows the sign-in form: the credentials were refused")
	}
	if exists(sel.TOTP) {
		return errors.New("the site still asks for the one-time code: the code was refused")
	}
	return nil
}

// BrowserSignIn is the outcome of signing a profile in.
type BrowserSignIn struct {
	SessionID   string              `json:"sessionId"`
	LiveViewURL string              `json:"liveViewUrl"`
	SignedIn    bool                `json:"signedIn"`
	Reason      string              `json:"reason"`
	Profile     *BrowserAuthProfile `json:"profile"`
}

// profileHosts are the hosts a profile's session may reach.
func profileHosts(p *BrowserAuthProfile, extra ...string) []string {
	out := []string{p.Hostname}
	for _, raw := range extra {
		if u, err := url.Parse(raw); err == nil && u.Hostname() != "" && !slices.Contains(out, strings.ToLower(u.Hostname())) {
			out = append(out, strings.ToLower(u.Hostname()))
		}
	}
	return out
}

// StartBrowserProfileSession opens a session limited to the profile's host.
func (a *App) StartBrowserProfileSession(ctx context.Context, id string) (*BrowserSessionInfo, error) {
	pr, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	prof, err := a.store.GetBrowserProfile(ctx, pr.OrgID, id)
	if err != nil {
		return nil, err
	}
	ls, err := a.openSession(ctx, pr.OrgID, profileHosts(prof), "", false)
	if err != nil {
		return nil, err
	}
	return a.sessionInfo(ls), nil
}

// SignInBrowserProfile signs the profile in with its stored credentials in
// a new session (left open for verification and the live view) and
// records the outcome on the profile. mode sso is refused: single sign-on
// needs a person at the keyboard, which the live view does not offer.
func (a *App) SignInBrowserProfile(ctx context.Context, id, rawURL, mode string) (*BrowserSignIn, error) {
	pr, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	if rawURL != "" && !validURL(rawURL) {
		ve.Add("url", CodeInvalid, rawURL, "url must be an absolute http or https URL")
	}
	if mode != "" && mode != "password" {
		ve.Add("mode", CodeInvalidEnum, mode, "mode must be password: single sign-on needs a person at the keyboard, which the appliance's live view does not offer")
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	prof, err := a.store.GetBrowserProfile(ctx, pr.OrgID, id)
	if err != nil {
		return nil, err
	}
	if rawURL == "" {
		rawURL = prof.URL
	}
	creds, err := a.openProfileCredentials(prof)
	if err != nil {
		return nil, err
	}
	if !prof.CredentialsConfigured {
		return nil, Errorf(ErrConflict, "the profile has no stored credentials: POST /v1/browserbase/profiles/%s/credentials first", id)
	}
	ls, err := a.openSession(ctx, pr.OrgID, profileHosts(prof, rawURL), "", true)
	if err != nil {
		return nil, err
	}
	defer func() {
		a.browser.mu.Lock()
		ls.busy, ls.LastUsed = false, time.Now()
		a.browser.mu.Unlock()
	}()
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out := &BrowserSignIn{SessionID: ls.ID, LiveViewURL: "/browser-sessions/" + ls.ID}
	serr := a.signIn(sctx, ls.s, prof, creds, rawURL)
	var st *BrowserAuthCheck
	if serr == nil {
		st = a.authState(sctx, ls.s, prof)
		out.SignedIn, out.Reason = st.IsLoggedIn, st.Reason
	} else {
		out.Reason = redact(serr.Error(), creds)
	}
	prof2, err := a.mutateProfile(ctx, id, "signed_in", func(p *BrowserAuthProfile, _ *ValidationError) error {
		now := a.Now()
		p.LastSignInAt = &now
		if out.SignedIn {
			p.Status, p.StatusReason, p.LastVerifiedAt = ProfileVerified, out.Reason, &now
		} else {
			p.Status, p.StatusReason = ProfileNeedsReauth, "sign-in failed: "+out.Reason
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Profile = prof2
	return out, nil
}

// BrowserVerification is the outcome of verifying a profile's session.
type BrowserVerification struct {
	Profile *BrowserAuthProfile `json:"profile"`
	Auth    *BrowserAuthCheck   `json:"auth"`
}

// VerifyBrowserProfile checks that a session is signed in to the profile's
// site and records it: verified, or needs_reauth.
func (a *App) VerifyBrowserProfile(ctx context.Context, id, sessionID, rawURL string) (*BrowserVerification, error) {
	pr, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	if sessionID == "" {
		ve.Add("sessionId", CodeRequired, nil, "sessionId is required")
	}
	if !validURL(rawURL) {
		ve.Add("url", CodeInvalid, rawURL, "url must be an absolute http or https URL")
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	prof, err := a.store.GetBrowserProfile(ctx, pr.OrgID, id)
	if err != nil {
		return nil, err
	}
	ls, err := a.session(pr.OrgID, sessionID)
	if err != nil {
		return nil, Invalid("sessionId", CodeUnknownReference, sessionID, "sessionId must name an open browser session of this organization")
	}
	vctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := ls.s.Navigate(vctx, rawURL); err != nil {
		return nil, Errorf(ErrConflict, "the page did not load: %s", clip(err.Error(), 300))
	}
	st := a.authState(vctx, ls.s, prof)
	prof2, err := a.mutateProfile(ctx, id, "verified", func(p *BrowserAuthProfile, _ *ValidationError) error {
		now := a.Now()
		if st.IsLoggedIn {
			p.Status, p.StatusReason, p.LastVerifiedAt = ProfileVerified, st.Reason, &now
		} else {
			p.Status, p.StatusReason = ProfileNeedsReauth, st.Reason
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &BrowserVerification{Profile: prof2, Auth: st}, nil
}

// redact replaces the credentials in a message.
func redact(msg string, c *browserCredentials) string {
	if c == nil {
		return msg
	}
	for _, s := range []string{c.Password, c.Username, c.TOTPSeed} {
		if len(s) >= 3 {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	for _, f := range c.ExtraFields {
		if len(f.Value) >= 3 {
			msg = strings.ReplaceAll(msg, f.Value, "[redacted]")
		}
	}
	return msg
}

// --- runs

// BrowserTestInput is the body of POST /v1/browserbase/automations/test.
type BrowserTestInput struct {
	TargetURL          *string            `json:"targetUrl"`
	Instruction        *string            `json:"instruction"`
	EvaluationCriteria *string            `json:"evaluationCriteria"`
	Steps              []BrowserStep      `json:"steps"`
	Criteria           []BrowserCriterion `json:"criteria"`
	AllowedHosts       []string           `json:"allowedHosts"`
	ProfileID          *string            `json:"profileId"`
	TaskID             *string            `json:"taskId"`
}

// BrowserRunStarted answers a run started in the background.
type BrowserRunStarted struct {
	RunID       string                `json:"runId"`
	SessionID   *string               `json:"sessionId"`
	LiveViewURL *string               `json:"liveViewUrl"`
	ProfileID   *string               `json:"profileId"`
	Run         *BrowserAutomationRun `json:"run"`
}

// TestBrowserInstruction runs steps once without saving an automation: no
// evidence, no finding. It runs in the background; the run is returned.
func (a *App) TestBrowserInstruction(ctx context.Context, in BrowserTestInput) (*BrowserRunStarted, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	au := &BrowserAutomation{ID: "", Name: "test", IsEnabled: false}
	ve := NewValidationError()
	if trimmed(in.TaskID) != "" {
		if t := a.browserTask(ctx, p.OrgID, trimmed(in.TaskID), ve); t != nil {
			au.TaskID = t.ID
		}
	}
	ai := BrowserAutomationInput{TargetURL: in.TargetURL, Instruction: in.Instruction, EvaluationCriteria: in.EvaluationCriteria,
		Steps: in.Steps, Criteria: in.Criteria, AllowedHosts: in.AllowedHosts}
	if in.ProfileID != nil {
		ai.ProfileID = Some(*in.ProfileID)
	}
	name := "test"
	ai.Name = &name
	ai.apply(ctx, a, p.OrgID, au, true, ve)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	return a.startRun(ctx, p.OrgID, au, "test")
}

// RunBrowserAutomation starts a run of an automation in the background
// (one at a time per automation).
func (a *App) RunBrowserAutomation(ctx context.Context, id string) (*BrowserRunStarted, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	au, err := a.store.GetBrowserAutomation(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	return a.startRun(ctx, p.OrgID, au, "manual")
}

func (a *App) startRun(ctx context.Context, orgID string, au *BrowserAutomation, trigger string) (*BrowserRunStarted, error) {
	if _, _, err := a.browserAdapter(); err != nil {
		return nil, err
	}
	var prof *BrowserAuthProfile
	if au.ProfileID != nil {
		var err error
		if prof, err = a.store.GetBrowserProfile(ctx, orgID, *au.ProfileID); err != nil {
			return nil, err
		}
	}
	st := &a.browser
	if au.ID != "" {
		st.mu.Lock()
		if rid, busy := st.running[au.ID]; busy {
			st.mu.Unlock()
			return nil, Errorf(ErrConflict, "run %s of this automation is still under way", rid)
		}
		st.running[au.ID] = "starting"
		st.mu.Unlock()
	}
	release := func() {
		if au.ID != "" {
			st.mu.Lock()
			delete(st.running, au.ID)
			st.mu.Unlock()
		}
	}
	run := a.newRun(au, trigger)
	ls, err := a.openSession(context.WithoutCancel(ctx), orgID, au.targetHosts(prof), run.ID, true)
	if err != nil {
		release()
		return nil, err
	}
	run.SessionID = Ptr(ls.ID)
	if au.ID != "" {
		st.mu.Lock()
		st.running[au.ID] = run.ID
		st.mu.Unlock()
	}
	if err := a.store.SaveBrowserRun(ctx, orgID, run); err != nil {
		release()
		a.closeSession(ls)
		return nil, fmt.Errorf("start browser run: %w", err)
	}
	cp := *run
	cp.Steps, cp.Screenshots, cp.Extracted = []BrowserStepResult{}, []BrowserScreenshot{}, map[string]string{}
	st.wg.Add(1)
	go func() {
		defer st.wg.Done()
		_, cfg, _ := a.browserAdapter()
		rctx, cancel := context.WithTimeout(a.browserBase(), cfg.RunTimeout)
		defer cancel()
		// The slot and the session are given back before the run is saved
		// as ended, so a client that sees it ended may start the next one.
		a.executeBrowserRun(rctx, orgID, au, prof, run, ls.s, func() {
			a.forgetSession(ls)
			release()
		})
		ls.s.Close()
	}()
	return &BrowserRunStarted{RunID: cp.ID, SessionID: cp.SessionID, LiveViewURL: Ptr("/browser-sessions/" + ls.ID), ProfileID: au.ProfileID, Run: &cp}, nil
}

func (a *App) newRun(au *BrowserAutomation, trigger string) *BrowserAutomationRun {
	run := &BrowserAutomationRun{ID: NewID(PrefixBrowserRun), Status: BrowserRunRunning, Trigger: trigger, Steps: []BrowserStepResult{},
		Extracted: map[string]string{}, Screenshots: []BrowserScreenshot{}, Refused: []string{}, EvidenceIDs: []string{}, CreatedAt: a.Now()}
	if au.ID != "" {
		run.AutomationID = Ptr(au.ID)
	}
	if au.TaskID != "" {
		run.TaskID = Ptr(au.TaskID)
	}
	now := a.Now()
	run.StartedAt = &now
	return run
}

// StartLiveBrowserAutomation opens a session for an automation and a
// pending run, to be executed with ExecuteBrowserAutomation while a person
// watches the live view.
func (a *App) StartLiveBrowserAutomation(ctx context.Context, id string) (*BrowserRunStarted, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	au, err := a.store.GetBrowserAutomation(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	var prof *BrowserAuthProfile
	if au.ProfileID != nil {
		if prof, err = a.store.GetBrowserProfile(ctx, p.OrgID, *au.ProfileID); err != nil {
			return nil, err
		}
	}
	run := a.newRun(au, "live")
	run.Status, run.StartedAt = BrowserRunPending, nil
	ls, err := a.openSession(context.WithoutCancel(ctx), p.OrgID, au.targetHosts(prof), run.ID, false)
	if err != nil {
		return nil, err
	}
	run.SessionID = Ptr(ls.ID)
	if err := a.store.SaveBrowserRun(ctx, p.OrgID, run); err != nil {
		a.closeSession(ls)
		return nil, err
	}
	return &BrowserRunStarted{RunID: run.ID, SessionID: run.SessionID, LiveViewURL: Ptr("/browser-sessions/" + ls.ID), ProfileID: au.ProfileID, Run: run}, nil
}

// ExecuteBrowserAutomation runs a pending live run on its session and
// answers when it ends. The session is closed afterwards.
func (a *App) ExecuteBrowserAutomation(ctx context.Context, id, runID, sessionID string) (*BrowserAutomationRun, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	if runID == "" {
		ve.Add("runId", CodeRequired, nil, "runId is required")
	}
	if sessionID == "" {
		ve.Add("sessionId", CodeRequired, nil, "sessionId is required")
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	au, err := a.store.GetBrowserAutomation(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	run, err := a.store.GetBrowserRun(ctx, p.OrgID, runID)
	if err != nil || run.AutomationID == nil || *run.AutomationID != id {
		return nil, Invalid("runId", CodeUnknownReference, runID, "runId must name a run of this automation (POST .../start-live)")
	}
	if run.Status != BrowserRunPending || run.SessionID == nil || *run.SessionID != sessionID {
		return nil, Errorf(ErrConflict, "run %s is %s on session %s: only a pending live run executes, on its own session", runID, run.Status, trimmed(run.SessionID))
	}
	if _, _, err := a.browserAdapter(); err != nil {
		return nil, err
	}
	ls, err := a.session(p.OrgID, sessionID)
	if err != nil {
		return nil, Invalid("sessionId", CodeUnknownReference, sessionID, "sessionId must name an open browser session of this organization")
	}
	var prof *BrowserAuthProfile
	if au.ProfileID != nil {
		if prof, err = a.store.GetBrowserProfile(ctx, p.OrgID, *au.ProfileID); err != nil {
			return nil, err
		}
	}
	st := &a.browser
	st.mu.Lock()
	if rid, busy := st.running[au.ID]; busy {
		st.mu.Unlock()
		return nil, Errorf(ErrConflict, "run %s of this automation is still under way", rid)
	}
	st.running[au.ID] = run.ID
	ls.busy = true
	st.mu.Unlock()
	defer ls.s.Close()
	now := a.Now()
	run.Status, run.StartedAt = BrowserRunRunning, &now
	_, cfg, _ := a.browserAdapter()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.RunTimeout)
	defer cancel()
	a.executeBrowserRun(rctx, p.OrgID, au, prof, run, ls.s, func() {
		a.forgetSession(ls)
		st.mu.Lock()
		delete(st.running, au.ID)
		st.mu.Unlock()
	})
	return run, nil
}

const defaultStepTimeout = 10 * time.Second

// executeRun runs the steps, judges the run, stores screenshots, attaches
// evidence (pass) or keeps a finding open (fail), and saves the run.
func (a *App) executeBrowserRun(ctx context.Context, orgID string, au *BrowserAutomation, prof *BrowserAuthProfile, run *BrowserAutomationRun, s BrowserSession, ended func()) {
	sys := SystemContext(context.WithoutCancel(ctx), orgID)
	started := time.Now()
	if err := a.store.SaveBrowserRun(sys, orgID, run); err != nil {
		a.log.Error("save browser run", slog.String("run_id", run.ID), slog.Any("error", err))
	}
	var creds *browserCredentials
	fail := func(reason string) {
		run.EvaluationStatus, run.EvaluationReason = Ptr("fail"), Ptr(redact(reason, creds))
	}
	if prof != nil {
		c, err := a.openProfileCredentials(prof)
		if err != nil {
			fail("the auth profile's credentials could not be opened")
		} else {
			creds = c
			if prof.CredentialsConfigured {
				sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
				err := a.signIn(sctx, s, prof, creds, prof.URL)
				cancel()
				if err != nil {
					fail("sign-in with auth profile " + prof.DisplayName + " failed: " + err.Error())
					a.markNeedsReauth(sys, orgID, prof.ID, "sign-in failed during run "+run.ID+": "+redact(err.Error(), creds))
				}
			}
		}
	}
	shots := 0
	takeShot := func(name string) error {
		sctx, cancel := context.WithTimeout(ctx, defaultStepTimeout)
		defer cancel()
		png, err := s.Screenshot(sctx)
		if err != nil {
			return err
		}
		blob, err := a.files.Put(sys, bytes.NewReader(png))
		if err != nil {
			return err
		}
		shots++
		shot := BrowserScreenshot{Seq: shots, Name: name, SHA256: blob.SHA256, Size: blob.Size}
		if err := a.store.AddBrowserScreenshot(sys, orgID, run.ID, shot); err != nil {
			return err
		}
		run.Screenshots = append(run.Screenshots, shot)
		return nil
	}
	hasShotStep := false
	for i, st := range au.Steps {
		res := BrowserStepResult{Index: i, Kind: st.Kind, Status: "ok"}
		if run.EvaluationStatus != nil {
			res.Status, res.Message = "skipped", "an earlier step failed"
			run.Steps = append(run.Steps, res)
			continue
		}
		t0 := time.Now()
		d := defaultStepTimeout
		if st.TimeoutSeconds > 0 {
			d = time.Duration(st.TimeoutSeconds) * time.Second
		}
		sctx, cancel := context.WithTimeout(ctx, d)
		err := a.runStep(sctx, s, st, creds, run, &hasShotStep, takeShot)
		timedOut := errors.Is(sctx.Err(), context.DeadlineExceeded)
		cancel()
		res.DurationMs = time.Since(t0).Milliseconds()
		if err != nil {
			msg := redact(err.Error(), creds)
			if timedOut {
				msg = fmt.Sprintf("timed out after %s", d)
			}
			if refused := s.Refused(); len(refused) > 0 && st.Kind == StepNavigate {
				msg += " (refused: " + refused[len(refused)-1] + ")"
			}
			res.Status, res.Message = "failed", clip(msg, 500)
			fail(fmt.Sprintf("steps[%d] (%s) failed: %s", i, st.Kind, res.Message))
		}
		run.Steps = append(run.Steps, res)
	}
	if run.EvaluationStatus == nil {
		if reason, ok := evaluateCriteria(au.Criteria, run.Extracted); !ok {
			fail(reason)
		}
	}
	// A failing run and a run without a screenshot step keep the final screen.
	if run.EvaluationStatus != nil || !hasShotStep {
		name := "final"
		if run.EvaluationStatus != nil {
			name = "failure"
		}
		if err := takeShot(name); err != nil {
			a.log.Warn("browser run screenshot", slog.String("run_id", run.ID), slog.Any("error", err))
		}
	}
	run.Refused = s.Refused()
	if run.Refused == nil {
		run.Refused = []string{}
	}
	if run.EvaluationStatus == nil {
		run.EvaluationStatus = Ptr("pass")
		reason := fmt.Sprintf("all %d steps passed", len(au.Steps))
		if len(au.Criteria) > 0 {
			reason += fmt.Sprintf(" and %d criteria held", len(au.Criteria))
		}
		run.EvaluationReason = &reason
		run.Success = true
	}
	now := a.Now()
	run.Status, run.CompletedAt, run.DurationMs = BrowserRunCompleted, &now, time.Since(started).Milliseconds()
	if ctx.Err() != nil {
		run.Status, run.Success = BrowserRunFailed, false
		run.Error = Ptr("the run took longer than its time limit or the appliance stopped")
		fail(*run.Error)
	}
	if len(run.Screenshots) > 0 {
		run.ScreenshotURL = Ptr("/v1/browserbase/runs/" + run.ID + "/screenshot")
	}
	if au.ID != "" {
		if err := a.recordOutcome(sys, orgID, au, run); err != nil {
			a.log.Error("browser run outcome", slog.String("run_id", run.ID), slog.Any("error", err))
			run.Error = Ptr("the outcome could not be recorded on the task")
		}
	}
	ended()
	if err := a.store.SaveBrowserRun(sys, orgID, run); err != nil {
		a.log.Error("save browser run", slog.String("run_id", run.ID), slog.Any("error", err))
	}
}

func (a *App) runStep(ctx context.Context, s BrowserSession, st BrowserStep, creds *browserCredentials, run *BrowserAutomationRun,
	hasShot *bool, takeShot func(string) error) error {
	switch st.Kind {
	case StepNavigate:
		return s.Navigate(ctx, st.URL)
	case StepClick:
		return s.Click(ctx, st.Selector)
	case StepWaitFor:
		return s.WaitVisible(ctx, st.Selector)
	case StepFill:
		v := st.Value
		if st.Secret != "" {
			if creds == nil {
				return errors.New("the step fills a secret and the automation has no auth profile")
			}
			switch st.Secret {
			case "username":
				v = creds.Username
			case "password":
				v = creds.Password
			case "totp":
				if creds.TOTPSeed == "" {
					return errors.New("the auth profile has no TOTP seed")
				}
				code, err := totp.GenerateCode(creds.TOTPSeed, a.Now())
				if err != nil {
					return errors.New("the TOTP seed could not produce a code")
				}
				v = code
			}
		}
		if err := s.Fill(ctx, st.Selector, v); err != nil {
			return fmt.Errorf("the field %s could not be filled", st.Selector)
		}
		return nil
	case StepExpectText:
		txt, err := s.Text(ctx, st.Selector)
		if err != nil {
			return fmt.Errorf("no visible element matches %q", st.Selector)
		}
		if !strings.Contains(normSpace(txt), normSpace(st.Text)) {
			return fmt.Errorf("the text %q was not found on the page", st.Text)
		}
		return nil
	case StepExtractText:
		txt, err := s.Text(ctx, st.Selector)
		if err != nil {
			return fmt.Errorf("no visible element matches %q", st.Selector)
		}
		run.Extracted[st.As] = clip(strings.TrimSpace(txt), maxBrowserText)
		return nil
	case StepScreenshot:
		*hasShot = true
		return takeShot(st.Name)
	}
	return fmt.Errorf("unknown step kind %s", st.Kind)
}

func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// evaluateCriteria judges the extracted values.
func evaluateCriteria(cs []BrowserCriterion, vals map[string]string) (string, bool) {
	for i, c := range cs {
		v, ok := vals[c.Value]
		if !ok {
			return fmt.Sprintf("criteria[%d]: no value %s was extracted", i, c.Value), false
		}
		var pass bool
		switch c.Op {
		case "equals":
			pass = strings.TrimSpace(v) == c.Expected
		case "contains":
			pass = strings.Contains(v, c.Expected)
		case "notContains":
			pass = !strings.Contains(v, c.Expected)
		case "matches":
			re, err := regexp.Compile(c.Expected)
			pass = err == nil && re.MatchString(v)
		}
		if !pass {
			return fmt.Sprintf("criteria[%d]: %s %s %q does not hold (value %q)", i, c.Value, c.Op, c.Expected, clip(v, 200)), false
		}
	}
	return "", true
}

func (a *App) markNeedsReauth(ctx context.Context, orgID, id, reason string) {
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetBrowserProfile(ctx, orgID, id)
		if err != nil {
			return err
		}
		p := *before
		p.Status, p.StatusReason, p.UpdatedAt = ProfileNeedsReauth, clip(reason, 1000), a.Now()
		if err := a.store.SaveBrowserProfile(ctx, orgID, &p); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "needs_reauth", ResourceType: "browser_auth_profile", ResourceID: id, Before: before, After: &p})
	})
	if err != nil {
		a.log.Warn("mark browser profile needs reauth", slog.String("profile_id", id), slog.Any("error", err))
	}
}

// evidenceGrace is added to the schedule interval for the expiry of the
// evidence a passing run attaches; unscheduled automations' evidence
// is valid 90 days.
const evidenceGrace = 7 * 24 * time.Hour

// recordOutcome updates the automation, attaches the screenshots as
// evidence of the task (pass) and resolves its finding, or keeps one
// finding open (fail).
func (a *App) recordOutcome(ctx context.Context, orgID string, au *BrowserAutomation, run *BrowserAutomationRun) error {
	return a.store.InTx(ctx, func(ctx context.Context) error {
		cur, err := a.store.GetBrowserAutomation(ctx, orgID, au.ID)
		if errors.Is(err, ErrNotFound) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return err
		}
		t, err := a.store.GetTask(ctx, orgID, cur.TaskID)
		if err != nil {
			return err
		}
		now := a.Now()
		cur.LastRunAt, cur.LastRunStatus = &now, run.EvaluationStatus
		cur.schedule(now)
		if run.Success {
			if t.ControlID == nil {
				run.Error = Ptr("the task is not linked to a control: the screenshots were kept on the run, no evidence was attached")
			} else {
				valid := 90 * 24 * time.Hour
				if cur.ScheduleFrequency != nil {
					valid = BrowserFrequencies[*cur.ScheduleFrequency] + evidenceGrace
				}
				exp := now.Add(valid)
				for _, sh := range run.Screenshots {
					name := cleanFilename(fmt.Sprintf("browser-%s-%s-%s.png", slugName(cur.Name), sh.Name, now.Format("20060102T150405Z")))
					ev := &Evidence{ID: NewID(PrefixEvidence), ControlID: *t.ControlID, TaskID: Ptr(t.ID), Filename: name, ContentType: "image/png",
						Size: sh.Size, SHA256: sh.SHA256, ExpiresAt: &exp, UploadedBy: "browser_automation:" + cur.ID, UploadedAt: now,
						Description: clip(fmt.Sprintf("Browser automation %q passed (run %s): %s", cur.Name, run.ID, trimmed(run.EvaluationReason)), 5000)}
					if err := a.store.CreateEvidence(ctx, orgID, ev); err != nil {
						return err
					}
					if err := a.record(ctx, Mutation{Action: "created", ResourceType: "evidence", ResourceID: ev.ID, After: ev,
						Events: []Event{ResourceEvent("evidence", "created", ev)}}); err != nil {
						return err
					}
					run.EvidenceIDs = append(run.EvidenceIDs, ev.ID)
				}
				if err := a.markInProgress(ctx, orgID, *t.ControlID); err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				if err := a.reevaluateControl(ctx, orgID, *t.ControlID); err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
			}
			if cur.FindingID != nil {
				if err := a.resolveBrowserFinding(ctx, orgID, *cur.FindingID, run); err != nil {
					return err
				}
				cur.FindingID = nil
			}
		} else {
			fid, err := a.keepBrowserFindingOpen(ctx, orgID, cur, t, run)
			if err != nil {
				return err
			}
			cur.FindingID, run.FindingID = &fid, &fid
		}
		return a.store.SaveBrowserAutomation(ctx, orgID, cur)
	})
}

var browserSlugRe = regexp.MustCompile(`[^a-z0-9]+`)

func slugName(s string) string {
	s = strings.Trim(browserSlugRe.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		s = "automation"
	}
	return s
}

func (a *App) keepBrowserFindingOpen(ctx context.Context, orgID string, au *BrowserAutomation, t *Task, run *BrowserAutomationRun) (string, error) {
	if au.FindingID != nil {
		f, err := a.store.GetFinding(ctx, orgID, *au.FindingID)
		switch {
		case err == nil && (f.Status == FindingOpen || f.Status == FindingInReview):
			return f.ID, nil
		case err != nil && !errors.Is(err, ErrNotFound):
			return "", err
		}
	}
	now := a.Now()
	title := truncate("Browser automation failed: "+au.Name, maxFindingTitle-10)
	desc := fmt.Sprintf("Browser automation %q of task %q failed in run %s.\n\n%s\n\nTarget: %s", au.Name, t.Title, run.ID,
		trimmed(run.EvaluationReason), au.TargetURL)
	source := truncate("browser_automation:"+au.ID, maxFindingSource-5)
	f := &Finding{ID: NewID(PrefixFinding), Type: "soc2", Status: FindingOpen, Severity: "medium", Title: &title, Description: &desc,
		Source: &source, TaskID: Ptr(t.ID), LinkedControlIDs: []string{}, CreatedByType: "system", CreatedByID: "browser_automation:" + au.ID,
		CreatedAt: now, UpdatedAt: now}
	if t.ControlID != nil {
		f.LinkedControlIDs = []string{*t.ControlID}
	}
	f.Content = truncate(composeContent(&title, &desc), MaxFindingContent-10)
	if err := a.store.CreateFinding(ctx, orgID, f); err != nil {
		return "", err
	}
	return f.ID, a.record(ctx, Mutation{Action: "created", ResourceType: "finding", ResourceID: f.ID, After: f,
		Events: []Event{{Type: EventFindingCreated, Data: f}}})
}

func (a *App) resolveBrowserFinding(ctx context.Context, orgID, fid string, run *BrowserAutomationRun) error {
	before, err := a.store.GetFinding(ctx, orgID, fid)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if before.Status != FindingOpen && before.Status != FindingInReview {
		return nil
	}
	f := *before
	f.Status, f.UpdatedAt = FindingResolved, a.Now()
	note := "Resolved automatically: the browser automation passed in run " + run.ID + "."
	f.RevisionNote = &note
	if err := a.store.UpdateFinding(ctx, orgID, &f); err != nil {
		return err
	}
	return a.record(ctx, Mutation{Action: "resolved", ResourceType: "finding", ResourceID: fid, Before: before, After: &f})
}

// BrowserRunScreenshot opens a run's screenshot (the last when seq is 0).
func (a *App) BrowserRunScreenshot(ctx context.Context, runID string, seq int) (*BrowserScreenshot, []byte, error) {
	r, err := a.GetBrowserRun(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	if len(r.Screenshots) == 0 {
		return nil, nil, Errorf(ErrNotFound, "run %s has no screenshot", runID)
	}
	sh := r.Screenshots[len(r.Screenshots)-1]
	if seq > 0 {
		found := false
		for _, s := range r.Screenshots {
			if s.Seq == seq {
				sh, found = s, true
			}
		}
		if !found {
			return nil, nil, Errorf(ErrNotFound, "run %s has no screenshot %d", runID, seq)
		}
	}
	f, err := a.files.Open(ctx, sh.SHA256)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(f); err != nil {
		return nil, nil, err
	}
	return &sh, b.Bytes(), nil
}

// RunBrowserAutomations is the scheduled job: it starts the due runs (as
// far as the session caps allow; the rest wait for the next tick) and
// removes the profile directories of organizations that no longer exist.
func (a *App) RunBrowserAutomations(ctx context.Context) error {
	b, _, err := a.browserAdapter()
	if err != nil {
		return nil // not configured: nothing to run
	}
	due, err := a.store.DueBrowserAutomations(ctx, a.Now())
	if err != nil {
		return fmt.Errorf("due browser automations: %w", err)
	}
	for i := range due {
		au := &due[i].BrowserAutomation
		sys := SystemContext(ctx, due[i].OrgID)
		_, err := a.startRun(sys, due[i].OrgID, au, "scheduled")
		if errors.Is(err, ErrBrowserBusy) {
			break
		}
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			a.log.Warn("scheduled browser run", slog.String("automation_id", au.ID), slog.Any("error", err))
			// Push the next run out so one broken automation does not retry every tick.
			err = a.store.InTx(sys, func(ctx context.Context) error {
				cur, err := a.store.GetBrowserAutomation(ctx, due[i].OrgID, au.ID)
				if err != nil {
					return err
				}
				now := a.Now()
				cur.LastRunAt = &now
				cur.schedule(now)
				return a.store.SaveBrowserAutomation(ctx, due[i].OrgID, cur)
			})
			if err != nil {
				return err
			}
			continue
		}
		// The run's outcome sets the next run; until then it is not due again.
		err = a.store.InTx(sys, func(ctx context.Context) error {
			cur, err := a.store.GetBrowserAutomation(ctx, due[i].OrgID, au.ID)
			if err != nil {
				return err
			}
			now := a.Now()
			cur.LastRunAt = &now
			cur.schedule(now)
			return a.store.SaveBrowserAutomation(ctx, due[i].OrgID, cur)
		})
		if err != nil {
			return err
		}
	}
	return a.removeOrphanProfiles(ctx, b)
}

// removeOrphanProfiles deletes the profile directories of organizations
// that no longer exist.
func (a *App) removeOrphanProfiles(ctx context.Context, b Browser) error {
	dirs, err := b.Profiles()
	if err != nil || len(dirs) == 0 {
		return err
	}
	orgs, err := a.store.ListOrganizations(ctx)
	if err != nil {
		return err
	}
	live := map[string]bool{}
	for _, o := range orgs {
		live[o.ID] = true
	}
	for _, d := range dirs {
		if !live[d] {
			if err := b.RemoveProfile(d); err != nil {
				a.log.Warn("remove browser profile", slog.String("org_id", d), slog.Any("error", err))
			}
		}
	}
	return nil
}
