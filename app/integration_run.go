package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Check run statuses.
const (
	RunQueued      = "queued"
	RunRunning     = "running"
	RunSucceeded   = "succeeded"
	RunFailed      = "failed"
	RunInterrupted = "interrupted"
)

// Run triggers.
const (
	TriggerManual   = "manual"
	TriggerSchedule = "schedule"
	TriggerWebhook  = "webhook"
	TriggerPush     = "push"
)

// Run limits: a run keeps at most this many log lines (each cut to
// maxLogLine characters) and this many outcomes.
const (
	maxRunLogs     = 500
	maxLogLine     = 1000
	maxRunOutcomes = 20000
)

// CheckRun is one execution of a connection's checks (all, or one).
type CheckRun struct {
	ID               string     `json:"id"`
	CheckRunID       string     `json:"checkRunId"`
	ConnectionID     string     `json:"connectionId"`
	ProviderSlug     string     `json:"providerSlug"`
	CheckID          *string    `json:"checkId"`
	Trigger          string     `json:"trigger"`
	Status           string     `json:"status"`
	Error            *string    `json:"error"`
	Passed           int        `json:"passed"`
	Failed           int        `json:"failed"`
	Excepted         int        `json:"excepted"`
	Errored          int        `json:"errored"`
	FindingsOpened   int        `json:"findingsOpened"`
	FindingsResolved int        `json:"findingsResolved"`
	EvidenceAttached int        `json:"evidenceAttached"`
	Logs             []RunLog   `json:"logs"`
	RequestedBy      string     `json:"requestedBy"`
	QueuedAt         time.Time  `json:"queuedAt"`
	StartedAt        *time.Time `json:"startedAt"`
	FinishedAt       *time.Time `json:"finishedAt"`

	OrganizationID string `json:"-"`
}

// RunLog is one log line of a run.
type RunLog struct {
	At      time.Time `json:"at"`
	Level   string    `json:"level"`
	Message string    `json:"message"`
}

// CheckResult is one check's verdict on one resource in a run.
type CheckResult struct {
	RunID        string         `json:"checkRunId"`
	ConnectionID string         `json:"connectionId"`
	CheckID      string         `json:"checkId"`
	ResourceType string         `json:"resourceType"`
	ResourceID   string         `json:"resourceId"`
	ResourceName string         `json:"resourceName"`
	Status       string         `json:"status"`
	Message      string         `json:"message"`
	Details      map[string]any `json:"details"`
	FindingID    *string        `json:"findingId"`
	ExceptionID  *string        `json:"exceptionId"`
}

// CheckRunFilter selects runs of a connection.
type CheckRunFilter struct {
	ConnectionID string
	CheckID      string
	Page         Page
}

// CheckResultFilter selects results.
type CheckResultFilter struct {
	RunID        string
	ConnectionID string
	CheckID      string
	Status       string
	Page         Page
}

// CheckSummary is the latest verdict of one check of a connection.
type CheckSummary struct {
	RunID    string    `json:"checkRunId"`
	At       time.Time `json:"at"`
	Status   string    `json:"status"` // pass, fail, error (worst of the resources)
	Passed   int       `json:"passed"`
	Failed   int       `json:"failed"`
	Excepted int       `json:"excepted"`
	Errored  int       `json:"errored"`
}

// CheckResourceKey names one resource of one check.
type CheckResourceKey struct {
	CheckID    string
	ResourceID string
}

// CheckRunRequest is the body of a run request: checkId narrows the run to
// one check.
type CheckRunRequest struct {
	CheckID *string `json:"checkId"`
}

// RunConnectionChecks queues a run of a connection's checks (or of one) and
// wakes the worker. A second run while one is queued or running is a
// conflict.
func (a *App) RunConnectionChecks(ctx context.Context, connectionID, checkID string) (*CheckRun, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var run *CheckRun
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		c, err := a.store.GetConnection(ctx, p.OrgID, connectionID)
		if err != nil {
			return err
		}
		prov, ok := a.provider(c.ProviderSlug)
		if !ok {
			return Errorf(ErrConflict, "provider %s is not available (not in this build, or switched off by the appliance operator)", c.ProviderSlug)
		}
		d := prov.Definition()
		if d.AuthStrategy == ProviderAuthPush {
			return Invalid("connectionId", CodeInvalid, connectionID, "a custom connection's results are pushed by your script (POST /v1/integrations/push/{connectionId}); the appliance has nothing to run")
		}
		if c.Status == ConnectionDisconnected {
			return Errorf(ErrConflict, "the connection is disconnected")
		}
		if checkID != "" && !hasCheck(d, checkID) {
			return Errorf(ErrNotFound, "provider %s has no check %q", d.Slug, checkID)
		}
		run, err = a.queueRun(ctx, p.OrgID, c, checkID, TriggerManual, p.ActorID())
		return err
	})
	if err != nil {
		if errors.Is(err, ErrConflict) && !isPublic(err) {
			return nil, Errorf(ErrConflict, "a run of this connection is already queued or running")
		}
		return nil, fmt.Errorf("run checks of connection %s: %w", connectionID, err)
	}
	a.wakeIntegrationWorker()
	return run, nil
}

