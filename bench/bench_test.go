package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// TestLoadSmoke runs the whole load measurement on a tiny dataset: seeding,
// every operation answering its wanted status, the bare limit and the report.
func TestLoadSmoke(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	err := Load(context.Background(), LoadConfig{Orgs: 2, Scale: 0.02, Concurrency: 4, Duration: 300 * time.Millisecond,
		DataDir: t.TempDir(), Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	report := out.String()
	for _, o := range Ops {
		if !strings.Contains(report, o.Name) {
			t.Errorf("report lacks %s:\n%s", o.Name, report)
		}
	}
	if strings.Contains(report, "first error of") {
		t.Errorf("operations answered unexpected statuses:\n%s", report)
	}
	if !strings.Contains(report, "fraction of the bare limit") {
		t.Errorf("report lacks the bare limit:\n%s", report)
	}
}

// TestVerifyOutboxReportsMissing proves the outbox check finds a write whose
// event is absent and accepts one whose event is present.
func TestVerifyOutboxReportsMissing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	dd := storage.DataDir{Root: dir}
	if err := dd.Ensure(); err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(ctx, dd.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	a := app.New(db, nil, nil, app.Config{})
	o, err := a.CreateOrganization(ctx, "Outbox", app.PlanEnterprise)
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.CreateVendor(app.SystemContext(ctx, o.ID), app.VendorInput{Name: app.Ptr("present")})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	missing := Ack{Kind: "vendor", ID: app.NewID(app.PrefixVendor), Name: "missing"}
	lost, err := verifyOutbox(ctx, &CrashEnv{DataDir: dir}, []Ack{{Kind: "vendor", ID: v.ID, Name: "present"}, missing})
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) != 1 || lost[0].ID != missing.ID {
		t.Fatalf("lost = %+v, want only %s", lost, missing.ID)
	}
}
