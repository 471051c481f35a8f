package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Exception limits.
const (
	minExceptionReason = 20
	maxExceptionReason = 2000
	maxExceptionTerm   = 366 * 24 * time.Hour
)

// CheckException excepts one resource from one check of a connection until
// it expires: a failure is then recorded as excepted and opens no finding.
type CheckException struct {
	ID           string    `json:"id"`
	ConnectionID string    `json:"connectionId"`
	CheckID      string    `json:"checkId"`
	ResourceID   string    `json:"resourceId"`
	Reason       string    `json:"reason"`
	ReviewerID   string    `json:"reviewerId"`
	ExpiresAt    time.Time `json:"expiresAt"`
	Active       bool      `json:"active"`
	CreatedBy    string    `json:"createdBy"`
	CreatedAt    time.Time `json:"createdAt"`
}

// CheckExceptionCreate is the body of an exception.
type CheckExceptionCreate struct {
	CheckID    string `json:"checkId"`
	ResourceID string `json:"resourceId"`
	Reason     string `json:"reason"`
	ReviewerID string `json:"reviewerId"`
	ExpiresAt  string `json:"expiresAt"`
}

// CreateCheckException records an exception. The reason is at least 20
// characters, the reviewer a person of the organization, the expiry in the
// future and at most a year away.
func (a *App) CreateCheckException(ctx context.Context, connectionID string, in CheckExceptionCreate) (*CheckException, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	e := &CheckException{ID: NewID(PrefixCheckException), ConnectionID: connectionID, CheckID: strings.TrimSpace(in.CheckID),
		ResourceID: strings.TrimSpace(in.ResourceID), Reason: strings.TrimSpace(in.Reason), ReviewerID: strings.TrimSpace(in.ReviewerID),
		CreatedBy: p.ActorID(), CreatedAt: now}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := a.store.GetConnection(ctx, p.OrgID, connectionID); err != nil {
			return err
		}
		ve := NewValidationError()
		if e.CheckID == "" {
			ve.Add("checkId", CodeRequired, nil, "checkId is required")
		}
		maxLen(ve, "checkId", e.CheckID, 200)
		if e.ResourceID == "" {
			ve.Add("resourceId", CodeRequired, nil, "resourceId is required")
		}
		maxLen(ve, "resourceId", e.ResourceID, 1000)
		switch n := len([]rune(e.Reason)); {
		case n < minExceptionReason:
			ve.Add("reason", CodeInvalid, nil, fmt.Sprintf("reason must be at least %d characters: say why the risk is accepted", minExceptionReason))
		case n > maxExceptionReason:
			ve.Add("reason", CodeTooLong, nil, fmt.Sprintf("reason must be at most %d characters", maxExceptionReason))
		}
		if e.ReviewerID == "" {
			ve.Add("reviewerId", CodeRequired, nil, "reviewerId is required")
		} else {
			ok, err := a.store.EntityExists(ctx, p.OrgID, EntityPerson, e.ReviewerID, "")
			if err != nil {
				return err
			}
			if !ok {
				ve.Add("reviewerId", CodeUnknownReference, e.ReviewerID, "reviewerId must be a person of this organization")
			}
		}
		t, ok := ParseTime(strings.TrimSpace(in.ExpiresAt))
		switch {
		case strings.TrimSpace(in.ExpiresAt) == "":
			ve.Add("expiresAt", CodeRequired, nil, "expiresAt is required")
		case !ok:
			ve.Add("expiresAt", CodeInvalid, in.ExpiresAt, "expiresAt must be a date (YYYY-MM-DD) or an RFC 3339 time")
		case !t.After(now):
			ve.Add("expiresAt", CodeInvalid, in.ExpiresAt, "expiresAt must be in the future")
		case t.Sub(now) > maxExceptionTerm:
			ve.Add("expiresAt", CodeInvalid, in.ExpiresAt, "expiresAt must be at most a year away; renew the exception then")
		default:
			e.ExpiresAt = t
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.CreateCheckException(ctx, p.OrgID, e); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "integration_check_exception", ResourceID: e.ID, After: e})
	})
	if err != nil {
		return nil, fmt.Errorf("create check exception: %w", err)
	}
	e.Active = true
	return e, nil
}

