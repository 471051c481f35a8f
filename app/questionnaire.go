package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ID prefixes of questionnaires, their questions and fill links.
const (
	PrefixQuestionnaire     = "qst"
	PrefixQuestion          = "qqa"
	PrefixQuestionnaireLink = "qln"
)

// Questionnaire statuses, answer statuses and directions.
const (
	QuestionnaireDraft     = "draft"
	QuestionnaireSent      = "sent"
	QuestionnaireSubmitted = "submitted"

	AnswerUntouched = "untouched"
	AnswerGenerated = "generated"
	AnswerManual    = "manual"

	DirectionOutgoing = "outgoing" // sent to a vendor to fill
	DirectionIncoming = "incoming" // received from a customer, answered by us
)

// EventQuestionnaireSubmitted is raised when a vendor's questionnaire is submitted.
const EventQuestionnaireSubmitted = "vendor.questionnaire.submitted"

// Questionnaire defaults and bounds.
const (
	DefaultMinConfidence = 0.5
	defaultLinkDays      = 14
	maxLinkDays          = 90
	maxAnswerLength      = 20000
	maxUploadQuestions   = 10 << 20 // bytes of an uploaded questions file
)

// Errors of fill links; both are not-found errors to JSON clients.
var (
	ErrLinkExpired = &PublicError{Kind: ErrNotFound, Msg: "this questionnaire link has expired"}
	ErrLinkUsed    = &PublicError{Kind: ErrNotFound, Msg: "this questionnaire link has already been used or was replaced"}
	ErrBadCSRF     = &PublicError{Kind: ErrForbidden, Msg: "the form is stale or was not sent from this page; reload it and try again"}
)

