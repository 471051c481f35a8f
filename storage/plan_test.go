package storage_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/bench"
	"github.com/compliance-appliance/compliance/storage"
)

// planReads are the read paths whose every query the plan test checks. A
// resource that lands adds its list and get calls here (with the filters
// its list accepts); the test then proves each of its queries.
var planReads = []struct {
	name string
	run  func(ctx context.Context, db *storage.DB, org *bench.Org) error
}{
	{"vendor lists", func(ctx context.Context, db *storage.DB, org *bench.Org) error {
		p := app.Page{Page: 2, PerPage: 25}
		person := org.IDs["person"][0]
		for _, f := range []app.VendorFilter{
			{}, {Archived: true}, {Criticality: "critical"}, {Category: "cloud"}, {Country: "DE", ProcessesPersonalData: app.Ptr(true)},
			{ICTService: app.Ptr(false), DPAStatus: "signed"}, {Status: "assessed", Sort: "name"}, {Sort: "-riskScore"},
			{Sort: "-createdAt"}, {Sort: "updatedAt"}, {Sort: "nextReviewDue"}, {AssigneeID: person}, {Search: "cloud"},
		} {
			f.Page = p
			if _, err := db.ListVendors(ctx, org.ID, f); err != nil {
				return err
			}
		}
		_, err := db.GetVendor(ctx, org.ID, org.IDs["vendor"][0])
		return err
	}},
	{"people and devices", func(ctx context.Context, db *storage.DB, org *bench.Org) error {
		p := app.Page{Page: 1, PerPage: 50}
		for _, f := range []app.PersonFilter{{Page: p}, {Role: "employee", Page: p}, {Inactive: true, Page: p}, {IDs: org.IDs["person"][:1], Page: p}} {
			if _, err := db.ListPeople(ctx, org.ID, f); err != nil {
				return err
			}
		}
		if _, err := db.GetPerson(ctx, org.ID, org.IDs["person"][0]); err != nil {
			return err
		}
		for _, f := range []app.DeviceFilter{{Page: p}, {PersonID: org.IDs["person"][0], Page: p}} {
			if _, err := db.ListDevices(ctx, org.ID, f); err != nil {
				return err
			}
		}
		return nil
	}},
	{"incidents", func(ctx context.Context, db *storage.DB, org *bench.Org) error {
		// One incident with a report, so every list query runs past its count.
		now := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
		inc := &app.Incident{ID: app.NewID(app.PrefixIncident), Title: "Plan", Type: app.IncidentSecurity, Status: app.IncidentOpen, Severity: "low",
			DetectedAt: now, AwareAt: now, ConfirmedRegimes: []string{app.RegimeNIS2}, ReportedBy: app.ActorRef{Type: "system", ID: "system"},
			CreatedAt: now, UpdatedAt: now}
		if err := db.CreateIncident(ctx, org.ID, inc); err != nil {
			return err
		}
		due := now.Add(24 * time.Hour)
		r := &app.IncidentReport{ID: app.NewID(app.PrefixIncidentReport), IncidentID: inc.ID, Regime: app.RegimeNIS2, Kind: app.ReportEarlyWarning,
			Status: app.ReportPending, DueAt: &due, Basis: "NIS2 Art. 23(4)(a)", CreatedAt: now, UpdatedAt: now}
		if err := db.CreateIncidentReport(ctx, org.ID, r); err != nil {
			return err
		}
		p := app.Page{Page: 1, PerPage: 50}
		for _, f := range []app.IncidentFilter{{}, {Status: "open"}, {Type: app.IncidentSecurity}, {Regime: app.RegimeNIS2},
			{Overdue: app.Ptr(true), Now: now}, {Overdue: app.Ptr(false), Now: now}, {ReportedBy: "system"}} {
			f.Page = p
			if _, err := db.ListIncidents(ctx, org.ID, f); err != nil {
				return err
			}
		}
		if _, err := db.GetIncident(ctx, org.ID, inc.ID); err != nil {
			return err
		}
		if _, err := db.ListIncidentReports(ctx, org.ID, []string{inc.ID}); err != nil {
			return err
		}
		if _, err := db.GetIncidentReport(ctx, org.ID, inc.ID, r.ID); err != nil {
			return err
		}
		if _, err := db.ListReportVersions(ctx, org.ID, r.ID); err != nil {
			return err
		}
		if _, err := db.ListTimeline(ctx, org.ID, inc.ID, p); err != nil {
			return err
		}
		if _, err := db.DueIncidentReports(ctx, org.ID, due); err != nil {
			return err
		}
		if _, _, err := db.UpcomingIncidentReports(ctx, org.ID, 10); err != nil {
			return err
		}
		if _, err := db.OpenIncidentIDs(ctx, org.ID); err != nil {
			return err
		}
		if _, err := db.GetIncidentProfile(ctx, org.ID); err != nil && err != app.ErrNotFound {
			return err
		}
		return nil
	}},
	{"credentials and idempotency", func(ctx context.Context, db *storage.DB, org *bench.Org) error {
		if _, _, err := db.FindAPIKeyByHash(ctx, app.HashKey(org.Key)); err != nil {
			return err
		}
		if _, err := db.ListAPIKeys(ctx, org.ID); err != nil {
			return err
		}
		_, err := db.GetIdempotency(ctx, org.ID, "k")
		if err != nil && err != app.ErrNotFound && !strings.Contains(err.Error(), "not found") {
			return err
		}
		return nil
	}},
}