// ListCheckExceptions lists a connection's exceptions, expired ones too.
func (a *App) ListCheckExceptions(ctx context.Context, connectionID string) ([]CheckException, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := a.store.GetConnection(ctx, p.OrgID, connectionID); err != nil {
		return nil, err
	}
	list, err := a.store.ListCheckExceptions(ctx, p.OrgID, connectionID)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	for i := range list {
		list[i].Active = list[i].ExpiresAt.After(now)
	}
	return list, nil
}

// DeleteCheckException withdraws an exception: the next run records the
// resource's failure again.
func (a *App) DeleteCheckException(ctx context.Context, id string) error {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		e, err := a.store.GetCheckException(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if err := a.store.DeleteCheckException(ctx, p.OrgID, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "integration_check_exception", ResourceID: id, Before: e})
	})
	if err != nil {
		return fmt.Errorf("delete check exception %s: %w", id, err)
	}
	return nil
}

// Push limits.
const (
	maxPushChecks    = 200
	maxPushResources = 10000
)

// PushResults is the body a custom connection's script posts.
type PushResults struct {
	Checks []PushCheck `json:"checks"`
}

// PushCheck is one check's results in a push. Evidences names the
// requirements a pass is evidence for; when empty, the connection's
// "requirements" variable applies.
type PushCheck struct {
	CheckID     string           `json:"checkId"`
	Title       string           `json:"title"`
	Description string           `json:"description"`
	Severity    string           `json:"severity"`
	Remediation string           `json:"remediation"`
	Evidences   []RequirementRef `json:"evidences"`
	Resources   []PushResource   `json:"resources"`
}

