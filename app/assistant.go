package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The assistant answers a person's questions about the organization's
// compliance data, with the records each answer came from. Without a
// language model (the default) it answers offline: deterministic intents
// over the same read services the API and MCP tools use, and full-text
// retrieval over the search index (assistant_answer.go). With an
// OpenAI-compatible model configured (SetAssistantModel), the model writes
// the answer and calls the same read tools (assistant_tools.go) with the
// person's permissions; any model failure falls back to the offline answer
// with a notice. Conversations are stored per organization and per person.

// Assistant limits.
const (
	// MaxAssistantMessage is the longest question, in characters.
	MaxAssistantMessage = 4000
	// maxAssistantTitle is the longest session title.
	maxAssistantTitle = 200
	// maxAssistantHistory is the most messages PUT history stores.
	maxAssistantHistory = 200
	// assistantContextMessages is how many earlier messages of a session a
	// model sees.
	assistantContextMessages = 10
)

// Assistant session states and message roles.
const (
	AssistantActive = "active"
	AssistantEnded  = "ended"

	AssistantUser      = "user"
	AssistantAssistant = "assistant"

	// Answer modes.
	AssistantOffline = "offline"
	AssistantModel   = "model"

	assistantKindChat    = "chat"
	assistantKindHistory = "history"
)

// AssistantRoles are the roles of a message.
var AssistantRoles = []string{AssistantUser, AssistantAssistant}

// AssistantSession is one conversation of a person.
type AssistantSession struct {
	ID           string             `json:"id"`
	Title        string             `json:"title"`
	Status       string             `json:"status"`
	MessageCount int                `json:"messageCount"`
	CreatedAt    time.Time          `json:"createdAt"`
	UpdatedAt    time.Time          `json:"updatedAt"`
	EndedAt      *time.Time         `json:"endedAt"`
	Messages     []AssistantMessage `json:"messages,omitempty"`
	// OwnerID is the person (or, for API keys acting for nobody, the
	// keys of one role) whose conversation it is; Kind tells chat sessions from the history.
	OwnerID string `json:"-"`
	Kind    string `json:"-"`
}

// AssistantMessage is one message of a conversation.
type AssistantMessage struct {
	ID        string            `json:"id"`
	SessionID string            `json:"sessionId"`
	Role      string            `json:"role"`
	Text      string            `json:"text"`
	Mode      string            `json:"mode,omitempty"`
	Intent    string            `json:"intent,omitempty"`
	Notice    string            `json:"notice,omitempty"`
	Sources   []AssistantSource `json:"sources"`
	// Actions are the writes the answer proposed, each waiting for the
	// person to confirm or cancel it.
	Actions   []AssistantAction `json:"actions,omitempty"`
	CreatedAt time.Time         `json:"createdAt"`
}

// AssistantSource is a record an answer came from.
type AssistantSource struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Title   string `json:"title"`
	Link    string `json:"link"`
	Snippet string `json:"snippet,omitempty"`
}

// AssistantExchange is a question and its answer.
type AssistantExchange struct {
	SessionID string           `json:"sessionId"`
	Question  AssistantMessage `json:"question"`
	Answer    AssistantMessage `json:"answer"`
}

// AssistantSessionInput starts a session.
type AssistantSessionInput struct {
	Title *string `json:"title"`
}

// AssistantMessageInput is a question.
type AssistantMessageInput struct {
	Text *string `json:"text"`
}

// AssistantHistoryMessage is one message of the history routes, in the
// reference's form (createdAt in milliseconds since the epoch).
type AssistantHistoryMessage struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	Text      string `json:"text"`
	CreatedAt int64  `json:"createdAt"`
}

// AssistantHistoryInput replaces the history.
type AssistantHistoryInput struct {
	Messages *[]AssistantHistoryMessageInput `json:"messages"`
}

// AssistantHistoryMessageInput is one message to store.
type AssistantHistoryMessageInput struct {
	ID        *string  `json:"id"`
	Role      *string  `json:"role"`
	Text      *string  `json:"text"`
	CreatedAt *float64 `json:"createdAt"`
}

// AssistantHistory is the stored history.
type AssistantHistory struct {
	Messages []AssistantHistoryMessage `json:"messages"`
}

