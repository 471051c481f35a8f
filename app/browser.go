package app

import (
	"context"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Browser automation step kinds: the declarative language of automations.
const (
	StepNavigate    = "navigate"
	StepClick       = "click"
	StepFill        = "fill"
	StepWaitFor     = "waitFor"
	StepExpectText  = "expectText"
	StepScreenshot  = "screenshot"
	StepExtractText = "extractText"
)

// BrowserStepKinds lists the step kinds.
var BrowserStepKinds = []string{StepNavigate, StepClick, StepFill, StepWaitFor, StepExpectText, StepScreenshot, StepExtractText}

// Secret references a fill step may use instead of a value: the credentials
// of the automation's auth profile, filled without ever being written down.
var BrowserSecretRefs = []string{"username", "password", "totp"}

// BrowserFrequencies are the schedule frequencies (reference: TaskFrequency).
var BrowserFrequencies = map[string]time.Duration{
	"daily": 24 * time.Hour, "weekly": 7 * 24 * time.Hour, "monthly": 30 * 24 * time.Hour,
	"quarterly": 91 * 24 * time.Hour, "yearly": 365 * 24 * time.Hour,
}

// Auth profile statuses (reference: BrowserAuthProfileStatus).
const (
	ProfileUnverified  = "unverified"
	ProfileVerified    = "verified"
	ProfileNeedsReauth = "needs_reauth"
	ProfileBlocked     = "blocked"
)

// Browser run statuses.
const (
	BrowserRunPending     = "pending"
	BrowserRunRunning     = "running"
	BrowserRunCompleted   = "completed"
	BrowserRunFailed      = "failed"
	BrowserRunInterrupted = "interrupted"
)

// Limits of browser automation input.
const (
	MaxBrowserSteps       = 50
	maxBrowserText        = 2000
	maxBrowserSelector    = 500
	maxBrowserHosts       = 20
	maxBrowserCriteria    = 20
	maxBrowserStepTimeout = 60
)

// BrowserStep is one step of an automation. Which fields apply depends on
// the kind: navigate{url}, click{selector}, fill{selector, value | secret},
// waitFor{selector}, expectText{text, selector?}, screenshot{name},
// extractText{selector, as}.
type BrowserStep struct {
	Kind     string `json:"kind"`
	URL      string `json:"url,omitempty"`
	Selector string `json:"selector,omitempty"`
	Value    string `json:"value,omitempty"`
	// Secret fills a credential of the automation's auth profile:
	// username, password or totp (the current code).
	Secret string `json:"secret,omitempty"`
	Text   string `json:"text,omitempty"`
	Name   string `json:"name,omitempty"`
	As     string `json:"as,omitempty"`
	// TimeoutSeconds bounds the step (10 s by default, at most 60).
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
}

// BrowserCriterion judges a value an extractText step kept: op is equals,
// contains, notContains or matches (a regular expression).
type BrowserCriterion struct {
	Value    string `json:"value"`
	Op       string `json:"op"`
	Expected string `json:"expected"`
}

// BrowserCriterionOps lists the criterion operators.
var BrowserCriterionOps = []string{"equals", "contains", "notContains", "matches"}

// BrowserAutomation is a task's browser automation.
type BrowserAutomation struct {
	ID                 string             `json:"id"`
	TaskID             string             `json:"taskId"`
	Name               string             `json:"name"`
	Description        string             `json:"description"`
	TargetURL          string             `json:"targetUrl"`
	Instruction        string             `json:"instruction"`
	EvaluationCriteria string             `json:"evaluationCriteria"`
	ProfileID          *string            `json:"profileId"`
	Steps              []BrowserStep      `json:"steps"`
	Criteria           []BrowserCriterion `json:"criteria"`
	// AllowedHosts are hosts besides the target URL's and the navigate
	// steps' that the page may load from (a CDN, a sign-in host).
	AllowedHosts      []string   `json:"allowedHosts"`
	IsEnabled         bool       `json:"isEnabled"`
	ScheduleFrequency *string    `json:"scheduleFrequency"`
	NextRunAt         *time.Time `json:"nextRunAt"`
	LastRunAt         *time.Time `json:"lastRunAt"`
	LastRunStatus     *string    `json:"lastRunStatus"`
	// FindingID is the finding a failing run opened (kept while it fails).
	FindingID *string   `json:"findingId"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// BrowserAutomationInput is the body of POST and PATCH
// /v1/browserbase/automations (PATCH: absent fields are kept).
type BrowserAutomationInput struct {
	TaskID             *string            `json:"taskId"`
	Name               *string            `json:"name"`
	Description        *string            `json:"description"`
	TargetURL          *string            `json:"targetUrl"`
	Instruction        *string            `json:"instruction"`
	EvaluationCriteria *string            `json:"evaluationCriteria"`
	ProfileID          Opt[string]        `json:"profileId"`
	Steps              []BrowserStep      `json:"steps"`
	Criteria           []BrowserCriterion `json:"criteria"`
	AllowedHosts       []string           `json:"allowedHosts"`
	IsEnabled          *bool              `json:"isEnabled"`
	ScheduleFrequency  Opt[string]        `json:"scheduleFrequency"`
}

// BrowserStepResult is what one step of a run did.
type BrowserStepResult struct {
	Index      int    `json:"index"`
	Kind       string `json:"kind"`
	Status     string `json:"status"` // ok, failed, skipped
	Message    string `json:"message"`
	DurationMs int64  `json:"durationMs"`
}

// BrowserScreenshot is a screenshot a run took.
type BrowserScreenshot struct {
	Seq    int    `json:"seq"`
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// BrowserAutomationRun is one run of an automation (or of a test).
type BrowserAutomationRun struct {
	ID               string              `json:"id"`
	AutomationID     *string             `json:"automationId"`
	TaskID           *string             `json:"taskId"`
	Status           string              `json:"status"`
	Trigger          string              `json:"trigger"` // manual, scheduled, test, live
	SessionID        *string             `json:"sessionId"`
	Success          bool                `json:"success"`
	EvaluationStatus *string             `json:"evaluationStatus"` // pass, fail
	EvaluationReason *string             `json:"evaluationReason"`
	Steps            []BrowserStepResult `json:"steps"`
	Extracted        map[string]string   `json:"extracted"`
	Screenshots      []BrowserScreenshot `json:"screenshots"`
	ScreenshotURL    *string             `json:"screenshotUrl"`
	Refused          []string            `json:"refusedRequests"`
	EvidenceIDs      []string            `json:"evidenceIds"`
	FindingID        *string             `json:"findingId"`
	Error            *string             `json:"error"`
	DurationMs       int64               `json:"durationMs"`
	CreatedAt        time.Time           `json:"createdAt"`
	StartedAt        *time.Time          `json:"startedAt"`
	CompletedAt      *time.Time          `json:"completedAt"`
}

// BrowserAuthProfile is a sign-in to one site: its login URL and sealed
// credentials (only whether they are configured is ever returned).
type BrowserAuthProfile struct {
	ID            string `json:"id"`
	DisplayName   string `json:"displayName"`
	URL           string `json:"url"`
	Hostname      string `json:"hostname"`
	LoginIdentity string `json:"loginIdentity"`
	Status        string `json:"status"`
	StatusReason  string `json:"statusReason"`
	// Selectors override how the sign-in form is found.
	Selectors                BrowserLoginSelectors `json:"selectors"`
	VerifyText               string                `json:"verifyText"`
	VerifyURLContains        string                `json:"verifyUrlContains"`
	CredentialsConfigured    bool                  `json:"credentialsConfigured"`
	TOTPConfigured           bool                  `json:"totpConfigured"`
	ExtraFieldLabels         []string              `json:"extraFieldLabels"`
	LastSignInAt             *time.Time            `json:"lastSignInAt"`
	LastVerifiedAt           *time.Time            `json:"lastVerifiedAt"`
	CreatedAt                time.Time             `json:"createdAt"`
	UpdatedAt                time.Time             `json:"updatedAt"`
	sealed                   []byte
	credentialsSealedChanged bool
}

// Sealed returns the sealed credentials (storage only).
func (p *BrowserAuthProfile) Sealed() []byte { return p.sealed }

// SetSealed sets the sealed credentials (storage only).
func (p *BrowserAuthProfile) SetSealed(b []byte) { p.sealed = b }

// BrowserLoginSelectors are CSS selectors of the sign-in form; empty ones
// are found by name, type and autocomplete attributes.
type BrowserLoginSelectors struct {
	Username string `json:"username"`
	Password string `json:"password"`
	TOTP     string `json:"totp"`
	Submit   string `json:"submit"`
}

// browserCredentials is what a profile seals.
type browserCredentials struct {
	Username    string              `json:"username"`
	Password    string              `json:"password"`
	TOTPSeed    string              `json:"totpSeed,omitempty"`
	ExtraFields []BrowserExtraField `json:"extraFields,omitempty"`
}

// BrowserExtraField is another field of the sign-in form (a tenant, a
// domain) filled by its label.
type BrowserExtraField struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// BrowserProfileInput is the body of POST /v1/browserbase/profiles/resolve
// and PATCH /v1/browserbase/profiles/{profileId}.
type BrowserProfileInput struct {
	URL               *string                `json:"url"`
	DisplayName       *string                `json:"displayName"`
	LoginIdentity     *string                `json:"loginIdentity"`
	Selectors         *BrowserLoginSelectors `json:"selectors"`
	VerifyText        *string                `json:"verifyText"`
	VerifyURLContains *string                `json:"verifyUrlContains"`
}

// BrowserCredentialsInput is the body of POST .../profiles/{id}/credentials.
type BrowserCredentialsInput struct {
	Username      *string             `json:"username"`
	Password      *string             `json:"password"`
	TOTPSeed      *string             `json:"totpSeed"`
	ExtraFields   []BrowserExtraField `json:"extraFields"`
	UsernameLabel *string             `json:"usernameLabel"`
}

// BrowserDraft is an automation being written.
type BrowserDraft struct {
	ID        string        `json:"id"`
	TaskID    string        `json:"taskId"`
	Name      string        `json:"name"`
	Steps     []BrowserStep `json:"steps"`
	CreatedAt time.Time     `json:"createdAt"`
	UpdatedAt time.Time     `json:"updatedAt"`
}

// BrowserDraftInput is the body of POST and PATCH .../automation-drafts.
type BrowserDraftInput struct {
	TaskID *string       `json:"taskId"`
	Name   *string       `json:"name"`
	Steps  []BrowserStep `json:"steps"`
}

// BrowserContext is an organization's browser context: its persistent
// profile directory on the appliance.
type BrowserContext struct {
	ContextID string    `json:"contextId"`
	CreatedAt time.Time `json:"createdAt"`
}

// BrowserStore persists browser automations.
type BrowserStore interface {
	GetBrowserContext(ctx context.Context, orgID string) (*BrowserContext, error)
	CreateBrowserContext(ctx context.Context, orgID string, c *BrowserContext) error
	DeleteBrowserContext(ctx context.Context, orgID string) error
	SaveBrowserProfile(ctx context.Context, orgID string, p *BrowserAuthProfile) error
	GetBrowserProfile(ctx context.Context, orgID, id string) (*BrowserAuthProfile, error)
	ListBrowserProfiles(ctx context.Context, orgID string) ([]BrowserAuthProfile, error)
	DeleteBrowserProfile(ctx context.Context, orgID, id string) error
	SaveBrowserAutomation(ctx context.Context, orgID string, au *BrowserAutomation) error
	GetBrowserAutomation(ctx context.Context, orgID, id string) (*BrowserAutomation, error)
	// ListBrowserAutomations lists the task's automations (all of the
	// organization's when taskID is empty).
	ListBrowserAutomations(ctx context.Context, orgID, taskID string) ([]BrowserAutomation, error)
	DeleteBrowserAutomation(ctx context.Context, orgID, id string) error
	// DueBrowserAutomations lists, over every organization, the automations
	// whose next run is at or before now, as (organization id, automation).
	DueBrowserAutomations(ctx context.Context, now time.Time) ([]OrgBrowserAutomation, error)
	SaveBrowserRun(ctx context.Context, orgID string, r *BrowserAutomationRun) error
	GetBrowserRun(ctx context.Context, orgID, id string) (*BrowserAutomationRun, error)
	// ListBrowserRuns lists runs, newest first, of an automation or (with
	// automationID empty) of a task.
	ListBrowserRuns(ctx context.Context, orgID, automationID, taskID string, limit int) ([]BrowserAutomationRun, error)
	// BrowserRunsByStatus lists runs in a status over every organization.
	BrowserRunsByStatus(ctx context.Context, status string) ([]OrgBrowserRun, error)
	AddBrowserScreenshot(ctx context.Context, orgID, runID string, s BrowserScreenshot) error
	SaveBrowserDraft(ctx context.Context, orgID string, d *BrowserDraft) error
	GetBrowserDraft(ctx context.Context, orgID, id string) (*BrowserDraft, error)
	ListBrowserDrafts(ctx context.Context, orgID, taskID string) ([]BrowserDraft, error)
	DeleteBrowserDraft(ctx context.Context, orgID, id string) error
}

// OrgBrowserAutomation is an automation with its organization.
type OrgBrowserAutomation struct {
	OrgID string
	BrowserAutomation
}

// OrgBrowserRun is a run with its organization.
type OrgBrowserRun struct {
	OrgID string
	BrowserAutomationRun
}

// browserReader authorizes a read: owners, admins and auditors; employees
// and contractors do not see browser automations.
func (a *App) browserReader(ctx context.Context) (*Principal, error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() {
		return nil, Errorf(ErrForbidden, "the %s role may not read browser automations", p.Role)
	}
	return p, nil
}

var (
	cssNameRe  = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,80}$`)
	hostNameRe = regexp.MustCompile(`^(\*\.)?[A-Za-z0-9.-]{1,253}$`)
)

