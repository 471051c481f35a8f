package app

import (
	"testing"
	"time"
)

func TestBuiltinCatalog(t *testing.T) {
	t.Parallel()
	c, err := BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	fws := c.Frameworks()
	if len(fws) != 16 {
		t.Fatalf("%d frameworks, want 16", len(fws))
	}
	ids := map[string]bool{}
	for _, f := range fws {
		if ids[f.ID] || !HasPrefix(f.ID, PrefixFramework) {
			t.Fatalf("framework id %s duplicated or malformed", f.ID)
		}
		ids[f.ID] = true
		if f.ID != FrameworkIDFor(f.Slug) {
			t.Fatalf("%s: id is not stable", f.Slug)
		}
		if f.License == "" || len(f.Sources) == 0 || f.Notes == "" || f.Coverage == "" {
			t.Fatalf("%s lacks licence, source, notes or coverage", f.Slug)
		}
		if (f.Slug == "bafin-marisk" || f.Slug == "nen7510") != (f.Coverage == CoverageOutline) {
			t.Fatalf("%s coverage %s", f.Slug, f.Coverage)
		}
		reqs := c.Requirements(f.ID)
		if len(reqs) != f.RequirementCount || f.AssessableCount == 0 {
			t.Fatalf("%s: %d requirements, count %d, assessable %d", f.Slug, len(reqs), f.RequirementCount, f.AssessableCount)
		}
		refs := map[string]bool{}
		for i, r := range reqs {
			if refs[r.Ref] {
				t.Fatalf("%s: ref %q twice", f.Slug, r.Ref)
			}
			refs[r.Ref] = true
			if r.ID != RequirementIDFor(f.Slug, r.Ref) || ids[r.ID] {
				t.Fatalf("%s %s: id %s", f.Slug, r.Ref, r.ID)
			}
			ids[r.ID] = true
			if r.Position != i || r.FrameworkID != f.ID {
				t.Fatalf("%s %s: position %d framework %s", f.Slug, r.Ref, r.Position, r.FrameworkID)
			}
			if r.ParentRef != "" && r.ParentID == nil && refs[r.ParentRef] {
				t.Fatalf("%s %s: parent %s not linked", f.Slug, r.Ref, r.ParentRef)
			}
		}
	}
	if c.MappingPairs() < 5000 {
		t.Fatalf("only %d mapping pairs", c.MappingPairs())
	}
	// The HIPAA CFR paragraphs and the NIS2 implementing regulation are
	// grouped under their own nodes.
	for slug, group := range map[string]string{"hipaa": "45 CFR 164.306-164.316", "nis2": "IR 2024/2690"} {
		r, _ := c.requirement(RequirementIDFor(slug, group))
		if r == nil || r.Assessable {
			t.Fatalf("%s: group node %q missing", slug, group)
		}
	}
	// A SOC 2 point of focus maps to ISO 27001 Annex A controls.
	soc := RequirementIDFor("soc2-2017", "CC6.1.1")
	found := false
	for _, rel := range c.related[soc] {
		_, b := c.requirement(rel)
		found = found || b.fw.Slug == "iso27001-2022"
	}
	if !found {
		t.Fatalf("CC6.1.1 has no ISO 27001 mapping: %v", c.related[soc])
	}
}

func TestAddInterval(t *testing.T) {
	t.Parallel()
	d := func(s string) time.Time { x, _ := time.Parse("2006-01-02", s); return x }
	for _, c := range []struct{ from, rec, want string }{
		{"2026-01-31", "monthly", "2026-02-28"},
		{"2028-01-31", "monthly", "2028-02-29"},
		{"2026-11-30", "quarterly", "2027-02-28"},
		{"2028-02-29", "yearly", "2029-02-28"},
		{"2026-03-15", "yearly", "2027-03-15"},
	} {
		if got := addInterval(d(c.from), c.rec).Format("2006-01-02"); got != c.want {
			t.Errorf("%s + %s = %s, want %s", c.from, c.rec, got, c.want)
		}
	}
}

func TestCleanFilename(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`..\..\x.pdf`: "x.pdf", "/etc/passwd": "passwd", "": "evidence", "a\x00b\"c.txt": "abc.txt", "..": "evidence"} {
		if got := cleanFilename(in); got != want {
			t.Errorf("cleanFilename(%q) = %q, want %q", in, got, want)
		}
	}
}
