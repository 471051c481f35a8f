// Package okta lists an organization's people from Okta through its Users
// API with an API token. It pages through every user, including suspended
// and deprovisioned ones so that leavers are seen, and reads each active
// user's enrolled factors (optionally, with bounded concurrency) for the
// two-factor status. It implements app.DirectoryProvider.
package okta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/internal/rest"
)

const (
	pageSize    = 200 // the maximum of the search form of List users
	concurrency = 4   // factor requests in flight
	maxRetries  = 6
	// waitBudget bounds the time one listing spends waiting for Okta's
	// rate limits to reset (a minute each at most).
	waitBudget = 3 * time.Minute
)

// allStatuses is the search that lists every user: without a search,
// Okta leaves deprovisioned users out, and sync would not see leavers.
const allStatuses = `status eq "STAGED" or status eq "PROVISIONED" or status eq "ACTIVE" or status eq "RECOVERY" or ` +
	`status eq "PASSWORD_EXPIRED" or status eq "LOCKED_OUT" or status eq "SUSPENDED" or status eq "DEPROVISIONED"`

// activeStatuses are the statuses of a person who works here: they can
// sign in or are about to (a password to reset, an account to unlock).
// SUSPENDED, DEPROVISIONED and STAGED (created, never activated) are not.
var activeStatuses = map[string]bool{
	"ACTIVE": true, "PROVISIONED": true, "RECOVERY": true, "PASSWORD_EXPIRED": true, "LOCKED_OUT": true,
}

// Provider is the Okta directory provider.
type Provider struct {
	client      *http.Client
	log         *slog.Logger
	maxPages    int
	maxBody     int64
	concurrency int
	now         func() time.Time
}

var _ app.DirectoryProvider = (*Provider)(nil)

// Option changes a Provider.
type Option func(*Provider)

// WithLogger sets where warnings go.
func WithLogger(l *slog.Logger) Option { return func(p *Provider) { p.log = l } }

// New returns the provider. client is the appliance's outbound client;
// nil means http.DefaultClient. The Okta org's URL is a credential, so
// tests point it at their server.
func New(client *http.Client, opts ...Option) *Provider {
	if client == nil {
		client = http.DefaultClient
	}
	p := &Provider{client: client, log: slog.Default(), maxPages: rest.MaxPages, maxBody: rest.MaxBody, concurrency: concurrency, now: time.Now}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Definition is the catalog entry.
func (p *Provider) Definition() app.ProviderDefinition {
	return app.ProviderDefinition{
		Slug:     "okta",
		Name:     "Okta",
		Category: "directory",
		Description: "People from Okta (Users API): joiners, leavers and returners synchronised to the people register, " +
			"with each person's enrolled factors; Okta's devices into the device register.",
		DocsURL:      "https://developer.okta.com/docs/api/openapi/okta-management/management/tag/User/",
		AuthStrategy: app.ProviderAuthAPIKey,
		Credentials: []app.CredentialField{
			{Key: "orgUrl", Label: "Okta org URL", Type: "url", Required: true, Placeholder: "https://acme.okta.com",
				Help: "The org's URL, without -admin."},
			{Key: "apiToken", Label: "API token", Type: "password", Secret: true, Required: true,
				Help: "An API token created by an administrator with the Read-only Administrator role."},
		},
		Variables: []app.ProviderVariable{
			{Key: "checkFactors", Label: "Read enrolled factors", Type: "boolean", Default: "true",
				Help: "One request per active user, four at a time, within Okta's rate limits. Without it, two-factor status is unknown."},
			{Key: "readGroups", Label: "Read group memberships", Type: "boolean", Default: "false",
				Help: "Reads every group's members once per sync so groups can map to roles; a group is named by its name."},
		},
		Capabilities: []string{app.CapabilityEmployeeSync, app.CapabilityDeviceSync},
		Checks:       []app.CheckDefinition{},
	}
}

type settings struct {
	org     *url.URL
	token   string
	factors bool
	groups  bool // read group memberships (groups.go)
}

type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func parse(c app.ConnectionTarget) (*settings, error) {
	raw := strings.TrimRight(strings.TrimSpace(c.Credentials["orgUrl"]), "/")
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return nil, &fieldError{"orgUrl", "is required"}
	case err != nil || u.Scheme != "https" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil:
		return nil, &fieldError{"orgUrl", "must be the org's https URL, such as https://acme.okta.com"}
	case strings.Contains(strings.ToLower(u.Hostname()), "-admin."):
		return nil, &fieldError{"orgUrl", "is the admin console's URL: use the org URL without -admin"}
	}
	s := &settings{org: u, token: strings.TrimSpace(c.Credentials["apiToken"])}
	if s.token == "" {
		return nil, &fieldError{"apiToken", "is required"}
	}
	if strings.ContainsAny(s.token, " \r\n\t") {
		return nil, &fieldError{"apiToken", "must be the token alone, without spaces or the SSWS prefix"}
	}
	switch strings.TrimSpace(c.Variables["checkFactors"]) {
	case "", "true":
		s.factors = true
	case "false":
	default:
		return nil, &fieldError{"checkFactors", "must be true or false"}
	}
	switch strings.TrimSpace(c.Variables["readGroups"]) {
	case "", "false":
	case "true":
		s.groups = true
	default:
		return nil, &fieldError{"readGroups", "must be true or false"}
	}
	return s, nil
}

