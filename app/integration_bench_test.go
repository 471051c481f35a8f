package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// benchProvider reports n resources for one check, failing or passing.
type benchProvider struct {
	n    int
	fail bool
}

func (p *benchProvider) Definition() app.ProviderDefinition {
	return app.ProviderDefinition{Slug: "bench", Name: "Bench", AuthStrategy: app.ProviderAuthNone,
		Checks: []app.CheckDefinition{{ID: "bench.check", Title: "Bench check", Severity: "high",
			Evidences: []app.RequirementRef{{Framework: "iso27001-2022", Ref: "A.8.5"}}}}}
}

func (p *benchProvider) Test(context.Context, app.ConnectionTarget) app.TestResult {
	return app.TestResult{Success: true}
}

func (p *benchProvider) Run(_ context.Context, _ app.ConnectionTarget, _ []string, out app.CheckSink) error {
	st := app.CheckPass
	if p.fail {
		st = app.CheckFail
	}
	for i := range p.n {
		out.Outcome(app.CheckOutcome{CheckID: "bench.check", ResourceType: "member", ResourceID: fmt.Sprintf("user-%d", i),
			ResourceName: fmt.Sprintf("User %d", i), Status: st, Message: "MFA state", Details: map[string]any{"mfa": !p.fail}})
	}
	return nil
}

// BenchmarkIntegrationRun1000: one connection whose provider reports 1,000
// resources. "first" opens 1,000 findings; "steady" re-runs while they
// still fail (no new finding); "recover" resolves them all.
func BenchmarkIntegrationRun1000(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	db, err := storage.Open(ctx, filepath.Join(dir, "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	files, err := storage.NewFiles(filepath.Join(dir, "files"))
	if err != nil {
		b.Fatal(err)
	}
	a := app.NewWithFiles(db, files, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
	p := &benchProvider{n: 1000, fail: true}
	a.RegisterIntegrationProviders(p)
	runOnce := func(b *testing.B, org context.Context, conn string) *app.CheckRun {
		run, err := a.RunConnectionChecks(org, conn, "")
		if err != nil {
			b.Fatal(err)
		}
		if n, err := a.ProcessQueuedRuns(ctx); err != nil || n != 1 {
			b.Fatalf("ran %d: %v", n, err)
		}
		got, err := a.GetCheckRun(org, run.ID)
		if err != nil || got.Status != app.RunSucceeded {
			b.Fatalf("run %+v: %v", got, err)
		}
		return got
	}
	setup := func(b *testing.B) (context.Context, string) {
		o, err := a.CreateOrganization(ctx, "Bench", app.PlanEnterprise)
		if err != nil {
			b.Fatal(err)
		}
		org := app.SystemContext(ctx, o.ID)
		if _, err := a.EnableFramework(org, "iso27001-2022"); err != nil {
			b.Fatal(err)
		}
		c, err := a.CreateConnection(org, app.ConnectionCreate{ProviderSlug: "bench", SyncFrequency: app.Ptr("manual")})
		if err != nil {
			b.Fatal(err)
		}
		return org, c.ID
	}
	b.Run("first", func(b *testing.B) {
		opened := 0
		for range b.N {
			b.StopTimer()
			p.fail = true
			org, conn := setup(b)
			b.StartTimer()
			opened += runOnce(b, org, conn).FindingsOpened
		}
		b.ReportMetric(float64(opened)/float64(b.N), "findings/op")
	})
	b.Run("steady", func(b *testing.B) {
		p.fail = true
		org, conn := setup(b)
		runOnce(b, org, conn)
		b.ResetTimer()
		opened := 0
		for range b.N {
			opened += runOnce(b, org, conn).FindingsOpened
		}
		b.ReportMetric(float64(opened)/float64(b.N), "findings/op")
	})
	b.Run("recover", func(b *testing.B) {
		resolved := 0
		for range b.N {
			b.StopTimer()
			p.fail = true
			org, conn := setup(b)
			runOnce(b, org, conn)
			p.fail = false
			b.StartTimer()
			resolved += runOnce(b, org, conn).FindingsResolved
		}
		b.ReportMetric(float64(resolved)/float64(b.N), "resolved/op")
	})
}
