package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// StartAutomationWorker runs pending automation runs in the background
// until ctx ends, one at a time for the whole appliance (the sandbox's
// memory watchdog reads the process heap, so runs must not overlap). Call
// InterruptStaleAutomationRuns first at start-up.
func (a *App) StartAutomationWorker(ctx context.Context) *sync.WaitGroup {
	s := &a.autos
	s.mu.Lock()
	if s.wake == nil {
		s.wake = make(chan struct{}, 1)
	}
	wake := s.wake
	s.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			if _, err := a.ProcessAutomationRuns(ctx); err != nil && ctx.Err() == nil {
				a.log.Error("task automation runs failed", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-wake:
			case <-t.C:
			}
		}
	}()
	return &wg
}

func (a *App) wakeAutomationWorker() {
	a.autos.mu.Lock()
	w := a.autos.wake
	a.autos.mu.Unlock()
	if w == nil {
		return
	}
	select {
	case w <- struct{}{}:
	default:
	}
}

// InterruptStaleAutomationRuns marks runs left running by a stop or a
// crash as interrupted.
func (a *App) InterruptStaleAutomationRuns(ctx context.Context) (int, error) {
	n, err := a.store.InterruptRunningAutomationRuns(ctx, a.Now(), "the appliance stopped while the run was in progress; it was not completed")
	if err != nil {
		return 0, fmt.Errorf("interrupt stale automation runs: %w", err)
	}
	return n, nil
}

// ProcessAutomationRuns claims and executes pending runs until none is
// left, and returns how many ran.
func (a *App) ProcessAutomationRuns(ctx context.Context) (int, error) {
	runner, _ := a.scriptRunner()
	if runner == nil {
		return 0, nil
	}
	n := 0
	for ctx.Err() == nil {
		run, err := a.store.ClaimAutomationRun(ctx, a.Now())
		if errors.Is(err, ErrNotFound) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("claim automation run: %w", err)
		}
		n++
		if err := a.executeAutomationRun(ctx, run); err != nil {
			return n, err
		}
	}
	return n, nil
}

// ScheduleTaskAutomations is the scheduled job run_task_automations: it
// queues a run for every enabled automation whose next run is due and
// moves its next run one interval on.
func (a *App) ScheduleTaskAutomations(ctx context.Context) error {
	if r, _ := a.scriptRunner(); r == nil {
		return nil
	}
	now := a.Now()
	due, err := a.store.DueTaskAutomations(ctx, now)
	if err != nil {
		return fmt.Errorf("schedule task automations: %w", err)
	}
	queued := 0
	for i := range due {
		t := &due[i]
		sys := SystemContext(ctx, t.OrganizationID)
		err := a.store.InTx(sys, func(ctx context.Context) error {
			cur, err := a.store.GetTaskAutomation(ctx, t.OrganizationID, t.TaskID, t.ID)
			if err != nil {
				return err
			}
			if !cur.IsEnabled || cur.ScheduleFrequency == nil || cur.LatestVersion == 0 {
				cur.NextRunAt = nil
				return a.store.UpdateTaskAutomation(ctx, t.OrganizationID, cur)
			}
			next := now.Add(TaskFrequencies[*cur.ScheduleFrequency])
			cur.NextRunAt = &next
			if err := a.store.UpdateTaskAutomation(ctx, t.OrganizationID, cur); err != nil {
				return err
			}
			_, err = a.queueAutomationRun(ctx, cur, AutomationTriggerScheduled, "system")
			return err
		})
		switch {
		case errors.Is(err, ErrConflict):
			// A run is still pending or running: the next tick tries again.
		case err != nil:
			a.log.Error("schedule task automation failed", "automation_id", t.ID, "err", err)
		default:
			queued++
		}
	}
	if queued > 0 {
		a.wakeAutomationWorker()
	}
	return nil
}

// secretKeeper resolves secret() for a run and remembers every value it
// handed out, so they can be cut from what the run stores.
type secretKeeper struct {
	a      *App
	orgID  string
	mu     sync.Mutex
	values []string
}

