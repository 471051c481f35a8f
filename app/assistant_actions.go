package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The assistant's write tools. A configured model may propose a write
// (create a finding, create a task) by calling a write tool; the appliance
// never runs it then. It checks the arguments with the real service in a
// transaction it rolls back (so a proposal the person's role could not
// make, or with invalid arguments, is told to the model as an error), and
// keeps a pending action: who, which conversation, the tool, the validated
// arguments, a summary, an expiry. The answer carries the pending action;
// only the person confirming it (POST .../actions/{id}/confirm) runs the
// tool, as themselves, with their role checked at that moment. Cancelling
// or letting it expire creates nothing. Write tools are offered only in a
// stored conversation with a model; offline answers never write.

// Assistant action states.
const (
	ActionPending   = "pending"
	ActionConfirmed = "confirmed"
	ActionCancelled = "cancelled"
	// ActionExpired is a pending action past its expiry (not stored: it
	// is read as expired).
	ActionExpired = "expired"
)

// assistantActionTTL is how long a proposed write waits for confirmation.
const assistantActionTTL = 15 * time.Minute

// maxActionsPerAnswer bounds the writes one answer may propose.
const maxActionsPerAnswer = 5

// AssistantAction is a write the model proposed, waiting for the person.
type AssistantAction struct {
	ID         string         `json:"id"`
	SessionID  string         `json:"sessionId"`
	MessageID  string         `json:"messageId"`
	Tool       string         `json:"tool"`
	Arguments  map[string]any `json:"arguments"`
	Summary    string         `json:"summary"`
	Status     string         `json:"status"`
	ResultType string         `json:"resultType,omitempty"`
	ResultID   string         `json:"resultId,omitempty"`
	ResultLink string         `json:"resultLink,omitempty"`
	CreatedAt  time.Time      `json:"createdAt"`
	ExpiresAt  time.Time      `json:"expiresAt"`
	DecidedAt  *time.Time     `json:"decidedAt"`
	OwnerID    string         `json:"-"`
}

// AssistantActionResult answers a confirmation or a cancellation: the
// action and, after a confirmation, the message appended to the session.
type AssistantActionResult struct {
	Action  AssistantAction   `json:"action"`
	Message *AssistantMessage `json:"message"`
}

// AssistantActionStore keeps pending actions.
type AssistantActionStore interface {
	CreateAssistantAction(ctx context.Context, orgID string, act *AssistantAction) error
	// GetAssistantAction returns an action of the owner in the session,
	// ErrNotFound for anyone else's.
	GetAssistantAction(ctx context.Context, orgID, ownerID, sessionID, id string) (*AssistantAction, error)
	UpdateAssistantAction(ctx context.Context, orgID string, act *AssistantAction) error
	ListAssistantActions(ctx context.Context, orgID, sessionID string) ([]AssistantAction, error)
}

// assistantWriteTool is a write the model may propose.
type assistantWriteTool struct {
	Name        string
	Description string
	Parameters  map[string]any
	// Cap is the capability the person's role needs (checked when the
	// tool is offered and again, by the service, at confirmation).
	Cap Capability
	// Prepare reads and checks the arguments, returning the canonical
	// arguments and a summary for the person.
	Prepare func(raw json.RawMessage) (map[string]any, string, error)
	// Run performs the write as the principal in ctx.
	Run func(a *App, ctx context.Context, args map[string]any) (AssistantSource, error)
}

var assistantWriteTools = []assistantWriteTool{
	{Name: "create_finding", Cap: CapReview,
		Description: "Propose a new finding. Nothing is created until the person confirms it in the conversation.",
		Parameters: obj(map[string]any{"title": str("short title of the finding"), "description": str("what was found"),
			"severity": str("severity", "critical", "high", "medium", "low", "informational")}),
		Prepare: prepareFinding, Run: runCreateFinding},
	{Name: "create_task", Cap: CapManage,
		Description: "Propose a new task. Nothing is created until the person confirms it in the conversation.",
		Parameters: obj(map[string]any{"title": str("title of the task"), "description": str("what to do"),
			"dueDate": str("due date, YYYY-MM-DD")}),
		Prepare: prepareTask, Run: runCreateTask},
}

func assistantWriteToolByName(name string) *assistantWriteTool {
	for i := range assistantWriteTools {
		if assistantWriteTools[i].Name == name {
			return &assistantWriteTools[i]
		}
	}
	return nil
}

// writeArgs are the arguments of the write tools; each tool reads its own
// fields (unknown fields are refused).
type findingArgs struct {
	Title       *string `json:"title"`
	Description *string `json:"description"`
	Severity    *string `json:"severity"`
}

type taskArgs struct {
	Title       *string `json:"title"`
	Description *string `json:"description"`
	DueDate     *string `json:"dueDate"`
}

// canonical keeps the non-empty arguments, trimmed.
func canonical(fields map[string]*string) map[string]any {
	out := map[string]any{}
	for k, v := range fields {
		if v != nil && strings.TrimSpace(*v) != "" {
			out[k] = strings.TrimSpace(*v)
		}
	}
	return out
}

