package app_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

func TestParseSearchQuery(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    string
		terms []string
		match string
	}{
		{"amazon", []string{"amazon"}, `{title body} : ("amazon"*)`},
		{"  Amazon  web ", []string{"Amazon", "web"}, `{title body} : ("Amazon" "web"*)`},
		{`"amazon" AND -web*`, []string{"amazon", "AND", "web"}, `{title body} : ("amazon" "AND" "web"*)`},
		{"ISO-27001 A.5.7", []string{"ISO", "27001", "A", "5", "7"}, `{title body} : ("ISO" "27001" "A" "5" "7"*)`},
		{"web WEB Web", []string{"web"}, `{title body} : ("web"*)`},
		{"Müller café", []string{"Müller", "café"}, `{title body} : ("Müller" "café"*)`},
		{`"*-:()^{}`, nil, ""},
		{"", nil, ""},
		{"a b c d e f g h i j k l m n", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"},
			`{title body} : ("a" "b" "c" "d" "e" "f" "g" "h" "i" "j" "k" "l"*)`},
	} {
		q := app.ParseSearchQuery(c.in)
		if !reflect.DeepEqual(q.Terms, c.terms) || q.Match() != c.match {
			t.Errorf("%q: terms %q match %q, want %q %q", c.in, q.Terms, q.Match(), c.terms, c.match)
		}
	}
}

func TestHighlightedSpans(t *testing.T) {
	t.Parallel()
	h := app.Highlighted{{Text: "Bob "}, {Text: "Müller", Match: true}, {Text: " and "}, {Text: "Mü", Match: true}}
	if h.String() != "Bob Müller and Mü" {
		t.Fatal(h.String())
	}
	if got := h.Spans(); !reflect.DeepEqual(got, [][2]int{{4, 10}, {15, 17}}) {
		t.Fatalf("spans %v", got)
	}
}

// FuzzSearchQuery runs arbitrary input through the query builder and a
// real search: the expression is made of quoted terms only, and the search
// answers hits or a validation error (empty or too long), never a
// database error.
func FuzzSearchQuery(f *testing.F) {
	for _, s := range []string{"amazon", `"`, `""`, "AND", "OR NOT", "a*", "*", "-x", "x:y", "{title}:x", "NEAR(a b, 2)", "^a",
		"(a OR b)", "\x00", "\xff", "\uE000a\uE001", "日本語", "e\u0301", "Müller", strings.Repeat("a", 201), `a"b"c`, "'; --"} {
		f.Add(s)
	}
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		f.Fatal(err)
	}
	a := app.New(db, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
	org, err := a.CreateOrganization(ctx, "Fuzz", app.PlanEnterprise)
	if err != nil {
		f.Fatal(err)
	}
	octx := app.SystemContext(ctx, org.ID)
	for _, n := range []string{"Amazon Web Services", `Quote "Co"`, "Müller AG", "日本語 KK"} {
		if _, err := a.CreateVendor(octx, app.VendorInput{Name: app.Ptr(n)}); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		q := app.ParseSearchQuery(in)
		m := q.Match()
		if q.Empty() != (m == "") {
			t.Fatalf("%q: empty %v but match %q", in, q.Empty(), m)
		}
		for _, term := range q.Terms {
			if term == "" || strings.ContainsAny(term, "\"*:(){}^-") || !utf8.ValidString(term) {
				t.Fatalf("%q: term %q", in, term)
			}
		}
		start := time.Now()
		res, err := a.Search(octx, app.SearchRequest{Query: in, Page: app.Page{Page: 1, PerPage: 10}})
		if d := time.Since(start); d > time.Second {
			t.Fatalf("search %q took %v", in, d)
		}
		if err != nil {
			var ve *app.ValidationError
			trimmed := strings.TrimSpace(in)
			if errors.As(err, &ve) && (trimmed == "" || utf8.RuneCountInString(trimmed) > app.MaxSearchQuery) {
				return
			}
			t.Fatalf("search %q: %v", in, err)
		}
		if len(res.Hits) > res.Total {
			t.Fatalf("%q: %d hits of %d", in, len(res.Hits), res.Total)
		}
	})
}
