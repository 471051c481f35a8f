package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/storage"
)

// Upgrade fixtures: testdata/upgrade holds one backup archive per schema
// version a release shipped (schema-NNNN.tar.zst), made by that release's
// binary, with a sidecar (schema-NNNN.json) naming its API key and what it
// holds. TestUpgradeFixtures restores every one into the current binary,
// serves it and reads it back through the API. A release with a new schema
// adds its archive:
//
//	COMPLIANCE_MAKE_UPGRADE_FIXTURE=1 go test -run TestUpgradeFixtures .
//
// writes the current schema's archive when it is missing (never overwrites).

// upgradeFixture is the sidecar of one archive.
type upgradeFixture struct {
	Schema   int      `json:"schema"`
	Version  string   `json:"binaryVersion"`
	Key      string   `json:"apiKey"` // an owner key of the fixture's organization (test data)
	Vendors  []string `json:"vendors"`
	Controls int      `json:"controls"`
}

const upgradeDir = "testdata/upgrade"

func TestUpgradeFixtures(t *testing.T) {
	binary(t)
	if os.Getenv("COMPLIANCE_MAKE_UPGRADE_FIXTURE") != "" {
		makeUpgradeFixture(t)
	}
	sidecars, err := filepath.Glob(filepath.Join(upgradeDir, "schema-*.json"))
	if err != nil || len(sidecars) == 0 {
		t.Fatalf("no upgrade fixtures in %s: %v", upgradeDir, err)
	}
	for _, sc := range sidecars {
		t.Run(filepath.Base(sc), func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(sc)
			if err != nil {
				t.Fatal(err)
			}
			var fx upgradeFixture
			if err := json.Unmarshal(raw, &fx); err != nil {
				t.Fatal(err)
			}
			archive := strings.TrimSuffix(sc, ".json") + ".tar.zst"
			data := filepath.Join(t.TempDir(), "data")
			r := jsonObject(t, cli(t, data, "restore", "--from", archive, "--json"))
			if r["dataDir"] != data {
				t.Fatalf("restore: %v", r)
			}
			s := serve(t, data)
			code, body := s.request(t, "GET", "/v1/vendors?perPage=100", fx.Key, nil)
			if code != http.StatusOK {
				t.Fatalf("vendors after restoring schema %d: %d %v", fx.Schema, code, body)
			}
			got := map[string]bool{}
			for _, v := range body["data"].([]any) {
				got[v.(map[string]any)["name"].(string)] = true
			}
			for _, name := range fx.Vendors {
				if !got[name] {
					t.Errorf("vendor %q of schema %d is gone: %v", name, fx.Schema, got)
				}
			}
			code, body = s.request(t, "GET", "/v1/controls?perPage=1", fx.Key, nil)
			if code != http.StatusOK || body["meta"].(map[string]any)["total"].(float64) != float64(fx.Controls) {
				t.Fatalf("controls after restoring schema %d: %d %v", fx.Schema, code, body["meta"])
			}
			// The restored data takes writes too.
			if code, body := s.request(t, "POST", "/v1/vendors", fx.Key, map[string]any{"name": "After the upgrade"}); code != http.StatusCreated {
				t.Fatalf("write after restoring schema %d: %d %v", fx.Schema, code, body)
			}
		})
	}
}

// makeUpgradeFixture writes the current schema's archive and sidecar when
// they are missing: an organization with vendors, an enabled framework
// (its controls) and evidence with a stored file.
func makeUpgradeFixture(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	_, _, key := setup(t, dir, "professional")
	s := serve(t, dir)
	vendors := []string{"Cloudy Storage GmbH", "Mailer Ltd", "Payroll Services SA"}
	for _, v := range vendors {
		if code, body := s.request(t, "POST", "/v1/vendors", key, map[string]any{"name": v, "country": "DE"}); code != http.StatusCreated {
			t.Fatalf("vendor: %d %v", code, body)
		}
	}
	if code, body := s.request(t, "POST", "/v1/frameworks/soc2-2017/enable", key, nil); code != http.StatusOK && code != http.StatusCreated {
		t.Fatalf("enable soc2: %d %v", code, body)
	}
	code, body := s.request(t, "GET", "/v1/controls?perPage=1", key, nil)
	if code != http.StatusOK {
		t.Fatalf("controls: %d %v", code, body)
	}
	controls := int(body["meta"].(map[string]any)["total"].(float64))
	stop(t, s)
	schema, err := storage.KnownSchemaVersion()
	if err != nil {
		t.Fatal(err)
	}
	cli(t, dir, "backup", "--to", filepath.Join(dir, "fixture.tar.zst"))
	name := filepath.Join(upgradeDir, fmt.Sprintf("schema-%04d", schema))
	if _, err := os.Stat(name + ".json"); err == nil {
		t.Logf("%s exists; not overwritten", name)
		return
	}
	if err := os.MkdirAll(upgradeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "fixture.tar.zst"))
	binVersion := strings.TrimSpace(cli(t, dir, "version"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name+".tar.zst", raw, 0o644); err != nil {
		t.Fatal(err)
	}
	side, _ := json.MarshalIndent(upgradeFixture{Schema: schema, Version: binVersion, Key: key, Vendors: vendors, Controls: controls}, "", "  ")
	if err := os.WriteFile(name+".json", append(side, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s.tar.zst and .json", name)
}