func (k *secretKeeper) get(ctx context.Context, connID, field string) (string, error) {
	c, err := k.a.store.GetConnection(SystemContext(ctx, k.orgID), k.orgID, connID)
	if errors.Is(err, ErrNotFound) {
		return "", errors.New("no connection with that id in this organization")
	}
	if err != nil {
		return "", errors.New("the connection could not be read")
	}
	creds, err := k.a.openCredentials(c)
	if err != nil {
		return "", errors.New("the connection's credentials could not be opened")
	}
	v, ok := creds[field]
	if !ok {
		return "", fmt.Errorf("the connection has no credential field %q", field)
	}
	k.mu.Lock()
	if v != "" {
		k.values = append(k.values, v)
	}
	k.mu.Unlock()
	return v, nil
}

// redact replaces every secret value handed to the script in s.
func (k *secretKeeper) redact(s string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, v := range k.values {
		if len(v) >= 1 {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

func (k *secretKeeper) redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return k.redact(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for key, val := range x {
			out[k.redact(key)] = k.redactValue(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = k.redactValue(val)
		}
		return out
	}
	return v
}

// executeAutomationRun runs a claimed run in the sandbox, outside any
// transaction, then evaluates it and records the outcome.
func (a *App) executeAutomationRun(ctx context.Context, run *TaskAutomationRun) error {
	orgID := run.OrganizationID
	sys := SystemContext(ctx, orgID)
	runner, opts := a.scriptRunner()
	fail := func(msg string) error {
		run.Status, run.Error = AutomationRunFailed, &msg
		run.Logs = append(run.Logs, RunLog{At: a.Now(), Level: "error", Message: msg})
		now := a.Now()
		run.FinishedAt = &now
		return a.finishAutomationRun(sys, run, nil, nil, nil)
	}
	t, err := a.store.GetTaskAutomation(sys, orgID, run.TaskID, run.AutomationID)
	if err != nil {
		return fail("the automation is gone")
	}
	v, err := a.store.GetAutomationVersion(sys, orgID, t.ID, run.Version)
	if err != nil {
		return fail(fmt.Sprintf("version %d of the automation is gone", run.Version))
	}
	keeper := &secretKeeper{a: a, orgID: orgID}
	out := runner.Run(ctx, ScriptJob{Script: v.Script, Hosts: t.Hosts, Secret: keeper.get, Limits: opts.Limits})
	if ctx.Err() != nil {
		// Shutting down: InterruptStaleAutomationRuns marks it at next start.
		return nil
	}
	run.Steps, run.HTTPRequests, run.DurationMs = int64(out.Steps), out.HTTPRequests, out.Duration.Milliseconds()
	for _, l := range out.Logs {
		l.Message = keeper.redact(l.Message)
		run.Logs = append(run.Logs, l)
	}
	if out.LogsDropped > 0 {
		run.Logs = append(run.Logs, RunLog{At: a.Now(), Level: "warn", Message: fmt.Sprintf("%d further log lines were dropped", out.LogsDropped)})
	}
	if m, ok := keeper.redactValue(out.Result).(map[string]any); ok {
		run.Result = m
	}
	for i := range out.Evidence {
		out.Evidence[i].Name = keeper.redact(out.Evidence[i].Name)
		out.Evidence[i].Text = keeper.redact(out.Evidence[i].Text)
	}
	pass, reason := false, ""
	if out.StopReason != "" {
		msg := keeper.redact(out.Error)
		run.Error, run.StopReason = &msg, Ptr(out.StopReason)
		run.Logs = append(run.Logs, RunLog{At: a.Now(), Level: "error", Message: "stopped (" + out.StopReason + "): " + msg})
		reason = "the script did not complete: " + msg
	} else if t.EvaluationCriteria == "" {
		pass, reason = true, "the script completed (the automation has no evaluation criteria)"
	} else {
		ok, why, err := runner.Evaluate(t.EvaluationCriteria, run.Result)
		if err != nil {
			pass, reason = false, "the evaluation criteria could not be applied: "+keeper.redact(err.Error())
		} else {
			pass, reason = ok, why
		}
	}
	run.EvaluationReason = &reason
	run.Status = AutomationRunCompleted
	run.EvaluationStatus = Ptr("pass")
	if !pass {
		run.Status, run.EvaluationStatus = AutomationRunFailed, Ptr("fail")
	}
	now := a.Now()
	run.FinishedAt = &now
	var file *evidenceFile
	if pass && a.files != nil {
		f, err := a.storeAutomationEvidence(sys, run, t, out.Evidence)
		if err != nil {
			a.log.Error("automation evidence failed", "run_id", run.ID, "err", err)
			run.Logs = append(run.Logs, RunLog{At: now, Level: "error", Message: "storing the evidence failed"})
		} else {
			file = &f
		}
	}
	return a.finishAutomationRun(sys, run, t, file, &pass)
}

// storeAutomationEvidence writes a passing run's evidence file: a readable
// Markdown summary with the result as JSON and the script's own evidence.
func (a *App) storeAutomationEvidence(ctx context.Context, run *TaskAutomationRun, t *TaskAutomation, pieces []ScriptEvidence) (evidenceFile, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", t.Name)
	fmt.Fprintf(&b, "- Automation: `%s` (version %d)\n- Task: `%s`\n- Run: `%s` (%s)\n- Finished at: %s\n- Verdict: passed — %s\n\n",
		t.ID, run.Version, t.TaskID, run.ID, run.Trigger, run.FinishedAt.Format(time.RFC3339), deref(run.EvaluationReason))
	if t.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", t.Description)
	}
	if len(run.Result) > 0 {
		b.WriteString("| Field | Value |\n|---|---|\n")
		keys := make([]string, 0, len(run.Result))
		for k := range run.Result {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			raw, _ := json.Marshal(run.Result[k])
			fmt.Fprintf(&b, "| %s | %s |\n", mdCell(k), mdCell(string(raw)))
		}
		b.WriteString("\n")
	}
	for _, p := range pieces {
		fmt.Fprintf(&b, "## %s\n\n```\n%s\n```\n\n", mdCell(p.Name), strings.ReplaceAll(p.Text, "```", "'''"))
	}
	raw, err := json.MarshalIndent(map[string]any{"automationId": t.ID, "runId": run.ID, "version": run.Version,
		"finishedAt": run.FinishedAt, "result": run.Result, "evaluation": run.EvaluationReason}, "", "  ")
	if err != nil {
		return evidenceFile{}, err
	}
	b.WriteString("## Result (JSON)\n\n```json\n")
	b.Write(raw)
	b.WriteString("\n```\n")
	blob, err := a.files.Put(ctx, &b)
	if err != nil {
		return evidenceFile{}, fmt.Errorf("store automation evidence: %w", err)
	}
	name := cleanFilename(fmt.Sprintf("automation-%s-%s.md", t.ID, run.FinishedAt.Format("20060102T150405Z")))
	return evidenceFile{sha: blob.SHA256, size: blob.Size, name: name}, nil
}

// finishAutomationRun records the run's end, and for a judged run
// attaches the evidence (pass) or keeps one finding open (fail), in one
// transaction.
func (a *App) finishAutomationRun(ctx context.Context, run *TaskAutomationRun, t *TaskAutomation, file *evidenceFile, pass *bool) error {
	orgID := run.OrganizationID
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		if t != nil && pass != nil {
			task, err := a.store.GetTask(ctx, orgID, t.TaskID)
			if err != nil {
				return err
			}
			cur, err := a.store.GetTaskAutomation(ctx, orgID, t.TaskID, t.ID)
			if err != nil {
				return err
			}
			if *pass {
				if err := a.resolveAutomationFinding(ctx, run, cur); err != nil {
					return err
				}
				if file != nil {
					if err := a.attachAutomationEvidence(ctx, run, cur, task, *file); err != nil {
						return err
					}
				}
			} else if err := a.keepAutomationFindingOpen(ctx, run, cur, task); err != nil {
				return err
			}
			cur.LastRunAt, cur.LastRunStatus = run.FinishedAt, &run.Status
			if err := a.store.UpdateTaskAutomation(ctx, orgID, cur); err != nil {
				return err
			}
		}
		if err := a.store.FinishAutomationRun(ctx, orgID, run); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "run_" + run.Status, ResourceType: "task_automation_run", ResourceID: run.ID,
			After: map[string]any{"automationId": run.AutomationID, "taskId": run.TaskID, "status": run.Status,
				"evaluationStatus": run.EvaluationStatus, "stopReason": run.StopReason}})
	})
	if err != nil {
		return fmt.Errorf("finish automation run %s: %w", run.ID, err)
	}
	return nil
}

