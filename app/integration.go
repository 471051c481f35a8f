package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Connection statuses.
const (
	ConnectionActive       = "active"
	ConnectionPaused       = "paused"
	ConnectionError        = "error"
	ConnectionDisconnected = "disconnected"
)

// Sync frequencies: how often the scheduler runs a connection's checks.
// "manual" connections run only when asked (or, for custom connections,
// when results are pushed).
var SyncFrequencies = map[string]time.Duration{
	"hourly": time.Hour,
	"daily":  24 * time.Hour,
	"weekly": 7 * 24 * time.Hour,
	"manual": 0,
}

// DefaultSyncFrequency is a new connection's frequency when none is given.
const DefaultSyncFrequency = "daily"

// Integration events (DECISIONS: the groups still to build).
const (
	EventCheckFailed       = "check.failed"
	EventCheckRecovered    = "check.recovered"
	EventIntegrationRunEnd = "integration.run.completed"
)

// PushTokenPrefix starts every custom connection's push token.
const PushTokenPrefix = "cpt_"

// Connection limits.
const (
	maxConnectionName    = 200
	maxCredentialValue   = 16 << 10
	maxConnVariableValue = 16 << 10
	maxConnectionFields  = 50
)

// Connection is an organization's configured link to a provider. Its
// credentials are never part of it: CredentialFields says which are set.
type Connection struct {
	ID               string            `json:"id"`
	ProviderID       string            `json:"providerId"`
	ProviderSlug     string            `json:"providerSlug"`
	ProviderName     string            `json:"providerName"`
	Name             string            `json:"name"`
	Status           string            `json:"status"`
	AuthStrategy     string            `json:"authStrategy"`
	SyncFrequency    string            `json:"syncFrequency"`
	Variables        map[string]string `json:"variables"`
	Services         []string          `json:"services"`
	CredentialFields []CredentialState `json:"credentialFields"`
	Metadata         map[string]any    `json:"metadata"`
	PushTokenHint    *string           `json:"pushTokenHint"`
	WebhookEnabled   bool              `json:"webhookEnabled"`
	LastRunAt        *time.Time        `json:"lastRunAt"`
	LastRunStatus    *string           `json:"lastRunStatus"`
	NextRunAt        *time.Time        `json:"nextRunAt"`
	ErrorMessage     *string           `json:"errorMessage"`
	CreatedBy        string            `json:"createdBy"`
	CreatedAt        time.Time         `json:"createdAt"`
	UpdatedAt        time.Time         `json:"updatedAt"`

	// Stored only: the sealed credentials, the names of the set ones and
	// the push token's hash.
	SealedCredentials []byte   `json:"-"`
	CredentialKeys    []string `json:"-"`
	PushTokenHash     *string  `json:"-"`
	// SealedWebhookSecret verifies inbound provider webhooks.
	SealedWebhookSecret []byte `json:"-"`
	// OrgID is filled by the store's cross-organization reads only.
	OrgID string `json:"-"`
}

// CredentialState says whether a credential field holds a value.
type CredentialState struct {
	Key    string `json:"key"`
	Label  string `json:"label"`
	Secret bool   `json:"secret"`
	Set    bool   `json:"set"`
}

// ConnectionCreate is the body of POST /v1/integrations/connections.
// Credentials and variables take a string or a list of strings per key.
type ConnectionCreate struct {
	ProviderSlug  string                     `json:"providerSlug"`
	Name          *string                    `json:"name"`
	Credentials   map[string]json.RawMessage `json:"credentials"`
	Variables     map[string]json.RawMessage `json:"variables"`
	Services      []string                   `json:"services"`
	SyncFrequency *string                    `json:"syncFrequency"`
	Metadata      map[string]any             `json:"metadata"`
}

// ConnectionPatch is the body of PATCH /v1/integrations/connections/{id}.
type ConnectionPatch struct {
	Name          *string                    `json:"name"`
	Variables     map[string]json.RawMessage `json:"variables"`
	SyncFrequency *string                    `json:"syncFrequency"`
	Metadata      map[string]any             `json:"metadata"`
}

