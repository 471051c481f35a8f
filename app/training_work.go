package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
)

func encodeTrainingContent(c trainingContent) ([]byte, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode training content: %w", err)
	}
	return raw, nil
}

// decodeTrainingContent fills a custom module's sections, quiz (with its
// answer key) and controls from its stored JSON.
func decodeTrainingContent(m *TrainingModule, raw []byte) error {
	var c trainingContent
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("decode training module %s: %w", m.ID, err)
	}
	m.Sections = c.Sections
	if m.Sections == nil {
		m.Sections = []TrainingSection{}
	}
	m.Quiz = make([]TrainingQuestion, len(c.Quiz))
	for i, q := range c.Quiz {
		m.Quiz[i] = TrainingQuestion(q)
	}
	m.ControlIDs = c.ControlIDs
	if m.ControlIDs == nil {
		m.ControlIDs = []string{}
	}
	if m.Controls == nil {
		m.Controls = []TrainingControlRef{}
	}
	return nil
}

// trainingControls returns the organization's controls a module evidences:
// the controls serving the mapped built-in requirements of the frameworks
// the organization enabled, or a custom module's own control ids.
func (a *App) trainingControls(ctx context.Context, orgID string, m *TrainingModule) ([]string, error) {
	if !m.Builtin {
		return m.ControlIDs, nil
	}
	reqs, err := a.store.OrgRequirementControls(ctx, orgID)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, ref := range m.Controls {
		id, ok := ResolveTrainingControl(ref)
		if !ok {
			continue
		}
		for _, c := range reqs[id] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// refreshTrainingEvidence replaces the evidence a required module keeps on
// each control it maps to: one text file summarising who completed the
// module and when, attached to a task "Training: <module>" on the control.
// The task is done while every assigned person holds a current completion,
// so the control can count as implemented; the evidence expires a year
// after the oldest completion it lists. It runs in the caller's
// transaction.
func (a *App) refreshTrainingEvidence(ctx context.Context, orgID, moduleID string) error {
	if a.files == nil {
		return nil
	}
	rules, err := a.store.ListTrainingRules(ctx, orgID)
	if err != nil {
		return err
	}
	required := false
	for _, r := range rules {
		required = required || r.ModuleID == moduleID
	}
	if !required {
		return nil
	}
	m, err := a.trainingModule(ctx, orgID, moduleID)
	if err != nil {
		return err
	}
	controls, err := a.trainingControls(ctx, orgID, m)
	if err != nil || len(controls) == 0 {
		return err
	}
	now := a.Now()
	assigned, err := a.store.ListTrainingAssignments(ctx, orgID, TrainingAssignmentFilter{ModuleID: moduleID})
	if err != nil {
		return err
	}
	done, err := a.store.ListTrainingCompletions(ctx, orgID, TrainingCompletionFilter{ModuleID: moduleID})
	if err != nil {
		return err
	}
	latest := map[string]TrainingCompletion{}
	for _, c := range done.Items {
		if c.current(now) {
			latest[c.PersonID] = c // the list is oldest first
		}
	}
	if len(latest) == 0 {
		return nil
	}
	covered := 0
	for _, as := range assigned.Items {
		if _, ok := latest[as.PersonID]; ok {
			covered++
		}
	}
	people := make([]TrainingCompletion, 0, len(latest))
	for _, c := range latest {
		people = append(people, c)
	}
	sort.Slice(people, func(i, j int) bool { return people[i].PersonName < people[j].PersonName })
	oldest := people[0].CompletedAt
	var b strings.Builder
	fmt.Fprintf(&b, "Training completion summary\nModule: %s (%s), version %d\nGenerated: %s\nCoverage: %d of %d assigned people hold a current completion\n\n",
		m.Title, m.ID, m.Version, now.Format(time.RFC3339), covered, len(assigned.Items))
	b.WriteString("person\tperson id\tcompleted at\tversion\tresult\tverification code\n")
	for _, c := range people {
		if c.CompletedAt.Before(oldest) {
			oldest = c.CompletedAt
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%d\t%s\t%s\n", c.PersonName, c.PersonID, c.CompletedAt.Format(time.RFC3339), c.ModuleVersion, c.Status, deref(c.VerificationCode))
	}
	blob, err := a.files.Put(ctx, strings.NewReader(b.String()))
	if err != nil {
		return err
	}
	expires := oldest.Add(TrainingValidity)
	full := len(assigned.Items) > 0 && covered == len(assigned.Items)
	for _, controlID := range controls {
		if _, err := a.store.GetControl(ctx, orgID, controlID); errors.Is(err, ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		link, err := a.store.GetTrainingEvidenceLink(ctx, orgID, moduleID, controlID)
		if errors.Is(err, ErrNotFound) {
			link = &TrainingEvidenceLink{ModuleID: moduleID, ControlID: controlID}
		} else if err != nil {
			return err
		}
		var task *Task
		if link.TaskID != "" {
			task, err = a.store.GetTask(ctx, orgID, link.TaskID)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		if task == nil {
			task = &Task{ID: NewID(PrefixTask), Title: "Training: " + m.Title, ControlID: &controlID, Status: TaskInProgress,
				Description: "Kept by the training programme: the evidence is the completion summary of the required module " + m.ID +
					". The task is done while every assigned person holds a current completion.", CreatedAt: now, UpdatedAt: now}
			task.SeriesID = task.ID
			if err := a.store.CreateTask(ctx, orgID, task); err != nil {
				return err
			}
		}
		if link.EvidenceID != nil {
			if err := a.store.DeleteEvidence(ctx, orgID, *link.EvidenceID); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		ev := &Evidence{ID: NewID(PrefixEvidence), ControlID: controlID, TaskID: &task.ID, Filename: "training-" + m.ID + "-" + now.Format("2006-01-02") + ".txt",
			ContentType: "text/plain; charset=utf-8", Size: blob.Size, SHA256: blob.SHA256,
			Description: fmt.Sprintf("Training completion summary: %s, %d of %d assigned people current", m.Title, covered, len(assigned.Items)),
			ExpiresAt:   &expires, UploadedBy: "system", UploadedAt: now}
		if err := a.store.CreateEvidence(ctx, orgID, ev); err != nil {
			return err
		}
		want := TaskInProgress
		if full {
			want = TaskDone
		}
		if task.Status != want {
			task.Status, task.UpdatedAt = want, now
			task.CompletedAt = nil
			if want == TaskDone {
				task.CompletedAt = &now
			}
			if err := a.store.UpdateTask(ctx, orgID, task); err != nil {
				return err
			}
		}
		link.TaskID, link.EvidenceID, link.RefreshedAt = task.ID, &ev.ID, now
		if err := a.store.SaveTrainingEvidenceLink(ctx, orgID, link); err != nil {
			return err
		}
		if err := a.markInProgress(ctx, orgID, controlID); err != nil {
			return err
		}
		if err := a.reevaluateControl(ctx, orgID, controlID); err != nil {
			return err
		}
	}
	return a.record(ctx, Mutation{Action: "refreshed", ResourceType: "training_evidence", ResourceID: moduleID,
		After: map[string]any{"controls": controls, "covered": covered, "assigned": len(assigned.Items), "expiresAt": expires}})
}

// RunTrainingSchedule is the scheduler's training job, over every
// organization: it reopens required modules whose completion lapses within
// 30 days (yearly renewal), marks assignments past their due date overdue,
// and raises training.reminder for open assignments due within 7 days (at
// most weekly per assignment). It returns how many assignments it changed.
// Reminders are events: webhooks, the person's "my work" page, and the
// notify job mails them to the person (training_due).
func (a *App) RunTrainingSchedule(ctx context.Context) (int, error) {
	orgs, err := a.store.ListOrganizations(ctx)
	if err != nil {
		return 0, fmt.Errorf("training schedule: %w", err)
	}
	n := 0
	for _, o := range orgs {
		k, err := a.trainingScheduleOrg(SystemContext(ctx, o.ID), o.ID)
		n += k
		if err != nil {
			return n, fmt.Errorf("training schedule %s: %w", o.ID, err)
		}
	}
	return n, nil
}

func (a *App) trainingScheduleOrg(ctx context.Context, orgID string) (int, error) {
	now := a.Now()
	today := now.Format("2006-01-02")
	l, err := a.store.ListTrainingAssignments(ctx, orgID, TrainingAssignmentFilter{})
	if err != nil {
		return 0, err
	}
	if err := a.titleAssignments(ctx, orgID, l.Items); err != nil {
		return 0, err
	}
	n := 0
	renewed := map[string]bool{}
	for _, as := range l.Items {
		as := as
		var ev Event
		action := ""
		switch {
		case as.Status == TrainingCompleted && as.Required && as.CompletedAt != nil && !now.Before(as.CompletedAt.Add(TrainingValidity-trainingRenewalLead)):
			due := as.CompletedAt.Add(TrainingValidity).Format("2006-01-02")
			as.Status, as.DueDate, as.CompletedAt, as.CompletionID, as.RemindedAt = TrainingAssigned, &due, nil, nil, nil
			as.Source, as.AssignedBy, as.AssignedAt = "renewal", "system", now
			action, ev = "renewed", Event{Type: EventTrainingAssigned, Data: &as}
			renewed[as.ModuleID] = true
		case as.Status == TrainingAssigned && as.DueDate != nil && *as.DueDate < today:
			as.Status = TrainingOverdue
			action, ev = "overdue", Event{Type: EventTrainingOverdue, Data: &as}
		case as.Status != TrainingCompleted && as.DueDate != nil && *as.DueDate <= now.Add(trainingReminderWindow).Format("2006-01-02") &&
			(as.RemindedAt == nil || !now.Before(as.RemindedAt.Add(trainingReminderWindow))):
			as.RemindedAt = &now
			action, ev = "reminded", Event{Type: EventTrainingReminder, Data: &as}
		default:
			continue
		}
		as.UpdatedAt = now
		err := a.store.InTx(ctx, func(ctx context.Context) error {
			if err := a.store.UpdateTrainingAssignment(ctx, orgID, &as); err != nil {
				return err
			}
			return a.record(ctx, Mutation{Action: action, ResourceType: "training_assignment", ResourceID: as.ID, After: &as, Events: []Event{ev}})
		})
		if err != nil {
			return n, err
		}
		n++
	}
	for id := range renewed {
		if err := a.store.InTx(ctx, func(ctx context.Context) error { return a.refreshTrainingEvidence(ctx, orgID, id) }); err != nil {
			return n, err
		}
	}
	return n, nil
}

// TrainingModuleStats is one module's completion figures in an organization.
type TrainingModuleStats struct {
	ModuleID       string `json:"moduleId"`
	Title          string `json:"title"`
	Required       bool   `json:"required"`
	Assigned       int    `json:"assigned"`
	Completed      int    `json:"completed"`
	Overdue        int    `json:"overdue"`
	CompletionRate int    `json:"completionRate"`
}

// TrainingOverview reports completion rates by module (assigned modules
// only) for owners, admins and auditors.
func (a *App) TrainingOverview(ctx context.Context) ([]TrainingModuleStats, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() {
		return nil, Errorf(ErrForbidden, "the training overview is for owners, admins and auditors")
	}
	mods, err := a.ListTrainingModules(ctx)
	if err != nil {
		return nil, err
	}
	l, err := a.store.ListTrainingAssignments(ctx, p.OrgID, TrainingAssignmentFilter{})
	if err != nil {
		return nil, err
	}
	by := map[string]*TrainingModuleStats{}
	for _, as := range l.Items {
		s := by[as.ModuleID]
		if s == nil {
			s = &TrainingModuleStats{ModuleID: as.ModuleID, Title: as.ModuleID}
			by[as.ModuleID] = s
		}
		s.Assigned++
		switch as.Status {
		case TrainingCompleted:
			s.Completed++
		case TrainingOverdue:
			s.Overdue++
		}
	}
	out := []TrainingModuleStats{}
	for _, m := range mods {
		s := by[m.ID]
		if s == nil {
			continue
		}
		s.Title, s.Required = m.Title, len(m.Required) > 0
		s.CompletionRate = s.Completed * 100 / s.Assigned
		out = append(out, *s)
	}
	return out, nil
}

// WorkPolicy is a published policy the person has not acknowledged yet.
type WorkPolicy struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Version          int    `json:"version"`
	IsRequiredToSign bool   `json:"isRequiredToSign"`
}

// WorkTrainingProgress counts a person's training assignments.
type WorkTrainingProgress struct {
	Assigned  int `json:"assigned"`
	Completed int `json:"completed"`
	Overdue   int `json:"overdue"`
}

// Work is what is asked of one person: policies to acknowledge, training,
// open tasks and their devices.
type Work struct {
	Person           *Person              `json:"person"`
	Policies         []WorkPolicy         `json:"policies"`
	Training         []TrainingAssignment `json:"training"`
	TrainingProgress WorkTrainingProgress `json:"trainingProgress"`
	Tasks            []Task               `json:"tasks"`
	Devices          []Device             `json:"devices"`
	// MailConfigured is false: reminders reach people through this page and
	// webhooks, not e-mail.
	MailConfigured bool `json:"mailConfigured"`
}

// MyWork returns what is asked of the signed-in person.
func (a *App) MyWork(ctx context.Context) (*Work, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := actingPerson(p, "my work"); err != nil {
		return nil, err
	}
	return a.work(ctx, p.OrgID, p.UserID)
}

// PersonWork returns what is asked of one person: for owners, admins and
// auditors, or the person themself.
func (a *App) PersonWork(ctx context.Context, personID string) (*Work, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() && personID != p.UserID {
		return nil, ErrNotFound
	}
	return a.work(ctx, p.OrgID, personID)
}

func (a *App) work(ctx context.Context, orgID, personID string) (*Work, error) {
	per, err := a.store.GetPerson(ctx, orgID, personID)
	if err != nil {
		return nil, err
	}
	all := Page{Page: 1, PerPage: MaxPerPage}
	w := &Work{Person: per, Policies: []WorkPolicy{}, Training: []TrainingAssignment{}, Tasks: []Task{}, Devices: []Device{}}
	no := false
	pols, err := a.store.ListPolicies(ctx, orgID, PolicyFilter{Status: "published", Acknowledged: &no, AckBy: personID,
		ExcludeContent: true, Today: policyToday(a.Now()), Page: all})
	if err != nil {
		return nil, fmt.Errorf("my work: %w", err)
	}
	for _, pol := range pols.Items {
		if pol.ArchivedAt == nil {
			w.Policies = append(w.Policies, WorkPolicy{ID: pol.ID, Name: pol.Name, Version: pol.Version, IsRequiredToSign: pol.IsRequiredToSign})
		}
	}
	tr, err := a.store.ListTrainingAssignments(ctx, orgID, TrainingAssignmentFilter{PersonID: personID})
	if err != nil {
		return nil, fmt.Errorf("my work: %w", err)
	}
	if err := a.titleAssignments(ctx, orgID, tr.Items); err != nil {
		return nil, err
	}
	w.Training = tr.Items
	for _, as := range tr.Items {
		w.TrainingProgress.Assigned++
		switch as.Status {
		case TrainingCompleted:
			w.TrainingProgress.Completed++
		case TrainingOverdue:
			w.TrainingProgress.Overdue++
		}
	}
	tasks, err := a.store.ListTasks(ctx, orgID, TaskFilter{AssigneeID: personID, Page: all})
	if err != nil {
		return nil, fmt.Errorf("my work: %w", err)
	}
	for _, t := range tasks.Items {
		if t.Status != TaskDone && t.Status != TaskNotRelevant {
			w.Tasks = append(w.Tasks, t)
		}
	}
	devs, err := a.store.ListDevices(ctx, orgID, DeviceFilter{PersonID: personID, Page: all})
	if err != nil {
		return nil, fmt.Errorf("my work: %w", err)
	}
	w.Devices = devs.Items
	return w, nil
}

// renderTrainingCertificate draws a one-page landscape certificate.
func renderTrainingCertificate(c *TrainingCompletion, orgName string) ([]byte, error) {
	pdf := fpdf.New("L", "mm", "A4", "")
	// Uncompressed: one page of text, and the name stays searchable.
	pdf.SetCompression(false)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.SetMargins(20, 20, 20)
	pdf.SetAutoPageBreak(false, 10)
	pdf.AddPage()
	w, h := pdf.GetPageSize()
	pdf.SetDrawColor(11, 92, 173)
	pdf.SetLineWidth(1.2)
	pdf.Rect(10, 10, w-20, h-20, "D")
	width := w - 40
	pdf.SetY(35)
	pdf.SetFont("Helvetica", "B", 28)
	pdf.CellFormat(width, 14, tr("Certificate of completion"), "", 1, "C", false, 0, "")
	pdf.Ln(8)
	pdf.SetFont("Helvetica", "", 13)
	pdf.CellFormat(width, 8, tr("This certifies that"), "", 1, "C", false, 0, "")
	pdf.SetFont("Helvetica", "B", 22)
	pdf.CellFormat(width, 14, tr(c.PersonName), "", 1, "C", false, 0, "")
	pdf.SetFont("Helvetica", "", 13)
	verb := "has completed the training"
	if c.Status == CompletionAcknowledged {
		verb = "has completed and acknowledged the training"
	}
	pdf.CellFormat(width, 8, tr(verb), "", 1, "C", false, 0, "")
	pdf.SetFont("Helvetica", "B", 17)
	pdf.MultiCell(width, 9, tr(c.ModuleTitle), "", "C", false)
	pdf.SetFont("Helvetica", "", 12)
	detail := fmt.Sprintf("Version %d, completed on %s", c.ModuleVersion, c.CompletedAt.Format("2 January 2006"))
	if c.Score != nil {
		detail += fmt.Sprintf(", score %d%% (pass mark %d%%)", *c.Score, c.PassMark)
	}
	pdf.CellFormat(width, 8, tr(detail), "", 1, "C", false, 0, "")
	if orgName != "" {
		pdf.CellFormat(width, 8, tr("Issued by "+orgName), "", 1, "C", false, 0, "")
	}
	if c.ExpiresAt != nil {
		pdf.CellFormat(width, 8, tr("Valid until "+c.ExpiresAt.Format("2 January 2006")), "", 1, "C", false, 0, "")
	}
	pdf.SetY(h - 40)
	pdf.SetFont("Helvetica", "", 10)
	pdf.CellFormat(width, 6, tr("Verification code: "+deref(c.VerificationCode)), "", 1, "C", false, 0, "")
	pdf.SetFont("Helvetica", "", 9)
	pdf.CellFormat(width, 5, tr("Check this certificate at /verify/training/"+deref(c.VerificationCode)+" on the issuing organization's compliance appliance."), "", 1, "C", false, 0, "")
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
