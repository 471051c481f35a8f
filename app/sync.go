package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A sync run lists one directory connection's users and applies the sync
// planner's changes to the people register: each person's change with its
// audit record, events and tasks in one transaction (joiners in batches of
// syncJoinerBatch, each batch all or nothing): a run stopped half-way (a
// restart, a failed listing) leaves every person either changed or not,
// never half. Runs are synchronous: the request (or the
// scheduled job) that starts one waits for it.

// Sync run statuses (RunRunning, RunSucceeded, RunFailed, RunInterrupted)
// are those of check runs; a sync run is never queued.

// Sync types.
const (
	SyncTypeEmployee = "employee"
	SyncTypeDevice   = "device"
)

// Events of directory sync.
const (
	EventPersonJoined     = "person.joined"
	EventPersonLeft       = "person.left"
	EventSyncRunCompleted = "sync.run.completed"
)

// syncResultBatch is how many per-person results a run buffers before
// writing them: memory stays bounded however large the directory.
const syncResultBatch = 500

// syncRunTimeout bounds one listing (Okta with factors: about 6 s per
// 10,000 users; a slow directory of 100,000 far more).
const syncRunTimeout = 30 * time.Minute

// SyncRun is one sync of a directory connection.
type SyncRun struct {
	ID           string  `json:"id"`
	SyncRunID    string  `json:"syncRunId"`
	ConnectionID string  `json:"connectionId"`
	ProviderSlug string  `json:"providerSlug"`
	SyncType     string  `json:"syncType"`
	Trigger      string  `json:"trigger"`
	DryRun       bool    `json:"dryRun"`
	Status       string  `json:"status"`
	Success      bool    `json:"success"`
	Error        *string `json:"error"`
	SyncCounts
	RequestedBy string     `json:"requestedBy"`
	StartedAt   time.Time  `json:"startedAt"`
	FinishedAt  *time.Time `json:"finishedAt"`

	OrganizationID string `json:"-"`
}

// SyncRunResult is what a run did (or, dry, would do) to one person.
// Unchanged people are only counted.
type SyncRunResult struct {
	Seq      int               `json:"seq"`
	Action   string            `json:"action"`
	PersonID *string           `json:"personId"`
	Email    string            `json:"email"`
	Name     string            `json:"name"`
	Role     *string           `json:"role"`
	Fields   map[string]string `json:"fields"`
	Reason   string            `json:"reason"`
	// DeviceID is the device a device sync's result is about.
	DeviceID *string `json:"deviceId"`
}

// SyncRunDetail is a run with a page of its per-person results.
type SyncRunDetail struct {
	*SyncRun
	Results      []SyncRunResult `json:"results"`
	ResultsTotal int             `json:"resultsTotal"`
}

// SyncRunFilter narrows the run list.
type SyncRunFilter struct {
	ConnectionID string
	Status       string
	Page         Page
}

// SyncSettings are an organization's choices of providers.
type SyncSettings struct {
	EmployeeProvider *string
	DeviceProvider   *string
	TwoFactorSource  *string
}

// PersonSource says where a person of the register comes from.
type PersonSource struct {
	Type         string  `json:"type"` // PersonSourceManual or PersonSourceDirectory
	ConnectionID *string `json:"connectionId"`
}

// MarshalJSON writes a person without a recorded source as manual.
func (s PersonSource) MarshalJSON() ([]byte, error) {
	type plain PersonSource
	if s.Type == "" {
		s.Type = PersonSourceManual
	}
	return json.Marshal(plain(s))
}

// PersonTwoFactor is a person's two-factor status as the organization's
// two-factor source last reported it; Enrolled is null when unknown.
type PersonTwoFactor struct {
	Enrolled  *bool      `json:"enrolled"`
	CheckedAt *time.Time `json:"checkedAt"`
}

// Status is enrolled, not_enrolled or unknown.
func (t PersonTwoFactor) Status() string {
	switch {
	case t.Enrolled == nil:
		return "unknown"
	case *t.Enrolled:
		return "enrolled"
	}
	return "not_enrolled"
}

// PersonDirectory is what sync keeps of a person managed by a directory.
type PersonDirectory struct {
	UserID             string
	Source             string
	ConnectionID       *string
	ExternalID         *string
	TwoFactor          *bool
	TwoFactorCheckedAt *time.Time
}

// SyncMemberState is a register member with what sync recorded of them.
type SyncMemberState struct {
	SyncMember
	Directory *PersonDirectory // nil: never synced
}

