package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Training id prefixes.
const (
	PrefixTrainingModule     = "trm"
	PrefixTrainingAssignment = "tra"
	PrefixTrainingCompletion = "trc"
)

// Training events (docs/webhooks.md).
const (
	EventTrainingAssigned  = "training.assigned"
	EventTrainingCompleted = "training.completed"
	EventTrainingOverdue   = "training.overdue"
	EventTrainingReminder  = "training.reminder"
)

// Module kinds: a text module is completed by passing its quiz; a video or
// PDF module (an organization's upload) by acknowledging it.
const (
	TrainingKindText  = "text"
	TrainingKindVideo = "video"
	TrainingKindPDF   = "pdf"
)

// Assignment statuses.
const (
	TrainingAssigned  = "assigned"
	TrainingOverdue   = "overdue"
	TrainingCompleted = "completed"
)

// Completion statuses.
const (
	CompletionPassed       = "passed"
	CompletionFailed       = "failed"
	CompletionAcknowledged = "acknowledged"
)

// TrainingAssignmentStatuses and TrainingCompletionStatuses are the filter
// values of the lists.
var (
	TrainingAssignmentStatuses = []string{TrainingAssigned, TrainingOverdue, TrainingCompleted}
	TrainingCompletionStatuses = []string{CompletionPassed, CompletionFailed, CompletionAcknowledged}
	trainingTargets            = []string{"everyone", "role", "people"}
)

// TrainingValidity is how long a completion counts: a year, after which a
// required module is assigned again and its evidence lapses.
const TrainingValidity = 365 * 24 * time.Hour

// trainingRenewalLead is how long before a completion lapses the renewal
// assignment is made, so people can renew without a gap.
const trainingRenewalLead = 30 * 24 * time.Hour

// trainingReminderWindow is how close to its due date an open assignment
// gets a reminder, and the least time between two reminders.
const trainingReminderWindow = 7 * 24 * time.Hour

// TrainingFile is the uploaded video or PDF of an organization's module.
type TrainingFile struct {
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
}

// TrainingModule is a built-in catalog module or one an organization wrote
// or uploaded.
type TrainingModule struct {
	ID              string               `json:"id"`
	Title           string               `json:"title"`
	Summary         string               `json:"summary"`
	Kind            string               `json:"kind"`
	Builtin         bool                 `json:"builtin"`
	Version         int                  `json:"version"`
	DurationMinutes int                  `json:"durationMinutes"`
	PassMark        int                  `json:"passMark"`
	Controls        []TrainingControlRef `json:"controls"`
	ControlIDs      []string             `json:"controlIds"`
	Sections        []TrainingSection    `json:"sections"`
	Quiz            []TrainingQuestion   `json:"quiz"`
	File            *TrainingFile        `json:"file"`
	// Required lists the roles the module is required for in the
	// organization ("everyone" for all); empty when it is not required.
	Required  []string   `json:"required"`
	CreatedAt *time.Time `json:"createdAt"`
	UpdatedAt *time.Time `json:"updatedAt"`
}

// TrainingModuleInput is the body of POST /v1/training/modules (JSON for a
// text module; multipart with a file for a video or PDF).
type TrainingModuleInput struct {
	Title           string             `json:"title"`
	Summary         string             `json:"summary"`
	DurationMinutes int                `json:"durationMinutes"`
	PassMark        int                `json:"passMark"`
	Sections        []TrainingSection  `json:"sections"`
	Quiz            []TrainingQuizItem `json:"quiz"`
	ControlIDs      []string           `json:"controlIds"`
	// File is set for an upload module (multipart only).
	File        io.Reader `json:"-"`
	FileName    string    `json:"-"`
	ContentType string    `json:"-"`
}

// TrainingQuizItem is a question of a custom module with its answer key.
type TrainingQuizItem struct {
	Question string   `json:"question"`
	Choices  []string `json:"choices"`
	Answer   *int     `json:"answer"`
}

// trainingContent is how a custom module's text, quiz and controls are stored.
type trainingContent struct {
	Sections   []TrainingSection      `json:"sections"`
	Quiz       []trainingQuestionFile `json:"quiz"`
	ControlIDs []string               `json:"controlIds"`
}

// TrainingRule makes a module required for everyone (Role "") or a role.
type TrainingRule struct {
	ModuleID  string
	Role      string
	DueDays   int
	CreatedAt time.Time
}