func isPublic(err error) bool {
	var pe *PublicError
	return errors.As(err, &pe)
}

func hasCheck(d ProviderDefinition, id string) bool {
	for _, c := range d.Checks {
		if c.ID == id {
			return true
		}
	}
	return false
}

func (a *App) queueRun(ctx context.Context, orgID string, c *Connection, checkID, trigger, by string) (*CheckRun, error) {
	id := NewID(PrefixCheckRun)
	run := &CheckRun{ID: id, CheckRunID: id, ConnectionID: c.ID, ProviderSlug: c.ProviderSlug, Trigger: trigger,
		Status: RunQueued, RequestedBy: by, QueuedAt: a.Now(), Logs: []RunLog{}, OrganizationID: orgID}
	if checkID != "" {
		run.CheckID = &checkID
	}
	if err := a.store.CreateCheckRun(ctx, orgID, run); err != nil {
		return nil, err
	}
	return run, nil
}

// GetCheckRun returns one run with its logs.
func (a *App) GetCheckRun(ctx context.Context, id string) (*CheckRun, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	r, err := a.store.GetCheckRun(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ListCheckRuns lists a connection's runs, newest first.
func (a *App) ListCheckRuns(ctx context.Context, f CheckRunFilter) (List[CheckRun], error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return List[CheckRun]{}, err
	}
	if _, err := a.store.GetConnection(ctx, p.OrgID, f.ConnectionID); err != nil {
		return List[CheckRun]{}, err
	}
	return a.store.ListCheckRuns(ctx, p.OrgID, f)
}

// ListCheckResults lists a run's per-resource results.
func (a *App) ListCheckResults(ctx context.Context, f CheckResultFilter) (List[CheckResult], error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return List[CheckResult]{}, err
	}
	if f.Status != "" && !containsString([]string{CheckPass, CheckFail, CheckError, CheckExcepted}, f.Status) {
		return List[CheckResult]{}, Invalid("status", CodeInvalidEnum, f.Status, "status must be one of pass, fail, error, excepted")
	}
	if f.RunID != "" {
		if _, err := a.store.GetCheckRun(ctx, p.OrgID, f.RunID); err != nil {
			return List[CheckResult]{}, err
		}
	}
	if f.ConnectionID != "" {
		if _, err := a.store.GetConnection(ctx, p.OrgID, f.ConnectionID); err != nil {
			return List[CheckResult]{}, err
		}
	}
	return a.store.ListCheckResults(ctx, p.OrgID, f)
}

// ConnectionCheck is a check of a connection with its latest verdict.
type ConnectionCheck struct {
	CheckInfo
	Enabled    bool          `json:"enabled"`
	LastResult *CheckSummary `json:"lastResult"`
}

// ConnectionChecks is the answer of the connection's check list.
type ConnectionChecks struct {
	ConnectionID     string            `json:"connectionId"`
	ProviderSlug     string            `json:"providerSlug"`
	ProviderName     string            `json:"providerName"`
	ConnectionStatus string            `json:"connectionStatus"`
	Checks           []ConnectionCheck `json:"checks"`
}

// ProviderChecks is the answer of a provider's check list.
type ProviderChecks struct {
	ProviderSlug string      `json:"providerSlug"`
	ProviderName string      `json:"providerName"`
	Checks       []CheckInfo `json:"checks"`
}

// ListProviderChecks lists a provider's checks.
func (a *App) ListProviderChecks(ctx context.Context, slug string) (*ProviderChecks, error) {
	info, err := a.GetIntegrationProvider(ctx, slug)
	if err != nil {
		return nil, err
	}
	return &ProviderChecks{ProviderSlug: info.Slug, ProviderName: info.Name, Checks: info.Checks}, nil
}

