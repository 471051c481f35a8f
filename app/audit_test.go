package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// BenchmarkVerifyAuditChain verifies a chain of 100,000 records (written
// in batches) and reports records/s.
func BenchmarkVerifyAuditChain(b *testing.B) {
	a, db, _ := newJobsApp(b)
	ctx := context.Background()
	const n = 100_000
	for i := 0; i < n; i += 1000 {
		err := db.InTx(ctx, func(ctx context.Context) error {
			for j := i; j < i+1000; j++ {
				r := &app.AuditRecord{ID: fmt.Sprintf("aud_%026d", j), OrganizationID: "org_x", OccurredAt: time.Unix(int64(j), 0).UTC(),
					ActorType: "system", ActorID: "system", Action: "updated", ResourceType: "vendor", ResourceID: "vnd_x",
					Changes: map[string]app.Change{"name": {Old: "a", New: fmt.Sprint(j)}}}
				if err := db.AppendAudit(ctx, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		v, err := a.VerifyAuditChain(ctx)
		if err != nil || !v.OK || v.Checked != n {
			b.Fatalf("%+v %v", v, err)
		}
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "records/s")
}
