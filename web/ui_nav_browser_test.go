package web

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/compliance-appliance/compliance/app"
)

// TestUINavBrowser drives Chromium through the sidebar on a phone-sized
// screen (390 px wide): it starts as a closed "Menu" that fits the width,
// opens with the keyboard, leads to a section, and is a sidebar again on a
// wide screen. Screenshots go where the other browser tests put theirs.
func TestUINavBrowser(t *testing.T) {
	exe := needBrowser(t)
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	ctx, base, dir := startBrowser(t, exe, e.srv)
	eval := func(js string) bool {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return ok
	}
	visible := func(sel string) bool {
		return eval(`(function(){var n=document.querySelector(` + strconv.Quote(sel) + `);if(!n)return false;var r=n.getBoundingClientRect();return r.width>0&&r.height>0&&(!n.checkVisibility||n.checkVisibility());})()`)
	}

	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), f.owner),
		chromedp.SendKeys(chromedp.CSS("#password"), testPassword),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("nav.main")),
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(".sidebar > summary")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if eval(`document.querySelector("details[data-sidebar]").open`) || visible(`nav.main a[href="/vendors"]`) {
		t.Fatal("on a narrow screen the menu starts open")
	}
	if eval(`document.documentElement.scrollWidth > 390`) {
		t.Fatal("the page is wider than the 390 px screen")
	}
	// A full-page screenshot resets the emulated screen; set it again.
	if err := chromedp.Do(ctx, shot(t, dir, "31-nav-390-closed"), chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}

	// The keyboard opens the menu and walks into it.
	err = chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS(".sidebar > summary")),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`nav.main a[href="/vendors"]`)),
		chromedp.KeyEvent(kb.Tab),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !eval(`document.activeElement === document.querySelector('nav.main a[href="/"]')`) {
		t.Fatal("Tab after opening the menu does not reach its first link")
	}
	if eval(`document.documentElement.scrollWidth > 390`) {
		t.Fatal("the open menu is wider than the 390 px screen")
	}
	if err := chromedp.Do(ctx, shot(t, dir, "32-nav-390-open"), chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS(`nav.main a[href="/vendors"]`)),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`nav.main a[href="/vendors"][aria-current="page"]`)),
	)
	if err != nil && !eval(`location.pathname === "/vendors"`) {
		t.Fatalf("following the menu link: %v", err)
	}
	if !eval(`location.pathname === "/vendors" && document.querySelector("h1").textContent === "Vendors"`) {
		t.Fatal("the menu link did not lead to the vendors")
	}

	// A wide screen shows the sidebar open, without the Menu button.
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(1366, 900),
		chromedp.Navigate(base+"/controls"),
		chromedp.WaitVisible(chromedp.CSS(`nav.main a[href="/vendors"]`)),
		shot(t, dir, "33-nav-wide"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if visible(".sidebar > summary") {
		t.Fatal("the Menu button shows on a wide screen")
	}
}

// TestUISearchBrowser types into the header's search box on a phone-sized
// and a wide screen: Enter opens the results grouped by type with the
// typed word marked, and a hit leads to its record.
func TestUISearchBrowser(t *testing.T) {
	exe := needBrowser(t)
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	ctx, base, dir := startBrowser(t, exe, e.srv)
	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), f.owner),
		chromedp.SendKeys(chromedp.CSS("#password"), testPassword),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#site-search")),
		chromedp.SendKeys(chromedp.CSS("#site-search"), "hosting gm"),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`section[data-type="vendor"] mark`)),
		shot(t, dir, "34-search-results"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(`section[data-type="vendor"] li a`); got != "Hosting GmbH" {
		t.Fatalf("first vendor hit %q", got)
	}
	if got := text(`section[data-type="vendor"] li a mark`); got != "Hosting" {
		t.Fatalf("marked %q", got)
	}
	if v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("site-search").value`)); err != nil || v != "hosting gm" {
		t.Fatalf("the header box holds %q: %v", v, err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`section[data-type="vendor"] li a`)),
		chromedp.WaitVisible(chromedp.CSS(`#name[value="Hosting GmbH"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}

	// On a phone the box sits under the header, the page no wider than
	// the screen.
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(base+"/risks"),
		chromedp.WaitVisible(chromedp.CSS("#site-search")),
		chromedp.SendKeys(chromedp.CSS("#site-search"), "outage"),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`section[data-type="risk"] mark`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > 390`)); err != nil || wide {
		t.Fatalf("the results page is wider than the 390 px screen (%v)", err)
	}
	if got := text(`section[data-type="risk"] li a`); got != "Data centre outage" {
		t.Fatalf("risk hit %q", got)
	}
	if err := chromedp.Do(ctx, shot(t, dir, "35-search-390")); err != nil {
		t.Fatal(err)
	}
}

// TestUIEvidenceBrowser renders the evidence library with a few renewals
// ahead: the timeline's twelve bars are drawn with their counts and the
// table behind "The timeline as a table" opens.
func TestUIEvidenceBrowser(t *testing.T) {
	exe := needBrowser(t)
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	ctx := e.ctx(f.org)
	cs, err := e.app.ListControls(ctx, app.ControlFilter{Page: app.Page{Page: 1, PerPage: 3}})
	if err != nil || len(cs.Items) < 3 {
		t.Fatalf("controls: %v", err)
	}
	for i, exp := range []string{"2026-02-10", "2026-03-05", "2026-03-20", "2026-03-28", "2026-06-30", "2026-11-15", ""} {
		if _, err := e.app.UploadEvidence(ctx, cs.Items[i%3].ID, "", app.EvidenceUpload{File: strings.NewReader("proof"),
			Filename: fmt.Sprintf("report-%d.pdf", i), ContentType: "application/pdf", ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
	}
	ctx2, base, dir := startBrowser(t, exe, e.srv)
	err = chromedp.Do(ctx2,
		chromedp.Navigate(base+"/evidence"),
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), f.owner),
		chromedp.SendKeys(chromedp.CSS("#password"), testPassword),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("svg.timeline")),
		chromedp.Click(chromedp.CSS(".card details summary")),
		chromedp.WaitVisible(chromedp.CSS(`.timeline-table tr[data-month="2026-03"]`)),
		shot(t, dir, "36-evidence-library"),
	)
	if err != nil {
		t.Fatal(err)
	}
	bars, err := chromedp.Run(ctx2, chromedp.Evaluate[int](`document.querySelectorAll("svg.timeline rect.bar").length`))
	if err != nil || bars != 4 {
		t.Fatalf("%d bars drawn, want 4 months with renewals (%v)", bars, err)
	}
	h, err := chromedp.Run(ctx2, chromedp.Evaluate[float64](`document.querySelector('g[data-month="2026-03"] rect').getBoundingClientRect().height`))
	if err != nil || h < 50 {
		t.Fatalf("March's bar (the most renewals) is %.0f px high (%v)", h, err)
	}
}
