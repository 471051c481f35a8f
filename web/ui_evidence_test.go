package web

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// evidenceRows lists the evidence ids of a library page, in order.
func evidenceRows(body string) []string {
	var out []string
	for _, m := range evidenceRowRe.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

var evidenceRowRe = regexp.MustCompile(`<tr data-evidence="([^"]+)">`)

// TestUIEvidenceLibrary: every evidence item with its control, frameworks,
// uploader and dates; the expiry, framework, owner and month filters in the
// URL; sorting; paging; the twelve-month timeline's months and counts with
// its table; the employee's narrowed view; empty states.
func TestUIEvidenceLibrary(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme") // the clock stands at 2026-01-15 10:00 UTC
	ctx := e.ctx(f.org)
	owner := app.WithPrincipal(ctx, &app.Principal{OrgID: f.org, Role: app.RoleOwner, AuthType: app.AuthSession, UserID: f.ownerID})
	cs, err := e.app.ListControls(ctx, app.ControlFilter{FrameworkID: f.frameworkID, Page: app.Page{Page: 1, PerPage: 2}})
	if err != nil || len(cs.Items) < 2 {
		t.Fatalf("controls: %v", err)
	}
	ctlA, ctlB := cs.Items[0], cs.Items[1]
	if _, err := e.app.UpdateControl(ctx, ctlA.ID, app.ControlInput{OwnerID: app.Some(f.employeeID)}); err != nil {
		t.Fatal(err)
	}
	// A custom framework served by control B only.
	admin := e.key(f.org, app.RoleAdmin)
	fw := e.create("/v1/frameworks", admin, map[string]any{"name": "Vendor assurance"})
	e.create("/v1/frameworks/"+fw["id"].(string)+"/requirements", admin, map[string]any{"ref": "VA-1", "title": "Keep reports",
		"controlIds": []string{ctlB.ID}})
	upload := func(c context.Context, control, name, expires string) string {
		t.Helper()
		ev, err := e.app.UploadEvidence(c, control, "", app.EvidenceUpload{File: strings.NewReader("proof " + name), Filename: name,
			ContentType: "application/pdf", ExpiresAt: expires})
		if err != nil {
			t.Fatalf("upload %s: %v", name, err)
		}
		e.clock.Advance(time.Minute) // distinct upload times
		return ev.ID
	}
	ids := map[string]string{}
	ids["soon"] = upload(owner, ctlA.ID, "a-soon.pdf", "2026-01-20")
	ids["feb"] = upload(owner, ctlA.ID, "b-february.pdf", "2026-02-20")
	ids["apr"] = upload(owner, ctlA.ID, "c-april.pdf", "2026-04-01")
	ids["sep"] = upload(ctx, ctlB.ID, "d-september.pdf", "2026-09-30")
	ids["never"] = upload(ctx, ctlB.ID, "e-never.pdf", "")
	ids["later"] = upload(ctx, ctlB.ID, "f-later.pdf", "2027-03-01")
	e.clock.Advance(-60 * 24 * time.Hour)
	ids["expired"] = upload(ctx, ctlB.ID, "g-expired.pdf", "2026-01-10")
	e.clock.Advance(60 * 24 * time.Hour)
	// Another organization's evidence never shows.
	other := e.uiFixture("Globex")
	ocs, _ := e.app.ListControls(e.ctx(other.org), app.ControlFilter{Page: app.Page{Page: 1, PerPage: 1}})
	foreign := upload(e.ctx(other.org), ocs.Items[0].ID, "foreign.pdf", "2026-02-01")

	b := e.browser()
	b.signIn(f.owner)
	rec := b.get("/evidence")
	wantStatus(t, rec, http.StatusOK)
	body := rec.Body.String()
	wantBody(t, rec, "<h1>Evidence library</h1>", "7 evidence items", `<a href="/evidence" aria-current="page">Evidence library</a>`,
		`<a href="/evidence/`+ids["soon"]+`/file">a-soon.pdf</a>`, `<a href="/controls/`+ctlA.ID+`">`, "Vendor assurance",
		"<td>owner@acme.test</td>", "<td>The system</td>", // uploaders: a person, the system
		`aria-sort="descending"><a href="/evidence?sort=uploadedAt">Uploaded</a>`, "2026-01-20 <span class=\"badge b-pending\">Soon</span>",
		"2026-01-10 <span class=\"badge b-overdue\">Expired</span>", `<span class="muted">Never</span>`)
	wantNoBody(t, rec, foreign)
	if got := evidenceRows(body); len(got) != 7 || got[0] != ids["later"] || got[6] != ids["expired"] {
		// Newest upload first: the expired one was uploaded two months ago.
		t.Errorf("default order %v", got)
	}
	// The timeline: twelve months from January 2026, with their counts.
	months := regexp.MustCompile(`<g data-month="(\d{4}-\d{2})" data-count="(\d+)">`).FindAllStringSubmatch(body, -1)
	if len(months) != 12 || months[0][1] != "2026-01" || months[11][1] != "2026-12" {
		t.Fatalf("timeline months %v", months)
	}
	want := map[string]string{"2026-01": "1", "2026-02": "1", "2026-04": "1", "2026-09": "1"}
	for _, m := range months {
		if w := want[m[1]]; m[2] != w && !(w == "" && m[2] == "0") {
			t.Errorf("timeline %s: %s, want %s", m[1], m[2], w)
		}
	}
	wantBody(t, rec, `role="img" aria-labelledby="tl-title tl-desc"`, "<title id=\"tl-title\">Evidence expiring per month, January 2026 to December 2026</title>",
		"January 2026: 1. February 2026: 1. March 2026: 0. April 2026: 1.", "Already expired: 1. Without an expiry date: 1.",
		`<tr data-month="2026-09"><th scope="row"><a href="/evidence?month=2026-09">September 2026</a></th><td class="num">1</td></tr>`,
		`<text x="48" y="168" text-anchor="middle">Jan</text><text x="48" y="184" text-anchor="middle" class="year">2026</text>`)

	// Filters, each kept in the URL.
	for q, want := range map[string][]string{
		"expires=30":                     {ids["soon"]},
		"expires=60":                     {ids["feb"], ids["soon"]},
		"expires=90":                     {ids["apr"], ids["feb"], ids["soon"]},
		"expires=expired":                {ids["expired"]},
		"expires=none":                   {ids["never"]},
		"month=2026-02":                  {ids["feb"]},
		"month=2027-03":                  {ids["later"]},
		"owner=" + f.employeeID:          {ids["apr"], ids["feb"], ids["soon"]},
		"framework=" + fw["id"].(string): {ids["later"], ids["never"], ids["sep"], ids["expired"]},
		"framework=" + fw["id"].(string) + "&expires=90": {},
		"sort=filename":           {ids["soon"], ids["feb"], ids["apr"], ids["sep"], ids["never"], ids["later"], ids["expired"]},
		"sort=expiresAt":          {ids["expired"], ids["soon"], ids["feb"], ids["apr"], ids["sep"], ids["later"], ids["never"]},
		"sort=-expiresAt":         {ids["later"], ids["sep"], ids["apr"], ids["feb"], ids["soon"], ids["expired"], ids["never"]},
		"sort=control&expires=90": {ids["soon"], ids["feb"], ids["apr"]},
	} {
		rec := b.get("/evidence?" + q)
		wantStatus(t, rec, http.StatusOK)
		if got := evidenceRows(rec.Body.String()); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	rec = b.get("/evidence?expires=60&sort=filename")
	wantBody(t, rec, "2 evidence items match these filters", `<option value="60" selected>`, `<input type="hidden" name="sort" value="filename">`,
		`aria-sort="ascending"><a href="/evidence?expires=60&amp;sort=-filename">File</a>`)
	rec = b.get("/evidence?framework=" + fw["id"].(string))
	wantBody(t, rec, `<g data-month="2026-09" data-count="1">`, `<g data-month="2026-01" data-count="0">`) // the timeline follows the framework
	rec = b.get("/evidence?perPage=3&page=2")
	wantBody(t, rec, "Page 2 of 3 (7 in all)")
	if got := evidenceRows(rec.Body.String()); len(got) != 3 {
		t.Errorf("page 2: %v", got)
	}
	wantBody(t, b.get("/evidence?month=2026-08"), "No evidence matches these filters", `<a href="/evidence">Show all evidence</a>`)
	rec = b.get("/evidence?expires=45")
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, "expires must be one of")
	wantStatus(t, b.get("/evidence?sort=size"), http.StatusUnprocessableEntity)

	// The auditor reads it all; the employee the evidence of their control.
	aud := e.browser()
	aud.signIn(f.auditor)
	if got := evidenceRows(aud.get("/evidence").Body.String()); len(got) != 7 {
		t.Errorf("auditor sees %d items", len(got))
	}
	emp := e.browser()
	emp.signIn(f.employee)
	rec = emp.get("/evidence")
	wantStatus(t, rec, http.StatusOK)
	if got := evidenceRows(rec.Body.String()); strings.Join(got, ",") != strings.Join([]string{ids["apr"], ids["feb"], ids["soon"]}, ",") {
		t.Errorf("employee sees %v", got)
	}
	wantBody(t, rec, `<g data-month="2026-09" data-count="0">`, `<g data-month="2026-04" data-count="1">`)

	// A new organization: the empty state says what to do.
	empty := e.uiFixture("Initech")
	nb := e.browser()
	nb.signIn(empty.owner)
	wantBody(t, nb.get("/evidence"), "No evidence yet.", `open a control from <a href="/controls">Controls</a>`, "0 evidence items")
}