// SyncStore persists sync settings, runs and the directory state of people.
type SyncStore interface {
	GetSyncSettings(ctx context.Context, orgID string) (*SyncSettings, error)
	SaveSyncSettings(ctx context.Context, orgID string, s *SyncSettings, at time.Time) error
	// CreateSyncRun inserts a running run; ErrConflict when the connection
	// already has one running.
	CreateSyncRun(ctx context.Context, orgID string, r *SyncRun) error
	FinishSyncRun(ctx context.Context, orgID string, r *SyncRun) error
	// InterruptRunningSyncRuns marks every running run interrupted.
	InterruptRunningSyncRuns(ctx context.Context, now time.Time, reason string) (int, error)
	GetSyncRun(ctx context.Context, orgID, id string) (*SyncRun, error)
	ListSyncRuns(ctx context.Context, orgID string, f SyncRunFilter) (List[SyncRun], error)
	InsertSyncRunResults(ctx context.Context, orgID, runID string, rs []SyncRunResult) error
	ListSyncRunResults(ctx context.Context, orgID, runID string, p Page) (List[SyncRunResult], error)
	// LastSyncRun is the connection's latest run that was not a dry run.
	LastSyncRun(ctx context.Context, orgID, connectionID string) (*SyncRun, error)
	// SyncMembers lists every member of the organization (active or not)
	// with their directory state.
	SyncMembers(ctx context.Context, orgID string) ([]SyncMemberState, error)
	SetPersonDirectory(ctx context.Context, orgID string, d *PersonDirectory, at time.Time) error
	// PersonSyncInfo gives the source and two-factor status of the people
	// named; checkedAt is the latest successful sync of the source.
	PersonSyncInfo(ctx context.Context, orgID string, ids []string) (map[string]PersonSyncView, error)
	// SyncedOrganizations lists the organizations with an employee sync
	// provider chosen, with it.
	SyncedOrganizations(ctx context.Context) (map[string]string, error)
}

// PersonSyncView is a person's source and two-factor status.
type PersonSyncView struct {
	Source    PersonSource
	TwoFactor PersonTwoFactor
}

// attachSyncInfo fills the source and two-factor status of people.
func (a *App) attachSyncInfo(ctx context.Context, orgID string, people []Person) error {
	if len(people) == 0 {
		return nil
	}
	ids := make([]string, len(people))
	for i := range people {
		ids[i] = people[i].ID
	}
	m, err := a.store.PersonSyncInfo(ctx, orgID, ids)
	if err != nil {
		return err
	}
	for i := range people {
		v := m[people[i].ID]
		people[i].Source, people[i].TwoFactor = v.Source, v.TwoFactor
	}
	return nil
}

// directoryProvider returns the connection's provider as a directory, or a
// clear error naming the field.
func (a *App) directoryProvider(slug, field string) (DirectoryProvider, error) {
	prov, ok := a.provider(slug)
	if !ok {
		return nil, Errorf(ErrNotFound, "provider %s is not available in this build", slug)
	}
	dp, ok := prov.(DirectoryProvider)
	if !ok || !containsString(prov.Definition().Capabilities, CapabilityEmployeeSync) {
		return nil, Invalid(field, CodeInvalid, slug, fmt.Sprintf("provider %s does not sync employees; choose a directory (%s)", slug, strings.Join(a.syncProviderSlugs(CapabilityEmployeeSync), ", ")))
	}
	return dp, nil
}

func (a *App) syncProviderSlugs(capability string) []string {
	var out []string
	for _, p := range a.providerList() {
		d := p.Definition()
		if containsString(d.Capabilities, capability) {
			out = append(out, d.Slug)
		}
	}
	return out
}

// SyncEmployees runs an employee sync of a connection of the provider and
// returns the finished run. A dry run plans and records the run without
// changing anyone.
func (a *App) SyncEmployees(ctx context.Context, providerSlug, connectionID string, dryRun bool) (*SyncRun, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	c, err := a.syncConnection(ctx, p, providerSlug, connectionID)
	if err != nil {
		return nil, err
	}
	return a.runSync(ctx, p, c, TriggerManual, dryRun)
}

func (a *App) runSync(ctx context.Context, p *Principal, c *Connection, trigger string, dryRun bool) (*SyncRun, error) {
	dp, err := a.directoryProvider(c.ProviderSlug, "providerSlug")
	if err != nil {
		return nil, err
	}
	return a.runSyncPass(ctx, p, c, SyncTypeEmployee, trigger, dryRun, func(run *SyncRun) (syncPass, error) {
		s, err := a.newSyncSession(ctx, p, c, run)
		if err != nil {
			return nil, err
		}
		return employeePass{s, dp}, nil
	})
}