// ListConnectionChecks lists a connection's checks with their latest
// results. For a custom connection the checks are those its pushes named.
func (a *App) ListConnectionChecks(ctx context.Context, connectionID string) (*ConnectionChecks, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.store.GetConnection(ctx, p.OrgID, connectionID)
	if err != nil {
		return nil, err
	}
	a.connectionView(c)
	cat, err := a.catalog()
	if err != nil {
		return nil, err
	}
	latest, err := a.store.LatestCheckResults(ctx, p.OrgID, connectionID)
	if err != nil {
		return nil, err
	}
	out := &ConnectionChecks{ConnectionID: c.ID, ProviderSlug: c.ProviderSlug, ProviderName: c.ProviderName,
		ConnectionStatus: c.Status, Checks: []ConnectionCheck{}}
	seen := map[string]bool{}
	if prov, ok := a.provider(c.ProviderSlug); ok {
		for _, ch := range prov.Definition().Checks {
			seen[ch.ID] = true
			cc := ConnectionCheck{CheckInfo: checkInfo(cat, ch), Enabled: ch.Service == "" || len(c.Services) == 0 || containsString(c.Services, ch.Service)}
			if s, ok := latest[ch.ID]; ok {
				s := s
				cc.LastResult = &s
			}
			out.Checks = append(out.Checks, cc)
		}
	}
	for _, id := range sortedKeys(latest) {
		if seen[id] {
			continue
		}
		s := latest[id]
		out.Checks = append(out.Checks, ConnectionCheck{CheckInfo: CheckInfo{CheckDefinition: CheckDefinition{ID: id, Title: id,
			Evidences: []RequirementRef{}}, Requirements: []CheckRequirement{}}, Enabled: true, LastResult: &s})
	}
	return out, nil
}

// runSink collects a run's outcomes and logs; providers may call it from
// several goroutines.
type runSink struct {
	mu       sync.Mutex
	now      func() time.Time
	outcomes []CheckOutcome
	logs     []RunLog
	dropped  int
	cut      int
}

func (s *runSink) Outcome(o CheckOutcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.outcomes) >= maxRunOutcomes {
		s.dropped++
		return
	}
	s.outcomes = append(s.outcomes, o)
}

func (s *runSink) Log(level, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.logs) >= maxRunLogs {
		s.cut++
		return
	}
	switch level {
	case "info", "warn", "error":
	default:
		level = "info"
	}
	if r := []rune(message); len(r) > maxLogLine {
		message = string(r[:maxLogLine]) + "…"
	}
	s.logs = append(s.logs, RunLog{At: s.now(), Level: level, Message: message})
}

// StartIntegrationWorker runs queued check runs in the background until ctx
// ends: a run queued by a request, the scheduler or a webhook starts within
// moments. Call InterruptStaleRuns first at start-up.
func (a *App) StartIntegrationWorker(ctx context.Context) *sync.WaitGroup {
	s := &a.integ
	s.mu.Lock()
	if s.wake == nil {
		s.wake = make(chan struct{}, 1)
	}
	wake := s.wake
	s.mu.Unlock()
	o := a.integOptions()
	var wg sync.WaitGroup
	for i := 0; i < o.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(5 * time.Second)
			defer t.Stop()
			for {
				if _, err := a.ProcessQueuedRuns(ctx); err != nil && ctx.Err() == nil {
					a.log.Error("integration runs failed", "err", err)
				}
				if _, err := a.ProcessVendorAssessments(ctx); err != nil && ctx.Err() == nil {
					a.log.Error("vendor assessments failed", "err", err)
				}
				select {
				case <-ctx.Done():
					return
				case <-wake:
				case <-t.C:
				}
			}
		}()
	}
	return &wg
}

func (a *App) wakeIntegrationWorker() {
	s := &a.integ
	s.mu.Lock()
	w := s.wake
	s.mu.Unlock()
	if w == nil {
		return
	}
	select {
	case w <- struct{}{}:
	default:
	}
}

// InterruptStaleRuns marks runs left running by a stop or a crash as
// interrupted. It runs at start-up, before the worker.
func (a *App) InterruptStaleRuns(ctx context.Context) (int, error) {
	n, err := a.store.InterruptRunningCheckRuns(ctx, a.Now(), "the appliance stopped while the run was in progress; it was not completed")
	if err != nil {
		return 0, fmt.Errorf("interrupt stale check runs: %w", err)
	}
	return n, nil
}

// ProcessQueuedRuns claims and executes queued runs until none is left,
// and returns how many ran. A run's failure is recorded on the run; only a
// storage failure is returned.
func (a *App) ProcessQueuedRuns(ctx context.Context) (int, error) {
	n := 0
	for ctx.Err() == nil {
		run, err := a.store.ClaimCheckRun(ctx, a.Now())
		if errors.Is(err, ErrNotFound) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("claim check run: %w", err)
		}
		n++
		if err := a.executeRun(ctx, run); err != nil {
			return n, err
		}
	}
	return n, nil
}

