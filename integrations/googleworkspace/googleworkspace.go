// Package googleworkspace lists an organization's people from Google
// Workspace through the Admin SDK Directory API. It signs in as a service
// account with domain-wide delegation, impersonating an administrator, reads
// the users page by page and maps each to an app.DirectoryUser, with the
// user's 2-Step Verification enrolment as its two-factor status. It
// implements app.DirectoryProvider.
package googleworkspace

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/internal/rest"
)

// Scope is the one OAuth scope the service account is granted.
const Scope = "https://www.googleapis.com/auth/admin.directory.user.readonly"

const (
	defaultBaseURL = "https://admin.googleapis.com"
	pageSize       = 500 // the API's maximum
	maxRetries     = 5
	// waitBudget bounds the time one listing spends waiting for rate
	// limits to clear.
	waitBudget = 2 * time.Minute
)

// Provider is the Google Workspace directory provider.
type Provider struct {
	client   *http.Client
	baseURL  *url.URL
	tokenURL string
	log      *slog.Logger
	maxPages int
	maxBody  int64
	now      func() time.Time
}

var _ app.DirectoryProvider = (*Provider)(nil)

// Option changes a Provider.
type Option func(*Provider)

// WithBaseURL sends Directory API calls to base instead of
// https://admin.googleapis.com (a test server, a private endpoint).
func WithBaseURL(base string) Option {
	return func(p *Provider) {
		if u, err := url.Parse(strings.TrimRight(base, "/")); err == nil {
			p.baseURL = u
		}
	}
}

// WithTokenURL overrides the token endpoint of every key file (by default
// the key's token_uri, https://oauth2.googleapis.com/token).
func WithTokenURL(u string) Option { return func(p *Provider) { p.tokenURL = u } }

// WithLogger sets where warnings go.
func WithLogger(l *slog.Logger) Option { return func(p *Provider) { p.log = l } }

