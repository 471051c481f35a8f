package web

import (
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// TestDeviceSyncFigures measures a device sync of 5,000 devices from the
// Okta fake (25 pages of 200) into a register of 500 people, and a second,
// unchanged sync with the writes it made, and logs the figures (no timed
// assertion). It runs only when asked:
//
//	COMPLIANCE_SYNC_FIGURES=1 go test ./web/ -run TestDeviceSyncFigures -v
func TestDeviceSyncFigures(t *testing.T) {
	if os.Getenv("COMPLIANCE_SYNC_FIGURES") == "" {
		t.Skip("set COMPLIANCE_SYNC_FIGURES=1 to measure a 5,000-device sync")
	}
	const devices, people = 5000, 500
	s := newOktaEnv(t, nil)
	for i := 0; i < people; i++ {
		s.person(s.org, fmt.Sprintf("p%d@acme.test", i), app.RoleEmployee)
	}
	for i := 0; i < devices; i++ {
		s.okta.devices = append(s.okta.devices, oktaDevice(fmt.Sprintf("guo%05d", i), fmt.Sprintf("Laptop %d", i), "MACOS",
			fmt.Sprintf("C02F%06d", i), fmt.Sprintf("P%d@acme.test", i%people)))
	}
	writes := func() map[string]int {
		out := map[string]int{}
		for name, q := range map[string]string{
			"audit records": `SELECT count(*) FROM audit_log WHERE organization_id = ?`,
			"results":       `SELECT count(*) FROM sync_run_results WHERE organization_id = ?`,
			"runs":          `SELECT count(*) FROM sync_runs WHERE organization_id = ?`,
			"events":        `SELECT count(*) FROM events WHERE organization_id = ?`,
		} {
			var n int
			if err := s.raw().QueryRow(q, s.org).Scan(&n); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out[name] = n
		}
		return out
	}
	sync := func() (map[string]any, time.Duration) {
		start := time.Now()
		rec := s.do("POST", "/v1/integrations/sync/dynamic/okta/devices?connectionId="+s.conn, s.owner, nil)
		d := time.Since(start)
		wantStatus(t, rec, http.StatusCreated)
		return obj(t, rec), d
	}
	run, d := sync()
	if run["status"] != "succeeded" {
		t.Fatalf("first run: %v", run)
	}
	t.Logf("first device sync of %d devices: %s (created %v)", devices, d.Round(time.Millisecond), run["created"])
	before, rows := writes(), s.deviceRows(t)
	run, d = sync()
	after := writes()
	changed := map[string]int{}
	for k, v := range after {
		changed[k] = v - before[k]
	}
	if s.deviceRows(t) != rows {
		t.Error("the unchanged sync changed devices")
	}
	t.Logf("second, unchanged device sync: %s (unchanged %v); device rows changed: 0; other writes: %v", d.Round(time.Millisecond), run["unchanged"], changed)
}
