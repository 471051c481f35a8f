package app

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Cloud security is the posture view of the cloud connections: the
// failing resources of their cloud-security checks (CheckDefinition.
// CloudSecurity) as findings, exceptions to them, scans and their history.
// It reads and drives the integrations engine; nothing here is stored on
// its own. The appliance holds read-only credentials: remediation is the
// check's text, never an action on the account.

// Cloud finding statuses, as the cloud security routes show them.
const (
	CloudFindingOpen     = "open"     // the resource fails and its finding is open or in review
	CloudFindingExcepted = "excepted" // an active exception covers the resource
	CloudFindingResolved = "resolved" // the resource passed since, or a person resolved or closed the finding
)

// CloudFindingStatuses lists the statuses a filter may name.
var CloudFindingStatuses = []string{CloudFindingOpen, CloudFindingExcepted, CloudFindingResolved}

// CloudScanWait bounds how long POST /v1/cloud-security/scan waits for its
// run before answering with the run id to poll.
var CloudScanWait = 20 * time.Second

// CloudSecurityStore reads the findings the engine keeps for cloud checks.
type CloudSecurityStore interface {
	// CloudFindings lists the findings linked to check resources of the
	// given connections (every connection when ids is empty), newest
	// first, with the latest result of each resource.
	CloudFindings(ctx context.Context, orgID string, connectionIDs []string, severity string) ([]CloudFinding, error)
	// CloudFindingByID returns one finding linked to a check resource.
	CloudFindingByID(ctx context.Context, orgID, findingID string) (*CloudFinding, error)
}

