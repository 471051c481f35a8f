package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// syncSession is one run in progress: the planner over the register's
// members, the directory state recorded of each, and a bounded buffer of
// per-person results.
type syncSession struct {
	a *App
	p *Principal
	// ctx is the context person changes are made in: the caller's,
	// detached from its cancellation so a change under way completes.
	ctx     context.Context
	conn    *Connection
	run     *SyncRun
	planner *SyncPlanner
	state   map[string]*PersonDirectory // by person id
	// twoFactor is whether this run's provider is the organization's
	// two-factor source (or none is chosen).
	twoFactor   bool
	results     []SyncRunResult
	joiners     []pendingJoiner // waiting for their batch
	seq         int
	applyErrors int
	// Onboarding: what a joiner is asked to do, decided once per run.
	policies []string
	admins   []string
}

// PersonSyncEventData is the data of person.joined and person.left.
type PersonSyncEventData struct {
	Person       *Person  `json:"person"`
	ConnectionID string   `json:"connectionId"`
	SyncRunID    string   `json:"syncRunId"`
	Returned     bool     `json:"returned"`
	TaskIDs      []string `json:"taskIds"`
}

func (a *App) newSyncSession(ctx context.Context, p *Principal, c *Connection, run *SyncRun) (*syncSession, error) {
	orgID := p.OrgID
	org, err := a.store.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	settings, err := a.store.GetSyncSettings(ctx, orgID)
	if err != nil {
		return nil, err
	}
	members, err := a.store.SyncMembers(ctx, orgID)
	if err != nil {
		return nil, err
	}
	active, err := a.store.CountMembers(ctx, orgID)
	if err != nil {
		return nil, err
	}
	s := &syncSession{a: a, p: p, ctx: context.WithoutCancel(ctx), conn: c, run: run, state: make(map[string]*PersonDirectory, len(members)),
		twoFactor: settings.TwoFactorSource == nil || *settings.TwoFactorSource == c.ProviderSlug}
	plain := make([]SyncMember, len(members))
	for i := range members {
		plain[i] = members[i].SyncMember
		if members[i].Directory != nil {
			s.state[members[i].PersonID] = members[i].Directory
		}
	}
	opts := SyncOptions{MemberLimit: a.Limits(org.Plan).Members, Members: active, DefaultRole: RoleEmployee}
	mapping, err := a.syncRoleMapping(ctx, orgID, c.ID)
	if err != nil {
		return nil, err
	}
	mapping.apply(&opts)
	s.planner = NewSyncPlanner(plain, opts)
	if !run.DryRun {
		pols, err := a.store.ListPolicies(ctx, orgID, PolicyFilter{Status: PolicyPublished, ExcludeContent: true, Page: Page{Page: 1, PerPage: 100}})
		if err != nil {
			return nil, err
		}
		for _, pol := range pols.Items {
			if pol.IsRequiredToSign {
				s.policies = append(s.policies, pol.Name)
			}
		}
		for _, r := range []Role{RoleOwner, RoleAdmin} {
			l, err := a.store.ListPeople(ctx, orgID, PersonFilter{Role: string(r), Page: Page{Page: 1, PerPage: 100}})
			if err != nil {
				return nil, err
			}
			for _, per := range l.Items {
				if per.ID == p.UserID {
					// The admin who asked for the run comes first.
					s.admins = append([]string{per.ID}, s.admins...)
					continue
				}
				s.admins = append(s.admins, per.ID)
			}
		}
	}
	return s, nil
}

// user handles one directory user as the listing yields it.
func (s *syncSession) user(u DirectoryUser) error {
	ch := s.planner.Add(u)
	s.apply(s.ctx, ch, &u)
	if len(s.results) >= syncResultBatch {
		return s.flush(s.ctx)
	}
	return nil
}

