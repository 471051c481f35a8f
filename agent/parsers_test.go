package agent

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLinuxParsers(t *testing.T) {
	m, err := ParseLsblk(fixture(t, "linux_lsblk_luks.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, msg := EvaluateLinuxDisk(m); !ok || m["/boot"] {
		t.Errorf("LUKS root: %v %s %v", ok, msg, m)
	}
	m, err = ParseLsblk(fixture(t, "linux_lsblk_plain.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, msg := EvaluateLinuxDisk(m); ok || !m["/home"] || !strings.Contains(msg, "root file system is not encrypted") {
		t.Errorf("plain root, encrypted home: %v %s %v", ok, msg, m)
	}
	if ok, msg := EvaluateLinuxDisk(map[string]bool{"/boot": false}); ok || !strings.Contains(msg, "container") {
		t.Errorf("no root device: %v %s", ok, msg)
	}
	if _, err := ParseLsblk("lsblk: not json"); err == nil {
		t.Error("garbage lsblk output parsed")
	}

	if ok, n := ParseNftRuleset(fixture(t, "linux_nft_ruleset.txt")); !ok || n != 3 {
		t.Errorf("nft ruleset: %v %d", ok, n)
	}
	if ok, _ := ParseNftRuleset(fixture(t, "linux_nft_empty.txt")); ok {
		t.Error("accept-all nft ruleset counted as a firewall")
	}
	if ok, n := ParseIptablesRules(fixture(t, "linux_iptables_rules.txt")); !ok || n != 3 {
		t.Errorf("iptables rules: %v %d", ok, n)
	}
	if ok, _ := ParseIptablesRules(fixture(t, "linux_iptables_default.txt")); ok {
		t.Error("default iptables counted as a firewall")
	}
	if !ParseUFWStatus(fixture(t, "linux_ufw_active.txt")) || ParseUFWStatus(fixture(t, "linux_ufw_inactive.txt")) {
		t.Error("ufw status")
	}
	if !ParseFirewalldState("running\n") || ParseFirewalldState("not running\n") {
		t.Error("firewalld state")
	}
	if !ParseAptPeriodic(fixture(t, "linux_20auto-upgrades.txt")) || ParseAptPeriodic(fixture(t, "linux_20auto-upgrades_off.txt")) {
		t.Error("apt periodic")
	}
	if n := ParsePwquality(fixture(t, "linux_pwquality.conf")); n != 12 {
		t.Errorf("pwquality minlen %d, want 12", n)
	}
	if n := ParsePwquality(fixture(t, "linux_common-password.txt")); n != 10 {
		t.Errorf("pam minlen %d, want 10", n)
	}
	if n, days := ParseLoginDefs(fixture(t, "linux_login.defs")); n != 0 || days != 99999 {
		t.Errorf("login.defs: %d %d", n, days)
	}
	for _, c := range []struct {
		lock, delay string
		want        bool
	}{{"true\n", "uint32 300\n", true}, {"false\n", "uint32 300\n", false}, {"true\n", "uint32 0\n", false}, {"true\n", "uint32 1800\n", false}} {
		if ok, msg := ParseGnomeLock(c.lock, c.delay); ok != c.want {
			t.Errorf("gnome %q %q: %v %s", c.lock, c.delay, ok, msg)
		}
	}
	if ok, _ := ParseKDELock("\n", "\n"); !ok {
		t.Error("KDE defaults lock after 5 minutes")
	}
	if ok, _ := ParseKDELock("false\n", "5\n"); ok {
		t.Error("KDE autolock off passed")
	}
	if got := ParseOSRelease(fixture(t, "linux_os-release.txt")); got != "Debian GNU/Linux 12 (bookworm)" {
		t.Errorf("os-release: %q", got)
	}
	if got := matchProcesses([]string{"systemd", "clamd", "bash"}, []string{"clamd", "falcon-sensor"}); len(got) != 1 || got[0] != "clamd" {
		t.Errorf("processes: %v", got)
	}
}

func TestDarwinParsers(t *testing.T) {
	for f, want := range map[string]bool{"darwin_fdesetup_on.txt": true, "darwin_fdesetup_off.txt": false, "darwin_fdesetup_progress.txt": false} {
		if ok, msg := ParseFdesetupStatus(fixture(t, f)); ok != want {
			t.Errorf("%s: %v %s", f, ok, msg)
		}
	}
	for _, c := range []struct {
		f, idle string
		want    bool
	}{{"darwin_sysadminctl_immediate.txt", "300\n", true}, {"darwin_sysadminctl_immediate.txt", "", false},
		{"darwin_sysadminctl_off.txt", "300", false}, {"darwin_sysadminctl_300.txt", "600", true}, {"darwin_sysadminctl_300.txt", "0", false},
		{"darwin_sysadminctl_immediate.txt", "The domain/default pair of (com.apple.screensaver, idleTime) does not exist", false}} {
		if ok, msg := ParseMacScreenLock(fixture(t, c.f), c.idle); ok != c.want {
			t.Errorf("%s idle %q: %v %s", c.f, c.idle, ok, msg)
		}
	}
	if !ParseSoftwareUpdateSchedule(fixture(t, "darwin_softwareupdate_on.txt")) || ParseSoftwareUpdateSchedule(fixture(t, "darwin_softwareupdate_off.txt")) {
		t.Error("softwareupdate schedule")
	}
	if !ParseSocketFilterGlobalState(fixture(t, "darwin_socketfilterfw_on.txt")) || ParseSocketFilterGlobalState(fixture(t, "darwin_socketfilterfw_off.txt")) {
		t.Error("socketfilterfw")
	}
	if !ParseSpctlStatus(fixture(t, "darwin_spctl_enabled.txt")) || ParseSpctlStatus(fixture(t, "darwin_spctl_disabled.txt")) {
		t.Error("spctl")
	}
	if n := ParsePwpolicyMinLength(fixture(t, "darwin_pwpolicy.txt")); n != 12 {
		t.Errorf("pwpolicy min length %d", n)
	}
	if n := ParsePwpolicyMinLength(fixture(t, "darwin_pwpolicy_none.txt")); n != 0 {
		t.Errorf("no pwpolicy: %d", n)
	}
}

func TestWindowsParsers(t *testing.T) {
	if ok, msg := ParseManageBde(fixture(t, "windows_manage-bde_on.txt")); !ok {
		t.Errorf("bitlocker on: %s", msg)
	}
	if ok, msg := ParseManageBde(fixture(t, "windows_manage-bde_off.txt")); ok || !strings.Contains(msg, "Protection Off") {
		t.Errorf("bitlocker off: %v %s", ok, msg)
	}
	if ok, _, err := ParseDefenderStatus(fixture(t, "windows_defender_on.json")); !ok || err != nil {
		t.Errorf("defender on: %v %v", ok, err)
	}
	if ok, msg, err := ParseDefenderStatus(fixture(t, "windows_defender_rtp_off.json")); ok || err != nil || !strings.Contains(msg, "real-time") {
		t.Errorf("defender rtp off: %v %s %v", ok, msg, err)
	}
	if _, _, err := ParseDefenderStatus("Get-MpComputerStatus : The term is not recognized"); err == nil {
		t.Error("garbage Defender output parsed")
	}
	if ok, _, err := ParseWindowsLock(fixture(t, "windows_lock_policy.json")); !ok || err != nil {
		t.Errorf("lock policy: %v %v", ok, err)
	}
	if ok, msg, err := ParseWindowsLock(fixture(t, "windows_lock_none.json")); ok || err != nil {
		t.Errorf("insecure screen saver passed: %s %v", msg, err)
	}
	now := time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC)
	if ok, msg, err := ParseWindowsUpdate(fixture(t, "windows_update.json"), now); !ok || err != nil {
		t.Errorf("updates: %v %s %v", ok, msg, err)
	}
	if ok, _, err := ParseWindowsUpdate(fixture(t, "windows_update.json"), now.AddDate(0, 3, 0)); ok || err != nil {
		t.Error("a three-month-old update passed")
	}
	if ok, msg, _ := ParseWindowsUpdate(fixture(t, "windows_update_disabled.json"), now); ok || !strings.Contains(msg, "disabled") {
		t.Errorf("disabled service: %s", msg)
	}
	if ok, _ := ParseNetshFirewall(fixture(t, "windows_netsh_on.txt")); !ok {
		t.Error("netsh all on")
	}
	if ok, msg := ParseNetshFirewall(fixture(t, "windows_netsh_public_off.txt")); ok || !strings.Contains(msg, "Public") {
		t.Errorf("public off: %v %s", ok, msg)
	}
	if n := ParseNetAccounts(fixture(t, "windows_net_accounts.txt")); n != 14 {
		t.Errorf("net accounts %d", n)
	}
	if n := ParseNetAccounts(fixture(t, "windows_net_accounts_weak.txt")); n != 0 {
		t.Errorf("weak net accounts %d", n)
	}
}

// fakeEnv answers commands from a table of fixtures.
func fakeEnv(t *testing.T, cmds map[string]string, files map[string]string) Env {
	return Env{
		Run: func(_ context.Context, name string, args ...string) (string, error) {
			key := strings.Join(append([]string{name}, args...), " ")
			if out, ok := cmds[key]; ok {
				return out, nil
			}
			return "", exec.ErrNotFound
		},
		ReadFile: func(n string) ([]byte, error) {
			if s, ok := files[n]; ok {
				return []byte(s), nil
			}
			return nil, os.ErrNotExist
		},
		Getenv:    func(string) string { return "" },
		Processes: func() ([]string, error) { return []string{"systemd", "clamd"}, nil },
		Now:       func() time.Time { return time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC) },
	}
}