// AssistantStore keeps conversations.
type AssistantStore interface {
	CreateAssistantSession(ctx context.Context, orgID string, s *AssistantSession) error
	// GetAssistantSession returns a session of the owner, ErrNotFound for
	// anyone else's.
	GetAssistantSession(ctx context.Context, orgID, ownerID, id string) (*AssistantSession, error)
	// AssistantHistorySession returns the owner's history session or
	// ErrNotFound.
	AssistantHistorySession(ctx context.Context, orgID, ownerID string) (*AssistantSession, error)
	ListAssistantSessions(ctx context.Context, orgID, ownerID string, pg Page) (List[AssistantSession], error)
	UpdateAssistantSession(ctx context.Context, orgID string, s *AssistantSession) error
	// AppendAssistantMessages adds messages after the session's last.
	AppendAssistantMessages(ctx context.Context, orgID, sessionID string, msgs []AssistantMessage) error
	// ListAssistantMessages returns the last limit messages (all when
	// limit <= 0), oldest first.
	ListAssistantMessages(ctx context.Context, orgID, sessionID string, limit int) ([]AssistantMessage, error)
	DeleteAssistantMessages(ctx context.Context, orgID, sessionID string) error
}

// assistantState holds the configured model, if any.
type assistantState struct {
	mu     sync.RWMutex
	model  ChatModel
	budget int
	limit  time.Duration
}

// SetAssistantModel configures the language model the assistant writes
// answers with: maxTokens bounds one answer (0: 1024), timeout one whole
// answer including tool calls (0: 60 s). A nil model means offline.
func (a *App) SetAssistantModel(m ChatModel, maxTokens int, timeout time.Duration) {
	if maxTokens <= 0 {
		maxTokens = 1024
	}
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	a.assistant.mu.Lock()
	defer a.assistant.mu.Unlock()
	a.assistant.model, a.assistant.budget, a.assistant.limit = m, maxTokens, timeout
}

func (a *App) assistantModel() (ChatModel, int, time.Duration) {
	a.assistant.mu.RLock()
	defer a.assistant.mu.RUnlock()
	return a.assistant.model, a.assistant.budget, a.assistant.limit
}

// AssistantModelConfigured reports whether a model writes the answers.
func (a *App) AssistantModelConfigured() bool {
	m, _, _ := a.assistantModel()
	return m != nil
}

// assistantPrincipal returns the principal if it may use the assistant:
// everyone but auditor API keys, which are read-only (a conversation is
// stored). Auditors signed in as a person may.
func assistantPrincipal(ctx context.Context) (*Principal, string, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, "", err
	}
	if !p.Can(CapSelfService) && !p.Can(CapReview) {
		return nil, "", Errorf(ErrForbidden, "the %s role may not use the assistant with this credential", p.Role)
	}
	return p, assistantOwner(p), nil
}

// assistantOwner is whose conversations the principal reads and writes:
// the person acting, else, for an API key acting for nobody, the
// organization's keys of the same role (they read the same records, so
// sharing their conversations shows none of them anything new).
func assistantOwner(p *Principal) string {
	switch {
	case p.UserID != "":
		return p.UserID
	case p.AuthType == AuthAPIKey:
		return "keys:" + string(p.Role)
	}
	return p.ActorID()
}

// assistantReader is the principal and conversation owner for reads:
// everyone reads their own conversations (an auditor key has none).
func assistantReader(ctx context.Context) (*Principal, string, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, "", err
	}
	return p, assistantOwner(p), nil
}

// StartAssistantSession starts a conversation.
func (a *App) StartAssistantSession(ctx context.Context, in AssistantSessionInput) (*AssistantSession, error) {
	p, owner, err := assistantPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	title := ""
	if in.Title != nil {
		title = strings.TrimSpace(*in.Title)
	}
	ve := NewValidationError()
	maxLen(ve, "title", title, maxAssistantTitle)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	now := a.Now()
	s := &AssistantSession{ID: NewID(PrefixAssistantSession), Title: title, Status: AssistantActive, CreatedAt: now, UpdatedAt: now,
		OwnerID: owner, Kind: assistantKindChat, Messages: []AssistantMessage{}}
	if err := a.store.CreateAssistantSession(ctx, p.OrgID, s); err != nil {
		return nil, fmt.Errorf("assistant: start: %w", err)
	}
	return s, nil
}

// ListAssistantSessions lists the person's conversations, latest first.
func (a *App) ListAssistantSessions(ctx context.Context, pg Page) (List[AssistantSession], error) {
	p, owner, err := assistantReader(ctx)
	if err != nil {
		return List[AssistantSession]{}, err
	}
	return a.store.ListAssistantSessions(ctx, p.OrgID, owner, pg)
}