// validateSteps checks a step list, naming the failing field
// (steps[3].kind).
func validateSteps(ve *ValidationError, field string, steps []BrowserStep, required bool) {
	if len(steps) == 0 {
		if required {
			ve.Add(field, CodeRequired, nil, field+" is required: a list of steps (navigate, click, fill, waitFor, expectText, screenshot, extractText); natural-language instructions are not turned into steps on this appliance")
		}
		return
	}
	if len(steps) > MaxBrowserSteps {
		ve.Add(field, CodeInvalid, len(steps), fmt.Sprintf("%s may hold at most %d steps", field, MaxBrowserSteps))
		return
	}
	for i := range steps {
		s := &steps[i]
		f := fmt.Sprintf("%s[%d]", field, i)
		s.Kind = strings.TrimSpace(s.Kind)
		s.Selector = strings.TrimSpace(s.Selector)
		needSel := func() {
			if s.Selector == "" {
				ve.Add(f+".selector", CodeRequired, nil, f+".selector is required for a "+s.Kind+" step")
			}
			maxLen(ve, f+".selector", s.Selector, maxBrowserSelector)
		}
		switch s.Kind {
		case StepNavigate:
			if !validURL(s.URL) {
				ve.Add(f+".url", CodeInvalid, s.URL, f+".url must be an absolute http or https URL")
			}
		case StepClick, StepWaitFor:
			needSel()
		case StepFill:
			needSel()
			switch {
			case s.Secret != "" && s.Value != "":
				ve.Add(f+".secret", CodeInvalid, s.Secret, f+" takes a value or a secret, not both")
			case s.Secret != "" && !containsString(BrowserSecretRefs, s.Secret):
				ve.Add(f+".secret", CodeInvalidEnum, s.Secret, f+".secret must be one of username, password, totp")
			}
			maxLen(ve, f+".value", s.Value, maxBrowserText)
		case StepExpectText:
			if strings.TrimSpace(s.Text) == "" {
				ve.Add(f+".text", CodeRequired, nil, f+".text is required for an expectText step")
			}
			maxLen(ve, f+".text", s.Text, maxBrowserText)
			maxLen(ve, f+".selector", s.Selector, maxBrowserSelector)
		case StepScreenshot:
			if s.Name == "" {
				s.Name = fmt.Sprintf("step-%d", i+1)
			}
			if !cssNameRe.MatchString(s.Name) {
				ve.Add(f+".name", CodeInvalid, s.Name, f+".name may hold letters, digits, '.', '_' and '-' (at most 80)")
			}
		case StepExtractText:
			needSel()
			if !cssNameRe.MatchString(s.As) {
				ve.Add(f+".as", CodeInvalid, s.As, f+".as is required: a name of letters, digits, '.', '_' and '-'")
			}
		case "":
			ve.Add(f+".kind", CodeRequired, nil, f+".kind is required")
		default:
			ve.Add(f+".kind", CodeInvalidEnum, s.Kind, f+".kind must be one of "+strings.Join(BrowserStepKinds, ", "))
		}
		if s.TimeoutSeconds < 0 || s.TimeoutSeconds > maxBrowserStepTimeout {
			ve.Add(f+".timeoutSeconds", CodeInvalid, s.TimeoutSeconds, fmt.Sprintf("%s.timeoutSeconds must be between 1 and %d", f, maxBrowserStepTimeout))
		}
	}
}