func (a *App) attachAutomationEvidence(ctx context.Context, run *TaskAutomationRun, t *TaskAutomation, task *Task, f evidenceFile) error {
	orgID := run.OrganizationID
	if task.ControlID == nil {
		run.Logs = append(run.Logs, RunLog{At: a.Now(), Level: "warn", Message: "the task is not linked to a control: no evidence was attached"})
		return nil
	}
	_, opts := a.scriptRunner()
	now := a.Now()
	every := manualEvidenceValid
	if t.ScheduleFrequency != nil {
		every = TaskFrequencies[*t.ScheduleFrequency]
	}
	exp := now.Add(every + opts.EvidenceGrace)
	ev := &Evidence{ID: NewID(PrefixEvidence), ControlID: *task.ControlID, TaskID: Ptr(task.ID), Filename: f.name,
		ContentType: "text/markdown; charset=utf-8", Size: f.size, SHA256: f.sha, ExpiresAt: &exp,
		UploadedBy: "automation:" + t.ID, UploadedAt: now,
		Description: fmt.Sprintf("Task automation %s passed (version %d, run %s)", t.Name, run.Version, run.ID)}
	if err := a.store.CreateEvidence(ctx, orgID, ev); err != nil {
		return err
	}
	if err := a.record(ctx, Mutation{Action: "created", ResourceType: "evidence", ResourceID: ev.ID, After: ev,
		Events: []Event{ResourceEvent("evidence", "created", ev)}}); err != nil {
		return err
	}
	run.EvidenceID, t.EvidenceID = &ev.ID, &ev.ID
	if err := a.markInProgress(ctx, orgID, ev.ControlID); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if err := a.reevaluateControl(ctx, orgID, ev.ControlID); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	return nil
}

