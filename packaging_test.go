package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestSystemdUnitHardened: the packaged unit runs as its own user, writes
// only the data directory and keeps the hardening an operator expects.
func TestSystemdUnitHardened(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("docs/deploy/compliance.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := map[string][]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			unit[k] = append(unit[k], v)
		}
	}
	for k, want := range map[string]string{
		"User": "compliance", "Group": "compliance", "NoNewPrivileges": "yes", "ProtectSystem": "strict",
		"ReadWritePaths": "/var/lib/compliance", "ProtectHome": "yes", "PrivateTmp": "yes", "CapabilityBoundingSet": "",
		"Environment": "COMPLIANCE_DATA_DIR=/var/lib/compliance", "ExecReload": "/bin/kill -HUP $MAINPID",
		"ExecStart": "/usr/bin/compliance serve --config /etc/compliance/config.yaml", "UMask": "0077",
	} {
		if got := unit[k]; len(got) == 0 || got[0] != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

// TestPackageContents: every file the package definition ships exists (the
// binary is copied in by make package).
func TestPackageContents(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(".ci/package/nfpm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srcs := regexp.MustCompile(`(?m)^\s*(?:- src|postinstall|preremove): (\S+)`).FindAllStringSubmatch(string(raw), -1)
	if len(srcs) < 7 {
		t.Fatalf("found %d files in the package definition", len(srcs))
	}
	for _, m := range srcs {
		if m[1] == "dist/pkg/compliance" {
			continue
		}
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("the package ships %s: %v", m[1], err)
		}
	}
}