// executeRun runs a claimed run against its provider and applies the
// outcomes. The provider call happens outside any transaction, under the
// run timeout.
func (a *App) executeRun(ctx context.Context, run *CheckRun) error {
	orgID := run.OrganizationID
	sys := SystemContext(ctx, orgID)
	sink := &runSink{now: a.Now}
	finish := func(runErr string, defs map[string]CheckDefinition, c *Connection) error {
		return a.finishRun(sys, run, c, defs, sink, runErr)
	}
	c, err := a.store.GetConnection(sys, orgID, run.ConnectionID)
	if err != nil {
		return finish("the connection is gone: "+err.Error(), nil, nil)
	}
	prov, ok := a.provider(c.ProviderSlug)
	if !ok {
		return finish("provider "+c.ProviderSlug+" is not available (not in this build, or switched off by the appliance operator)", nil, c)
	}
	d := prov.Definition()
	defs := map[string]CheckDefinition{}
	var ids []string
	for _, ch := range d.Checks {
		if run.CheckID != nil && *run.CheckID != ch.ID {
			continue
		}
		if ch.Service != "" && len(c.Services) > 0 && !containsString(c.Services, ch.Service) {
			continue
		}
		defs[ch.ID] = ch
		ids = append(ids, ch.ID)
	}
	if run.CheckID != nil && len(ids) == 0 {
		return finish(fmt.Sprintf("check %s is not enabled for this connection", *run.CheckID), defs, c)
	}
	if run.CheckID == nil {
		ids = nil // every check of the definition (services narrow in the provider)
	}
	if err := a.refreshOAuthToken(sys, orgID, c); err != nil {
		return finish(err.Error(), defs, c)
	}
	target, err := a.target(orgID, c)
	if err != nil {
		return finish(err.Error(), defs, c)
	}
	o := a.integOptions()
	rctx, cancel := context.WithTimeout(ctx, o.RunTimeout)
	sink.Log("info", fmt.Sprintf("run started (%s) against %s", run.Trigger, d.Name))
	runErr := safeRun(rctx, prov, target, ids, sink)
	timedOut := rctx.Err() == context.DeadlineExceeded
	cancel()
	if ctx.Err() != nil {
		// Shutting down: leave the run for InterruptStaleRuns at next start.
		return nil
	}
	msg := ""
	switch {
	case timedOut:
		msg = fmt.Sprintf("the run did not finish within %s", o.RunTimeout)
	case runErr != nil:
		msg = runErr.Error()
	}
	return finish(msg, defs, c)
}

func safeRun(ctx context.Context, p IntegrationProvider, t ConnectionTarget, ids []string, out CheckSink) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the provider failed: %v", r)
		}
	}()
	return p.Run(ctx, t, ids, out)
}

// finishRun applies a run's outcomes (results, findings, evidence) and
// records its end, in one transaction after the evidence files are stored.
func (a *App) finishRun(ctx context.Context, run *CheckRun, c *Connection, defs map[string]CheckDefinition, sink *runSink, runErr string) error {
	sink.mu.Lock()
	outcomes, logs, dropped, cut := sink.outcomes, sink.logs, sink.dropped, sink.cut
	sink.mu.Unlock()
	if dropped > 0 {
		logs = append(logs, RunLog{At: a.Now(), Level: "warn", Message: fmt.Sprintf("%d outcomes beyond %d were dropped", dropped, maxRunOutcomes)})
	}
	if cut > 0 {
		logs = append(logs, RunLog{At: a.Now(), Level: "warn", Message: fmt.Sprintf("%d further log lines were dropped", cut)})
	}
	if runErr != "" {
		logs = append(logs, RunLog{At: a.Now(), Level: "error", Message: runErr})
	}
	run.Logs = logs
	if c != nil && runErr == "" {
		if err := a.applyOutcomes(ctx, run, c, defs, outcomes); err != nil {
			runErr = "recording the results failed: " + err.Error()
			a.log.Error("integration run apply failed", "run_id", run.ID, "err", err)
		}
	}
	now := a.Now()
	run.FinishedAt = &now
	run.Status = RunSucceeded
	if runErr != "" {
		run.Status, run.Error = RunFailed, &runErr
	}
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.FinishCheckRun(ctx, run.OrganizationID, run); err != nil {
			return err
		}
		if c == nil {
			return nil
		}
		cur, err := a.store.GetConnection(ctx, run.OrganizationID, c.ID)
		if err != nil {
			return err
		}
		cur.LastRunAt, cur.LastRunStatus = &now, &run.Status
		if cur.Status == ConnectionActive || cur.Status == ConnectionError {
			if runErr != "" && run.Passed+run.Failed+run.Excepted+run.Errored == 0 {
				cur.Status, cur.ErrorMessage = ConnectionError, &runErr
			} else {
				cur.Status, cur.ErrorMessage = ConnectionActive, nil
			}
		}
		if every := SyncFrequencies[cur.SyncFrequency]; every > 0 && cur.Status != ConnectionPaused && cur.Status != ConnectionDisconnected {
			next := now.Add(every)
			cur.NextRunAt = &next
		}
		if err := a.store.UpdateConnection(ctx, run.OrganizationID, cur); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "run_" + run.Status, ResourceType: "integration_check_run", ResourceID: run.ID,
			Events: []Event{{Type: EventIntegrationRunEnd, Data: runEventData(run)}}})
	})
	if err != nil {
		return fmt.Errorf("finish check run %s: %w", run.ID, err)
	}
	return nil
}

