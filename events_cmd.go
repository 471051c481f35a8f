package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// scheduledJobs lists the background jobs `serve` runs, one line each.
// Each job must be idempotent: a run a crash interrupts runs again.
func scheduledJobs(e *env, o app.DeliveryOptions) []app.Job {
	return []app.Job{
		{Name: "flush_key_usage", Interval: 5 * time.Second, Run: e.app.FlushKeyUsage, Unrecorded: true},
		{Name: "purge_idempotency", Interval: time.Hour, Run: discardCount(e.app.PurgeIdempotency)},
		{Name: "purge_webhook_deliveries", Interval: 24 * time.Hour, Run: func(ctx context.Context) error {
			_, err := e.app.PurgeDeliveries(ctx, o.Retention)
			return err
		}},
		{Name: "purge_events", Interval: 24 * time.Hour, Run: func(ctx context.Context) error {
			_, err := e.app.PurgeEvents(ctx, o.Retention)
			return err
		}},
		{Name: "optimize_database", Interval: 24 * time.Hour, Run: e.db.Optimize},
		// Daily: stored files nothing has referred to for a day go on the
		// second run after their last reference went.
		{Name: "collect_files", Interval: 24 * time.Hour, Run: func(ctx context.Context) error {
			_, err := e.app.CollectFiles(ctx)
			return err
		}},
		{Name: "purge_sessions", Interval: time.Hour, Run: e.app.PurgeSessions},
		pentestJob(e.app),
		browserJob(e.app),
		// Every minute: connections whose next run is due get one queued.
		{Name: "schedule_integration_runs", Interval: time.Minute, Run: e.app.ScheduleIntegrationRuns},
		// Every minute: task automations whose schedule is due get a run queued.
		automationJob(e.app),
		// Every minute: directory connections of the employee sync provider
		// whose sync frequency has passed since their last run are synced.
		{Name: "run_directory_sync", Interval: time.Minute, Run: e.app.RunDirectorySyncs},
		{Name: "purge_oauth_tokens", Interval: time.Hour, Run: e.app.PurgeOAuthTokens},
		// Hourly, on PostgreSQL only: idle shared rate-limit buckets go.
		{Name: "purge_rate_buckets", Interval: time.Hour, Run: e.app.PurgeRateBuckets},
		// Hourly: evidence.expiring fires within the hour evidence enters the
		// 30-day window, and a control whose evidence lapsed leaves
		// implemented within the hour.
		{Name: "scan_evidence_expiry", Interval: time.Hour, Run: e.app.ScanEvidenceExpiry},
		// Due dates are calendar dates (UTC); an hourly run marks an action
		// overdue within the first hour of the day after its due date.
		{Name: "mark_overdue_corrective_actions", Interval: time.Hour, Run: discardCount(func(ctx context.Context) (int64, error) {
			n, err := e.app.MarkOverdueCorrectiveActions(ctx)
			return int64(n), err
		})},
		// Every five minutes: the shortest statutory clock is DORA's four
		// hours, and its last reminder comes one hour before the due time.
		// Every 30 seconds: queued e-mail goes out promptly; retries wait
		// for their backoff (app.DeliverMail).
		{Name: "deliver_mail", Interval: 30 * time.Second, Run: discardCount(func(ctx context.Context) (int64, error) {
			n, err := e.app.DeliverMail(ctx)
			return int64(n), err
		}), Unrecorded: true},
		// Every minute: events become notifications (mailed at once or
		// kept for the digest); once a day the digests go out.
		{Name: "notify", Interval: time.Minute, Run: discardCount(func(ctx context.Context) (int64, error) {
			n, err := e.app.Notify(ctx)
			return int64(n), err
		}), Unrecorded: true},
		// Daily: device check results become evidence on the endpoint
		// controls (app.RefreshDeviceEvidence).
		{Name: "device_compliance_evidence", Interval: 24 * time.Hour, Run: discardCount(func(ctx context.Context) (int64, error) {
			n, err := e.app.RefreshDeviceEvidence(ctx)
			return int64(n), err
		})},
		{Name: "send_digests", Interval: 24 * time.Hour, Run: discardCount(func(ctx context.Context) (int64, error) {
			n, err := e.app.SendDigests(ctx)
			return int64(n), err
		})},
		{Name: "remind_incident_deadlines", Interval: 5 * time.Minute, Run: discardCount(func(ctx context.Context) (int64, error) {
			n, err := e.app.RemindIncidentDeadlines(ctx)
			return int64(n), err
		})},
		// Hourly: yearly renewal of required training, overdue marking and
		// reminders (due dates are calendar dates).
		{Name: "run_training_schedule", Interval: time.Hour, Run: discardCount(func(ctx context.Context) (int64, error) {
			n, err := e.app.RunTrainingSchedule(ctx)
			return int64(n), err
		})},
	}
}