// AnswerSource is the knowledge an answer was drawn from.
type AnswerSource struct {
	Type string `json:"type"` // entry or a knowledge source such as policy
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Question is one question of a questionnaire and its answer.
type Question struct {
	ID         string        `json:"id"`
	Position   int           `json:"position"`
	Section    string        `json:"section"`
	Question   string        `json:"question"`
	Answer     *string       `json:"answer"`
	Comment    *string       `json:"comment"`
	Status     string        `json:"status"`
	Confidence *float64      `json:"confidence"`
	Source     *AnswerSource `json:"source"`
	// Draft is a model-drafted answer awaiting a person's review, beside a
	// question the knowledge base did not answer; nil when there is none.
	Draft     *AnswerDraft `json:"draft"`
	UpdatedAt time.Time    `json:"updatedAt"`
	// Where the question sits in the uploaded file.
	Sheet      string `json:"-"`
	Row        int    `json:"-"`
	AnswerCol  int    `json:"-"`
	CommentCol int    `json:"-"`
}

// Questionnaire is a set of questions: sent to a vendor to fill (outgoing)
// or received from a customer and answered from the knowledge base
// (incoming).
type Questionnaire struct {
	ID                string        `json:"id"`
	Name              string        `json:"name"`
	Direction         string        `json:"direction"`
	Status            string        `json:"status"`
	VendorID          *string       `json:"vendorId"`
	TemplateID        *string       `json:"templateId"`
	FileName          *string       `json:"fileName"`
	FileType          *string       `json:"fileType"`
	DueDate           *string       `json:"dueDate"`
	SentAt            *time.Time    `json:"sentAt"`
	SubmittedAt       *time.Time    `json:"submittedAt"`
	TotalQuestions    int           `json:"totalQuestions"`
	AnsweredQuestions int           `json:"answeredQuestions"`
	Questions         []Question    `json:"questions,omitempty"`
	CreatedAt         time.Time     `json:"createdAt"`
	UpdatedAt         time.Time     `json:"updatedAt"`
	FileSHA256        string        `json:"-"`
	Layout            []SheetLayout `json:"-"`
}

// QuestionInput is one question of a create body.
type QuestionInput struct {
	Question string `json:"question"`
	Section  string `json:"section"`
}

// QuestionnaireCreate is the body of POST /v1/questionnaire: a built-in
// template, the questions of an earlier questionnaire, or a list of
// questions.
type QuestionnaireCreate struct {
	Name       string  `json:"name"`
	TemplateID *string `json:"templateId"`
	// FromQuestionnaireID copies the questions (not the answers) of another
	// questionnaire of the organization, e.g. to send it to another vendor.
	FromQuestionnaireID *string         `json:"fromQuestionnaireId"`
	VendorID            *string         `json:"vendorId"`
	DueDate             *string         `json:"dueDate"`
	Questions           []QuestionInput `json:"questions"`
}

// QuestionnaireFilter narrows the list.
type QuestionnaireFilter struct {
	Status    string
	VendorID  string
	Direction string
	Page      Page
}

// AnswerInput sets one question's answer and comment.
type AnswerInput struct {
	QuestionID string      `json:"questionId"`
	Answer     Opt[string] `json:"answer"`
	Comment    Opt[string] `json:"comment"`
}

// QuestionnaireFill is the body of POST /v1/questionnaire/{id}/fill.
type QuestionnaireFill struct {
	Answers []AnswerInput `json:"answers"`
	Submit  bool          `json:"submit"`
}

// QuestionnaireSend is the body of POST /v1/questionnaire/{id}/send.
type QuestionnaireSend struct {
	VendorID      *string `json:"vendorId"`
	ExpiresInDays *int    `json:"expiresInDays"`
}

// QuestionnaireLink is a secret, expiring link for one vendor to fill one
// questionnaire once. Only the SHA-256 of its token is stored.
type QuestionnaireLink struct {
	ID              string
	OrganizationID  string
	QuestionnaireID string
	VendorID        string
	TokenHash       string
	CSRFSecret      string
	ExpiresAt       time.Time
	UsedAt          *time.Time
	RevokedAt       *time.Time
	CreatedAt       time.Time
}

// SentLink is the answer of send: the token is shown this once.
type SentLink struct {
	Questionnaire *Questionnaire `json:"questionnaire"`
	Token         string         `json:"token"`
	Path          string         `json:"path"`
	ExpiresAt     time.Time      `json:"expiresAt"`
}

// AutoAnswerInput is the body of POST /v1/questionnaire/{id}/auto-answer.
type AutoAnswerInput struct {
	MinConfidence *float64 `json:"minConfidence"`
	// Overwrite replaces manual answers too; generated answers are always
	// refreshed.
	Overwrite bool `json:"overwrite"`
	// Draft asks the configured language model to draft answers for the
	// questions the knowledge base leaves open (default: true when a model
	// is configured). Drafts need a person's review.
	Draft *bool `json:"draft"`
	// Progress, when set, is told how many of the questions to match are
	// done, before the first and after each one (the web application's
	// job page shows it).
	Progress func(done, total int) `json:"-"`
}

// AutoAnswerResult reports an auto-answer run.
type AutoAnswerResult struct {
	Questionnaire *Questionnaire `json:"questionnaire"`
	Answered      int            `json:"answered"`
	Unanswered    int            `json:"unanswered"`
	Skipped       int            `json:"skipped"`
	MinConfidence float64        `json:"minConfidence"`
	// Drafted counts the open questions the language model drafted an
	// answer for (needing review); Notice says why drafting stopped early.
	Drafted    int    `json:"drafted"`
	Notice     string `json:"notice,omitempty"`
	DurationMs int64  `json:"durationMs"`
}

// SubmittedEventData is the data of vendor.questionnaire.submitted,
// exactly the spec's payload.
type SubmittedEventData struct {
	VendorID        string    `json:"vendorId"`
	VendorName      string    `json:"vendorName"`
	QuestionnaireID string    `json:"questionnaireId"`
	SubmittedAt     time.Time `json:"submittedAt"`
}

// LinkView is what the public fill page shows.
type LinkView struct {
	Link             *QuestionnaireLink
	Questionnaire    *Questionnaire
	OrganizationName string
	VendorName       string
	Branding         Branding
}

// QuestionnaireStore persists questionnaires, questions and links.
type QuestionnaireStore interface {
	CreateQuestionnaire(ctx context.Context, orgID string, q *Questionnaire) error
	GetQuestionnaire(ctx context.Context, orgID, id string, withQuestions bool) (*Questionnaire, error)
	ListQuestionnaires(ctx context.Context, orgID string, f QuestionnaireFilter) (List[Questionnaire], error)
	UpdateQuestionnaire(ctx context.Context, orgID string, q *Questionnaire) error
	DeleteQuestionnaire(ctx context.Context, orgID, id string) error
	UpdateQuestions(ctx context.Context, orgID string, qs []Question) error
	// QuestionnaireUsage returns how many questionnaires were created in a month (YYYY-MM).
	QuestionnaireUsage(ctx context.Context, orgID, month string) (int, error)
	// AddQuestionnaireUsage counts one more questionnaire in a month.
	AddQuestionnaireUsage(ctx context.Context, orgID, month string) error
	CreateQuestionnaireLink(ctx context.Context, l *QuestionnaireLink) error
	GetQuestionnaireLink(ctx context.Context, tokenHash string) (*QuestionnaireLink, error)
	UpdateQuestionnaireLink(ctx context.Context, l *QuestionnaireLink) error
	RevokeQuestionnaireLinks(ctx context.Context, orgID, questionnaireID string, at time.Time) error
}

// HashToken is the stored form of a secret link token.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// useQuestionnaire enforces the plan's questionnaires per calendar month
// (UTC) and counts one more; it runs in the creating transaction.
func (a *App) useQuestionnaire(ctx context.Context, p *Principal) error {
	plan := p.Plan
	if plan == "" {
		o, err := a.store.GetOrganization(ctx, p.OrgID)
		if err != nil {
			return err
		}
		plan = o.Plan
	}
	month := a.Now().Format("2006-01")
	used, err := a.store.QuestionnaireUsage(ctx, p.OrgID, month)
	if err != nil {
		return err
	}
	if err := a.CheckLimit(plan, "questionnaires", used); err != nil {
		return err
	}
	return a.store.AddQuestionnaireUsage(ctx, p.OrgID, month)
}

func (a *App) checkVendor(ctx context.Context, orgID string, id *string, ve *ValidationError) (*Vendor, error) {
	if id == nil {
		return nil, nil
	}
	v, err := a.store.GetVendor(ctx, orgID, *id)
	if errors.Is(err, ErrNotFound) || err == nil && v.ArchivedAt != nil {
		ve.Add("vendorId", CodeUnknownReference, *id, "vendorId must be an active vendor of this organization")
		return nil, nil
	}
	return v, err
}

func (a *App) insertQuestionnaire(ctx context.Context, p *Principal, q *Questionnaire, ve *ValidationError) error {
	return a.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := a.checkVendor(ctx, p.OrgID, q.VendorID, ve); err != nil {
			return err
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.useQuestionnaire(ctx, p); err != nil {
			return err
		}
		if err := a.store.CreateQuestionnaire(ctx, p.OrgID, q); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "questionnaire", ResourceID: q.ID, After: summary(q)})
	})
}

