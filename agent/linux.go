package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var linuxCollectors = map[string]func(context.Context, Env) Result{
	DiskEncryption: linuxDiskEncryption,
	ScreenLock:     linuxScreenLock,
	Firewall:       linuxFirewall,
	OSUpdates:      linuxOSUpdates,
	Antivirus:      linuxAntivirus,
	PasswordPolicy: linuxPasswordPolicy,
}

// lsblkDevice is one node of `lsblk -J` output.
type lsblkDevice struct {
	Name        string        `json:"name"`
	Type        string        `json:"type"`
	FSType      *string       `json:"fstype"`
	Mountpoint  *string       `json:"mountpoint"`
	Mountpoints []*string     `json:"mountpoints"`
	Children    []lsblkDevice `json:"children"`
}

// ParseLsblk reads `lsblk -J -o NAME,TYPE,FSTYPE,MOUNTPOINT` and returns,
// for each mount point, whether it sits on a dm-crypt (LUKS) mapping.
func ParseLsblk(out string) (map[string]bool, error) {
	var doc struct {
		Blockdevices []lsblkDevice `json:"blockdevices"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return nil, fmt.Errorf("parse lsblk output: %w", err)
	}
	mounts := map[string]bool{}
	var walk func(d lsblkDevice, crypt bool)
	walk = func(d lsblkDevice, crypt bool) {
		crypt = crypt || d.Type == "crypt"
		var mps []string
		if d.Mountpoint != nil {
			mps = append(mps, *d.Mountpoint)
		}
		for _, m := range d.Mountpoints {
			if m != nil {
				mps = append(mps, *m)
			}
		}
		for _, m := range mps {
			if m != "" {
				mounts[m] = mounts[m] || crypt
			}
		}
		for _, c := range d.Children {
			walk(c, crypt)
		}
	}
	for _, d := range doc.Blockdevices {
		walk(d, false)
	}
	return mounts, nil
}

// EvaluateLinuxDisk decides disk encryption from the mount map: / must be
// on dm-crypt, and /home too when it is a separate file system.
func EvaluateLinuxDisk(mounts map[string]bool) (bool, string) {
	root, ok := mounts["/"]
	if !ok {
		return false, "the root file system is not on a local block device (container or network root); encryption cannot be confirmed"
	}
	if !root {
		return false, "the root file system is not encrypted (no dm-crypt/LUKS mapping under /)"
	}
	if home, ok := mounts["/home"]; ok && !home {
		return false, "/home is a separate file system that is not encrypted"
	}
	return true, "the root file system (and /home) are on dm-crypt/LUKS"
}

func linuxDiskEncryption(ctx context.Context, env Env) Result {
	const method = "lsblk -J -o NAME,TYPE,FSTYPE,MOUNTPOINT"
	out, err := env.Run(ctx, "lsblk", "-J", "-o", "NAME,TYPE,FSTYPE,MOUNTPOINT")
	if err != nil {
		// Fall back to the device-mapper table: a CRYPT- uuid is a dm-crypt mapping.
		if uuids, ferr := env.Run(ctx, "sh", "-c", "cat /sys/block/dm-*/dm/uuid 2>/dev/null"); ferr == nil && strings.Contains(uuids, "CRYPT-") {
			return fail("/sys/block/dm-*/dm/uuid", uuids, "a dm-crypt mapping exists but lsblk is unavailable to confirm it holds the root file system")
		}
		return broken(method, out, err, "lsblk could not list block devices")
	}
	mounts, err := ParseLsblk(out)
	if err != nil {
		return broken(method, out, err, "lsblk output was not understood")
	}
	ok, msg := EvaluateLinuxDisk(mounts)
	if ok {
		return pass(method, out, msg)
	}
	return fail(method, out, msg)
}

// maxLockDelay is the longest idle time before the screen locks that
// passes (15 minutes, the usual policy).
const maxLockDelay = 900

// ParseGnomeLock reads `gsettings get org.gnome.desktop.screensaver
// lock-enabled` and `gsettings get org.gnome.desktop.session idle-delay`.
func ParseGnomeLock(lockEnabled, idleDelay string) (bool, string) {
	if strings.TrimSpace(lockEnabled) != "true" {
		return false, "the GNOME screen lock is disabled"
	}
	f := strings.Fields(idleDelay)
	if len(f) == 0 {
		return false, "the GNOME idle delay is unknown"
	}
	secs, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		return false, "the GNOME idle delay is unknown"
	}
	if secs == 0 {
		return false, "the screen never blanks (idle-delay 0), so it never locks"
	}
	if secs > maxLockDelay {
		return false, fmt.Sprintf("the screen locks after %d s of inactivity, more than %d s", secs, maxLockDelay)
	}
	return true, fmt.Sprintf("the screen locks after %d s of inactivity", secs)
}

// ParseKDELock reads kreadconfig5's Autolock and Timeout (minutes) of
// kscreenlockerrc; empty values are KDE's defaults (on, 5 minutes).
func ParseKDELock(autolock, timeout string) (bool, string) {
	if strings.TrimSpace(autolock) == "false" {
		return false, "the KDE screen locker's automatic lock is off"
	}
	mins := 5
	if t := strings.TrimSpace(timeout); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil {
			return false, "the KDE lock timeout is unknown"
		}
		mins = n
	}
	if mins*60 > maxLockDelay || mins <= 0 {
		return false, fmt.Sprintf("the screen locks after %d min of inactivity, more than %d s", mins, maxLockDelay)
	}
	return true, fmt.Sprintf("the screen locks after %d min of inactivity", mins)
}

