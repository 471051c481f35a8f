package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Device compliance as control evidence. Once a day the
// device_compliance_evidence job rolls the latest check results of an
// organization's devices up into two evidence files — a Markdown summary
// and a JSON detail (per device, per check) — on each control serving a
// requirement about endpoint devices, attached to a task "Device
// compliance" on the control. The task is done, and the evidence attached,
// only while at least DeviceEvidenceThreshold of the fleet is compliant;
// below it the previous evidence is withdrawn and the task says why, so
// the control cannot count as implemented on the fleet's behalf.

// DeviceEvidenceControls are the built-in requirements device compliance
// evidences: ISO 27001 A.8.1 (user end point devices), SOC 2 CC6.8 point
// of focus 4 (antivirus and anti-malware software), NIST CSF PR.PS-01
// (configuration management) and PR.DS-01 (data at rest).
var DeviceEvidenceControls = []TrainingControlRef{
	{Framework: "iso27001-2022", Ref: "A.8.1"},
	{Framework: "soc2-2017", Ref: "CC6.8.4"},
	{Framework: "nist-csf-2.0", Ref: "PR.PS-01"},
	{Framework: "nist-csf-2.0", Ref: "PR.DS-01"},
}

const (
	// DeviceEvidenceThreshold is the share of compliant devices the fleet
	// needs for its evidence to be attached.
	DeviceEvidenceThreshold = 0.9
	// DeviceEvidenceValidity is how long device evidence stays valid: the
	// daily job replaces it long before; if the job stops, the evidence
	// enters the 30-day expiry warning after five days and lapses after 35.
	DeviceEvidenceValidity = 35 * 24 * time.Hour
)

// DeviceEvidenceLink is the task and evidence device compliance keeps on
// one control.
type DeviceEvidenceLink struct {
	ControlID         string
	TaskID            string
	SummaryEvidenceID *string
	DetailEvidenceID  *string
	Compliant, Total  int
	RefreshedAt       time.Time
}

// DeviceEvidenceStore persists the device evidence links.
type DeviceEvidenceStore interface {
	GetDeviceEvidenceLink(ctx context.Context, orgID, controlID string) (*DeviceEvidenceLink, error)
	SaveDeviceEvidenceLink(ctx context.Context, orgID string, l *DeviceEvidenceLink) error
}

// DeviceFleetReport is the JSON detail of device evidence.
type DeviceFleetReport struct {
	GeneratedAt  time.Time           `json:"generatedAt"`
	Total        int                 `json:"total"`
	Compliant    int                 `json:"compliant"`
	Stale        int                 `json:"stale"`
	Threshold    float64             `json:"threshold"`
	MeetsTarget  bool                `json:"meetsThreshold"`
	CheckSummary map[string][2]int   `json:"checkSummary"` // check type: [passed, reported]
	Devices      []DeviceFleetDevice `json:"devices"`
}

// DeviceFleetDevice is one device of the fleet report.
type DeviceFleetDevice struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	Hostname    string             `json:"hostname"`
	Platform    string             `json:"platform"`
	PersonID    *string            `json:"personId"`
	IsCompliant bool               `json:"isCompliant"`
	Stale       bool               `json:"stale"`
	LastCheckIn *time.Time         `json:"lastCheckInAt"`
	Checks      []DeviceFleetCheck `json:"checks"`
}

// DeviceFleetCheck is a device's latest result of one check.
type DeviceFleetCheck struct {
	CheckType string    `json:"checkType"`
	Passed    bool      `json:"passed"`
	Message   string    `json:"message"`
	Method    string    `json:"method"`
	CheckedAt time.Time `json:"checkedAt"`
}

// RefreshDeviceEvidence is the device_compliance_evidence job over every
// organization. It returns the organizations whose evidence was refreshed.
func (a *App) RefreshDeviceEvidence(ctx context.Context) (int, error) {
	orgs, err := a.store.ListOrganizations(ctx)
	if err != nil {
		return 0, fmt.Errorf("device evidence: %w", err)
	}
	n := 0
	for _, o := range orgs {
		sys := SystemContext(ctx, o.ID)
		done := false
		err := a.store.InTx(sys, func(ctx context.Context) error {
			var err error
			done, err = a.refreshDeviceEvidenceOrg(ctx, o.ID)
			return err
		})
		if err != nil {
			return n, fmt.Errorf("device evidence %s: %w", o.ID, err)
		}
		if done {
			n++
		}
	}
	return n, nil
}