// summary is a questionnaire without its questions, for the audit trail.
func summary(q *Questionnaire) *Questionnaire {
	c := *q
	c.Questions = nil
	return &c
}

func newQuestionnaire(name string, vendorID, dueDate *string, now time.Time, ve *ValidationError) *Questionnaire {
	q := &Questionnaire{ID: NewID(PrefixQuestionnaire), Name: strings.TrimSpace(name), Status: QuestionnaireDraft,
		Direction: DirectionIncoming, CreatedAt: now, UpdatedAt: now}
	if q.Name == "" {
		ve.Add("name", CodeRequired, nil, "name is required")
	}
	maxLen(ve, "name", q.Name, 255)
	if vendorID != nil && strings.TrimSpace(*vendorID) != "" {
		q.VendorID = Ptr(strings.TrimSpace(*vendorID))
		q.Direction = DirectionOutgoing
	}
	if dueDate != nil && *dueDate != "" {
		if t, ok := ParseDate(*dueDate); ok {
			q.DueDate = Ptr(t.Format("2006-01-02"))
		} else {
			ve.Add("dueDate", CodeInvalid, *dueDate, "dueDate must be a date (YYYY-MM-DD)")
		}
	}
	return q
}

func finishQuestions(q *Questionnaire, now time.Time) {
	for i := range q.Questions {
		q.Questions[i].ID = NewID(PrefixQuestion)
		q.Questions[i].Position = i
		q.Questions[i].UpdatedAt = now
		if q.Questions[i].Status == "" {
			q.Questions[i].Status = AnswerUntouched
		}
		if q.Questions[i].Answer != nil {
			q.AnsweredQuestions++
		}
	}
	q.TotalQuestions = len(q.Questions)
}

