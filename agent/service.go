package agent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Running the agent as a service: `compliance agent install` writes a
// systemd unit (Linux), a launchd property list (macOS) or registers a
// Windows service with sc.exe, each running `compliance agent run` with the
// agent's config directory; `uninstall` removes it.

// Service names.
const (
	ServiceName  = "compliance-agent"
	LaunchdLabel = "com.compliance.agent"
	WindowsName  = "ComplianceAgent"
)

// ServiceSpec is what a service definition runs.
type ServiceSpec struct {
	Executable string // absolute path of the compliance binary
	ConfigDir  string // absolute agent directory (agent.json)
	// User: a systemd user unit (runs in the person's session, so the
	// screen lock of their desktop is checked) instead of a system unit.
	User bool
}

func (s ServiceSpec) args() []string {
	return []string{"agent", "run", "--agent-dir", s.ConfigDir}
}

// systemdQuote quotes one word of an ExecStart line.
func systemdQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"'\\$%;") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `$$`, `%`, `%%`)
	return `"` + r.Replace(s) + `"`
}

// SystemdUnit is the unit file of the agent.
func SystemdUnit(s ServiceSpec) string {
	words := []string{systemdQuote(s.Executable)}
	for _, a := range s.args() {
		words = append(words, systemdQuote(a))
	}
	target := "multi-user.target"
	if s.User {
		target = "default.target"
	}
	return "[Unit]\nDescription=Compliance device agent\nDocumentation=https://github.com/compliance-appliance/compliance/blob/main/docs/devices.md\n" +
		"Wants=network-online.target\nAfter=network-online.target\n\n" +
		"[Service]\nType=simple\nExecStart=" + strings.Join(words, " ") + "\nRestart=on-failure\nRestartSec=60\n" +
		"Nice=10\nIOSchedulingClass=idle\n\n" +
		"[Install]\nWantedBy=" + target + "\n"
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(s)
}

// LaunchdPlist is the launchd property list of the agent.
func LaunchdPlist(s ServiceSpec) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + LaunchdLabel + `</string>
	<key>ProgramArguments</key>
	<array>
`)
	for _, a := range append([]string{s.Executable}, s.args()...) {
		b.WriteString("\t\t<string>" + xmlEscape(a) + "</string>\n")
	}
	b.WriteString(`	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ThrottleInterval</key>
	<integer>60</integer>
	<key>ProcessType</key>
	<string>Background</string>
	<key>StandardErrorPath</key>
	<string>` + xmlEscape(filepath.Join(s.ConfigDir, "agent.log")) + `</string>
</dict>
</plist>
`)
	return b.String()
}

// windowsQuote quotes one argument of a Windows command line.
func windowsQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// WindowsServiceCommands are the sc.exe calls that register the service
// (started at boot, as LocalSystem) and start it.
func WindowsServiceCommands(s ServiceSpec) [][]string {
	words := []string{windowsQuote(s.Executable)}
	for _, a := range s.args() {
		words = append(words, windowsQuote(a))
	}
	return [][]string{
		{"sc.exe", "create", WindowsName, "binPath=", strings.Join(words, " "), "start=", "auto", "DisplayName=", "Compliance device agent"},
		{"sc.exe", "description", WindowsName, "Reports this computer's security settings to the compliance appliance."},
		{"sc.exe", "failure", WindowsName, "reset=", "86400", "actions=", "restart/60000"},
		{"sc.exe", "start", WindowsName},
	}
}

// InstallOptions say where and how to install.
type InstallOptions struct {
	Spec ServiceSpec
	GOOS string
	// UnitDir overrides where the unit or property list is written; with it
	// nothing is enabled or started (the caller does that), and root is not
	// required.
	UnitDir string
	// IsRoot reports administrator rights; Run runs a command.
	IsRoot func() bool
	Run    func(name string, args ...string) error
}

// InstallResult says what was done and what is left to do.
type InstallResult struct {
	Path string   // the file written ("" on Windows)
	Next []string // commands left for the operator
}

