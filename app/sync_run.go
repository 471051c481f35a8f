package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// syncPass is one kind of directory sync as a run drives it: employees
// (employeePass) or devices (devicePass).
type syncPass interface {
	// list reads the directory's whole listing, planning each entry.
	list(ctx context.Context, t ConnectionTarget) error
	// commit writes the changes still waiting for their batch.
	commit(ctx context.Context)
	// complete plans and writes what a complete listing shows is gone.
	complete(ctx context.Context)
	// flush writes the buffered per-item results.
	flush(ctx context.Context) error
	// counts are the run's counts, apply errors included.
	counts() SyncCounts
}

// runSyncPass is a sync run of the connection: one at a time per
// connection (a second is ErrConflict), the run recorded as it starts, the
// listing bounded by syncRunTimeout, the changes planned so far written
// even when the listing fails, removals only after a complete listing,
// and the finished run recorded with its event. begin opens the pass once
// the run is recorded.
func (a *App) runSyncPass(ctx context.Context, p *Principal, c *Connection, syncType, trigger string, dryRun bool,
	begin func(run *SyncRun) (syncPass, error)) (*SyncRun, error) {
	switch c.Status {
	case ConnectionDisconnected:
		return nil, Errorf(ErrConflict, "the connection is disconnected; reconnect it before syncing")
	case ConnectionPaused:
		return nil, Errorf(ErrConflict, "the connection is paused; resume it before syncing")
	}
	target, err := a.target(p.OrgID, c)
	if err != nil {
		return nil, err
	}
	id := NewID(PrefixSyncRun)
	run := &SyncRun{ID: id, SyncRunID: id, ConnectionID: c.ID, ProviderSlug: c.ProviderSlug, SyncType: syncType,
		Trigger: trigger, DryRun: dryRun, Status: RunRunning, RequestedBy: p.ActorID(), StartedAt: a.Now(), OrganizationID: p.OrgID}
	if err := a.store.CreateSyncRun(ctx, p.OrgID, run); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil, Errorf(ErrConflict, "a sync of connection %s is already running; wait for it to finish", c.ID)
		}
		return nil, fmt.Errorf("start sync run: %w", err)
	}
	s, err := begin(run)
	if err != nil {
		return a.finishSync(ctx, run, nil, err)
	}
	// Changes are made detached from the caller's cancellation so that a
	// change under way completes.
	wctx := context.WithoutCancel(ctx)
	lctx, cancel := context.WithTimeout(ctx, syncRunTimeout)
	runErr := s.list(lctx, target)
	cancel()
	// What was planned so far, even of a failed listing.
	s.commit(wctx)
	if runErr == nil {
		s.complete(wctx)
	}
	if ferr := s.flush(wctx); ferr != nil && runErr == nil {
		runErr = ferr
	}
	return a.finishSync(ctx, run, s, runErr)
}

// syncConnection is the connection a manual sync names, which must be
// one of the provider's when a provider is named.
func (a *App) syncConnection(ctx context.Context, p *Principal, providerSlug, connectionID string) (*Connection, error) {
	if strings.TrimSpace(connectionID) == "" {
		return nil, Invalid("connectionId", CodeRequired, nil, "connectionId is required: the directory connection to sync")
	}
	c, err := a.store.GetConnection(ctx, p.OrgID, connectionID)
	if err != nil {
		return nil, err
	}
	if providerSlug != "" && c.ProviderSlug != providerSlug {
		return nil, Invalid("connectionId", CodeInvalid, connectionID, fmt.Sprintf("connection %s is a %s connection, not %s", connectionID, c.ProviderSlug, providerSlug))
	}
	return c, nil
}

// safeList runs a provider's listing and turns its panic into an error.
func safeList[T any](ctx context.Context, list func(context.Context, ConnectionTarget, func(T) error) error, t ConnectionTarget, yield func(T) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the provider failed: %v", r)
		}
	}()
	return list(ctx, t, yield)
}

// writeSyncResults writes a run's buffered results and empties the
// buffer, detached from the caller's cancellation.
func (a *App) writeSyncResults(ctx context.Context, orgID, runID string, results *[]SyncRunResult) error {
	if len(*results) == 0 {
		return nil
	}
	err := a.store.InTx(context.WithoutCancel(ctx), func(ctx context.Context) error {
		return a.store.InsertSyncRunResults(ctx, orgID, runID, *results)
	})
	*results = (*results)[:0]
	return err
}

// finishSync records the finished run, its audit record and its
// sync.run.completed event. s is nil when the pass never began.
func (a *App) finishSync(ctx context.Context, run *SyncRun, s syncPass, runErr error) (*SyncRun, error) {
	now := a.Now()
	run.FinishedAt = &now
	run.Status, run.Success = RunSucceeded, true
	if s != nil {
		run.SyncCounts = s.counts()
	}
	if runErr != nil {
		run.Status, run.Success = RunFailed, false
		msg := clipRunes(runErr.Error(), 1000)
		run.Error = &msg
	}
	// The run's own record outlives a cancelled request.
	fctx := context.WithoutCancel(ctx)
	err := a.store.InTx(fctx, func(ctx context.Context) error {
		if err := a.store.FinishSyncRun(ctx, run.OrganizationID, run); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "sync_" + run.Status, ResourceType: "sync_run", ResourceID: run.ID, After: run,
			Events: []Event{{Type: EventSyncRunCompleted, Data: run}}})
	})
	if err != nil {
		return nil, fmt.Errorf("finish sync run %s: %w", run.ID, err)
	}
	return run, nil
}

// employeePass is an employee sync: the directory's users into the
// people register; leavers after a complete listing.
type employeePass struct {
	*syncSession
	dp DirectoryProvider
}

func (e employeePass) list(ctx context.Context, t ConnectionTarget) error {
	return safeList(ctx, e.dp.Users, t, e.user)
}

func (e employeePass) commit(ctx context.Context) { e.commitJoiners(ctx) }

func (e employeePass) complete(ctx context.Context) {
	for _, ch := range e.planner.Leavers() {
		e.apply(ctx, ch, nil)
	}
}

func (e employeePass) counts() SyncCounts {
	c := e.planner.Counts()
	c.Errors += e.applyErrors
	return c
}

// devicePass is a device sync: the directory's devices into the device
// register; the unlisted marked removed after a complete listing.
type devicePass struct {
	*deviceSyncSession
	dp DeviceDirectoryProvider
}

func (d devicePass) list(ctx context.Context, t ConnectionTarget) error {
	return safeList(ctx, d.dp.Devices, t, d.device)
}

func (d devicePass) complete(ctx context.Context) {
	d.removeUnlisted()
	d.commit(ctx)
}

func (d devicePass) counts() SyncCounts {
	c := d.deviceSyncSession.counts
	c.Errors += d.applyErrors
	return c
}