// deviceFleetReport reads every device of the organization with its latest
// checks.
func (a *App) deviceFleetReport(ctx context.Context, orgID string) (*DeviceFleetReport, error) {
	now := a.Now()
	rep := &DeviceFleetReport{GeneratedAt: now, Threshold: DeviceEvidenceThreshold, CheckSummary: map[string][2]int{}, Devices: []DeviceFleetDevice{}}
	for page := 1; ; page++ {
		l, err := a.store.ListDevices(ctx, orgID, DeviceFilter{Page: Page{Page: page, PerPage: 500}})
		if err != nil {
			return nil, err
		}
		for _, d := range l.Items {
			if d.outsideAgentFleet() {
				continue
			}
			fd := DeviceFleetDevice{ID: d.ID, Name: d.Name, Hostname: d.Hostname, Platform: d.Platform, PersonID: d.PersonID,
				LastCheckIn: d.LastCheckIn, Checks: []DeviceFleetCheck{}}
			fd.Stale = d.LastCheckIn == nil || now.Sub(*d.LastCheckIn) >= DeviceStaleAfter
			// A device that stopped reporting is not known to be compliant.
			fd.IsCompliant = d.IsCompliant && !fd.Stale
			checks, err := a.store.LatestDeviceChecks(ctx, orgID, d.ID)
			if err != nil {
				return nil, err
			}
			for _, c := range checks {
				fd.Checks = append(fd.Checks, DeviceFleetCheck{CheckType: c.CheckType, Passed: c.Passed, Message: c.Details.Message,
					Method: c.Details.Method, CheckedAt: c.CheckedAt})
				s := rep.CheckSummary[c.CheckType]
				s[1]++
				if c.Passed {
					s[0]++
				}
				rep.CheckSummary[c.CheckType] = s
			}
			rep.Total++
			if fd.IsCompliant {
				rep.Compliant++
			}
			if fd.Stale {
				rep.Stale++
			}
			rep.Devices = append(rep.Devices, fd)
		}
		if len(l.Items) < 500 {
			break
		}
	}
	rep.MeetsTarget = rep.Total > 0 && float64(rep.Compliant) >= DeviceEvidenceThreshold*float64(rep.Total)
	return rep, nil
}

// deviceEvidenceMarkdown is the human summary of a fleet report.
func deviceEvidenceMarkdown(rep *DeviceFleetReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Device compliance\n\nGenerated: %s\n\n", rep.GeneratedAt.Format(time.RFC3339))
	fmt.Fprintf(&b, "- Devices: %d\n- Compliant: %d (%.0f %%)\n- Stale (no check-in for 7 days, counted as not compliant): %d\n- Threshold: %.0f %% — %s\n\n",
		rep.Total, rep.Compliant, fleetPct(rep.Compliant, rep.Total), rep.Stale, rep.Threshold*100, map[bool]string{true: "met", false: "not met"}[rep.MeetsTarget])
	b.WriteString("## Checks\n\n| check | passed | reported |\n| --- | --- | --- |\n")
	for _, t := range DeviceCheckTypes {
		s := rep.CheckSummary[t]
		fmt.Fprintf(&b, "| %s | %d | %d |\n", t, s[0], s[1])
	}
	b.WriteString("\n## Devices\n\n| device | platform | person | compliant | last check-in | failed checks |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, d := range rep.Devices {
		var failed []string
		for _, c := range d.Checks {
			if !c.Passed {
				failed = append(failed, c.CheckType)
			}
		}
		last := "never"
		if d.LastCheckIn != nil {
			last = d.LastCheckIn.Format(time.RFC3339)
		}
		comp := "yes"
		switch {
		case d.Stale:
			comp = "no (stale)"
		case !d.IsCompliant:
			comp = "no"
		}
		fmt.Fprintf(&b, "| %s (%s) | %s | %s | %s | %s | %s |\n", mdCell(d.Name), d.ID, d.Platform, mdCell(deref(d.PersonID)), comp, last, strings.Join(failed, ", "))
	}
	return b.String()
}

