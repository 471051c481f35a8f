// Package entra lists an organization's people from Microsoft Entra ID
// (formerly Azure Active Directory) through Microsoft Graph's REST API. It
// signs in as an app registration with the client-credentials grant, reads
// the users page by page following @odata.nextLink, and joins each user's
// MFA registration from the authentication-methods report. It implements
// app.DirectoryProvider.
//
// Graph is called over plain REST: the official SDK (msgraph-sdk-go
// v1.89.0) is a 194 MB module whose models package alone compiles to a
// 300 MB archive, for the two list calls used here.
package entra

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/internal/rest"
)

// Permissions the app registration needs (application permissions, with
// admin consent).
const (
	PermissionUsers = "User.Read.All"
	PermissionMFA   = "AuditLog.Read.All"
	// PermissionDevices reads Intune's managed devices (device sync).
	PermissionDevices = "DeviceManagementManagedDevices.Read.All"
	// PermissionGroups reads group memberships (role mapping).
	PermissionGroups = "GroupMember.Read.All"
)

// Clouds are the Microsoft clouds a tenant can live in, each with its
// sign-in and Graph hosts.
var clouds = map[string][2]string{
	"global":        {"https://login.microsoftonline.com", "https://graph.microsoft.com"},
	"us_government": {"https://login.microsoftonline.us", "https://graph.microsoft.us"},
	"us_dod":        {"https://login.microsoftonline.us", "https://dod-graph.microsoft.us"},
	"china":         {"https://login.chinacloudapi.cn", "https://microsoftgraph.chinacloudapi.cn"},
}

var cloudNames = []string{"global", "us_government", "us_dod", "china"}

const (
	pageSize   = 999 // Graph's maximum for users
	maxRetries = 6
	waitBudget = 3 * time.Minute
	// maxMFAEntries bounds the MFA map (id → registered): about 100 bytes
	// an entry, 50 MiB at the bound.
	maxMFAEntries = 500000
)

// Provider is the Microsoft Entra ID directory provider.
type Provider struct {
	client   *http.Client
	loginURL string   // overrides the cloud's when set
	graphURL *url.URL // overrides the cloud's when set
	log      *slog.Logger
	maxPages int
	maxBody  int64
	now      func() time.Time
}

var _ app.DirectoryProvider = (*Provider)(nil)

// Option changes a Provider.
type Option func(*Provider)

// WithLoginURL replaces the cloud's sign-in host (a test server, a
// private endpoint).
func WithLoginURL(u string) Option {
	return func(p *Provider) { p.loginURL = strings.TrimRight(u, "/") }
}

// WithGraphURL replaces the cloud's Graph host.
func WithGraphURL(u string) Option {
	return func(p *Provider) {
		if g, err := url.Parse(strings.TrimRight(u, "/")); err == nil {
			p.graphURL = g
		}
	}
}

// WithLogger sets where warnings go (an unreadable MFA report).
func WithLogger(l *slog.Logger) Option { return func(p *Provider) { p.log = l } }

