package app

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Task automation run statuses (reference: EvidenceAutomationRunStatus,
// plus interrupted for a run the appliance stopped under).
const (
	AutomationRunPending     = "pending"
	AutomationRunRunning     = "running"
	AutomationRunCompleted   = "completed"
	AutomationRunFailed      = "failed"
	AutomationRunInterrupted = "interrupted"
)

// Task automation triggers (reference: EvidenceAutomationTrigger).
const (
	AutomationTriggerManual    = "manual"
	AutomationTriggerScheduled = "scheduled"
)

// TaskFrequencies are the schedule intervals of an automation (reference:
// TaskFrequency). Months and years are counted as 30 and 365 days.
var TaskFrequencies = map[string]time.Duration{
	"daily":     24 * time.Hour,
	"weekly":    7 * 24 * time.Hour,
	"monthly":   30 * 24 * time.Hour,
	"quarterly": 91 * 24 * time.Hour,
	"yearly":    365 * 24 * time.Hour,
}

// Task automation limits.
const (
	maxAutomationName   = 200
	maxAutomationDesc   = 5000
	maxAutomationHosts  = 50
	maxScriptBytes      = 64 << 10
	maxCriteriaBytes    = 2000
	maxChangelog        = 5000
	automationGrace     = 24 * time.Hour
	manualEvidenceValid = 7 * 24 * time.Hour
)

// TaskAutomation is a script that collects a task's evidence.
type TaskAutomation struct {
	ID                 string     `json:"id"`
	TaskID             string     `json:"taskId"`
	Name               string     `json:"name"`
	Description        string     `json:"description"`
	IsEnabled          bool       `json:"isEnabled"`
	EvaluationCriteria string     `json:"evaluationCriteria"`
	ScheduleFrequency  *string    `json:"scheduleFrequency"`
	Hosts              []string   `json:"hosts"`
	TemplateID         *string    `json:"templateId"`
	PinnedVersion      *int       `json:"pinnedVersion"`
	LatestVersion      int        `json:"latestVersion"`
	LastRunAt          *time.Time `json:"lastRunAt"`
	LastRunStatus      *string    `json:"lastRunStatus"`
	NextRunAt          *time.Time `json:"nextRunAt"`
	EvidenceID         *string    `json:"evidenceId"`
	FindingID          *string    `json:"findingId"`
	CreatedAt          time.Time  `json:"createdAt"`
	UpdatedAt          time.Time  `json:"updatedAt"`

	OrganizationID string `json:"-"`
}

// TaskAutomationVersion is one immutable script of an automation.
type TaskAutomationVersion struct {
	ID           string    `json:"id"`
	AutomationID string    `json:"automationId"`
	Version      int       `json:"version"`
	Script       string    `json:"script"`
	Changelog    string    `json:"changelog"`
	CreatedBy    string    `json:"createdBy"`
	CreatedAt    time.Time `json:"createdAt"`
}

// TaskAutomationRun is one execution of an automation.
type TaskAutomationRun struct {
	ID               string         `json:"id"`
	AutomationID     string         `json:"automationId"`
	AutomationName   string         `json:"automationName"`
	TaskID           string         `json:"taskId"`
	Version          int            `json:"version"`
	Trigger          string         `json:"trigger"`
	Status           string         `json:"status"`
	EvaluationStatus *string        `json:"evaluationStatus"` // pass, fail
	EvaluationReason *string        `json:"evaluationReason"`
	StopReason       *string        `json:"stopReason"`
	Error            *string        `json:"error"`
	Result           map[string]any `json:"result"`
	Logs             []RunLog       `json:"logs"`
	Steps            int64          `json:"steps"`
	HTTPRequests     int            `json:"httpRequests"`
	DurationMs       int64          `json:"durationMs"`
	EvidenceID       *string        `json:"evidenceId"`
	FindingID        *string        `json:"findingId"`
	RequestedBy      string         `json:"requestedBy"`
	CreatedAt        time.Time      `json:"createdAt"`
	StartedAt        *time.Time     `json:"startedAt"`
	FinishedAt       *time.Time     `json:"finishedAt"`

	OrganizationID string `json:"-"`
}

// TaskAutomationInput is the body of create and update. On create,
// script (with changelog) makes version 1; templateId with parameters
// starts from a template instead.
type TaskAutomationInput struct {
	Name               *string           `json:"name"`
	Description        *string           `json:"description"`
	IsEnabled          *bool             `json:"isEnabled"`
	EvaluationCriteria *string           `json:"evaluationCriteria"`
	ScheduleFrequency  Opt[string]       `json:"scheduleFrequency"`
	Hosts              *[]string         `json:"hosts"`
	PinnedVersion      Opt[int]          `json:"pinnedVersion"`
	Script             *string           `json:"script"`
	Changelog          *string           `json:"changelog"`
	TemplateID         *string           `json:"templateId"`
	Parameters         map[string]string `json:"parameters"`
}

// TaskAutomationVersionInput is the body of a version create.
type TaskAutomationVersionInput struct {
	Version   *int    `json:"version"`
	Script    *string `json:"script"`
	Changelog *string `json:"changelog"`
}

// AutomationRunFilter selects runs.
type AutomationRunFilter struct {
	TaskID       string
	AutomationID string
	Page         Page
}

// TaskAutomationStore persists automations, versions and runs.
type TaskAutomationStore interface {
	CreateTaskAutomation(ctx context.Context, orgID string, a *TaskAutomation) error
	GetTaskAutomation(ctx context.Context, orgID, taskID, id string) (*TaskAutomation, error)
	UpdateTaskAutomation(ctx context.Context, orgID string, a *TaskAutomation) error
	DeleteTaskAutomation(ctx context.Context, orgID, taskID, id string) error
	ListTaskAutomations(ctx context.Context, orgID, taskID string, pg Page) (List[TaskAutomation], error)
	// CreateAutomationVersion fails with ErrConflict when the number exists.
	CreateAutomationVersion(ctx context.Context, orgID string, v *TaskAutomationVersion) error
	GetAutomationVersion(ctx context.Context, orgID, automationID string, version int) (*TaskAutomationVersion, error)
	ListAutomationVersions(ctx context.Context, orgID, automationID string, pg Page) (List[TaskAutomationVersion], error)
	// CreateAutomationRun fails with ErrConflict while the automation has
	// a pending or running run.
	CreateAutomationRun(ctx context.Context, orgID string, r *TaskAutomationRun) error
	GetAutomationRun(ctx context.Context, orgID, id string) (*TaskAutomationRun, error)
	ListAutomationRuns(ctx context.Context, orgID string, f AutomationRunFilter) (List[TaskAutomationRun], error)
	// ClaimAutomationRun moves the oldest pending run (any organization)
	// to running; ErrNotFound when none is pending.
	ClaimAutomationRun(ctx context.Context, now time.Time) (*TaskAutomationRun, error)
	FinishAutomationRun(ctx context.Context, orgID string, r *TaskAutomationRun) error
	InterruptRunningAutomationRuns(ctx context.Context, now time.Time, reason string) (int, error)
	// DueTaskAutomations lists enabled, scheduled automations whose next
	// run is at or before now, over every organization.
	DueTaskAutomations(ctx context.Context, now time.Time) ([]TaskAutomation, error)
}

// ScriptError is a script or criteria error with its position.
type ScriptError struct {
	Line    int
	Column  int
	Message string
}

func (e *ScriptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

// ScriptLimits bound one run. Zero values take the defaults.
type ScriptLimits struct {
	MaxSteps        uint64        // Starlark execution steps (default 10 million)
	Timeout         time.Duration // wall clock (default 60 s)
	MaxMemory       int64         // heap growth during the run (default 256 MiB)
	MaxBuiltinBytes int64         // total bytes built-ins hand the script (default 32 MiB)
	MaxHTTPBody     int64         // one HTTP response body (default 4 MiB)
	MaxHTTPRequests int           // HTTP requests per run (default 1000)
	MaxResultBytes  int           // the result's JSON (default 256 KiB)
	MaxLogLines     int           // log lines kept (default 500)
}

// WithDefaults fills zero limits with the defaults.
func (l ScriptLimits) WithDefaults() ScriptLimits {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	if l.MaxSteps == 0 {
		l.MaxSteps = 10_000_000
	}
	if l.Timeout <= 0 {
		l.Timeout = 60 * time.Second
	}
	def(&l.MaxMemory, 256<<20)
	def(&l.MaxBuiltinBytes, 32<<20)
	def(&l.MaxHTTPBody, 4<<20)
	if l.MaxHTTPRequests <= 0 {
		l.MaxHTTPRequests = 1000
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = 256 << 10
	}
	if l.MaxLogLines <= 0 {
		l.MaxLogLines = maxRunLogs
	}
	return l
}

// ScriptJob is one script to run.
type ScriptJob struct {
	Script string
	Hosts  []string
	// Secret answers secret(connectionId, field).
	Secret func(ctx context.Context, connectionID, field string) (string, error)
	Limits ScriptLimits
}

// ScriptEvidence is a piece of evidence text a script produced.
type ScriptEvidence struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// ScriptOutcome is what a run produced; StopReason is set when the
// sandbox ended the script (steps, timeout, memory, output, host) or it
// failed (error).
type ScriptOutcome struct {
	Result       map[string]any
	Evidence     []ScriptEvidence
	Logs         []RunLog
	LogsDropped  int
	StopReason   string
	Error        string
	Steps        uint64
	HTTPRequests int
	Duration     time.Duration
}

// ScriptRunner is the sandbox (package automation).
type ScriptRunner interface {
	// Check reports a script's syntax or name errors as *ScriptError.
	Check(script string) error
	// CheckCriteria reports an evaluation expression's syntax errors.
	CheckCriteria(expr string) error
	Run(ctx context.Context, job ScriptJob) ScriptOutcome
	// Evaluate applies criteria to a result: held or not, and why.
	Evaluate(expr string, result map[string]any) (bool, string, error)
}

// TaskAutomationOptions configures the runs.
type TaskAutomationOptions struct {
	Limits ScriptLimits
	// EvidenceGrace is added to the schedule interval for the expiry of
	// the evidence a passing run attaches (default 24 h).
	EvidenceGrace time.Duration
}

type automationState struct {
	mu     sync.Mutex
	runner ScriptRunner
	opts   TaskAutomationOptions
	wake   chan struct{}
}

// SetScriptRunner installs the sandbox and its options.
func (a *App) SetScriptRunner(r ScriptRunner, o TaskAutomationOptions) {
	a.autos.mu.Lock()
	defer a.autos.mu.Unlock()
	if o.EvidenceGrace <= 0 {
		o.EvidenceGrace = automationGrace
	}
	a.autos.runner, a.autos.opts = r, o
}

func (a *App) scriptRunner() (ScriptRunner, TaskAutomationOptions) {
	a.autos.mu.Lock()
	defer a.autos.mu.Unlock()
	return a.autos.runner, a.autos.opts
}

var hostLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidHostPattern reports whether p is a host name, an IP address, or
// `*.` followed by a domain of at least two labels.
func ValidHostPattern(p string) bool {
	if _, err := netip.ParseAddr(strings.Trim(p, "[]")); err == nil {
		return true
	}
	rest := strings.TrimPrefix(p, "*.")
	labels := strings.Split(rest, ".")
	if rest == "" || len(p) > 253 || (rest != p && len(labels) < 2) {
		return false
	}
	for _, l := range labels {
		if !hostLabel.MatchString(l) {
			return false
		}
	}
	return true
}

// HostAllowed reports whether host matches a pattern: equal (case
// insensitively), or under the domain of a `*.domain` pattern.
func HostAllowed(patterns []string, host string) bool {
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	for _, p := range patterns {
		p = strings.ToLower(strings.Trim(p, "[]"))
		if d, ok := strings.CutPrefix(p, "*."); ok {
			if strings.HasSuffix(host, "."+d) {
				return true
			}
			continue
		}
		if host == p {
			return true
		}
	}
	return false
}

func (a *App) checkScript(ve *ValidationError, field, script string) {
	r, _ := a.scriptRunner()
	if strings.TrimSpace(script) == "" {
		ve.Add(field, CodeRequired, nil, field+" must not be empty")
		return
	}
	if len(script) > maxScriptBytes {
		ve.Add(field, CodeTooLong, nil, fmt.Sprintf("%s must be at most %d bytes", field, maxScriptBytes))
		return
	}
	if r == nil {
		return
	}
	if err := r.Check(script); err != nil {
		var se *ScriptError
		if errors.As(err, &se) {
			ve.Add(field, CodeInvalid, map[string]any{"line": se.Line, "column": se.Column}, field+" does not compile: "+se.Error())
			return
		}
		ve.Add(field, CodeInvalid, nil, field+" does not compile: "+err.Error())
	}
}

func (in *TaskAutomationInput) apply(a *App, t *TaskAutomation, ve *ValidationError, create bool) {
	if in.Name != nil || create {
		name := ""
		if in.Name != nil {
			name = strings.TrimSpace(*in.Name)
		}
		if name == "" {
			ve.Add("name", CodeRequired, nil, "name is required")
		}
		maxLen(ve, "name", name, maxAutomationName)
		t.Name = name
	}
	if in.Description != nil {
		t.Description = strings.TrimSpace(*in.Description)
		maxLen(ve, "description", t.Description, maxAutomationDesc)
	}
	if in.IsEnabled != nil {
		t.IsEnabled = *in.IsEnabled
	}
	if in.EvaluationCriteria != nil {
		t.EvaluationCriteria = strings.TrimSpace(*in.EvaluationCriteria)
		if len(t.EvaluationCriteria) > maxCriteriaBytes {
			ve.Add("evaluationCriteria", CodeTooLong, nil, fmt.Sprintf("evaluationCriteria must be at most %d bytes", maxCriteriaBytes))
		} else if r, _ := a.scriptRunner(); r != nil && t.EvaluationCriteria != "" {
			if err := r.CheckCriteria(t.EvaluationCriteria); err != nil {
				ve.Add("evaluationCriteria", CodeInvalid, t.EvaluationCriteria, "evaluationCriteria is not a valid expression: "+err.Error())
			}
		}
	}
	if in.ScheduleFrequency.Set {
		t.ScheduleFrequency = nil
		if !in.ScheduleFrequency.Null && in.ScheduleFrequency.Value != "" {
			if _, ok := TaskFrequencies[in.ScheduleFrequency.Value]; !ok {
				ve.Add("scheduleFrequency", CodeInvalidEnum, in.ScheduleFrequency.Value, "scheduleFrequency must be one of daily, weekly, monthly, quarterly, yearly (or null for runs by hand only)")
			} else {
				t.ScheduleFrequency = Ptr(in.ScheduleFrequency.Value)
			}
		}
	}
	if in.Hosts != nil {
		if len(*in.Hosts) > maxAutomationHosts {
			ve.Add("hosts", CodeInvalid, len(*in.Hosts), fmt.Sprintf("hosts may list at most %d patterns", maxAutomationHosts))
		}
		hosts := []string{}
		for _, h := range *in.Hosts {
			h = strings.ToLower(strings.TrimSpace(h))
			if !ValidHostPattern(h) {
				ve.Add("hosts", CodeInvalid, h, "hosts must be host names, IP addresses or *.domain patterns (no scheme, port or path): "+fmt.Sprintf("%q", h))
				break
			}
			if !containsString(hosts, h) {
				hosts = append(hosts, h)
			}
		}
		t.Hosts = hosts
	}
	if in.PinnedVersion.Set {
		t.PinnedVersion = nil
		if !in.PinnedVersion.Null {
			v := in.PinnedVersion.Value
			if v < 1 || v > t.LatestVersion {
				ve.Add("pinnedVersion", CodeInvalid, v, fmt.Sprintf("pinnedVersion must name an existing version (1 to %d), or be null to run the latest", t.LatestVersion))
			} else {
				t.PinnedVersion = &v
			}
		}
	}
}

// taskForAutomations returns the task when the principal may see it.
func (a *App) taskForAutomations(ctx context.Context, taskID string, write bool) (*Principal, *Task, error) {
	cap := CapRead
	if write {
		cap = CapManage
	}
	p, err := authorize(ctx, cap)
	if err != nil {
		return nil, nil, err
	}
	t, err := a.store.GetTask(ctx, p.OrgID, taskID)
	if err != nil {
		return nil, nil, err
	}
	if p.SeesOnlyAssigned() && (t.AssigneeID == nil || *t.AssigneeID != p.UserID) {
		return nil, nil, ErrNotFound
	}
	return p, t, nil
}

// ListTaskAutomations lists a task's automations.
func (a *App) ListTaskAutomations(ctx context.Context, taskID string, pg Page) (List[TaskAutomation], error) {
	p, _, err := a.taskForAutomations(ctx, taskID, false)
	if err != nil {
		return List[TaskAutomation]{}, err
	}
	return a.store.ListTaskAutomations(ctx, p.OrgID, taskID, pg)
}

// GetTaskAutomation returns one automation of a task.
func (a *App) GetTaskAutomation(ctx context.Context, taskID, id string) (*TaskAutomation, error) {
	p, _, err := a.taskForAutomations(ctx, taskID, false)
	if err != nil {
		return nil, err
	}
	return a.store.GetTaskAutomation(ctx, p.OrgID, taskID, id)
}

// CreateTaskAutomation adds an automation to a task, with version 1 when
// a script or a template is given.
func (a *App) CreateTaskAutomation(ctx context.Context, taskID string, in TaskAutomationInput) (*TaskAutomation, error) {
	p, _, err := a.taskForAutomations(ctx, taskID, true)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	t := &TaskAutomation{ID: NewID(PrefixTaskAutomation), TaskID: taskID, IsEnabled: true, Hosts: []string{},
		CreatedAt: now, UpdatedAt: now, OrganizationID: p.OrgID}
	ve := NewValidationError()
	script, changelog := "", "Initial version"
	if in.TemplateID != nil && *in.TemplateID != "" {
		tpl, ok := automationTemplate(*in.TemplateID)
		if !ok {
			ve.Add("templateId", CodeUnknownReference, *in.TemplateID, "templateId must name a template of GET /v1/task-automation-templates")
		} else {
			s, hosts, err := tpl.instantiate(in.Parameters)
			if err != nil {
				var tv *ValidationError
				if errors.As(err, &tv) {
					for f, c := range tv.Fields {
						ve.Add(f, c, tv.Values[f], tv.Msgs[f])
					}
				}
			}
			script, changelog = s, "Created from template "+tpl.Name
			t.TemplateID = Ptr(tpl.ID)
			if in.Hosts == nil {
				in.Hosts = &hosts
			}
			if in.Name == nil {
				in.Name = Ptr(tpl.Name)
			}
			if in.Description == nil {
				in.Description = Ptr(tpl.Description)
			}
			if in.EvaluationCriteria == nil {
				in.EvaluationCriteria = Ptr(tpl.Criteria)
			}
		}
		if in.Script != nil {
			ve.Add("script", CodeInvalid, nil, "give script or templateId, not both")
		}
	} else if in.Script != nil {
		script = *in.Script
		a.checkScript(ve, "script", script)
	}
	if in.Changelog != nil {
		changelog = strings.TrimSpace(*in.Changelog)
		maxLen(ve, "changelog", changelog, maxChangelog)
	}
	if in.PinnedVersion.Set && !in.PinnedVersion.Null {
		ve.Add("pinnedVersion", CodeInvalid, in.PinnedVersion.Value, "pinnedVersion is set once the automation has versions")
		in.PinnedVersion = Opt[int]{}
	}
	in.apply(a, t, ve, true)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	a.scheduleNextRun(t, now)
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if script != "" {
			t.LatestVersion = 1
		}
		if err := a.store.CreateTaskAutomation(ctx, p.OrgID, t); err != nil {
			return err
		}
		if script != "" {
			v := &TaskAutomationVersion{ID: NewID(PrefixAutomationVersion), AutomationID: t.ID, Version: 1, Script: script,
				Changelog: changelog, CreatedBy: p.ActorID(), CreatedAt: now}
			if err := a.store.CreateAutomationVersion(ctx, p.OrgID, v); err != nil {
				return err
			}
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "task_automation", ResourceID: t.ID, After: t})
	})
	if err != nil {
		return nil, fmt.Errorf("create task automation: %w", err)
	}
	return t, nil
}

