package storage

import (
	"context"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestPublishedVersionsAreImmutable proves the database itself refuses to
// change or remove a published policy version or a saved context version.
func TestPublishedVersionsAreImmutable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := OpenURL(ctx, testLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if applied, err := db.Migrate(ctx); err != nil || len(applied) != 0 {
		t.Fatalf("second migrate: %v %v", applied, err)
	}
	a := app.New(db, nil, nil, app.Config{})
	o, err := a.CreateOrganization(ctx, "Acme", "professional")
	if err != nil {
		t.Fatal(err)
	}
	sys := app.SystemContext(ctx, o.ID)
	p, err := a.CreatePolicy(sys, app.PolicyInput{Name: app.Ptr("P"), Content: app.Ptr("text")})
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.PublishPolicy(sys, p.ID, app.PublishInput{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.UpdateContext(sys, app.ContextPatch{Description: app.Ptr("d")}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE policy_versions SET content = 'tampered' WHERE id = '` + v.ID + `'`,
		`DELETE FROM policy_versions WHERE id = '` + v.ID + `'`,
		`UPDATE context_versions SET document = '{}'`,
	} {
		_, err := db.w.ExecContext(ctx, q)
		if err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("%s: err %v, want the immutability trigger", q, err)
		}
	}
	got, err := db.GetPolicyVersion(ctx, o.ID, p.ID, v.ID, 0)
	if err != nil || got.Content != "text" {
		t.Fatalf("version after tampering attempts: %+v %v", got, err)
	}
	// Two versions cannot share a number.
	dup := *v
	dup.ID = app.NewID(app.PrefixPolicyVersion)
	if err := db.CreatePolicyVersion(ctx, o.ID, &dup); err == nil {
		t.Fatal("a second version 1 must be refused")
	}
}