func validateCriteria(ve *ValidationError, cs []BrowserCriterion, steps []BrowserStep) {
	if len(cs) > maxBrowserCriteria {
		ve.Add("criteria", CodeInvalid, len(cs), fmt.Sprintf("criteria may hold at most %d entries", maxBrowserCriteria))
		return
	}
	names := map[string]bool{}
	for _, s := range steps {
		if s.Kind == StepExtractText {
			names[s.As] = true
		}
	}
	for i, c := range cs {
		f := fmt.Sprintf("criteria[%d]", i)
		if !names[c.Value] {
			ve.Add(f+".value", CodeUnknownReference, c.Value, f+".value must name the 'as' of an extractText step")
		}
		if !containsString(BrowserCriterionOps, c.Op) {
			ve.Add(f+".op", CodeInvalidEnum, c.Op, f+".op must be one of "+strings.Join(BrowserCriterionOps, ", "))
		}
		if c.Op == "matches" {
			if _, err := regexp.Compile(c.Expected); err != nil {
				ve.Add(f+".expected", CodeInvalid, c.Expected, f+".expected is not a valid regular expression")
			}
		}
		maxLen(ve, f+".expected", c.Expected, maxBrowserText)
	}
}

func validateHosts(ve *ValidationError, hosts []string) []string {
	if len(hosts) > maxBrowserHosts {
		ve.Add("allowedHosts", CodeInvalid, len(hosts), fmt.Sprintf("allowedHosts may hold at most %d hosts", maxBrowserHosts))
		return nil
	}
	out := []string{}
	for i, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if !hostNameRe.MatchString(h) {
			ve.Add(fmt.Sprintf("allowedHosts[%d]", i), CodeInvalid, h, "allowedHosts entries are host names (optionally *.domain), without scheme or port")
			continue
		}
		out = append(out, h)
	}
	return out
}