func (a *App) scheduleNextRun(t *TaskAutomation, now time.Time) {
	t.NextRunAt = nil
	if t.ScheduleFrequency == nil || !t.IsEnabled {
		return
	}
	next := now.Add(TaskFrequencies[*t.ScheduleFrequency])
	if t.LastRunAt == nil {
		next = now // a new schedule runs at the next tick
	}
	t.NextRunAt = &next
}

// UpdateTaskAutomation changes an automation's settings.
func (a *App) UpdateTaskAutomation(ctx context.Context, taskID, id string, in TaskAutomationInput) (*TaskAutomation, error) {
	p, _, err := a.taskForAutomations(ctx, taskID, true)
	if err != nil {
		return nil, err
	}
	var out *TaskAutomation
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		t, err := a.store.GetTaskAutomation(ctx, p.OrgID, taskID, id)
		if err != nil {
			return err
		}
		before := *t
		ve := NewValidationError()
		if in.Script != nil {
			ve.Add("script", CodeInvalid, nil, "a script is changed by creating a version (POST .../versions)")
		}
		if in.TemplateID != nil {
			ve.Add("templateId", CodeInvalid, *in.TemplateID, "templateId is set at creation only")
		}
		in.apply(a, t, ve, false)
		if err := ve.Err(); err != nil {
			return err
		}
		if in.ScheduleFrequency.Set || in.IsEnabled != nil {
			a.scheduleNextRun(t, a.Now())
		}
		t.UpdatedAt = a.Now()
		if err := a.store.UpdateTaskAutomation(ctx, p.OrgID, t); err != nil {
			return err
		}
		out = t
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "task_automation", ResourceID: t.ID, Before: &before, After: t})
	})
	if err != nil {
		return nil, fmt.Errorf("update task automation %s: %w", id, err)
	}
	return out, nil
}

