// Package github is the GitHub integration provider (slug "github"): it
// tests an organization on github.com or on GitHub Enterprise Server
// (by the connection's API base URL, https://HOST/api/v3) for two-factor
// authentication, default-branch protection and reviews, secret scanning,
// Dependabot alerts, owners and outside collaborators.
//
// It speaks GitHub's REST API with net/http and encoding/json through
// integrations/internal/restapi rather than google/go-github. The SDK was
// measured: a small program calling the eight endpoints used here grew
// from 8.86 MB (plain net/http) to 9.83 MB with go-github v93 (-trimpath,
// not stripped), and it would still need wrapping for what a run must
// guarantee: a cap on response bodies (the SDK decodes the whole body),
// caps on pages and items with loop detection (the SDK hands back
// NextPage and leaves the loop to the caller), rate limits that end a
// check with the reset time instead of sleeping inside the SDK, and error
// messages that never carry the token. Ten endpoints with typed structs of
// the few fields read are less code than that wrapping, and the same
// client serves the GitLab provider.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/internal/checkrun"
	"github.com/compliance-appliance/compliance/integrations/internal/restapi"
)

// Provider is the GitHub integration provider.
type Provider struct {
	client *http.Client
	// Concurrency is how many repositories are checked at once.
	Concurrency int
	// MaxPages, MaxItems and MaxBody bound each listing and response;
	// MaxWait is the longest rate-limit wait sat out (zero: the restapi
	// defaults).
	MaxPages int
	MaxItems int
	MaxBody  int64
	MaxWait  time.Duration
	// Sleep replaces the wait for a rate limit (tests).
	Sleep func(ctx context.Context, d time.Duration) error
}

var _ app.IntegrationProvider = (*Provider)(nil)

// New returns the provider sending through client, the appliance's outbound
// HTTP client.
func New(client *http.Client) *Provider {
	return &Provider{client: client, Concurrency: 4}
}

// Definition returns the provider's catalog entry.
func (p *Provider) Definition() app.ProviderDefinition { return definition }

// config is a connection's settings, checked.
type config struct {
	base            *url.URL
	token           string
	org             string
	repos           map[string]bool
	maxAdmins       int
	includeArchived bool
}

func setting(c app.ConnectionTarget, key string) string {
	if v := strings.TrimSpace(c.Variables[key]); v != "" {
		return v
	}
	return strings.TrimSpace(c.Credentials[key])
}

// parseConfig reads and checks a connection's settings.
func parseConfig(c app.ConnectionTarget) (*config, error) {
	cfg := &config{token: strings.TrimSpace(c.Credentials["token"]), org: setting(c, "organization"), maxAdmins: DefaultMaxAdmins}
	if cfg.token == "" {
		return nil, errors.New("the connection has no token")
	}
	if cfg.org == "" {
		return nil, errors.New("the connection names no organization")
	}
	if strings.ContainsAny(cfg.org, "/?#% ") {
		return nil, fmt.Errorf("organization %q is not a GitHub login", cfg.org)
	}
	base, err := ParseBaseURL(setting(c, "baseUrl"))
	if err != nil {
		return nil, err
	}
	cfg.base = base
	if v := setting(c, "maxAdmins"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("maxAdmins %q is not a whole number of at least 0", v)
		}
		cfg.maxAdmins = n
	}
	cfg.includeArchived, _ = strconv.ParseBool(setting(c, "includeArchived"))
	if list := checkrun.SplitList(setting(c, "repositories")); len(list) > 0 {
		cfg.repos = map[string]bool{}
		for _, r := range list {
			r = strings.ToLower(r)
			if i := strings.LastIndexByte(r, '/'); i >= 0 {
				r = r[i+1:]
			}
			cfg.repos[r] = true
		}
	}
	return cfg, nil
}

// ParseBaseURL checks an API base URL; empty is github.com. GitHub
// Enterprise Server's is https://HOST/api/v3; nothing is guessed, since a
// proxy may serve the API at its root.
func ParseBaseURL(raw string) (*url.URL, error) {
	if raw == "" {
		raw = DefaultBaseURL
	}
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("base URL %q is not an http(s) URL", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("base URL %q may not carry credentials, a query or a fragment", raw)
	}
	return u, nil
}

func (p *Provider) api(cfg *config) *restapi.Client {
	token := cfg.token
	return &restapi.Client{
		HTTP: p.client,
		Base: cfg.base,
		Authorize: func(r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+token)
		},
		Secret: token,
		Header: http.Header{
			"Accept":               {"application/vnd.github+json"},
			"X-Github-Api-Version": {"2022-11-28"},
			"User-Agent":           {"compliance-appliance"},
		},
		MaxPages: p.MaxPages,
		MaxItems: p.MaxItems,
		MaxBody:  p.MaxBody,
		MaxWait:  p.MaxWait,
		Sleep:    p.Sleep,
	}
}