// targetHosts are the hosts an automation's pages may load from.
func (au *BrowserAutomation) targetHosts(profile *BrowserAuthProfile) []string {
	seen := map[string]bool{}
	var out []string
	add := func(raw string) {
		if u, err := url.Parse(raw); err == nil && u.Hostname() != "" {
			h := strings.ToLower(u.Hostname())
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	add(au.TargetURL)
	for _, s := range au.Steps {
		if s.Kind == StepNavigate {
			add(s.URL)
		}
	}
	if profile != nil {
		add(profile.URL)
	}
	for _, h := range au.AllowedHosts {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

func (in *BrowserAutomationInput) apply(ctx context.Context, a *App, orgID string, au *BrowserAutomation, create bool, ve *ValidationError) {
	str := func(field string, p *string, dst *string, req bool, n int) {
		if p == nil {
			if req {
				ve.Add(field, CodeRequired, nil, field+" is required")
			}
			return
		}
		v := strings.TrimSpace(*p)
		if req && v == "" {
			ve.Add(field, CodeRequired, nil, field+" is required")
		}
		maxLen(ve, field, v, n)
		*dst = v
	}
	str("name", in.Name, &au.Name, create, 200)
	str("description", in.Description, &au.Description, false, maxBrowserText)
	str("instruction", in.Instruction, &au.Instruction, false, 10000)
	str("evaluationCriteria", in.EvaluationCriteria, &au.EvaluationCriteria, false, maxBrowserText)
	str("targetUrl", in.TargetURL, &au.TargetURL, create, 2000)
	if in.TargetURL != nil && !validURL(au.TargetURL) {
		ve.Add("targetUrl", CodeInvalid, au.TargetURL, "targetUrl must be an absolute http or https URL")
	}
	if in.Steps != nil || create {
		validateSteps(ve, "steps", in.Steps, create)
		au.Steps = in.Steps
	}
	if in.Criteria != nil {
		au.Criteria = in.Criteria
	}
	validateCriteria(ve, au.Criteria, au.Steps)
	if in.AllowedHosts != nil {
		au.AllowedHosts = validateHosts(ve, in.AllowedHosts)
	}
	if in.IsEnabled != nil {
		au.IsEnabled = *in.IsEnabled
	}
	if in.ProfileID.Set {
		au.ProfileID = nil
		if !in.ProfileID.Null && in.ProfileID.Value != "" {
			if _, err := a.store.GetBrowserProfile(ctx, orgID, in.ProfileID.Value); err != nil {
				ve.Add("profileId", CodeUnknownReference, in.ProfileID.Value, "profileId must name an auth profile of this organization")
			} else {
				au.ProfileID = Ptr(in.ProfileID.Value)
			}
		}
	}
	if in.ScheduleFrequency.Set {
		au.ScheduleFrequency = nil
		if !in.ScheduleFrequency.Null && in.ScheduleFrequency.Value != "" {
			if _, ok := BrowserFrequencies[in.ScheduleFrequency.Value]; !ok {
				ve.Add("scheduleFrequency", CodeInvalidEnum, in.ScheduleFrequency.Value, "scheduleFrequency must be one of daily, weekly, monthly, quarterly, yearly")
			} else {
				au.ScheduleFrequency = Ptr(in.ScheduleFrequency.Value)
			}
		}
	}
	for _, s := range au.Steps {
		if s.Secret != "" && au.ProfileID == nil {
			ve.Add("profileId", CodeRequired, nil, "a fill step uses a secret: profileId must name the auth profile holding it")
			break
		}
	}
	au.schedule(a.Now())
}

// schedule sets the next run from the frequency.
func (au *BrowserAutomation) schedule(now time.Time) {
	every, ok := time.Duration(0), false
	if au.ScheduleFrequency != nil {
		every, ok = BrowserFrequencies[*au.ScheduleFrequency]
	}
	if !ok || !au.IsEnabled {
		au.NextRunAt = nil
		return
	}
	base := now
	if au.LastRunAt != nil {
		base = *au.LastRunAt
	}
	next := base.Add(every)
	if au.LastRunAt == nil {
		next = now
	}
	au.NextRunAt = &next
}

// browserTask loads the task an automation or draft belongs to.
func (a *App) browserTask(ctx context.Context, orgID, taskID string, ve *ValidationError) *Task {
	if taskID == "" {
		ve.Add("taskId", CodeRequired, nil, "taskId is required")
		return nil
	}
	t, err := a.store.GetTask(ctx, orgID, taskID)
	if err != nil {
		ve.Add("taskId", CodeUnknownReference, taskID, "taskId must name a task of this organization")
		return nil
	}
	return t
}

// CreateBrowserAutomation creates an automation of a task.
func (a *App) CreateBrowserAutomation(ctx context.Context, in BrowserAutomationInput) (*BrowserAutomation, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	au := &BrowserAutomation{ID: NewID(PrefixBrowserAutomation), IsEnabled: true, Criteria: []BrowserCriterion{}, AllowedHosts: []string{},
		CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if t := a.browserTask(ctx, p.OrgID, trimmed(in.TaskID), ve); t != nil {
		au.TaskID = t.ID
	}
	in.apply(ctx, a, p.OrgID, au, true, ve)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.SaveBrowserAutomation(ctx, p.OrgID, au); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "browser_automation", ResourceID: au.ID, After: au})
	})
	if err != nil {
		return nil, fmt.Errorf("create browser automation: %w", err)
	}
	return au, nil
}

// GetBrowserAutomation returns one automation.
func (a *App) GetBrowserAutomation(ctx context.Context, id string) (*BrowserAutomation, error) {
	p, err := a.browserReader(ctx)
	if err != nil {
		return nil, err
	}
	return a.store.GetBrowserAutomation(ctx, p.OrgID, id)
}

// ListBrowserAutomations lists a task's automations (the organization's
// when taskID is empty); an unknown task is 404.
func (a *App) ListBrowserAutomations(ctx context.Context, taskID string) ([]BrowserAutomation, error) {
	p, err := a.browserReader(ctx)
	if err != nil {
		return nil, err
	}
	if taskID != "" {
		if _, err := a.store.GetTask(ctx, p.OrgID, taskID); err != nil {
			return nil, err
		}
	}
	return a.store.ListBrowserAutomations(ctx, p.OrgID, taskID)
}

// UpdateBrowserAutomation changes an automation.
func (a *App) UpdateBrowserAutomation(ctx context.Context, id string, in BrowserAutomationInput) (*BrowserAutomation, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *BrowserAutomation
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetBrowserAutomation(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		au := *before
		ve := NewValidationError()
		in.TaskID = nil
		in.apply(ctx, a, p.OrgID, &au, false, ve)
		if err := ve.Err(); err != nil {
			return err
		}
		au.UpdatedAt = a.Now()
		if err := a.store.SaveBrowserAutomation(ctx, p.OrgID, &au); err != nil {
			return err
		}
		out = &au
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "browser_automation", ResourceID: id, Before: before, After: &au})
	})
	if err != nil {
		return nil, fmt.Errorf("update browser automation %s: %w", id, err)
	}
	return out, nil
}

