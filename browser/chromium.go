// Package browser runs headless sessions on the system's Chromium through
// the DevTools protocol (chromedp). One Chromium process serves an
// organization: its sessions are tabs sharing the organization's profile
// directory (<data dir>/browser/<orgId>), so cookies survive between runs.
// The process ends when the organization's last session closes.
package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/compliance-appliance/compliance/app"
)

// Options configure the Chromium adapter.
type Options struct {
	// ChromiumPath is the browser executable (browser.chromium_path);
	// empty: chromium, chromium-browser or google-chrome on PATH.
	ChromiumPath string
	// ProfilesDir holds one profile directory per organization.
	ProfilesDir string
	// Width and Height size the viewport (1280x800).
	Width, Height int
}

// Chromium implements app.Browser.
type Chromium struct {
	opts Options
	mu   sync.Mutex
	orgs map[string]*orgBrowser
}

var _ app.Browser = (*Chromium)(nil)

type orgBrowser struct {
	ctx      context.Context // the browser's context; tabs derive from it
	cancel   func()
	sessions int
}

// New returns the adapter; Chromium is looked up and started on the first
// session.
func New(o Options) *Chromium {
	if o.Width <= 0 || o.Height <= 0 {
		o.Width, o.Height = 1280, 800
	}
	return &Chromium{opts: o, orgs: map[string]*orgBrowser{}}
}

// Executable finds the Chromium executable or says what to install.
func (c *Chromium) Executable() (string, error) {
	if p := strings.TrimSpace(c.opts.ChromiumPath); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", app.Errorf(app.ErrBrowserUnavailable,
				"Chromium was not found at browser.chromium_path (%s): install the chromium package or correct the setting", p)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", app.Errorf(app.ErrBrowserUnavailable,
		"Chromium is not installed on this appliance: install the chromium package (apt-get install chromium, apk add chromium, dnf install chromium) or set browser.chromium_path")
}

var orgDirName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

func (c *Chromium) profileDir(orgID string) (string, error) {
	if !orgDirName.MatchString(orgID) {
		return "", fmt.Errorf("invalid organization id for a browser profile: %q", orgID)
	}
	if c.opts.ProfilesDir == "" {
		return "", errors.New("browser profiles directory is not configured")
	}
	return filepath.Join(c.opts.ProfilesDir, orgID), nil
}

// Open starts a tab in the organization's browser, launching it first when
// needed. Every request of the tab is paused and asked to req.Allow.
func (c *Chromium) Open(ctx context.Context, req app.BrowserOpen) (app.BrowserSession, error) {
	exe, err := c.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := c.profileDir(req.OrgID)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("browser profile directory: %w", err)
	}
	c.mu.Lock()
	ob := c.orgs[req.OrgID]
	if ob == nil {
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.UserDataDir(dir),
			chromedp.WindowSize(c.opts.Width, c.opts.Height), chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider"),
			chromedp.Flag("dns-prefetch-disable", true), chromedp.Flag("disable-background-networking", true))
		if os.Geteuid() == 0 {
			// Chromium's sandbox refuses to run as root.
			opts = append(opts, chromedp.NoSandbox)
		}
		actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, bcancel := chromedp.NewContext(actx)
		if err := chromedp.Do(bctx); err != nil {
			bcancel()
			acancel()
			c.mu.Unlock()
			return nil, app.Errorf(app.ErrBrowserUnavailable, "Chromium (%s) did not start: %s", exe, firstLine(err.Error()))
		}
		ob = &orgBrowser{ctx: bctx, cancel: func() { bcancel(); acancel() }}
		c.orgs[req.OrgID] = ob
	}
	ob.sessions++
	c.mu.Unlock()

	tctx, tcancel := chromedp.NewContext(ob.ctx)
	s := &session{c: c, orgID: req.OrgID, ctx: tctx, cancel: tcancel, allow: req.Allow}
	err = chromedp.Listen(tctx, s.onEvent)
	if err == nil {
		_, err = chromedp.Call(tctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}})
	}
	if err == nil {
		q := int64(60)
		_, err = chromedp.Call(tctx, page.StartScreencast, page.StartScreencastParams{Format: page.StartScreencastFormatJpeg, Quality: &q,
			MaxWidth: int64(c.opts.Width), MaxHeight: int64(c.opts.Height)})
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("open browser tab: %w", err)
	}
	return s, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

func (c *Chromium) release(orgID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ob := c.orgs[orgID]
	if ob == nil {
		return
	}
	ob.sessions--
	if ob.sessions <= 0 {
		// Closing the browser writes its cookies to the profile directory.
		ob.cancel()
		delete(c.orgs, orgID)
	}
}