func runEventData(r *CheckRun) map[string]any {
	return map[string]any{"checkRunId": r.ID, "connectionId": r.ConnectionID, "providerSlug": r.ProviderSlug, "checkId": r.CheckID,
		"status": r.Status, "error": r.Error, "passed": r.Passed, "failed": r.Failed, "excepted": r.Excepted, "errored": r.Errored,
		"findingsOpened": r.FindingsOpened, "findingsResolved": r.FindingsResolved, "finishedAt": r.FinishedAt}
}

// checkVerdict is one check's outcomes in a run.
type checkVerdict struct {
	def      CheckDefinition
	outcomes []int // indexes into the results
	failed   bool
	errored  bool
}

// applyOutcomes records results, opens and resolves findings and attaches
// evidence for passing checks.
func (a *App) applyOutcomes(ctx context.Context, run *CheckRun, c *Connection, defs map[string]CheckDefinition, outcomes []CheckOutcome) error {
	orgID := run.OrganizationID
	now := a.Now()
	cat, err := a.catalog()
	if err != nil {
		return err
	}
	exceptions, err := a.store.ListCheckExceptions(ctx, orgID, c.ID)
	if err != nil {
		return err
	}
	active := map[CheckResourceKey]string{}
	for _, e := range exceptions {
		if e.ExpiresAt.After(now) {
			active[CheckResourceKey{e.CheckID, e.ResourceID}] = e.ID
		}
	}
	results := make([]CheckResult, 0, len(outcomes))
	verdicts := map[string]*checkVerdict{}
	var order []string
	seen := map[CheckResourceKey]bool{}
	for _, o := range outcomes {
		def, ok := defs[o.CheckID]
		if !ok {
			run.Logs = append(run.Logs, RunLog{At: now, Level: "warn", Message: fmt.Sprintf("ignored an outcome of unknown check %q", o.CheckID)})
			continue
		}
		if o.ResourceID == "" {
			o.ResourceID = o.CheckID
		}
		k := CheckResourceKey{o.CheckID, o.ResourceID}
		if seen[k] {
			continue // the first verdict on a resource stands
		}
		seen[k] = true
		r := CheckResult{RunID: run.ID, ConnectionID: c.ID, CheckID: o.CheckID, ResourceType: o.ResourceType, ResourceID: o.ResourceID,
			ResourceName: o.ResourceName, Status: o.Status, Message: o.Message, Details: o.Details}
		if r.ResourceName == "" {
			r.ResourceName = r.ResourceID
		}
		if r.ResourceType == "" {
			r.ResourceType = "resource"
		}
		switch r.Status {
		case CheckPass, CheckFail, CheckError:
		default:
			r.Status, r.Message = CheckError, fmt.Sprintf("the provider reported status %q; %s", o.Status, o.Message)
		}
		if r.Status == CheckFail {
			if id, ok := active[k]; ok {
				r.Status, r.ExceptionID = CheckExcepted, Ptr(id)
			}
		}
		v := verdicts[o.CheckID]
		if v == nil {
			v = &checkVerdict{def: def}
			verdicts[o.CheckID] = v
			order = append(order, o.CheckID)
		}
		v.outcomes = append(v.outcomes, len(results))
		switch r.Status {
		case CheckPass:
			run.Passed++
		case CheckFail:
			run.Failed++
			v.failed = true
		case CheckExcepted:
			run.Excepted++
		case CheckError:
			run.Errored++
			v.errored = true
		}
		results = append(results, r)
	}
	// Store the evidence files before the transaction (content-addressed).
	files := map[string]evidenceFile{}
	for _, id := range order {
		v := verdicts[id]
		if v.failed || v.errored || a.files == nil {
			continue
		}
		f, err := a.storeCheckEvidence(ctx, run, c, v, results)
		if err != nil {
			return err
		}
		files[id] = f
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		linked, err := a.store.CheckFindings(ctx, orgID, c.ID)
		if err != nil {
			return err
		}
		served, err := a.store.OrgRequirementControls(ctx, orgID)
		if err != nil {
			return err
		}
		controlsOf := map[string][]string{}
		taskLinks := a.newFindingTaskLinker(orgID, c.ID)
		for _, id := range order {
			v := verdicts[id]
			controlsOf[id] = checkControls(cat, v.def, served)
			for _, i := range v.outcomes {
				r := &results[i]
				k := CheckResourceKey{r.CheckID, r.ResourceID}
				fid, has := linked[k]
				switch r.Status {
				case CheckFail:
					f, opened, err := a.keepFindingOpen(ctx, orgID, c, v.def, r, fid, has, controlsOf[id])
					if err != nil {
						return err
					}
					r.FindingID = &f.ID
					if err := taskLinks.link(ctx, r.CheckID, controlsOf[id], f.ID); err != nil {
						return err
					}
					if opened {
						run.FindingsOpened++
						linked[k] = f.ID
						if err := a.store.SetCheckFinding(ctx, orgID, c.ID, k, f.ID); err != nil {
							return err
						}
					}
				case CheckPass, CheckExcepted:
					if has {
						resolved, err := a.resolveCheckFinding(ctx, orgID, c, r, fid)
						if err != nil {
							return err
						}
						if resolved != nil {
							r.FindingID = &fid
							run.FindingsResolved++
						}
					}
				}
			}
			if f, ok := files[id]; ok {
				n, err := a.attachCheckEvidence(ctx, run, c, v.def, f, controlsOf[id])
				if err != nil {
					return err
				}
				run.EvidenceAttached += n
				m, err := a.attachTaskEvidence(ctx, run, c, v.def, f, controlsOf[id])
				if err != nil {
					return err
				}
				run.EvidenceAttached += m
			}
		}
		if err := a.store.InsertCheckResults(ctx, orgID, results); err != nil {
			return err
		}
		// Findings weigh on the score directly (blocking findings), and
		// evidence on a control without a task does not change the
		// status rule, so no control is re-evaluated here; attaching
		// evidence moves a not-started control to in progress.
		return nil
	})
	if err != nil {
		return err
	}
	return nil
}

