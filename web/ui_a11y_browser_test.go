package web

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/compliance-appliance/compliance/app"
)

// The accessibility, keyboard and narrow-screen checks of the web
// application in Chromium. axe-core comes from the npm registry, pinned in
// .ci/axe/package.json and its lockfile, installed by .ci/run (`npm ci` in
// .ci/axe), never copied into the repository.

// axeSource reads axe.min.js: AXE_CORE_JS, or .ci/axe/node_modules from
// the repository root. Without it the test is skipped, loudly, and fails
// in CI (CI set), as the other browser tests do without Chromium.
func axeSource(t *testing.T) string {
	t.Helper()
	p := os.Getenv("AXE_CORE_JS")
	if p == "" {
		p = filepath.Join("..", ".ci", "axe", "node_modules", "axe-core", "axe.min.js")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		msg := "axe-core is not installed (run `npm ci` in .ci/axe, or set AXE_CORE_JS): the accessibility test did NOT run: " + err.Error()
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPED: " + msg)
	}
	return string(b)
}

// a11yPages are the main pages: the dashboard, every section of the
// sidebar shown to the person, detail pages and search results.
func a11yPages(t *testing.T, e *testEnv, f uiFixture, ctx context.Context) []string {
	t.Helper()
	c := e.ctx(f.org)
	pol, err := e.app.CreatePolicy(c, app.PolicyInput{Name: app.Ptr("Access policy"), Content: app.Ptr("# Access\n\nWho gets access.")})
	if err != nil {
		t.Fatal(err)
	}
	inc, err := e.app.CreateIncident(c, app.IncidentInput{Title: app.Ptr("Lost laptop"), Type: app.Ptr(app.IncidentSecurity),
		AwareAt: app.Ptr("2026-01-15T08:00:00Z")})
	if err != nil {
		t.Fatal(err)
	}
	var nav []string
	if err := chromedp.Do(ctx, chromedp.Navigate(pageBase(ctx)+"/")); err != nil {
		t.Fatal(err)
	}
	nav, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("nav.main a")).map(a => a.getAttribute("href"))`))
	if err != nil || len(nav) < 5 {
		t.Fatalf("sidebar links: %v %v", nav, err)
	}
	pages := []string{"/"}
	for _, n := range nav {
		if n != "/" {
			pages = append(pages, n)
		}
	}
	return append(pages, "/vendors/"+f.vendor, "/controls/"+f.control, "/policies/"+pol.ID, "/risks/"+f.risk,
		"/findings/"+f.finding, "/incidents/"+inc.ID, "/vendors/new", "/search?q=access")
}

type baseKey struct{}

func pageBase(ctx context.Context) string { return ctx.Value(baseKey{}).(string) }

// signedInBrowser starts Chromium signed in as email.
func signedInBrowser(t *testing.T, e *testEnv, exe, email string) (context.Context, string) {
	t.Helper()
	ctx, base, dir := startBrowser(t, exe, e.srv)
	// Many pages: a longer limit than startBrowser's two minutes, on the
	// same browser.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Minute)
	t.Cleanup(cancel)
	ctx = context.WithValue(ctx, baseKey{}, base)
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email),
		chromedp.SendKeys(chromedp.CSS("#password"), testPassword),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("nav.main")),
	)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, dir
}

type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// TestUIAccessibility runs axe-core on every main page for an owner and
// an auditor and fails on any serious or critical violation, naming the
// page, the rule and the elements. It logs the count of every impact.
func TestUIAccessibility(t *testing.T) {
	exe := needBrowser(t)
	axe := axeSource(t)
	e := newTestServer(t)
	f := e.uiFixture("Axe")
	const run = `axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
		nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ") + " " + (n.failureSummary || "").split("\n").slice(1, 2).join(""))}))))`
	for _, who := range []struct{ role, email string }{{"owner", f.owner}, {"auditor", f.auditor}} {
		t.Run(who.role, func(t *testing.T) {
			ctx, _ := signedInBrowser(t, e, exe, who.email)
			counts := map[string]int{}
			for _, p := range a11yPages(t, e, f, ctx) {
				if err := chromedp.Do(ctx, chromedp.Navigate(pageBase(ctx)+p), chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				// Evaluated through the DevTools protocol, so the page's
				// Content-Security-Policy (script-src 'self') does not apply.
				if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axe+";true")); err != nil {
					t.Fatalf("%s: injecting axe-core: %v", p, err)
				}
				out, err := chromedp.Run(ctx, chromedp.Evaluate[string](run, chromedp.EvalAwaitPromise))
				if err != nil {
					t.Fatalf("%s: axe.run: %v", p, err)
				}
				var vs []axeViolation
				if err := json.Unmarshal([]byte(out), &vs); err != nil {
					t.Fatal(err)
				}
				for _, v := range vs {
					counts[v.Impact]++
					if v.Impact == "serious" || v.Impact == "critical" {
						t.Errorf("%s as %s: %s (%s) %s on:\n  %s", p, who.role, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n  "))
					} else {
						t.Logf("%s: %s (%s) %s", p, v.ID, v.Impact, strings.Join(v.Nodes, "; "))
					}
				}
			}
			t.Logf("axe violations as %s: critical %d, serious %d, moderate %d, minor %d", who.role,
				counts["critical"], counts["serious"], counts["moderate"], counts["minor"])
		})
	}
}