// RemoveProfile deletes the organization's profile directory.
func (c *Chromium) RemoveProfile(orgID string) error {
	dir, err := c.profileDir(orgID)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if ob := c.orgs[orgID]; ob != nil {
		c.mu.Unlock()
		return fmt.Errorf("remove browser profile of %s: %w", orgID, app.Errorf(app.ErrConflict, "the organization's browser has open sessions"))
	}
	c.mu.Unlock()
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove browser profile: %w", err)
	}
	return nil
}

// Profiles lists the organizations with a profile directory.
func (c *Chromium) Profiles() ([]string, error) {
	if c.opts.ProfilesDir == "" {
		return nil, nil
	}
	ents, err := os.ReadDir(c.opts.ProfilesDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && orgDirName.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// session is one tab.
type session struct {
	c      *Chromium
	orgID  string
	ctx    context.Context
	cancel context.CancelFunc
	allow  func(u *url.URL) error

	mu      sync.Mutex
	frame   []byte
	seq     int64
	refused []string
	closed  bool
}

const maxRefused = 100

func (s *session) onEvent(ev any) {
	switch e := ev.(type) {
	case *fetch.EventRequestPaused:
		go s.decide(e)
	case *page.EventScreencastFrame:
		s.mu.Lock()
		s.frame, s.seq = e.Data, s.seq+1
		s.mu.Unlock()
		go func() {
			_, _ = chromedp.Call(s.ctx, page.ScreencastFrameAck, page.ScreencastFrameAckParams{SessionID: e.SessionID})
		}()
	}
}

// decide lets a paused request go on or fails it.
func (s *session) decide(e *fetch.EventRequestPaused) {
	u, err := url.Parse(e.Request.URL)
	if err == nil && s.allow != nil {
		err = s.allow(u)
	}
	if err != nil {
		s.mu.Lock()
		if len(s.refused) < maxRefused {
			s.refused = append(s.refused, redactURL(e.Request.URL)+": "+err.Error())
		}
		s.mu.Unlock()
	}
	if err != nil {
		_, _ = chromedp.Call(s.ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		return
	}
	_, _ = chromedp.Call(s.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
}

// redactURL drops the query and user info of a URL kept in a refusal.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	s := u.String()
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// run runs the actions on the tab, bounded by ctx (derived from the tab's
// context, so the first run that started the tab is not cut short).
func (s *session) run(ctx context.Context, actions ...chromedp.Action[chromedp.Void]) error {
	_, err := runValue(ctx, s, chromedp.Steps(actions...))
	return err
}

func runValue[T any](ctx context.Context, s *session, a chromedp.Action[T]) (T, error) {
	rctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	if dl, ok := ctx.Deadline(); ok {
		var c2 context.CancelFunc
		rctx, c2 = context.WithDeadline(rctx, dl)
		defer c2()
	}
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	return chromedp.Run(rctx, a)
}

func (s *session) Navigate(ctx context.Context, rawURL string) error {
	err := s.run(ctx, chromedp.Navigate(rawURL))
	if err != nil && strings.Contains(err.Error(), "ERR_BLOCKED_BY_CLIENT") {
		return errors.New("the request was refused: the host is outside the automation's target hosts or the network policy")
	}
	return err
}

func (s *session) Click(ctx context.Context, sel string) error {
	return s.run(ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

func (s *session) Fill(ctx context.Context, sel, value string) error {
	return s.run(ctx, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Focus(chromedp.CSS(sel)),
		chromedp.Clear(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), value))
}

func (s *session) Submit(ctx context.Context, sel string) error {
	return s.run(ctx, chromedp.Submit(chromedp.CSS(sel)))
}

func (s *session) WaitVisible(ctx context.Context, sel string) error {
	return s.run(ctx, chromedp.WaitVisible(chromedp.CSS(sel)))
}

func (s *session) Exists(ctx context.Context, sel string) (bool, error) {
	nodes, err := runValue(ctx, s, chromedp.Nodes(chromedp.CSSAll(sel), chromedp.AtLeast(0)))
	return len(nodes) > 0, err
}

func (s *session) Text(ctx context.Context, sel string) (string, error) {
	if sel == "" {
		sel = "body"
	}
	return runValue(ctx, s, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
}

func (s *session) URL(ctx context.Context) (string, error) {
	return runValue(ctx, s, chromedp.Location())
}

func (s *session) Screenshot(ctx context.Context) ([]byte, error) {
	return runValue(ctx, s, chromedp.CaptureScreenshot())
}

func (s *session) Frame() ([]byte, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frame, s.seq
}

func (s *session) Refused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.refused...)
}

func (s *session) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	// Cancel closes the tab through the protocol and waits for it.
	_ = chromedp.Cancel(s.ctx)
	s.cancel()
	s.c.release(s.orgID)
}