// CreateQuestionnaire creates a questionnaire from a template or a list of
// questions. The plan's monthly questionnaire allowance applies.
func (a *App) CreateQuestionnaire(ctx context.Context, in QuestionnaireCreate) (*Questionnaire, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	ve := NewValidationError()
	if strings.TrimSpace(in.Name) == "" && in.TemplateID != nil {
		if t := findTemplate(*in.TemplateID); t != nil {
			in.Name = t.Name
		}
	}
	var from *Questionnaire
	if in.FromQuestionnaireID != nil {
		from, err = a.store.GetQuestionnaire(ctx, p.OrgID, *in.FromQuestionnaireID, true)
		if errors.Is(err, ErrNotFound) {
			ve.Add("fromQuestionnaireId", CodeUnknownReference, *in.FromQuestionnaireID, "fromQuestionnaireId must be a questionnaire of this organization")
		} else if err != nil {
			return nil, fmt.Errorf("create questionnaire: %w", err)
		}
		if from != nil && strings.TrimSpace(in.Name) == "" {
			in.Name = from.Name
		}
	}
	q := newQuestionnaire(in.Name, in.VendorID, in.DueDate, now, ve)
	sources := 0
	for _, given := range []bool{in.TemplateID != nil, in.FromQuestionnaireID != nil, len(in.Questions) > 0} {
		if given {
			sources++
		}
	}
	switch {
	case sources > 1:
		ve.Add("questions", CodeInvalid, nil, "give only one of templateId, fromQuestionnaireId and questions")
	case in.FromQuestionnaireID != nil:
		if from != nil {
			q.TemplateID = from.TemplateID
			for _, fq := range from.Questions {
				q.Questions = append(q.Questions, Question{Section: fq.Section, Question: fq.Question, CommentCol: -1})
			}
		}
	case in.TemplateID != nil:
		t := findTemplate(*in.TemplateID)
		if t == nil {
			ve.Add("templateId", CodeUnknownReference, *in.TemplateID, "templateId must be one of GET /v1/questionnaire/templates")
			break
		}
		q.TemplateID = Ptr(t.ID)
		for _, tq := range t.Questions {
			q.Questions = append(q.Questions, Question{Section: tq.Section, Question: tq.Question, CommentCol: -1})
		}
	case len(in.Questions) == 0:
		ve.Add("questions", CodeRequired, nil, "give templateId, fromQuestionnaireId or a non-empty questions list")
	case len(in.Questions) > maxQuestions:
		ve.Add("questions", CodeTooLong, len(in.Questions), fmt.Sprintf("at most %d questions", maxQuestions))
	default:
		for i, qi := range in.Questions {
			text := strings.TrimSpace(qi.Question)
			f := fmt.Sprintf("questions[%d].question", i)
			if text == "" {
				ve.Add(f, CodeRequired, nil, f+" is required")
			}
			maxLen(ve, f, text, questionMaxLength)
			maxLen(ve, fmt.Sprintf("questions[%d].section", i), qi.Section, 255)
			q.Questions = append(q.Questions, Question{Section: strings.TrimSpace(qi.Section), Question: text, CommentCol: -1})
		}
	}
	finishQuestions(q, now)
	if err := a.insertQuestionnaire(ctx, p, q, ve); err != nil {
		return nil, fmt.Errorf("create questionnaire: %w", err)
	}
	return q, nil
}

// CreateQuestionnaireFromFile creates a questionnaire from an uploaded CSV
// or XLSX file of questions; the file is kept so that export writes the
// answers back into the same layout.
func (a *App) CreateQuestionnaireFromFile(ctx context.Context, name string, vendorID, dueDate *string, fileName string, r io.Reader) (*Questionnaire, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	if a.files == nil {
		return nil, errors.New("create questionnaire from file: no file store configured")
	}
	data, err := readAllLimited(r, maxUploadQuestions)
	if err != nil {
		return nil, err
	}
	pf, err := parseQuestionFile(fileName, data)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(name) == "" {
		name = strings.TrimSuffix(strings.TrimSuffix(fileName, ".csv"), ".xlsx")
	}
	now := a.Now()
	ve := NewValidationError()
	q := newQuestionnaire(name, vendorID, dueDate, now, ve)
	q.FileName, q.FileType, q.Layout, q.Questions = Ptr(fileName), Ptr(pf.fileType), pf.layout, pf.questions
	finishQuestions(q, now)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	blob, err := a.files.Put(ctx, bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("store questionnaire file: %w", err)
	}
	q.FileSHA256 = blob.SHA256
	if err := a.insertQuestionnaire(ctx, p, q, ve); err != nil {
		return nil, fmt.Errorf("create questionnaire: %w", err)
	}
	return q, nil
}

// GetQuestionnaire returns a questionnaire with its questions.
func (a *App) GetQuestionnaire(ctx context.Context, id string) (*Questionnaire, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := staffRead(p); err != nil {
		return nil, err
	}
	return a.store.GetQuestionnaire(ctx, p.OrgID, id, true)
}

