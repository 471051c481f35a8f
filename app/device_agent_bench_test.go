package app_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// BenchmarkDeviceCheckIn measures check-ins with six checks each, against
// 50 enrolled devices of one organization, through the app service on real
// SQLite (token lookup, validation, six inserts and the device update in
// one transaction). It reports check-ins per second.
func BenchmarkDeviceCheckIn(b *testing.B) {
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	a := app.New(db, nil, nil, app.Config{})
	org, err := a.CreateOrganization(ctx, "Bench", app.PlanEnterprise)
	if err != nil {
		b.Fatal(err)
	}
	sys := app.SystemContext(ctx, org.ID)
	tok, err := a.CreateEnrolmentToken(sys, app.EnrolmentTokenCreate{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	type dev struct{ id, token string }
	devs := make([]dev, 50)
	for i := range devs {
		r, err := a.RegisterDevice(ctx, tok.Token, app.DeviceRegister{Name: fmt.Sprint("laptop ", i), Hostname: fmt.Sprint("h", i),
			Platform: "linux", OSVersion: "Debian 12"})
		if err != nil {
			b.Fatal(err)
		}
		devs[i] = dev{r.DeviceID, r.DeviceToken}
	}
	body := func(id string, passed bool) app.DeviceCheckIn {
		in := app.DeviceCheckIn{DeviceID: id}
		at := time.Now().UTC().Format(time.RFC3339)
		for _, t := range app.DeviceCheckTypes {
			p := passed || t != app.CheckFirewall
			in.Checks = append(in.Checks, app.DeviceCheckInput{CheckType: t, Passed: &p, CheckedAt: at,
				Details: &app.DeviceCheckDetailsInput{Method: app.Ptr("lsblk -J"), Raw: app.Ptr("NAME TYPE MOUNTPOINT\nvg-root lvm /"), Message: app.Ptr("ok")}})
		}
		return in
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		d := devs[i%len(devs)]
		if _, err := a.CheckInDevice(ctx, d.token, body(d.id, i%7 != 0)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "checkins/s")
}
