package browser

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// chromiumRSS sums the proportional set size (PSS: shared pages split
// between their users, so the sum is not inflated) of the processes whose
// command line names dir (the Chromium of one profile directory and its
// helpers).
func chromiumRSS(dir string) int64 {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var total int64
	for _, p := range procs {
		cmd, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || !bytes.Contains(cmd, []byte(dir)) {
			continue
		}
		st, err := os.ReadFile(filepath.Join(p, "smaps_rollup"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(st), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				total += kb * 1024
			}
		}
	}
	return total
}

// TestBrowserFigures measures what the docs report: the time and peak
// memory of a run-like sequence (navigate, expect text, screenshot) and
// the memory of 1 to 8 sessions open at once. Set BROWSER_FIGURES=1.
func TestBrowserFigures(t *testing.T) {
	if os.Getenv("BROWSER_FIGURES") == "" {
		t.Skip("set BROWSER_FIGURES=1 to measure the browser figures")
	}
	dir := t.TempDir()
	c := needChromium(t)
	c.opts.ProfilesDir = dir
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body><h1>Security settings</h1><p id="mfa">MFA enforced: yes</p></body></html>`)
	}))
	defer site.Close()
	ctx := context.Background()
	peak := int64(0)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			peak = max(peak, chromiumRSS(dir))
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t0 := time.Now()
	s, err := c.Open(ctx, app.BrowserOpen{OrgID: "org_fig"})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	if err := s.Navigate(rctx, site.URL); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Text(rctx, "#mfa"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Screenshot(rctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	t.Logf("FIGURE: launch + navigate + expect text + screenshot: %v", time.Since(t0).Round(time.Millisecond))
	sessions := []app.BrowserSession{s}
	for n := 2; n <= 8; n++ {
		s, err := c.Open(ctx, app.BrowserOpen{OrgID: "org_fig"})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
		nctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := s.Navigate(nctx, site.URL); err != nil {
			t.Fatal(err)
		}
		cancel()
		time.Sleep(300 * time.Millisecond)
		t.Logf("FIGURE: %d sessions open: Chromium PSS %d MiB", n, chromiumRSS(dir)>>20)
	}
	close(stop)
	<-done
	t.Logf("FIGURE: peak Chromium PSS %d MiB", peak>>20)
	for _, s := range sessions {
		s.Close()
	}
}