// apply makes one planned change (nothing in a dry run) and keeps its
// result. A change that fails is an error result; the run goes on. A
// joiner waits for its batch (commitJoiners).
func (s *syncSession) apply(ctx context.Context, ch SyncChange, u *DirectoryUser) {
	if s.run.DryRun {
		s.keep(ch, u, nil)
		return
	}
	if ch.Action == SyncCreate {
		s.joiners = append(s.joiners, pendingJoiner{ch: ch, u: u})
		if len(s.joiners) >= syncJoinerBatch {
			s.commitJoiners(ctx)
		}
		return
	}
	s.keep(ch, u, s.applyChange(ctx, &ch, u))
}

// keep records the result of one change; err is why it was not applied.
func (s *syncSession) keep(ch SyncChange, u *DirectoryUser, err error) {
	if err != nil {
		s.applyErrors++
		reason := "not applied: " + clipRunes(publicMessage(err), 500)
		if ch.Reason != "" {
			reason = ch.Reason + "; " + reason
		}
		ch.Reason = reason
		ch.Action = SyncError
	}
	if ch.Action == SyncUnchanged || ch.Action == SyncSkipped && ch.PersonID == "" && u != nil && !u.Active {
		// Only counted: the unchanged, and the disabled never in the
		// register (every run would list them again).
		return
	}
	s.seq++
	r := SyncRunResult{Seq: s.seq, Action: ch.Action, Email: ch.Email, Name: ch.Name, Fields: ch.Fields, Reason: ch.Reason}
	if r.Fields == nil {
		r.Fields = map[string]string{}
	}
	if ch.PersonID != "" {
		r.PersonID = Ptr(ch.PersonID)
	}
	if ch.Role != "" {
		r.Role = Ptr(string(ch.Role))
	}
	s.results = append(s.results, r)
}

func publicMessage(err error) string {
	var pe *PublicError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	if errors.Is(err, ErrConflict) {
		return "conflict with the register"
	}
	return err.Error()
}

// flush writes the buffered results.
func (s *syncSession) flush(ctx context.Context) error {
	return s.a.writeSyncResults(ctx, s.p.OrgID, s.run.ID, &s.results)
}

// directoryState is the state sync records for a person the directory
// lists, keeping a status the directory does not give.
func (s *syncSession) directoryState(personID string, u *DirectoryUser) *PersonDirectory {
	d := &PersonDirectory{UserID: personID, Source: PersonSourceDirectory, ConnectionID: Ptr(s.conn.ID)}
	old := s.state[personID]
	if old != nil {
		d.TwoFactor, d.TwoFactorCheckedAt, d.ExternalID = old.TwoFactor, old.TwoFactorCheckedAt, old.ExternalID
	}
	if u != nil {
		if u.ExternalID != "" {
			d.ExternalID = Ptr(u.ExternalID)
		}
		if s.twoFactor && u.TwoFactor != nil {
			d.TwoFactor = Ptr(*u.TwoFactor)
		}
	}
	return d
}

func sameDirectory(a, b *PersonDirectory) bool {
	if a == nil || b == nil {
		return false
	}
	eq := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Source == b.Source && eq(a.ConnectionID, b.ConnectionID) && eq(a.ExternalID, b.ExternalID) &&
		(a.TwoFactor == nil) == (b.TwoFactor == nil) && (a.TwoFactor == nil || *a.TwoFactor == *b.TwoFactor)
}

func (s *syncSession) setDirectory(ctx context.Context, d *PersonDirectory) error {
	now := s.a.Now()
	old := s.state[d.UserID]
	if old == nil || !sameTwoFactor(old.TwoFactor, d.TwoFactor) {
		d.TwoFactorCheckedAt = &now
	}
	if err := s.a.store.SetPersonDirectory(ctx, s.p.OrgID, d, now); err != nil {
		return err
	}
	s.state[d.UserID] = d
	return nil
}

