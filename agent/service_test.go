package agent

import (
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSystemdUnitContents(t *testing.T) {
	u := SystemdUnit(ServiceSpec{Executable: "/usr/local/bin/compliance", ConfigDir: "/var/lib/compliance agent"})
	for _, want := range []string{
		"ExecStart=/usr/local/bin/compliance agent run --agent-dir \"/var/lib/compliance agent\"\n",
		"Restart=on-failure", "After=network-online.target", "WantedBy=multi-user.target",
	} {
		if !strings.Contains(u, want) {
			t.Fatalf("unit lacks %q:\n%s", want, u)
		}
	}
	if u := SystemdUnit(ServiceSpec{Executable: "/bin/c", ConfigDir: "/h/.config/ca", User: true}); !strings.Contains(u, "WantedBy=default.target") {
		t.Fatalf("user unit:\n%s", u)
	}
}

func TestLaunchdPlistContents(t *testing.T) {
	p := LaunchdPlist(ServiceSpec{Executable: "/usr/local/bin/compliance", ConfigDir: "/Library/Application Support/a&b"})
	// Well-formed XML with the arguments in order, escaped.
	dec := xml.NewDecoder(strings.NewReader(p))
	dec.Strict = true
	var strs []string
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "string" {
			var s string
			if err := dec.DecodeElement(&s, &se); err != nil {
				t.Fatal(err)
			}
			strs = append(strs, s)
		}
	}
	want := []string{LaunchdLabel, "/usr/local/bin/compliance", "agent", "run", "--agent-dir", "/Library/Application Support/a&b"}
	if len(strs) < len(want) {
		t.Fatalf("plist strings %q", strs)
	}
	for i, w := range want {
		if strs[i] != w {
			t.Fatalf("plist string %d = %q, want %q\n%s", i, strs[i], w, p)
		}
	}
	if !strings.Contains(p, "<key>RunAtLoad</key>\n\t<true/>") || !strings.Contains(p, "a&amp;b") {
		t.Fatalf("plist:\n%s", p)
	}
}

func TestWindowsServiceCommands(t *testing.T) {
	cs := WindowsServiceCommands(ServiceSpec{Executable: `C:\Program Files\Compliance\compliance.exe`, ConfigDir: `C:\ProgramData\compliance-agent`})
	if cs[0][0] != "sc.exe" || cs[0][1] != "create" || cs[0][2] != WindowsName ||
		cs[0][4] != `"C:\Program Files\Compliance\compliance.exe" agent run --agent-dir C:\ProgramData\compliance-agent` || cs[0][6] != "auto" {
		t.Fatalf("sc create: %q", cs[0])
	}
	if last := cs[len(cs)-1]; last[1] != "start" {
		t.Fatalf("last command %q", last)
	}
}

func TestInstallRefusesWithoutRoot(t *testing.T) {
	var ran []string
	run := func(name string, args ...string) error {
		ran = append(ran, name+" "+strings.Join(args, " "))
		return nil
	}
	spec := ServiceSpec{Executable: "/usr/bin/compliance", ConfigDir: "/var/lib/compliance-agent"}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		_, err := Install(InstallOptions{Spec: spec, GOOS: goos, IsRoot: func() bool { return false }, Run: run})
		if !errors.Is(err, ErrNeedRoot) {
			t.Fatalf("%s install without root: %v", goos, err)
		}
		if _, err := Uninstall(InstallOptions{Spec: spec, GOOS: goos, IsRoot: func() bool { return false }, Run: run}); !errors.Is(err, ErrNeedRoot) {
			t.Fatalf("%s uninstall without root: %v", goos, err)
		}
	}
	if len(ran) != 0 {
		t.Fatalf("ran without root: %q", ran)
	}
	// With --unit-dir: written there, nothing run, the commands left to do.
	dir := t.TempDir()
	res, err := Install(InstallOptions{Spec: spec, GOOS: "linux", UnitDir: dir, IsRoot: func() bool { return false }, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ServiceName+".service"))
	if err != nil || !strings.Contains(string(b), "--agent-dir /var/lib/compliance-agent") || res.Path != filepath.Join(dir, ServiceName+".service") {
		t.Fatalf("unit %v: %s", err, b)
	}
	if len(ran) != 0 || len(res.Next) != 2 || res.Next[1] != "systemctl enable --now "+ServiceName {
		t.Fatalf("ran %q, next %q", ran, res.Next)
	}
	res, err = Install(InstallOptions{Spec: spec, GOOS: "darwin", UnitDir: dir, IsRoot: func() bool { return false }, Run: run})
	if err != nil || !strings.HasSuffix(res.Path, LaunchdLabel+".plist") || res.Next[0] != "launchctl load -w "+res.Path {
		t.Fatalf("darwin %v: %+v", err, res)
	}
	if _, err := Uninstall(InstallOptions{Spec: spec, GOOS: "linux", UnitDir: dir, IsRoot: func() bool { return false }, Run: run}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ServiceName+".service")); !os.IsNotExist(err) {
		t.Fatalf("unit not removed: %v", err)
	}
	if _, err := Install(InstallOptions{Spec: ServiceSpec{Executable: "compliance", ConfigDir: "x"}, GOOS: "linux", UnitDir: dir, Run: run}); err == nil {
		t.Fatal("relative paths accepted")
	}
}
