package web

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds a local Chromium; the browser tests skip without one.
func chromium() string {
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return ""
}

// shot saves a full-page screenshot and checks the page rendered: the
// image is not blank (enough pixels differ from the background).
func shot(t *testing.T, dir, name string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		buf, err := chromedp.FullScreenshot(100)(ctx, tg)
		if err != nil {
			return chromedp.Void{}, err
		}
		p := filepath.Join(dir, name+".png")
		if err := os.WriteFile(p, buf, 0o600); err != nil {
			return chromedp.Void{}, err
		}
		img, err := png.Decode(bytes.NewReader(buf))
		if err != nil {
			t.Fatalf("%s: not a PNG: %v", name, err)
		}
		if frac := inked(img); frac < 0.005 {
			t.Errorf("%s looks blank: %.3f of pixels differ from the background", name, frac)
		}
		t.Logf("screenshot %s (%d bytes)", p, len(buf))
		return chromedp.Void{}, nil
	}
}

// inked is the fraction of pixels that differ from the top-left pixel.
func inked(img image.Image) float64 {
	b := img.Bounds()
	r0, g0, b0, _ := img.At(b.Min.X, b.Min.Y).RGBA()
	var diff, total int
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			total++
			if absDiff(r, r0)+absDiff(g, g0)+absDiff(bl, b0) > 0x3000 {
				diff++
			}
		}
	}
	return float64(diff) / float64(max(total, 1))
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// waitNotice waits until the page's notice says text: the form post went
// through and its redirect landed, not the page it was sent from.
func waitNotice(text string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		// The page must also have finished loading: acting on a page still
		// being parsed can hit nodes the browser renumbers once it is done.
		js := `(function(){var n=document.querySelector(".notice");return document.readyState==="complete" && !!n && n.textContent.indexOf(` + strconv.Quote(text) + `)>=0;})()`
		for {
			ok, err := chromedp.Evaluate[bool](js)(ctx, tg)
			if err == nil && ok {
				return chromedp.Void{}, nil
			}
			select {
			case <-ctx.Done():
				return chromedp.Void{}, fmt.Errorf("waiting for the notice %q: %w", text, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// needBrowser returns the Chromium to drive, skipping the test without
// one or under -short. In CI (CI set) a missing Chromium fails the test:
// .ci/run installs it, so its absence is a broken CI machine.
func needBrowser(t *testing.T) string {
	t.Helper()
	exe := chromium()
	if exe == "" {
		noBrowser(t)
	}
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	return exe
}

// startBrowser serves h on a local port and starts Chromium (1366x900,
// a 2-minute budget); it returns the browser context, the server's base
// URL and the screenshot directory (UI_SCREENSHOT_DIR, else a temporary
// one). Everything stops when the test ends.
func startBrowser(t *testing.T, exe string, h http.Handler) (ctx context.Context, base, dir string) {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	dir = os.Getenv("UI_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1366, 900), chromedp.Flag("disable-dev-shm-usage", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(alloc)
	ctx, cancelTime := context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(func() {
		cancelTime()
		cancelBrowser()
		cancelAlloc()
	})
	return ctx, ts.URL, dir
}

// TestUIBrowser drives Chromium through the main flows: sign-in, enabling
// a framework, uploading evidence and seeing the score rise, a vendor form
// with a validation error next to its field, and an auditor who is offered
// no write actions. Screenshots go to a temporary directory
// (UI_SCREENSHOT_DIR keeps them).
func TestUIBrowser(t *testing.T) {
	exe := needBrowser(t)
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	fw, err := e.app.GetFramework(e.ctx(f.org), "bafin-marisk")
	if err != nil {
		t.Fatal(err)
	}
	evidence := filepath.Join(t.TempDir(), "quality-policy.pdf")
	if err := os.WriteFile(evidence, []byte("%PDF-1.4 quality policy"), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, base, dir := startBrowser(t, exe, e.srv)

	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	count := func(sel string) int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(sel)+`).length`))
		if err != nil {
			t.Fatalf("count %s: %v", sel, err)
		}
		return n
	}
	attr := func(sel, name string) string {
		v, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
		if err != nil {
			t.Fatalf("attribute %s of %s: %v", name, sel, err)
		}
		return v.Value
	}
	signIn := func(email, shotName string) {
		err := chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.CSS("#email")),
			chromedp.SendKeys(chromedp.CSS("#email"), email),
			chromedp.SendKeys(chromedp.CSS("#password"), testPassword),
			shot(t, dir, shotName),
			chromedp.Click(chromedp.CSS(`form[action="/login"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS("nav.main")),
		)
		if err != nil {
			t.Fatalf("sign in as %s: %v", email, err)
		}
	}

	// 1. A page behind sign-in: to sign-in, and back to the page.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/controls")); err != nil {
		t.Fatal(err)
	}
	signIn(f.owner, "01-sign-in")
	if h := text("h1"); h != "Controls" {
		t.Fatalf("after sign-in: %q, want the controls page", h)
	}

	// 2. Enable a framework.
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/frameworks"),
		chromedp.Click(chromedp.CSS(`form[action="/frameworks/`+fw.ID+`/enable"] button`)),
		waitNotice("Framework enabled"),
		shot(t, dir, "02-framework-enabled"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if n := text(".notice"); !strings.Contains(n, "Framework enabled") {
		t.Fatalf("notice %q", n)
	}

	// 3. Evidence: a task on a control, a file, done; the score rises.
	fwID, control := scoringControl(t, e, f.org, "iso9001-2015")
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/frameworks/"+fwID)); err != nil {
		t.Fatal(err)
	}
	before, _ := strconv.Atoi(attr("p.stat", "data-score"))
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/controls/"+control),
		chromedp.SendKeys(chromedp.CSS("#t-title"), "Upload the quality policy"),
		chromedp.Click(chromedp.CSS(`form[action="/tasks"] button[type=submit]`)),
		waitNotice("Task created."),
		chromedp.SetUploadFiles(chromedp.CSS(`input[type=file][id^="tf-"]`), []string{evidence}),
		chromedp.Click(chromedp.CSS(`form[action$="/evidence"][action^="/tasks/"] button[type=submit]`)),
		waitNotice("Evidence uploaded."),
		chromedp.Click(chromedp.CSS(`form[action$="/complete"] button[type=submit]`)),
		waitNotice("Task completed."),
		chromedp.WaitVisible(chromedp.CSS(`[data-status="implemented"]`)),
		shot(t, dir, "03-control-implemented"),
		chromedp.Navigate(base+"/frameworks/"+fwID),
		chromedp.WaitVisible(chromedp.CSS("p.stat")),
	)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := strconv.Atoi(attr("p.stat", "data-score"))
	if after <= before {
		t.Fatalf("score %d -> %d after evidence, want a rise", before, after)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("svg.chart")), shot(t, dir, "04-dashboard"))
	if err != nil {
		t.Fatal(err)
	}
	if n := count(`svg.chart rect[data-score="` + strconv.Itoa(after) + `"]`); n != 1 {
		t.Fatalf("dashboard chart has no bar at %d%%", after)
	}

	// 4. A vendor with a validation error next to the field.
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/vendors/new"),
		chromedp.SendKeys(chromedp.CSS("#website"), "not a url"),
		chromedp.Click(chromedp.CSS(`form[action="/vendors"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#name-error")),
		shot(t, dir, "05-vendor-validation"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if msg := text("#website-error"); !strings.Contains(msg, "http or https URL") {
		t.Fatalf("website message %q", msg)
	}
	adjacent, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function(){var i=document.getElementById("website");var m=document.getElementById("website-error");
		return i.nextElementSibling===m && i.getAttribute("aria-invalid")==="true" && document.activeElement.getAttribute("aria-invalid")==="true";})()`))
	if err != nil || !adjacent {
		t.Fatalf("the message is not right after its field, or focus is not on an invalid field: %v", err)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#name"), "Mail Inc"),
		chromedp.SetValue(chromedp.CSS("#website"), "https://mail.example"),
		chromedp.Click(chromedp.CSS(`form[action="/vendors"] button[type=submit]`)),
		waitNotice("Created."),
	)
	if err != nil {
		t.Fatal(err)
	}
	if h := text("h1"); h != "Mail Inc" {
		t.Fatalf("after create: %q", h)
	}

	// 5. Sign out; the auditor sees no write actions (adding a comment,
	// which auditors may, aside).
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#email")),
	)
	if err != nil {
		t.Fatal(err)
	}
	signIn(f.auditor, "06-sign-in-auditor")
	for _, page := range []struct{ path, sel string }{
		{"/vendors", `a[href="/vendors/new"]`},
		{"/frameworks", `form[action$="/enable"]`},
		{"/controls/" + control, `form[enctype="multipart/form-data"]:not([action$="/attachments"]), form[action^="/controls/"]:not([action$="/comments"]):not([action$="/attachments"]), form[action="/tasks"]`},
		{"/vendors/" + f.vendor, `button[type=submit]:not([class="secondary"]):not(#comments button):not(#attachments button)`},
		{"/risks", `a[href="/risks/new"]`},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+page.path), chromedp.WaitVisible(chromedp.CSS("h1"))); err != nil {
			t.Fatal(err)
		}
		if n := count(page.sel); n != 0 {
			t.Errorf("auditor is offered %d write actions on %s (%s)", n, page.path, page.sel)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/vendors/"+f.vendor), shot(t, dir, "07-auditor-vendor")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/risks"), shot(t, dir, "08-auditor-risks")); err != nil {
		t.Fatal(err)
	}
}

// noBrowser fails the test in CI and skips it loudly elsewhere.
func noBrowser(t *testing.T) {
	t.Helper()
	const msg = "no Chromium installed (Debian's chromium package): the browser tests did NOT run"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip("SKIPPED: " + msg)
}
