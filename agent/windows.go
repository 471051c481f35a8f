package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var windowsCollectors = map[string]func(context.Context, Env) Result{
	DiskEncryption: windowsBitLocker,
	Antivirus:      windowsDefender,
	ScreenLock:     windowsScreenLock,
	OSUpdates:      windowsUpdates,
	Firewall:       windowsFirewall,
	PasswordPolicy: windowsPasswordPolicy,
}

func powershell(ctx context.Context, env Env, script string) (string, error) {
	return env.Run(ctx, "powershell.exe", "-NoProfile", "-NonInteractive", "-Command", script)
}

// ParseManageBde reads `manage-bde -status C:`.
func ParseManageBde(out string) (bool, string) {
	prot := regexp.MustCompile(`Protection Status:\s*(.+)`).FindStringSubmatch(out)
	conv := regexp.MustCompile(`Conversion Status:\s*(.+)`).FindStringSubmatch(out)
	if prot == nil || conv == nil {
		return false, "the BitLocker status was not understood"
	}
	p, c := strings.TrimSpace(prot[1]), strings.TrimSpace(conv[1])
	if p == "Protection On" && (c == "Fully Encrypted" || c == "Used Space Only Encrypted") {
		return true, "BitLocker protects the system drive (" + c + ")"
	}
	return false, "BitLocker: " + p + ", " + c
}

func windowsBitLocker(ctx context.Context, env Env) Result {
	out, err := env.Run(ctx, "manage-bde", "-status", "C:")
	if err != nil && !strings.Contains(out, "Protection Status") {
		// Without administrator rights manage-bde refuses; WMI still answers.
		ps, perr := powershell(ctx, env, "(Get-BitLockerVolume -MountPoint C:).ProtectionStatus")
		if perr == nil && strings.TrimSpace(ps) == "On" {
			return pass("Get-BitLockerVolume", ps, "BitLocker protects the system drive")
		}
		return broken("manage-bde -status C:", out, err, "the BitLocker status could not be read (run the agent as a service or administrator)")
	}
	ok, msg := ParseManageBde(out)
	return Result{Passed: ok, Method: "manage-bde -status C:", Raw: out, Message: msg}
}

// defenderStatus is the part of Get-MpComputerStatus the check reads.
type defenderStatus struct {
	AntivirusEnabled          bool `json:"AntivirusEnabled"`
	RealTimeProtectionEnabled bool `json:"RealTimeProtectionEnabled"`
	AntivirusSignatureAge     int  `json:"AntivirusSignatureAge"`
}

// ParseDefenderStatus reads Get-MpComputerStatus as JSON.
func ParseDefenderStatus(out string) (bool, string, error) {
	var s defenderStatus
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &s); err != nil {
		return false, "", fmt.Errorf("parse Get-MpComputerStatus: %w", err)
	}
	switch {
	case !s.AntivirusEnabled:
		return false, "Microsoft Defender Antivirus is disabled", nil
	case !s.RealTimeProtectionEnabled:
		return false, "Defender real-time protection is off", nil
	case s.AntivirusSignatureAge > 7:
		return false, fmt.Sprintf("Defender signatures are %d days old", s.AntivirusSignatureAge), nil
	}
	return true, fmt.Sprintf("Defender is on with real-time protection; signatures %d days old", s.AntivirusSignatureAge), nil
}

func windowsDefender(ctx context.Context, env Env) Result {
	const method = "Get-MpComputerStatus"
	out, err := powershell(ctx, env, "Get-MpComputerStatus | Select-Object AntivirusEnabled,RealTimeProtectionEnabled,AntivirusSignatureAge | ConvertTo-Json")
	if err != nil {
		return broken(method, out, err, "the Defender status could not be read (another antivirus may be installed)")
	}
	ok, msg, perr := ParseDefenderStatus(out)
	if perr != nil {
		return broken(method, out, perr, "the Defender status was not understood")
	}
	return Result{Passed: ok, Method: method, Raw: out, Message: msg}
}

// windowsLock is the screen lock settings the PowerShell script reads.
type windowsLock struct {
	InactivityTimeoutSecs *int    `json:"InactivityTimeoutSecs"`
	ScreenSaveActive      *string `json:"ScreenSaveActive"`
	ScreenSaverIsSecure   *string `json:"ScreenSaverIsSecure"`
	ScreenSaveTimeOut     *string `json:"ScreenSaveTimeOut"`
}

const windowsLockScript = `$p = Get-ItemProperty 'HKLM:\SOFTWARE\Microsoft\Windows\CurrentVersion\Policies\System' -ErrorAction SilentlyContinue;` +
	`$d = Get-ItemProperty 'HKCU:\Control Panel\Desktop' -ErrorAction SilentlyContinue;` +
	`[pscustomobject]@{InactivityTimeoutSecs=$p.InactivityTimeoutSecs;ScreenSaveActive=$d.ScreenSaveActive;ScreenSaverIsSecure=$d.ScreenSaverIsSecure;ScreenSaveTimeOut=$d.ScreenSaveTimeOut} | ConvertTo-Json`