// PushResource is one resource's verdict in a push.
type PushResource struct {
	ID      string         `json:"id"`
	Type    string         `json:"type"`
	Name    string         `json:"name"`
	Status  string         `json:"status"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// PushTokenContext authenticates a push: it returns the connection the
// token belongs to and a system context of its organization.
func (a *App) PushTokenContext(ctx context.Context, connectionID, token string) (context.Context, *Connection, error) {
	if !strings.HasPrefix(token, PushTokenPrefix) {
		return nil, nil, ErrUnauthenticated
	}
	c, err := a.store.ConnectionByPushToken(ctx, HashKey(token))
	if errors.Is(err, ErrNotFound) || (err == nil && c.ID != connectionID) {
		return nil, nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, nil, err
	}
	return SystemContext(ctx, c.OrgID), c, nil
}

// PushCheckResults records pushed results as a run of a custom connection:
// the same engine as pulled runs opens and resolves findings and attaches
// evidence. The run is executed before the answer.
func (a *App) PushCheckResults(ctx context.Context, connectionID, token string, in PushResults) (*CheckRun, error) {
	sys, c, err := a.PushTokenContext(ctx, connectionID, token)
	if err != nil {
		return nil, err
	}
	if c.Status == ConnectionPaused || c.Status == ConnectionDisconnected {
		return nil, Errorf(ErrConflict, "the connection is %s and accepts no results", c.Status)
	}
	cat, err := a.catalog()
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	if len(in.Checks) == 0 {
		ve.Add("checks", CodeRequired, nil, "checks must list at least one check")
	}
	if len(in.Checks) > maxPushChecks {
		ve.Add("checks", CodeInvalid, len(in.Checks), fmt.Sprintf("at most %d checks per push", maxPushChecks))
	}
	defaultRefs := parseRequirementList(c.Variables["requirements"])
	defs := map[string]CheckDefinition{}
	sink := &runSink{now: a.Now}
	total := 0
	for i, ch := range in.Checks {
		f := fmt.Sprintf("checks[%d]", i)
		id := strings.TrimSpace(ch.CheckID)
		if id == "" {
			ve.Add(f+".checkId", CodeRequired, nil, "checkId is required")
			continue
		}
		maxLen(ve, f+".checkId", id, 200)
		if _, dup := defs[id]; dup {
			ve.Add(f+".checkId", CodeInvalid, id, "checkId "+id+" appears twice")
			continue
		}
		sev := strings.ToLower(strings.TrimSpace(ch.Severity))
		if sev == "" {
			sev = "medium"
		}
		enumIn(ve, f+".severity", sev, FindingSeverities)
		refs := ch.Evidences
		if len(refs) == 0 {
			refs = defaultRefs
		}
		cat.ValidateRequirementRefs(ve, f+".evidences", refs)
		title := strings.TrimSpace(ch.Title)
		if title == "" {
			title = id
		}
		maxLen(ve, f+".title", title, 300)
		defs[id] = CheckDefinition{ID: id, Title: title, Description: ch.Description, Severity: sev, Remediation: ch.Remediation, Evidences: refs}
		if len(ch.Resources) == 0 {
			ve.Add(f+".resources", CodeRequired, nil, "resources must list at least one resource")
		}
		for j, r := range ch.Resources {
			rf := fmt.Sprintf("%s.resources[%d]", f, j)
			total++
			st := strings.ToLower(strings.TrimSpace(r.Status))
			if st != CheckPass && st != CheckFail && st != CheckError {
				ve.Add(rf+".status", CodeInvalidEnum, r.Status, "status must be pass, fail or error")
			}
			if strings.TrimSpace(r.ID) == "" {
				ve.Add(rf+".id", CodeRequired, nil, "id is required (stable across pushes)")
			}
			maxLen(ve, rf+".id", r.ID, 1000)
			maxLen(ve, rf+".message", r.Message, 5000)
			sink.Outcome(CheckOutcome{CheckID: id, ResourceType: r.Type, ResourceID: strings.TrimSpace(r.ID), ResourceName: strings.TrimSpace(r.Name),
				Status: st, Message: r.Message, Details: r.Details})
		}
	}
	if total > maxPushResources {
		ve.Add("checks", CodeInvalid, total, fmt.Sprintf("at most %d resources per push", maxPushResources))
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	var run *CheckRun
	err = a.store.InTx(sys, func(ctx context.Context) error {
		var err error
		run, err = a.queueRun(ctx, c.OrgID, c, "", TriggerPush, "push:"+c.ID)
		if err != nil {
			return err
		}
		now := a.Now()
		run.Status, run.StartedAt = RunRunning, &now
		return a.store.FinishCheckRun(ctx, c.OrgID, run)
	})
	if errors.Is(err, ErrConflict) {
		return nil, Errorf(ErrConflict, "a push for this connection is still being recorded")
	}
	if err != nil {
		return nil, fmt.Errorf("push results: %w", err)
	}
	sink.Log("info", fmt.Sprintf("%d checks pushed with %d resources", len(defs), total))
	if err := a.finishRun(sys, run, c, defs, sink, ""); err != nil {
		return nil, err
	}
	return a.store.GetCheckRun(sys, c.OrgID, run.ID)
}

// parseRequirementList reads "framework:ref" pairs, one per line or
// comma-separated.
func parseRequirementList(s string) []RequirementRef {
	var out []RequirementRef
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ',' || r == ';' }) {
		f = strings.TrimSpace(f)
		fw, ref, ok := strings.Cut(f, ":")
		if !ok {
			out = append(out, RequirementRef{Framework: f})
			continue
		}
		out = append(out, RequirementRef{Framework: strings.TrimSpace(fw), Ref: strings.TrimSpace(ref)})
	}
	return out
}
