// Package custom is the evidence-push provider: the organization's own
// script posts check results to the appliance with the connection's push
// token. The appliance never calls out for it.
package custom

import (
	"context"
	"errors"

	"github.com/compliance-appliance/compliance/app"
)

// Provider is the push provider. It has no outbound client.
type Provider struct{}

var _ app.IntegrationProvider = Provider{}

// New returns the push provider.
func New() Provider { return Provider{} }

var definition = app.ProviderDefinition{
	Slug:     "custom",
	Name:     "Custom evidence push",
	Category: "custom",
	Description: "Your own script posts check results (pass, fail or error per resource) to POST /v1/integrations/push/{connectionId} " +
		"with the connection's push token. Results become findings and evidence like those of any other provider.",
	AuthStrategy: app.ProviderAuthPush,
	Credentials:  []app.CredentialField{},
	Variables: []app.ProviderVariable{{Key: "requirements", Label: "Requirements", Type: "text",
		Help: "Requirements a passing check is evidence for when a push names none, as framework:ref pairs, e.g. soc2-2017:CC6.1.10, iso27001-2022:A.8.9"}},
	Services:     []app.ProviderService{},
	Capabilities: []string{app.CapabilityChecks},
	Checks:       []app.CheckDefinition{},
}

// Definition returns the provider's catalog entry.
func (Provider) Definition() app.ProviderDefinition { return definition }

// Test reports that the connection waits for pushes.
func (Provider) Test(context.Context, app.ConnectionTarget) app.TestResult {
	return app.TestResult{Success: true, Message: "results arrive by push; nothing to reach"}
}

// Run refuses: the appliance has nothing to run for a push connection.
func (Provider) Run(context.Context, app.ConnectionTarget, []string, app.CheckSink) error {
	return errors.New("results of a custom connection are pushed by your script; the appliance has nothing to run")
}