// DeleteTaskAutomation removes an automation with its versions and runs.
// Evidence it attached stays (it is the record of what was checked).
func (a *App) DeleteTaskAutomation(ctx context.Context, taskID, id string) error {
	p, _, err := a.taskForAutomations(ctx, taskID, true)
	if err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		t, err := a.store.GetTaskAutomation(ctx, p.OrgID, taskID, id)
		if err != nil {
			return err
		}
		if err := a.store.DeleteTaskAutomation(ctx, p.OrgID, taskID, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "task_automation", ResourceID: id, Before: t})
	})
	if err != nil {
		return fmt.Errorf("delete task automation %s: %w", id, err)
	}
	return nil
}

// ListAutomationVersions lists an automation's versions, newest first.
func (a *App) ListAutomationVersions(ctx context.Context, taskID, id string, pg Page) (List[TaskAutomationVersion], error) {
	p, _, err := a.taskForAutomations(ctx, taskID, false)
	if err != nil {
		return List[TaskAutomationVersion]{}, err
	}
	if _, err := a.store.GetTaskAutomation(ctx, p.OrgID, taskID, id); err != nil {
		return List[TaskAutomationVersion]{}, err
	}
	return a.store.ListAutomationVersions(ctx, p.OrgID, id, pg)
}

// CreateAutomationVersion adds an immutable script version; its number
// must be above the latest (409 otherwise).
func (a *App) CreateAutomationVersion(ctx context.Context, taskID, id string, in TaskAutomationVersionInput) (*TaskAutomationVersion, error) {
	p, _, err := a.taskForAutomations(ctx, taskID, true)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	script, changelog := "", ""
	if in.Script == nil {
		ve.Add("script", CodeRequired, nil, "script is required: the Starlark source of this version")
	} else {
		script = *in.Script
		a.checkScript(ve, "script", script)
	}
	if in.Version == nil {
		ve.Add("version", CodeRequired, nil, "version is required: a number above the latest version")
	} else if *in.Version < 1 {
		ve.Add("version", CodeInvalid, *in.Version, "version must be at least 1")
	}
	if in.Changelog != nil {
		changelog = strings.TrimSpace(*in.Changelog)
		maxLen(ve, "changelog", changelog, maxChangelog)
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	var out *TaskAutomationVersion
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		t, err := a.store.GetTaskAutomation(ctx, p.OrgID, taskID, id)
		if err != nil {
			return err
		}
		if *in.Version <= t.LatestVersion {
			return Errorf(ErrConflict, "version %d is not above the latest version %d; versions are immutable", *in.Version, t.LatestVersion)
		}
		v := &TaskAutomationVersion{ID: NewID(PrefixAutomationVersion), AutomationID: id, Version: *in.Version, Script: script,
			Changelog: changelog, CreatedBy: p.ActorID(), CreatedAt: a.Now()}
		if err := a.store.CreateAutomationVersion(ctx, p.OrgID, v); err != nil {
			return err
		}
		before := *t
		t.LatestVersion, t.UpdatedAt = v.Version, a.Now()
		if err := a.store.UpdateTaskAutomation(ctx, p.OrgID, t); err != nil {
			return err
		}
		out = v
		return a.record(ctx, Mutation{Action: "version_created", ResourceType: "task_automation", ResourceID: id, Before: &before, After: t})
	})
	if err != nil {
		return nil, fmt.Errorf("create automation version: %w", err)
	}
	return out, nil
}