// keepAutomationFindingOpen makes sure a failing automation has one open
// finding: the linked one while it is open or in review, else a new one.
func (a *App) keepAutomationFindingOpen(ctx context.Context, run *TaskAutomationRun, t *TaskAutomation, task *Task) error {
	orgID := run.OrganizationID
	if t.FindingID != nil {
		f, err := a.store.GetFinding(ctx, orgID, *t.FindingID)
		switch {
		case err == nil && (f.Status == FindingOpen || f.Status == FindingInReview):
			run.FindingID = &f.ID
			return nil
		case err != nil && !errors.Is(err, ErrNotFound):
			return err
		}
	}
	now := a.Now()
	title := "Task automation failed: " + t.Name
	if r := []rune(title); len(r) > maxFindingTitle {
		title = string(r[:maxFindingTitle])
	}
	content := fmt.Sprintf("The automation %q of task %q failed in run %s (version %d).\n\n%s", t.Name, task.Title, run.ID, run.Version, deref(run.EvaluationReason))
	if r := []rune(content); len(r) > MaxFindingContent {
		content = string(r[:MaxFindingContent])
	}
	var controls []string
	if task.ControlID != nil {
		controls = []string{*task.ControlID}
	}
	f := &Finding{ID: NewID(PrefixFinding), Type: "soc2", Status: FindingOpen, Severity: "medium", Content: content, Title: &title,
		Source: Ptr("automation:" + t.ID), TaskID: Ptr(task.ID), LinkedControlIDs: append([]string{}, controls...),
		CreatedByType: "system", CreatedByID: "automation:" + t.ID, CreatedAt: now, UpdatedAt: now}
	if err := a.store.CreateFinding(ctx, orgID, f); err != nil {
		return err
	}
	run.FindingID, t.FindingID = &f.ID, &f.ID
	return a.record(ctx, Mutation{Action: "created", ResourceType: "finding", ResourceID: f.ID, After: f,
		Events: []Event{{Type: EventFindingCreated, Data: f}}})
}

// resolveAutomationFinding resolves the automation's open finding when a
// run passes; one a person closed or resolved is left alone.
func (a *App) resolveAutomationFinding(ctx context.Context, run *TaskAutomationRun, t *TaskAutomation) error {
	if t.FindingID == nil {
		return nil
	}
	orgID := run.OrganizationID
	before, err := a.store.GetFinding(ctx, orgID, *t.FindingID)
	if errors.Is(err, ErrNotFound) {
		t.FindingID = nil
		return nil
	}
	if err != nil {
		return err
	}
	if before.Status != FindingOpen && before.Status != FindingInReview {
		return nil
	}
	f := *before
	f.Status, f.UpdatedAt = FindingResolved, a.Now()
	note := fmt.Sprintf("Resolved automatically: task automation %s passed in run %s.", t.ID, run.ID)
	f.RevisionNote = &note
	if err := a.store.UpdateFinding(ctx, orgID, &f); err != nil {
		return err
	}
	run.FindingID = &f.ID
	return a.record(ctx, Mutation{Action: "resolved", ResourceType: "finding", ResourceID: f.ID, Before: before, After: &f})
}