// New returns the provider. client is the appliance's outbound client
// (network policy, proxy, timeouts); nil means http.DefaultClient.
func New(client *http.Client, opts ...Option) *Provider {
	if client == nil {
		client = http.DefaultClient
	}
	base, _ := url.Parse(defaultBaseURL)
	p := &Provider{client: client, baseURL: base, log: slog.Default(), maxPages: rest.MaxPages, maxBody: rest.MaxBody, now: time.Now}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Definition is the catalog entry.
func (p *Provider) Definition() app.ProviderDefinition {
	return app.ProviderDefinition{
		Slug:     "google_workspace",
		Name:     "Google Workspace",
		Category: "directory",
		Description: "People from Google Workspace (Admin SDK Directory API): joiners, leavers and returners synchronised " +
			"to the people register, with each person's 2-Step Verification enrolment; mobile and ChromeOS devices into the device register.",
		DocsURL:      "https://developers.google.com/admin-sdk/directory/reference/rest/v1/users/list",
		AuthStrategy: app.ProviderAuthAPIKey,
		Credentials: []app.CredentialField{
			{Key: "serviceAccountJson", Label: "Service account key (JSON)", Type: "textarea", Secret: true, Required: true,
				Help: "The JSON key file of a service account with domain-wide delegation of the scope " + Scope + "."},
		},
		Variables: []app.ProviderVariable{
			{Key: "adminEmail", Label: "Administrator to impersonate", Type: "text", Required: true,
				Help: "A Workspace administrator allowed to read users; the service account acts as this person."},
			{Key: "customer", Label: "Customer ID", Type: "text", Default: "my_customer",
				Help: "The account's customer ID (C0xxxxxxx), or my_customer for the administrator's own account. Ignored when a domain is set."},
			{Key: "domain", Label: "Domain", Type: "text",
				Help: "List only the users of this domain instead of every domain of the account."},
			{Key: "readGroups", Label: "Read group memberships", Type: "boolean", Default: "false",
				Help: "Reads every group's members once per sync (delegate " + ScopeGroups + " too) so groups, named by their e-mail address, can map to roles."},
		},
		Capabilities: []string{app.CapabilityEmployeeSync, app.CapabilityDeviceSync},
		Checks:       []app.CheckDefinition{},
	}
}

// settings are a connection's parsed credentials and variables.
type settings struct {
	conf       *oauthConfig
	adminEmail string
	customer   string
	domain     string
	secrets    []string
	groups     bool // read group memberships (groups.go)
}

// oauthConfig is the part of the key file the provider keeps.
type oauthConfig struct {
	email string
	build func(ctx context.Context) oauth2.TokenSource
}

type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

var (
	customerRe = regexp.MustCompile(`^(my_customer|[A-Za-z0-9]{1,64})$`)
	domainRe   = regexp.MustCompile(`^(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$`)
)

func (p *Provider) parse(c app.ConnectionTarget) (*settings, error) {
	switch strings.TrimSpace(c.Variables["readGroups"]) {
	case "", "false":
		return p.parseScoped(c, Scope)
	case "true":
		s, err := p.parseScoped(c, Scope, ScopeGroups)
		if s != nil {
			s.groups = true
		}
		return s, err
	}
	return nil, &fieldError{"readGroups", "must be true or false"}
}

// parseScoped is parse with the token's scopes: each listing asks only for
// what it reads, so an account that delegated the user scope alone still
// syncs people.
func (p *Provider) parseScoped(c app.ConnectionTarget, scopes ...string) (*settings, error) {
	raw := strings.TrimSpace(c.Credentials["serviceAccountJson"])
	if raw == "" {
		return nil, &fieldError{"serviceAccountJson", "is required"}
	}
	var key struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
		PrivateKey  string `json:"private_key"`
		TokenURI    string `json:"token_uri"`
	}
	if json.Unmarshal([]byte(raw), &key) != nil {
		return nil, &fieldError{"serviceAccountJson", "is not a JSON key file"}
	}
	if key.Type != "service_account" || key.ClientEmail == "" || key.PrivateKey == "" {
		return nil, &fieldError{"serviceAccountJson", `must be a service account's key file (type "service_account" with client_email and private_key)`}
	}
	if !validKey(key.PrivateKey) {
		return nil, &fieldError{"serviceAccountJson", "private_key is not a PEM RSA private key"}
	}
	s := &settings{secrets: []string{raw, key.PrivateKey}}
	v := c.Variables
	s.adminEmail = strings.TrimSpace(v["adminEmail"])
	if s.adminEmail == "" {
		return nil, &fieldError{"adminEmail", "is required: the administrator the service account impersonates"}
	}
	if a, err := mail.ParseAddress(s.adminEmail); err != nil || a.Address != s.adminEmail {
		return nil, &fieldError{"adminEmail", "is not an e-mail address"}
	}
	s.customer = strings.TrimSpace(v["customer"])
	if s.customer == "" {
		s.customer = "my_customer"
	}
	if !customerRe.MatchString(s.customer) {
		return nil, &fieldError{"customer", "must be my_customer or a customer ID such as C01abc23d"}
	}
	s.domain = strings.ToLower(strings.TrimSpace(v["domain"]))
	if s.domain != "" && !domainRe.MatchString(s.domain) {
		return nil, &fieldError{"domain", "is not a domain name"}
	}
	cfg, err := google.JWTConfigFromJSON([]byte(raw), scopes...)
	if err != nil {
		return nil, &fieldError{"serviceAccountJson", "cannot be read as a service account key file"}
	}
	cfg.Subject = s.adminEmail
	if p.tokenURL != "" {
		cfg.TokenURL = p.tokenURL
	}
	if tu, err := url.Parse(cfg.TokenURL); err != nil || tu.Scheme != "https" || tu.Host == "" {
		return nil, &fieldError{"serviceAccountJson", "token_uri must be an https URL"}
	}
	s.conf = &oauthConfig{email: key.ClientEmail, build: func(ctx context.Context) oauth2.TokenSource {
		return oauth2.ReuseTokenSource(nil, cfg.TokenSource(ctx))
	}}
	return s, nil
}

// validKey reports whether the key file's private key can sign, so a
// damaged key is named at once rather than at the first token request.
func validKey(p string) bool {
	b, _ := pem.Decode([]byte(p))
	if b == nil {
		return false
	}
	if _, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
		return true
	}
	_, err := x509.ParsePKCS1PrivateKey(b.Bytes)
	return err == nil
}

// session is one run's signed-in state.
type session struct {
	p      *Provider
	s      *settings
	tokens oauth2.TokenSource
	waited time.Duration
}

func (p *Provider) session(ctx context.Context, s *settings) *session {
	// The token requests go through the appliance's client too.
	tctx := context.WithValue(ctx, oauth2.HTTPClient, p.client)
	return &session{p: p, s: s, tokens: s.conf.build(tctx)}
}