// TestUINarrowScreenBrowser loads every main page at 390x844: nothing is
// wider than the screen (tables scroll inside their wrapper), and each
// page leaves a screenshot (40-390-...).
func TestUINarrowScreenBrowser(t *testing.T) {
	exe := needBrowser(t)
	e := newTestServer(t)
	f := e.uiFixture("Narrow")
	ctx, dir := signedInBrowser(t, e, exe, f.owner)
	pages := a11yPages(t, e, f, ctx)
	for _, p := range pages {
		err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(pageBase(ctx)+p), chromedp.WaitVisible(chromedp.CSS("main")))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		w, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.scrollingElement.scrollWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if w > 391 {
			wide, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("main *")).filter(n => n.getBoundingClientRect().right > 391 && !n.closest(".table-wrap")).slice(0, 5).map(n => n.tagName + "." + n.className + " " + Math.round(n.getBoundingClientRect().right))`))
			t.Errorf("%s at 390 px: the page is %d px wide; widest: %v", p, w, wide)
		}
		name := strings.Trim(strings.NewReplacer("/", "-", "?", "-", "=", "-").Replace(p), "-")
		if name == "" {
			name = "dashboard"
		}
		if len(name) > 40 {
			name = name[:40]
		}
		if err := chromedp.Do(ctx, shot(t, dir, "40-390-"+name)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUIKeyboardBrowser fills the new-vendor form with the keyboard only:
// Tab moves focus from field to field, the focused element shows a visible
// outline (computed style), and Enter submits the form.
func TestUIKeyboardBrowser(t *testing.T) {
	exe := needBrowser(t)
	e := newTestServer(t)
	f := e.uiFixture("Keys")
	ctx, dir := signedInBrowser(t, e, exe, f.owner)
	eval := func(js string) string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return s
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(pageBase(ctx)+"/vendors/new"), chromedp.WaitVisible(chromedp.CSS("#name"))); err != nil {
		t.Fatal(err)
	}
	const focused = `(function(){var a=document.activeElement;var s=getComputedStyle(a);return (a.id||a.tagName)+"|"+s.outlineStyle+"|"+s.outlineWidth;})()`
	// Tab from the top of the page: the skip link, the header, the sidebar,
	// then the form; every stop shows its outline.
	seen := map[string]bool{}
	for i := 0; i < 80 && !seen["name"]; i++ {
		if err := chromedp.Do(ctx, chromedp.KeyEvent("\t")); err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(eval(focused), "|")
		seen[parts[0]] = true
		if parts[0] == "BODY" {
			continue
		}
		if parts[1] == "none" || parts[2] == "0px" {
			t.Errorf("focused %s has no visible outline (%s %s)", parts[0], parts[1], parts[2])
		}
	}
	if !seen["name"] {
		t.Fatalf("Tab never reached the vendor name field; focused: %v", seen)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent("Keyboard Vendor Ltd")); err != nil {
		t.Fatal(err)
	}
	// The next field is reached by Tab and outlined too.
	if err := chromedp.Do(ctx, chromedp.KeyEvent("\t")); err != nil {
		t.Fatal(err)
	}
	if parts := strings.Split(eval(focused), "|"); parts[0] == "name" || parts[1] == "none" {
		t.Errorf("after the name, focus is on %v", parts)
	}
	if err := chromedp.Do(ctx, shot(t, dir, "41-keyboard-focus"), chromedp.KeyEvent("\t")); err != nil {
		t.Fatal(err)
	}
	// Back in the name field, Enter submits the form.
	err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS("#name")), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`main form[action^="/vendors/vnd"]`)))
	if err != nil {
		t.Fatalf("Enter did not submit the form: %v", err)
	}
	if got := eval(`document.querySelector("#name").value`); got != "Keyboard Vendor Ltd" {
		t.Errorf("the new vendor's page shows %q", got)
	}
	_ = fmt.Sprint()
}
