package main

import (
	"path/filepath"
	"time"

	"github.com/spf13/viper"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/browser"
	"github.com/compliance-appliance/compliance/storage"
)

// setBrowserDefaults: Chromium is found on PATH; at most four sessions on
// the appliance and two per organization (each Chromium tab holds about
// 100-200 MB); a session idle five minutes is closed.
func setBrowserDefaults(v *viper.Viper) {
	v.SetDefault("browser.chromium_path", "")
	v.SetDefault("browser.max_sessions", 4)
	v.SetDefault("browser.max_sessions_per_org", 2)
	v.SetDefault("browser.session_timeout", "5m")
	v.SetDefault("browser.run_timeout", "5m")
}

// configureBrowser wires the local Chromium in; profiles live in
// <data dir>/browser/<orgId>. Chromium is looked up when a session opens,
// so a missing one is an error of that request (503), not of start-up.
func configureBrowser(v *viper.Viper, dir storage.DataDir, a *app.App) {
	b := browser.New(browser.Options{ChromiumPath: v.GetString("browser.chromium_path"), ProfilesDir: filepath.Join(dir.Root, "browser")})
	a.ConfigureBrowser(b, app.BrowserConfig{
		MaxSessions:       v.GetInt("browser.max_sessions"),
		MaxSessionsPerOrg: v.GetInt("browser.max_sessions_per_org"),
		SessionTimeout:    v.GetDuration("browser.session_timeout"),
		RunTimeout:        v.GetDuration("browser.run_timeout"),
	})
}

// browserJob starts the due scheduled browser runs and removes the profile
// directories of organizations that no longer exist.
func browserJob(a *app.App) app.Job {
	return app.Job{Name: "run_browser_automations", Interval: time.Minute, Run: a.RunBrowserAutomations}
}