// SetBrowserTaskSchedule sets the schedule of every automation of a task.
func (a *App) SetBrowserTaskSchedule(ctx context.Context, taskID string, freq *string) (string, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return "", err
	}
	f := trimmed(freq)
	if f == "" {
		return "", Invalid("scheduleFrequency", CodeRequired, nil, "scheduleFrequency is required")
	}
	if _, ok := BrowserFrequencies[f]; !ok {
		return "", Invalid("scheduleFrequency", CodeInvalidEnum, f, "scheduleFrequency must be one of daily, weekly, monthly, quarterly, yearly")
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := a.store.GetTask(ctx, p.OrgID, taskID); err != nil {
			return err
		}
		list, err := a.store.ListBrowserAutomations(ctx, p.OrgID, taskID)
		if err != nil {
			return err
		}
		for i := range list {
			before := list[i]
			au := before
			au.ScheduleFrequency = Ptr(f)
			au.schedule(a.Now())
			au.UpdatedAt = a.Now()
			if err := a.store.SaveBrowserAutomation(ctx, p.OrgID, &au); err != nil {
				return err
			}
			if err := a.record(ctx, Mutation{Action: "updated", ResourceType: "browser_automation", ResourceID: au.ID, Before: &before, After: &au}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("set browser schedule of task %s: %w", taskID, err)
	}
	return f, nil
}

// DeleteBrowserAutomation deletes an automation and its runs (the evidence
// its runs attached stays with the task).
func (a *App) DeleteBrowserAutomation(ctx context.Context, id string) error {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	return a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetBrowserAutomation(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if err := a.store.DeleteBrowserAutomation(ctx, p.OrgID, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "browser_automation", ResourceID: id, Before: before})
	})
}