// checkControls returns the organization's controls serving the
// requirements a check is evidence for (directly or through a mapping).
// Links exist for enabled frameworks only, so others are left out.
func checkControls(cat *Catalog, def CheckDefinition, served map[string][]string) []string {
	direct, related := cat.ResolveRequirementRefs(def.Evidences)
	seen := map[string]bool{}
	var out []string
	for _, req := range append(direct, related...) {
		for _, ctl := range served[req] {
			if !seen[ctl] {
				seen[ctl] = true
				out = append(out, ctl)
			}
		}
	}
	sort.Strings(out)
	return out
}

func findingSource(connID, checkID, resourceID string) string {
	s := "integration:" + connID + ":" + checkID + ":" + resourceID
	if r := []rune(s); len(r) > maxFindingSource {
		s = string(r[:maxFindingSource])
	}
	return s
}

// keepFindingOpen makes sure a failing resource has one open finding: the
// linked one while it is open or in review, else a new one.
func (a *App) keepFindingOpen(ctx context.Context, orgID string, c *Connection, def CheckDefinition, r *CheckResult, fid string, has bool, controls []string) (*Finding, bool, error) {
	if has {
		f, err := a.store.GetFinding(ctx, orgID, fid)
		switch {
		case err == nil && (f.Status == FindingOpen || f.Status == FindingInReview):
			return f, false, nil
		case err != nil && !errors.Is(err, ErrNotFound):
			return nil, false, err
		}
	}
	now := a.Now()
	sev := def.Severity
	if !containsString(FindingSeverities, sev) {
		sev = "medium"
	}
	title := def.Title + ": " + r.ResourceName
	if t := []rune(title); len(t) > maxFindingTitle {
		title = string(t[:maxFindingTitle])
	}
	content := fmt.Sprintf("%s failed for %s %s.\n\n%s", def.Title, r.ResourceType, r.ResourceName, r.Message)
	if def.Remediation != "" {
		content += "\n\nRemediation: " + def.Remediation
	}
	if t := []rune(content); len(t) > MaxFindingContent {
		content = string(t[:MaxFindingContent])
	}
	f := &Finding{ID: NewID(PrefixFinding), Type: findingTypeFor(def.Evidences), Status: FindingOpen, Severity: sev,
		Content: content, Title: &title, Source: Ptr(findingSource(c.ID, r.CheckID, r.ResourceID)), Scope: Ptr("security"),
		LinkedControlIDs: append([]string{}, controls...), CreatedByType: "system", CreatedByID: "integration:" + c.ID,
		CreatedAt: now, UpdatedAt: now}
	if err := a.store.CreateFinding(ctx, orgID, f); err != nil {
		return nil, false, err
	}
	ev := map[string]any{"connectionId": c.ID, "providerSlug": c.ProviderSlug, "checkId": r.CheckID, "checkRunId": r.RunID,
		"resourceType": r.ResourceType, "resourceId": r.ResourceID, "resourceName": r.ResourceName, "message": r.Message,
		"severity": sev, "findingId": f.ID}
	err := a.record(ctx, Mutation{Action: "created", ResourceType: "finding", ResourceID: f.ID, After: f,
		Events: []Event{{Type: EventFindingCreated, Data: f}, {Type: EventCheckFailed, Data: ev}}})
	return f, true, err
}

