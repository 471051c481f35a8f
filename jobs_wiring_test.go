package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// testClock is a settable clock for the scheduler and the app.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestScheduledDomainJobs runs serve's job list through the recording
// scheduler on an injected clock: the evidence expiry scan raises
// evidence.expiring once, and the overdue scan marks a corrective action
// overdue the day after its due date.
func TestScheduledDomainJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(dir, "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	files, err := storage.NewFiles(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{t: time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := app.NewWithFiles(db, files, clock.Now, log, app.Config{})
	e := &env{db: db, app: a, log: log}

	jobs := scheduledJobs(e, app.DeliveryOptions{Retention: 30 * 24 * time.Hour})
	names := map[string]time.Duration{}
	for _, j := range jobs {
		names[j.Name] = j.Interval
	}
	for _, n := range []string{"scan_evidence_expiry", "mark_overdue_corrective_actions", "remind_incident_deadlines"} {
		if names[n] <= 0 || names[n] > 24*time.Hour {
			t.Fatalf("job %s: interval %v", n, names[n])
		}
	}
	sched := a.NewScheduler(jobs...)

	org, err := a.CreateOrganization(ctx, "Acme", "professional")
	if err != nil {
		t.Fatal(err)
	}
	sys := app.SystemContext(ctx, org.ID)
	ctl, err := a.CreateControl(sys, app.ControlInput{Code: app.Ptr("C-1"), Name: app.Ptr("Backups")})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := a.UploadEvidence(sys, ctl.ID, "", app.EvidenceUpload{File: strings.NewReader("report"), Filename: "r.pdf",
		ContentType: "application/pdf", ExpiresAt: "2026-02-24"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.CreateFinding(sys, app.FindingCreate{Title: app.Ptr("Restore untested")})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := a.CreateCorrectiveAction(sys, f.ID, app.CorrectiveActionInput{Title: app.Ptr("Test a restore"),
		DueDate: app.Opt[string]{Set: true, Value: "2026-01-20"}})
	if err != nil {
		t.Fatal(err)
	}

	// A GDPR notification due 72 hours after awareness (09:00): overdue
	// on 2026-01-18 at 09:00.
	inc, err := a.CreateIncident(sys, app.IncidentInput{Title: app.Ptr("Lost laptop"), Type: app.Ptr(app.IncidentPersonalData),
		AwareAt: app.Ptr("2026-01-15T09:00:00Z")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ConfirmIncidentRegimes(sys, inc.ID, app.RegimesInput{Regimes: &[]string{app.RegimeGDPR}}); err != nil {
		t.Fatal(err)
	}

	raw, err := sqlOpen(filepath.Join(dir, "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	count := func(typ string) int {
		var n int
		if err := raw.QueryRow(`SELECT count(*) FROM events WHERE organization_id = ? AND type = ?`, org.ID, typ).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	status := func() string {
		c, err := a.GetCorrectiveAction(sys, f.ID, ca.ID)
		if err != nil {
			t.Fatal(err)
		}
		return c.Status
	}

	sched.RunDue(ctx) // 40 days before expiry, 5 days before the due date
	if count(app.EventEvidenceExpiring) != 0 || status() != app.ActionOpen {
		t.Fatalf("nothing is due yet: expiring %d, action %s", count(app.EventEvidenceExpiring), status())
	}
	clock.Advance(11 * 24 * time.Hour) // 2026-01-26: inside 30 days, past the due date
	sched.RunDue(ctx)
	sched.RunDue(ctx) // the same slot does not run twice
	clock.Advance(time.Hour)
	sched.RunDue(ctx) // the next slot runs, and the scans are idempotent
	if n := count(app.EventEvidenceExpiring); n != 1 {
		t.Fatalf("evidence.expiring events %d, want 1 for %s", n, ev.ID)
	}
	if s := status(); s != app.ActionOverdue {
		t.Fatalf("action status %s, want overdue", s)
	}
	if n := count(app.EventCorrectiveActionOverdue); n != 1 {
		t.Fatalf("corrective_action.overdue events %d, want 1", n)
	}
	// The notification passed its due time: one overdue reminder, however
	// often the job runs.
	if n := count(app.EventIncidentDeadlineApproaching); n != 1 {
		t.Fatalf("incident.deadline.approaching events %d, want 1", n)
	}
	runs, err := db.RecentJobRuns(ctx, "scan_evidence_expiry", 10)
	if err != nil || len(runs) != 3 {
		t.Fatalf("recorded runs %d err %v, want 3", len(runs), err)
	}
}
