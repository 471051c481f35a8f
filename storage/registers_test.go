package storage

import (
	"context"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

func testOrg(t *testing.T, db *DB, slug string) string {
	t.Helper()
	now := time.Now().UTC()
	o := &app.Organization{ID: app.NewID(app.PrefixOrganization), Name: slug, Slug: slug, Plan: "professional", CreatedAt: now, UpdatedAt: now}
	if err := db.CreateOrganization(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o.ID
}

func testFinding(t *testing.T, db *DB, org, status, severity string, controls ...string) string {
	t.Helper()
	now := time.Now().UTC()
	f := &app.Finding{ID: app.NewID(app.PrefixFinding), Type: "soc2", Status: status, Severity: severity, Content: "c",
		Scope: app.Ptr("security"), LinkedControlIDs: controls, CreatedByType: "system", CreatedByID: "system", CreatedAt: now, UpdatedAt: now}
	if err := db.InTx(context.Background(), func(ctx context.Context) error { return db.CreateFinding(ctx, org, f) }); err != nil {
		t.Fatal(err)
	}
	return f.ID
}

func testControl(t *testing.T, db *DB, org string) string {
	t.Helper()
	now := time.Now().UTC()
	c := &app.Control{ID: app.NewID(app.PrefixControl), Name: "c", Status: app.ControlNotStarted, CreatedAt: now, UpdatedAt: now}
	if err := db.CreateControl(context.Background(), org, c); err != nil {
		t.Fatal(err)
	}
	return c.ID
}

func TestMigrateRegistersTwice(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	applied, err := db.Migrate(context.Background())
	if err != nil || len(applied) != 0 {
		t.Fatalf("second migrate applied %v, err %v", applied, err)
	}
}

func TestOpenFindingsByControl(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	ctx := context.Background()
	org, other := testOrg(t, db, "a"), testOrg(t, db, "b")
	c1, c2, oc := testControl(t, db, org), testControl(t, db, org), testControl(t, db, other)
	open := testFinding(t, db, org, "open", "high", c1, c2)
	review := testFinding(t, db, org, "in_review", "low", c1)
	testFinding(t, db, org, "resolved", "critical", c1)
	testFinding(t, db, org, "closed", "critical", c2)
	testFinding(t, db, other, "open", "critical", oc)

	got, err := db.OpenFindingsByControl(ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[c1]) != 2 || len(got[c2]) != 1 || got[c2][0] != (app.OpenFinding{ID: open, Severity: "high", Status: "open", Title: got[c2][0].Title}) {
		t.Fatalf("open findings by control = %v", got)
	}
	if got[c1][1].ID != review || got[oc] != nil {
		t.Errorf("open findings by control = %v", got)
	}
	f, err := db.GetFinding(ctx, org, open)
	if err != nil || len(f.LinkedControlIDs) != 2 || f.LinkedControlIDs[0] != c1 {
		t.Errorf("linked controls %v err %v", f.LinkedControlIDs, err)
	}
	if _, err := db.GetFinding(ctx, other, open); err != app.ErrNotFound {
		t.Errorf("another organization's finding: %v", err)
	}
}

func TestEntityExists(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	ctx := context.Background()
	org, other := testOrg(t, db, "a"), testOrg(t, db, "b")
	f := testFinding(t, db, org, "open", "low")
	c := testControl(t, db, org)
	for _, tc := range []struct {
		typ, id, org string
		want         bool
	}{
		{app.EntityFinding, f, org, true},
		{app.EntityFinding, f, other, false},
		{app.EntityControl, c, org, true},
		{app.EntityControl, f, org, false},
		{"findings; DROP TABLE findings", f, org, false},
		{app.EntityRisk, "rsk_nope", org, false},
	} {
		got, err := db.EntityExists(ctx, tc.org, tc.typ, tc.id, "")
		if err != nil || got != tc.want {
			t.Errorf("EntityExists(%s, %s) = %v, %v; want %v", tc.typ, tc.id, got, err, tc.want)
		}
	}
	// Every allowlisted type has a working query.
	for _, typ := range app.AttachmentEntityTypes {
		if _, err := db.EntityExists(ctx, org, typ, "x", ""); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
		if _, err := db.EntityExists(ctx, org, typ, "x", "usr_x"); err != nil {
			t.Errorf("%s assigned: %v", typ, err)
		}
	}
}
