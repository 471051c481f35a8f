package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// TestTrustPageInHeadlessBrowser renders the public trust page in a real
// browser when one is installed (chromium or google-chrome on PATH) and
// checks what a visitor reads. Without a browser it is skipped, loudly, and
// fails in CI.
func TestTrustPageInHeadlessBrowser(t *testing.T) {
	var browser string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		noBrowser(t)
	}
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	wantStatus(t, e.uploadField("/v1/trust-portal/documents", admin, "file", "report.pdf", []byte("%PDF"), "name", "Pentest report"), http.StatusCreated)
	enablePortal(t, e, admin, "acme")
	ts := httptest.NewServer(e.srv)
	defer ts.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--dump-dom", ts.URL+"/trust/acme").Output()
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	dom := string(out)
	for _, want := range []string{"Acme Trust Center", "No frameworks published.", "Pentest report", "NDA required", "Request access"} {
		if !strings.Contains(dom, want) {
			t.Fatalf("the rendered page lacks %q:\n%s", want, dom)
		}
	}
}