// apiError is Google's error body.
type apiError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}

// get calls the Directory API and decodes a 200 answer into out. It
// retries 429 and 5xx answers, waiting as Retry-After says or backing off,
// within the run's wait budget.
func (ss *session) get(ctx context.Context, path string, q url.Values, out any) error {
	u := *ss.p.baseURL
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawQuery = q.Encode()
	for attempt := 0; ; attempt++ {
		tok, err := ss.tokens.Token()
		if err != nil {
			return ss.tokenError(ctx, err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return err
		}
		tok.SetAuthHeader(req)
		req.Header.Set("Accept", "application/json")
		res, err := rest.Do(ss.p.client, req, ss.p.maxBody)
		if err != nil {
			return err
		}
		if res.Status == http.StatusOK {
			if err := json.Unmarshal(res.Body, out); err != nil {
				return fmt.Errorf("Google answered %s with something that is not a list: %v", path, err)
			}
			return nil
		}
		msg := ss.message(res)
		switch {
		case res.Status == http.StatusUnauthorized:
			return errors.New("Google refused the request (401): " + msg)
		case res.Status == http.StatusForbidden:
			return errors.New("Google refused the request (403): " + msg + " (adminEmail must be an administrator allowed to read users of this customer or domain)")
		case res.Status == http.StatusNotFound || res.Status == http.StatusBadRequest:
			return errors.New("Google refused the request (" + strconv.Itoa(res.Status) + "): " + msg + " (check the customer ID or domain)")
		case (res.Status == http.StatusTooManyRequests || res.Status >= 500) && attempt < maxRetries:
			d, ok := rest.RetryAfter(res.Header, ss.p.now())
			if !ok {
				d = time.Duration(1<<attempt) * time.Second
			}
			if ss.waited+d > waitBudget {
				return fmt.Errorf("Google is rate limiting the listing (%d: %s) for longer than a run waits (%s)", res.Status, msg, waitBudget)
			}
			ss.waited += d
			if err := rest.Wait(ctx, d); err != nil {
				return err
			}
		default:
			return fmt.Errorf("Google answered %d: %s", res.Status, msg)
		}
	}
}

func (ss *session) message(res *rest.Response) string {
	var e apiError
	msg := http.StatusText(res.Status)
	if json.Unmarshal(res.Body, &e) == nil && e.Error.Message != "" {
		msg = e.Error.Message
		if e.Error.Status != "" {
			msg += " [" + e.Error.Status + "]"
		}
	}
	return rest.Clip(rest.Scrub(msg, ss.s.secrets...), 300)
}

// tokenError explains a failed token request without its body's details
// beyond Google's error code and description.
func (ss *session) tokenError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code, desc := re.ErrorCode, re.ErrorDescription
		if code == "" {
			// The JWT flow leaves the body unparsed.
			var body struct {
				Error            string `json:"error"`
				ErrorDescription string `json:"error_description"`
			}
			if json.Unmarshal(re.Body, &body) == nil {
				code, desc = body.Error, body.ErrorDescription
			}
		}
		msg := code
		if desc != "" {
			msg += ": " + desc
		}
		if msg == "" && re.Response != nil {
			msg = re.Response.Status
		}
		hint := ""
		if code == "unauthorized_client" {
			hint = " (grant the service account's client ID domain-wide delegation of " + Scope + " in the Admin console)"
		}
		if code == "invalid_grant" {
			hint = " (check that adminEmail is an existing administrator and the key is not revoked)"
		}
		return errors.New("Google refused the service account's token request: " + rest.Clip(rest.Scrub(msg, ss.s.secrets...), 300) + hint)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("getting a token for the service account failed: %s", rest.Scrub(err.Error(), ss.s.secrets...))
}