// GetAssistantSession returns one of the person's conversations with its
// messages; anyone else's is not found.
func (a *App) GetAssistantSession(ctx context.Context, id string) (*AssistantSession, error) {
	p, owner, err := assistantReader(ctx)
	if err != nil {
		return nil, err
	}
	s, err := a.store.GetAssistantSession(ctx, p.OrgID, owner, id)
	if err != nil {
		return nil, err
	}
	if s.Messages, err = a.store.ListAssistantMessages(ctx, p.OrgID, s.ID, 0); err != nil {
		return nil, fmt.Errorf("assistant: messages: %w", err)
	}
	if err := a.attachActions(ctx, p.OrgID, s.ID, s.Messages); err != nil {
		return nil, err
	}
	return s, nil
}

// EndAssistantSession ends a conversation: it keeps its messages and takes
// no more.
func (a *App) EndAssistantSession(ctx context.Context, id string) (*AssistantSession, error) {
	p, owner, err := assistantPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	s, err := a.store.GetAssistantSession(ctx, p.OrgID, owner, id)
	if err != nil {
		return nil, err
	}
	if s.Status == AssistantEnded {
		return s, nil
	}
	now := a.Now()
	s.Status, s.EndedAt, s.UpdatedAt = AssistantEnded, &now, now
	if err := a.store.UpdateAssistantSession(ctx, p.OrgID, s); err != nil {
		return nil, fmt.Errorf("assistant: end: %w", err)
	}
	return s, nil
}

// AssistantStreamEvent is one piece of an answer as it is written: "delta"
// (text), "notice", then "done" with the exchange.
type AssistantStreamEvent struct {
	Type     string
	Text     string
	Exchange *AssistantExchange
}

// validQuestion checks a question's text.
func validQuestion(in AssistantMessageInput) (string, error) {
	ve := NewValidationError()
	text := ""
	if in.Text != nil {
		text = strings.TrimSpace(*in.Text)
	}
	if text == "" {
		ve.Add("text", CodeRequired, nil, "text is required: the question to ask")
	}
	if !utf8.ValidString(text) {
		ve.Add("text", CodeInvalid, nil, "text must be valid UTF-8")
	}
	maxLen(ve, "text", text, MaxAssistantMessage)
	return text, ve.Err()
}

// SendAssistantMessage asks a question in a session and stores the
// question and its answer. emit, when not nil, receives the answer as it
// is written (streaming); the stored exchange is returned either way.
func (a *App) SendAssistantMessage(ctx context.Context, sessionID string, in AssistantMessageInput, emit func(AssistantStreamEvent)) (*AssistantExchange, error) {
	p, owner, err := assistantPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	text, err := validQuestion(in)
	if err != nil {
		return nil, err
	}
	s, err := a.store.GetAssistantSession(ctx, p.OrgID, owner, sessionID)
	if err != nil {
		return nil, err
	}
	if s.Status == AssistantEnded {
		return nil, Errorf(ErrConflict, "the session has ended; start a new one")
	}
	earlier, err := a.store.ListAssistantMessages(ctx, p.OrgID, s.ID, assistantContextMessages)
	if err != nil {
		return nil, fmt.Errorf("assistant: messages: %w", err)
	}
	return a.answerAndStore(ctx, p, s, text, earlier, emit)
}

