package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/compliance-appliance/compliance/app"
)

// TestUIAttachmentsBrowser drives Chromium through attaching a file to a
// risk (a file over the limit is marked at its field before anything is
// sent), then editing a comment in place. Screenshots go to a temporary
// directory (UI_SCREENSHOT_DIR keeps them).
func TestUIAttachmentsBrowser(t *testing.T) {
	exe := needBrowser(t)
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	small, big := filepath.Join(t.TempDir(), "bia.pdf"), filepath.Join(t.TempDir(), "huge.bin")
	if err := os.WriteFile(small, []byte("%PDF-1.4 business impact analysis"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, 3<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, base, dir := startBrowser(t, exe, e.srv)
	eval := func(js string) string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return s
	}
	page := base + "/risks/" + f.risk
	err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), f.admin),
		chromedp.SendKeys(chromedp.CSS("#password"), testPassword),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#attachments-h")),
		// Over the limit: marked at once, nothing sent.
		chromedp.SetUploadFiles(chromedp.CSS("#attachmentFile"), []string{big}),
		chromedp.Click(chromedp.CSS(`#attachments button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#attachmentFile-error")),
		shot(t, dir, "attachments-1-too-large"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if msg := eval(`document.getElementById("attachmentFile-error").textContent`); !strings.Contains(msg, "upload limit of 2.0 MB") {
		t.Fatalf("too large: %q", msg)
	}
	if inv := eval(`document.activeElement.id + " " + document.getElementById("attachmentFile").getAttribute("aria-invalid")`); inv != "attachmentFile true" {
		t.Fatalf("focus and marking: %q", inv)
	}
	err = chromedp.Do(ctx,
		chromedp.SetUploadFiles(chromedp.CSS("#attachmentFile"), []string{small}),
		chromedp.SendKeys(chromedp.CSS("#attachmentDescription"), "Business impact analysis 2026"),
		chromedp.Click(chromedp.CSS(`#attachments button[type=submit]`)),
		waitNotice("File attached."),
		shot(t, dir, "attachments-2-attached"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if n := eval(`String(document.querySelectorAll("#attachments a[download]").length) + " " + String(!!document.getElementById("attachmentFile-error"))`); n != "1 false" {
		t.Fatalf("after attaching: %q", n)
	}
	ats := e.attachments(f.org, app.EntityRisk, f.risk)
	if len(ats) != 1 || ats[0].Name != "bia.pdf" || ats[0].Size != int64(len("%PDF-1.4 business impact analysis")) {
		t.Fatalf("stored: %+v", ats)
	}

	// A comment, edited in place.
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#comment"), "Reviewed with the CISO."),
		chromedp.Click(chromedp.CSS(`form[action$="/comments"] button[type=submit]`)),
		waitNotice("Comment added."),
		chromedp.Click(chromedp.CSS(`.comment-actions a[href*="?edit="]`)),
		chromedp.WaitVisible(chromedp.CSS("#commentEdit")),
		shot(t, dir, "attachments-3-comment-edit"),
	)
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("commentEdit").value = "Reviewed with the CISO and the DPO."`),
		chromedp.Click(chromedp.CSS(`#commentEdit ~ .actions button[type=submit]`)),
		waitNotice("Comment saved."),
	)
	if err != nil {
		t.Fatal(err)
	}
	cs := e.commentsOn(f.org, app.EntityRisk, f.risk)
	if len(cs) != 1 || cs[0].Content != "Reviewed with the CISO and the DPO." {
		t.Fatalf("comment: %+v", cs)
	}
}