// ListBrowserRuns lists an automation's runs, newest first (at most 100).
func (a *App) ListBrowserRuns(ctx context.Context, automationID string) ([]BrowserAutomationRun, error) {
	p, err := a.browserReader(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := a.store.GetBrowserAutomation(ctx, p.OrgID, automationID); err != nil {
		return nil, err
	}
	return a.store.ListBrowserRuns(ctx, p.OrgID, automationID, "", 100)
}

// ListTaskBrowserRuns lists the browser runs of a task's automations,
// newest first (at most limit, 100 by default).
func (a *App) ListTaskBrowserRuns(ctx context.Context, taskID string, limit int) ([]BrowserAutomationRun, error) {
	p, err := a.browserReader(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := a.store.GetTask(ctx, p.OrgID, taskID); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	return a.store.ListBrowserRuns(ctx, p.OrgID, "", taskID, limit)
}

// GetBrowserRun returns one run.
func (a *App) GetBrowserRun(ctx context.Context, id string) (*BrowserAutomationRun, error) {
	p, err := a.browserReader(ctx)
	if err != nil {
		return nil, err
	}
	return a.store.GetBrowserRun(ctx, p.OrgID, id)
}

// --- drafts

func (in *BrowserDraftInput) apply(d *BrowserDraft, ve *ValidationError) {
	if in.Name != nil {
		d.Name = strings.TrimSpace(*in.Name)
		maxLen(ve, "name", d.Name, 200)
	}
	if in.Steps != nil {
		validateSteps(ve, "steps", in.Steps, false)
		d.Steps = in.Steps
	}
}

// CreateBrowserDraft saves a draft of an automation.
func (a *App) CreateBrowserDraft(ctx context.Context, in BrowserDraftInput) (*BrowserDraft, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	d := &BrowserDraft{ID: NewID(PrefixBrowserDraft), Steps: []BrowserStep{}, CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if t := a.browserTask(ctx, p.OrgID, trimmed(in.TaskID), ve); t != nil {
		d.TaskID = t.ID
	}
	if in.Steps == nil {
		ve.Add("steps", CodeRequired, nil, "steps is required (an empty list is allowed)")
	}
	in.apply(d, ve)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.SaveBrowserDraft(ctx, p.OrgID, d); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "browser_automation_draft", ResourceID: d.ID, After: d})
	})
	if err != nil {
		return nil, fmt.Errorf("create browser draft: %w", err)
	}
	return d, nil
}

// UpdateBrowserDraft changes a draft.
func (a *App) UpdateBrowserDraft(ctx context.Context, id string, in BrowserDraftInput) (*BrowserDraft, error) {
	return updateRecorded(ctx, a, "browser_automation_draft", id, a.store.GetBrowserDraft, in.apply,
		func(d *BrowserDraft) *time.Time { return &d.UpdatedAt }, a.store.SaveBrowserDraft)
}

// DeleteBrowserDraft deletes a draft.
func (a *App) DeleteBrowserDraft(ctx context.Context, id string) error {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	return a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetBrowserDraft(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if err := a.store.DeleteBrowserDraft(ctx, p.OrgID, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "browser_automation_draft", ResourceID: id, Before: before})
	})
}

// ListBrowserDrafts lists a task's drafts.
func (a *App) ListBrowserDrafts(ctx context.Context, taskID string) ([]BrowserDraft, error) {
	p, err := a.browserReader(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := a.store.GetTask(ctx, p.OrgID, taskID); err != nil {
		return nil, err
	}
	return a.store.ListBrowserDrafts(ctx, p.OrgID, taskID)
}

// --- auth profiles

// normalizeTOTPSeed upper-cases a base32 seed and drops spaces and
// padding; it reports whether the result decodes.
func normalizeTOTPSeed(s string) (string, bool) {
	s = strings.ToUpper(strings.NewReplacer(" ", "", "-", "", "=", "").Replace(strings.TrimSpace(s)))
	if s == "" {
		return "", false
	}
	_, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(s)
	return s, err == nil && len(s) >= 16
}

func (in *BrowserProfileInput) apply(p *BrowserAuthProfile, create bool, ve *ValidationError) {
	if in.URL != nil || create {
		u := trimmed(in.URL)
		if !validURL(u) {
			ve.Add("url", CodeInvalid, u, "url must be an absolute http or https URL (the sign-in page)")
		} else {
			pu, _ := url.Parse(u)
			p.URL, p.Hostname = u, strings.ToLower(pu.Hostname())
		}
	}
	if in.DisplayName != nil {
		p.DisplayName = strings.TrimSpace(*in.DisplayName)
		maxLen(ve, "displayName", p.DisplayName, 200)
	}
	if p.DisplayName == "" {
		p.DisplayName = p.Hostname
	}
	if in.LoginIdentity != nil {
		p.LoginIdentity = strings.TrimSpace(*in.LoginIdentity)
		maxLen(ve, "loginIdentity", p.LoginIdentity, 320)
	}
	if in.Selectors != nil {
		p.Selectors = *in.Selectors
		for f, v := range map[string]string{"selectors.username": p.Selectors.Username, "selectors.password": p.Selectors.Password,
			"selectors.totp": p.Selectors.TOTP, "selectors.submit": p.Selectors.Submit} {
			maxLen(ve, f, v, maxBrowserSelector)
		}
	}
	if in.VerifyText != nil {
		p.VerifyText = strings.TrimSpace(*in.VerifyText)
		maxLen(ve, "verifyText", p.VerifyText, maxBrowserText)
	}
	if in.VerifyURLContains != nil {
		p.VerifyURLContains = strings.TrimSpace(*in.VerifyURLContains)
		maxLen(ve, "verifyUrlContains", p.VerifyURLContains, 2000)
	}
}

// ResolveBrowserProfile returns the organization's profile for the URL's
// host (and login identity), creating it when there is none.
func (a *App) ResolveBrowserProfile(ctx context.Context, in BrowserProfileInput) (*BrowserAuthProfile, bool, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, false, err
	}
	now := a.Now()
	prof := &BrowserAuthProfile{ID: NewID(PrefixBrowserProfile), Status: ProfileUnverified, ExtraFieldLabels: []string{}, CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	in.apply(prof, true, ve)
	if err := ve.Err(); err != nil {
		return nil, false, err
	}
	var out *BrowserAuthProfile
	isNew := false
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		list, err := a.store.ListBrowserProfiles(ctx, p.OrgID)
		if err != nil {
			return err
		}
		for i := range list {
			if list[i].Hostname == prof.Hostname && list[i].LoginIdentity == prof.LoginIdentity {
				out = &list[i]
				return nil
			}
		}
		if err := a.store.SaveBrowserProfile(ctx, p.OrgID, prof); err != nil {
			return err
		}
		out, isNew = prof, true
		return a.record(ctx, Mutation{Action: "created", ResourceType: "browser_auth_profile", ResourceID: prof.ID, After: prof})
	})
	if err != nil {
		return nil, false, fmt.Errorf("resolve browser profile: %w", err)
	}
	return out, isNew, nil
}