// API shapes: only the fields read.

type user struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"`
}

type organization struct {
	Login                       string `json:"login"`
	ID                          int64  `json:"id"`
	Name                        string `json:"name"`
	TwoFactorRequirementEnabled *bool  `json:"two_factor_requirement_enabled"`
}

type status struct {
	Status string `json:"status"`
}

type repository struct {
	ID                  int64  `json:"id"`
	Name                string `json:"name"`
	FullName            string `json:"full_name"`
	Private             bool   `json:"private"`
	Visibility          string `json:"visibility"`
	Archived            bool   `json:"archived"`
	Disabled            bool   `json:"disabled"`
	DefaultBranch       string `json:"default_branch"`
	HTMLURL             string `json:"html_url"`
	SecurityAndAnalysis *struct {
		SecretScanning               *status `json:"secret_scanning"`
		SecretScanningPushProtection *status `json:"secret_scanning_push_protection"`
	} `json:"security_and_analysis"`
}

type collaborator struct {
	Login       string          `json:"login"`
	ID          int64           `json:"id"`
	RoleName    string          `json:"role_name"`
	Permissions map[string]bool `json:"permissions"`
}

// Test checks the token (GET /user) and the organization (GET /orgs/{org}).
func (p *Provider) Test(ctx context.Context, c app.ConnectionTarget) app.TestResult {
	cfg, err := parseConfig(c)
	if err != nil {
		return app.TestResult{Message: err.Error()}
	}
	api := p.api(cfg)
	var me user
	resp, err := api.GetJSON(ctx, "/user", &me)
	switch {
	case restapi.Status(err) == http.StatusUnauthorized:
		return app.TestResult{Message: "GitHub refused the token: " + restapi.Message(err)}
	case restapi.Status(err) == http.StatusForbidden:
		// An installation token may not read /user; the organization decides.
	case restapi.Status(err) == http.StatusNotFound && cfg.base.Path == "":
		return app.TestResult{Message: "no GitHub API at " + cfg.base.String() + ": GitHub Enterprise Server's API base URL is https://HOST/api/v3"}
	case err != nil:
		return app.TestResult{Message: "GitHub could not be asked: " + err.Error()}
	}
	var org organization
	if _, err := api.GetJSON(ctx, "/orgs/"+url.PathEscape(cfg.org), &org); err != nil {
		switch restapi.Status(err) {
		case http.StatusUnauthorized:
			return app.TestResult{Message: "GitHub refused the token: " + restapi.Message(err)}
		case http.StatusNotFound:
			return app.TestResult{Message: fmt.Sprintf("organization %q was not found, or the token cannot see it", cfg.org)}
		}
		return app.TestResult{Message: "GitHub could not be asked about the organization: " + err.Error()}
	}
	account := org.Login
	if me.Login != "" {
		account = me.Login + " in " + org.Login
	}
	msg := "Connected to the organization " + org.Login
	if resp != nil {
		if scopes := resp.Header.Get("X-Oauth-Scopes"); resp.Header.Values("X-Oauth-Scopes") != nil {
			msg += "; token scopes: " + orNone(scopes)
			if missing := missingScopes(scopes); len(missing) > 0 {
				msg += "; missing for some checks: " + strings.Join(missing, ", ")
			}
		}
	}
	if org.TwoFactorRequirementEnabled == nil {
		msg += "; the token is not an organization owner's: the two-factor checks will report errors"
	}
	return app.TestResult{Success: true, Message: msg, Account: account}
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}

// missingScopes names the classic scopes the checks need that a classic
// token lacks.
func missingScopes(scopes string) []string {
	have := map[string]bool{}
	for _, s := range strings.Split(scopes, ",") {
		have[strings.TrimSpace(s)] = true
	}
	var missing []string
	if !have["read:org"] && !have["admin:org"] && !have["write:org"] {
		missing = append(missing, "read:org")
	}
	if !have["repo"] {
		missing = append(missing, "repo")
	}
	return missing
}

// Run runs the named checks against the organization.
func (p *Provider) Run(ctx context.Context, c app.ConnectionTarget, ids []string, out app.CheckSink) error {
	cfg, err := parseConfig(c)
	if err != nil {
		return err
	}
	api := p.api(cfg)
	var org organization
	if _, err := api.GetJSON(ctx, "/orgs/"+url.PathEscape(cfg.org), &org); err != nil {
		switch restapi.Status(err) {
		case http.StatusUnauthorized:
			return fmt.Errorf("GitHub refused the token: %s", restapi.Message(err))
		case http.StatusNotFound:
			return fmt.Errorf("organization %q was not found, or the token cannot see it", cfg.org)
		}
		return fmt.Errorf("reading the organization: %w", err)
	}
	scope := checkrun.Resource{Type: "organization", ID: strconv.FormatInt(org.ID, 10), Name: org.Login}
	r := &run{p: p, cfg: cfg, api: api, org: org, scope: scope,
		Run: checkrun.New(out, definition.Checks, ids, scope)}
	r.Log("info", fmt.Sprintf("checking GitHub organization %s at %s", org.Login, cfg.base.Host))
	r.org2FA()
	r.members2FA(ctx)
	r.adminCount(ctx)
	r.repositories(ctx)
	if err := ctx.Err(); err != nil {
		r.Log("warn", "github run stopped early: "+err.Error())
	}
	r.Log("info", "github run finished: "+r.Summary())
	// Outcomes were reported (errors included); the run as a whole stands.
	return nil
}