// Complete answers a question without a stored session: the reference's
// completions route. The conversation so far is given by the client;
// nothing is stored but the audit records of tool calls.
func (a *App) Complete(ctx context.Context, in AssistantCompletionInput, emit func(AssistantStreamEvent)) (*AssistantMessage, error) {
	if _, _, err := assistantPrincipal(ctx); err != nil {
		return nil, err
	}
	ve := NewValidationError()
	if in.Messages == nil || len(*in.Messages) == 0 {
		ve.Add("messages", CodeRequired, nil, "messages is required: the conversation, ending with the question")
	} else if len(*in.Messages) > maxAssistantHistory {
		ve.Add("messages", CodeInvalid, len(*in.Messages), "messages may hold at most 200 messages")
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	msgs := *in.Messages
	var earlier []AssistantMessage
	for i, m := range msgs {
		role, text := "", ""
		if m.Role != nil {
			role = *m.Role
		}
		if m.Text != nil {
			text = strings.TrimSpace(*m.Text)
		}
		f := fmt.Sprintf("messages[%d]", i)
		if role == "" {
			ve.Add(f+".role", CodeRequired, nil, "role is required: user or assistant")
		} else {
			oneOf(ve, f+".role", role, AssistantRoles)
		}
		if text == "" {
			ve.Add(f+".text", CodeRequired, nil, "text is required")
		}
		maxLen(ve, f+".text", text, MaxAssistantMessage)
		earlier = append(earlier, AssistantMessage{Role: role, Text: text})
	}
	if last := msgs[len(msgs)-1]; last.Role == nil || *last.Role != AssistantUser {
		ve.Add("messages", CodeInvalid, nil, "the last message must be the user's question")
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	q := earlier[len(earlier)-1].Text
	if len(earlier) > assistantContextMessages+1 {
		earlier = earlier[len(earlier)-assistantContextMessages-1:]
	}
	ans, calls := a.answer(ctx, q, earlier[:len(earlier)-1], emit)
	if err := a.store.InTx(ctx, func(ctx context.Context) error { return a.auditToolCalls(ctx, "", calls) }); err != nil {
		return nil, err
	}
	m := AssistantMessage{ID: NewID(PrefixAssistantMessage), Role: AssistantAssistant, Text: ans.Text, Mode: ans.Mode, Intent: ans.Intent,
		Notice: ans.Notice, Sources: ans.Sources, CreatedAt: a.Now()}
	if emit != nil {
		emit(AssistantStreamEvent{Type: "done", Exchange: &AssistantExchange{Answer: m}})
	}
	return &m, nil
}

// AssistantCompletionInput is the completions route's body.
type AssistantCompletionInput struct {
	Messages *[]AssistantHistoryMessageInput `json:"messages"`
}

// answerAndStore answers and stores the exchange and the audit records of
// the tool calls in one transaction.
func (a *App) answerAndStore(ctx context.Context, p *Principal, s *AssistantSession, text string, earlier []AssistantMessage, emit func(AssistantStreamEvent)) (*AssistantExchange, error) {
	qAt := a.Now()
	ans, calls := a.answer(withAssistantWrites(ctx), text, earlier, emit)
	ex := &AssistantExchange{SessionID: s.ID,
		Question: AssistantMessage{ID: NewID(PrefixAssistantMessage), SessionID: s.ID, Role: AssistantUser, Text: text, Sources: []AssistantSource{}, CreatedAt: qAt},
		Answer: AssistantMessage{ID: NewID(PrefixAssistantMessage), SessionID: s.ID, Role: AssistantAssistant, Text: ans.Text, Mode: ans.Mode,
			Intent: ans.Intent, Notice: ans.Notice, Sources: ans.Sources, Actions: ans.Actions, CreatedAt: a.Now()}}
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.AppendAssistantMessages(ctx, p.OrgID, s.ID, []AssistantMessage{ex.Question, ex.Answer}); err != nil {
			return err
		}
		for i := range ex.Answer.Actions {
			act := &ex.Answer.Actions[i]
			act.SessionID, act.MessageID, act.OwnerID = s.ID, ex.Answer.ID, assistantOwner(p)
			if err := a.store.CreateAssistantAction(ctx, p.OrgID, act); err != nil {
				return err
			}
		}
		s.MessageCount += 2
		s.UpdatedAt = ex.Answer.CreatedAt
		if s.Title == "" {
			s.Title = truncate(text, 80)
		}
		if err := a.store.UpdateAssistantSession(ctx, p.OrgID, s); err != nil {
			return err
		}
		return a.auditToolCalls(ctx, s.ID, calls)
	})
	if err != nil {
		return nil, fmt.Errorf("assistant: store answer: %w", err)
	}
	if emit != nil {
		emit(AssistantStreamEvent{Type: "done", Exchange: ex})
	}
	return ex, nil
}

// auditToolCalls records each tool call as the person, via the assistant.
func (a *App) auditToolCalls(ctx context.Context, sessionID string, calls []assistantToolCall) error {
	for _, c := range calls {
		after := map[string]any{"via": "assistant", "tool": c.Name, "arguments": c.Args, "outcome": c.Outcome}
		if err := a.record(ctx, Mutation{Action: "tool_called", ResourceType: "assistant_session", ResourceID: sessionID, After: after}); err != nil {
			return err
		}
	}
	return nil
}

// GetAssistantHistory returns the person's history.
func (a *App) GetAssistantHistory(ctx context.Context) (*AssistantHistory, error) {
	p, owner, err := assistantReader(ctx)
	if err != nil {
		return nil, err
	}
	out := &AssistantHistory{Messages: []AssistantHistoryMessage{}}
	s, err := a.store.AssistantHistorySession(ctx, p.OrgID, owner)
	if errors.Is(err, ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	msgs, err := a.store.ListAssistantMessages(ctx, p.OrgID, s.ID, 0)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		id := m.ID
		out.Messages = append(out.Messages, AssistantHistoryMessage{ID: id, Role: m.Role, Text: m.Text, CreatedAt: m.CreatedAt.UnixMilli()})
	}
	return out, nil
}