// TrainingAssignment asks one person to complete one module.
type TrainingAssignment struct {
	ID           string     `json:"id"`
	PersonID     string     `json:"personId"`
	PersonName   string     `json:"personName"`
	ModuleID     string     `json:"moduleId"`
	ModuleTitle  string     `json:"moduleTitle"`
	Status       string     `json:"status"`
	DueDate      *string    `json:"dueDate"`
	Required     bool       `json:"required"`
	Source       string     `json:"source"`
	AssignedBy   string     `json:"assignedBy"`
	AssignedAt   time.Time  `json:"assignedAt"`
	CompletedAt  *time.Time `json:"completedAt"`
	CompletionID *string    `json:"completionId"`
	RemindedAt   *time.Time `json:"remindedAt"`
	// Attempts is the number of attempts made since the assignment opened.
	Attempts  int       `json:"attempts"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// TrainingAssignInput is the body of POST /v1/training/assignments.
type TrainingAssignInput struct {
	ModuleID  string   `json:"moduleId"`
	Target    string   `json:"target"`
	Role      string   `json:"role"`
	PersonIDs []string `json:"personIds"`
	DueDate   *string  `json:"dueDate"`
	DueInDays *int     `json:"dueInDays"`
	// Required makes the module required for the target (everyone or the
	// role): new people get it and completions are renewed yearly.
	Required bool `json:"required"`
}

// TrainingAssignResult reports what an assignment request did.
type TrainingAssignResult struct {
	ModuleID        string               `json:"moduleId"`
	Assigned        int                  `json:"assigned"`
	AlreadyAssigned int                  `json:"alreadyAssigned"`
	Required        bool                 `json:"required"`
	Assignments     []TrainingAssignment `json:"assignments"`
}

// TrainingAssignmentFilter narrows the assignment list.
type TrainingAssignmentFilter struct {
	PersonID string
	ModuleID string
	Status   string
	Open     bool // assigned or overdue
	Page     Page // PerPage 0: all
}

// TrainingCompletion is one attempt at a module: passed, failed or
// acknowledged. Attempts are never changed.
type TrainingCompletion struct {
	ID               string           `json:"id"`
	PersonID         string           `json:"personId"`
	PersonName       string           `json:"personName"`
	ModuleID         string           `json:"moduleId"`
	ModuleTitle      string           `json:"moduleTitle"`
	ModuleVersion    int              `json:"moduleVersion"`
	Status           string           `json:"status"`
	Score            *int             `json:"score"`
	PassMark         int              `json:"passMark"`
	Answers          []TrainingAnswer `json:"answers"`
	VerificationCode *string          `json:"verificationCode"`
	CompletedAt      time.Time        `json:"completedAt"`
	ExpiresAt        *time.Time       `json:"expiresAt"`
	// OrganizationName is filled for the public verification page only.
	OrganizationName string `json:"-"`
}

// TrainingAnswer is the choice given for one question.
type TrainingAnswer struct {
	QuestionID string `json:"questionId"`
	Choice     int    `json:"choice"`
}

// TrainingQuizSubmission is the body of POST
// /v1/training/completions/{videoId}/answers.
type TrainingQuizSubmission struct {
	Version int              `json:"version"`
	Answers []TrainingAnswer `json:"answers"`
}

// TrainingCompletionFilter narrows the completion list.
type TrainingCompletionFilter struct {
	PersonID string
	ModuleID string
	Status   string
	Page     Page // PerPage 0: all
}

// TrainingEvidenceLink is the task and evidence carrying a module's
// completion summary on one control.
type TrainingEvidenceLink struct {
	ModuleID    string
	ControlID   string
	TaskID      string
	EvidenceID  *string
	RefreshedAt time.Time
}

// TrainingStore persists modules, rules, assignments, completions and the
// evidence links.
type TrainingStore interface {
	CreateTrainingModule(ctx context.Context, orgID string, m *TrainingModule, content trainingContentJSON, createdBy string) error
	GetTrainingModule(ctx context.Context, orgID, id string) (*TrainingModule, trainingContentJSON, error)
	ListTrainingModules(ctx context.Context, orgID string) ([]TrainingModule, error)
	SaveTrainingRule(ctx context.Context, orgID string, r TrainingRule) error
	ListTrainingRules(ctx context.Context, orgID string) ([]TrainingRule, error)
	// CreateTrainingAssignment inserts the assignment unless the person
	// already has one for the module; it reports whether it inserted.
	CreateTrainingAssignment(ctx context.Context, orgID string, as *TrainingAssignment) (bool, error)
	GetTrainingAssignment(ctx context.Context, orgID, personID, moduleID string) (*TrainingAssignment, error)
	UpdateTrainingAssignment(ctx context.Context, orgID string, as *TrainingAssignment) error
	ListTrainingAssignments(ctx context.Context, orgID string, f TrainingAssignmentFilter) (List[TrainingAssignment], error)
	CreateTrainingCompletion(ctx context.Context, orgID string, c *TrainingCompletion) error
	GetTrainingCompletion(ctx context.Context, orgID, id string) (*TrainingCompletion, error)
	ListTrainingCompletions(ctx context.Context, orgID string, f TrainingCompletionFilter) (List[TrainingCompletion], error)
	// TrainingCompletionByCode finds a certificate's completion in any
	// organization (the public verification page).
	TrainingCompletionByCode(ctx context.Context, code string) (*TrainingCompletion, error)
	GetTrainingEvidenceLink(ctx context.Context, orgID, moduleID, controlID string) (*TrainingEvidenceLink, error)
	SaveTrainingEvidenceLink(ctx context.Context, orgID string, l *TrainingEvidenceLink) error
}

// trainingContentJSON is the stored JSON of a custom module's content.
type trainingContentJSON = []byte

func (c *TrainingCompletion) fill() {
	if c.Status == CompletionFailed {
		c.VerificationCode, c.ExpiresAt = nil, nil
		return
	}
	exp := c.CompletedAt.Add(TrainingValidity)
	c.ExpiresAt = &exp
}

// current reports whether a completion still counts at now.
func (c *TrainingCompletion) current(now time.Time) bool {
	return c.Status != CompletionFailed && now.Before(c.CompletedAt.Add(TrainingValidity))
}

// trainingModule returns a built-in or the organization's module, with the
// answer key of its quiz.
func (a *App) trainingModule(ctx context.Context, orgID, id string) (*TrainingModule, error) {
	builtin, err := BuiltinTrainingModules()
	if err != nil {
		return nil, err
	}
	for i := range builtin {
		if builtin[i].ID == id {
			m := builtin[i]
			return &m, nil
		}
	}
	if !HasPrefix(id, PrefixTrainingModule) {
		return nil, Errorf(ErrNotFound, "no training module %s", id)
	}
	m, raw, err := a.store.GetTrainingModule(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if err := decodeTrainingContent(m, raw); err != nil {
		return nil, err
	}
	return m, nil
}

// withRequired fills Required from the organization's rules.
func withRequired(ms []TrainingModule, rules []TrainingRule) {
	for i := range ms {
		ms[i].Required = []string{}
		for _, r := range rules {
			if r.ModuleID == ms[i].ID {
				role := r.Role
				if role == "" {
					role = "everyone"
				}
				ms[i].Required = append(ms[i].Required, role)
			}
		}
	}
}

// ListTrainingModules lists the built-in catalog and the organization's own
// modules, without their sections and quiz.
func (a *App) ListTrainingModules(ctx context.Context) ([]TrainingModule, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	builtin, err := BuiltinTrainingModules()
	if err != nil {
		return nil, err
	}
	custom, err := a.store.ListTrainingModules(ctx, p.OrgID)
	if err != nil {
		return nil, fmt.Errorf("list training modules: %w", err)
	}
	rules, err := a.store.ListTrainingRules(ctx, p.OrgID)
	if err != nil {
		return nil, fmt.Errorf("list training modules: %w", err)
	}
	out := make([]TrainingModule, 0, len(builtin)+len(custom))
	out = append(out, builtin...)
	out = append(out, custom...)
	for i := range out {
		out[i].Sections, out[i].Quiz = []TrainingSection{}, []TrainingQuestion{}
	}
	withRequired(out, rules)
	return out, nil
}

// GetTrainingModule returns one module with its sections and quiz (never
// the answer key).
func (a *App) GetTrainingModule(ctx context.Context, id string) (*TrainingModule, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	m, err := a.trainingModule(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	rules, err := a.store.ListTrainingRules(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	one := []TrainingModule{*m}
	withRequired(one, rules)
	return &one[0], nil
}

// OpenTrainingFile returns the uploaded video or PDF of a module.
func (a *App) OpenTrainingFile(ctx context.Context, id string) (*TrainingModule, io.ReadSeekCloser, error) {
	m, err := a.GetTrainingModule(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if m.File == nil || a.files == nil {
		return nil, nil, Errorf(ErrNotFound, "training module %s has no file", id)
	}
	f, err := a.files.Open(ctx, m.File.SHA256)
	if err != nil {
		return nil, nil, err
	}
	return m, f, nil
}

// CreateTrainingModule adds an organization's own module: Markdown sections
// with a quiz, or an uploaded video or PDF that people acknowledge.
func (a *App) CreateTrainingModule(ctx context.Context, in TrainingModuleInput) (*TrainingModule, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	m := &TrainingModule{ID: NewID(PrefixTrainingModule), Title: strings.TrimSpace(in.Title), Summary: strings.TrimSpace(in.Summary),
		Version: 1, DurationMinutes: in.DurationMinutes, PassMark: in.PassMark, Controls: []TrainingControlRef{},
		Sections: []TrainingSection{}, Quiz: []TrainingQuestion{}, Required: []string{}, CreatedAt: &now, UpdatedAt: &now}
	ve := NewValidationError()
	if m.Title == "" {
		ve.Add("title", CodeRequired, nil, "title is required")
	}
	maxLen(ve, "title", m.Title, 200)
	maxLen(ve, "summary", m.Summary, 2000)
	if in.DurationMinutes < 0 || in.DurationMinutes > 600 {
		ve.Add("durationMinutes", CodeInvalid, in.DurationMinutes, "durationMinutes must be between 0 and 600")
	}
	content := trainingContent{Sections: []TrainingSection{}, Quiz: []trainingQuestionFile{}}
	for i, s := range in.Sections {
		s.Title, s.Body = strings.TrimSpace(s.Title), strings.TrimSpace(s.Body)
		f := fmt.Sprintf("sections[%d]", i)
		if s.Title == "" {
			ve.Add(f+".title", CodeRequired, nil, f+".title is required")
		}
		if s.Body == "" {
			ve.Add(f+".body", CodeRequired, nil, f+".body is required")
		}
		maxLen(ve, f+".title", s.Title, 200)
		maxLen(ve, f+".body", s.Body, 50000)
		content.Sections = append(content.Sections, s)
	}
	if len(in.Sections) > 50 {
		ve.Add("sections", CodeInvalid, len(in.Sections), "a module has at most 50 sections")
	}
	if in.File != nil {
		m.Kind = TrainingKindVideo
		ct := strings.ToLower(strings.TrimSpace(in.ContentType))
		switch {
		case ct == "application/pdf" || strings.HasSuffix(strings.ToLower(in.FileName), ".pdf"):
			m.Kind, ct = TrainingKindPDF, "application/pdf"
		case strings.HasPrefix(ct, "video/"):
		default:
			ve.Add("file", CodeInvalid, in.ContentType, "the file must be a video (video/*) or a PDF")
		}
		if len(in.Quiz) > 0 {
			ve.Add("quiz", CodeInvalid, nil, "an uploaded module is acknowledged, not quizzed; leave quiz out")
		}
		m.PassMark = 0
		m.File = &TrainingFile{Name: cleanFilename(in.FileName), ContentType: ct}
	} else {
		m.Kind = TrainingKindText
		if len(in.Sections) == 0 {
			ve.Add("sections", CodeRequired, nil, "a text module needs at least one section (or upload a video or PDF)")
		}
		if len(in.Quiz) < 1 || len(in.Quiz) > 20 {
			ve.Add("quiz", CodeInvalid, len(in.Quiz), "a text module needs a quiz of 1 to 20 questions")
		}
		if in.PassMark < 1 || in.PassMark > 100 {
			ve.Add("passMark", CodeInvalid, in.PassMark, "passMark must be a percentage from 1 to 100")
		}
	}
	for i, q := range in.Quiz {
		f := fmt.Sprintf("quiz[%d]", i)
		q.Question = strings.TrimSpace(q.Question)
		if q.Question == "" {
			ve.Add(f+".question", CodeRequired, nil, f+".question is required")
		}
		maxLen(ve, f+".question", q.Question, 1000)
		if len(q.Choices) < 2 || len(q.Choices) > 8 {
			ve.Add(f+".choices", CodeInvalid, len(q.Choices), f+".choices must list 2 to 8 answers")
		}
		for j, c := range q.Choices {
			if strings.TrimSpace(c) == "" {
				ve.Add(fmt.Sprintf("%s.choices[%d]", f, j), CodeRequired, nil, "a choice may not be empty")
			}
			maxLen(ve, fmt.Sprintf("%s.choices[%d]", f, j), c, 500)
		}
		switch {
		case q.Answer == nil:
			ve.Add(f+".answer", CodeRequired, nil, f+".answer (the index of the right choice) is required")
		case *q.Answer < 0 || *q.Answer >= len(q.Choices):
			ve.Add(f+".answer", CodeInvalid, *q.Answer, f+".answer must be the index of one of the choices")
		default:
			content.Quiz = append(content.Quiz, trainingQuestionFile{ID: fmt.Sprintf("q%d", i+1), Question: q.Question, Choices: q.Choices, Answer: *q.Answer})
		}
	}
	controls, err := a.checkControlIDs(ctx, p.OrgID, in.ControlIDs, ve)
	if err != nil {
		return nil, err
	}
	content.ControlIDs = controls
	if content.ControlIDs == nil {
		content.ControlIDs = []string{}
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	if m.File != nil {
		if a.files == nil {
			return nil, errors.New("create training module: no file store configured")
		}
		blob, err := a.files.Put(ctx, in.File)
		if err != nil {
			return nil, fmt.Errorf("create training module: %w", err)
		}
		m.File.SHA256, m.File.Size = blob.SHA256, blob.Size
	}
	raw, err := encodeTrainingContent(content)
	if err != nil {
		return nil, err
	}
	if err := decodeTrainingContent(m, raw); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.CreateTrainingModule(ctx, p.OrgID, m, raw, p.ActorID()); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "training_module", ResourceID: m.ID, After: m})
	})
	if err != nil {
		return nil, fmt.Errorf("create training module: %w", err)
	}
	return m, nil
}

// dueDate works out an assignment's due date from the input.
func (in TrainingAssignInput) dueDate(now time.Time, ve *ValidationError) (*string, int) {
	if in.DueDate != nil && in.DueInDays != nil {
		ve.Add("dueDate", CodeInvalid, *in.DueDate, "give dueDate or dueInDays, not both")
		return nil, 0
	}
	if in.DueDate != nil {
		d, err := time.Parse("2006-01-02", *in.DueDate)
		if err != nil {
			ve.Add("dueDate", CodeInvalid, *in.DueDate, "dueDate must be a date (YYYY-MM-DD)")
			return nil, 0
		}
		days := int(d.Sub(now.Truncate(24*time.Hour)).Hours() / 24)
		s := d.Format("2006-01-02")
		return &s, max(days, 1)
	}
	days := 30
	if in.DueInDays != nil {
		days = *in.DueInDays
		if days < 1 || days > 366 {
			ve.Add("dueInDays", CodeInvalid, days, "dueInDays must be between 1 and 366")
			return nil, 0
		}
	}
	s := now.AddDate(0, 0, days).Format("2006-01-02")
	return &s, days
}

// AssignTraining assigns a module to everyone, to a role or to named
// people. With required, the rule stays: people who join later get the
// module and completions are renewed yearly.
func (a *App) AssignTraining(ctx context.Context, in TrainingAssignInput) (*TrainingAssignResult, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	ve := NewValidationError()
	if in.ModuleID == "" {
		ve.Add("moduleId", CodeRequired, nil, "moduleId is required")
	}
	if in.Target == "" {
		ve.Add("target", CodeRequired, nil, "target is required: everyone, role or people")
	}
	oneOf(ve, "target", in.Target, trainingTargets)
	switch in.Target {
	case "role":
		if _, ok := ParseRole(in.Role); !ok {
			ve.Add("role", CodeInvalidEnum, in.Role, "role must be one of owner, admin, auditor, employee, contractor")
		}
	case "people":
		if len(in.PersonIDs) == 0 {
			ve.Add("personIds", CodeRequired, nil, "personIds is required when target is people")
		}
		if len(in.PersonIDs) > maxBulk {
			ve.Add("personIds", CodeInvalid, len(in.PersonIDs), fmt.Sprintf("at most %d people at once", maxBulk))
		}
		if in.Required {
			ve.Add("required", CodeInvalid, true, "required applies to everyone or a role, not to named people")
		}
	}
	due, days := in.dueDate(now, ve)
	var m *TrainingModule
	if in.ModuleID != "" {
		m, err = a.trainingModule(ctx, p.OrgID, in.ModuleID)
		if errors.Is(err, ErrNotFound) {
			ve.Add("moduleId", CodeUnknownReference, in.ModuleID, "moduleId must be a training module of this organization")
		} else if err != nil {
			return nil, err
		}
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	res := &TrainingAssignResult{ModuleID: m.ID, Required: in.Required, Assignments: []TrainingAssignment{}}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		var people []Person
		if in.Target == "people" {
			for i, id := range in.PersonIDs {
				per, err := a.store.GetPerson(ctx, p.OrgID, id)
				if errors.Is(err, ErrNotFound) {
					return Invalid(fmt.Sprintf("personIds[%d]", i), CodeUnknownReference, id, "personIds must name people of this organization")
				}
				if err != nil {
					return err
				}
				people = append(people, *per)
			}
		} else {
			f := PersonFilter{Page: Page{Page: 1, PerPage: 1 << 20}}
			if in.Target == "role" {
				f.Role = in.Role
			}
			l, err := a.store.ListPeople(ctx, p.OrgID, f)
			if err != nil {
				return err
			}
			people = l.Items
			if in.Required {
				if err := a.store.SaveTrainingRule(ctx, p.OrgID, TrainingRule{ModuleID: m.ID, Role: in.Role, DueDays: days, CreatedAt: now}); err != nil {
					return err
				}
			}
		}
		for _, per := range people {
			if !per.IsActive {
				continue
			}
			as, created, err := a.assign(ctx, p.OrgID, m, per, due, in.Required, "manual", p.ActorID(), now)
			if err != nil {
				return err
			}
			if created {
				res.Assigned++
			} else {
				res.AlreadyAssigned++
			}
			res.Assignments = append(res.Assignments, *as)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("assign training %s: %w", in.ModuleID, err)
	}
	return res, nil
}

// assign gives a person a module unless they already have it, inside the
// caller's transaction. An open assignment keeps its due date unless the
// new one is earlier; required is only ever raised.
func (a *App) assign(ctx context.Context, orgID string, m *TrainingModule, per Person, due *string, required bool, source, by string, now time.Time) (*TrainingAssignment, bool, error) {
	as := &TrainingAssignment{ID: NewID(PrefixTrainingAssignment), PersonID: per.ID, PersonName: per.Name, ModuleID: m.ID, ModuleTitle: m.Title,
		Status: TrainingAssigned, DueDate: due, Required: required, Source: source, AssignedBy: by, AssignedAt: now, UpdatedAt: now}
	created, err := a.store.CreateTrainingAssignment(ctx, orgID, as)
	if err != nil {
		return nil, false, err
	}
	if !created {
		cur, err := a.store.GetTrainingAssignment(ctx, orgID, per.ID, m.ID)
		if err != nil {
			return nil, false, err
		}
		if required && !cur.Required {
			cur.Required, cur.UpdatedAt = true, now
			if err := a.store.UpdateTrainingAssignment(ctx, orgID, cur); err != nil {
				return nil, false, err
			}
		}
		cur.ModuleTitle = m.Title
		return cur, false, nil
	}
	return as, true, a.record(ctx, Mutation{Action: "assigned", ResourceType: "training_assignment", ResourceID: as.ID, After: as,
		Events: []Event{{Type: EventTrainingAssigned, Data: as}}})
}

// assignRequiredTraining gives a person who just joined every module
// required for everyone or for their role. It runs in the caller's
// transaction (createPeople).
func (a *App) assignRequiredTraining(ctx context.Context, orgID string, per *Person) error {
	rules, err := a.store.ListTrainingRules(ctx, orgID)
	if err != nil {
		return err
	}
	now := a.Now()
	for _, r := range rules {
		if r.Role != "" && r.Role != string(per.Role) {
			continue
		}
		m, err := a.trainingModule(ctx, orgID, r.ModuleID)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		due := now.AddDate(0, 0, r.DueDays).Format("2006-01-02")
		if _, _, err := a.assign(ctx, orgID, m, *per, &due, true, "joined", "system", now); err != nil {
			return err
		}
	}
	return nil
}

// ListTrainingAssignments lists assignments; employees and contractors see
// their own.
func (a *App) ListTrainingAssignments(ctx context.Context, f TrainingAssignmentFilter) (List[TrainingAssignment], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[TrainingAssignment]{}, err
	}
	ve := NewValidationError()
	oneOf(ve, "status", f.Status, TrainingAssignmentStatuses)
	if err := ve.Err(); err != nil {
		return List[TrainingAssignment]{}, err
	}
	if p.SeesOnlyAssigned() {
		if p.UserID == "" || (f.PersonID != "" && f.PersonID != p.UserID) {
			return List[TrainingAssignment]{Items: []TrainingAssignment{}}, nil
		}
		f.PersonID = p.UserID
	}
	l, err := a.store.ListTrainingAssignments(ctx, p.OrgID, f)
	if err != nil {
		return l, fmt.Errorf("list training assignments: %w", err)
	}
	return l, a.titleAssignments(ctx, p.OrgID, l.Items)
}

// titleAssignments fills module titles.
func (a *App) titleAssignments(ctx context.Context, orgID string, items []TrainingAssignment) error {
	titles := map[string]string{}
	for i := range items {
		id := items[i].ModuleID
		if _, ok := titles[id]; !ok {
			m, err := a.trainingModule(ctx, orgID, id)
			switch {
			case errors.Is(err, ErrNotFound):
				titles[id] = id
			case err != nil:
				return err
			default:
				titles[id] = m.Title
			}
		}
		items[i].ModuleTitle = titles[id]
	}
	return nil
}

// actingPerson returns the person a self-service call acts for.
func actingPerson(p *Principal, what string) error {
	if p.UserID == "" {
		return Errorf(ErrForbidden, "%s needs a person: this credential does not act for one", what)
	}
	return nil
}

// SubmitTrainingQuiz scores the caller's answers to a module's quiz. Every
// attempt is recorded; a pass completes the assignment, issues a
// certificate code and refreshes the module's evidence.
func (a *App) SubmitTrainingQuiz(ctx context.Context, moduleID string, in TrainingQuizSubmission) (*TrainingCompletion, error) {
	p, err := authorize(ctx, CapSelfService)
	if err != nil {
		return nil, err
	}
	if err := actingPerson(p, "taking a quiz"); err != nil {
		return nil, err
	}
	m, err := a.trainingModule(ctx, p.OrgID, moduleID)
	if err != nil {
		return nil, err
	}
	if m.Kind != TrainingKindText {
		return nil, Invalid("answers", CodeInvalid, nil, "this module has no quiz: acknowledge it with POST /v1/training/completions/{videoId}/complete")
	}
	ve := NewValidationError()
	if in.Version != m.Version {
		ve.Add("version", CodeInvalid, in.Version, fmt.Sprintf("the answers are for version %d; the module is at version %d: reload it and answer again", in.Version, m.Version))
	}
	byID := map[string]int{}
	for i, q := range m.Quiz {
		byID[q.ID] = i
	}
	given := map[string]int{}
	correct := 0
	for i, ans := range in.Answers {
		f := fmt.Sprintf("answers[%d]", i)
		qi, ok := byID[ans.QuestionID]
		switch {
		case !ok:
			ve.Add(f+".questionId", CodeUnknownReference, ans.QuestionID, "the question is not part of this module's quiz")
			continue
		case given[ans.QuestionID] > 0:
			ve.Add(f+".questionId", CodeInvalid, ans.QuestionID, "the question is answered twice")
			continue
		case ans.Choice < 0 || ans.Choice >= len(m.Quiz[qi].Choices):
			ve.Add(f+".choice", CodeInvalid, ans.Choice, "choice must be the index of one of the question's choices")
		}
		given[ans.QuestionID]++
		if ans.Choice == m.Quiz[qi].Answer {
			correct++
		}
	}
	if ve.Empty() && len(given) != len(m.Quiz) {
		ve.Add("answers", CodeRequired, len(given), fmt.Sprintf("answer every question: %d of %d answered", len(given), len(m.Quiz)))
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	score := (correct*100 + len(m.Quiz)/2) / len(m.Quiz)
	status := CompletionFailed
	if score >= m.PassMark {
		status = CompletionPassed
	}
	return a.complete(ctx, p, m, status, &score, in.Answers)
}

// CompleteTrainingModule records the caller's acknowledgement of an uploaded
// (video or PDF) module.
func (a *App) CompleteTrainingModule(ctx context.Context, moduleID string) (*TrainingCompletion, error) {
	p, err := authorize(ctx, CapSelfService)
	if err != nil {
		return nil, err
	}
	if err := actingPerson(p, "completing training"); err != nil {
		return nil, err
	}
	m, err := a.trainingModule(ctx, p.OrgID, moduleID)
	if err != nil {
		return nil, err
	}
	if m.Kind == TrainingKindText {
		return nil, Invalid("videoId", CodeInvalid, moduleID, "this module is completed by passing its quiz: POST /v1/training/completions/{videoId}/answers")
	}
	return a.complete(ctx, p, m, CompletionAcknowledged, nil, []TrainingAnswer{})
}

func (a *App) complete(ctx context.Context, p *Principal, m *TrainingModule, status string, score *int, answers []TrainingAnswer) (*TrainingCompletion, error) {
	now := a.Now()
	c := &TrainingCompletion{ID: NewID(PrefixTrainingCompletion), PersonID: p.UserID, ModuleID: m.ID, ModuleTitle: m.Title,
		ModuleVersion: m.Version, Status: status, Score: score, PassMark: m.PassMark, Answers: answers, CompletedAt: now}
	if c.Answers == nil {
		c.Answers = []TrainingAnswer{}
	}
	if status != CompletionFailed {
		// 160 random bits: a code cannot be guessed.
		c.VerificationCode = Ptr(RandomToken(20))
	}
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		per, err := a.store.GetPerson(ctx, p.OrgID, p.UserID)
		if err != nil {
			return err
		}
		c.PersonName = per.Name
		if err := a.store.CreateTrainingCompletion(ctx, p.OrgID, c); err != nil {
			return err
		}
		c.fill()
		m := Mutation{Action: "attempted", ResourceType: "training_completion", ResourceID: c.ID, After: c}
		if status == CompletionFailed {
			return a.record(ctx, m)
		}
		m.Action = "completed"
		m.Events = []Event{{Type: EventTrainingCompleted, Data: c}}
		if err := a.record(ctx, m); err != nil {
			return err
		}
		as, err := a.store.GetTrainingAssignment(ctx, p.OrgID, p.UserID, c.ModuleID)
		if err == nil {
			as.Status, as.CompletedAt, as.CompletionID, as.UpdatedAt = TrainingCompleted, &now, &c.ID, now
			if err := a.store.UpdateTrainingAssignment(ctx, p.OrgID, as); err != nil {
				return err
			}
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		return a.refreshTrainingEvidence(ctx, p.OrgID, c.ModuleID)
	})
	if err != nil {
		return nil, fmt.Errorf("complete training %s: %w", m.ID, err)
	}
	return c, nil
}

// ListTrainingCompletions lists attempts; employees and contractors see
// their own.
func (a *App) ListTrainingCompletions(ctx context.Context, f TrainingCompletionFilter) (List[TrainingCompletion], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[TrainingCompletion]{}, err
	}
	ve := NewValidationError()
	oneOf(ve, "status", f.Status, TrainingCompletionStatuses)
	if err := ve.Err(); err != nil {
		return List[TrainingCompletion]{}, err
	}
	if p.SeesOnlyAssigned() {
		if p.UserID == "" || (f.PersonID != "" && f.PersonID != p.UserID) {
			return List[TrainingCompletion]{Items: []TrainingCompletion{}}, nil
		}
		f.PersonID = p.UserID
	}
	l, err := a.store.ListTrainingCompletions(ctx, p.OrgID, f)
	if err != nil {
		return l, fmt.Errorf("list training completions: %w", err)
	}
	for i := range l.Items {
		l.Items[i].fill()
	}
	return l, nil
}

// GetTrainingCompletion returns one attempt; employees and contractors only
// their own.
func (a *App) GetTrainingCompletion(ctx context.Context, id string) (*TrainingCompletion, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.store.GetTrainingCompletion(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() && c.PersonID != p.UserID {
		return nil, ErrNotFound
	}
	c.fill()
	return c, nil
}

// TrainingCertificate renders the certificate of a passed or acknowledged
// completion as a PDF.
func (a *App) TrainingCertificate(ctx context.Context, completionID string) (*ReportPDF, error) {
	c, err := a.GetTrainingCompletion(ctx, completionID)
	if err != nil {
		return nil, err
	}
	if c.Status == CompletionFailed || c.VerificationCode == nil {
		return nil, Errorf(ErrNotFound, "completion %s failed the quiz and has no certificate", completionID)
	}
	p, _ := principal(ctx)
	org, err := a.store.GetOrganization(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	content, err := renderTrainingCertificate(c, org.Name)
	if err != nil {
		return nil, fmt.Errorf("render certificate %s: %w", completionID, err)
	}
	return &ReportPDF{Filename: "certificate-" + c.ModuleID + "-" + c.CompletedAt.Format("2006-01-02") + ".pdf", Content: content}, nil
}

// LatestTrainingCertificate renders the certificate of a person's latest
// passed or acknowledged completion of a module (of any module when
// moduleID is empty).
func (a *App) LatestTrainingCertificate(ctx context.Context, personID, moduleID string) (*ReportPDF, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	if personID == "" {
		ve.Add("memberId", CodeRequired, nil, "memberId is required")
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	if _, err := a.store.GetPerson(ctx, p.OrgID, personID); errors.Is(err, ErrNotFound) {
		return nil, Invalid("memberId", CodeUnknownReference, personID, "memberId must be a person of this organization")
	} else if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() && personID != p.UserID {
		return nil, Invalid("memberId", CodeUnknownReference, personID, "memberId must be a person of this organization")
	}
	l, err := a.store.ListTrainingCompletions(ctx, p.OrgID, TrainingCompletionFilter{PersonID: personID, ModuleID: moduleID})
	if err != nil {
		return nil, err
	}
	for i := len(l.Items) - 1; i >= 0; i-- {
		if l.Items[i].Status != CompletionFailed {
			return a.TrainingCertificate(ctx, l.Items[i].ID)
		}
	}
	return nil, Errorf(ErrNotFound, "the person has no completed training to certify")
}

// VerifyTrainingCertificate looks a certificate's verification code up for
// the public verification page (no account). It returns ErrNotFound for an
// unknown code.
func (a *App) VerifyTrainingCertificate(ctx context.Context, code string) (*TrainingCompletion, error) {
	code = strings.TrimSpace(strings.ToLower(code))
	if len(code) < 16 || len(code) > 64 {
		return nil, ErrNotFound
	}
	c, err := a.store.TrainingCompletionByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	c.fill()
	return c, nil
}