// ListBrowserProfiles lists the organization's auth profiles.
func (a *App) ListBrowserProfiles(ctx context.Context) ([]BrowserAuthProfile, error) {
	p, err := a.browserReader(ctx)
	if err != nil {
		return nil, err
	}
	return a.store.ListBrowserProfiles(ctx, p.OrgID)
}

// GetBrowserProfile returns one auth profile.
func (a *App) GetBrowserProfile(ctx context.Context, id string) (*BrowserAuthProfile, error) {
	p, err := a.browserReader(ctx)
	if err != nil {
		return nil, err
	}
	return a.store.GetBrowserProfile(ctx, p.OrgID, id)
}

// mutateProfile changes a profile in a transaction and audits it.
func (a *App) mutateProfile(ctx context.Context, id, action string, fn func(p *BrowserAuthProfile, ve *ValidationError) error) (*BrowserAuthProfile, error) {
	pr, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *BrowserAuthProfile
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetBrowserProfile(ctx, pr.OrgID, id)
		if err != nil {
			return err
		}
		p := *before
		ve := NewValidationError()
		if err := fn(&p, ve); err != nil {
			return err
		}
		if err := ve.Err(); err != nil {
			return err
		}
		p.UpdatedAt = a.Now()
		if err := a.store.SaveBrowserProfile(ctx, pr.OrgID, &p); err != nil {
			return err
		}
		out = &p
		return a.record(ctx, Mutation{Action: action, ResourceType: "browser_auth_profile", ResourceID: id, Before: before, After: &p})
	})
	if err != nil {
		return nil, fmt.Errorf("%s browser profile %s: %w", action, id, err)
	}
	return out, nil
}

// UpdateBrowserProfile changes a profile's name, URL, selectors or checks.
func (a *App) UpdateBrowserProfile(ctx context.Context, id string, in BrowserProfileInput) (*BrowserAuthProfile, error) {
	return a.mutateProfile(ctx, id, "updated", func(p *BrowserAuthProfile, ve *ValidationError) error {
		in.apply(p, false, ve)
		return nil
	})
}

func (a *App) profileAAD(id string) string { return "browser-profile:" + id }

func (a *App) openProfileCredentials(p *BrowserAuthProfile) (*browserCredentials, error) {
	var c browserCredentials
	if len(p.sealed) == 0 {
		return &c, nil
	}
	plain, err := a.openSecret(a.profileAAD(p.ID), p.sealed)
	if err != nil {
		return nil, fmt.Errorf("open credentials of browser profile %s: %w", p.ID, err)
	}
	if err := json.Unmarshal([]byte(plain), &c); err != nil {
		return nil, fmt.Errorf("credentials of browser profile %s: %w", p.ID, err)
	}
	return &c, nil
}

func (a *App) sealProfileCredentials(p *BrowserAuthProfile, c *browserCredentials) error {
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	p.sealed = a.sealSecret(a.profileAAD(p.ID), string(raw))
	p.CredentialsConfigured = c.Username != "" || c.Password != ""
	p.TOTPConfigured = c.TOTPSeed != ""
	p.ExtraFieldLabels = []string{}
	for _, f := range c.ExtraFields {
		p.ExtraFieldLabels = append(p.ExtraFieldLabels, f.Label)
	}
	return nil
}

// SetBrowserProfileCredentials stores (seals) a profile's username,
// password, optional TOTP seed and extra fields.
func (a *App) SetBrowserProfileCredentials(ctx context.Context, id string, in BrowserCredentialsInput) (*BrowserAuthProfile, error) {
	return a.mutateProfile(ctx, id, "credentials_updated", func(p *BrowserAuthProfile, ve *ValidationError) error {
		c, err := a.openProfileCredentials(p)
		if err != nil {
			return err
		}
		if trimmed(in.Username) == "" {
			ve.Add("username", CodeRequired, nil, "username is required")
		}
		if in.Password == nil || *in.Password == "" {
			ve.Add("password", CodeRequired, nil, "password is required")
		}
		maxLen(ve, "username", trimmed(in.Username), 320)
		if in.Password != nil {
			maxLen(ve, "password", *in.Password, 1000)
		}
		if in.TOTPSeed != nil && strings.TrimSpace(*in.TOTPSeed) != "" {
			seed, ok := normalizeTOTPSeed(*in.TOTPSeed)
			if !ok {
				ve.Add("totpSeed", CodeInvalid, nil, "totpSeed must be a base32 secret (A-Z, 2-7) of at least 16 characters, as shown beside the QR code")
			}
			c.TOTPSeed = seed
		}
		if len(in.ExtraFields) > 10 {
			ve.Add("extraFields", CodeInvalid, len(in.ExtraFields), "extraFields may hold at most 10 fields")
		}
		for i, f := range in.ExtraFields {
			if strings.TrimSpace(f.Label) == "" {
				ve.Add(fmt.Sprintf("extraFields[%d].label", i), CodeRequired, nil, "label is required")
			}
			if f.Value == "" {
				ve.Add(fmt.Sprintf("extraFields[%d].value", i), CodeRequired, nil, "value is required")
			}
		}
		if in.UsernameLabel != nil {
			if l := strings.TrimSpace(*in.UsernameLabel); l != "" {
				maxLen(ve, "usernameLabel", l, 200)
				q := strings.ReplaceAll(l, `"`, `\"`)
				p.Selectors.Username = fmt.Sprintf(`input[name="%s"], input[id="%s"], input[aria-label="%s"], input[placeholder="%s"]`, q, q, q, q)
			}
		}
		if !ve.Empty() {
			return nil
		}
		c.Username, c.Password = trimmed(in.Username), *in.Password
		if in.ExtraFields != nil {
			c.ExtraFields = in.ExtraFields
		}
		if p.Status == ProfileVerified || p.Status == ProfileNeedsReauth {
			p.Status, p.StatusReason = ProfileUnverified, "credentials changed"
		}
		return a.sealProfileCredentials(p, c)
	})
}