// ListQuestionnaires lists questionnaires (without their questions), newest first.
func (a *App) ListQuestionnaires(ctx context.Context, f QuestionnaireFilter) (List[Questionnaire], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Questionnaire]{}, err
	}
	if err := staffRead(p); err != nil {
		return List[Questionnaire]{}, err
	}
	ve := NewValidationError()
	oneOf(ve, "status", f.Status, []string{QuestionnaireDraft, QuestionnaireSent, QuestionnaireSubmitted})
	oneOf(ve, "direction", f.Direction, []string{DirectionOutgoing, DirectionIncoming})
	if err := ve.Err(); err != nil {
		return List[Questionnaire]{}, err
	}
	return a.store.ListQuestionnaires(ctx, p.OrgID, f)
}

// DeleteQuestionnaire removes a questionnaire, its questions and links.
func (a *App) DeleteQuestionnaire(ctx context.Context, id string) error {
	return deleteRecorded(ctx, a, "questionnaire", id, func(ctx context.Context, orgID, id string) (*Questionnaire, error) {
		return a.store.GetQuestionnaire(ctx, orgID, id, false)
	}, a.store.DeleteQuestionnaire)
}

// SendQuestionnaire issues a new fill link to the questionnaire's vendor
// (replacing any earlier link) and marks the questionnaire sent. The token
// is returned once.
func (a *App) SendQuestionnaire(ctx context.Context, id string, in QuestionnaireSend) (*SentLink, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	days := defaultLinkDays
	ve := NewValidationError()
	if in.ExpiresInDays != nil {
		days = *in.ExpiresInDays
		if days < 1 || days > maxLinkDays {
			ve.Add("expiresInDays", CodeInvalid, days, fmt.Sprintf("expiresInDays must be from 1 to %d", maxLinkDays))
		}
	}
	now := a.Now()
	token := "qt_" + RandomToken(32)
	var out *SentLink
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetQuestionnaire(ctx, p.OrgID, id, false)
		if err != nil {
			return err
		}
		q := *before
		if in.VendorID != nil {
			q.VendorID = Ptr(strings.TrimSpace(*in.VendorID))
		}
		if q.VendorID == nil {
			ve.Add("vendorId", CodeRequired, nil, "vendorId is required: the questionnaire has no vendor")
		}
		if _, err := a.checkVendor(ctx, p.OrgID, q.VendorID, ve); err != nil {
			return err
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if q.Status == QuestionnaireSubmitted {
			return Errorf(ErrConflict, "the questionnaire has already been submitted")
		}
		q.Direction, q.Status, q.SentAt, q.UpdatedAt = DirectionOutgoing, QuestionnaireSent, &now, now
		if err := a.store.RevokeQuestionnaireLinks(ctx, p.OrgID, id, now); err != nil {
			return err
		}
		l := &QuestionnaireLink{ID: NewID(PrefixQuestionnaireLink), OrganizationID: p.OrgID, QuestionnaireID: id,
			VendorID: *q.VendorID, TokenHash: HashToken(token), CSRFSecret: RandomToken(20),
			ExpiresAt: now.Add(time.Duration(days) * 24 * time.Hour), CreatedAt: now}
		if err := a.store.CreateQuestionnaireLink(ctx, l); err != nil {
			return err
		}
		if err := a.store.UpdateQuestionnaire(ctx, p.OrgID, &q); err != nil {
			return err
		}
		out = &SentLink{Questionnaire: &q, Token: token, Path: "/vendor-questionnaire/" + token, ExpiresAt: l.ExpiresAt}
		return a.record(ctx, Mutation{Action: "sent", ResourceType: "questionnaire", ResourceID: id, Before: before, After: &q})
	})
	if err != nil {
		return nil, fmt.Errorf("send questionnaire %s: %w", id, err)
	}
	return out, nil
}

