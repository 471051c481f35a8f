package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ConnectionWebhookSecretPrefix starts every inbound webhook secret.
const ConnectionWebhookSecretPrefix = "iws_"

// ConnectionWebhookSecret is a new inbound webhook secret, shown once, with
// the path the provider posts to.
type ConnectionWebhookSecret struct {
	ConnectionID  string `json:"connectionId"`
	WebhookSecret string `json:"webhookSecret"`
	WebhookPath   string `json:"webhookPath"`
}

// InboundWebhook is a provider's request as received.
type InboundWebhook struct {
	Body []byte
	// Header returns a request header (case-insensitive).
	Header func(name string) string
}

// InboundWebhookResult says whether a run was queued.
type InboundWebhookResult struct {
	Success    bool    `json:"success"`
	CheckRunID *string `json:"checkRunId"`
	Message    string  `json:"message"`
}

func webhookPath(slug, id string) string { return "/v1/integrations/webhooks/" + slug + "/" + id }

// RotateConnectionWebhookSecret gives a connection a new secret for its
// inbound provider webhooks (the old one stops at once); shown once.
func (a *App) RotateConnectionWebhookSecret(ctx context.Context, id string) (*ConnectionWebhookSecret, error) {
	var secret string
	c, err := a.mutateConnection(ctx, id, "webhook_secret_rotated", func(c *Connection, d ProviderDefinition, ve *ValidationError) (bool, error) {
		if d.AuthStrategy == ProviderAuthPush {
			return false, Invalid("id", CodeInvalid, id, "a custom connection receives results by push; it has no provider webhook")
		}
		if c.Status == ConnectionDisconnected {
			return false, Errorf(ErrConflict, "the connection is disconnected")
		}
		secret = ConnectionWebhookSecretPrefix + RandomToken(32)
		c.SealedWebhookSecret = a.sealSecret("integration-webhook:"+c.ID, secret)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return &ConnectionWebhookSecret{ConnectionID: c.ID, WebhookSecret: secret, WebhookPath: webhookPath(c.ProviderSlug, c.ID)}, nil
}

// errBadSignature is every refusal of an inbound webhook: the caller learns
// nothing about which part was wrong.
var errBadSignature = Errorf(ErrUnauthenticated, "the webhook signature does not verify")

// verifyWebhook checks a provider's signature: GitLab sends the secret in
// X-Gitlab-Token; GitHub and every other provider sign the raw body with
// HMAC-SHA256 in X-Hub-Signature-256 ("sha256=<hex>").
func verifyWebhook(slug, secret string, in InboundWebhook) bool {
	if slug == "gitlab" {
		tok := in.Header("X-Gitlab-Token")
		return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(secret)) == 1
	}
	sig, ok := strings.CutPrefix(in.Header("X-Hub-Signature-256"), "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(in.Body)
	return hmac.Equal(got, m.Sum(nil))
}

// ReceiveProviderWebhook verifies an inbound provider webhook and queues a
// run of the connection's checks. A bad signature, an unknown connection,
// a connection of another provider or one without a webhook secret is the
// same 401, and nothing is recorded. A run already queued or running
// answers success with no new run.
func (a *App) ReceiveProviderWebhook(ctx context.Context, slug, connectionID string, in InboundWebhook) (*InboundWebhookResult, error) {
	c, err := a.store.ConnectionByID(ctx, connectionID)
	if errors.Is(err, ErrNotFound) {
		return nil, errBadSignature
	}
	if err != nil {
		return nil, err
	}
	if c.ProviderSlug != slug || len(c.SealedWebhookSecret) == 0 {
		return nil, errBadSignature
	}
	secret, err := a.openSecret("integration-webhook:"+c.ID, c.SealedWebhookSecret)
	if err != nil {
		return nil, err
	}
	if !verifyWebhook(slug, secret, in) {
		return nil, errBadSignature
	}
	if c.Status != ConnectionActive && c.Status != ConnectionError {
		return &InboundWebhookResult{Success: true, Message: fmt.Sprintf("the connection is %s; no run", c.Status)}, nil
	}
	sys := SystemContext(ctx, c.OrgID)
	var run *CheckRun
	err = a.store.InTx(sys, func(ctx context.Context) error {
		var err error
		run, err = a.queueRun(ctx, c.OrgID, c, "", TriggerWebhook, "webhook:"+slug)
		return err
	})
	if errors.Is(err, ErrConflict) {
		return &InboundWebhookResult{Success: true, Message: "a run is already queued or running"}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("webhook run of connection %s: %w", c.ID, err)
	}
	a.wakeIntegrationWorker()
	return &InboundWebhookResult{Success: true, CheckRunID: &run.ID, Message: "run queued"}, nil
}