func TestCollectorsWithRecordedOutputs(t *testing.T) {
	ctx := context.Background()
	linux := fakeEnv(t, map[string]string{
		"lsblk -J -o NAME,TYPE,FSTYPE,MOUNTPOINT": fixture(t, "linux_lsblk_luks.json"),
		"ufw status": fixture(t, "linux_ufw_active.txt"),
	}, map[string]string{
		"/etc/apt/apt.conf.d/20auto-upgrades": fixture(t, "linux_20auto-upgrades.txt"),
		"/etc/security/pwquality.conf":        fixture(t, "linux_pwquality.conf"),
	})
	for _, r := range Collect(ctx, linux, "linux") {
		if !r.Passed {
			t.Errorf("linux %s failed: %+v", r.CheckType, r)
		}
		if r.CheckType == ScreenLock && !strings.Contains(r.Message, "not applicable") {
			t.Errorf("headless screen lock: %s", r.Message)
		}
	}
	darwin := fakeEnv(t, map[string]string{
		"fdesetup status":                fixture(t, "darwin_fdesetup_on.txt"),
		"sysadminctl -screenLock status": fixture(t, "darwin_sysadminctl_immediate.txt"),
		"defaults -currentHost read com.apple.screensaver idleTime":        "300",
		"softwareupdate --schedule":                                        fixture(t, "darwin_softwareupdate_on.txt"),
		"/usr/libexec/ApplicationFirewall/socketfilterfw --getglobalstate": fixture(t, "darwin_socketfilterfw_on.txt"),
		"spctl --status":               fixture(t, "darwin_spctl_enabled.txt"),
		"pwpolicy -getaccountpolicies": fixture(t, "darwin_pwpolicy.txt"),
	}, nil)
	for _, r := range Collect(ctx, darwin, "darwin") {
		if !r.Passed {
			t.Errorf("darwin %s failed: %+v", r.CheckType, r)
		}
	}
	ps := "powershell.exe -NoProfile -NonInteractive -Command "
	windows := fakeEnv(t, map[string]string{
		"manage-bde -status C:": fixture(t, "windows_manage-bde_off.txt"),
		ps + "Get-MpComputerStatus | Select-Object AntivirusEnabled,RealTimeProtectionEnabled,AntivirusSignatureAge | ConvertTo-Json": fixture(t, "windows_defender_on.json"),
		ps + windowsLockScript:                     fixture(t, "windows_lock_policy.json"),
		ps + windowsUpdateScript:                   fixture(t, "windows_update.json"),
		"netsh advfirewall show allprofiles state": fixture(t, "windows_netsh_on.txt"),
		"net accounts":                             fixture(t, "windows_net_accounts.txt"),
	}, nil)
	for _, r := range Collect(ctx, windows, "windows") {
		if r.Passed == (r.CheckType == DiskEncryption) {
			t.Errorf("windows %s: passed=%v: %+v", r.CheckType, r.Passed, r)
		}
	}
	// Missing tools fail with the reason, never pass.
	bare := fakeEnv(t, nil, nil)
	bare.Processes = func() ([]string, error) { return nil, errors.New("no /proc") }
	for _, r := range Collect(ctx, bare, "darwin") {
		if r.Passed || r.Message == "" || r.Exception == "" {
			t.Errorf("darwin without tools %s: %+v", r.CheckType, r)
		}
	}
	for _, r := range Collect(ctx, bare, "plan9") {
		if r.Passed || r.Exception == "" {
			t.Errorf("unsupported platform %s: %+v", r.CheckType, r)
		}
	}
}