// applyAnswers sets answers on the questions; ve names bad entries.
func (a *App) applyAnswers(q *Questionnaire, in []AnswerInput, now time.Time, ve *ValidationError) []Question {
	byID := map[string]int{}
	for i, qq := range q.Questions {
		byID[qq.ID] = i
	}
	var changed []Question
	for i, ai := range in {
		f := fmt.Sprintf("answers[%d]", i)
		idx, ok := byID[ai.QuestionID]
		if !ok {
			ve.Add(f+".questionId", CodeUnknownReference, ai.QuestionID, f+".questionId must be a question of this questionnaire")
			continue
		}
		qq := &q.Questions[idx]
		if ai.Answer.Set {
			qq.Answer = nil
			if s := strings.TrimSpace(ai.Answer.Value); !ai.Answer.Null && s != "" {
				maxLen(ve, f+".answer", s, maxAnswerLength)
				qq.Answer = &s
			}
			qq.Status, qq.Confidence, qq.Source, qq.Draft = AnswerManual, nil, nil, nil
			if qq.Answer == nil {
				qq.Status = AnswerUntouched
			}
		}
		if ai.Comment.Set {
			qq.Comment = nil
			if s := strings.TrimSpace(ai.Comment.Value); !ai.Comment.Null && s != "" {
				maxLen(ve, f+".comment", s, maxAnswerLength)
				qq.Comment = &s
			}
		}
		qq.UpdatedAt = now
		changed = append(changed, *qq)
	}
	return changed
}

func countAnswered(q *Questionnaire) {
	q.AnsweredQuestions = 0
	for _, qq := range q.Questions {
		if qq.Answer != nil {
			q.AnsweredQuestions++
		}
	}
}

// submit marks q submitted, raises vendor.questionnaire.submitted for a
// vendor's questionnaire and moves the vendor from not_assessed to
// in_progress, all in the caller's transaction.
func (a *App) submit(ctx context.Context, orgID string, q *Questionnaire, now time.Time) error {
	if q.Status == QuestionnaireSubmitted {
		return Errorf(ErrConflict, "the questionnaire has already been submitted")
	}
	prev := q.Status
	q.Status, q.SubmittedAt = QuestionnaireSubmitted, &now
	var events []Event
	if q.VendorID != nil {
		v, err := a.store.GetVendor(ctx, orgID, *q.VendorID)
		if err != nil {
			return fmt.Errorf("vendor of questionnaire %s: %w", q.ID, err)
		}
		if v.Status == "not_assessed" {
			after := *v
			after.Status, after.UpdatedAt = "in_progress", now
			if err := a.store.UpdateVendor(ctx, orgID, &after); err != nil {
				return err
			}
			if err := a.record(ctx, Mutation{Action: "updated", ResourceType: "vendor", ResourceID: v.ID, Before: v, After: &after,
				Events: []Event{ResourceEvent("vendor", "updated", &after)}}); err != nil {
				return err
			}
		}
		events = append(events, Event{Type: EventQuestionnaireSubmitted, Data: SubmittedEventData{
			VendorID: v.ID, VendorName: v.Name, QuestionnaireID: q.ID, SubmittedAt: now}})
	}
	return a.record(ctx, Mutation{Action: "submitted", ResourceType: "questionnaire", ResourceID: q.ID,
		Before: map[string]any{"status": prev}, After: map[string]any{"status": q.Status, "submittedAt": now}, Events: events})
}

// FillQuestionnaire records answers entered internally and, with submit,
// submits the questionnaire.
func (a *App) FillQuestionnaire(ctx context.Context, id string, in QuestionnaireFill) (*Questionnaire, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	var out *Questionnaire
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		q, err := a.store.GetQuestionnaire(ctx, p.OrgID, id, true)
		if err != nil {
			return err
		}
		ve := NewValidationError()
		changed := a.applyAnswers(q, in.Answers, now, ve)
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.UpdateQuestions(ctx, p.OrgID, changed); err != nil {
			return err
		}
		if len(changed) > 0 {
			if err := a.record(ctx, Mutation{Action: "answered", ResourceType: "questionnaire", ResourceID: id,
				After: map[string]any{"answers": len(changed)}}); err != nil {
				return err
			}
		}
		q.UpdatedAt = now
		if in.Submit {
			if err := a.submit(ctx, p.OrgID, q, now); err != nil {
				return err
			}
			if err := a.store.RevokeQuestionnaireLinks(ctx, p.OrgID, id, now); err != nil {
				return err
			}
		}
		countAnswered(q)
		out = q
		return a.store.UpdateQuestionnaire(ctx, p.OrgID, q)
	})
	if err != nil {
		return nil, fmt.Errorf("fill questionnaire %s: %w", id, err)
	}
	return out, nil
}

// linkState checks a link for use at now.
func linkState(l *QuestionnaireLink, now time.Time) error {
	switch {
	case l.UsedAt != nil || l.RevokedAt != nil:
		return ErrLinkUsed
	case !now.Before(l.ExpiresAt):
		return ErrLinkExpired
	}
	return nil
}