// CredentialsUpdate is the body of PUT .../connections/{id}/credentials:
// the fields given replace the stored ones; the others are kept.
type CredentialsUpdate struct {
	Credentials map[string]json.RawMessage `json:"credentials"`
}

// ServicesUpdate is the body of PUT .../connections/{id}/services.
type ServicesUpdate struct {
	Services []string `json:"services"`
}

// ConnectionCreated is a new connection; PushToken is shown this once.
type ConnectionCreated struct {
	*Connection
	PushToken string `json:"pushToken,omitempty"`
}

// ConnectionServices lists a provider's services and which are enabled.
type ConnectionServices struct {
	ConnectionID string              `json:"connectionId"`
	Services     []ConnectionService `json:"services"`
}

// ConnectionService is one service of a connection.
type ConnectionService struct {
	ProviderService
	Enabled bool `json:"enabled"`
}

// PushToken is a rotated push token, shown once.
type PushToken struct {
	ConnectionID string `json:"connectionId"`
	PushToken    string `json:"pushToken"`
	Hint         string `json:"pushTokenHint"`
}

// IntegrationStore persists connections, runs, results and exceptions.
type IntegrationStore interface {
	CreateConnection(ctx context.Context, orgID string, c *Connection) error
	UpdateConnection(ctx context.Context, orgID string, c *Connection) error
	GetConnection(ctx context.Context, orgID, id string) (*Connection, error)
	ListConnections(ctx context.Context, orgID string) ([]Connection, error)
	CountConnections(ctx context.Context, orgID string) (int, error)
	DeleteConnection(ctx context.Context, orgID, id string) error
	// ConnectionByPushToken finds a connection by its push token's hash,
	// over every organization.
	ConnectionByPushToken(ctx context.Context, hash string) (*Connection, error)
	// ConnectionByID finds a connection over every organization.
	ConnectionByID(ctx context.Context, id string) (*Connection, error)
	// DueConnections lists active connections whose next run is due.
	DueConnections(ctx context.Context, now time.Time) ([]Connection, error)

	CreateCheckRun(ctx context.Context, orgID string, r *CheckRun) error
	// ClaimCheckRun moves the oldest queued run to running, over every
	// organization; ErrNotFound when none is queued.
	ClaimCheckRun(ctx context.Context, now time.Time) (*CheckRun, error)
	FinishCheckRun(ctx context.Context, orgID string, r *CheckRun) error
	// InterruptRunningCheckRuns marks every running run interrupted.
	InterruptRunningCheckRuns(ctx context.Context, now time.Time, reason string) (int, error)
	GetCheckRun(ctx context.Context, orgID, id string) (*CheckRun, error)
	ListCheckRuns(ctx context.Context, orgID string, f CheckRunFilter) (List[CheckRun], error)
	ListCheckResults(ctx context.Context, orgID string, f CheckResultFilter) (List[CheckResult], error)
	InsertCheckResults(ctx context.Context, orgID string, rs []CheckResult) error
	// LatestCheckResults summarizes, per check of a connection, the results
	// of the latest run that evaluated it.
	LatestCheckResults(ctx context.Context, orgID, connectionID string) (map[string]CheckSummary, error)

	CheckFindings(ctx context.Context, orgID, connectionID string) (map[CheckResourceKey]string, error)
	SetCheckFinding(ctx context.Context, orgID, connectionID string, k CheckResourceKey, findingID string) error
	CheckEvidence(ctx context.Context, orgID, connectionID, checkID string) (map[string]string, error)
	SetCheckEvidence(ctx context.Context, orgID, connectionID, checkID, controlID, evidenceID string) error

	CreateCheckException(ctx context.Context, orgID string, e *CheckException) error
	GetCheckException(ctx context.Context, orgID, id string) (*CheckException, error)
	DeleteCheckException(ctx context.Context, orgID, id string) error
	ListCheckExceptions(ctx context.Context, orgID, connectionID string) ([]CheckException, error)
}

