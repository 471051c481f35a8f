package storage

import (
	"context"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

func openTestDB(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := OpenURL(ctx, testLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if applied, err := db.Migrate(ctx); err != nil || len(applied) != 0 {
		t.Fatalf("a second migrate applied %v (%v)", applied, err)
	}
	return db
}

func knowledgeTestOrg(t *testing.T, db *DB, id string) {
	t.Helper()
	now := time.Now().UTC()
	if err := db.CreateOrganization(context.Background(), &app.Organization{ID: id, Name: id, Slug: id, Plan: app.PlanProfessional,
		CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

// TestKnowledgeIndexIsolationAndSources checks that the full-text index
// keeps organizations apart, follows entry updates and deletes, and that
// source documents never collide with entries.
func TestKnowledgeIndexIsolationAndSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t)
	knowledgeTestOrg(t, db, "org_a")
	knowledgeTestOrg(t, db, "org_b")
	now := time.Now().UTC()
	entry := func(org, id, q string) *app.KBEntry {
		e := &app.KBEntry{ID: id, Question: q, Answer: "yes", Tags: []string{"t"}, CreatedAt: now, UpdatedAt: now}
		if err := db.CreateKBEntries(ctx, org, []*app.KBEntry{e}); err != nil {
			t.Fatal(err)
		}
		return e
	}
	a1 := entry("org_a", "kbe_a1", "Do you encrypt backups?")
	entry("org_b", "kbe_b1", "Do you encrypt laptops?")
	count := func(org, match string) int {
		n, err := db.CountKBMatches(ctx, org, match)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count("org_a", `"encrypt"`) != 1 || count("org_b", `"encrypt"`) != 1 || count("org_a", `"laptops"`) != 0 {
		t.Fatal("organizations share the index")
	}
	hits, err := db.SearchKB(ctx, "org_a", `"encryption"`, 10, 0)
	if err != nil || len(hits) != 1 || hits[0].SourceID != "kbe_a1" || hits[0].Score <= 0 {
		t.Fatalf("hits %+v, %v", hits, err)
	}

	docs := []app.KnowledgeDocument{{ID: "pol_1", Name: "Backup Policy", Title: "Backup policy", Text: "Backups are encrypted."},
		{ID: "pol_2", Name: "Access Policy", Title: "Access", Text: "MFA everywhere."}}
	if err := db.ReplaceKBSource(ctx, "org_a", "policy", docs); err != nil {
		t.Fatal(err)
	}
	// An entry created after source documents gets its own rowid.
	entry("org_a", "kbe_a2", "Are backups tested?")
	if err := db.ReplaceKBSource(ctx, "org_a", "policy", docs[:1]); err != nil {
		t.Fatal(err)
	}
	if n := count("org_a", `"backups"`); n != 3 {
		t.Fatalf("backups matches %d, want 3", n)
	}
	if count("org_a", `"mfa"`) != 0 {
		t.Fatal("a withdrawn source document is still indexed")
	}
	if err := db.ReplaceKBSource(ctx, "org_a", app.SourceTypeEntry, nil); err == nil {
		t.Fatal("the entry source type must be reserved")
	}

	a1.Question, a1.UpdatedAt = "Is there a firewall?", now
	if err := db.UpdateKBEntry(ctx, "org_a", a1); err != nil {
		t.Fatal(err)
	}
	if count("org_a", `"firewall"`) != 1 || count("org_a", `"encrypt"`) != 1 {
		t.Fatal("the index does not follow the update")
	}
	if err := db.UpdateKBEntry(ctx, "org_b", a1); err != app.ErrNotFound {
		t.Fatalf("another organization's update: %v", err)
	}
	if err := db.DeleteKBEntry(ctx, "org_a", "kbe_a1"); err != nil {
		t.Fatal(err)
	}
	if count("org_a", `"firewall"`) != 0 {
		t.Fatal("a deleted entry is still indexed")
	}
	if err := db.DeleteKBEntry(ctx, "org_a", "kbe_b1"); err != app.ErrNotFound {
		t.Fatalf("deleting another organization's entry: %v", err)
	}
}