// OpenQuestionnaireLink resolves a fill link for the public page. It needs
// no principal: the token is the credential.
func (a *App) OpenQuestionnaireLink(ctx context.Context, token string) (*LinkView, error) {
	l, err := a.store.GetQuestionnaireLink(ctx, HashToken(token))
	if err != nil {
		return nil, err
	}
	if err := linkState(l, a.Now()); err != nil {
		return nil, err
	}
	q, err := a.store.GetQuestionnaire(ctx, l.OrganizationID, l.QuestionnaireID, true)
	if err != nil {
		return nil, err
	}
	o, err := a.store.GetOrganization(ctx, l.OrganizationID)
	if err != nil {
		return nil, err
	}
	v, err := a.store.GetVendor(ctx, l.OrganizationID, l.VendorID)
	if err != nil {
		return nil, err
	}
	name := o.Name
	if o.Branding.DisplayName != nil && *o.Branding.DisplayName != "" {
		name = *o.Branding.DisplayName
	}
	// Model drafts are internal: a vendor filling the form never sees them.
	for i := range q.Questions {
		q.Questions[i].Draft = nil
	}
	return &LinkView{Link: l, Questionnaire: q, OrganizationName: name, VendorName: v.Name, Branding: o.Branding}, nil
}

// CheckLinkCSRF compares a form's token with the link's, in constant time.
func CheckLinkCSRF(l *QuestionnaireLink, got string) bool {
	return subtle.ConstantTimeCompare([]byte(l.CSRFSecret), []byte(got)) == 1
}

// FillByLink saves the vendor's answers given through the link; with
// submit it submits the questionnaire and uses the link up. csrf is the
// form token of the HTML page; nil skips the check for JSON requests, which
// browsers cannot send cross-site without a preflight the appliance never
// grants.
func (a *App) FillByLink(ctx context.Context, token string, csrf *string, answers []AnswerInput, submit bool) (*Questionnaire, error) {
	now := a.Now()
	var out *Questionnaire
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		l, err := a.store.GetQuestionnaireLink(ctx, HashToken(token))
		if err != nil {
			return err
		}
		if err := linkState(l, now); err != nil {
			return err
		}
		if csrf != nil && !CheckLinkCSRF(l, *csrf) {
			return ErrBadCSRF
		}
		// The vendor acts through the link, for the organization: the
		// audit trail names the link.
		ctx = WithPrincipal(ctx, &Principal{OrgID: l.OrganizationID, Role: RoleOwner, AuthType: AuthVendorLink, LinkID: l.ID})
		q, err := a.store.GetQuestionnaire(ctx, l.OrganizationID, l.QuestionnaireID, true)
		if err != nil {
			return err
		}
		ve := NewValidationError()
		changed := a.applyAnswers(q, answers, now, ve)
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.UpdateQuestions(ctx, l.OrganizationID, changed); err != nil {
			return err
		}
		if err := a.record(ctx, Mutation{Action: "answered", ResourceType: "questionnaire", ResourceID: q.ID,
			After: map[string]any{"answers": len(changed), "via": "link", "linkId": l.ID}}); err != nil {
			return err
		}
		q.UpdatedAt = now
		if submit {
			if err := a.submit(ctx, l.OrganizationID, q, now); err != nil {
				return err
			}
			l.UsedAt = &now
			if err := a.store.UpdateQuestionnaireLink(ctx, l); err != nil {
				return err
			}
		}
		countAnswered(q)
		out = q
		return a.store.UpdateQuestionnaire(ctx, l.OrganizationID, q)
	})
	if err != nil {
		return nil, fmt.Errorf("fill questionnaire by link: %w", err)
	}
	for i := range out.Questions {
		out.Questions[i].Draft = nil
	}
	return out, nil
}

