package app

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
	"time"
)

// Evidence export of one task (the spec's Evidence Export group): the
// automations that collect the task's evidence with their latest runs,
// a PDF of one automation's runs, and a ZIP of the task's evidence files
// (with each run's JSON on request).

const (
	// EvidenceSummaryRuns is how many latest runs the summary shows per automation.
	EvidenceSummaryRuns = 5
	// AutomationPDFRuns is how many latest runs an automation's PDF holds.
	AutomationPDFRuns = 100
	// MaxExportFiles and MaxExportBytes bound a task's ZIP export (its
	// evidence files); MaxExportRuns bounds the run JSON files in it.
	MaxExportFiles = 2000
	MaxExportBytes = int64(2 << 30)
	MaxExportRuns  = 5000

	AutomationKindScript  = "script"
	AutomationKindBrowser = "browser"
)

// EvidenceAutomation is one automation of a task in the evidence summary.
type EvidenceAutomation struct {
	ID                string     `json:"id"`
	Kind              string     `json:"kind"` // script (task automation) or browser
	Name              string     `json:"name"`
	IsEnabled         bool       `json:"isEnabled"`
	ScheduleFrequency *string    `json:"scheduleFrequency"`
	LastRunAt         *time.Time `json:"lastRunAt"`
	LastRunStatus     *string    `json:"lastRunStatus"`
	// Verdict is the latest finished run's evaluation: pass, fail, or null
	// when no run was evaluated yet.
	Verdict    *string                 `json:"verdict"`
	Passed     int                     `json:"passed"` // among LatestRuns
	Failed     int                     `json:"failed"`
	LatestRuns []EvidenceAutomationRun `json:"latestRuns"`
}

// EvidenceAutomationRun is one run in the evidence summary and the PDF.
type EvidenceAutomationRun struct {
	ID               string     `json:"id"`
	Status           string     `json:"status"`
	Trigger          string     `json:"trigger"`
	EvaluationStatus *string    `json:"evaluationStatus"`
	EvaluationReason *string    `json:"evaluationReason"`
	Error            *string    `json:"error"`
	EvidenceIDs      []string   `json:"evidenceIds"`
	FindingID        *string    `json:"findingId"`
	CreatedAt        time.Time  `json:"createdAt"`
	FinishedAt       *time.Time `json:"finishedAt"`

	raw any
}

func scriptRunSummary(r TaskAutomationRun) EvidenceAutomationRun {
	ev := []string{}
	if r.EvidenceID != nil {
		ev = append(ev, *r.EvidenceID)
	}
	return EvidenceAutomationRun{ID: r.ID, Status: r.Status, Trigger: r.Trigger, EvaluationStatus: r.EvaluationStatus,
		EvaluationReason: r.EvaluationReason, Error: r.Error, EvidenceIDs: ev, FindingID: r.FindingID, CreatedAt: r.CreatedAt,
		FinishedAt: r.FinishedAt, raw: r}
}

func browserRunSummary(r BrowserAutomationRun) EvidenceAutomationRun {
	ev := r.EvidenceIDs
	if ev == nil {
		ev = []string{}
	}
	return EvidenceAutomationRun{ID: r.ID, Status: r.Status, Trigger: r.Trigger, EvaluationStatus: r.EvaluationStatus,
		EvaluationReason: r.EvaluationReason, Error: r.Error, EvidenceIDs: ev, FindingID: r.FindingID, CreatedAt: r.CreatedAt,
		FinishedAt: r.CompletedAt, raw: r}
}

func summarize(a *EvidenceAutomation, runs []EvidenceAutomationRun) {
	a.LatestRuns = runs
	for _, r := range runs {
		switch deref(r.EvaluationStatus) {
		case "pass":
			a.Passed++
		case "fail":
			a.Failed++
		}
		if a.Verdict == nil && r.EvaluationStatus != nil {
			a.Verdict = r.EvaluationStatus
		}
	}
}

// taskEvidenceReader checks the caller may read the task's evidence
// (employees and contractors: only their own tasks; another organization's
// task is not found).
func (a *App) taskEvidenceReader(ctx context.Context, taskID string) (*Principal, *Task, error) {
	return a.taskForAutomations(ctx, taskID, false)
}