func argString(args map[string]any, k string) *string {
	if s, ok := args[k].(string); ok && s != "" {
		return &s
	}
	return nil
}

func requireTitle(title *string) error {
	if title == nil || strings.TrimSpace(*title) == "" {
		return Invalid("title", CodeRequired, nil, "title is required")
	}
	return nil
}

func prepareFinding(raw json.RawMessage) (map[string]any, string, error) {
	var in findingArgs
	if err := decodeArgs(raw, &in); err != nil {
		return nil, "", err
	}
	if err := requireTitle(in.Title); err != nil {
		return nil, "", err
	}
	args := canonical(map[string]*string{"title": in.Title, "description": in.Description, "severity": in.Severity})
	sev := "medium"
	if s := argString(args, "severity"); s != nil {
		sev = *s
	}
	return args, fmt.Sprintf("Create a %s finding “%s”", sev, truncate(args["title"].(string), 120)), nil
}

func runCreateFinding(a *App, ctx context.Context, args map[string]any) (AssistantSource, error) {
	src := "assistant"
	f, err := a.CreateFinding(ctx, FindingCreate{Title: argString(args, "title"), Description: argString(args, "description"),
		Severity: argString(args, "severity"), Source: &src})
	if err != nil {
		return AssistantSource{}, err
	}
	title := *argString(args, "title")
	if f.Title != nil {
		title = *f.Title
	}
	return AssistantSource{Type: SearchFinding, ID: f.ID, Title: title, Link: sourceLink(SearchFinding, f.ID, "", title)}, nil
}

func prepareTask(raw json.RawMessage) (map[string]any, string, error) {
	var in taskArgs
	if err := decodeArgs(raw, &in); err != nil {
		return nil, "", err
	}
	if err := requireTitle(in.Title); err != nil {
		return nil, "", err
	}
	args := canonical(map[string]*string{"title": in.Title, "description": in.Description, "dueDate": in.DueDate})
	sum := fmt.Sprintf("Create a task “%s”", truncate(args["title"].(string), 120))
	if d := argString(args, "dueDate"); d != nil {
		sum += ", due " + *d
	}
	return args, sum, nil
}

func runCreateTask(a *App, ctx context.Context, args map[string]any) (AssistantSource, error) {
	in := TaskInput{Title: argString(args, "title"), Description: argString(args, "description")}
	if d := argString(args, "dueDate"); d != nil {
		in.DueDate = Some(*d)
	}
	t, err := a.CreateTask(ctx, in)
	if err != nil {
		return AssistantSource{}, err
	}
	return AssistantSource{Type: "task", ID: t.ID, Title: t.Title, Link: "/tasks/" + t.ID}, nil
}

// assistantWritesKey marks a context whose answer may propose writes (a
// stored conversation).
type assistantWritesKey struct{}

func withAssistantWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, assistantWritesKey{}, true)
}

// assistantWriteToolsFor lists the write tools offered to the model for
// the principal in ctx: none outside a stored conversation, and only those
// the person's role may use.
func assistantWriteToolsFor(ctx context.Context) []assistantWriteTool {
	if ok, _ := ctx.Value(assistantWritesKey{}).(bool); !ok {
		return nil
	}
	p, err := principal(ctx)
	if err != nil {
		return nil
	}
	var out []assistantWriteTool
	for _, t := range assistantWriteTools {
		if p.Can(t.Cap) {
			out = append(out, t)
		}
	}
	return out
}

// errDryRun rolls back a proposal's check.
var errDryRun = errors.New("dry run")

// proposeWrite checks a write the model proposed, by running it in a
// transaction that is rolled back, and returns the pending action (not yet
// stored: the answer stores it with its message).
func (a *App) proposeWrite(ctx context.Context, t *assistantWriteTool, raw json.RawMessage) (*AssistantAction, error) {
	args, summary, err := t.Prepare(raw)
	if err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := t.Run(a, ctx, args); err != nil {
			return err
		}
		return errDryRun
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return nil, err
	}
	now := a.Now()
	return &AssistantAction{ID: NewID(PrefixAssistantAction), Tool: t.Name, Arguments: args, Summary: summary, Status: ActionPending,
		CreatedAt: now, ExpiresAt: now.Add(assistantActionTTL)}, nil
}

// readState sets an action's status as read now (expired when pending
// past its expiry).
func (act *AssistantAction) readState(now time.Time) {
	if act.Status == ActionPending && !now.Before(act.ExpiresAt) {
		act.Status = ActionExpired
	}
	if act.Arguments == nil {
		act.Arguments = map[string]any{}
	}
}