// run is one Run's state.
type run struct {
	*checkrun.Run
	p     *Provider
	cfg   *config
	api   *restapi.Client
	org   organization
	scope checkrun.Resource
}

func (r *run) orgPath(rest string) string {
	return "/orgs/" + url.PathEscape(r.cfg.org) + rest
}

func memberResource(u user) checkrun.Resource {
	return checkrun.Resource{Type: "member", ID: strconv.FormatInt(u.ID, 10), Name: u.Login}
}

func (r *run) org2FA() {
	if !r.Selected(CheckOrg2FARequired) {
		return
	}
	switch v := r.org.TwoFactorRequirementEnabled; {
	case v == nil:
		r.ErrorMsg(CheckOrg2FARequired, r.scope, "GitHub did not show the organization's two-factor requirement: only organization owners see it (use an owner's token with read:org)", nil)
	case *v:
		r.Pass(CheckOrg2FARequired, r.scope, "the organization requires two-factor authentication", map[string]any{"twoFactorRequirementEnabled": true})
	default:
		r.Fail(CheckOrg2FARequired, r.scope, "the organization does not require two-factor authentication", map[string]any{"twoFactorRequirementEnabled": false})
	}
}

// listUsers lists a user listing, logging a truncated one.
func (r *run) listUsers(ctx context.Context, path string) ([]user, error) {
	var all []user
	res, err := restapi.List(ctx, r.api, path, func(page []user) error {
		all = append(all, page...)
		return nil
	})
	if res.Truncated {
		r.Log("warn", fmt.Sprintf("listing %s %s", strings.SplitN(path, "?", 2)[0], res.Reason))
	}
	return all, err
}

func (r *run) members2FA(ctx context.Context) {
	if !r.Selected(CheckMembersWithout2FA) {
		return
	}
	disabled, err := r.listUsers(ctx, r.orgPath("/members?filter=2fa_disabled&per_page=100"))
	if err != nil {
		if s := restapi.Status(err); s == http.StatusForbidden || s == http.StatusUnprocessableEntity {
			r.ErrorMsg(CheckMembersWithout2FA, r.scope, fmt.Sprintf(
				"GitHub refused the 2fa_disabled member filter (%d: %s): only organization owners may use it; connect with an owner's token (read:org)",
				s, restapi.Message(err)), map[string]any{"status": s})
			return
		}
		r.Error(CheckMembersWithout2FA, r.scope, err)
		return
	}
	members, err := r.listUsers(ctx, r.orgPath("/members?per_page=100"))
	if err != nil {
		r.Error(CheckMembersWithout2FA, r.scope, err)
		return
	}
	off := map[int64]bool{}
	for _, u := range disabled {
		off[u.ID] = true
	}
	seen := map[int64]bool{}
	for _, u := range append(members, disabled...) {
		if seen[u.ID] {
			continue
		}
		seen[u.ID] = true
		if off[u.ID] {
			r.Fail(CheckMembersWithout2FA, memberResource(u), u.Login+" has not enabled two-factor authentication",
				map[string]any{"login": u.Login, "twoFactorEnabled": false})
		} else {
			r.Pass(CheckMembersWithout2FA, memberResource(u), u.Login+" has two-factor authentication enabled",
				map[string]any{"login": u.Login, "twoFactorEnabled": true})
		}
	}
}

func (r *run) adminCount(ctx context.Context) {
	if !r.Selected(CheckAdminCount) {
		return
	}
	admins, err := r.listUsers(ctx, r.orgPath("/members?role=admin&per_page=100"))
	if err != nil {
		r.Error(CheckAdminCount, r.scope, err)
		return
	}
	logins := make([]string, len(admins))
	for i, a := range admins {
		logins[i] = a.Login
	}
	details := map[string]any{"owners": logins, "count": len(admins), "threshold": r.cfg.maxAdmins}
	if len(admins) > r.cfg.maxAdmins {
		r.Fail(CheckAdminCount, r.scope, fmt.Sprintf("the organization has %d owners, more than the %d allowed", len(admins), r.cfg.maxAdmins), details)
		return
	}
	r.Pass(CheckAdminCount, r.scope, fmt.Sprintf("the organization has %d owners (at most %d allowed)", len(admins), r.cfg.maxAdmins), details)
}
