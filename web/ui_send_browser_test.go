package web

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestUISendBrowser drives Chromium through sending a questionnaire from
// a vendor's page and opening the link as the vendor, registering an
// OAuth app, and registering a device for a person, each with JavaScript
// on. Screenshots go to a temporary directory (UI_SCREENSHOT_DIR keeps
// them).
func TestUISendBrowser(t *testing.T) {
	exe := needBrowser(t)
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	ctx, base, dir := startBrowser(t, exe, e.srv)
	value := func(sel string) string {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(`+strconv.Quote(sel)+`).value`))
		if err != nil {
			t.Fatalf("value of %s: %v", sel, err)
		}
		return v
	}

	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/vendors/"+f.vendor),
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), f.admin),
		chromedp.SendKeys(chromedp.CSS("#password"), testPassword),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#questionnaires")),
		chromedp.Click(chromedp.CSS(`a[href="/vendors/`+f.vendor+`/questionnaires/new"]`)),
		chromedp.WaitVisible(chromedp.CSS("#source")),
		shot(t, dir, "21-send-questionnaire-form"),
		chromedp.Click(chromedp.CSS(`form[action="/vendors/`+f.vendor+`/questionnaires"] button[type=submit]`)),
		waitNotice("created and sent"),
		shot(t, dir, "22-questionnaire-sent"),
	)
	if err != nil {
		t.Fatal(err)
	}
	link := value("#new-link")
	if !strings.HasPrefix(link, base+"/vendor-questionnaire/qt_") {
		t.Fatalf("vendor link %q", link)
	}
	// The vendor opens the link.
	err = chromedp.Do(ctx,
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`button[value="submit"]`)),
		shot(t, dir, "23-vendor-fill-page"),
	)
	if err != nil {
		t.Fatal(err)
	}

	// An OAuth app: the secret on the answer page.
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/oauth-apps"),
		chromedp.WaitVisible(chromedp.CSS("#redirectUris")),
		chromedp.SendKeys(chromedp.CSS("#name"), "Reporting"),
		chromedp.SendKeys(chromedp.CSS("#redirectUris"), "https://reports.example/callback"),
		chromedp.Click(chromedp.CSS(`form[action="/oauth-apps"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#new-secret")),
		shot(t, dir, "24-oauth-app-created"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if s := value("#new-secret"); !strings.HasPrefix(s, "cmps_") {
		t.Fatalf("client secret %q", s)
	}

	// A device registered for the employee.
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/people/"+f.employeeID),
		chromedp.WaitVisible(chromedp.CSS("#dev-name")),
		chromedp.SendKeys(chromedp.CSS("#dev-name"), "Work laptop"),
		chromedp.SendKeys(chromedp.CSS("#dev-hostname"), "wl-1"),
		chromedp.SetValue(chromedp.CSS("#dev-platform"), "linux"),
		chromedp.Click(chromedp.CSS(`input[name="mode"][value="new"] ~ fieldset button[type=submit]`)),
		waitNotice("Device linked"),
		shot(t, dir, "25-device-linked"),
	)
	if err != nil {
		t.Fatal(err)
	}
}