func (a *App) connectionView(c *Connection) *Connection {
	if c.Variables == nil {
		c.Variables = map[string]string{}
	}
	if c.Services == nil {
		c.Services = []string{}
	}
	if c.Metadata == nil {
		c.Metadata = map[string]any{}
	}
	c.ProviderID = c.ProviderSlug
	c.WebhookEnabled = len(c.SealedWebhookSecret) > 0
	set := map[string]bool{}
	for _, k := range c.CredentialKeys {
		set[k] = true
	}
	c.CredentialFields = []CredentialState{}
	if p, ok := a.compiledProvider(c.ProviderSlug); ok {
		d := p.Definition()
		c.ProviderName, c.AuthStrategy = d.Name, d.AuthStrategy
		if oauthConnection(c) {
			c.AuthStrategy = ProviderAuthOAuth2
		}
		for _, f := range d.Credentials {
			c.CredentialFields = append(c.CredentialFields, CredentialState{Key: f.Key, Label: f.Label, Secret: f.Secret, Set: set[f.Key]})
		}
	} else {
		c.ProviderName = c.ProviderSlug
		for _, k := range c.CredentialKeys {
			c.CredentialFields = append(c.CredentialFields, CredentialState{Key: k, Label: k, Secret: true, Set: true})
		}
	}
	return c
}