func sameTwoFactor(a, b *bool) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func (s *syncSession) applyChange(ctx context.Context, ch *SyncChange, u *DirectoryUser) error {
	a, orgID := s.a, s.p.OrgID
	switch ch.Action {
	case SyncUnchanged:
		if u == nil || ch.PersonID == "" {
			return nil
		}
		d := s.directoryState(ch.PersonID, u)
		if sameDirectory(s.state[ch.PersonID], d) {
			return nil // nothing to write
		}
		return a.store.InTx(ctx, func(ctx context.Context) error { return s.setDirectory(ctx, d) })
	case SyncCreate:
		return a.store.InTx(ctx, func(ctx context.Context) error {
			now := a.Now()
			userID, err := a.store.FindUserByEmail(ctx, ch.Email)
			switch {
			case errors.Is(err, ErrNotFound):
				userID = NewID(PrefixPerson)
				if err := a.store.CreateUser(ctx, userID, ch.Email, clipRunes(ch.Name, 200), "", now); err != nil {
					return err
				}
			case err != nil:
				return err
			}
			per := &Person{ID: userID, Name: ch.Name, Email: ch.Email, Role: ch.Role, IsActive: true, Devices: []DeviceSummary{}, CreatedAt: now, UpdatedAt: now}
			if d := ch.Fields["department"]; d != "" {
				per.Department = Ptr(clipRunes(d, 64))
			}
			if err := a.store.CreateMembership(ctx, orgID, userID, per); err != nil {
				return err
			}
			ch.PersonID = userID
			if err := s.setDirectory(ctx, s.directoryState(userID, u)); err != nil {
				return err
			}
			got, err := a.store.GetPerson(ctx, orgID, userID)
			if err != nil {
				return err
			}
			if err := a.assignRequiredTraining(ctx, orgID, got); err != nil {
				return err
			}
			tasks, err := s.onboardingTasks(ctx, got)
			if err != nil {
				return err
			}
			return a.record(ctx, Mutation{Action: "created", ResourceType: "person", ResourceID: got.ID, After: got,
				Events: []Event{ResourceEvent("person", "created", got),
					{Type: EventPersonJoined, Data: PersonSyncEventData{Person: got, ConnectionID: s.conn.ID, SyncRunID: s.run.ID, TaskIDs: tasks}}}})
		})
	case SyncUpdate, SyncReactivate, SyncDeactivate:
		return a.store.InTx(ctx, func(ctx context.Context) error {
			before, err := a.store.GetPerson(ctx, orgID, ch.PersonID)
			if err != nil {
				return err
			}
			next := *before
			if n, ok := ch.Fields["name"]; ok && n != before.Name {
				shared, err := a.store.CountMemberships(ctx, before.ID)
				if err != nil {
					return err
				}
				if shared > 1 {
					// The login identity is shared with other organizations:
					// only the person changes their name.
					delete(ch.Fields, "name")
				} else {
					next.Name = clipRunes(n, 200)
					if err := a.store.UpdateUser(ctx, before.ID, before.Email, next.Name, a.Now()); err != nil {
						return err
					}
				}
			}
			if d, ok := ch.Fields["department"]; ok {
				next.Department = Ptr(clipRunes(d, 64))
			}
			if r, ok := ch.Fields["role"]; ok && before.Role != RoleOwner {
				next.Role = Role(r)
			}
			action := "updated"
			var events []Event
			switch ch.Action {
			case SyncReactivate:
				next.IsActive, action = true, "reactivated"
			case SyncDeactivate:
				next.IsActive, action = false, "deactivated"
			}
			next.UpdatedAt = a.Now()
			if err := a.store.UpdateMembership(ctx, orgID, &next); err != nil {
				return err
			}
			if ch.Action == SyncDeactivate {
				// A leaver keeps their recorded source and status.
				if d := s.state[before.ID]; d == nil {
					if err := s.setDirectory(ctx, &PersonDirectory{UserID: before.ID, Source: PersonSourceDirectory, ConnectionID: Ptr(s.conn.ID)}); err != nil {
						return err
					}
				}
			} else if d := s.directoryState(before.ID, u); !sameDirectory(s.state[before.ID], d) {
				if err := s.setDirectory(ctx, d); err != nil {
					return err
				}
			}
			after, err := a.store.GetPerson(ctx, orgID, before.ID)
			if err != nil {
				return err
			}
			events = append(events, ResourceEvent("person", "updated", after))
			switch ch.Action {
			case SyncReactivate:
				tasks, err := s.onboardingTasks(ctx, after)
				if err != nil {
					return err
				}
				events = append(events, Event{Type: EventPersonJoined, Data: PersonSyncEventData{Person: after, ConnectionID: s.conn.ID, SyncRunID: s.run.ID, Returned: true, TaskIDs: tasks}})
			case SyncDeactivate:
				tasks, err := s.offboardingTasks(ctx, after)
				if err != nil {
					return err
				}
				events = append(events, Event{Type: EventPersonLeft, Data: PersonSyncEventData{Person: after, ConnectionID: s.conn.ID, SyncRunID: s.run.ID, TaskIDs: tasks}})
			}
			return a.record(ctx, Mutation{Action: action, ResourceType: "person", ResourceID: before.ID, Before: before, After: after, Events: events})
		})
	}
	return nil
}

