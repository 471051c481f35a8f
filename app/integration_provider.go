package app

import "context"

// An integration provider is a system the appliance connects to and tests on
// a schedule (source control, a cloud account, an internal web service, a
// directory). Each provider is an adapter package of its own
// (integrations/<slug>), built by main with the outbound HTTP client, which
// carries the network policy, the proxy, timeouts and retries. app sees only
// the interface below and the static definition a provider declares.

// Provider capabilities.
const (
	CapabilityChecks        = "checks"
	CapabilityCloudSecurity = "cloud_security"
	CapabilityEmployeeSync  = "employee_sync"
	CapabilityDeviceSync    = "device_sync"
)

// Auth strategies a provider may declare.
const (
	ProviderAuthAPIKey  = "api_key"  // a token or key pasted by a person
	ProviderAuthBasic   = "basic"    // username and password
	ProviderAuthOAuth2  = "oauth2"   // an OAuth 2.0 app's authorization flow
	ProviderAuthAWSKeys = "aws_keys" // access key pair or an assumed role
	ProviderAuthNone    = "none"     // nothing to store (a public URL)
	ProviderAuthPush    = "push"     // the customer's script pushes results with the connection's token
)

// Check outcome statuses. "excepted" is decided by the engine from the
// organization's exceptions, never by a provider.
const (
	CheckPass     = "pass"
	CheckFail     = "fail"
	CheckError    = "error"
	CheckExcepted = "excepted"
)

// IntegrationProvider is one system the appliance can connect to.
type IntegrationProvider interface {
	// Definition is the provider's catalog entry; the same on every call.
	Definition() ProviderDefinition
	// Test checks that the connection's credentials work. A refusal by the
	// provider (bad token, unknown organization, no permission) is a result
	// with Success false and the provider's message; so is a provider that
	// cannot be reached. It never panics and honours ctx.
	Test(ctx context.Context, c ConnectionTarget) TestResult
	// Run runs the named checks (every check of the definition when ids is
	// empty) and reports one outcome per check per resource through out as
	// it learns them, plus log lines. A check that cannot be evaluated (its
	// API refused, timed out, answered garbage) reports an outcome with
	// status error and the reason, and the other checks go on. Run returns
	// an error only when nothing could run at all (credentials refused,
	// provider unreachable); the run is then recorded as failed.
	Run(ctx context.Context, c ConnectionTarget, ids []string, out CheckSink) error
}

// ProviderDefinition is what the catalog shows of a provider.
type ProviderDefinition struct {
	Slug         string             `json:"slug"` // stable, lower case: "github", "gitlab", "aws", "https", "custom"
	Name         string             `json:"name"`
	Category     string             `json:"category"` // "source_control", "cloud", "web", "directory", "custom"
	Description  string             `json:"description"`
	DocsURL      string             `json:"docsUrl,omitempty"`
	AuthStrategy string             `json:"authStrategy"`
	Credentials  []CredentialField  `json:"credentialFields"`
	Variables    []ProviderVariable `json:"variables"`
	Services     []ProviderService  `json:"services"` // parts a connection enables one by one (AWS: iam, s3, ...); empty when the provider has none
	Capabilities []string           `json:"capabilities"`
	Checks       []CheckDefinition  `json:"checks"`
	// AuthStrategies lists every way a connection may be made, the
	// default (AuthStrategy) first: a provider connected by a pasted token
	// or through an OAuth app lists api_key and oauth2.
	AuthStrategies []string `json:"authStrategies,omitempty"`
	// OAuth describes the provider's OAuth app flow; nil when it has none.
	OAuth *ProviderOAuth `json:"oauth,omitempty"`
}

// ProviderOAuth is how a provider's connection is made through an OAuth
// app (authorization code flow). The token it yields is stored as the
// provider's TokenKey credential; the base URL the person gives (a
// self-managed instance) as BaseURLKey.
type ProviderOAuth struct {
	Scopes        []string `json:"scopes"`        // the scopes the checks need
	PKCE          bool     `json:"pkce"`          // the provider verifies a PKCE S256 challenge
	RefreshTokens bool     `json:"refreshTokens"` // the provider issues expiring tokens with refresh tokens
	SetupURL      string   `json:"setupUrl"`      // where an administrator registers an OAuth app
	SetupHelp     string   `json:"setupHelp"`
	TokenKey      string   `json:"-"`
	BaseURLKey    string   `json:"-"`
	// Endpoints returns the authorization and token URLs for the base URL
	// the person gave (empty: the public service), or an error naming
	// what is wrong with it.
	Endpoints func(baseURL string) (authURL, tokenURL string, err error) `json:"-"`
}

