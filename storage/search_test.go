package storage

import (
	"context"
	"io"
	"log/slog"
	"sort"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	assets "github.com/compliance-appliance/compliance/embed"
)

// TestSearchMigrationIndexesExistingRows: migration 0920 indexes the
// records a database already holds, with their owners, and leaves out
// archived ones.
func TestSearchMigrationIndexesExistingRows(t *testing.T) {
	t.Parallel()
	sqliteOnly(t, "runs the SQLite migrations' own text and the FTS5 index")
	ctx := context.Background()
	db := openUnmigrated(t)
	ms, err := loadMigrations(assets.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,
		applied_at TEXT NOT NULL) STRICT`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.version >= 920 {
			break
		}
		if _, err := db.w.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if _, err := db.w.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00.000Z')`, m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	// Creating people assigns the organization's required training: the
	// training tables must exist for the services of this binary.
	for _, m := range ms {
		if m.version != 970 {
			continue
		}
		if _, err := db.w.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if _, err := db.w.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00.000Z')`, m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	a := app.New(db, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
	org, err := a.CreateOrganization(ctx, "Acme", app.PlanEnterprise)
	if err != nil {
		t.Fatal(err)
	}
	sys := app.SystemContext(ctx, org.ID)
	emp, err := a.CreatePerson(sys, app.PersonCreate{Name: "Erin Example", Email: "erin@acme.test", Role: "employee"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.CreateVendor(sys, app.VendorInput{Name: app.Ptr("Kestrel Hosting"), AssigneeID: app.Some(emp.ID),
		SubProcessors: app.Some([]app.SubProcessor{{Name: "Osprey Backup", Country: "DE", Purpose: "Backups"}})})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := a.CreateVendor(sys, app.VendorInput{Name: app.Ptr("Kestrel Legacy")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.SetVendorArchived(sys, gone.ID, true); err != nil {
		t.Fatal(err)
	}
	pol, err := a.CreatePolicy(sys, app.PolicyInput{Name: app.Ptr("Kestrel policy"), Content: app.Ptr("Published words.")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.PublishPolicy(sys, pol.ID, app.PublishInput{Changelog: "v1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UpdatePolicy(sys, pol.ID, app.PolicyInput{Content: app.Ptr("Draft words.")}); err != nil {
		t.Fatal(err)
	}
	rk, err := a.CreateRisk(sys, app.RiskInput{Title: app.Ptr("Kestrel outage"), Category: app.Ptr("operations"),
		InherentProbability: app.Ptr("possible"), InherentImpact: app.Ptr("major")})
	if err != nil {
		t.Fatal(err)
	}
	fd, err := a.CreateFinding(sys, app.FindingCreate{Title: app.Ptr("Kestrel finding"), Severity: app.Ptr("low")})
	if err != nil {
		t.Fatal(err)
	}
	kb, err := a.CreateKBEntry(sys, app.KBEntryInput{Question: app.Ptr("Kestrel question?"), Answer: app.Ptr("Yes."), Tags: app.Some([]string{"falcon"})})
	if err != nil {
		t.Fatal(err)
	}
	q, err := a.CreateQuestionnaire(sys, app.QuestionnaireCreate{Name: "Kestrel review", Questions: []app.QuestionInput{{Question: "Q?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := a.Search(sys, app.SearchRequest{Query: "kestrel", Page: app.Page{Page: 1, PerPage: 50}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range res.Hits {
		got = append(got, h.Type+" "+h.ID)
	}
	sort.Strings(got)
	want := []string{"finding " + fd.ID, "kb " + kb.ID, "policy " + pol.ID, "questionnaire " + q.ID, "risk " + rk.ID, "vendor " + v.ID}
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("hits %v, want %v", got, want)
	}
	for query, want := range map[string]string{"osprey": v.ID, "falcon": kb.ID, "published": pol.ID, "draft": "", "erin": emp.ID} {
		res, err := a.Search(sys, app.SearchRequest{Query: query, Page: app.Page{Page: 1, PerPage: 10}})
		if err != nil {
			t.Fatal(err)
		}
		if want == "" && len(res.Hits) != 0 || want != "" && (len(res.Hits) != 1 || res.Hits[0].ID != want) {
			t.Errorf("%q: %+v", query, res.Hits)
		}
	}
	// The assignee's token came along: the employee finds the vendor.
	ectx := app.WithPrincipal(ctx, &app.Principal{OrgID: org.ID, Role: app.RoleEmployee, AuthType: app.AuthSession, UserID: emp.ID})
	res, err = a.Search(ectx, app.SearchRequest{Query: "kestrel", Page: app.Page{Page: 1, PerPage: 10}})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, h := range res.Hits {
		got = append(got, h.Type)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "policy,vendor" {
		t.Fatalf("the employee finds %v, want the published policy and their vendor", got)
	}
}

func TestMarked(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                               "",
		"plain":                          "plain",
		"\uE000Bob\uE001 M\uE000ü\uE001": "[Bob] M[ü]",
		"a\uE000b\uE001\uE000c\uE001d":   "a[bc]d",
		"\uE001stray \uE000open":         "stray [open]",
	} {
		var b strings.Builder
		for _, p := range marked(in) {
			if p.Match {
				b.WriteString("[" + p.Text + "]")
			} else {
				b.WriteString(p.Text)
			}
		}
		if b.String() != want {
			t.Errorf("%q: %q, want %q", in, b.String(), want)
		}
	}
}