// onboardingTasks opens a joiner's tasks, assigned to them: acknowledge the
// published policies, complete the assigned training, enrol a device.
func (s *syncSession) onboardingTasks(ctx context.Context, per *Person) ([]string, error) {
	var specs [][2]string
	if len(s.policies) > 0 {
		specs = append(specs, [2]string{"Acknowledge the published policies",
			"Read and acknowledge each policy published for everyone: " + strings.Join(s.policies, ", ") + "."})
	}
	open, err := s.a.store.ListTrainingAssignments(ctx, s.p.OrgID, TrainingAssignmentFilter{PersonID: per.ID, Page: Page{Page: 1, PerPage: 1}})
	if err != nil {
		return nil, err
	}
	if open.Total > 0 {
		specs = append(specs, [2]string{"Complete your assigned security training",
			fmt.Sprintf("%d training module(s) are assigned to you; complete them before their due date.", open.Total)})
	}
	specs = append(specs, [2]string{"Enrol your work device",
		"Install the device agent on each device you work on (Devices page), so its security settings are checked."})
	return s.openTasks(ctx, specs, []string{per.ID}, "joined the organization through directory sync")
}

// offboardingTasks opens a leaver's tasks, assigned to each owner and
// admin: revoke their access, collect their devices.
func (s *syncSession) offboardingTasks(ctx context.Context, per *Person) ([]string, error) {
	specs := [][2]string{
		{"Revoke access of " + per.Name, fmt.Sprintf("%s (%s) left the directory. Revoke their accounts and access to systems, shared secrets and keys.", per.Name, per.Email)},
		{"Collect the devices of " + per.Name, fmt.Sprintf("%s (%s) left the directory. Collect and wipe the devices they used.", per.Name, per.Email)},
	}
	admins := s.admins
	if len(admins) == 0 {
		admins = []string{""}
	}
	return s.openTasks(ctx, specs, admins[:1], "left the organization through directory sync")
}

func (s *syncSession) openTasks(ctx context.Context, specs [][2]string, assignees []string, why string) ([]string, error) {
	var ids []string
	due := s.a.Now().AddDate(0, 0, 14).Format("2006-01-02")
	for _, as := range assignees {
		for _, sp := range specs {
			in := TaskInput{Title: Ptr(clipRunes(sp[0], 200)), Description: Ptr(sp[1] + " (The person " + why + ".)"),
				DueDate: Opt[string]{Set: true, Value: due}}
			if as != "" {
				in.AssigneeID = Opt[string]{Set: true, Value: as}
			}
			t, err := s.a.CreateTask(ctx, in)
			if err != nil {
				return nil, err
			}
			ids = append(ids, t.ID)
		}
	}
	return ids, nil
}
