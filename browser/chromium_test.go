package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// needChromium skips, loudly, where no Chromium is installed.
func needChromium(t *testing.T) *Chromium {
	t.Helper()
	c := New(Options{ProfilesDir: t.TempDir()})
	if _, err := c.Executable(); err != nil {
		t.Skipf("SKIPPED: no Chromium on this machine (%v); install the chromium package to run the browser tests", err)
	}
	return c
}

func TestMissingChromiumIsUnavailable(t *testing.T) {
	c := New(Options{ChromiumPath: "/nonexistent/chromium", ProfilesDir: t.TempDir()})
	_, err := c.Open(context.Background(), app.BrowserOpen{OrgID: "org_1"})
	if !errors.Is(err, app.ErrBrowserUnavailable) || !strings.Contains(err.Error(), "install the chromium package") {
		t.Fatalf("err = %v, want unavailable naming what to install", err)
	}
}

// TestSessionRefusesOffHostRequests: a page on the allowed host loads; its
// image from another host and a navigation to that host are refused.
func TestSessionRefusesOffHostRequests(t *testing.T) {
	c := needChromium(t)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<p>other host</p>")
	}))
	defer other.Close()
	otherURL, _ := url.Parse(other.URL)
	otherURL.Host = strings.Replace(otherURL.Host, "127.0.0.1", "localhost", 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<html><body><h1 id="t">Settings</h1><p class="mfa">MFA enforced: yes</p><img src="%s/pixel.png"></body></html>`, otherURL)
	}))
	defer site.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := c.Open(ctx, app.BrowserOpen{OrgID: "org_1", Allow: func(u *url.URL) error {
		if u.Hostname() != "127.0.0.1" {
			return errors.New("host not allowed")
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Navigate(ctx, site.URL); err != nil {
		t.Fatal(err)
	}
	txt, err := s.Text(ctx, ".mfa")
	if err != nil || txt != "MFA enforced: yes" {
		t.Fatalf("text = %q, %v", txt, err)
	}
	png, err := s.Screenshot(ctx)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot: %d bytes, %v", len(png), err)
	}
	if err := s.Navigate(ctx, otherURL.String()); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("off-host navigation: err = %v, want refused", err)
	}
	refused := strings.Join(s.Refused(), "\n")
	if !strings.Contains(refused, "localhost") || !strings.Contains(refused, "pixel.png") {
		t.Fatalf("refused = %q, want the image and the navigation", refused)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if f, _ := s.Frame(); len(f) > 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Error("no screencast frame arrived")
}

var _ = exec.LookPath
