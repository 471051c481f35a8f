// Package app holds the domain: types, validation rules, permissions and the
// services the HTTP API, the CLI and the web UI share. It knows nothing of
// HTTP or SQL; storage implements the interfaces declared here.
package app

import (
	"context"
	"log/slog"
	"time"
)

// Transactor runs fn in one write transaction. Calls nest: an inner call
// joins the outer transaction under a savepoint, so an inner error undoes
// only the inner work.
type Transactor interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// Store is everything the services need from storage.
type Store interface {
	Transactor
	Ping(ctx context.Context) error
	JournalStore
	IdempotencyStore
	OrganizationStore
	PersonStore
	APIKeyStore
	VendorStore
	DeviceStore
	DeviceAgentStore
	ControlStore
	FrameworkStore
	EvidenceStore
	TaskStore
	TaskTemplateStore
	SOAStore
	PolicyStore
	VariableStore
	ContextStore
	RiskStore
	FindingStore
	FindingTemplateStore
	CorrectiveActionStore
	CommentStore
	AttachmentStore
	FileRefStore
	EntityStore
	ESGStore
	WebhookStore
	DeliveryQueueStore
	JobRunStore
	AuditStore
	SessionStore
	OAuthStore
	KnowledgeStore
	QuestionnaireStore
	TrustStore
	DashboardStore
	IncidentStore
	SearchStore
	EvidenceLibraryStore
	OnboardingStore
	MailStore
	NotificationStore
	PentestStore
	PentestStateStore
	OSVStore
	AssistantStore
	AssistantActionStore
	IntegrationStore
	CloudSecurityStore
	TrainingStore
	TaskAutomationStore
	SyncStore
	DeviceSyncStore
	SyncRoleStore
	SSOStore
	SAMLStore
	SCIMTokenStore
	BrowserStore
	OperatorStore
	TaskIntegrationStore
	AdminIntegrationStore
	VendorAssessmentStore
	DeviceEvidenceStore
	AgentSignInStore
	MailSettingsStore
	SCIMTokenCreatorStore
	FindingTaskStore
	IntegrationOAuthStore
}

// Config holds the service-level settings.
type Config struct {
	// EnterpriseRate and EnterpriseBurst are the enterprise plan's rate limit.
	EnterpriseRate  int
	EnterpriseBurst int
	// PublicURL is the appliance's external URL (public_url), for links
	// in e-mail; empty: links are paths.
	PublicURL string
}

// App is the set of services. Handlers, the CLI and the UI call these.
type App struct {
	store  Store
	files  FileStore
	now    func() time.Time
	log    *slog.Logger
	config Config
	keyc   *keyCache
	events eventState
	auth   authState
	ext    extensions // knowledge and trust sources wired in by main
	// metrics receives measurements of background work (SetMetrics).
	metrics Metrics
	search  searchState
	mailer  MailSender // nil: mail is not configured (SetMailer)
	// pentests is the penetration-test runner (ConfigurePentests).
	pentests pentestState
	// browser is the browser automation runtime (ConfigureBrowser).
	browser browserState
	// assistant holds the assistant's language model, when configured.
	assistant assistantState
	integ     integrationState
	autos     automationState
	// oidc is the OpenID Connect client of single sign-on (SetOIDCClient).
	oidc OIDCClient
	// samlSP is the SAML service provider (SetSAMLProvider).
	samlSP SAMLProvider
	// integOAuth runs integration OAuth flows (SetIntegrationOAuthClient).
	integOAuth IntegrationOAuthClient
	// integAdmin caches the operator's provider settings.
	integAdmin adminState
	// webFetch reads vendors' public pages (SetWebFetcher).
	webFetch WebFetcher
	// mailSt holds the SMTP client of the operator's saved settings.
	mailSt mailState
}

// New builds the services over a store. now may be nil for time.Now.
func New(store Store, now func() time.Time, log *slog.Logger, cfg Config) *App {
	return NewWithFiles(store, nil, now, log, cfg)
}

// NewWithFiles builds the services over a store and a file store.
func NewWithFiles(store Store, files FileStore, now func() time.Time, log *slog.Logger, cfg Config) *App {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	if cfg.EnterpriseRate <= 0 {
		cfg.EnterpriseRate = 3000
	}
	if cfg.EnterpriseBurst <= 0 {
		cfg.EnterpriseBurst = 2 * cfg.EnterpriseRate
	}
	a := &App{store: store, files: files, now: now, log: log, config: cfg, keyc: newKeyCache(), metrics: noMetrics{}}
	if s, ok := store.(interface{ SharedByProcesses() bool }); ok && s.SharedByProcesses() {
		a.keyc.off = true
	}
	return a
}

// Now returns the service clock's current time in UTC, truncated to
// milliseconds (the precision storage keeps).
func (a *App) Now() time.Time { return a.now().UTC().Truncate(time.Millisecond) }

// Logger returns the application logger.
func (a *App) Logger() *slog.Logger { return a.log }

// Page asks for one page of a list.
type Page struct {
	Page    int
	PerPage int
}

// Offset is the number of rows before the page.
func (p Page) Offset() int { return (p.Page - 1) * p.PerPage }

// Paging limits (spec: Limits).
const (
	DefaultPerPage = 50
	MaxPerPage     = 200
)

// List is one page of results plus the total count.
type List[T any] struct {
	Items []T
	Total int
}

// Ping reports whether the store answers.
func (a *App) Ping(ctx context.Context) error { return a.store.Ping(ctx) }