func linuxScreenLock(ctx context.Context, env Env) Result {
	desktop := env.Getenv("XDG_CURRENT_DESKTOP")
	if env.Getenv("DISPLAY") == "" && env.Getenv("WAYLAND_DISPLAY") == "" && desktop == "" {
		return pass("environment", "", "not applicable: no desktop session on this device")
	}
	if strings.Contains(strings.ToUpper(desktop), "KDE") {
		a, err := env.Run(ctx, "kreadconfig5", "--file", "kscreenlockerrc", "--group", "Daemon", "--key", "Autolock")
		if err == nil {
			t, _ := env.Run(ctx, "kreadconfig5", "--file", "kscreenlockerrc", "--group", "Daemon", "--key", "Timeout")
			ok, msg := ParseKDELock(a, t)
			return Result{Passed: ok, Method: "kreadconfig5 kscreenlockerrc", Raw: "Autolock=" + a + "Timeout=" + t, Message: msg}
		}
	}
	l, err := env.Run(ctx, "gsettings", "get", "org.gnome.desktop.screensaver", "lock-enabled")
	if err != nil {
		return broken("gsettings", l, err, "the desktop's screen lock setting could not be read (gsettings or kreadconfig5)")
	}
	d, err := env.Run(ctx, "gsettings", "get", "org.gnome.desktop.session", "idle-delay")
	if err != nil {
		return broken("gsettings", d, err, "the idle delay could not be read")
	}
	ok, msg := ParseGnomeLock(l, d)
	return Result{Passed: ok, Method: "gsettings org.gnome.desktop", Raw: "lock-enabled " + strings.TrimSpace(l) + "\nidle-delay " + strings.TrimSpace(d), Message: msg}
}

// ParseUFWStatus reads `ufw status`.
func ParseUFWStatus(out string) bool {
	return regexp.MustCompile(`(?m)^Status:\s*active\s*$`).MatchString(out)
}

// ParseFirewalldState reads `firewall-cmd --state`.
func ParseFirewalldState(out string) bool { return strings.TrimSpace(out) == "running" }

