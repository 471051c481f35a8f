package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// TestIncidentStore: an incident round-trips with its details, links and
// reports; every read is scoped to its organization; report versions and
// timeline entries cannot be changed or removed.
func TestIncidentStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t)
	now := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	for _, id := range []string{"org_a", "org_b"} {
		if err := db.CreateOrganization(ctx, &app.Organization{ID: id, Name: id, Slug: id, Plan: "professional", CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	occurred := now.Add(-3 * time.Hour)
	inc := &app.Incident{ID: app.NewID(app.PrefixIncident), Title: "Breach", Type: app.IncidentPersonalData, Status: app.IncidentOpen,
		Severity: "high", OccurredAt: &occurred, DetectedAt: now.Add(-2 * time.Hour), AwareAt: now.Add(-time.Hour), Countries: []string{"DE"},
		DataSubjectsAffected: app.Ptr(int64(12)), Facts: app.IncidentFacts{PersonalDataRisk: app.Ptr(app.RiskHigh)},
		ConfirmedRegimes: []string{app.RegimeGDPR}, LinkedRiskIDs: []string{"rsk_1"}, ReportedBy: app.ActorRef{Type: "person", ID: "usr_1"},
		DORAClassification: &app.DORAClassification{Major: app.Ptr(true), ClassifiedAt: now, MajorSince: &now},
		CreatedAt:          now, UpdatedAt: now}
	if err := db.CreateIncident(ctx, "org_a", inc); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetIncident(ctx, "org_a", inc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Breach" || !got.OccurredAt.Equal(occurred) || *got.DataSubjectsAffected != 12 || *got.Facts.PersonalDataRisk != app.RiskHigh ||
		got.LinkedRiskIDs[0] != "rsk_1" || len(got.LinkedVendorIDs) != 0 || got.ConfirmedRegimes[0] != app.RegimeGDPR ||
		!*got.DORAClassification.Major || got.ReportedBy.ID != "usr_1" {
		t.Fatalf("round trip: %+v", got)
	}
	if _, err := db.GetIncident(ctx, "org_b", inc.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("another organization's incident: %v", err)
	}
	due := now.Add(71 * time.Hour)
	r := &app.IncidentReport{ID: app.NewID(app.PrefixIncidentReport), IncidentID: inc.ID, Regime: app.RegimeGDPR, Kind: app.ReportNotification,
		Status: app.ReportPending, DueAt: &due, StartEvent: "awareness", Basis: "GDPR Art. 33(1)", CreatedAt: now, UpdatedAt: now}
	if err := db.CreateIncidentReport(ctx, "org_a", r); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetIncidentReport(ctx, "org_b", inc.ID, r.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("another organization's report: %v", err)
	}
	if rs, err := db.DueIncidentReports(ctx, "org_b", due); err != nil || len(rs) != 0 {
		t.Fatalf("another organization's due reports: %v %v", rs, err)
	}
	if ds, n, err := db.UpcomingIncidentReports(ctx, "org_a", 5); err != nil || n != 1 || ds[0].IncidentTitle != "Breach" {
		t.Fatalf("upcoming: %v %d %v", ds, n, err)
	}
	sent := now
	v := &app.ReportVersion{ID: app.NewID(app.PrefixIncidentVersion), ReportID: r.ID, IncidentID: inc.ID, Version: 1, State: "sent",
		Content: map[string]string{"natureOfBreach": "x"}, ContentSHA256: "h", Authority: app.Ptr("CNIL"), SentAt: &sent,
		CreatedBy: app.ActorRef{Type: "person", ID: "usr_1"}, CreatedAt: now}
	if err := db.AddReportVersion(ctx, "org_a", v); err != nil {
		t.Fatal(err)
	}
	if err := db.AddReportVersion(ctx, "org_a", v); !errors.Is(err, app.ErrConflict) {
		t.Fatalf("a version number is used once: %v", err)
	}
	// A sent version without an authority is refused by the schema too.
	bad := *v
	bad.ID, bad.Version, bad.Authority = app.NewID(app.PrefixIncidentVersion), 2, nil
	if err := db.AddReportVersion(ctx, "org_a", &bad); err == nil {
		t.Fatal("a sent version needs its authority")
	}
	if err := db.AddTimelineEntry(ctx, "org_a", &app.TimelineEntry{ID: app.NewID(app.PrefixIncidentTimeline), IncidentID: inc.ID, OccurredAt: now,
		Kind: "note", Content: "x", Author: app.ActorRef{Type: "person", ID: "usr_1"}, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE incident_report_versions SET authority = 'someone else'`,
		`UPDATE incident_report_versions SET state = 'draft'`,
		`DELETE FROM incident_report_versions`,
		`UPDATE incident_timeline SET content = 'rewritten'`,
		`DELETE FROM incident_timeline`,
	} {
		if _, err := db.w.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("%s: %v", q, err)
		}
	}
	vs, err := db.ListReportVersions(ctx, "org_a", r.ID)
	if err != nil || len(vs) != 1 || *vs[0].Authority != "CNIL" || vs[0].Content["natureOfBreach"] != "x" {
		t.Fatalf("versions unchanged: %+v %v", vs, err)
	}
	if vs, _ := db.ListReportVersions(ctx, "org_b", r.ID); len(vs) != 0 {
		t.Fatal("another organization's versions")
	}
	// Reminders are recorded once per report and threshold.
	rm := app.ReportReminder{ReportID: r.ID, Threshold: "24h", DueAt: due, SentAt: now, Emitted: true}
	if ok, err := db.RecordReminder(ctx, "org_a", rm); !ok || err != nil {
		t.Fatalf("first reminder: %v %v", ok, err)
	}
	if ok, err := db.RecordReminder(ctx, "org_a", rm); ok || err != nil {
		t.Fatalf("second reminder: %v %v", ok, err)
	}
}
