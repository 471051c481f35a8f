package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app/osv"
)

func openTB(tb testing.TB) *DB {
	tb.Helper()
	ctx := context.Background()
	db, err := OpenURL(ctx, testLocation(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	return db
}

// osvDump generates n records shaped like osv.dev's: one to three affected
// packages each (PyPI, npm, Debian), ranges with two to four events, a few
// listed versions, aliases and references; 2,000 distinct package names.
func osvDump(n int) []*osv.Vuln {
	ecos := []string{"PyPI", "npm", "Debian:12"}
	out := make([]*osv.Vuln, n)
	for i := range n {
		v := &osv.Vuln{ID: fmt.Sprintf("GHSA-%06d", i), Modified: time.Date(2024, 1, 1, 0, 0, i, 0, time.UTC), Aliases: []string{fmt.Sprintf("CVE-2024-%05d", i)},
			Summary: "generated record", CVSSVector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:N", CVSS: 9.1,
			References: []string{"https://example.org/advisory/" + fmt.Sprint(i), "https://example.org/fix/" + fmt.Sprint(i)}}
		for k := 0; k <= i%3; k++ {
			e := ecos[(i+k)%3]
			v.Affected = append(v.Affected, osv.Affected{Ecosystem: e, Name: fmt.Sprintf("pkg%d", (i*7+k)%2000),
				Ranges: []osv.Range{{Type: "ECOSYSTEM", Events: []osv.Event{{Introduced: "0"}, {Fixed: fmt.Sprintf("%d.%d.0", i%5+1, i%10)},
					{Introduced: "5.0"}, {Fixed: "5.2.1"}}}}, Versions: []string{"1.0.0", "1.1.0", "1.2.0"}})
		}
		out[i] = v
	}
	return out
}

func TestOSVStoreSaveLookupStatus(t *testing.T) {
	db := openTB(t)
	ctx := context.Background()
	dump := osvDump(30)
	c, err := db.SaveOSVVulns(ctx, dump, time.Now())
	if err != nil || c.Inserted != 30 {
		t.Fatalf("save: %+v %v", c, err)
	}
	c, err = db.SaveOSVVulns(ctx, dump[:5], time.Now())
	if err != nil || c.Unchanged != 5 {
		t.Fatalf("re-save: %+v %v", c, err)
	}
	later := *dump[0]
	later.Modified = later.Modified.Add(time.Hour)
	later.Affected = later.Affected[:1]
	later.Affected[0].Name = "renamed"
	if c, err = db.SaveOSVVulns(ctx, []*osv.Vuln{&later}, time.Now()); err != nil || c.Updated != 1 {
		t.Fatalf("update: %+v %v", c, err)
	}
	got, err := db.OSVVulnsFor(ctx, "PyPI", "renamed")
	if err != nil || len(got) != 1 || got[0].ID != later.ID || got[0].Aliases[0] != later.Aliases[0] || len(got[0].Affected[0].Ranges[0].Events) != 4 {
		t.Fatalf("lookup after update: %+v %v", got, err)
	}
	if old, _ := db.OSVVulnsFor(ctx, "PyPI", "pkg0"); len(old) != 0 {
		t.Errorf("the replaced record's old package is still found: %+v", old)
	}
	st, err := db.OSVStatus(ctx)
	if err != nil || st.Records != 30 || !st.Imported || len(st.Ecosystems) != 3 {
		t.Fatalf("status: %+v %v", st, err)
	}
}

// BenchmarkOSVImport stores a generated dump of 10,000 records in batches
// of 500, as `compliance pentest osv import` does.
func BenchmarkOSVImport(b *testing.B) {
	dump := osvDump(10000)
	for b.Loop() {
		b.StopTimer()
		db := openTB(b)
		b.StartTimer()
		for i := 0; i < len(dump); i += 500 {
			if _, err := db.SaveOSVVulns(context.Background(), dump[i:min(i+500, len(dump))], time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkOSVLookupPerBanner is the known-vulnerabilities check's cost
// for one banner against the 10,000-record dump: recognise the product,
// read its records, evaluate every range.
func BenchmarkOSVLookupPerBanner(b *testing.B) {
	db := openTB(b)
	ctx := context.Background()
	dump := osvDump(10000)
	for i := 0; i < len(dump); i += 500 {
		if _, err := db.SaveOSVVulns(ctx, dump[i:min(i+500, len(dump))], time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	hits := 0
	for b.Loop() {
		pkgs, _ := osv.Identify("gunicorn/1.5.0")
		for _, p := range pkgs {
			vs, err := db.OSVVulnsFor(ctx, p.Ecosystem, osv.NameKey(p.Ecosystem, "pkg42"))
			if err != nil {
				b.Fatal(err)
			}
			for _, v := range vs {
				for _, af := range v.Affected {
					if af.Affects(p) {
						hits++
					}
				}
			}
		}
	}
	if hits == 0 {
		b.Fatal("the benchmark matched nothing")
	}
}