// ParseNftRuleset reads `nft list ruleset`: active when an input-hook chain
// drops by default or holds rules.
func ParseNftRuleset(out string) (bool, int) {
	inInput, active, rules := false, false, 0
	for _, line := range strings.Split(out, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(l, "chain "):
			inInput = false
		case strings.Contains(l, "hook input"):
			inInput = true
			if strings.Contains(l, "policy drop") || strings.Contains(l, "policy reject") {
				active = true
			}
		case inInput && l != "" && l != "}" && !strings.HasPrefix(l, "type "):
			rules++
		}
	}
	return active || rules > 0, rules
}

// ParseIptablesRules reads `iptables -S`: active when INPUT drops by
// default or has rules.
func ParseIptablesRules(out string) (bool, int) {
	active, rules := false, 0
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "-P INPUT DROP" || l == "-P INPUT REJECT" {
			active = true
		}
		if strings.HasPrefix(l, "-A INPUT ") {
			rules++
		}
	}
	return active || rules > 0, rules
}

func linuxFirewall(ctx context.Context, env Env) Result {
	var tried []string
	if out, err := env.Run(ctx, "ufw", "status"); err == nil || (!missing(err) && out != "") {
		if ParseUFWStatus(out) {
			return pass("ufw status", out, "ufw is active")
		}
		tried = append(tried, "ufw: "+firstLine(out))
	}
	if out, err := env.Run(ctx, "firewall-cmd", "--state"); err == nil || (!missing(err) && out != "") {
		if ParseFirewalldState(out) {
			return pass("firewall-cmd --state", out, "firewalld is running")
		}
		tried = append(tried, "firewalld: "+firstLine(out))
	}
	if out, err := env.Run(ctx, "nft", "list", "ruleset"); err == nil {
		if ok, n := ParseNftRuleset(out); ok {
			return pass("nft list ruleset", out, fmt.Sprintf("nftables filters input (%d rules)", n))
		}
		tried = append(tried, "nftables: no input filtering")
	} else if !missing(err) {
		tried = append(tried, "nftables: "+firstLine(out))
	}
	if out, err := env.Run(ctx, "iptables", "-S"); err == nil {
		if ok, n := ParseIptablesRules(out); ok {
			return pass("iptables -S", out, fmt.Sprintf("iptables filters input (%d rules)", n))
		}
		tried = append(tried, "iptables: INPUT accepts everything")
	} else if !missing(err) {
		tried = append(tried, "iptables: "+firstLine(out))
	}
	if len(tried) == 0 {
		return fail("ufw, firewall-cmd, nft, iptables", "", "no firewall tool was found (ufw, firewalld, nftables or iptables)")
	}
	return fail("ufw, firewall-cmd, nft, iptables", strings.Join(tried, "\n"), "no active firewall rules were found (reading nftables and iptables rules may need root)")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// ParseAptPeriodic reads apt's periodic configuration (20auto-upgrades):
// unattended upgrades run when Update-Package-Lists and Unattended-Upgrade
// are both non-zero.
func ParseAptPeriodic(conf string) bool {
	get := func(key string) string {
		m := regexp.MustCompile(`(?m)^\s*APT::Periodic::`+regexp.QuoteMeta(key)+`\s+"([^"]*)"\s*;`).FindAllStringSubmatch(conf, -1)
		if len(m) == 0 {
			return ""
		}
		return m[len(m)-1][1]
	}
	u, l := get("Unattended-Upgrade"), get("Update-Package-Lists")
	return u != "" && u != "0" && l != "" && l != "0"
}

func linuxOSUpdates(ctx context.Context, env Env) Result {
	if b, err := env.ReadFile("/etc/apt/apt.conf.d/20auto-upgrades"); err == nil {
		if ParseAptPeriodic(string(b)) {
			return pass("/etc/apt/apt.conf.d/20auto-upgrades", string(b), "unattended-upgrades installs updates automatically")
		}
		return fail("/etc/apt/apt.conf.d/20auto-upgrades", string(b), "unattended-upgrades is configured but disabled")
	}
	for _, timer := range []string{"dnf-automatic-install.timer", "dnf-automatic.timer", "dnf5-automatic.timer"} {
		out, err := env.Run(ctx, "systemctl", "is-enabled", timer)
		if err == nil && strings.TrimSpace(out) == "enabled" {
			return pass("systemctl is-enabled "+timer, out, timer+" is enabled")
		}
	}
	return fail("20auto-upgrades, dnf-automatic timers", "", "no automatic updates are configured (unattended-upgrades or dnf-automatic)")
}

// linuxAVProcesses are antivirus and EDR daemons recognised without
// configuration.
var linuxAVProcesses = []string{"clamd", "freshclam", "clamonacc", "falcon-sensor", "wdavdaemon", "SentinelAgent", "cbagentd", "elastic-endpoint"}

func linuxAntivirus(_ context.Context, env Env) Result {
	procs, err := env.Processes()
	if err != nil {
		return broken("/proc/*/comm", "", err, "the running processes could not be listed")
	}
	wanted := append(append([]string{}, linuxAVProcesses...), env.EDRProcesses...)
	found := matchProcesses(procs, wanted)
	if len(found) > 0 {
		return pass("/proc/*/comm", strings.Join(found, "\n"), "running: "+strings.Join(found, ", "))
	}
	return fail("/proc/*/comm", "", "no antivirus or EDR process is running (looked for "+strings.Join(wanted, ", ")+")")
}

// minPasswordLength is the shortest minimum password length that passes.
const minPasswordLength = 8

// ParsePwquality returns minlen from pwquality.conf, or a pam_pwquality /
// pam_cracklib line's minlen= argument; 0 when unset.
func ParsePwquality(conf string) int {
	n := 0
	for _, l := range strings.Split(conf, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") {
			continue
		}
		if m := regexp.MustCompile(`^minlen\s*=\s*(\d+)`).FindStringSubmatch(l); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		if strings.Contains(l, "pam_pwquality") || strings.Contains(l, "pam_cracklib") {
			if m := regexp.MustCompile(`\bminlen=(\d+)`).FindStringSubmatch(l); m != nil {
				n, _ = strconv.Atoi(m[1])
			}
		}
	}
	return n
}

