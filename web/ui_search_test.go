package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestUISearchPage: the search box's page groups hits by type with the
// matched words marked, escapes every text, links each hit to its page,
// pages through one type, and offers an employee only what they may see.
func TestUISearchPage(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	ctx := e.ctx(f.org)
	evil, err := e.app.CreateVendor(ctx, app.VendorInput{Name: app.Ptr(`<script>alert(1)</script> Evil "Hosting" & Co`),
		Description: app.Ptr(`<img src=x onerror=alert(2)> hosting of <b>things</b>`)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if _, err := e.app.CreateVendor(ctx, app.VendorInput{Name: app.Ptr("Hosting partner " + string(rune('A'+i)))}); err != nil {
			t.Fatal(err)
		}
	}
	b := e.browser()
	b.signIn(f.owner)

	// The header's box is on every page.
	wantBody(t, b.get("/vendors"), `<form class="search" role="search" method="get" action="/search">`, `name="q"`)

	rec := b.get("/search?q=" + url.QueryEscape("hosting"))
	wantStatus(t, rec, http.StatusOK)
	body := rec.Body.String()
	wantBody(t, rec, `<h2 id="g-vendor">Vendors <span class="muted small">(14)</span></h2>`,
		`href="/search?q=hosting&amp;types=vendor">Show all 14 in Vendors</a>`,
		`value="hosting"`, // the header box keeps the query
		`14 results for “hosting”`)
	if n := strings.Count(body, `<li><a href="/vendors/`); n != 5 {
		t.Fatalf("%d vendor hits on the grouped page, want 5", n)
	}
	wantBody(t, b.get("/search?q=hosting+gmbh"), `<a href="/vendors/`+f.vendor+`"><mark>Hosting</mark> <mark>GmbH</mark></a>`)
	// Every text is escaped; only the marks are markup.
	rec = b.get("/search?q=evil+hosting")
	wantBody(t, rec, `<a href="/vendors/`+evil.ID+`">&lt;script&gt;alert(1)&lt;/script&gt; <mark>Evil</mark> &#34;<mark>Hosting</mark>&#34; &amp; Co</a>`,
		`&lt;img src=x onerror=alert(2)&gt; <mark>hosting</mark> of &lt;b&gt;things&lt;/b&gt;`)
	wantNoBody(t, rec, "<script>alert", "<img src=x", "<b>things")

	// One type, paginated.
	rec = b.get("/search?q=hosting&types=vendor&perPage=10")
	wantBody(t, rec, "Page 1 of 2 (14 in all)", `rel="next"`, "in Vendors")
	rec = b.get("/search?q=hosting&types=vendor&perPage=10&page=2")
	if n := strings.Count(rec.Body.String(), `<li><a href="/vendors/`); n != 4 {
		t.Fatalf("%d hits on page 2, want 4", n)
	}

	// Other types and their links.
	rec = b.get("/search?q=access+reviews")
	wantBody(t, rec, `<h2 id="g-finding">Findings`, `<a href="/findings/`+f.finding+`"><mark>Access</mark> <mark>reviews</mark> missing</a>`)
	rec = b.get("/search?q=quality")
	wantBody(t, rec, `<h2 id="g-control">Controls`, `<h2 id="g-requirement">Requirements`, `href="/frameworks/`+f.frameworkID+`/requirements/`)

	// Nothing found, nothing searchable, nothing typed, too long.
	wantBody(t, b.get("/search?q=zzzqqq"), "Nothing matches “zzzqqq”", "Check the spelling")
	wantBody(t, b.get("/search?q=%22%2A"), "punctuation alone finds nothing")
	wantBody(t, b.get("/search"), "by a word of their name or text")
	rec = b.get("/search?q=" + strings.Repeat("x", 201))
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="q-error"`, `aria-invalid="true"`)

	// The employee: only what is assigned to them, no questionnaires.
	if _, err := e.app.UpdateVendor(ctx, f.vendor, app.VendorInput{AssigneeID: app.Some(f.employeeID)}); err != nil {
		t.Fatal(err)
	}
	emp := e.browser()
	emp.signIn(f.employee)
	rec = emp.get("/search?q=hosting")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, `href="/vendors/`+f.vendor+`"`, `<h2 id="g-vendor">Vendors <span class="muted small">(1)</span></h2>`)
	wantNoBody(t, rec, evil.ID, `value="questionnaire"`, "Show all")
	wantNoBody(t, emp.get("/search?q=hosting&types=questionnaire"), `value="questionnaire"`)
}
