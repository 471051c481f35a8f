package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/ui"
)

// TestUIBrandStylesheet: with no colour no stylesheet is linked; with one,
// every signed-in page links /brand.css under a version of its content,
// which serves text/css holding the colour and the contrasting text
// colour, cached only under its current version; the pages' CSP is
// unchanged and other organizations are not affected.
func TestUIBrandStylesheet(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	other := e.uiFixture("Globex")
	admin, emp, globex := e.browser(), e.browser(), e.browser()
	admin.signIn(f.admin)
	emp.signIn(f.employee)
	globex.signIn(other.owner)

	rec := admin.get("/")
	wantNoBody(t, rec, "/brand.css")
	rec = admin.get("/brand.css")
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); ct != "text/css; charset=utf-8" {
		t.Fatalf("content type %q", ct)
	}
	wantNoBody(t, rec, ".top{")

	// Set through the settings page, in upper case as people type it.
	wantRedirect(t, admin.post("/settings/branding", url.Values{"primaryColor": {"#0B3D91"}}), "/settings?done=saved")
	link := func(b *uiBrowser, path string) string {
		t.Helper()
		rec := b.get(path)
		wantStatus(t, rec, http.StatusOK)
		if rec.Header().Get("Content-Security-Policy") != ui.CSP {
			t.Fatalf("CSP changed: %s", rec.Header().Get("Content-Security-Policy"))
		}
		if strings.Contains(rec.Body.String(), "style=") || strings.Contains(rec.Body.String(), "<style") {
			t.Fatal("inline style on the page")
		}
		m := brandLinkRe.FindStringSubmatch(rec.Body.String())
		if m == nil {
			t.Fatalf("%s: no brand stylesheet linked", path)
		}
		return m[1]
	}
	href := link(admin, "/")
	if link(emp, "/tasks") != href || link(admin, "/settings") != href {
		t.Fatal("pages link different versions of one stylesheet")
	}
	rec = admin.get(href)
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); ct != "text/css; charset=utf-8" {
		t.Fatalf("content type %q", ct)
	}
	wantBody(t, rec, ".top{background:#0b3d91;color:#ffffff}", "nav.main a[aria-current=page]{border-left-color:#0b3d91}")
	if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") || !strings.Contains(cc, "private") {
		t.Fatalf("cache control %q", cc)
	}
	if cc := admin.get("/brand.css?v=old").Header().Get("Cache-Control"); strings.Contains(cc, "immutable") {
		t.Fatalf("an old version is cached for good: %q", cc)
	}
	wantNoBody(t, globex.get("/"), "/brand.css")
	if rec := globex.get(href); strings.Contains(rec.Body.String(), "#0b3d91") {
		t.Fatal("another organization's colour served")
	}

	// A light colour gets dark text, and a new version.
	if _, err := e.app.UpdateBranding(e.ctx(f.org), app.BrandingPatch{PrimaryColor: app.Some("#ffcc00")}); err != nil {
		t.Fatal(err)
	}
	light := link(admin, "/")
	if light == href {
		t.Fatal("the version did not change with the colour")
	}
	rec = admin.get(light)
	wantBody(t, rec, ".top{background:#ffcc00;color:#1f2328}")
	wantNoBody(t, rec, "border-left-color") // too light to mark the current item on white

	// Cleared: no link again.
	if _, err := e.app.UpdateBranding(e.ctx(f.org), app.BrandingPatch{PrimaryColor: app.Opt[string]{Set: true, Null: true}}); err != nil {
		t.Fatal(err)
	}
	wantNoBody(t, admin.get("/"), "/brand.css")

	// Without a session the stylesheet, like every page, needs sign-in.
	rec = e.browser().get("/brand.css")
	wantRedirect(t, rec, "/login")
}

var brandLinkRe = regexp.MustCompile(`<link rel="stylesheet" href="(/brand\.css\?v=[0-9a-f]{12})">`)