// ParseLoginDefs returns PASS_MIN_LEN and PASS_MAX_DAYS of login.defs (0
// when unset).
func ParseLoginDefs(conf string) (minLen, maxDays int) {
	for _, l := range strings.Split(conf, "\n") {
		f := strings.Fields(l)
		if len(f) != 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		switch f[0] {
		case "PASS_MIN_LEN":
			minLen = n
		case "PASS_MAX_DAYS":
			maxDays = n
		}
	}
	return minLen, maxDays
}

func linuxPasswordPolicy(_ context.Context, env Env) Result {
	var raw []string
	best, source := 0, ""
	for _, f := range []string{"/etc/security/pwquality.conf", "/etc/pam.d/common-password", "/etc/pam.d/system-auth"} {
		b, err := env.ReadFile(f)
		if err != nil {
			continue
		}
		if n := ParsePwquality(string(b)); n > best {
			best, source = n, f
			raw = append(raw, fmt.Sprintf("%s: minlen=%d", f, n))
		}
	}
	if b, err := env.ReadFile("/etc/login.defs"); err == nil {
		n, days := ParseLoginDefs(string(b))
		raw = append(raw, fmt.Sprintf("/etc/login.defs: PASS_MIN_LEN=%d PASS_MAX_DAYS=%d", n, days))
		if n > best {
			best, source = n, "/etc/login.defs"
		}
	}
	method := "pwquality.conf, pam.d, login.defs"
	if best >= minPasswordLength {
		return pass(method, strings.Join(raw, "\n"), fmt.Sprintf("passwords must have at least %d characters (%s)", best, source))
	}
	if best == 0 {
		return fail(method, strings.Join(raw, "\n"), "no minimum password length is configured (pam_pwquality minlen or PASS_MIN_LEN)")
	}
	return fail(method, strings.Join(raw, "\n"), fmt.Sprintf("the minimum password length is %d, less than %d (%s)", best, minPasswordLength, source))
}