// AutoAnswer answers each question with the best knowledge-base answer
// whose confidence reaches the threshold, citing its source; the rest are
// left for a person. Manual answers are kept unless overwrite is set.
func (a *App) AutoAnswer(ctx context.Context, id string, in AutoAnswerInput) (*AutoAnswerResult, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	minConf := DefaultMinConfidence
	if in.MinConfidence != nil {
		minConf = *in.MinConfidence
		if minConf < 0 || minConf > 1 {
			return nil, Invalid("minConfidence", CodeInvalid, minConf, "minConfidence must be from 0 to 1")
		}
	}
	start := time.Now()
	if err := a.syncKnowledgeSources(ctx, p.OrgID); err != nil {
		return nil, err
	}
	q, err := a.store.GetQuestionnaire(ctx, p.OrgID, id, true)
	if err != nil {
		return nil, err
	}
	res := &AutoAnswerResult{MinConfidence: minConf}
	var todo []int
	var texts []string
	for i, qq := range q.Questions {
		if qq.Status == AnswerManual && !in.Overwrite {
			res.Skipped++
			continue
		}
		todo = append(todo, i)
		texts = append(texts, qq.Question)
	}
	best, err := a.bestAnswers(ctx, p.OrgID, texts, in.Progress)
	if err != nil {
		return nil, fmt.Errorf("auto-answer questionnaire %s: %w", id, err)
	}
	// The questions the knowledge base leaves open may get a model draft.
	var open []int
	for k, i := range todo {
		if h := best[k]; h == nil || h.Confidence < minConf {
			open = append(open, i)
		}
	}
	var drafts map[int]*AnswerDraft
	if in.Draft == nil || *in.Draft {
		drafts, res.Notice = a.draftAnswers(ctx, q.Questions, open)
	}
	now := a.Now()
	read := map[string]time.Time{}
	changed := map[string]Question{}
	for k, i := range todo {
		qq := q.Questions[i]
		read[qq.ID] = qq.UpdatedAt
		h := best[k]
		if h != nil && h.Confidence >= minConf {
			qq.Answer, qq.Status, qq.Confidence = Ptr(h.Answer), AnswerGenerated, Ptr(h.Confidence)
			qq.Source = &AnswerSource{Type: h.SourceType, ID: h.SourceID, Name: h.SourceName}
			qq.Draft = nil
		} else {
			qq.Answer, qq.Status, qq.Source, qq.Confidence = nil, AnswerUntouched, nil, nil
			if h != nil {
				qq.Confidence = Ptr(h.Confidence)
			}
			if d, ok := drafts[i]; ok {
				qq.Draft = d
				res.Drafted++
			}
		}
		qq.UpdatedAt = now
		changed[qq.ID] = qq
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		// Answers given while the matching ran win over generated ones.
		cur, err := a.store.GetQuestionnaire(ctx, p.OrgID, id, true)
		if err != nil {
			return err
		}
		res.Answered, res.Unanswered = 0, 0
		var write []Question
		for i, qq := range cur.Questions {
			c, ok := changed[qq.ID]
			if !ok || !qq.UpdatedAt.Equal(read[qq.ID]) {
				continue
			}
			cur.Questions[i] = c
			write = append(write, c)
			if c.Answer != nil {
				res.Answered++
			} else {
				res.Unanswered++
			}
		}
		if err := a.store.UpdateQuestions(ctx, p.OrgID, write); err != nil {
			return err
		}
		cur.UpdatedAt = now
		countAnswered(cur)
		if err := a.store.UpdateQuestionnaire(ctx, p.OrgID, cur); err != nil {
			return err
		}
		q = cur
		return a.record(ctx, Mutation{Action: "auto_answered", ResourceType: "questionnaire", ResourceID: id,
			After: map[string]any{"answered": res.Answered, "unanswered": res.Unanswered, "minConfidence": minConf, "drafted": res.Drafted}})
	})
	if err != nil {
		return nil, fmt.Errorf("auto-answer questionnaire %s: %w", id, err)
	}
	res.Questionnaire = q
	res.DurationMs = time.Since(start).Milliseconds()
	return res, nil
}

// ExportQuestionnaire renders the questionnaire as CSV or XLSX. An uploaded
// questionnaire keeps its layout: answers go into its answer column (added
// when it had none) and every other cell stays as uploaded.
func (a *App) ExportQuestionnaire(ctx context.Context, id, format string) (*ExportFile, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := staffRead(p); err != nil {
		return nil, err
	}
	if format == "" {
		format = FormatXLSX
	}
	if format != FormatCSV && format != FormatXLSX {
		return nil, Invalid("format", CodeInvalidEnum, format, "format must be csv or xlsx")
	}
	q, err := a.store.GetQuestionnaire(ctx, p.OrgID, id, true)
	if err != nil {
		return nil, err
	}
	var original []byte
	if q.FileSHA256 != "" && a.files != nil {
		f, err := a.files.Open(ctx, q.FileSHA256)
		if err != nil {
			return nil, fmt.Errorf("open questionnaire file: %w", err)
		}
		original, err = io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read questionnaire file: %w", err)
		}
	}
	return renderExport(q, original, format)
}