// session is one run's state: the rate-limit wait spent so far is shared
// by the factor workers.
type session struct {
	p      *Provider
	s      *settings
	mu     sync.Mutex
	waited time.Duration
}

// apiError is Okta's error body.
type apiError struct {
	ErrorCode    string `json:"errorCode"`
	ErrorSummary string `json:"errorSummary"`
}

type statusError struct {
	status        int
	code, summary string
}

func (e *statusError) Error() string {
	m := "Okta answered " + strconv.Itoa(e.status)
	if e.code != "" {
		m += " " + e.code
	}
	if e.summary != "" {
		m += ": " + e.summary
	}
	switch e.status {
	case http.StatusUnauthorized:
		m += " (check the API token: it expires after 30 days unused, and when its administrator is deactivated)"
	case http.StatusForbidden:
		m += " (the token's administrator needs a role that can read users, such as Read-only Administrator)"
	}
	return m
}

// get calls Okta and returns a 200 answer. A 429 waits until
// X-Rate-Limit-Reset when that is within the run's wait budget.
func (ss *session) get(ctx context.Context, target string) (*rest.Response, error) {
	u, ok := rest.SameOrigin(ss.s.org, target)
	if !ok {
		return nil, fmt.Errorf("Okta gave a next-page link to another host (%q): the listing is stopped", rest.Clip(target, 80))
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "SSWS "+ss.s.token)
		req.Header.Set("Accept", "application/json")
		res, err := rest.Do(ss.p.client, req, ss.p.maxBody)
		if err != nil {
			return nil, err // the token is in a header, never in rest.Do's message
		}
		if res.Status == http.StatusOK {
			return res, nil
		}
		se := &statusError{status: res.Status, summary: http.StatusText(res.Status)}
		var ae apiError
		if json.Unmarshal(res.Body, &ae) == nil && (ae.ErrorCode != "" || ae.ErrorSummary != "") {
			se.code, se.summary = ae.ErrorCode, rest.Clip(rest.Scrub(ae.ErrorSummary, ss.s.token), 300)
		}
		retry := res.Status == http.StatusTooManyRequests || res.Status == http.StatusServiceUnavailable
		if !retry || attempt >= maxRetries {
			return nil, se
		}
		d, ok := ss.resetWait(res.Header)
		if !ok {
			d = time.Duration(1<<attempt) * time.Second
		}
		if err := ss.spend(d, se); err != nil {
			return nil, err
		}
		if err := rest.Wait(ctx, d); err != nil {
			return nil, err
		}
	}
}

// resetWait is the time until X-Rate-Limit-Reset (epoch seconds), plus a
// second for clock skew.
func (ss *session) resetWait(h http.Header) (time.Duration, bool) {
	if d, ok := rest.RetryAfter(h, ss.p.now()); ok {
		return d, true
	}
	n, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-Rate-Limit-Reset")), 10, 64)
	if err != nil {
		return 0, false
	}
	return max(time.Unix(n, 0).Sub(ss.p.now()), 0) + time.Second, true
}

func (ss *session) spend(d time.Duration, se *statusError) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.waited+d > waitBudget {
		return fmt.Errorf("%w: the rate limit resets in %s, beyond what a run waits (%s); try later, or turn off checkFactors to need fewer requests",
			se, d.Round(time.Second), waitBudget)
	}
	ss.waited += d
	return nil
}

type user struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Profile struct {
		Login       string `json:"login"`
		Email       string `json:"email"`
		FirstName   string `json:"firstName"`
		LastName    string `json:"lastName"`
		DisplayName string `json:"displayName"`
		Department  string `json:"department"`
		ManagerID   string `json:"managerId"`
		Manager     string `json:"manager"`
	} `json:"profile"`
}

type factor struct {
	FactorType string `json:"factorType"`
	Status     string `json:"status"`
}

// nextLink is the rel="next" target of a response's Link headers.
func nextLink(h http.Header) string {
	for _, v := range h.Values("Link") {
		for _, part := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
			if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "rel") && strings.Trim(val, `"`) == "next" {
					return target[1 : len(target)-1]
				}
			}
		}
	}
	return ""
}