// SaveAssistantHistory replaces the person's history with the messages
// given (at most 200, each at most 4,000 characters).
func (a *App) SaveAssistantHistory(ctx context.Context, in AssistantHistoryInput) (*AssistantHistory, error) {
	p, owner, err := assistantPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	if in.Messages == nil {
		ve.Add("messages", CodeRequired, nil, "messages is required (an empty array clears the history)")
		return nil, ve
	}
	if len(*in.Messages) > maxAssistantHistory {
		ve.Add("messages", CodeInvalid, len(*in.Messages), "messages may hold at most 200 messages")
		return nil, ve
	}
	var msgs []AssistantMessage
	seen := map[string]bool{}
	for i, m := range *in.Messages {
		f := fmt.Sprintf("messages[%d]", i)
		var msg AssistantMessage
		if m.ID == nil || strings.TrimSpace(*m.ID) == "" {
			ve.Add(f+".id", CodeRequired, nil, "id is required")
		} else {
			msg.ID = strings.TrimSpace(*m.ID)
			maxLen(ve, f+".id", msg.ID, 100)
			if seen[msg.ID] {
				ve.Add(f+".id", CodeInvalid, msg.ID, "id must be unique within messages")
			}
			seen[msg.ID] = true
		}
		if m.Role == nil {
			ve.Add(f+".role", CodeRequired, nil, "role is required: user or assistant")
		} else {
			msg.Role = *m.Role
			oneOf(ve, f+".role", msg.Role, AssistantRoles)
		}
		if m.Text == nil || strings.TrimSpace(*m.Text) == "" {
			ve.Add(f+".text", CodeRequired, nil, "text is required")
		} else {
			msg.Text = *m.Text
			maxLen(ve, f+".text", msg.Text, MaxAssistantMessage)
		}
		if m.CreatedAt == nil {
			ve.Add(f+".createdAt", CodeRequired, nil, "createdAt is required: milliseconds since 1970-01-01 UTC")
		} else if *m.CreatedAt < 0 || *m.CreatedAt > 253402300799999 {
			ve.Add(f+".createdAt", CodeInvalid, *m.CreatedAt, "createdAt must be milliseconds since 1970-01-01 UTC")
		} else {
			msg.CreatedAt = time.UnixMilli(int64(*m.CreatedAt)).UTC()
		}
		msg.Sources = []AssistantSource{}
		msgs = append(msgs, msg)
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		s, err := a.store.AssistantHistorySession(ctx, p.OrgID, owner)
		now := a.Now()
		if errors.Is(err, ErrNotFound) {
			s = &AssistantSession{ID: NewID(PrefixAssistantSession), Status: AssistantActive, CreatedAt: now, UpdatedAt: now,
				OwnerID: owner, Kind: assistantKindHistory, Title: "History"}
			if err := a.store.CreateAssistantSession(ctx, p.OrgID, s); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if err := a.store.DeleteAssistantMessages(ctx, p.OrgID, s.ID); err != nil {
			return err
		}
		for i := range msgs {
			msgs[i].SessionID = s.ID
		}
		if err := a.store.AppendAssistantMessages(ctx, p.OrgID, s.ID, msgs); err != nil {
			return err
		}
		s.MessageCount, s.UpdatedAt = len(msgs), now
		return a.store.UpdateAssistantSession(ctx, p.OrgID, s)
	})
	if err != nil {
		return nil, fmt.Errorf("assistant: save history: %w", err)
	}
	return a.GetAssistantHistory(ctx)
}

// ClearAssistantHistory deletes the person's history.
func (a *App) ClearAssistantHistory(ctx context.Context) error {
	p, owner, err := assistantPrincipal(ctx)
	if err != nil {
		return err
	}
	return a.store.InTx(ctx, func(ctx context.Context) error {
		s, err := a.store.AssistantHistorySession(ctx, p.OrgID, owner)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := a.store.DeleteAssistantMessages(ctx, p.OrgID, s.ID); err != nil {
			return err
		}
		s.MessageCount, s.UpdatedAt = 0, a.Now()
		return a.store.UpdateAssistantSession(ctx, p.OrgID, s)
	})
}

// AskAssistant answers one question without storing a conversation (the
// MCP tool ask_assistant): the same answer as a message in a session, with
// its sources; tool calls are audited.
func (a *App) AskAssistant(ctx context.Context, question string) (*AssistantMessage, error) {
	role := AssistantUser
	if _, err := validQuestion(AssistantMessageInput{Text: &question}); err != nil {
		return nil, err
	}
	return a.Complete(ctx, AssistantCompletionInput{Messages: &[]AssistantHistoryMessageInput{{Role: &role, Text: &question}}}, nil)
}
