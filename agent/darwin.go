package agent

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var darwinCollectors = map[string]func(context.Context, Env) Result{
	DiskEncryption: darwinFileVault,
	ScreenLock:     darwinScreenLock,
	OSUpdates:      darwinUpdates,
	Firewall:       darwinFirewall,
	Antivirus:      darwinGatekeeper,
	PasswordPolicy: darwinPasswordPolicy,
}

// ParseFdesetupStatus reads `fdesetup status`.
func ParseFdesetupStatus(out string) (bool, string) {
	switch {
	case strings.Contains(out, "FileVault is On"):
		return true, "FileVault is on"
	case strings.Contains(out, "Encryption in progress"):
		return false, "FileVault encryption is in progress"
	case strings.Contains(out, "FileVault is Off"):
		return false, "FileVault is off"
	}
	return false, "the FileVault status was not understood"
}

func darwinFileVault(ctx context.Context, env Env) Result {
	out, err := env.Run(ctx, "fdesetup", "status")
	if err != nil && out == "" {
		return broken("fdesetup status", out, err, "fdesetup could not be run")
	}
	ok, msg := ParseFdesetupStatus(out)
	return Result{Passed: ok, Method: "fdesetup status", Raw: out, Message: msg}
}

// ParseMacScreenLock reads `sysadminctl -screenLock status` (its answer is
// on stderr: "screenLock delay is immediate", "screenLock delay is 5
// seconds", "screenLock is off") and the screen saver's idleTime (seconds,
// `defaults -currentHost read com.apple.screensaver idleTime`; empty when
// unset, which is macOS's default of 20 minutes).
func ParseMacScreenLock(sysadminctl, idleTime string) (bool, string) {
	if strings.Contains(sysadminctl, "screenLock is off") {
		return false, "no password is asked after the screen saver starts"
	}
	delay := -1
	if strings.Contains(sysadminctl, "screenLock delay is immediate") {
		delay = 0
	} else if m := regexp.MustCompile(`screenLock delay is (\d+) seconds`).FindStringSubmatch(sysadminctl); m != nil {
		delay, _ = strconv.Atoi(m[1])
	}
	if delay < 0 {
		return false, "the screen lock setting was not understood"
	}
	idle := 1200
	if t := strings.TrimSpace(idleTime); t != "" && !strings.Contains(t, "does not exist") {
		n, err := strconv.Atoi(t)
		if err != nil {
			return false, "the screen saver idle time was not understood"
		}
		idle = n
	}
	if idle == 0 {
		return false, "the screen saver never starts, so the screen never locks"
	}
	total := idle + delay
	if total > maxLockDelay {
		return false, fmt.Sprintf("the screen locks after %d s of inactivity, more than %d s", total, maxLockDelay)
	}
	return true, fmt.Sprintf("the screen locks after %d s of inactivity (screen saver %d s, password delay %d s)", total, idle, delay)
}

func darwinScreenLock(ctx context.Context, env Env) Result {
	s, err := env.Run(ctx, "sysadminctl", "-screenLock", "status")
	if err != nil && s == "" {
		return broken("sysadminctl -screenLock status", s, err, "sysadminctl could not be run")
	}
	idle, _ := env.Run(ctx, "defaults", "-currentHost", "read", "com.apple.screensaver", "idleTime")
	ok, msg := ParseMacScreenLock(s, idle)
	return Result{Passed: ok, Method: "sysadminctl -screenLock status; defaults com.apple.screensaver idleTime",
		Raw: strings.TrimSpace(s) + "\nidleTime " + strings.TrimSpace(idle), Message: msg}
}

// ParseSoftwareUpdateSchedule reads `softwareupdate --schedule`.
func ParseSoftwareUpdateSchedule(out string) bool {
	return strings.Contains(out, "Automatic checking for updates is turned on")
}