// attachActions puts each action on the message that proposed it.
func (a *App) attachActions(ctx context.Context, orgID, sessionID string, msgs []AssistantMessage) error {
	acts, err := a.store.ListAssistantActions(ctx, orgID, sessionID)
	if err != nil {
		return fmt.Errorf("assistant: actions: %w", err)
	}
	now := a.Now()
	by := map[string][]AssistantAction{}
	for _, act := range acts {
		act.readState(now)
		by[act.MessageID] = append(by[act.MessageID], act)
	}
	for i := range msgs {
		msgs[i].Actions = by[msgs[i].ID]
	}
	return nil
}

// decideAction loads the person's action for a decision.
func (a *App) decideAction(ctx context.Context, sessionID, id string) (*Principal, *AssistantAction, error) {
	p, owner, err := assistantPrincipal(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := a.store.GetAssistantSession(ctx, p.OrgID, owner, sessionID); err != nil {
		return nil, nil, err
	}
	act, err := a.store.GetAssistantAction(ctx, p.OrgID, owner, sessionID, id)
	if err != nil {
		return nil, nil, err
	}
	return p, act, nil
}

// ConfirmAssistantAction runs a pending action as the person confirming
// it: their role is checked now (403 when it may not), the record is
// created and audited via the assistant, and a message saying what was
// created is appended to the conversation. Confirming an action already
// confirmed returns it again without creating anything; a cancelled or
// expired one is a conflict.
func (a *App) ConfirmAssistantAction(ctx context.Context, sessionID, id string) (*AssistantActionResult, error) {
	var out *AssistantActionResult
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		p, act, err := a.decideAction(ctx, sessionID, id)
		if err != nil {
			return err
		}
		now := a.Now()
		act.readState(now)
		switch act.Status {
		case ActionConfirmed:
			out = &AssistantActionResult{Action: *act}
			return nil
		case ActionCancelled:
			return Errorf(ErrConflict, "this action was cancelled; ask the assistant again")
		case ActionExpired:
			return Errorf(ErrConflict, "this action expired %s after it was proposed; ask the assistant again", assistantActionTTL)
		}
		t := assistantWriteToolByName(act.Tool)
		if t == nil {
			return Errorf(ErrConflict, "the tool %s is no longer offered", act.Tool)
		}
		src, err := t.Run(a, ctx, act.Arguments)
		if err != nil {
			return err
		}
		act.Status, act.DecidedAt, act.ResultType, act.ResultID, act.ResultLink = ActionConfirmed, &now, src.Type, src.ID, src.Link
		if err := a.store.UpdateAssistantAction(ctx, p.OrgID, act); err != nil {
			return err
		}
		msg := AssistantMessage{ID: NewID(PrefixAssistantMessage), SessionID: sessionID, Role: AssistantAssistant, Mode: AssistantModel,
			Intent: "action_confirmed", Text: fmt.Sprintf("Done: %s (%s).", act.Summary, src.ID), Sources: []AssistantSource{src}, CreatedAt: now}
		if err := a.appendToSession(ctx, p, sessionID, msg); err != nil {
			return err
		}
		out = &AssistantActionResult{Action: *act, Message: &msg}
		return a.record(ctx, Mutation{Action: "action_confirmed", ResourceType: "assistant_session", ResourceID: sessionID,
			After: map[string]any{"via": "assistant", "tool": act.Tool, "actionId": act.ID, "arguments": act.Arguments,
				"resultType": src.Type, "resultId": src.ID}})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CancelAssistantAction cancels a pending action: nothing is created.
// Cancelling it again is harmless; a confirmed one is a conflict.
func (a *App) CancelAssistantAction(ctx context.Context, sessionID, id string) (*AssistantActionResult, error) {
	var out *AssistantActionResult
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		p, act, err := a.decideAction(ctx, sessionID, id)
		if err != nil {
			return err
		}
		now := a.Now()
		act.readState(now)
		switch act.Status {
		case ActionConfirmed:
			return Errorf(ErrConflict, "this action was already confirmed: %s %s was created", act.ResultType, act.ResultID)
		case ActionCancelled, ActionExpired:
			out = &AssistantActionResult{Action: *act}
			return nil
		}
		act.Status, act.DecidedAt = ActionCancelled, &now
		if err := a.store.UpdateAssistantAction(ctx, p.OrgID, act); err != nil {
			return err
		}
		out = &AssistantActionResult{Action: *act}
		return a.record(ctx, Mutation{Action: "action_cancelled", ResourceType: "assistant_session", ResourceID: sessionID,
			After: map[string]any{"via": "assistant", "tool": act.Tool, "actionId": act.ID}})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendToSession adds a message to a session.
func (a *App) appendToSession(ctx context.Context, p *Principal, sessionID string, msg AssistantMessage) error {
	s, err := a.store.GetAssistantSession(ctx, p.OrgID, assistantOwner(p), sessionID)
	if err != nil {
		return err
	}
	if err := a.store.AppendAssistantMessages(ctx, p.OrgID, sessionID, []AssistantMessage{msg}); err != nil {
		return err
	}
	s.MessageCount++
	s.UpdatedAt = msg.CreatedAt
	return a.store.UpdateAssistantSession(ctx, p.OrgID, s)
}