// GetSyncRun returns a run with a page of its per-person results.
func (a *App) GetSyncRun(ctx context.Context, id string, page Page) (*SyncRunDetail, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	r, err := a.store.GetSyncRun(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	l, err := a.store.ListSyncRunResults(ctx, p.OrgID, id, page)
	if err != nil {
		return nil, err
	}
	return &SyncRunDetail{SyncRun: r, Results: l.Items, ResultsTotal: l.Total}, nil
}

// ListSyncRunResults lists a run's per-person results.
func (a *App) ListSyncRunResults(ctx context.Context, id string, page Page) (List[SyncRunResult], error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return List[SyncRunResult]{}, err
	}
	if _, err := a.store.GetSyncRun(ctx, p.OrgID, id); err != nil {
		return List[SyncRunResult]{}, err
	}
	return a.store.ListSyncRunResults(ctx, p.OrgID, id, page)
}

// SyncRunStatuses are the statuses a run list filters on.
var SyncRunStatuses = []string{RunRunning, RunSucceeded, RunFailed, RunInterrupted}

// ListSyncRuns lists the organization's sync runs, newest first.
func (a *App) ListSyncRuns(ctx context.Context, f SyncRunFilter) (List[SyncRun], error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return List[SyncRun]{}, err
	}
	ve := NewValidationError()
	oneOf(ve, "status", f.Status, SyncRunStatuses)
	if err := ve.Err(); err != nil {
		return List[SyncRun]{}, err
	}
	if f.ConnectionID != "" {
		if _, err := a.store.GetConnection(ctx, p.OrgID, f.ConnectionID); err != nil {
			return List[SyncRun]{}, err
		}
	}
	return a.store.ListSyncRuns(ctx, p.OrgID, f)
}

// InterruptStaleSyncRuns marks the runs a previous process left running
// as interrupted. Every person change a run made was committed on its
// own, so what an interrupted run did is exactly its recorded results.
func (a *App) InterruptStaleSyncRuns(ctx context.Context) (int, error) {
	return a.store.InterruptRunningSyncRuns(ctx, a.Now(), "the appliance stopped while the sync was running; the changes recorded were applied, the rest were not")
}

// RunDirectorySyncs is the scheduled job: every active connection of each
// organization's employee sync provider whose sync frequency has passed
// since its last run is synced. A failed run is recorded failed and the
// connection is tried again at its next slot.
func (a *App) RunDirectorySyncs(ctx context.Context) error {
	orgs, err := a.store.SyncedOrganizations(ctx)
	if err != nil {
		return fmt.Errorf("run directory syncs: %w", err)
	}
	if err := a.runScheduledSyncs(ctx, orgs, SyncTypeEmployee); err != nil {
		return err
	}
	devs, err := a.store.DeviceSyncOrganizations(ctx)
	if err != nil {
		return fmt.Errorf("run directory syncs: %w", err)
	}
	return a.runScheduledSyncs(ctx, devs, SyncTypeDevice)
}

// runScheduledSyncs runs the syncs of a type that are due: each active
// connection of the chosen provider whose sync frequency has passed since
// its last run of the type.
func (a *App) runScheduledSyncs(ctx context.Context, orgs map[string]string, syncType string) error {
	for orgID, slug := range orgs {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sys := SystemContext(ctx, orgID)
		p, _ := principal(sys)
		conns, err := a.store.ListConnections(sys, orgID)
		if err != nil {
			return fmt.Errorf("run directory syncs: %w", err)
		}
		for i := range conns {
			c := &conns[i]
			every := SyncFrequencies[c.SyncFrequency]
			if c.ProviderSlug != slug || c.Status != ConnectionActive && c.Status != ConnectionError || every == 0 {
				continue
			}
			last, err := a.store.LastSyncRunOfType(sys, orgID, c.ID, syncType)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("run directory syncs: %w", err)
			}
			if last != nil && a.Now().Before(last.StartedAt.Add(every)) {
				continue
			}
			var run *SyncRun
			if syncType == SyncTypeDevice {
				run, err = a.runDeviceSync(sys, p, c, TriggerSchedule, false)
			} else {
				run, err = a.runSync(sys, p, c, TriggerSchedule, false)
			}
			switch {
			case errors.Is(err, ErrConflict):
				// Running already (or paused meanwhile): the next tick tries again.
			case err != nil:
				a.log.Error("scheduled directory sync failed to start", "connection_id", c.ID, "sync_type", syncType, "err", err)
			case run.Status == RunFailed:
				a.log.Warn("scheduled directory sync failed", "connection_id", c.ID, "sync_type", syncType, "sync_run_id", run.ID, "error", derefStr(run.Error))
			}
		}
	}
	return nil
}

func derefStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