// CredentialField is one field of the connect form. Secret fields are
// encrypted at rest and never returned by any route.
type CredentialField struct {
	Key         string   `json:"key"` // camelCase: "token", "baseUrl", "accessKeyId"
	Label       string   `json:"label"`
	Help        string   `json:"help,omitempty"`
	Type        string   `json:"type"` // "text", "password", "url", "textarea", "select"
	Secret      bool     `json:"secret"`
	Required    bool     `json:"required"`
	Options     []string `json:"options,omitempty"` // for "select"
	Placeholder string   `json:"placeholder,omitempty"`
}

// ProviderVariable is a non-secret setting of a connection (an organization
// name, a list of repositories, a region).
type ProviderVariable struct {
	Key      string   `json:"key"`
	Label    string   `json:"label"`
	Help     string   `json:"help,omitempty"`
	Type     string   `json:"type"` // "text", "select", "multi_select", "number", "boolean", "url_list" (http(s) URLs, one per line; validated)
	Required bool     `json:"required"`
	Default  string   `json:"default,omitempty"`
	Options  []string `json:"options,omitempty"`
	// OptionsFrom says where the choices come from: "static" (Options) or
	// "provider" (listed by the provider with the connection's
	// credentials, GET .../variables/connections/{id}/options/{key});
	// empty: free input.
	OptionsFrom string `json:"optionsFrom,omitempty"`
}

// ProviderService is a part of a provider a connection enables on its own.
type ProviderService struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	EnabledDefault bool   `json:"enabledByDefault"`
}

// CheckDefinition is one automated test of a provider.
type CheckDefinition struct {
	ID          string `json:"id"` // stable across releases: "<slug>.<name>", e.g. "github.branch_protection"
	Title       string `json:"title"`
	Description string `json:"description"` // what it tests, in one or two sentences
	Severity    string `json:"severity"`    // one of FindingSeverities
	Remediation string `json:"remediation"` // what a person does to make it pass
	Service     string `json:"service,omitempty"`
	// Evidences names the requirements a passing run is evidence for, in
	// the built-in catalog's terms; the engine adds the requirements the
	// cross-framework mappings relate to them.
	Evidences []RequirementRef `json:"evidences"`
	// CloudSecurity marks a check whose failures are listed as cloud
	// security findings (posture of a cloud account).
	CloudSecurity bool `json:"cloudSecurity,omitempty"`
}

// RequirementRef names a requirement of a built-in framework by the
// framework's slug and the requirement's reference ("iso27001-2022",
// "A.8.5"; "soc2-2017", "CC6.1").
type RequirementRef struct {
	Framework string `json:"framework"`
	Ref       string `json:"ref"`
}

// ConnectionTarget is what a provider gets to run against: the connection's
// decrypted credentials and its settings. Credentials are never logged and
// never put into an outcome, a log line or an error message.
type ConnectionTarget struct {
	ConnectionID   string
	OrganizationID string
	Credentials    map[string]string
	Variables      map[string]string
	Services       []string // enabled services; empty: every service
}

// TestResult is the answer of IntegrationProvider.Test.
type TestResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	// Account names who the credentials act as, when the provider says
	// ("octocat in acme-corp", "arn:aws:iam::123456789012:user/audit").
	Account string `json:"account,omitempty"`
}

// CheckOutcome is the result of one check for one resource.
type CheckOutcome struct {
	CheckID      string         `json:"checkId"`
	ResourceType string         `json:"resourceType"` // "organization", "repository", "member", "bucket", "url", ...
	ResourceID   string         `json:"resourceId"`   // stable across runs: a finding is kept per (connection, check, resource)
	ResourceName string         `json:"resourceName"`
	Status       string         `json:"status"` // CheckPass, CheckFail or CheckError
	Message      string         `json:"message"`
	Details      map[string]any `json:"details,omitempty"` // the data the verdict rests on (kept as evidence)
}

// CheckSink receives a run's outcomes and log lines.
type CheckSink interface {
	Outcome(CheckOutcome)
	Log(level, message string) // level: "info", "warn", "error"
}