// Test reads the token's own user and one user of the list.
func (p *Provider) Test(ctx context.Context, c app.ConnectionTarget) app.TestResult {
	s, err := parse(c)
	if err != nil {
		return app.TestResult{Message: err.Error()}
	}
	ss := &session{p: p, s: s}
	res, err := ss.get(ctx, s.org.String()+"/api/v1/users/me")
	if err != nil {
		return app.TestResult{Message: err.Error()}
	}
	var me user
	_ = json.Unmarshal(res.Body, &me)
	q := url.Values{"limit": {"1"}, "search": {allStatuses}}
	if _, err := ss.get(ctx, s.org.String()+"/api/v1/users?"+q.Encode()); err != nil {
		return app.TestResult{Message: "the token is valid, but listing users failed: " + err.Error()}
	}
	return app.TestResult{Success: true, Message: "Signed in to " + s.org.Host + " as " + me.Profile.Login + " and read its users.",
		Account: me.Profile.Login + " at " + s.org.Host}
}

// Run runs checks; a directory has none of its own (its data feeds sync).
func (p *Provider) Run(ctx context.Context, c app.ConnectionTarget, ids []string, out app.CheckSink) error {
	if len(ids) > 0 {
		return fmt.Errorf("the okta provider has no check %q", ids[0])
	}
	return nil
}

// Users streams every user page by page (200 a page), each page's active
// users' factors read four at a time before the page is yielded.
func (p *Provider) Users(ctx context.Context, c app.ConnectionTarget, yield func(app.DirectoryUser) error) error {
	s, err := parse(c)
	if err != nil {
		return err
	}
	ss := &session{p: p, s: s}
	var groups map[string][]string
	if s.groups {
		if groups, err = ss.memberships(ctx); err != nil {
			return err
		}
	}
	q := url.Values{"limit": {strconv.Itoa(pageSize)}, "search": {allStatuses}}
	return listPages(ctx, ss, "users", s.org.String()+"/api/v1/users?"+q.Encode(), func(users []user) error {
		out := make([]app.DirectoryUser, len(users))
		for i := range users {
			out[i] = users[i].directoryUser()
			out[i].Groups = groups[users[i].ID]
		}
		if s.factors {
			if err := ss.twoFactor(ctx, users, out); err != nil {
				return err
			}
		}
		for _, u := range out {
			if err := yield(u); err != nil {
				return err
			}
		}
		return nil
	})
}

// twoFactor reads the factors of the page's active users, a bounded
// number at a time, and sets TwoFactor: true when a factor is ACTIVE.
// A user whose factors Okta refuses (403, 404) keeps TwoFactor nil; any
// other failure stops the listing.
func (ss *session) twoFactor(ctx context.Context, users []user, out []app.DirectoryUser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		refused  int
	)
	sem := make(chan struct{}, max(ss.p.concurrency, 1))
	for i := range users {
		if !out[i].Active || users[i].ID == "" {
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			res, err := ss.get(ctx, ss.s.org.String()+"/api/v1/users/"+url.PathEscape(users[i].ID)+"/factors")
			var fs []factor
			if err == nil {
				if jerr := json.Unmarshal(res.Body, &fs); jerr != nil {
					err = fmt.Errorf("Okta answered the factors of user %s with something that is not a list: %v", users[i].ID, jerr)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			var se *statusError
			switch {
			case errors.As(err, &se) && (se.status == http.StatusForbidden || se.status == http.StatusNotFound):
				refused++
			case err != nil:
				if firstErr == nil {
					firstErr = fmt.Errorf("reading the factors of user %s: %w", users[i].ID, err)
					cancel()
				}
			default:
				v := false
				for _, f := range fs {
					if f.Status == "ACTIVE" {
						v = true
					}
				}
				out[i].TwoFactor = &v
			}
		}(i)
	}
	wg.Wait()
	if refused > 0 {
		ss.p.log.Warn("okta factors refused; two-factor status unknown for some users", "org", ss.s.org.Host, "users", refused)
	}
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// directoryUser maps one user; see activeStatuses for what is active.
func (u *user) directoryUser() app.DirectoryUser {
	pr := &u.Profile
	d := app.DirectoryUser{
		ExternalID: u.ID,
		Login:      strings.TrimSpace(pr.Login),
		Email:      strings.TrimSpace(pr.Email),
		Name:       strings.TrimSpace(pr.DisplayName),
		Department: strings.TrimSpace(pr.Department),
		Manager:    strings.TrimSpace(pr.ManagerID),
		Active:     activeStatuses[u.Status],
	}
	if d.Name == "" {
		d.Name = strings.TrimSpace(pr.FirstName + " " + pr.LastName)
	}
	if d.Manager == "" {
		d.Manager = strings.TrimSpace(pr.Manager)
	}
	if d.ExternalID == "" {
		d.ExternalID = d.Login
	}
	return d
}