// resolveCheckFinding resolves the linked finding when it is still open
// or in review; a finding a person closed or resolved is left alone.
func (a *App) resolveCheckFinding(ctx context.Context, orgID string, c *Connection, r *CheckResult, fid string) (*Finding, error) {
	before, err := a.store.GetFinding(ctx, orgID, fid)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if before.Status != FindingOpen && before.Status != FindingInReview {
		return nil, nil
	}
	f := *before
	now := a.Now()
	f.Status, f.UpdatedAt = FindingResolved, now
	note := fmt.Sprintf("Resolved automatically: check %s passed in run %s.", r.CheckID, r.RunID)
	if r.Status == CheckExcepted {
		note = fmt.Sprintf("Resolved automatically: an exception for check %s on this resource applies (run %s).", r.CheckID, r.RunID)
	}
	f.RevisionNote = &note
	if err := a.store.UpdateFinding(ctx, orgID, &f); err != nil {
		return nil, err
	}
	ev := map[string]any{"connectionId": c.ID, "providerSlug": c.ProviderSlug, "checkId": r.CheckID, "checkRunId": r.RunID,
		"resourceType": r.ResourceType, "resourceId": r.ResourceID, "resourceName": r.ResourceName, "findingId": fid}
	err = a.record(ctx, Mutation{Action: "resolved", ResourceType: "finding", ResourceID: fid, Before: before, After: &f,
		Events: []Event{{Type: EventCheckRecovered, Data: ev}}})
	return &f, err
}

type evidenceFile struct {
	sha  string
	size int64
	name string
}