// TestLinuxCollectorsForReal runs every Linux collector on this machine:
// none may panic or pass without a reason, and each stays within the
// check-in API's limits.
func TestLinuxCollectorsForReal(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("not a Linux machine")
	}
	rs := Collect(context.Background(), SystemEnv(), "linux")
	if len(rs) != len(CheckTypes) {
		t.Fatalf("%d results", len(rs))
	}
	for _, r := range rs {
		t.Logf("%-16s passed=%v method=%q message=%q exception=%q", r.CheckType, r.Passed, r.Method, r.Message, r.Exception)
		if r.Message == "" || r.Method == "" {
			t.Errorf("%s: no message or method: %+v", r.CheckType, r)
		}
		if len([]rune(r.Raw)) > maxRaw || len([]rune(r.Message)) > maxMessage || len([]rune(r.Method)) > maxMethod {
			t.Errorf("%s exceeds the API's limits", r.CheckType)
		}
	}
}

func TestClip(t *testing.T) {
	r := clip(Result{Raw: strings.Repeat("é", 3000), Method: strings.Repeat("m", 200)})
	if len([]rune(r.Raw)) != maxRaw || len([]rune(r.Method)) != maxMethod {
		t.Errorf("clip: raw %d method %d", len([]rune(r.Raw)), len([]rune(r.Method)))
	}
}