// CloudFinding is a failing (or once failing) resource of a cloud check.
type CloudFinding struct {
	ID             string     `json:"id"` // the finding's id
	ConnectionID   string     `json:"connectionId"`
	ConnectionName string     `json:"connectionName"`
	ProviderSlug   string     `json:"providerSlug"`
	CheckID        string     `json:"checkId"`
	CheckTitle     string     `json:"checkTitle"`
	Service        string     `json:"service"`
	Severity       string     `json:"severity"`
	Status         string     `json:"status"`
	FindingStatus  string     `json:"findingStatus"` // the finding's own status (open, in_review, resolved, closed)
	ResourceType   string     `json:"resourceType"`
	ResourceID     string     `json:"resourceId"`
	ResourceName   string     `json:"resourceName"`
	Message        string     `json:"message"`
	Remediation    string     `json:"remediation"`
	LastResult     string     `json:"lastResult"` // pass, fail, excepted, error of the latest run
	LastRunID      *string    `json:"lastRunId"`
	ExceptionID    *string    `json:"exceptionId"`
	ExceptionUntil *time.Time `json:"exceptionExpiresAt"`
	CreatedAt      time.Time  `json:"createdAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
}

// CloudFindingFilter selects cloud findings.
type CloudFindingFilter struct {
	ConnectionID string
	Severity     string
	Service      string
	Status       string
}

// CloudProvider is a provider with cloud-security checks and the
// organization's connections to it.
type CloudProvider struct {
	Slug        string                `json:"slug"`
	Name        string                `json:"name"`
	Description string                `json:"description"`
	Services    []ProviderService     `json:"services"`
	Checks      int                   `json:"checks"`
	ScanModes   []string              `json:"scanModes"`
	Connections []CloudConnectionInfo `json:"connections"`
}

// CloudConnectionInfo is a connection as the cloud security routes list it.
type CloudConnectionInfo struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	Status        string     `json:"status"`
	ScanMode      string     `json:"scanMode"`
	LastRunAt     *time.Time `json:"lastRunAt"`
	LastRunStatus *string    `json:"lastRunStatus"`
}

// CloudExceptionCreate is the body of marking a finding as an exception.
type CloudExceptionCreate struct {
	Reason     string  `json:"reason"`
	ReviewedBy string  `json:"reviewedBy"`
	ExpiresAt  *string `json:"expiresAt"`
}

// CloudScanResult answers a scan: the run's counts when it finished within
// the wait, else only its id and status.
type CloudScanResult struct {
	Success       bool       `json:"success"`
	Completed     bool       `json:"completed"`
	RunID         string     `json:"runId"`
	Status        string     `json:"status"`
	Provider      string     `json:"provider"`
	FindingsCount int        `json:"findingsCount"`
	Failed        int        `json:"failed"`
	Passed        int        `json:"passed"`
	ScannedAt     *time.Time `json:"scannedAt"`
}

// CloudRunStatus is a run's progress.
type CloudRunStatus struct {
	Completed bool      `json:"completed"`
	Success   bool      `json:"success"`
	Output    *CheckRun `json:"output"`
}

// CloudHistoryPoint is one finished run of a connection.
type CloudHistoryPoint struct {
	RunID            string     `json:"runId"`
	Status           string     `json:"status"`
	Trigger          string     `json:"trigger"`
	At               time.Time  `json:"at"`
	FinishedAt       *time.Time `json:"finishedAt"`
	Passed           int        `json:"passed"`
	Failed           int        `json:"failed"`
	Excepted         int        `json:"excepted"`
	Errored          int        `json:"errored"`
	FindingsOpened   int        `json:"findingsOpened"`
	FindingsResolved int        `json:"findingsResolved"`
}

// CloudActivity is one thing that happened on a cloud connection.
type CloudActivity struct {
	At          time.Time `json:"at"`
	Type        string    `json:"type"` // run.queued, run.succeeded, run.failed, run.interrupted, exception.created, exception.expired
	Message     string    `json:"message"`
	RunID       *string   `json:"runId"`
	ExceptionID *string   `json:"exceptionId"`
}

// CloudServiceAccess says what the credentials can see of one service.
type CloudServiceAccess struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Accessible bool     `json:"accessible"`
	Regions    []string `json:"regions"`
	Message    string   `json:"message"`
}

// CloudServiceDetector is a provider that can tell which services its
// credentials can read.
type CloudServiceDetector interface {
	DetectServices(ctx context.Context, c ConnectionTarget) ([]CloudServiceAccess, error)
}

// ConnectionValidator is a provider that checks a connection's settings
// beyond the fields' types (a region's or an ARN's shape). It returns the
// field ("credentials.roleArn", "variables.regions") and a message, or
// empty strings.
type ConnectionValidator interface {
	ValidateConnection(c ConnectionTarget) (field, message string)
}

func cloudDefinition(p IntegrationProvider) (ProviderDefinition, bool) {
	d := p.Definition()
	return d, containsString(d.Capabilities, CapabilityCloudSecurity)
}

// cloudConnection loads a connection of a cloud-security provider; any
// other connection is not found here.
func (a *App) cloudConnection(ctx context.Context, orgID, id string) (*Connection, ProviderDefinition, IntegrationProvider, error) {
	c, err := a.store.GetConnection(ctx, orgID, id)
	if err != nil {
		return nil, ProviderDefinition{}, nil, err
	}
	if p, ok := a.provider(c.ProviderSlug); ok {
		if d, cloud := cloudDefinition(p); cloud {
			return c, d, p, nil
		}
	}
	return nil, ProviderDefinition{}, nil, Errorf(ErrNotFound, "connection %s is not a cloud security connection", id)
}

// ListCloudProviders lists the providers with cloud-security checks.
func (a *App) ListCloudProviders(ctx context.Context) ([]CloudProvider, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	conns, err := a.store.ListConnections(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	out := []CloudProvider{}
	for _, prov := range a.providerList() {
		d, ok := cloudDefinition(prov)
		if !ok {
			continue
		}
		cp := CloudProvider{Slug: d.Slug, Name: d.Name, Description: d.Description, Services: d.Services, ScanModes: []string{},
			Connections: []CloudConnectionInfo{}}
		if cp.Services == nil {
			cp.Services = []ProviderService{}
		}
		for _, ch := range d.Checks {
			if ch.CloudSecurity {
				cp.Checks++
			}
		}
		for _, v := range d.Variables {
			if v.Key == "scanMode" {
				cp.ScanModes = v.Options
			}
		}
		for _, c := range conns {
			if c.ProviderSlug == d.Slug {
				cp.Connections = append(cp.Connections, CloudConnectionInfo{ID: c.ID, Name: c.Name, Status: c.Status,
					ScanMode: c.Variables["scanMode"], LastRunAt: c.LastRunAt, LastRunStatus: c.LastRunStatus})
			}
		}
		out = append(out, cp)
	}
	return out, nil
}

// ListCloudFindings lists the findings of cloud-security checks.
func (a *App) ListCloudFindings(ctx context.Context, f CloudFindingFilter) ([]CloudFinding, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	if f.Severity != "" && !containsString(FindingSeverities, f.Severity) {
		ve.Add("severity", CodeInvalid, f.Severity, "severity must be one of "+strings.Join(FindingSeverities, ", "))
	}
	if f.Status != "" && !containsString(CloudFindingStatuses, f.Status) {
		ve.Add("status", CodeInvalid, f.Status, "status must be one of "+strings.Join(CloudFindingStatuses, ", "))
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	var ids []string
	if f.ConnectionID != "" {
		if _, _, _, err := a.cloudConnection(ctx, p.OrgID, f.ConnectionID); err != nil {
			return nil, err
		}
		ids = []string{f.ConnectionID}
	} else {
		conns, err := a.store.ListConnections(ctx, p.OrgID)
		if err != nil {
			return nil, err
		}
		for _, c := range conns {
			if prov, ok := a.provider(c.ProviderSlug); ok {
				if _, cloud := cloudDefinition(prov); cloud {
					ids = append(ids, c.ID)
				}
			}
		}
		if len(ids) == 0 {
			return []CloudFinding{}, nil
		}
	}
	rows, err := a.store.CloudFindings(ctx, p.OrgID, ids, f.Severity)
	if err != nil {
		return nil, err
	}
	return a.decorateCloudFindings(ctx, p.OrgID, rows, f)
}

// decorateCloudFindings adds the check's definition and the exception
// state, and keeps the rows f selects.
func (a *App) decorateCloudFindings(ctx context.Context, orgID string, rows []CloudFinding, f CloudFindingFilter) ([]CloudFinding, error) {
	now := a.Now()
	exceptions := map[string]map[CheckResourceKey]CheckException{}
	out := make([]CloudFinding, 0, len(rows))
	for _, r := range rows {
		prov, ok := a.provider(r.ProviderSlug)
		if !ok {
			continue
		}
		var def *CheckDefinition
		for _, ch := range prov.Definition().Checks {
			if ch.ID == r.CheckID {
				def = &ch
				break
			}
		}
		if def == nil || !def.CloudSecurity {
			continue
		}
		r.CheckTitle, r.Service, r.Remediation = def.Title, def.Service, def.Remediation
		if f.Service != "" && r.Service != f.Service {
			continue
		}
		ex, ok := exceptions[r.ConnectionID]
		if !ok {
			list, err := a.store.ListCheckExceptions(ctx, orgID, r.ConnectionID)
			if err != nil {
				return nil, err
			}
			ex = map[CheckResourceKey]CheckException{}
			for _, e := range list {
				k := CheckResourceKey{e.CheckID, e.ResourceID}
				if e.ExpiresAt.After(now) && (ex[k].ID == "" || e.ExpiresAt.After(ex[k].ExpiresAt)) {
					ex[k] = e
				}
			}
			exceptions[r.ConnectionID] = ex
		}
		switch e, has := ex[CheckResourceKey{r.CheckID, r.ResourceID}]; {
		case has && (r.FindingStatus == FindingOpen || r.FindingStatus == FindingInReview || r.LastResult == CheckExcepted):
			r.Status, r.ExceptionID, r.ExceptionUntil = CloudFindingExcepted, &e.ID, &e.ExpiresAt
		case r.FindingStatus == FindingOpen || r.FindingStatus == FindingInReview:
			r.Status = CloudFindingOpen
		default:
			r.Status = CloudFindingResolved
		}
		if f.Status != "" && r.Status != f.Status {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// cloudFinding loads one cloud finding of the caller's organization.
func (a *App) cloudFinding(ctx context.Context, orgID, id string) (*CloudFinding, error) {
	row, err := a.store.CloudFindingByID(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if _, _, _, err := a.cloudConnection(ctx, orgID, row.ConnectionID); err != nil {
		return nil, Errorf(ErrNotFound, "finding %s is not a cloud security finding", id)
	}
	list, err := a.decorateCloudFindings(ctx, orgID, []CloudFinding{*row}, CloudFindingFilter{})
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, Errorf(ErrNotFound, "finding %s is not a cloud security finding", id)
	}
	return &list[0], nil
}

// MarkCloudFindingException excepts a finding's resource from its check:
// the reason is at least 20 characters, reviewedBy a person of the
// organization, expiresAt at most a year away (default 90 days). The
// next run records the resource as excepted and resolves the finding;
// once the exception expires, a failing resource opens a finding again.
func (a *App) MarkCloudFindingException(ctx context.Context, findingID string, in CloudExceptionCreate) (*CheckException, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	f, err := a.cloudFinding(ctx, p.OrgID, findingID)
	if err != nil {
		return nil, err
	}
	expires := a.Now().Add(90 * 24 * time.Hour).UTC().Format(time.RFC3339)
	if in.ExpiresAt != nil {
		expires = *in.ExpiresAt
	}
	e, err := a.CreateCheckException(ctx, f.ConnectionID, CheckExceptionCreate{CheckID: f.CheckID, ResourceID: f.ResourceID,
		Reason: in.Reason, ReviewerID: in.ReviewedBy, ExpiresAt: expires})
	var ve *ValidationError
	if errors.As(err, &ve) {
		if code, ok := ve.Fields["reviewerId"]; ok {
			out := NewValidationError()
			for k, c := range ve.Fields {
				if k != "reviewerId" {
					out.Add(k, c, ve.Values[k], ve.Msgs[k])
				}
			}
			out.Add("reviewedBy", code, ve.Values["reviewerId"], strings.ReplaceAll(ve.Msgs["reviewerId"], "reviewerId", "reviewedBy"))
			return nil, out.Err()
		}
	}
	return e, err
}

// RevokeCloudException withdraws an exception of a cloud connection.
func (a *App) RevokeCloudException(ctx context.Context, id string) error {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	e, err := a.store.GetCheckException(ctx, p.OrgID, id)
	if err != nil {
		return err
	}
	if _, _, _, err := a.cloudConnection(ctx, p.OrgID, e.ConnectionID); err != nil {
		return Errorf(ErrNotFound, "exception %s is not a cloud security exception", id)
	}
	return a.DeleteCheckException(ctx, id)
}

// CloudCheckDefinition returns the definition of a finding's check with
// the requirements it serves.
func (a *App) CloudCheckDefinition(ctx context.Context, findingID string) (*CheckInfo, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	f, err := a.cloudFinding(ctx, p.OrgID, findingID)
	if err != nil {
		return nil, err
	}
	prov, _ := a.provider(f.ProviderSlug)
	cat, err := a.catalog()
	if err != nil {
		return nil, err
	}
	for _, ch := range prov.Definition().Checks {
		if ch.ID == f.CheckID {
			ci := checkInfo(cat, ch)
			return &ci, nil
		}
	}
	return nil, Errorf(ErrNotFound, "check %s is no longer defined", f.CheckID)
}

// TriggerCloudScan queues a run of every check of a cloud connection.
func (a *App) TriggerCloudScan(ctx context.Context, connectionID string) (*CheckRun, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	if _, _, _, err := a.cloudConnection(ctx, p.OrgID, connectionID); err != nil {
		return nil, err
	}
	return a.RunConnectionChecks(ctx, connectionID, "")
}

// ScanCloud queues a run and waits for it up to wait: a finished run
// answers its counts, an unfinished one its id to poll.
func (a *App) ScanCloud(ctx context.Context, connectionID string, wait time.Duration) (*CloudScanResult, error) {
	run, err := a.TriggerCloudScan(ctx, connectionID)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		if run.Status != RunQueued && run.Status != RunRunning {
			break
		}
		if !time.Now().Before(deadline) {
			break
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		if run, err = a.GetCheckRun(ctx, run.ID); err != nil {
			return nil, err
		}
	}
	res := &CloudScanResult{RunID: run.ID, Status: run.Status, Provider: run.ProviderSlug}
	if run.Status == RunQueued || run.Status == RunRunning {
		return res, nil
	}
	res.Completed, res.Success = true, run.Status == RunSucceeded
	res.FindingsCount, res.Failed, res.Passed, res.ScannedAt = run.Failed, run.Failed, run.Passed, run.FinishedAt
	return res, nil
}

// CloudRun returns a run's progress; connectionID, when given, must be
// the run's connection.
func (a *App) CloudRun(ctx context.Context, runID, connectionID string) (*CloudRunStatus, error) {
	run, err := a.GetCheckRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if connectionID != "" && run.ConnectionID != connectionID {
		return nil, Errorf(ErrNotFound, "run %s is not a run of connection %s", runID, connectionID)
	}
	done := run.Status != RunQueued && run.Status != RunRunning
	return &CloudRunStatus{Completed: done, Success: run.Status == RunSucceeded, Output: run}, nil
}

// CloudHistory lists a cloud connection's last 100 runs, oldest first.
func (a *App) CloudHistory(ctx context.Context, connectionID string) ([]CloudHistoryPoint, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	if connectionID == "" {
		return nil, Invalid("connectionId", CodeRequired, nil, "connectionId is required")
	}
	if _, _, _, err := a.cloudConnection(ctx, p.OrgID, connectionID); err != nil {
		return nil, err
	}
	runs, err := a.store.ListCheckRuns(ctx, p.OrgID, CheckRunFilter{ConnectionID: connectionID, Page: Page{Page: 1, PerPage: 100}})
	if err != nil {
		return nil, err
	}
	out := make([]CloudHistoryPoint, 0, len(runs.Items))
	for i := len(runs.Items) - 1; i >= 0; i-- {
		r := runs.Items[i]
		out = append(out, CloudHistoryPoint{RunID: r.ID, Status: r.Status, Trigger: r.Trigger, At: r.QueuedAt, FinishedAt: r.FinishedAt,
			Passed: r.Passed, Failed: r.Failed, Excepted: r.Excepted, Errored: r.Errored, FindingsOpened: r.FindingsOpened, FindingsResolved: r.FindingsResolved})
	}
	return out, nil
}

// CloudActivityList lists the latest take (1 to 500, default 50) things
// that happened on a cloud connection: runs and exceptions.
func (a *App) CloudActivityList(ctx context.Context, connectionID string, take int) ([]CloudActivity, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	if connectionID == "" {
		return nil, Invalid("connectionId", CodeRequired, nil, "connectionId is required")
	}
	if take == 0 {
		take = 50
	}
	if take < 1 || take > 500 {
		return nil, Invalid("take", CodeInvalid, take, "take must be between 1 and 500")
	}
	if _, _, _, err := a.cloudConnection(ctx, p.OrgID, connectionID); err != nil {
		return nil, err
	}
	runs, err := a.store.ListCheckRuns(ctx, p.OrgID, CheckRunFilter{ConnectionID: connectionID, Page: Page{Page: 1, PerPage: take}})
	if err != nil {
		return nil, err
	}
	var out []CloudActivity
	for _, r := range runs.Items {
		id := r.ID
		out = append(out, CloudActivity{At: r.QueuedAt, Type: "run.queued", RunID: &id, Message: fmt.Sprintf("scan queued (%s)", r.Trigger)})
		if r.FinishedAt != nil {
			msg := fmt.Sprintf("scan %s: %d passed, %d failed, %d excepted, %d errors; %d findings opened, %d resolved",
				r.Status, r.Passed, r.Failed, r.Excepted, r.Errored, r.FindingsOpened, r.FindingsResolved)
			if r.Error != nil {
				msg = "scan " + r.Status + ": " + *r.Error
			}
			out = append(out, CloudActivity{At: *r.FinishedAt, Type: "run." + r.Status, RunID: &id, Message: msg})
		}
	}
	exs, err := a.store.ListCheckExceptions(ctx, p.OrgID, connectionID)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	for _, e := range exs {
		id := e.ID
		out = append(out, CloudActivity{At: e.CreatedAt, Type: "exception.created", ExceptionID: &id,
			Message: fmt.Sprintf("exception for %s on %s until %s", e.CheckID, e.ResourceID, e.ExpiresAt.UTC().Format("2006-01-02"))})
		if !e.ExpiresAt.After(now) {
			out = append(out, CloudActivity{At: e.ExpiresAt, Type: "exception.expired", ExceptionID: &id,
				Message: fmt.Sprintf("exception for %s on %s expired", e.CheckID, e.ResourceID)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	if len(out) > take {
		out = out[:take]
	}
	if out == nil {
		out = []CloudActivity{}
	}
	return out, nil
}

// DetectCloudServices asks the provider which services and regions the
// connection's credentials can read.
func (a *App) DetectCloudServices(ctx context.Context, connectionID string) ([]CloudServiceAccess, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	c, _, prov, err := a.cloudConnection(ctx, p.OrgID, connectionID)
	if err != nil {
		return nil, err
	}
	det, ok := prov.(CloudServiceDetector)
	if !ok {
		return nil, Errorf(ErrConflict, "provider %s cannot detect services", c.ProviderSlug)
	}
	if c.Status == ConnectionDisconnected {
		return nil, Errorf(ErrConflict, "connection %s is disconnected: set its credentials again first", c.ID)
	}
	t, err := a.target(p.OrgID, c)
	if err != nil {
		return nil, err
	}
	return det.DetectServices(ctx, t)
}

// SetCloudScanMode sets a cloud connection's scan mode (the provider's
// scanMode variable).
func (a *App) SetCloudScanMode(ctx context.Context, connectionID, mode string) (*Connection, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	_, d, _, err := a.cloudConnection(ctx, p.OrgID, connectionID)
	if err != nil {
		return nil, err
	}
	var options []string
	for _, v := range d.Variables {
		if v.Key == "scanMode" {
			options = v.Options
		}
	}
	mode = strings.TrimSpace(mode)
	switch {
	case len(options) == 0:
		return nil, Invalid("mode", CodeInvalid, mode, fmt.Sprintf("provider %s has no scan modes", d.Slug))
	case mode == "":
		return nil, Invalid("mode", CodeRequired, nil, "mode is required: one of "+strings.Join(options, ", "))
	case !containsString(options, mode):
		return nil, Invalid("mode", CodeInvalid, mode, "mode must be one of "+strings.Join(options, ", "))
	}
	return a.mutateConnection(ctx, connectionID, "updated", func(c *Connection, _ ProviderDefinition, _ *ValidationError) (bool, error) {
		vars := map[string]string{}
		for k, v := range c.Variables {
			vars[k] = v
		}
		vars["scanMode"] = mode
		c.Variables = vars
		return false, nil
	})
}

// validateProviderSettings lets a provider check a new connection's
// settings beyond the fields' types.
func validateProviderSettings(ve *ValidationError, prov IntegrationProvider, orgID string, creds, vars map[string]string) {
	v, ok := prov.(ConnectionValidator)
	if !ok || !ve.Empty() {
		return
	}
	if field, msg := v.ValidateConnection(ConnectionTarget{OrganizationID: orgID, Credentials: creds, Variables: vars}); field != "" {
		ve.Add(field, CodeInvalid, nil, field+" "+msg)
	}
}