func fleetPct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// refreshDeviceEvidenceOrg refreshes one organization's device evidence in
// the caller's transaction. An organization without devices, or without a
// control serving the requirements, is left alone.
func (a *App) refreshDeviceEvidenceOrg(ctx context.Context, orgID string) (bool, error) {
	if a.files == nil {
		return false, nil
	}
	reqs, err := a.store.OrgRequirementControls(ctx, orgID)
	if err != nil {
		return false, err
	}
	seen := map[string]bool{}
	var controls []string
	for _, ref := range DeviceEvidenceControls {
		id, ok := ResolveTrainingControl(ref)
		if !ok {
			continue
		}
		for _, c := range reqs[id] {
			if !seen[c] {
				seen[c] = true
				controls = append(controls, c)
			}
		}
	}
	sort.Strings(controls)
	if len(controls) == 0 {
		return false, nil
	}
	rep, err := a.deviceFleetReport(ctx, orgID)
	if err != nil || rep.Total == 0 {
		return false, err
	}
	now := rep.GeneratedAt
	var summary, detail Blob
	if rep.MeetsTarget {
		if summary, err = a.files.Put(ctx, strings.NewReader(deviceEvidenceMarkdown(rep))); err != nil {
			return false, err
		}
		raw, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return false, err
		}
		if detail, err = a.files.Put(ctx, strings.NewReader(string(raw))); err != nil {
			return false, err
		}
	}
	why := fmt.Sprintf("%d of %d devices compliant (%.0f %%), threshold %.0f %%", rep.Compliant, rep.Total, fleetPct(rep.Compliant, rep.Total), DeviceEvidenceThreshold*100)
	expires := now.Add(DeviceEvidenceValidity)
	for _, controlID := range controls {
		if _, err := a.store.GetControl(ctx, orgID, controlID); errors.Is(err, ErrNotFound) {
			continue
		} else if err != nil {
			return false, err
		}
		link, err := a.store.GetDeviceEvidenceLink(ctx, orgID, controlID)
		if errors.Is(err, ErrNotFound) {
			link = &DeviceEvidenceLink{ControlID: controlID}
		} else if err != nil {
			return false, err
		}
		var task *Task
		if link.TaskID != "" {
			if task, err = a.store.GetTask(ctx, orgID, link.TaskID); err != nil && !errors.Is(err, ErrNotFound) {
				return false, err
			}
		}
		desc := "Kept by the device agent: the evidence is the daily device compliance report (Markdown summary and JSON per device and check). " +
			"The task is done while at least " + fmt.Sprintf("%.0f %%", DeviceEvidenceThreshold*100) + " of the devices are compliant. Now: " + why + "."
		if !rep.MeetsTarget {
			desc += " Below the threshold no evidence is attached: fix the failing checks on the devices (Devices page)."
		}
		if task == nil {
			task = &Task{ID: NewID(PrefixTask), Title: "Device compliance", ControlID: &controlID, Status: TaskInProgress, CreatedAt: now, UpdatedAt: now}
			task.SeriesID = task.ID
			task.Description = desc
			if err := a.store.CreateTask(ctx, orgID, task); err != nil {
				return false, err
			}
		}
		for _, id := range []*string{link.SummaryEvidenceID, link.DetailEvidenceID} {
			if id != nil {
				if err := a.store.DeleteEvidence(ctx, orgID, *id); err != nil && !errors.Is(err, ErrNotFound) {
					return false, err
				}
			}
		}
		link.SummaryEvidenceID, link.DetailEvidenceID = nil, nil
		if rep.MeetsTarget {
			day := now.Format("2006-01-02")
			for _, f := range []struct {
				name, ctype, what string
				blob              Blob
				dst               **string
			}{
				{"device-compliance-" + day + ".md", "text/markdown; charset=utf-8", "summary", summary, &link.SummaryEvidenceID},
				{"device-compliance-" + day + ".json", "application/json", "detail per device and check", detail, &link.DetailEvidenceID},
			} {
				ev := &Evidence{ID: NewID(PrefixEvidence), ControlID: controlID, TaskID: &task.ID, Filename: f.name, ContentType: f.ctype,
					Size: f.blob.Size, SHA256: f.blob.SHA256, Description: "Device compliance " + f.what + ": " + why,
					ExpiresAt: &expires, UploadedBy: "system", UploadedAt: now}
				if err := a.store.CreateEvidence(ctx, orgID, ev); err != nil {
					return false, err
				}
				*f.dst = &ev.ID
			}
		}
		want := TaskInProgress
		if rep.MeetsTarget {
			want = TaskDone
		}
		if task.Status != want || task.Description != desc {
			task.Status, task.Description, task.UpdatedAt = want, desc, now
			task.CompletedAt = nil
			if want == TaskDone {
				task.CompletedAt = &now
			}
			if err := a.store.UpdateTask(ctx, orgID, task); err != nil {
				return false, err
			}
		}
		link.TaskID, link.Compliant, link.Total, link.RefreshedAt = task.ID, rep.Compliant, rep.Total, now
		if err := a.store.SaveDeviceEvidenceLink(ctx, orgID, link); err != nil {
			return false, err
		}
		if err := a.markInProgress(ctx, orgID, controlID); err != nil {
			return false, err
		}
		if err := a.reevaluateControl(ctx, orgID, controlID); err != nil {
			return false, err
		}
	}
	return true, a.record(ctx, Mutation{Action: "refreshed", ResourceType: "device_evidence", ResourceID: orgID,
		After: map[string]any{"controls": controls, "compliant": rep.Compliant, "total": rep.Total, "meetsThreshold": rep.MeetsTarget, "expiresAt": expires}})
}
