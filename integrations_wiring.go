package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/spf13/viper"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/aws"
	"github.com/compliance-appliance/compliance/integrations/custom"
	"github.com/compliance-appliance/compliance/integrations/entra"
	"github.com/compliance-appliance/compliance/integrations/github"
	"github.com/compliance-appliance/compliance/integrations/gitlab"
	"github.com/compliance-appliance/compliance/integrations/googleworkspace"
	"github.com/compliance-appliance/compliance/integrations/https"
	"github.com/compliance-appliance/compliance/integrations/ldap"
	"github.com/compliance-appliance/compliance/integrations/oauthapp"
	"github.com/compliance-appliance/compliance/integrations/okta"
	"github.com/compliance-appliance/compliance/integrations/outbound"
	"github.com/compliance-appliance/compliance/integrations/webfetch"
	"github.com/compliance-appliance/compliance/sso"
)

// integrationProviders lists the integration providers compiled in, one
// line each, all built over the one outbound client.
func integrationProviders(c *http.Client) []app.IntegrationProvider {
	return []app.IntegrationProvider{
		https.New(c),
		github.New(c),
		gitlab.New(c),
		custom.New(),
		ldap.New(outbound.Dialer(c)),
		googleworkspace.New(c),
		entra.New(c),
		okta.New(c),
		aws.New(c),
	}
}

func setIntegrationDefaults(v *viper.Viper) {
	v.SetDefault("integrations.proxy", "")
	v.SetDefault("integrations.allow_networks", []string{})
	v.SetDefault("integrations.deny_networks", []string{})
	v.SetDefault("integrations.connect_timeout", "10s")
	v.SetDefault("integrations.timeout", "30s")
	v.SetDefault("integrations.max_retries", 3)
	v.SetDefault("integrations.max_retry_after", "60s")
	v.SetDefault("integrations.workers", 2)
	v.SetDefault("integrations.run_timeout", "5m")
	v.SetDefault("integrations.evidence_grace", "24h")
}

// outboundClient is the one outbound HTTP client of the integrations
// settings: network policy, proxy, timeouts and retries. Providers, single
// sign-on and task automations call out through it.
func outboundClient(v *viper.Viper) (*http.Client, error) {
	policy, err := app.NewNetworkPolicy(stringList(v, "integrations.allow_networks"), stringList(v, "integrations.deny_networks"))
	if err != nil {
		return nil, fmt.Errorf("integrations: %w", err)
	}
	return outbound.New(outbound.Options{
		Policy:         policy,
		Proxy:          v.GetString("integrations.proxy"),
		ConnectTimeout: v.GetDuration("integrations.connect_timeout"),
		Timeout:        v.GetDuration("integrations.timeout"),
		MaxRetries:     v.GetInt("integrations.max_retries"),
		MaxRetryAfter:  v.GetDuration("integrations.max_retry_after"),
	})
}

// configureIntegrations builds the outbound client from the integrations
// settings and registers the providers with app.
func configureIntegrations(v *viper.Viper, a *app.App) error {
	c, err := outboundClient(v)
	if err != nil {
		return err
	}
	a.RegisterIntegrationProviders(integrationProviders(c)...)
	// Single sign-on reaches identity providers through the same client.
	a.SetOIDCClient(sso.New(c))
	a.SetSAMLProvider(sso.NewSAML(c))
	a.SetWebFetcher(webfetch.New(c))
	a.SetIntegrationOAuthClient(oauthapp.New(c))
	a.SetIntegrationOptions(app.IntegrationOptions{
		Workers:       v.GetInt("integrations.workers"),
		RunTimeout:    v.GetDuration("integrations.run_timeout"),
		EvidenceGrace: v.GetDuration("integrations.evidence_grace"),
	})
	return nil
}

// startIntegrations marks runs a previous process left running as
// interrupted, then starts the run worker.
func startIntegrations(ctx context.Context, e *env) (*sync.WaitGroup, error) {
	n, err := e.app.InterruptStaleRuns(ctx)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		e.log.Warn("check runs interrupted by the last stop", "runs", n)
	}
	n, err = e.app.InterruptStaleSyncRuns(ctx)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		e.log.Warn("directory sync runs interrupted by the last stop", "runs", n)
	}
	if n, err := e.app.FailStaleAssessments(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		e.log.Warn("vendor assessments interrupted by the last stop", "assessments", n)
	}
	return e.app.StartIntegrationWorker(ctx), nil
}