// discardCount adapts a purge that reports a row count to a job.
func discardCount(f func(ctx context.Context) (int64, error)) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, err := f(ctx)
		return err
	}
}

func setWebhookDefaults(v *viper.Viper) {
	v.SetDefault("webhooks.workers", 4)
	v.SetDefault("webhooks.timeout", "10s")
	v.SetDefault("webhooks.retry_base", "10s")
	v.SetDefault("webhooks.retry_cap", "1h")
	v.SetDefault("webhooks.retry_window", "24h")
	v.SetDefault("webhooks.poll_interval", "25ms")
	v.SetDefault("webhooks.delivery_retention", "720h")
	v.SetDefault("webhooks.allow_networks", []string{})
	v.SetDefault("webhooks.deny_networks", []string{})
}

// stringList reads a list key given as a YAML list or as a comma- or
// space-separated string (environment variables).
func stringList(v *viper.Viper, key string) []string {
	var out []string
	for _, s := range v.GetStringSlice(key) {
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
			out = append(out, f)
		}
	}
	return out
}

// configureWebhooks gives the app the data dir's key that seals webhook
// signing secrets, and the outbound network policy.
func configureWebhooks(v *viper.Viper, dir storage.DataDir, a *app.App) error {
	key, err := dir.Secret("webhook-secrets.key", 32)
	if err != nil {
		return fmt.Errorf("webhook secrets key: %w", err)
	}
	if err := a.SetWebhookKey(key); err != nil {
		return err
	}
	policy, err := app.NewNetworkPolicy(stringList(v, "webhooks.allow_networks"), stringList(v, "webhooks.deny_networks"))
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	a.SetNetworkPolicy(policy)
	return nil
}

func deliveryOptions(v *viper.Viper) app.DeliveryOptions {
	return app.DeliveryOptions{
		Workers:      v.GetInt("webhooks.workers"),
		PollInterval: v.GetDuration("webhooks.poll_interval"),
		Timeout:      v.GetDuration("webhooks.timeout"),
		RetryBase:    v.GetDuration("webhooks.retry_base"),
		RetryCap:     v.GetDuration("webhooks.retry_cap"),
		RetryWindow:  v.GetDuration("webhooks.retry_window"),
		Retention:    v.GetDuration("webhooks.delivery_retention"),
	}
}

// errAuditBroken makes `audit verify` exit non-zero.
var errAuditBroken = errors.New("the audit trail's hash chain is broken")

func auditCmd(v *viper.Viper) *cobra.Command {
	audit := &cobra.Command{Use: "audit", Short: "Inspect the audit trail"}
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Check the whole audit trail's hash chain; exits non-zero and names the first broken record",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				res, err := e.app.VerifyAuditChain(ctx)
				if err != nil {
					return err
				}
				if jsonOut(cmd) {
					if err := printJSON(cmd.OutOrStdout(), res); err != nil {
						return err
					}
				} else if res.OK {
					fmt.Fprintf(cmd.OutOrStdout(), "ok: %d records, chain head %s\n", res.Checked, res.LastHash)
				} else {
					b := res.FirstBroken
					fmt.Fprintf(cmd.OutOrStdout(), "BROKEN at record seq %d %s: %s (%d records checked)\n", b.Seq, b.ID, b.Reason, res.Checked)
				}
				if !res.OK {
					cmd.SilenceUsage = true
					return errAuditBroken
				}
				return nil
			})
		},
	}
	audit.AddCommand(verify)
	return audit
}