// user is the part of the Directory API's user resource sync reads.
type user struct {
	ID           string `json:"id"`
	PrimaryEmail string `json:"primaryEmail"`
	Name         struct {
		FullName   string `json:"fullName"`
		GivenName  string `json:"givenName"`
		FamilyName string `json:"familyName"`
	} `json:"name"`
	Suspended       bool   `json:"suspended"`
	Archived        bool   `json:"archived"`
	IsEnrolledIn2Sv *bool  `json:"isEnrolledIn2Sv"`
	IsEnforcedIn2Sv bool   `json:"isEnforcedIn2Sv"`
	OrgUnitPath     string `json:"orgUnitPath"`
	Organizations   []struct {
		Department string `json:"department"`
		Primary    bool   `json:"primary"`
	} `json:"organizations"`
	Relations []struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"relations"`
}

type userPage struct {
	Users         []user `json:"users"`
	NextPageToken string `json:"nextPageToken"`
}

func (s *settings) query(pageToken string, max int) url.Values {
	q := url.Values{}
	if s.domain != "" {
		q.Set("domain", s.domain)
	} else {
		q.Set("customer", s.customer)
	}
	q.Set("maxResults", strconv.Itoa(max))
	q.Set("projection", "full")
	q.Set("orderBy", "email")
	if pageToken != "" {
		q.Set("pageToken", pageToken)
	}
	return q
}

// Test gets a token as the administrator and reads one user.
func (p *Provider) Test(ctx context.Context, c app.ConnectionTarget) app.TestResult {
	s, err := p.parse(c)
	if err != nil {
		return app.TestResult{Message: err.Error()}
	}
	var page userPage
	if err := p.session(ctx, s).get(ctx, "/admin/directory/v1/users", s.query("", 1), &page); err != nil {
		return app.TestResult{Message: err.Error()}
	}
	scope := "customer " + s.customer
	if s.domain != "" {
		scope = "domain " + s.domain
	}
	msg := "Signed in as " + s.conf.email + " impersonating " + s.adminEmail + " and read the users of " + scope + "."
	if len(page.Users) == 0 {
		msg += " The directory has no users."
	}
	return app.TestResult{Success: true, Message: msg, Account: s.conf.email + " as " + s.adminEmail}
}

// Run runs checks; a directory has none of its own (its data feeds sync).
func (p *Provider) Run(ctx context.Context, c app.ConnectionTarget, ids []string, out app.CheckSink) error {
	if len(ids) > 0 {
		return fmt.Errorf("the google_workspace provider has no check %q", ids[0])
	}
	return nil
}

// Users streams the directory's users page by page (500 a page). A
// repeated page token or more than the page bound is an error, never an
// endless run.
func (p *Provider) Users(ctx context.Context, c app.ConnectionTarget, yield func(app.DirectoryUser) error) error {
	s, err := p.parse(c)
	if err != nil {
		return err
	}
	ss := p.session(ctx, s)
	var groups map[string][]string
	if s.groups {
		if groups, err = ss.memberships(ctx); err != nil {
			return err
		}
	}
	query := func(token string) url.Values { return s.query(token, pageSize) }
	return listPages(ctx, ss, "users", "/admin/directory/v1/users", query, func(res *userPage) (string, error) {
		for i := range res.Users {
			du := res.Users[i].directoryUser()
			du.Groups = append(du.Groups, groups[res.Users[i].ID]...)
			if err := yield(du); err != nil {
				return "", err
			}
		}
		return res.NextPageToken, nil
	})
}

// directoryUser maps one user. Suspended or archived users are inactive;
// TwoFactor is the 2-Step Verification enrolment; the organizational unit
// is the one group (for role mapping).
func (u *user) directoryUser() app.DirectoryUser {
	d := app.DirectoryUser{
		ExternalID: u.ID,
		Login:      u.PrimaryEmail,
		Email:      u.PrimaryEmail,
		Name:       strings.TrimSpace(u.Name.FullName),
		Active:     !u.Suspended && !u.Archived,
	}
	if d.Name == "" {
		d.Name = strings.TrimSpace(u.Name.GivenName + " " + u.Name.FamilyName)
	}
	if d.ExternalID == "" {
		d.ExternalID = u.PrimaryEmail
	}
	for _, o := range u.Organizations {
		if dep := strings.TrimSpace(o.Department); dep != "" && (d.Department == "" || o.Primary) {
			d.Department = dep
		}
	}
	for _, r := range u.Relations {
		if r.Type == "manager" && d.Manager == "" {
			d.Manager = strings.TrimSpace(r.Value)
		}
	}
	if u.OrgUnitPath != "" {
		d.Groups = []string{u.OrgUnitPath}
	}
	if u.IsEnrolledIn2Sv != nil {
		v := *u.IsEnrolledIn2Sv
		d.TwoFactor = &v
	}
	return d
}
