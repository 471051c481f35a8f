package app

import (
	"context"
	"errors"
	"net/url"
)

// ErrBrowserUnavailable is a browser operation on an appliance whose
// Chromium cannot be started (not installed, not configured): the API
// answers 503 with the message of the PublicError wrapping it.
var ErrBrowserUnavailable = errors.New("browser unavailable")

// ErrBrowserBusy is a session refused because the appliance or the
// organization already holds as many browser sessions as allowed: the API
// answers 429 with the message of the PublicError wrapping it.
var ErrBrowserBusy = errors.New("too many browser sessions")

// Browser launches headless browser sessions (the browser package
// implements it on the system's Chromium). Sessions of one organization
// share the organization's persistent profile directory, so cookies
// survive between runs.
type Browser interface {
	// Open starts a session (a tab) in the organization's browser. Errors
	// wrap ErrBrowserUnavailable when Chromium cannot be started.
	Open(ctx context.Context, req BrowserOpen) (BrowserSession, error)
	// RemoveProfile deletes the organization's profile directory; the
	// organization's browser must have no open session.
	RemoveProfile(orgID string) error
	// Profiles lists the organizations that have a profile directory.
	Profiles() ([]string, error)
}

// BrowserOpen is what a session is opened with.
type BrowserOpen struct {
	OrgID string
	// Allow is asked before every request the page makes (navigations,
	// frames, scripts, images, fetches); an error refuses the request.
	Allow func(u *url.URL) error
}

// BrowserSession is one tab. Selectors are CSS selectors; a selector list
// ("a, b") matches the first element any of them finds.
type BrowserSession interface {
	Navigate(ctx context.Context, rawURL string) error
	Click(ctx context.Context, selector string) error
	// Fill replaces the value of an input by typing into it.
	Fill(ctx context.Context, selector, value string) error
	// Submit submits the form of the element.
	Submit(ctx context.Context, selector string) error
	WaitVisible(ctx context.Context, selector string) error
	// Exists reports whether an element matches, without waiting.
	Exists(ctx context.Context, selector string) (bool, error)
	// Text is the visible text of the first element matching (the body
	// when selector is empty).
	Text(ctx context.Context, selector string) (string, error)
	URL(ctx context.Context) (string, error)
	// Screenshot is a PNG of the viewport.
	Screenshot(ctx context.Context) ([]byte, error)
	// Frame is the latest screencast frame (JPEG) and its sequence number,
	// nil before the first frame.
	Frame() ([]byte, int64)
	// Refused lists the URLs the session refused, oldest first.
	Refused() []string
	Close()
}