// TaskEvidenceAutomations lists the task's automations (scripts, then
// browser automations; the latter not for employees and contractors, who
// may not read browser automations) with their latest runs and verdicts.
func (a *App) TaskEvidenceAutomations(ctx context.Context, taskID string) ([]EvidenceAutomation, error) {
	p, _, err := a.taskEvidenceReader(ctx, taskID)
	if err != nil {
		return nil, err
	}
	out := []EvidenceAutomation{}
	autos, err := a.store.ListTaskAutomations(ctx, p.OrgID, taskID, Page{Page: 1, PerPage: MaxPerPage})
	if err != nil {
		return nil, err
	}
	for _, t := range autos.Items {
		runs, err := a.scriptRuns(ctx, p.OrgID, taskID, t.ID, EvidenceSummaryRuns)
		if err != nil {
			return nil, err
		}
		ea := EvidenceAutomation{ID: t.ID, Kind: AutomationKindScript, Name: t.Name, IsEnabled: t.IsEnabled,
			ScheduleFrequency: t.ScheduleFrequency, LastRunAt: t.LastRunAt, LastRunStatus: t.LastRunStatus}
		summarize(&ea, runs)
		out = append(out, ea)
	}
	if p.SeesOnlyAssigned() {
		return out, nil
	}
	bas, err := a.store.ListBrowserAutomations(ctx, p.OrgID, taskID)
	if err != nil {
		return nil, err
	}
	for _, b := range bas {
		runs, err := a.browserRuns(ctx, p.OrgID, b.ID, EvidenceSummaryRuns)
		if err != nil {
			return nil, err
		}
		ea := EvidenceAutomation{ID: b.ID, Kind: AutomationKindBrowser, Name: b.Name, IsEnabled: b.IsEnabled,
			ScheduleFrequency: b.ScheduleFrequency, LastRunAt: b.LastRunAt, LastRunStatus: b.LastRunStatus}
		summarize(&ea, runs)
		out = append(out, ea)
	}
	return out, nil
}

func (a *App) scriptRuns(ctx context.Context, orgID, taskID, automationID string, limit int) ([]EvidenceAutomationRun, error) {
	out := []EvidenceAutomationRun{}
	for page := 1; len(out) < limit; page++ {
		l, err := a.store.ListAutomationRuns(ctx, orgID, AutomationRunFilter{TaskID: taskID, AutomationID: automationID,
			Page: Page{Page: page, PerPage: min(MaxPerPage, limit)}})
		if err != nil {
			return nil, err
		}
		for _, r := range l.Items {
			if len(out) < limit {
				out = append(out, scriptRunSummary(r))
			}
		}
		if len(l.Items) < min(MaxPerPage, limit) {
			break
		}
	}
	return out, nil
}

func (a *App) browserRuns(ctx context.Context, orgID, automationID string, limit int) ([]EvidenceAutomationRun, error) {
	runs, err := a.store.ListBrowserRuns(ctx, orgID, automationID, "", limit)
	if err != nil {
		return nil, err
	}
	out := make([]EvidenceAutomationRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, browserRunSummary(r))
	}
	return out, nil
}

// taskAutomation finds one automation of the task, a script (tau_) or a
// browser automation (bau_), with its latest runs.
func (a *App) taskAutomation(ctx context.Context, p *Principal, taskID, automationID string, limit int) (*EvidenceAutomation, error) {
	switch {
	case strings.HasPrefix(automationID, PrefixTaskAutomation+"_"):
		t, err := a.store.GetTaskAutomation(ctx, p.OrgID, taskID, automationID)
		if err != nil {
			return nil, err
		}
		runs, err := a.scriptRuns(ctx, p.OrgID, taskID, t.ID, limit)
		if err != nil {
			return nil, err
		}
		ea := &EvidenceAutomation{ID: t.ID, Kind: AutomationKindScript, Name: t.Name, IsEnabled: t.IsEnabled,
			ScheduleFrequency: t.ScheduleFrequency, LastRunAt: t.LastRunAt, LastRunStatus: t.LastRunStatus}
		summarize(ea, runs)
		return ea, nil
	case strings.HasPrefix(automationID, PrefixBrowserAutomation+"_") && !p.SeesOnlyAssigned():
		b, err := a.store.GetBrowserAutomation(ctx, p.OrgID, automationID)
		if err != nil {
			return nil, err
		}
		if b.TaskID != taskID {
			return nil, ErrNotFound
		}
		runs, err := a.browserRuns(ctx, p.OrgID, b.ID, limit)
		if err != nil {
			return nil, err
		}
		ea := &EvidenceAutomation{ID: b.ID, Kind: AutomationKindBrowser, Name: b.Name, IsEnabled: b.IsEnabled,
			ScheduleFrequency: b.ScheduleFrequency, LastRunAt: b.LastRunAt, LastRunStatus: b.LastRunStatus}
		summarize(ea, runs)
		return ea, nil
	}
	return nil, ErrNotFound
}

