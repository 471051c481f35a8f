package app

import (
	"testing"
	"time"
)

func TestDevicePlatformOf(t *testing.T) {
	for in, want := range map[string]string{
		"MACOS": "macos", "macOS": "macos", "Mac OS X": "macos", "Windows": "windows", "WINDOWS": "windows", "iOS": "ios",
		"iPadOS": "ios", "IOS_SYNC": "ios", "Android": "android", "ANDROID": "android", "Chrome OS": "chromeos", "ChromeOS": "chromeos",
		"Linux": "linux", "Ubuntu 22.04": "linux", "": "other", "Windows Mobile": "windows", "BlackBerry": "other",
	} {
		if got := DevicePlatformOf(in); got != want {
			t.Errorf("DevicePlatformOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOutsideAgentFleet(t *testing.T) {
	now := time.Now()
	dir := &DeviceDirectoryInfo{Provider: "okta"}
	removed := &DeviceDirectoryInfo{Provider: "okta", RemovedAt: &now}
	for _, c := range []struct {
		d    Device
		want bool
	}{
		{Device{Source: "manual", Platform: "macos"}, false},
		{Device{Source: "agent", Platform: "windows", Directory: removed}, false}, // the agent's device stays
		{Device{Source: "okta", Platform: "macos", Directory: dir}, false},        // a laptop without the agent counts
		{Device{Source: "okta", Platform: "android", Directory: dir}, true},       // the agent does not run on phones
		{Device{Source: "google_workspace", Platform: "chromeos", Directory: dir}, true},
		{Device{Source: "okta", Platform: "macos", Directory: removed}, true}, // no longer listed
	} {
		if got := c.d.outsideAgentFleet(); got != c.want {
			t.Errorf("%s %s (removed %v): %v, want %v", c.d.Source, c.d.Platform, c.d.Directory != nil && c.d.Directory.RemovedAt != nil, got, c.want)
		}
	}
}