// rawValue reads a credential or variable value: a string, a list of
// strings (kept one per line), a number or a boolean.
func rawValue(raw json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.TrimSpace(s), true
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		out := make([]string, 0, len(list))
		for _, v := range list {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
		return strings.Join(out, "\n"), true
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), true
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		if b {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

// validateCredentials checks values against the provider's credential
// fields. partial: missing required fields are allowed (an update keeps
// the stored values). The values themselves never go into an error.
func validateCredentials(ve *ValidationError, d ProviderDefinition, in map[string]json.RawMessage, partial bool) map[string]string {
	out := map[string]string{}
	fields := map[string]CredentialField{}
	for _, f := range d.Credentials {
		fields[f.Key] = f
	}
	if len(in) > maxConnectionFields {
		ve.Add("credentials", CodeInvalid, nil, "too many credential fields")
		return out
	}
	for _, k := range sortedKeys(in) {
		name := "credentials." + k
		f, ok := fields[k]
		if !ok {
			ve.Add(name, CodeInvalid, nil, fmt.Sprintf("%s is not a credential field of provider %s", k, d.Slug))
			continue
		}
		v, ok := rawValue(in[k])
		if !ok {
			ve.Add(name, CodeInvalid, nil, k+" must be a string or a list of strings")
			continue
		}
		if v == "" {
			continue
		}
		if len(v) > maxCredentialValue {
			ve.Add(name, CodeTooLong, nil, fmt.Sprintf("%s must be at most %d bytes", k, maxCredentialValue))
			continue
		}
		switch f.Type {
		case "url":
			if !validURL(v) {
				ve.Add(name, CodeInvalid, nil, k+" must be an http or https URL")
				continue
			}
		case "select":
			if len(f.Options) > 0 && !containsString(f.Options, v) {
				ve.Add(name, CodeInvalidEnum, nil, k+" must be one of "+strings.Join(f.Options, ", "))
				continue
			}
		}
		out[k] = v
	}
	if !partial {
		for _, f := range d.Credentials {
			if f.Required && out[f.Key] == "" {
				ve.Add("credentials."+f.Key, CodeRequired, nil, f.Key+" is required")
			}
		}
	}
	return out
}

// validateVariables checks values against the provider's variables and
// fills defaults when full.
func validateVariables(ve *ValidationError, d ProviderDefinition, in map[string]json.RawMessage, base map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	vars := map[string]ProviderVariable{}
	for _, v := range d.Variables {
		vars[v.Key] = v
	}
	if len(in) > maxConnectionFields {
		ve.Add("variables", CodeInvalid, nil, "too many variables")
		return out
	}
	for _, k := range sortedKeys(in) {
		name := "variables." + k
		def, ok := vars[k]
		if !ok {
			ve.Add(name, CodeInvalid, k, fmt.Sprintf("%s is not a variable of provider %s", k, d.Slug))
			continue
		}
		v, ok := rawValue(in[k])
		if !ok {
			ve.Add(name, CodeInvalid, nil, k+" must be a string, a number, a boolean or a list of strings")
			continue
		}
		if len(v) > maxConnVariableValue {
			ve.Add(name, CodeTooLong, nil, fmt.Sprintf("%s must be at most %d bytes", k, maxConnVariableValue))
			continue
		}
		switch def.Type {
		case "select":
			if v != "" && len(def.Options) > 0 && !containsString(def.Options, v) {
				ve.Add(name, CodeInvalidEnum, v, k+" must be one of "+strings.Join(def.Options, ", "))
				continue
			}
		case "boolean":
			if v != "" && v != "true" && v != "false" {
				ve.Add(name, CodeInvalid, v, k+" must be true or false")
				continue
			}
		case "number":
			var n json.Number = json.Number(v)
			if _, err := n.Float64(); v != "" && err != nil {
				ve.Add(name, CodeInvalid, v, k+" must be a number")
				continue
			}
		case "multi_select":
			if len(def.Options) > 0 {
				for _, item := range SplitList(v) {
					if !containsString(def.Options, item) {
						ve.Add(name, CodeInvalidEnum, item, fmt.Sprintf("%s: %q is not one of %s", k, item, strings.Join(def.Options, ", ")))
						break
					}
				}
			}
		case "url_list":
			for _, u := range SplitList(v) {
				if !validURL(u) {
					ve.Add(name, CodeInvalid, u, fmt.Sprintf("%s: %q is not an http or https URL", k, u))
					break
				}
			}
		}
		if v == "" {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	for _, def := range d.Variables {
		if out[def.Key] == "" && def.Default != "" {
			out[def.Key] = def.Default
		}
		if def.Required && out[def.Key] == "" {
			ve.Add("variables."+def.Key, CodeRequired, nil, def.Key+" is required")
		}
	}
	return out
}

// SplitList splits a list value given one per line or comma-separated.
func SplitList(v string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func validateServices(ve *ValidationError, d ProviderDefinition, in []string) []string {
	known := map[string]bool{}
	for _, s := range d.Services {
		known[s.ID] = true
	}
	out := []string{}
	seen := map[string]bool{}
	for i, s := range in {
		s = strings.TrimSpace(s)
		if !known[s] {
			ve.Add(fmt.Sprintf("services[%d]", i), CodeInvalidEnum, s, fmt.Sprintf("%q is not a service of provider %s", s, d.Slug))
			continue
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func validateFrequency(ve *ValidationError, p *string) string {
	if p == nil || strings.TrimSpace(*p) == "" {
		return DefaultSyncFrequency
	}
	f := strings.ToLower(strings.TrimSpace(*p))
	if _, ok := SyncFrequencies[f]; !ok {
		ve.Add("syncFrequency", CodeInvalidEnum, *p, "syncFrequency must be one of hourly, daily, weekly, manual")
	}
	return f
}

// sealCredentials encrypts the credentials with the data-dir key that seals
// webhook secrets, bound to the connection id.
func (a *App) sealCredentials(connID string, creds map[string]string) ([]byte, []string, error) {
	if len(creds) == 0 {
		return nil, []string{}, nil
	}
	raw, err := json.Marshal(creds)
	if err != nil {
		return nil, nil, err
	}
	return a.sealSecret("integration:"+connID, string(raw)), sortedKeys(creds), nil
}

func (a *App) openCredentials(c *Connection) (map[string]string, error) {
	out := map[string]string{}
	if len(c.SealedCredentials) == 0 {
		return out, nil
	}
	plain, err := a.openSecret("integration:"+c.ID, c.SealedCredentials)
	if err != nil {
		return nil, fmt.Errorf("open credentials of connection %s: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(plain), &out); err != nil {
		return nil, fmt.Errorf("decode credentials of connection %s: %w", c.ID, err)
	}
	return out, nil
}

// connectionAudit is what the audit trail keeps of a connection: never a
// credential, only which fields are set.
type connectionAudit struct {
	ProviderSlug   string            `json:"providerSlug"`
	Name           string            `json:"name"`
	Status         string            `json:"status"`
	SyncFrequency  string            `json:"syncFrequency"`
	Variables      map[string]string `json:"variables"`
	Services       []string          `json:"services"`
	CredentialKeys []string          `json:"credentialKeys"`
	CredentialsSet string            `json:"credentials,omitempty"` // "[redacted]" marker when changed
}

func auditOf(c *Connection, credsChanged bool) *connectionAudit {
	if c == nil {
		return nil
	}
	out := &connectionAudit{ProviderSlug: c.ProviderSlug, Name: c.Name, Status: c.Status, SyncFrequency: c.SyncFrequency,
		Variables: c.Variables, Services: c.Services, CredentialKeys: c.CredentialKeys}
	if credsChanged {
		out.CredentialsSet = "[redacted: changed " + c.UpdatedAt.Format(time.RFC3339Nano) + "]"
	}
	return out
}

// ListConnections lists the organization's connections.
func (a *App) ListConnections(ctx context.Context) ([]Connection, error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() {
		return nil, Errorf(ErrForbidden, "the %s role may not read integrations", p.Role)
	}
	cs, err := a.store.ListConnections(ctx, p.OrgID)
	if err != nil {
		return nil, fmt.Errorf("list connections: %w", err)
	}
	for i := range cs {
		a.connectionView(&cs[i])
	}
	return cs, nil
}

// GetConnection returns one connection.
func (a *App) GetConnection(ctx context.Context, id string) (*Connection, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.store.GetConnection(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	return a.connectionView(c), nil
}

// integrationReader admits the roles that read integrations: owners,
// admins and auditors.
func (a *App) integrationReader(ctx context.Context) (*Principal, error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() {
		return nil, Errorf(ErrForbidden, "the %s role may not read integrations", p.Role)
	}
	return p, nil
}

// CreateConnection connects a provider. Credentials are validated against
// the provider's fields and sealed; a custom (push) connection gets its
// push token, returned this once. The plan's integration limit applies.
func (a *App) CreateConnection(ctx context.Context, in ConnectionCreate) (*ConnectionCreated, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	slug := strings.TrimSpace(in.ProviderSlug)
	prov, ok := a.provider(slug)
	if !ok {
		if slug == "" {
			return nil, Invalid("providerSlug", CodeRequired, nil, "providerSlug is required")
		}
		return nil, Invalid("providerSlug", CodeUnknownReference, slug, fmt.Sprintf("%q is not a provider of this appliance", slug))
	}
	d := prov.Definition()
	now := a.Now()
	c := &Connection{ID: NewID(PrefixConnection), ProviderSlug: slug, Status: ConnectionActive, CreatedBy: p.ActorID(),
		CreatedAt: now, UpdatedAt: now, Metadata: in.Metadata}
	c.Name = d.Name
	if in.Name != nil && strings.TrimSpace(*in.Name) != "" {
		c.Name = strings.TrimSpace(*in.Name)
		maxLen(ve, "name", c.Name, maxConnectionName)
	}
	creds := validateCredentials(ve, d, in.Credentials, false)
	c.Variables = validateVariables(ve, d, in.Variables, nil)
	c.Services = validateServices(ve, d, in.Services)
	if in.Services == nil {
		c.Services = defaultServices(d)
	}
	c.SyncFrequency = validateFrequency(ve, in.SyncFrequency)
	if d.AuthStrategy == ProviderAuthPush {
		c.SyncFrequency = "manual"
	}
	validateMetadata(ve, in.Metadata)
	validateProviderSettings(ve, prov, p.OrgID, creds, c.Variables)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	if c.SealedCredentials, c.CredentialKeys, err = a.sealCredentials(c.ID, creds); err != nil {
		return nil, fmt.Errorf("create connection: %w", err)
	}
	out := &ConnectionCreated{Connection: c}
	if d.AuthStrategy == ProviderAuthPush {
		tok := PushTokenPrefix + RandomToken(32)
		h := HashKey(tok)
		c.PushTokenHash, c.PushTokenHint = &h, Ptr(tok[:len(PushTokenPrefix)+4]+"…")
		out.PushToken = tok
	}
	if every := SyncFrequencies[c.SyncFrequency]; every > 0 {
		// The first scheduled run comes at once.
		c.NextRunAt = &now
	}
	err = a.insertConnection(ctx, p.OrgID, c, len(creds) > 0)
	if err != nil {
		return nil, fmt.Errorf("create connection: %w", err)
	}
	a.connectionView(c)
	return out, nil
}

// insertConnection stores a new connection within the plan's integration
// limit, with its audit record, in one transaction.
func (a *App) insertConnection(ctx context.Context, orgID string, c *Connection, hasCredentials bool) error {
	return a.store.InTx(ctx, func(ctx context.Context) error {
		org, err := a.store.GetOrganization(ctx, orgID)
		if err != nil {
			return err
		}
		n, err := a.store.CountConnections(ctx, orgID)
		if err != nil {
			return err
		}
		if err := a.CheckLimit(org.Plan, "integrations", n); err != nil {
			return err
		}
		if err := a.store.CreateConnection(ctx, orgID, c); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "integration_connection", ResourceID: c.ID,
			After: auditOf(c, hasCredentials)})
	})
}

func defaultServices(d ProviderDefinition) []string {
	out := []string{}
	for _, s := range d.Services {
		if s.EnabledDefault {
			out = append(out, s.ID)
		}
	}
	sort.Strings(out)
	return out
}

func validateMetadata(ve *ValidationError, m map[string]any) {
	if m == nil {
		return
	}
	raw, err := json.Marshal(m)
	if err != nil || len(raw) > 16<<10 {
		ve.Add("metadata", CodeInvalid, nil, "metadata must be a JSON object of at most 16 KiB")
	}
}

// mutateConnection loads a connection in a transaction, applies fn and
// stores the result with an audit record.
func (a *App) mutateConnection(ctx context.Context, id, action string, fn func(c *Connection, d ProviderDefinition, ve *ValidationError) (credsChanged bool, err error)) (*Connection, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *Connection
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetConnection(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		c := *before
		var d ProviderDefinition
		if prov, ok := a.provider(c.ProviderSlug); ok {
			d = prov.Definition()
		} else {
			d = ProviderDefinition{Slug: c.ProviderSlug, Name: c.ProviderSlug}
		}
		ve := NewValidationError()
		changed, err := fn(&c, d, ve)
		if err != nil {
			return err
		}
		if err := ve.Err(); err != nil {
			return err
		}
		c.UpdatedAt = a.Now()
		if err := a.store.UpdateConnection(ctx, p.OrgID, &c); err != nil {
			return err
		}
		out = &c
		return a.record(ctx, Mutation{Action: action, ResourceType: "integration_connection", ResourceID: id,
			Before: auditOf(before, false), After: auditOf(&c, changed)})
	})
	if err != nil {
		return nil, fmt.Errorf("%s connection %s: %w", action, id, err)
	}
	return a.connectionView(out), nil
}

// UpdateConnection changes a connection's name, variables, frequency or
// metadata.
func (a *App) UpdateConnection(ctx context.Context, id string, in ConnectionPatch) (*Connection, error) {
	return a.mutateConnection(ctx, id, "updated", func(c *Connection, d ProviderDefinition, ve *ValidationError) (bool, error) {
		if in.Name != nil {
			name := strings.TrimSpace(*in.Name)
			if name == "" {
				ve.Add("name", CodeRequired, nil, "name must not be empty")
			}
			maxLen(ve, "name", name, maxConnectionName)
			c.Name = name
		}
		if in.Variables != nil {
			c.Variables = validateVariables(ve, d, in.Variables, c.Variables)
		}
		if in.SyncFrequency != nil {
			c.SyncFrequency = validateFrequency(ve, in.SyncFrequency)
			if d.AuthStrategy == ProviderAuthPush && c.SyncFrequency != "manual" {
				ve.Add("syncFrequency", CodeInvalid, c.SyncFrequency, "a push connection receives results; its frequency is manual")
			}
			c.NextRunAt = nil
			if every := SyncFrequencies[c.SyncFrequency]; every > 0 && c.Status == ConnectionActive {
				next := a.Now()
				if c.LastRunAt != nil {
					next = c.LastRunAt.Add(every)
				}
				c.NextRunAt = &next
			}
		}
		if in.Metadata != nil {
			validateMetadata(ve, in.Metadata)
			c.Metadata = in.Metadata
		}
		return false, nil
	})
}

// UpdateConnectionCredentials replaces the credential fields given.
func (a *App) UpdateConnectionCredentials(ctx context.Context, id string, in CredentialsUpdate) (*Connection, error) {
	return a.mutateConnection(ctx, id, "credentials_updated", func(c *Connection, d ProviderDefinition, ve *ValidationError) (bool, error) {
		if len(in.Credentials) == 0 {
			ve.Add("credentials", CodeRequired, nil, "credentials must name at least one field")
			return false, nil
		}
		given := validateCredentials(ve, d, in.Credentials, true)
		if !ve.Empty() {
			return false, nil
		}
		creds, err := a.openCredentials(c)
		if err != nil {
			return false, err
		}
		for k, raw := range in.Credentials {
			if v, _ := rawValue(raw); v == "" {
				delete(creds, k)
			}
		}
		for k, v := range given {
			creds[k] = v
		}
		for _, f := range d.Credentials {
			if f.Required && creds[f.Key] == "" {
				ve.Add("credentials."+f.Key, CodeRequired, nil, f.Key+" is required")
			}
		}
		c.SealedCredentials, c.CredentialKeys, err = a.sealCredentials(c.ID, creds)
		if c.Status == ConnectionError {
			c.Status, c.ErrorMessage = ConnectionActive, nil
		}
		return true, err
	})
}

// UpdateConnectionServices sets the enabled services.
func (a *App) UpdateConnectionServices(ctx context.Context, id string, in ServicesUpdate) (*ConnectionServices, error) {
	c, err := a.mutateConnection(ctx, id, "services_updated", func(c *Connection, d ProviderDefinition, ve *ValidationError) (bool, error) {
		if in.Services == nil {
			ve.Add("services", CodeRequired, nil, "services is required (an empty list disables every service)")
			return false, nil
		}
		if len(d.Services) == 0 && len(in.Services) > 0 {
			ve.Add("services", CodeInvalid, in.Services, "provider "+d.Slug+" has no services")
			return false, nil
		}
		c.Services = validateServices(ve, d, in.Services)
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return a.servicesOf(c), nil
}

// GetConnectionServices lists the provider's services for a connection.
func (a *App) GetConnectionServices(ctx context.Context, id string) (*ConnectionServices, error) {
	c, err := a.GetConnection(ctx, id)
	if err != nil {
		return nil, err
	}
	return a.servicesOf(c), nil
}

func (a *App) servicesOf(c *Connection) *ConnectionServices {
	out := &ConnectionServices{ConnectionID: c.ID, Services: []ConnectionService{}}
	p, ok := a.compiledProvider(c.ProviderSlug)
	if !ok {
		return out
	}
	for _, s := range p.Definition().Services {
		out.Services = append(out.Services, ConnectionService{ProviderService: s, Enabled: containsString(c.Services, s.ID)})
	}
	return out
}

// setConnectionStatus moves a connection between active, paused and
// disconnected. A disconnected connection forgets its credentials.
func (a *App) setConnectionStatus(ctx context.Context, id, action, status string) (*Connection, error) {
	return a.mutateConnection(ctx, id, action, func(c *Connection, d ProviderDefinition, ve *ValidationError) (bool, error) {
		switch {
		case status == ConnectionActive && c.Status == ConnectionDisconnected:
			return false, Errorf(ErrConflict, "a disconnected connection cannot resume; set its credentials again or connect anew")
		case status == ConnectionPaused && c.Status == ConnectionDisconnected:
			return false, Errorf(ErrConflict, "a disconnected connection cannot be paused")
		}
		changed := false
		c.Status = status
		c.NextRunAt = nil
		switch status {
		case ConnectionActive:
			c.ErrorMessage = nil
			if every := SyncFrequencies[c.SyncFrequency]; every > 0 {
				now := a.Now()
				c.NextRunAt = &now
			}
		case ConnectionDisconnected:
			changed = len(c.CredentialKeys) > 0 || c.PushTokenHash != nil
			c.SealedCredentials, c.CredentialKeys, c.PushTokenHash, c.PushTokenHint = nil, []string{}, nil, nil
			c.SealedWebhookSecret = nil
		}
		return changed, nil
	})
}

// PauseConnection stops scheduled runs of a connection.
func (a *App) PauseConnection(ctx context.Context, id string) (*Connection, error) {
	return a.setConnectionStatus(ctx, id, "paused", ConnectionPaused)
}

// ResumeConnection restarts scheduled runs; the next one is due at once.
func (a *App) ResumeConnection(ctx context.Context, id string) (*Connection, error) {
	return a.setConnectionStatus(ctx, id, "resumed", ConnectionActive)
}

// DisconnectConnection erases the credentials and stops runs; the history
// stays readable.
func (a *App) DisconnectConnection(ctx context.Context, id string) (*Connection, error) {
	return a.setConnectionStatus(ctx, id, "disconnected", ConnectionDisconnected)
}

// DeleteConnection removes a connection with its runs and exceptions. The
// findings and evidence it produced stay (they are the organization's
// records).
func (a *App) DeleteConnection(ctx context.Context, id string) error {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		c, err := a.store.GetConnection(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if err := a.store.DeleteConnection(ctx, p.OrgID, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "integration_connection", ResourceID: id, Before: auditOf(c, false)})
	})
	if err != nil {
		return fmt.Errorf("delete connection %s: %w", id, err)
	}
	return nil
}

// RotatePushToken gives a custom connection a new push token (the old one
// stops working at once); it is shown once.
func (a *App) RotatePushToken(ctx context.Context, id string) (*PushToken, error) {
	var tok string
	c, err := a.mutateConnection(ctx, id, "push_token_rotated", func(c *Connection, d ProviderDefinition, ve *ValidationError) (bool, error) {
		if d.AuthStrategy != ProviderAuthPush {
			return false, Invalid("id", CodeInvalid, id, "only connections of a push provider have a push token")
		}
		if c.Status == ConnectionDisconnected {
			return false, Errorf(ErrConflict, "a disconnected connection has no push token")
		}
		tok = PushTokenPrefix + RandomToken(32)
		h := HashKey(tok)
		c.PushTokenHash, c.PushTokenHint = &h, Ptr(tok[:len(PushTokenPrefix)+4]+"…")
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return &PushToken{ConnectionID: c.ID, PushToken: tok, Hint: *c.PushTokenHint}, nil
}

// ConnectionTestResult is the answer of a connection test.
type ConnectionTestResult struct {
	ConnectionID string `json:"connectionId"`
	TestResult
}

// TestConnection asks the provider whether the connection's credentials
// work. A refusal is a result with success false, never an error.
func (a *App) TestConnection(ctx context.Context, id string) (*ConnectionTestResult, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	c, err := a.store.GetConnection(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	prov, ok := a.provider(c.ProviderSlug)
	if !ok {
		return &ConnectionTestResult{ConnectionID: id, TestResult: TestResult{Message: "provider " + c.ProviderSlug + " is not available (not in this build, or switched off by the appliance operator)"}}, nil
	}
	if c.Status == ConnectionDisconnected {
		return &ConnectionTestResult{ConnectionID: id, TestResult: TestResult{Message: "the connection is disconnected: set its credentials again"}}, nil
	}
	if err := a.refreshOAuthToken(ctx, p.OrgID, c); err != nil {
		return &ConnectionTestResult{ConnectionID: id, TestResult: TestResult{Message: err.Error()}}, nil
	}
	target, err := a.target(p.OrgID, c)
	if err != nil {
		return nil, err
	}
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res := safeTest(tctx, prov, target)
	return &ConnectionTestResult{ConnectionID: id, TestResult: res}, nil
}

func safeTest(ctx context.Context, p IntegrationProvider, t ConnectionTarget) (res TestResult) {
	defer func() {
		if r := recover(); r != nil {
			res = TestResult{Message: fmt.Sprintf("the provider failed: %v", r)}
		}
	}()
	return p.Test(ctx, t)
}

func (a *App) target(orgID string, c *Connection) (ConnectionTarget, error) {
	creds, err := a.openCredentials(c)
	if err != nil {
		return ConnectionTarget{}, err
	}
	vars := map[string]string{}
	for k, v := range c.Variables {
		vars[k] = v
	}
	return ConnectionTarget{ConnectionID: c.ID, OrganizationID: orgID, Credentials: creds, Variables: vars,
		Services: append([]string{}, c.Services...)}, nil
}
