package storage_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// TestDeviceSyncUpgrade applies the device sync migration to a database
// with devices, their checks, sync runs and their results: the tables it
// rebuilds keep every row, the references still cascade, a device the
// agent reported reads as source agent, and the new columns work.
func TestDeviceSyncUpgrade(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "up.db")
	db, err := storage.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.MigrateTo(ctx, 1159); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(ON)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const at = "2026-01-15T10:00:00Z"
	exec(`INSERT INTO organizations (id, name, slug, plan, created_at, updated_at) VALUES ('org_1', 'Acme', 'acme', 'enterprise', ?, ?)`, at, at)
	exec(`INSERT INTO users (id, email, name, created_at, updated_at) VALUES ('usr_1', 'ada@acme.test', 'Ada', ?, ?)`, at, at)
	exec(`INSERT INTO devices (id, organization_id, person_id, name, hostname, platform, serial_number, created_at, updated_at, agent_version)
		VALUES ('dev_agent', 'org_1', 'usr_1', 'ada-mbp', 'ada-mbp.local', 'macos', 'C02X', ?, ?, '1.4.0'),
		       ('dev_manual', 'org_1', NULL, 'spare', 'spare', 'linux', NULL, ?, ?, NULL)`, at, at, at, at)
	exec(`INSERT INTO device_checks (id, organization_id, device_id, check_type, passed, method, raw, message, checked_at, received_at)
		VALUES ('dck_1', 'org_1', 'dev_agent', 'firewall', 1, 'm', 'r', 'ok', ?, ?)`, at, at)
	exec(`INSERT INTO integration_connections (id, organization_id, provider_slug, name, status, sync_frequency, created_by, created_at, updated_at)
		VALUES ('con_1', 'org_1', 'okta', 'Okta', 'active', 'daily', 'usr_1', ?, ?)`, at, at)
	exec(`INSERT INTO sync_runs (id, organization_id, connection_id, provider_slug, sync_type, trigger, status, requested_by, started_at)
		VALUES ('syr_1', 'org_1', 'con_1', 'okta', 'employee', 'manual', 'succeeded', 'usr_1', ?)`, at)
	exec(`INSERT INTO sync_run_results (organization_id, run_id, seq, action, person_id, email, name, fields, reason)
		VALUES ('org_1', 'syr_1', 1, 'create', 'usr_1', 'ada@acme.test', 'Ada', '{}', '')`)

	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var broken int
	if err := raw.QueryRow(`SELECT count(*) FROM pragma_foreign_key_check`).Scan(&broken); err != nil || broken != 0 {
		t.Fatalf("foreign key check after the upgrade: %d %v", broken, err)
	}
	d, err := db.GetDevice(ctx, "org_1", "dev_agent")
	if err != nil || d.Source != app.DeviceSourceAgent || d.Name != "ada-mbp" || d.Directory != nil || d.PersonID == nil {
		t.Fatalf("the agent's device after the upgrade: %+v %v", d, err)
	}
	if d, err := db.GetDevice(ctx, "org_1", "dev_manual"); err != nil || d.Source != app.DeviceSourceManual {
		t.Fatalf("the manual device after the upgrade: %+v %v", d, err)
	}
	checks, err := db.LatestDeviceChecks(ctx, "org_1", "dev_agent")
	if err != nil || len(checks) != 1 {
		t.Fatalf("checks after the upgrade: %v %v", checks, err)
	}
	res, err := db.ListSyncRunResults(ctx, "org_1", "syr_1", app.Page{Page: 1, PerPage: 10})
	if err != nil || res.Total != 1 || res.Items[0].Email != "ada@acme.test" || res.Items[0].DeviceID != nil {
		t.Fatalf("results after the upgrade: %+v %v", res, err)
	}
	// A device run and a phone are accepted now.
	exec(`INSERT INTO sync_runs (id, organization_id, connection_id, provider_slug, sync_type, trigger, status, requested_by, started_at)
		VALUES ('syr_2', 'org_1', 'con_1', 'okta', 'device', 'manual', 'succeeded', 'usr_1', ?)`, at)
	ph := &app.Device{ID: "dev_phone", Name: "Pixel", Hostname: "Pixel", Platform: "android", Source: "okta",
		Directory: &app.DeviceDirectoryInfo{Provider: "okta", ConnectionID: "con_1", ExternalID: "guo1", Encrypted: app.Ptr(false)}}
	if err := db.CreateDevice(ctx, "org_1", ph); err != nil {
		t.Fatal(err)
	}
	if got, err := db.GetDevice(ctx, "org_1", "dev_phone"); err != nil || got.Source != "okta" || got.Directory == nil ||
		got.Directory.ExternalID != "guo1" || got.Directory.Encrypted == nil || *got.Directory.Encrypted {
		t.Fatalf("a directory's phone: %+v %v", got, err)
	}
	// The same directory id twice in a connection is refused.
	ph.ID = "dev_phone2"
	if err := db.CreateDevice(ctx, "org_1", ph); err == nil {
		t.Fatal("a second device with the same directory id was stored")
	}
	// The references still cascade.
	exec(`DELETE FROM devices WHERE id = 'dev_agent'`)
	exec(`DELETE FROM sync_runs WHERE id = 'syr_1'`)
	var n int
	if err := raw.QueryRow(`SELECT (SELECT count(*) FROM device_checks) + (SELECT count(*) FROM sync_run_results)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows left after deleting their parents: %d %v", n, err)
	}
}