// storeCheckEvidence writes a passing check's evidence file: a readable
// Markdown summary with the run's results as JSON.
func (a *App) storeCheckEvidence(ctx context.Context, run *CheckRun, c *Connection, v *checkVerdict, results []CheckResult) (evidenceFile, error) {
	var b bytes.Buffer
	now := a.Now()
	fmt.Fprintf(&b, "# %s\n\n", v.def.Title)
	fmt.Fprintf(&b, "- Check: `%s`\n- Connection: %s (`%s`, provider %s)\n- Run: `%s` (%s)\n- Evaluated at: %s\n- Verdict: passed\n\n",
		v.def.ID, c.Name, c.ID, c.ProviderSlug, run.ID, run.Trigger, now.Format(time.RFC3339))
	if v.def.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", v.def.Description)
	}
	b.WriteString("| Resource | Type | Status | Message |\n|---|---|---|---|\n")
	rows := make([]CheckResult, 0, len(v.outcomes))
	for _, i := range v.outcomes {
		r := results[i]
		rows = append(rows, r)
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(r.ResourceName), mdCell(r.ResourceType), r.Status, mdCell(r.Message))
	}
	raw, err := json.MarshalIndent(map[string]any{"checkRunId": run.ID, "connectionId": c.ID, "providerSlug": c.ProviderSlug,
		"checkId": v.def.ID, "evaluatedAt": now, "results": rows}, "", "  ")
	if err != nil {
		return evidenceFile{}, err
	}
	b.WriteString("\n## Results (JSON)\n\n```json\n")
	b.Write(raw)
	b.WriteString("\n```\n")
	blob, err := a.files.Put(ctx, &b)
	if err != nil {
		return evidenceFile{}, fmt.Errorf("store check evidence: %w", err)
	}
	name := cleanFilename(fmt.Sprintf("%s-%s.md", v.def.ID, now.Format("20060102T150405Z")))
	return evidenceFile{sha: blob.SHA256, size: blob.Size, name: name}, nil
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// attachCheckEvidence records the evidence file on each control, replacing
// the one the previous passing run of this check left there. It expires one
// sync interval plus the grace period after now.
func (a *App) attachCheckEvidence(ctx context.Context, run *CheckRun, c *Connection, def CheckDefinition, f evidenceFile, controls []string) (int, error) {
	if len(controls) == 0 {
		return 0, nil
	}
	orgID := run.OrganizationID
	prev, err := a.store.CheckEvidence(ctx, orgID, c.ID, def.ID)
	if err != nil {
		return 0, err
	}
	now := a.Now()
	every := SyncFrequencies[c.SyncFrequency]
	if every == 0 {
		every = 7 * 24 * time.Hour // manual and push connections: a week
	}
	exp := now.Add(every + a.integOptions().EvidenceGrace)
	n := 0
	for _, ctl := range controls {
		ev := &Evidence{ID: NewID(PrefixEvidence), ControlID: ctl, Filename: f.name, ContentType: "text/markdown; charset=utf-8",
			Size: f.size, SHA256: f.sha, ExpiresAt: &exp, UploadedBy: "integration:" + c.ID, UploadedAt: now,
			Description: fmt.Sprintf("Automated check %s passed (%s, run %s)", def.ID, c.Name, run.ID)}
		if err := a.store.CreateEvidence(ctx, orgID, ev); err != nil {
			return n, err
		}
		if old, ok := prev[ctl]; ok {
			if err := a.store.DeleteEvidence(ctx, orgID, old); err != nil && !errors.Is(err, ErrNotFound) {
				return n, err
			}
		}
		if err := a.store.SetCheckEvidence(ctx, orgID, c.ID, def.ID, ctl, ev.ID); err != nil {
			return n, err
		}
		if err := a.record(ctx, Mutation{Action: "created", ResourceType: "evidence", ResourceID: ev.ID, After: ev,
			Events: []Event{ResourceEvent("evidence", "created", ev)}}); err != nil {
			return n, err
		}
		if err := a.markInProgress(ctx, orgID, ctl); err != nil && !errors.Is(err, ErrNotFound) {
			return n, err
		}
		n++
	}
	return n, nil
}

// ScheduleIntegrationRuns is the scheduled job: it queues a run for every
// active connection whose next run is due (skipping one that still has a
// run queued or running) and wakes the worker.
func (a *App) ScheduleIntegrationRuns(ctx context.Context) error {
	now := a.Now()
	due, err := a.store.DueConnections(ctx, now)
	if err != nil {
		return fmt.Errorf("schedule integration runs: %w", err)
	}
	queued := 0
	for i := range due {
		c := &due[i]
		// A connection with nothing to run (its provider switched off
		// appliance-wide, a push connection, a directory without checks)
		// still moves to its next slot, so it is not selected again on
		// every tick ahead of connections that are due.
		prov, ok := a.provider(c.ProviderSlug)
		runnable := ok && prov.Definition().AuthStrategy != ProviderAuthPush && len(prov.Definition().Checks) > 0
		sys := SystemContext(ctx, c.OrgID)
		queuedRun := false
		err := a.store.InTx(sys, func(ctx context.Context) error {
			queuedRun = false
			cur, err := a.store.GetConnection(ctx, c.OrgID, c.ID)
			if err != nil {
				return err
			}
			every := SyncFrequencies[cur.SyncFrequency]
			if cur.Status != ConnectionActive && cur.Status != ConnectionError {
				return nil
			}
			if every == 0 {
				cur.NextRunAt = nil
			} else {
				next := now.Add(every)
				cur.NextRunAt = &next
			}
			if err := a.store.UpdateConnection(ctx, c.OrgID, cur); err != nil {
				return err
			}
			if !runnable || every == 0 {
				return nil
			}
			_, err = a.queueRun(ctx, c.OrgID, cur, "", TriggerSchedule, "system")
			queuedRun = err == nil
			return err
		})
		switch {
		case errors.Is(err, ErrConflict):
			// A run is still queued or running: the next tick tries again.
		case err != nil:
			a.log.Error("schedule integration run failed", "connection_id", c.ID, "err", err)
		case queuedRun:
			queued++
		}
	}
	if queued > 0 {
		a.wakeIntegrationWorker()
	}
	return nil
}
