package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/viper"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/automation"
)

// setAutomationDefaults: a script gets ten million Starlark steps, one
// minute and 256 MiB of heap growth; a passing run's evidence is valid one
// schedule interval plus a day.
func setAutomationDefaults(v *viper.Viper) {
	v.SetDefault("automations.max_steps", 10_000_000)
	v.SetDefault("automations.timeout", "60s")
	v.SetDefault("automations.max_memory_mb", 256)
	v.SetDefault("automations.max_http_requests", 1000)
	v.SetDefault("automations.evidence_grace", "24h")
}

// configureTaskAutomations builds the sandbox over the integrations'
// outbound client settings (network policy, proxy and timeouts).
func configureTaskAutomations(v *viper.Viper, a *app.App) error {
	c, err := outboundClient(v)
	if err != nil {
		return fmt.Errorf("automations: %w", err)
	}
	a.SetScriptRunner(automation.New(c), app.TaskAutomationOptions{
		Limits: app.ScriptLimits{
			MaxSteps:        uint64(max(v.GetInt64("automations.max_steps"), 0)),
			Timeout:         v.GetDuration("automations.timeout"),
			MaxMemory:       v.GetInt64("automations.max_memory_mb") << 20,
			MaxHTTPRequests: v.GetInt("automations.max_http_requests"),
		},
		EvidenceGrace: v.GetDuration("automations.evidence_grace"),
	})
	return nil
}

// startTaskAutomations marks runs a previous process left running as
// interrupted, then starts the run worker.
func startTaskAutomations(ctx context.Context, e *env) (*sync.WaitGroup, error) {
	n, err := e.app.InterruptStaleAutomationRuns(ctx)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		e.log.Warn("task automation runs interrupted by the last stop", "runs", n)
	}
	return e.app.StartAutomationWorker(ctx), nil
}

// automationJob queues the runs of automations whose schedule is due.
func automationJob(a *app.App) app.Job {
	return app.Job{Name: "run_task_automations", Interval: time.Minute, Run: a.ScheduleTaskAutomations}
}