// orgTables are tables whose rows belong to one organization: a read of
// them must reach rows through an index on organization_id, never a scan.
var orgTables = regexp.MustCompile(`^(SCAN|SEARCH) (\w+)`)

// TestQueryPlans runs every read path over a dataset of realistic size with
// fresh statistics (as the nightly PRAGMA optimize leaves them), then asks
// SQLite for the plan of every query those paths ran: no query scans a
// table, every search of an organization's table leads with
// organization_id (or the primary key), vendor counts and the ids of a
// vendor page read only index entries (migration 0800), and the default
// vendor list needs no sort.
func TestQueryPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ds, err := bench.Seed(ctx, db, app.New(db, nil, nil, app.Config{}), 4, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Statistics as the nightly optimize leaves them on an aged database.
	if err := db.Optimize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Analyze(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range planReads {
		if err := r.run(ctx, db, ds.Orgs[1]); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
	}
	queries := db.ReadQueries()
	if len(queries) < 10 {
		t.Fatalf("only %d queries recorded", len(queries))
	}
	for _, q := range queries {
		plan, err := db.ExplainQueryPlan(ctx, q)
		if err != nil {
			t.Fatalf("explain %s: %v", q, err)
		}
		text := strings.Join(plan, "\n")
		if testing.Verbose() {
			t.Logf("%s\n  %s", oneLine(q), strings.Join(plan, "\n  "))
		}
		for _, line := range plan {
			m := orgTables.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			switch {
			case m[1] == "SCAN" && m[2] == "json_each":
				// A bound JSON array of ids (a page of a search), not a table.
			case m[1] == "SCAN":
				t.Errorf("query scans %s:\n%s\nplan:\n%s", m[2], oneLine(q), text)
			case m[2] == "u" || m[2] == "users" || m[2] == "organizations":
				// users by primary key (joined from memberships); organizations by id.
			case !strings.Contains(line, "organization_id=") && !strings.Contains(line, "PRIMARY KEY") &&
				!strings.Contains(line, "(hash=") && !strings.Contains(line, "(id=") && !strings.Contains(line, "(rowid="):
				t.Errorf("query searches %s without organization_id:\n%s\nplan:\n%s", m[2], oneLine(q), text)
			}
		}
		if strings.HasPrefix(q, "SELECT count(*) FROM vendors WHERE") && !strings.Contains(q, "instr(") && !strings.Contains(text, "COVERING INDEX") {
			t.Errorf("vendor count reads table rows instead of a covering index:\n%s\nplan:\n%s", oneLine(q), text)
		}
		if strings.Contains(q, "FROM vendors WHERE") && strings.Contains(q, "ORDER BY id LIMIT ? OFFSET ?") {
			if strings.Contains(text, "TEMP B-TREE") {
				t.Errorf("default vendor list sorts instead of reading the index in order:\n%s\nplan:\n%s", oneLine(q), text)
			}
			if !strings.Contains(q, "instr(") && !strings.Contains(text, "COVERING INDEX") {
				t.Errorf("vendor page ids read table rows instead of a covering index:\n%s\nplan:\n%s", oneLine(q), text)
			}
		}
	}
	t.Logf("%d queries proven", len(queries))
}

func oneLine(q string) string { return strings.Join(strings.Fields(q), " ") }