// SetBrowserProfileTOTP stores a profile's TOTP seed.
func (a *App) SetBrowserProfileTOTP(ctx context.Context, id string, seed *string) (*BrowserAuthProfile, error) {
	return a.mutateProfile(ctx, id, "totp_updated", func(p *BrowserAuthProfile, ve *ValidationError) error {
		s, ok := normalizeTOTPSeed(trimmed(seed))
		switch {
		case trimmed(seed) == "":
			ve.Add("totpSeed", CodeRequired, nil, "totpSeed is required")
			return nil
		case !ok:
			ve.Add("totpSeed", CodeInvalid, nil, "totpSeed must be a base32 secret (A-Z, 2-7) of at least 16 characters, as shown beside the QR code")
			return nil
		}
		c, err := a.openProfileCredentials(p)
		if err != nil {
			return err
		}
		c.TOTPSeed = s
		return a.sealProfileCredentials(p, c)
	})
}

// ClearBrowserProfileTOTP removes a profile's TOTP seed.
func (a *App) ClearBrowserProfileTOTP(ctx context.Context, id string) (*BrowserAuthProfile, error) {
	return a.mutateProfile(ctx, id, "totp_cleared", func(p *BrowserAuthProfile, ve *ValidationError) error {
		c, err := a.openProfileCredentials(p)
		if err != nil {
			return err
		}
		c.TOTPSeed = ""
		return a.sealProfileCredentials(p, c)
	})
}

// MarkBrowserProfileNeedsReauth marks a profile as needing a new sign-in.
func (a *App) MarkBrowserProfileNeedsReauth(ctx context.Context, id string, reason *string) (*BrowserAuthProfile, error) {
	return a.mutateProfile(ctx, id, "needs_reauth", func(p *BrowserAuthProfile, ve *ValidationError) error {
		r := trimmed(reason)
		maxLen(ve, "reason", r, 1000)
		if r == "" {
			r = "marked by a person"
		}
		p.Status, p.StatusReason = ProfileNeedsReauth, r
		return nil
	})
}

// DeleteBrowserProfile deletes a profile; automations using it lose it.
func (a *App) DeleteBrowserProfile(ctx context.Context, id string) error {
	pr, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	return a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetBrowserProfile(ctx, pr.OrgID, id)
		if err != nil {
			return err
		}
		list, err := a.store.ListBrowserAutomations(ctx, pr.OrgID, "")
		if err != nil {
			return err
		}
		for _, au := range list {
			if au.ProfileID != nil && *au.ProfileID == id {
				return Errorf(ErrConflict, "automation %s (%s) signs in with this profile: change it first", au.ID, au.Name)
			}
		}
		if err := a.store.DeleteBrowserProfile(ctx, pr.OrgID, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "browser_auth_profile", ResourceID: id, Before: before})
	})
}

// BrowserTOTPStatus says whether a profile has a TOTP seed.
type BrowserTOTPStatus struct {
	ProfileID  string `json:"profileId"`
	Hostname   string `json:"hostname"`
	Configured bool   `json:"configured"`
}

// BrowserTOTPStatuses lists whether each profile has a TOTP seed.
func (a *App) BrowserTOTPStatuses(ctx context.Context) ([]BrowserTOTPStatus, error) {
	list, err := a.ListBrowserProfiles(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]BrowserTOTPStatus, 0, len(list))
	for _, p := range list {
		out = append(out, BrowserTOTPStatus{ProfileID: p.ID, Hostname: p.Hostname, Configured: p.TOTPConfigured})
	}
	return out, nil
}

// --- organization context

// GetBrowserContext returns the organization's browser context, nil when
// none was created.
func (a *App) GetBrowserContext(ctx context.Context) (*BrowserContext, error) {
	p, err := a.browserReader(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.store.GetBrowserContext(ctx, p.OrgID)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return c, err
}

// EnsureBrowserContext returns the organization's browser context, creating
// it (and reporting isNew) when there is none.
func (a *App) EnsureBrowserContext(ctx context.Context) (*BrowserContext, bool, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, false, err
	}
	var out *BrowserContext
	isNew := false
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		c, err := a.store.GetBrowserContext(ctx, p.OrgID)
		if err == nil {
			out = c
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		c = &BrowserContext{ContextID: NewID(PrefixBrowserContext), CreatedAt: a.Now()}
		if err := a.store.CreateBrowserContext(ctx, p.OrgID, c); err != nil {
			return err
		}
		out, isNew = c, true
		return a.record(ctx, Mutation{Action: "created", ResourceType: "browser_context", ResourceID: c.ContextID, After: c})
	})
	if err != nil {
		return nil, false, fmt.Errorf("browser context: %w", err)
	}
	return out, isNew, nil
}