// New returns the provider. client is the appliance's outbound client;
// nil means http.DefaultClient.
func New(client *http.Client, opts ...Option) *Provider {
	if client == nil {
		client = http.DefaultClient
	}
	p := &Provider{client: client, log: slog.Default(), maxPages: rest.MaxPages, maxBody: rest.MaxBody, now: time.Now}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Definition is the catalog entry.
func (p *Provider) Definition() app.ProviderDefinition {
	return app.ProviderDefinition{
		Slug:     "entra_id",
		Name:     "Microsoft Entra ID",
		Category: "directory",
		Description: "People from Microsoft Entra ID (Azure AD) through Microsoft Graph: joiners, leavers and returners " +
			"synchronised to the people register, with each person's MFA registration; Intune's managed devices into the device register.",
		DocsURL:      "https://learn.microsoft.com/graph/api/user-list",
		AuthStrategy: app.ProviderAuthAPIKey,
		Credentials: []app.CredentialField{
			{Key: "tenantId", Label: "Directory (tenant) ID", Type: "text", Required: true, Placeholder: "00000000-0000-0000-0000-000000000000",
				Help: "The tenant's ID or its primary domain (contoso.onmicrosoft.com)."},
			{Key: "clientId", Label: "Application (client) ID", Type: "text", Required: true,
				Help: "An app registration with the application permissions " + PermissionUsers + " and, for MFA status, " + PermissionMFA +
					", for device sync " + PermissionDevices + ", for group memberships " + PermissionGroups + ", admin-consented."},
			{Key: "clientSecret", Label: "Client secret", Type: "password", Secret: true, Required: true,
				Help: "The secret's value (not its ID)."},
		},
		Variables: []app.ProviderVariable{
			{Key: "cloud", Label: "Microsoft cloud", Type: "select", Default: "global", Options: cloudNames,
				Help: "global (login.microsoftonline.com, graph.microsoft.com), us_government (GCC High), us_dod, or china (21Vianet)."},
			{Key: "checkMfa", Label: "Read MFA registration", Type: "boolean", Default: "true",
				Help: "Reads the authentication-methods report (needs " + PermissionMFA + " and Entra ID P1 or P2). Without it, two-factor status is unknown."},
			{Key: "includeManager", Label: "Read each user's manager", Type: "boolean", Default: "false"},
			{Key: "includeGuests", Label: "Include guest users", Type: "boolean", Default: "false",
				Help: "Guests (userType Guest) are left out of sync unless this is on."},
			{Key: "readGroups", Label: "Read group memberships", Type: "boolean", Default: "false",
				Help: "Reads each group's members (needs " + PermissionGroups + ") so groups can map to roles; a group is named by its display name."},
		},
		Capabilities: []string{app.CapabilityEmployeeSync, app.CapabilityDeviceSync},
		Checks:       []app.CheckDefinition{},
	}
}

type settings struct {
	tenant, clientID, secret  string
	cloud                     string
	checkMFA, manager, guests bool
	groups                    bool // read group memberships (groups.go)
}

type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

var (
	tenantRe = regexp.MustCompile(`^(?i)([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+)$`)
	guidRe   = regexp.MustCompile(`^(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

func boolVar(v map[string]string, key string, def bool) (bool, error) {
	switch strings.TrimSpace(v[key]) {
	case "":
		return def, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &fieldError{key, "must be true or false"}
}

func parse(c app.ConnectionTarget) (*settings, error) {
	s := &settings{
		tenant:   strings.TrimSpace(c.Credentials["tenantId"]),
		clientID: strings.TrimSpace(c.Credentials["clientId"]),
		secret:   c.Credentials["clientSecret"],
	}
	switch {
	case s.tenant == "":
		return nil, &fieldError{"tenantId", "is required"}
	case !tenantRe.MatchString(s.tenant):
		return nil, &fieldError{"tenantId", "must be the tenant's ID (a GUID) or its domain"}
	case s.clientID == "":
		return nil, &fieldError{"clientId", "is required"}
	case !guidRe.MatchString(s.clientID):
		return nil, &fieldError{"clientId", "must be the application (client) ID, a GUID"}
	case strings.TrimSpace(s.secret) == "":
		return nil, &fieldError{"clientSecret", "is required"}
	}
	s.cloud = strings.TrimSpace(c.Variables["cloud"])
	if s.cloud == "" {
		s.cloud = "global"
	}
	if _, ok := clouds[s.cloud]; !ok {
		return nil, &fieldError{"cloud", "must be one of " + strings.Join(cloudNames, ", ")}
	}
	var err error
	if s.checkMFA, err = boolVar(c.Variables, "checkMfa", true); err != nil {
		return nil, err
	}
	if s.manager, err = boolVar(c.Variables, "includeManager", false); err != nil {
		return nil, err
	}
	if s.guests, err = boolVar(c.Variables, "includeGuests", false); err != nil {
		return nil, err
	}
	if s.groups, err = boolVar(c.Variables, "readGroups", false); err != nil {
		return nil, err
	}
	return s, nil
}

// session is one run's signed-in state.
type session struct {
	p      *Provider
	s      *settings
	graph  *url.URL
	token  string // the token endpoint
	tokens oauth2.TokenSource
	waited time.Duration
	perm   string // the permission the calls need, for a 403's hint
}

func (p *Provider) session(ctx context.Context, s *settings) *session {
	login, graph := clouds[s.cloud][0], p.graphURL
	if p.loginURL != "" {
		login = p.loginURL
	}
	if graph == nil {
		graph, _ = url.Parse(clouds[s.cloud][1])
	}
	cc := &clientcredentials.Config{
		ClientID:     s.clientID,
		ClientSecret: s.secret,
		TokenURL:     login + "/" + url.PathEscape(s.tenant) + "/oauth2/v2.0/token",
		Scopes:       []string{graph.Scheme + "://" + graph.Host + "/.default"},
		AuthStyle:    oauth2.AuthStyleInParams,
	}
	tctx := context.WithValue(ctx, oauth2.HTTPClient, p.client)
	return &session{p: p, s: s, graph: graph, token: cc.TokenURL, tokens: oauth2.ReuseTokenSource(nil, cc.TokenSource(tctx))}
}

// graphError is Graph's error body.
type graphError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// statusError is a Graph answer other than 200.
type statusError struct {
	status int
	code   string
	msg    string
	perm   string // the permission the call needs
}

func (e *statusError) Error() string {
	m := "Microsoft Graph answered " + strconv.Itoa(e.status)
	if e.code != "" {
		m += " " + e.code
	}
	if e.msg != "" {
		m += ": " + e.msg
	}
	switch e.status {
	case http.StatusUnauthorized:
		m += " (check the tenant, the application ID and the secret)"
	case http.StatusForbidden:
		perm := e.perm
		if perm == "" {
			perm = PermissionUsers
		}
		m += " (check that the app registration has the application permission " + perm + " with admin consent)"
	}
	return m
}

// get fetches a Graph URL (a path and query on the Graph host, or a next
// link) and decodes a 200 answer into out. 429 and 503/504 are retried as
// Retry-After says, within the run's wait budget.
func (ss *session) get(ctx context.Context, target string, out any) error {
	u, ok := rest.SameOrigin(ss.graph, target)
	if !ok {
		return fmt.Errorf("Microsoft Graph gave a next-page link to another host (%q): the listing is stopped", rest.Clip(target, 80))
	}
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
				return fmt.Errorf("Microsoft Graph answered %s with something that is not a list: %v", u.Path, err)
			}
			return nil
		}
		se := &statusError{status: res.Status, msg: http.StatusText(res.Status), perm: ss.perm}
		var ge graphError
		if json.Unmarshal(res.Body, &ge) == nil && (ge.Error.Code != "" || ge.Error.Message != "") {
			se.code, se.msg = ge.Error.Code, rest.Clip(rest.Scrub(ge.Error.Message, ss.s.secret), 300)
		}
		retry := res.Status == http.StatusTooManyRequests || res.Status == http.StatusServiceUnavailable || res.Status == http.StatusGatewayTimeout
		if !retry || attempt >= maxRetries {
			return se
		}
		d, ok := rest.RetryAfter(res.Header, ss.p.now())
		if !ok {
			d = time.Duration(1<<attempt) * time.Second
		}
		if ss.waited+d > waitBudget {
			return fmt.Errorf("%w; it asks to wait %s, longer than a run waits (%s)", se, d, waitBudget)
		}
		ss.waited += d
		if err := rest.Wait(ctx, d); err != nil {
			return err
		}
	}
}

// tokenError explains a refused token request with Entra's error code and
// the first line of its description (the AADSTS code and reason).
func (ss *session) tokenError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		msg := re.ErrorCode
		if d, _, _ := strings.Cut(re.ErrorDescription, "\n"); d != "" {
			msg += ": " + strings.TrimSpace(d)
		}
		if msg == "" && re.Response != nil {
			msg = re.Response.Status
		}
		return errors.New("Microsoft Entra refused the app's sign-in: " + rest.Clip(rest.Scrub(msg, ss.s.secret), 400))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("signing in to Microsoft Entra failed: %s", rest.Scrub(err.Error(), ss.s.secret))
}

func (ss *session) url(path string, q url.Values) string {
	u := *ss.graph
	u.Path = strings.TrimRight(u.Path, "/") + path
	// Graph's $-parameters are read literally; encode the rest.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "%24", "$")
	return u.String()
}

type user struct {
	ID                string `json:"id"`
	UserPrincipalName string `json:"userPrincipalName"`
	Mail              string `json:"mail"`
	DisplayName       string `json:"displayName"`
	GivenName         string `json:"givenName"`
	Surname           string `json:"surname"`
	Department        string `json:"department"`
	AccountEnabled    *bool  `json:"accountEnabled"`
	UserType          string `json:"userType"`
	Manager           *struct {
		ID                string `json:"id"`
		Mail              string `json:"mail"`
		UserPrincipalName string `json:"userPrincipalName"`
	} `json:"manager"`
}

type registration struct {
	ID              string `json:"id"`
	IsMfaRegistered bool   `json:"isMfaRegistered"`
}

const registrationPath = "/v1.0/reports/authenticationMethods/userRegistrationDetails"

func (ss *session) usersURL(top int) string {
	sel := "id,userPrincipalName,mail,displayName,givenName,surname,department,accountEnabled,userType"
	q := url.Values{"$select": {sel}, "$top": {strconv.Itoa(top)}}
	if ss.s.manager {
		q.Set("$expand", "manager($select=id,mail,userPrincipalName)")
	}
	return ss.url("/v1.0/users", q)
}

// Test signs in, reads one user and, when MFA is checked, one entry of
// the MFA report. A report Graph refuses is a warning in a successful
// result: sync then runs with two-factor status unknown.
func (p *Provider) Test(ctx context.Context, c app.ConnectionTarget) app.TestResult {
	s, err := parse(c)
	if err != nil {
		return app.TestResult{Message: err.Error()}
	}
	ss := p.session(ctx, s)
	var page collection[user]
	if err := ss.get(ctx, ss.usersURL(1), &page); err != nil {
		return app.TestResult{Message: err.Error()}
	}
	msg := "Signed in to tenant " + s.tenant + " and read its users."
	if s.checkMFA {
		var reg collection[registration]
		err := ss.get(ctx, ss.url(registrationPath, url.Values{"$top": {"1"}}), &reg)
		var se *statusError
		switch {
		case errors.As(err, &se) && (se.status == http.StatusForbidden || se.status == http.StatusUnauthorized):
			msg += " Warning: the MFA report is refused (" + se.code + ": " + se.msg + "): grant the application permission " +
				PermissionMFA + " with admin consent (the report needs Entra ID P1 or P2); until then two-factor status is unknown."
		case err != nil:
			return app.TestResult{Message: "read the users, but the MFA report failed: " + err.Error()}
		default:
			msg += " The MFA report is readable."
		}
	}
	return app.TestResult{Success: true, Message: msg, Account: "app " + s.clientID + " in tenant " + s.tenant}
}

// Run runs checks; a directory has none of its own (its data feeds sync).
func (p *Provider) Run(ctx context.Context, c app.ConnectionTarget, ids []string, out app.CheckSink) error {
	if len(ids) > 0 {
		return fmt.Errorf("the entra_id provider has no check %q", ids[0])
	}
	return nil
}

// mfa reads the whole MFA report into a map from user id to registered:
// the report and the user list page differently, so they are joined by
// id. Memory is about 100 bytes a user, bounded by maxMFAEntries. A
// refused report (no permission, no premium licence) yields nil and a
// warning: users then have no two-factor status.
func (ss *session) mfa(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	first := ss.url(registrationPath, url.Values{"$select": {"id,isMfaRegistered"}, "$top": {strconv.Itoa(pageSize)}})
	pages := 0
	err := listPages(ctx, ss, "the MFA report", first, func(regs []registration) error {
		pages++
		for _, r := range regs {
			out[r.ID] = r.IsMfaRegistered
		}
		if len(out) > maxMFAEntries {
			return fmt.Errorf("the MFA report lists more than %d users", maxMFAEntries)
		}
		return nil
	})
	var se *statusError
	if pages == 0 && errors.As(err, &se) && (se.status == http.StatusForbidden || se.status == http.StatusUnauthorized) {
		ss.p.log.Warn("entra mfa report refused; two-factor status unknown", "tenant", ss.s.tenant, "code", se.code, "status", se.status)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Users streams the tenant's users page by page (999 a page), after one
// pass over the MFA report when checkMfa is on. Guests are left out unless
// includeGuests.
func (p *Provider) Users(ctx context.Context, c app.ConnectionTarget, yield func(app.DirectoryUser) error) error {
	s, err := parse(c)
	if err != nil {
		return err
	}
	ss := p.session(ctx, s)
	var mfa map[string]bool
	if s.checkMFA {
		if mfa, err = ss.mfa(ctx); err != nil {
			return err
		}
	}
	var groups map[string][]string
	if s.groups {
		if groups, err = ss.memberships(ctx); err != nil {
			return err
		}
	}
	return listPages(ctx, ss, "users", ss.usersURL(pageSize), func(users []user) error {
		for i := range users {
			u := &users[i]
			if !s.guests && strings.EqualFold(u.UserType, "Guest") {
				continue
			}
			du := u.directoryUser(mfa, s.manager)
			du.Groups = groups[u.ID]
			if err := yield(du); err != nil {
				return err
			}
		}
		return nil
	})
}

// directoryUser maps one user: accountEnabled false is inactive; the
// e-mail is mail, or the user principal name when there is no mailbox
// (never a guest's #EXT# name); TwoFactor is isMfaRegistered when the
// report was read and lists the user.
func (u *user) directoryUser(mfa map[string]bool, manager bool) app.DirectoryUser {
	d := app.DirectoryUser{
		ExternalID: u.ID,
		Login:      u.UserPrincipalName,
		Email:      strings.TrimSpace(u.Mail),
		Name:       strings.TrimSpace(u.DisplayName),
		Department: strings.TrimSpace(u.Department),
		Active:     u.AccountEnabled == nil || *u.AccountEnabled,
	}
	if d.Email == "" && strings.Contains(u.UserPrincipalName, "@") && !strings.Contains(strings.ToUpper(u.UserPrincipalName), "#EXT#") {
		d.Email = u.UserPrincipalName
	}
	if d.Name == "" {
		d.Name = strings.TrimSpace(u.GivenName + " " + u.Surname)
	}
	if manager && u.Manager != nil {
		d.Manager = strings.TrimSpace(u.Manager.Mail)
		if d.Manager == "" {
			d.Manager = u.Manager.UserPrincipalName
		}
		if d.Manager == "" {
			d.Manager = u.Manager.ID
		}
	}
	if mfa != nil {
		if v, ok := mfa[u.ID]; ok {
			d.TwoFactor = &v
		}
	}
	return d
}
