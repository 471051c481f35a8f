package storage_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage/storagetest"
)

// The search behaviour both stores promise (run with
// COMPLIANCE_TEST_STORE=postgres for PostgreSQL): the right hits, a title
// match above a body match, the last word as a prefix, diacritics and
// punctuation as FTS5 treats them, marks on the original text, one
// organization's records only. Scores are compared within a query only:
// SQLite ranks by BM25, PostgreSQL by ts_rank.

func searchApp(t *testing.T) (*app.App, context.Context, context.Context) {
	t.Helper()
	db := storagetest.Open(t)
	a := app.New(db, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
	ctx := context.Background()
	var ctxs []context.Context
	for _, name := range []string{"Searcher", "Other"} {
		org, err := a.CreateOrganization(ctx, name, app.PlanEnterprise)
		if err != nil {
			t.Fatal(err)
		}
		ctxs = append(ctxs, app.SystemContext(ctx, org.ID))
	}
	return a, ctxs[0], ctxs[1]
}

func vendor(t *testing.T, a *app.App, ctx context.Context, name, description, email string) string {
	t.Helper()
	in := app.VendorInput{Name: app.Ptr(name), Description: app.Ptr(description)}
	if email != "" {
		in.ContactEmail = app.Opt[string]{Set: true, Value: email}
	}
	v, err := a.CreateVendor(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	return v.ID
}

func search(t *testing.T, a *app.App, ctx context.Context, q string) *app.SearchResult {
	t.Helper()
	res, err := a.Search(ctx, app.SearchRequest{Query: q, Types: []string{app.SearchVendor}, Page: app.Page{Page: 1, PerPage: 20}})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return res
}

func hitIDs(res *app.SearchResult) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.ID)
	}
	return out
}

func TestSearchBehaviourOnEveryStore(t *testing.T) {
	t.Parallel()
	a, ctx, other := searchApp(t)
	inBody := vendor(t, a, ctx, "Northwind Traders", "They handle encryption of our backups.", "")
	inTitle := vendor(t, a, ctx, "Encryption Partners", "A consultancy.", "")
	mueller := vendor(t, a, ctx, "Müller-Lüdenscheidt AG", "Zürich office", "bob@example.com")
	vendor(t, a, other, "Encryption Elsewhere", "encryption encryption", "")

	res := search(t, a, ctx, "encryption")
	if got := hitIDs(res); len(got) != 2 || got[0] != inTitle || got[1] != inBody || res.Total != 2 {
		t.Fatalf("encryption: hits %v (total %d), want the title match %s before the body match %s", got, res.Total, inTitle, inBody)
	}
	if res.Hits[0].Score <= res.Hits[1].Score {
		t.Errorf("scores %v, %v: the title match should score higher", res.Hits[0].Score, res.Hits[1].Score)
	}
	if spans := res.Hits[0].Title.Spans(); len(spans) != 1 || spans[0] != [2]int{0, 10} {
		t.Errorf("title marks %v of %q", spans, res.Hits[0].Title.String())
	}
	if s := res.Hits[1].Snippet; s.String() == "" || len(s.Spans()) == 0 {
		t.Errorf("body snippet %q has no mark", s.String())
	}
	// Stemming and the last word as a prefix.
	if got := hitIDs(search(t, a, ctx, "encrypted")); len(got) != 2 {
		t.Errorf("encrypted: hits %v, want both encryption records", got)
	}
	if got := hitIDs(search(t, a, ctx, "northwind tra")); len(got) != 1 || got[0] != inBody {
		t.Errorf("northwind tra: hits %v, want %s", got, inBody)
	}
	if got := hitIDs(search(t, a, ctx, "tra northwind")); len(got) != 0 {
		t.Errorf("tra northwind: hits %v, want none (only the last word is a prefix)", got)
	}
	// Diacritics either way, the original text kept in the marks.
	for _, q := range []string{"muller", "MÜLLER", "zurich", "ludensch"} {
		res := search(t, a, ctx, q)
		if got := hitIDs(res); len(got) != 1 || got[0] != mueller {
			t.Errorf("%s: hits %v, want %s", q, got, mueller)
		}
	}
	if h := search(t, a, ctx, "muller").Hits; len(h) == 1 {
		if h[0].Title.String() != "Müller-Lüdenscheidt AG" || len(h[0].Title.Spans()) != 1 || h[0].Title.Spans()[0] != [2]int{0, 6} {
			t.Errorf("title %q marked at %v, want Müller marked", h[0].Title.String(), h[0].Title.Spans())
		}
	}
	// Punctuation splits words as FTS5's unicode61 does.
	res = search(t, a, ctx, "example")
	if got := hitIDs(res); len(got) != 1 || got[0] != mueller {
		t.Fatalf("example: hits %v, want %s", got, mueller)
	}
	found := false
	for _, p := range res.Hits[0].Snippet {
		found = found || p.Match && p.Text == "example"
	}
	if !found {
		t.Errorf("snippet %+v does not mark example", res.Hits[0].Snippet)
	}
	// Query syntax of either engine is plain text.
	for _, q := range []string{`"encryption`, `encryption:*`, `encryption & !x`, `'; DROP TABLE search_docs; --`, `(a | b) <-> c`, `\`} {
		if _, err := a.Search(ctx, app.SearchRequest{Query: q, Page: app.Page{Page: 1, PerPage: 5}}); err != nil {
			t.Errorf("search %q: %v", q, err)
		}
	}
	// Counts per type and edits follow the record.
	if _, err := a.UpdateVendor(ctx, inTitle, app.VendorInput{Name: app.Ptr("Cipher Partners")}); err != nil {
		t.Fatal(err)
	}
	if got := hitIDs(search(t, a, ctx, "encryption")); len(got) != 1 || got[0] != inBody {
		t.Errorf("after the rename: hits %v, want %s", got, inBody)
	}
	if got := hitIDs(search(t, a, ctx, "cipher")); len(got) != 1 || got[0] != inTitle {
		t.Errorf("cipher: hits %v, want %s", got, inTitle)
	}
}

func TestKnowledgeSearchOnEveryStore(t *testing.T) {
	t.Parallel()
	a, ctx, other := searchApp(t)
	add := func(ctx context.Context, q, ans string, tags ...string) string {
		e, err := a.CreateKBEntry(ctx, app.KBEntryInput{Question: app.Ptr(q), Answer: app.Ptr(ans), Tags: app.Opt[[]string]{Set: true, Value: tags}})
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	inQuestion := add(ctx, "Do you encrypt laptops?", "Yes, every disk, with the platform's tools.")
	inAnswer := add(ctx, "How are devices managed?", "Laptops are enrolled and their disks encrypted.")
	add(ctx, "Do you have a pentest?", "Yearly.", "testing")
	add(other, "Do you encrypt laptops?", "Another organization's answer.")

	res, err := a.SearchKB(ctx, "encrypt laptops", app.Page{Page: 1, PerPage: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 2 || len(res.Items) != 2 || res.Items[0].SourceID != inQuestion || res.Items[1].SourceID != inAnswer {
		t.Fatalf("hits %+v (total %d), want %s (question) before %s (answer)", res.Items, res.Total, inQuestion, inAnswer)
	}
	if res.Items[0].Score <= res.Items[1].Score || res.Items[1].Score <= 0 {
		t.Errorf("scores %v, %v", res.Items[0].Score, res.Items[1].Score)
	}
	if res, err := a.SearchKB(ctx, "Tésting", app.Page{Page: 1, PerPage: 10}); err != nil || res.Total != 1 {
		t.Errorf("a tag with a diacritic: %+v, %v", res, err)
	}
}
