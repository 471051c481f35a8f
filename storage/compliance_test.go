package storage

import (
	"context"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// TestLatestDoneTasksPerSeries proves the status rule looks at the most
// recently completed task of each series only.
func TestLatestDoneTasksPerSeries(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	org := &app.Organization{ID: app.NewID(app.PrefixOrganization), Name: "A", Slug: "a", Plan: app.PlanFree, CreatedAt: now, UpdatedAt: now}
	if err := db.CreateOrganization(ctx, org); err != nil {
		t.Fatal(err)
	}
	ctl := &app.Control{ID: app.NewID(app.PrefixControl), Name: "c", Status: app.ControlNotStarted, CreatedAt: now, UpdatedAt: now}
	if err := db.CreateControl(ctx, org.ID, ctl); err != nil {
		t.Fatal(err)
	}
	task := func(series string, status string, done time.Time) string {
		tk := &app.Task{ID: app.NewID(app.PrefixTask), Title: "t", Status: status, ControlID: &ctl.ID, CreatedAt: now, UpdatedAt: now}
		tk.SeriesID = series
		if series == "" {
			tk.SeriesID = tk.ID
		}
		if status == app.TaskDone {
			tk.CompletedAt = &done
		}
		if err := db.CreateTask(ctx, org.ID, tk); err != nil {
			t.Fatal(err)
		}
		return tk.ID
	}
	first := task("", app.TaskDone, now)
	second := task(first, app.TaskDone, now.Add(24*time.Hour))
	task(first, app.TaskTodo, now)
	other := task("", app.TaskDone, now)
	task("", app.TaskInProgress, now)
	got, err := db.LatestDoneTasks(ctx, org.ID, ctl.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{second: true, other: true}
	if len(got) != 2 || !want[got[0]] || !want[got[1]] {
		t.Fatalf("latest done %v, want %s and %s", got, second, other)
	}
	// Evidence validity at a time.
	exp := now.Add(48 * time.Hour)
	ev := &app.Evidence{ID: app.NewID(app.PrefixEvidence), ControlID: ctl.ID, TaskID: &second, Filename: "f", ContentType: "text/plain",
		SHA256: "00", ExpiresAt: &exp, UploadedAt: now}
	if err := db.CreateEvidence(ctx, org.ID, ev); err != nil {
		t.Fatal(err)
	}
	for at, want := range map[time.Time]int{now: 1, exp.Add(-time.Millisecond): 1, exp: 0} {
		if n, err := db.ValidTaskEvidence(ctx, org.ID, second, at); err != nil || n != want {
			t.Fatalf("valid evidence at %s: %d, want %d (%v)", at, n, want, err)
		}
	}
	if n, _ := db.ValidTaskEvidence(ctx, "org_other", second, now); n != 0 {
		t.Fatal("evidence visible to another organization")
	}
}