// AutomationRunsPDF renders one automation of the task with its latest
// runs (at most AutomationPDFRuns) and their verdicts as a PDF.
func (a *App) AutomationRunsPDF(ctx context.Context, taskID, automationID string) (*ReportPDF, error) {
	p, t, err := a.taskEvidenceReader(ctx, taskID)
	if err != nil {
		return nil, err
	}
	au, err := a.taskAutomation(ctx, p, taskID, automationID, AutomationPDFRuns)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	pdf, tr := newReportPDF(func(page int) string {
		return fmt.Sprintf("Automation %s | generated %s | page %d of {nb}", au.ID, now.Format("2006-01-02 15:04 UTC"), page)
	})
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 16)
	pdf.MultiCell(0, 8, tr("Automation evidence: "+au.Name), "", "L", false)
	line := pdfFieldLine(pdf, tr)
	kind := "Script (task automation)"
	if au.Kind == AutomationKindBrowser {
		kind = "Browser automation"
	}
	line("Task", t.Title+" ("+t.ID+")")
	line("Automation", au.ID+", "+kind)
	sched := "by hand"
	if au.ScheduleFrequency != nil {
		sched = *au.ScheduleFrequency
	}
	if !au.IsEnabled {
		sched += " (disabled)"
	}
	line("Schedule", sched)
	line("Runs", fmt.Sprintf("%d shown (the latest, at most %d): %d passed, %d failed", len(au.LatestRuns), AutomationPDFRuns, au.Passed, au.Failed))
	if au.Verdict != nil {
		line("Latest verdict", *au.Verdict)
	}
	pdf.Ln(3)
	pdf.SetFont("Helvetica", "B", 12)
	pdf.MultiCell(0, 7, "Runs, newest first", "", "L", false)
	for _, r := range au.LatestRuns {
		pdf.SetFont("Helvetica", "B", 10)
		verdict := "not evaluated"
		if r.EvaluationStatus != nil {
			verdict = *r.EvaluationStatus
		}
		pdf.MultiCell(0, 5.5, tr(fmt.Sprintf("%s  %s, %s (%s)", r.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"), r.Status, verdict, r.Trigger)), "", "L", false)
		pdf.SetFont("Helvetica", "", 9)
		pdf.MultiCell(0, 4.5, tr("Run "+r.ID), "", "L", false)
		if r.EvaluationReason != nil && *r.EvaluationReason != "" {
			pdf.MultiCell(0, 4.5, tr("Reason: "+*r.EvaluationReason), "", "L", false)
		}
		if r.Error != nil && *r.Error != "" {
			pdf.MultiCell(0, 4.5, tr("Error: "+*r.Error), "", "L", false)
		}
		if len(r.EvidenceIDs) > 0 {
			pdf.MultiCell(0, 4.5, tr("Evidence: "+strings.Join(r.EvidenceIDs, ", ")), "", "L", false)
		}
		if r.FindingID != nil {
			pdf.MultiCell(0, 4.5, tr("Finding: "+*r.FindingID), "", "L", false)
		}
		pdf.Ln(1.5)
	}
	if len(au.LatestRuns) == 0 {
		pdf.MultiCell(0, 6, "No run yet.", "", "L", false)
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("render automation pdf: %w", err)
	}
	return &ReportPDF{Filename: "automation-" + au.ID + ".pdf", Content: buf.Bytes()}, nil
}

// ExportTooLargeError refuses a task export beyond the bounds.
type ExportTooLargeError struct {
	Files int
	Bytes int64
}

func (e *ExportTooLargeError) Error() string {
	return fmt.Sprintf("the task's evidence is %d files, %d bytes: an export holds at most %d files and %d bytes; download the files one by one",
		e.Files, e.Bytes, MaxExportFiles, MaxExportBytes)
}

// TaskEvidenceExport is a planned ZIP export of a task: checked (access,
// bounds) before anything is written, then streamed by Write.
type TaskEvidenceExport struct {
	Task     *Task
	Evidence []Evidence
	Runs     []EvidenceAutomation // with includeJson: every automation's runs
	a        *App
	orgID    string
}

// Filename is the ZIP's name: task-<id>-evidence.zip.
func (x *TaskEvidenceExport) Filename() string { return "task-" + x.Task.ID + "-evidence.zip" }

// PlanTaskEvidenceExport checks the caller may read the task's evidence
// and that the export stays within its bounds; includeJSON adds each
// automation run's JSON (at most MaxExportRuns).
func (a *App) PlanTaskEvidenceExport(ctx context.Context, taskID string, includeJSON bool) (*TaskEvidenceExport, error) {
	p, t, err := a.taskEvidenceReader(ctx, taskID)
	if err != nil {
		return nil, err
	}
	x := &TaskEvidenceExport{Task: t, a: a, orgID: p.OrgID}
	var size int64
	for page := 1; ; page++ {
		l, err := a.ListEvidence(ctx, EvidenceFilter{TaskID: taskID, Page: Page{Page: page, PerPage: MaxPerPage}})
		if err != nil {
			return nil, err
		}
		for _, ev := range l.Items {
			size += ev.Size
		}
		x.Evidence = append(x.Evidence, l.Items...)
		if len(x.Evidence) > MaxExportFiles || size > MaxExportBytes {
			return nil, &ExportTooLargeError{Files: max(len(x.Evidence), l.Total), Bytes: size}
		}
		if len(l.Items) < MaxPerPage || len(x.Evidence) >= l.Total {
			break
		}
	}
	if !includeJSON {
		return x, nil
	}
	autos, err := a.TaskEvidenceAutomations(ctx, taskID)
	if err != nil {
		return nil, err
	}
	left := MaxExportRuns
	for _, au := range autos {
		full, err := a.taskAutomation(ctx, p, taskID, au.ID, max(left, 0))
		if err != nil {
			return nil, err
		}
		left -= len(full.LatestRuns)
		x.Runs = append(x.Runs, *full)
	}
	return x, nil
}

// Write streams the ZIP: evidence/<evidence id>-<file name> for each
// file, an index (evidence.json) and, with includeJson, runs/<automation
// id>/<run id>.json with each run as the API returns it (a script run's
// logs and result included).
func (x *TaskEvidenceExport) Write(ctx context.Context, w io.Writer) error {
	zw := zip.NewWriter(w)
	index := map[string]any{"taskId": x.Task.ID, "taskTitle": x.Task.Title, "exportedAt": x.a.Now().UTC(), "evidence": x.Evidence}
	if x.Runs != nil {
		index["automations"] = x.Runs
	}
	if err := writeZipJSON(zw, "evidence.json", index, x.a.Now()); err != nil {
		return err
	}
	for _, ev := range x.Evidence {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, f, err := x.a.OpenEvidence(ctx, ev.ID)
		if err != nil {
			return err
		}
		name := "evidence/" + ev.ID + "-" + safeZipName(ev.Filename)
		zf, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: ev.UploadedAt})
		if err == nil {
			_, err = io.Copy(zf, f)
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("export evidence %s: %w", ev.ID, err)
		}
	}
	for _, au := range x.Runs {
		for _, r := range au.LatestRuns {
			if err := ctx.Err(); err != nil {
				return err
			}
			raw := r.raw
			if sr, ok := raw.(TaskAutomationRun); ok {
				// Read the run whole (its logs and result).
				full, err := x.a.store.GetAutomationRun(ctx, x.orgID, sr.ID)
				if err != nil {
					return err
				}
				raw = full
			}
			if err := writeZipJSON(zw, "runs/"+au.ID+"/"+r.ID+".json", raw, r.CreatedAt); err != nil {
				return err
			}
		}
	}
	return zw.Close()
}

func writeZipJSON(zw *zip.Writer, name string, v any, at time.Time) error {
	f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: at})
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// safeZipName keeps a stored file name inside its folder of the archive.
func safeZipName(name string) string {
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "." || name == "/" || name == ".." || name == "" {
		return "file"
	}
	return name
}