// ParseWindowsLock reads the machine inactivity limit policy and the
// user's secure screen saver settings.
func ParseWindowsLock(out string) (bool, string, error) {
	var s windowsLock
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &s); err != nil {
		return false, "", fmt.Errorf("parse screen lock settings: %w", err)
	}
	if s.InactivityTimeoutSecs != nil && *s.InactivityTimeoutSecs > 0 {
		if *s.InactivityTimeoutSecs <= maxLockDelay {
			return true, fmt.Sprintf("the machine inactivity limit locks after %d s", *s.InactivityTimeoutSecs), nil
		}
		return false, fmt.Sprintf("the machine inactivity limit is %d s, more than %d s", *s.InactivityTimeoutSecs, maxLockDelay), nil
	}
	val := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if val(s.ScreenSaveActive) != "1" || val(s.ScreenSaverIsSecure) != "1" {
		return false, "no inactivity limit policy and no password-protected screen saver", nil
	}
	n, err := strconv.Atoi(val(s.ScreenSaveTimeOut))
	if err != nil || n <= 0 {
		return false, "the screen saver timeout is not set", nil
	}
	if n > maxLockDelay {
		return false, fmt.Sprintf("the screen saver locks after %d s, more than %d s", n, maxLockDelay), nil
	}
	return true, fmt.Sprintf("the password-protected screen saver starts after %d s", n), nil
}

func windowsScreenLock(ctx context.Context, env Env) Result {
	out, err := powershell(ctx, env, windowsLockScript)
	if err != nil {
		return broken("registry: Policies\\System, Control Panel\\Desktop", out, err, "the screen lock settings could not be read")
	}
	ok, msg, perr := ParseWindowsLock(out)
	if perr != nil {
		return broken("registry: Policies\\System, Control Panel\\Desktop", out, perr, "the screen lock settings were not understood")
	}
	return Result{Passed: ok, Method: "registry: Policies\\System, Control Panel\\Desktop", Raw: out, Message: msg}
}

const windowsUpdateScript = `$s = Get-Service wuauserv; $h = Get-HotFix | Where-Object InstalledOn | Sort-Object InstalledOn -Descending | Select-Object -First 1;` +
	`[pscustomobject]@{StartType=[string]$s.StartType;LastInstalled=if ($h) { $h.InstalledOn.ToString('yyyy-MM-dd') } else { $null }} | ConvertTo-Json`

// maxUpdateAge is how old the last installed update may be.
const maxUpdateAge = 60 * 24 * time.Hour

// ParseWindowsUpdate reads the Windows Update service's start type and the
// date of the last installed update.
func ParseWindowsUpdate(out string, now time.Time) (bool, string, error) {
	var s struct {
		StartType     string  `json:"StartType"`
		LastInstalled *string `json:"LastInstalled"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &s); err != nil {
		return false, "", fmt.Errorf("parse Windows Update state: %w", err)
	}
	if s.StartType == "Disabled" {
		return false, "the Windows Update service is disabled", nil
	}
	if s.LastInstalled == nil {
		return false, "no installed update was found", nil
	}
	t, err := time.Parse("2006-01-02", *s.LastInstalled)
	if err != nil {
		return false, "", fmt.Errorf("parse last install date %q: %w", *s.LastInstalled, err)
	}
	age := now.Sub(t)
	if age > maxUpdateAge {
		return false, fmt.Sprintf("the last update was installed %d days ago", int(age.Hours()/24)), nil
	}
	return true, fmt.Sprintf("Windows Update is %s; the last update was installed on %s", s.StartType, *s.LastInstalled), nil
}

func windowsUpdates(ctx context.Context, env Env) Result {
	out, err := powershell(ctx, env, windowsUpdateScript)
	if err != nil {
		return broken("Get-Service wuauserv; Get-HotFix", out, err, "the Windows Update state could not be read")
	}
	ok, msg, perr := ParseWindowsUpdate(out, env.Now())
	if perr != nil {
		return broken("Get-Service wuauserv; Get-HotFix", out, perr, "the Windows Update state was not understood")
	}
	return Result{Passed: ok, Method: "Get-Service wuauserv; Get-HotFix", Raw: out, Message: msg}
}

// ParseNetshFirewall reads `netsh advfirewall show allprofiles state`:
// every profile must be ON.
func ParseNetshFirewall(out string) (bool, string) {
	profiles := regexp.MustCompile(`(?m)^(\w+) Profile Settings:`).FindAllStringSubmatch(out, -1)
	states := regexp.MustCompile(`(?m)^State\s+(\w+)`).FindAllStringSubmatch(out, -1)
	if len(states) == 0 || len(profiles) != len(states) {
		return false, "the firewall state was not understood"
	}
	var off []string
	for i, s := range states {
		if !strings.EqualFold(s[1], "ON") {
			off = append(off, profiles[i][1])
		}
	}
	if len(off) > 0 {
		return false, "the firewall is off for the " + strings.Join(off, ", ") + " profile(s)"
	}
	return true, "the firewall is on for every profile"
}

func windowsFirewall(ctx context.Context, env Env) Result {
	out, err := env.Run(ctx, "netsh", "advfirewall", "show", "allprofiles", "state")
	if err != nil && out == "" {
		return broken("netsh advfirewall show allprofiles state", out, err, "netsh could not be run")
	}
	ok, msg := ParseNetshFirewall(out)
	return Result{Passed: ok, Method: "netsh advfirewall show allprofiles state", Raw: out, Message: msg}
}

// ParseNetAccounts reads `net accounts` and returns the minimum password
// length (-1 when not found).
func ParseNetAccounts(out string) int {
	m := regexp.MustCompile(`(?m)^Minimum password length:?\s+(\d+)`).FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func windowsPasswordPolicy(ctx context.Context, env Env) Result {
	out, err := env.Run(ctx, "net", "accounts")
	if err != nil && out == "" {
		return broken("net accounts", out, err, "net accounts could not be run")
	}
	n := ParseNetAccounts(out)
	switch {
	case n < 0:
		return fail("net accounts", out, "the password policy was not understood")
	case n >= minPasswordLength:
		return pass("net accounts", out, fmt.Sprintf("passwords must have at least %d characters", n))
	}
	return fail("net accounts", out, fmt.Sprintf("the minimum password length is %d, less than %d", n, minPasswordLength))
}