// ListAutomationRuns lists runs of one automation (automationID set) or of
// every automation of the task, newest first, without logs.
func (a *App) ListAutomationRuns(ctx context.Context, f AutomationRunFilter) (List[TaskAutomationRun], error) {
	p, _, err := a.taskForAutomations(ctx, f.TaskID, false)
	if err != nil {
		return List[TaskAutomationRun]{}, err
	}
	if f.AutomationID != "" {
		if _, err := a.store.GetTaskAutomation(ctx, p.OrgID, f.TaskID, f.AutomationID); err != nil {
			return List[TaskAutomationRun]{}, err
		}
	}
	return a.store.ListAutomationRuns(ctx, p.OrgID, f)
}

// GetAutomationRun returns one run with its logs.
func (a *App) GetAutomationRun(ctx context.Context, taskID, automationID, runID string) (*TaskAutomationRun, error) {
	p, _, err := a.taskForAutomations(ctx, taskID, false)
	if err != nil {
		return nil, err
	}
	r, err := a.store.GetAutomationRun(ctx, p.OrgID, runID)
	if err != nil {
		return nil, err
	}
	if r.TaskID != taskID || r.AutomationID != automationID {
		return nil, ErrNotFound
	}
	return r, nil
}

// RunTaskAutomation queues a run by hand; a second one while one is
// pending or running is a conflict.
func (a *App) RunTaskAutomation(ctx context.Context, taskID, id string) (*TaskAutomationRun, error) {
	p, _, err := a.taskForAutomations(ctx, taskID, true)
	if err != nil {
		return nil, err
	}
	if r, _ := a.scriptRunner(); r == nil {
		return nil, Errorf(ErrConflict, "task automations are not configured on this appliance")
	}
	var run *TaskAutomationRun
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		t, err := a.store.GetTaskAutomation(ctx, p.OrgID, taskID, id)
		if err != nil {
			return err
		}
		if t.LatestVersion == 0 {
			return Errorf(ErrConflict, "the automation has no script yet: create a version first")
		}
		run, err = a.queueAutomationRun(ctx, t, AutomationTriggerManual, p.ActorID())
		if err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "run_requested", ResourceType: "task_automation", ResourceID: id})
	})
	if err != nil {
		if errors.Is(err, ErrConflict) && !isPublic(err) {
			return nil, Errorf(ErrConflict, "a run of this automation is already pending or running")
		}
		return nil, fmt.Errorf("run task automation %s: %w", id, err)
	}
	a.wakeAutomationWorker()
	return run, nil
}

func (a *App) queueAutomationRun(ctx context.Context, t *TaskAutomation, trigger, by string) (*TaskAutomationRun, error) {
	v := t.LatestVersion
	if t.PinnedVersion != nil {
		v = *t.PinnedVersion
	}
	r := &TaskAutomationRun{ID: NewID(PrefixAutomationRun), AutomationID: t.ID, AutomationName: t.Name, TaskID: t.TaskID, Version: v,
		Trigger: trigger, Status: AutomationRunPending, Logs: []RunLog{}, Result: map[string]any{}, RequestedBy: by,
		CreatedAt: a.Now(), OrganizationID: t.OrganizationID}
	if err := a.store.CreateAutomationRun(ctx, t.OrganizationID, r); err != nil {
		return nil, err
	}
	return r, nil
}