func darwinUpdates(ctx context.Context, env Env) Result {
	out, err := env.Run(ctx, "softwareupdate", "--schedule")
	if err != nil && out == "" {
		return broken("softwareupdate --schedule", out, err, "softwareupdate could not be run")
	}
	if ParseSoftwareUpdateSchedule(out) {
		return pass("softwareupdate --schedule", out, "automatic checking for updates is on")
	}
	return fail("softwareupdate --schedule", out, "automatic checking for updates is off")
}

// ParseSocketFilterGlobalState reads `socketfilterfw --getglobalstate`.
func ParseSocketFilterGlobalState(out string) bool {
	return strings.Contains(out, "Firewall is enabled") || strings.Contains(out, "State = 1") || strings.Contains(out, "State = 2")
}

func darwinFirewall(ctx context.Context, env Env) Result {
	const fw = "/usr/libexec/ApplicationFirewall/socketfilterfw"
	out, err := env.Run(ctx, fw, "--getglobalstate")
	if err != nil && out == "" {
		return broken("socketfilterfw --getglobalstate", out, err, "the application firewall state could not be read")
	}
	if ParseSocketFilterGlobalState(out) {
		return pass("socketfilterfw --getglobalstate", out, "the application firewall is on")
	}
	return fail("socketfilterfw --getglobalstate", out, "the application firewall is off")
}

// ParseSpctlStatus reads `spctl --status`.
func ParseSpctlStatus(out string) bool { return strings.Contains(out, "assessments enabled") }

func darwinGatekeeper(ctx context.Context, env Env) Result {
	out, err := env.Run(ctx, "spctl", "--status")
	if err != nil && out == "" {
		return broken("spctl --status", out, err, "spctl could not be run")
	}
	xp, _ := env.Run(ctx, "defaults", "read", "/Library/Apple/System/Library/CoreServices/XProtect.bundle/Contents/Info.plist", "CFBundleShortVersionString")
	raw := strings.TrimSpace(out) + "\nXProtect " + strings.TrimSpace(xp)
	if !ParseSpctlStatus(out) {
		return fail("spctl --status; XProtect version", raw, "Gatekeeper is disabled")
	}
	if env.Processes != nil {
		if procs, err := env.Processes(); err == nil {
			if found := matchProcesses(procs, env.EDRProcesses); len(found) > 0 {
				return pass("spctl --status; EDR process", raw, "Gatekeeper and XProtect are on; running: "+strings.Join(found, ", "))
			}
		}
	}
	return pass("spctl --status; XProtect version", raw, "Gatekeeper and XProtect (built-in malware protection) are on")
}

// ParsePwpolicyMinLength reads `pwpolicy -getaccountpolicies` and returns
// the minimum length its password-content policy asks for (0 when none).
func ParsePwpolicyMinLength(out string) int {
	n := 0
	for _, m := range regexp.MustCompile(`\.\{(\d+),`).FindAllStringSubmatch(out, -1) {
		if v, _ := strconv.Atoi(m[1]); v > n {
			n = v
		}
	}
	if m := regexp.MustCompile(`policyAttributeMinimumLength\D+(\d+)`).FindStringSubmatch(out); m != nil {
		if v, _ := strconv.Atoi(m[1]); v > n {
			n = v
		}
	}
	return n
}

func darwinPasswordPolicy(ctx context.Context, env Env) Result {
	out, err := env.Run(ctx, "pwpolicy", "-getaccountpolicies")
	if err != nil && out == "" {
		return broken("pwpolicy -getaccountpolicies", out, err, "pwpolicy could not be run")
	}
	n := ParsePwpolicyMinLength(out)
	switch {
	case n >= minPasswordLength:
		return pass("pwpolicy -getaccountpolicies", out, fmt.Sprintf("passwords must have at least %d characters", n))
	case n == 0:
		return fail("pwpolicy -getaccountpolicies", out, "no password length policy is set")
	}
	return fail("pwpolicy -getaccountpolicies", out, fmt.Sprintf("the minimum password length is %d, less than %d", n, minPasswordLength))
}