// ErrNeedRoot is install or uninstall without administrator rights.
var ErrNeedRoot = errors.New("installing a service needs administrator rights: run as root (sudo), as a user unit with --user (Linux), or write the file elsewhere with --unit-dir")

func unitPath(o InstallOptions) (string, string, error) {
	dir := o.UnitDir
	switch o.GOOS {
	case "linux":
		if dir == "" {
			dir = "/etc/systemd/system"
			if o.Spec.User {
				d, err := os.UserConfigDir()
				if err != nil {
					return "", "", err
				}
				dir = filepath.Join(d, "systemd", "user")
			}
		}
		return dir, filepath.Join(dir, ServiceName+".service"), nil
	case "darwin":
		if dir == "" {
			dir = "/Library/LaunchDaemons"
		}
		return dir, filepath.Join(dir, LaunchdLabel+".plist"), nil
	}
	return "", "", fmt.Errorf("no service definition for %s", o.GOOS)
}

func (o InstallOptions) needsRoot() bool {
	return o.UnitDir == "" && !(o.GOOS == "linux" && o.Spec.User)
}

// Install writes the service definition and, unless UnitDir was given,
// enables and starts it.
func Install(o InstallOptions) (*InstallResult, error) {
	if !filepath.IsAbs(o.Spec.Executable) || !filepath.IsAbs(o.Spec.ConfigDir) {
		return nil, errors.New("the executable and the agent directory must be absolute paths")
	}
	if o.needsRoot() && !o.IsRoot() {
		return nil, ErrNeedRoot
	}
	if o.GOOS == "windows" {
		for _, c := range WindowsServiceCommands(o.Spec) {
			if err := o.Run(c[0], c[1:]...); err != nil {
				return nil, fmt.Errorf("%s: %w", strings.Join(c[:2], " "), err)
			}
		}
		return &InstallResult{}, nil
	}
	dir, path, err := unitPath(o)
	if err != nil {
		return nil, err
	}
	content := SystemdUnit(o.Spec)
	if o.GOOS == "darwin" {
		content = LaunchdPlist(o.Spec)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return nil, err
	}
	res := &InstallResult{Path: path}
	var cmds [][]string
	switch {
	case o.GOOS == "darwin":
		cmds = [][]string{{"launchctl", "load", "-w", path}}
	case o.Spec.User:
		cmds = [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", ServiceName}}
	default:
		cmds = [][]string{{"systemctl", "daemon-reload"}, {"systemctl", "enable", "--now", ServiceName}}
	}
	for _, c := range cmds {
		if o.UnitDir != "" {
			res.Next = append(res.Next, strings.Join(c, " "))
			continue
		}
		if err := o.Run(c[0], c[1:]...); err != nil {
			return res, fmt.Errorf("%s written; %s: %w", path, strings.Join(c, " "), err)
		}
	}
	return res, nil
}

// Uninstall stops the service and removes its definition.
func Uninstall(o InstallOptions) (*InstallResult, error) {
	if o.needsRoot() && !o.IsRoot() {
		return nil, ErrNeedRoot
	}
	if o.GOOS == "windows" {
		_ = o.Run("sc.exe", "stop", WindowsName)
		if err := o.Run("sc.exe", "delete", WindowsName); err != nil {
			return nil, fmt.Errorf("sc.exe delete: %w", err)
		}
		return &InstallResult{}, nil
	}
	_, path, err := unitPath(o)
	if err != nil {
		return nil, err
	}
	res := &InstallResult{Path: path}
	var stop []string
	switch {
	case o.GOOS == "darwin":
		stop = []string{"launchctl", "unload", "-w", path}
	case o.Spec.User:
		stop = []string{"systemctl", "--user", "disable", "--now", ServiceName}
	default:
		stop = []string{"systemctl", "disable", "--now", ServiceName}
	}
	if o.UnitDir != "" {
		res.Next = append(res.Next, strings.Join(stop, " "))
	} else {
		_ = o.Run(stop[0], stop[1:]...) // a service already stopped is fine
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, err
	}
	return res, nil
}

// RunCommand runs a command, its output to the process's.
func RunCommand(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}
