package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP tool server at /v1/mcp: the official Go SDK over the streamable
// HTTP transport, stateless, so every request is authenticated by the usual
// chain (X-API-Key or an OAuth bearer token) and each tool call runs with
// that request's principal. Tools call the same app services as the REST
// handlers, so permissions and organization scoping are identical.

// mcpTools registers every tool. To add one, write a small function of the
// form func(ctx, In) (Out, error) calling an app service and add one
// addTool line here (controls, findings and evidence tools belong here).
func (s *Server) mcpTools(srv *mcp.Server) {
	addTool(s, srv, "list_vendors", "List the organization's vendors (third parties), with optional filters.", false, s.toolListVendors)
	addTool(s, srv, "get_vendor", "Get one vendor by id (vnd_...).", false, s.toolGetVendor)
	addTool(s, srv, "create_vendor", "Create a vendor. Needs a role that may manage data (owner, admin).", true, s.toolCreateVendor)
	addTool(s, srv, "list_people", "List the organization's people and their roles.", false, s.toolListPeople)
	addTool(s, srv, "get_organization", "Get the organization the credential acts in.", false, s.toolGetOrganization)
	addTool(s, srv, "compliance_status", "Compliance status of every enabled framework: score (0-100) and control and requirement counts.", false, s.toolComplianceStatus)
	addTool(s, srv, "list_controls", "List the organization's controls, with optional framework, status and owner filters.", false, s.toolListControls)
	addTool(s, srv, "get_control", "Get one control by id (ctl_...) with its requirements and open findings.", false, s.toolGetControl)
	addTool(s, srv, "list_findings", "List findings, with optional status, severity, type and control filters.", false, s.toolListFindings)
	addTool(s, srv, "create_finding", "Create a finding (title, severity, linkedControlIds...). Needs a role that may record findings (owner, admin; auditors in a session).", true, s.toolCreateFinding)
	addTool(s, srv, "list_expiring_evidence", "List evidence that expires within the next days (default 30), soonest first.", false, s.toolListExpiringEvidence)
	addTool(s, srv, "list_incidents", "List incidents with their statutory reporting clocks (NIS2, DORA, GDPR, CRA), with optional status, type, regime and overdue filters.", false, s.toolListIncidents)
	addTool(s, srv, "list_connections", "List the organization's integration connections (provider, status, schedule, last run); never their credentials.", false, s.toolListConnections)
	addTool(s, srv, "list_check_results", "List the automated check results of a connection (icn_...), newest first, with optional check and status (pass, fail, error, excepted) filters.", false, s.toolListCheckResults)
	addTool(s, srv, "list_cloud_findings", "List cloud security findings (failing resources of cloud-account checks such as AWS), newest first, with optional connectionId, severity, service (iam, s3, ec2, ...) and status (open, excepted, resolved) filters; each carries the check's remediation text.", false, s.toolListCloudFindings)
	addTool(s, srv, "get_incident", "Get one incident by id (inc_...) with its reporting clocks: each report's due time, start event, legal basis and status.", false, s.toolGetIncident)
	addTool(s, srv, "list_pentests", "List security penetration tests (newest first) with status, progress and issue counts; optional targetUrl and status filters. Owners, admins and auditors.", false, s.toolListPentests)
	addTool(s, srv, "get_pentest_report", "Get a completed penetration test's report by id (pen_...): the run, its issues grouped by severity with CVSS scores, evidence and remediation.", false, s.toolGetPentestReport)
	addTool(s, srv, "ask_assistant", "Ask the compliance assistant a question in plain words (controls without evidence, expiring evidence, vendors, risks, findings, overdue work, what a policy says); the answer names the records it came from.", false, s.toolAskAssistant)
	addTool(s, srv, "list_training_status", "Training status: completion rates by module (owners, admins, auditors) and assignments with status and due date, with optional personId, moduleId and status (assigned, overdue, completed) filters; employees and contractors see their own assignments.", false, s.toolListTrainingStatus)
	addTool(s, srv, "list_devices", "List the organization's devices with their compliance (every check of the last agent check-in passed), with optional personId, platform, compliant and stale (no check-in for 7 days) filters.", false, s.toolListDevices)
	addTool(s, srv, "list_automation_runs", "List the task automation runs of a task (tsk_...), newest first: status, pass/fail verdict and its reason, stop reason, version; optional automationId (tau_...) narrows to one automation.", false, s.toolListAutomationRuns)
	addTool(s, srv, "list_sync_runs", "List directory sync runs (newest first) with their counts (found, created, updated, deactivated, reactivated, unchanged, skipped, errors), with optional connectionId and status filters. Owners, admins and auditors.", false, s.toolListSyncRuns)
	addTool(s, srv, "list_browser_automation_runs", "List the browser automation runs of a task (tsk_...), newest first: status, pass or fail with the reason, step results, extracted values, screenshots and the evidence or finding each produced. Owners, admins and auditors.", false, s.toolListBrowserRuns)
	addTool(s, srv, "list_vendor_assessments", "List a vendor's risk assessments (vnd_...), newest first: what was checked of its public site (HTTPS checks, security.txt, trust page), the suggested inherent probability and impact with reasons, and whether a person accepted it.", false, s.toolListVendorAssessments)
	addTool(s, srv, "list_task_check_runs", "List the automated check runs of a task (tsk_...), newest first, with their logs and the results of the checks that evidence the task; limit 1 to 100 (default 20).", false, s.toolListTaskCheckRuns)
}

// addTool registers a tool whose errors come back as tool errors with the
// same code and client-safe message as the REST API. Writing tools need the
// compliance:write scope when the caller uses OAuth.
func addTool[In any, Out any](s *Server, srv *mcp.Server, name, desc string, writes bool, fn func(ctx context.Context, in In) (Out, error)) {
	tool := &mcp.Tool{Name: name, Description: desc, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: !writes}}
	s.toolNames = append(s.toolNames, name) // the manifest lists what is registered, in order
	mcp.AddTool(srv, tool, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		if app.PrincipalFrom(ctx) == nil {
			return nil, nil, fmt.Errorf("unauthorized: no credentials")
		}
		if writes && !tokenCanWrite(ctx) {
			return nil, nil, fmt.Errorf("forbidden: the token lacks the %s scope", app.ScopeWrite)
		}
		out, err := fn(ctx, in)
		if err != nil {
			status, code, msg, _ := s.Classify(err)
			if status >= 500 {
				s.log.ErrorContext(ctx, "mcp tool failed", slog.String("tool", name), slog.String("request_id", app.RequestIDFrom(ctx)), slog.Any("error", err))
			}
			return nil, nil, fmt.Errorf("%s: %s", code, msg)
		}
		return nil, out, nil
	})
}

type scopeKey struct{}

// tokenCanWrite reports whether an OAuth token in ctx carries the write
// scope; other credentials are limited by role alone.
func tokenCanWrite(ctx context.Context) bool {
	v, ok := ctx.Value(scopeKey{}).(bool)
	return !ok || v
}

func newMCPHandler(s *Server) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "compliance", Title: "Compliance appliance", Version: s.opts.Version},
		&mcp.ServerOptions{Instructions: "Tools over the organization's compliance data. Every call acts with the caller's role."})
	s.mcpTools(srv)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log})
}

// serveMCP hands an authenticated request to the SDK, noting the token's
// write scope for OAuth callers.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) error {
	if p := app.PrincipalFrom(r.Context()); p != nil && p.AuthType == app.AuthOAuth {
		r = r.WithContext(context.WithValue(r.Context(), scopeKey{}, slices.Contains(p.Scopes, app.ScopeWrite)))
	}
	s.mcp.ServeHTTP(w, r)
	return nil
}

// mcpManifest is /.well-known/mcp.json: endpoint, transport, auth options.
func (s *Server) mcpManifest(w http.ResponseWriter, r *http.Request) error {
	base := s.BaseURL(r)
	httpx.AllowCORS(w)
	httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"name":        "compliance",
		"title":       "Compliance appliance",
		"description": "Tools over an organization's compliance data: framework status, controls, findings, expiring evidence, incidents and their reporting clocks, vendors, people, the organization.",
		"version":     s.opts.Version,
		"endpoint":    base + "/v1/mcp",
		"transport":   map[string]any{"type": "streamable-http", "url": base + "/v1/mcp", "stateless": true},
		"authentication": []map[string]any{
			{"type": "api-key", "header": "X-API-Key", "description": "An organization API key; the tools act with the key's role."},
			{"type": "oauth2", "authorizationServer": base, "metadata": base + "/.well-known/oauth-authorization-server",
				"protectedResourceMetadata": base + "/.well-known/oauth-protected-resource/v1/mcp",
				"registration":              base + "/oauth/register", "pkce": "S256", "scopes": app.Scopes,
				"description": "Per-person access: the tools act as the person who approved, with their role."},
		},
		"tools": s.toolNames,
	})
	return nil
}

// The tools.

type pageIn struct {
	Page    int `json:"page,omitempty" jsonschema:"page number, from 1"`
	PerPage int `json:"perPage,omitempty" jsonschema:"page size, 1 to 200 (default 50)"`
}

func (p pageIn) page() (app.Page, error) {
	pg := app.Page{Page: p.Page, PerPage: p.PerPage}
	if pg.Page == 0 {
		pg.Page = 1
	}
	if pg.PerPage == 0 {
		pg.PerPage = app.DefaultPerPage
	}
	if pg.Page < 1 || pg.PerPage < 1 || pg.PerPage > app.MaxPerPage {
		return pg, app.Invalid("perPage", app.CodeInvalid, p.PerPage, "page must be at least 1 and perPage between 1 and 200")
	}
	return pg, nil
}

type listOut[T any] struct {
	Data []T        `json:"data"`
	Meta httpx.Meta `json:"meta"`
}

type listVendorsIn struct {
	pageIn
	Criticality           string `json:"criticality,omitempty" jsonschema:"critical, important or standard"`
	Category              string `json:"category,omitempty"`
	Country               string `json:"country,omitempty" jsonschema:"ISO 3166-1 alpha-2 code"`
	DPAStatus             string `json:"dpaStatus,omitempty" jsonschema:"signed, pending or not_required"`
	ProcessesPersonalData *bool  `json:"processesPersonalData,omitempty"`
	Search                string `json:"q,omitempty" jsonschema:"text to search in names"`
}

func (s *Server) toolListVendors(ctx context.Context, in listVendorsIn) (listOut[app.Vendor], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.Vendor]{}, err
	}
	l, err := s.app.ListVendors(ctx, app.VendorFilter{Criticality: in.Criticality, Category: in.Category, Country: in.Country,
		DPAStatus: in.DPAStatus, ProcessesPersonalData: in.ProcessesPersonalData, Search: in.Search, Page: pg})
	if err != nil {
		return listOut[app.Vendor]{}, err
	}
	return listOut[app.Vendor]{Data: l.Items, Meta: httpx.NewMeta(pg, l.Total)}, nil
}

type idIn struct {
	ID string `json:"id" jsonschema:"the resource id"`
}

func (s *Server) toolGetVendor(ctx context.Context, in idIn) (*app.Vendor, error) {
	return s.app.GetVendor(ctx, in.ID)
}

type createVendorIn struct {
	Name                  string `json:"name" jsonschema:"vendor name"`
	Category              string `json:"category,omitempty" jsonschema:"category such as cloud, software_as_a_service, consulting, hr, finance, legal, marketing, office, infrastructure, other"`
	Criticality           string `json:"criticality,omitempty" jsonschema:"critical, important or standard"`
	Description           string `json:"description,omitempty"`
	Website               string `json:"website,omitempty"`
	ContactEmail          string `json:"contactEmail,omitempty"`
	Country               string `json:"country,omitempty" jsonschema:"ISO 3166-1 alpha-2 code"`
	ProcessesPersonalData *bool  `json:"processesPersonalData,omitempty"`
	ICTService            *bool  `json:"ictService,omitempty"`
	TransferMechanism     string `json:"transferMechanism,omitempty" jsonschema:"required for a vendor outside the EU/EEA that processes personal data"`
}

func (s *Server) toolCreateVendor(ctx context.Context, in createVendorIn) (*app.Vendor, error) {
	// The REST body's JSON form carries the same rules (optional and
	// nullable fields), so the tool input goes through it.
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	var body app.VendorInput
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, err
	}
	return s.app.CreateVendor(ctx, body)
}

type listPeopleIn struct {
	pageIn
	Role string `json:"role,omitempty" jsonschema:"owner, admin, auditor, employee or contractor"`
}

func (s *Server) toolListPeople(ctx context.Context, in listPeopleIn) (listOut[app.Person], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.Person]{}, err
	}
	l, err := s.app.ListPeople(ctx, app.PersonFilter{Role: in.Role, Page: pg})
	if err != nil {
		return listOut[app.Person]{}, err
	}
	return listOut[app.Person]{Data: l.Items, Meta: httpx.NewMeta(pg, l.Total)}, nil
}

type noIn struct{}

func (s *Server) toolGetOrganization(ctx context.Context, _ noIn) (*app.Organization, error) {
	return s.app.GetOrganization(ctx)
}

// frameworkStatus is one enabled framework in compliance_status.
type frameworkStatus struct {
	FrameworkID string               `json:"frameworkId"`
	Slug        string               `json:"slug"`
	Name        string               `json:"name"`
	Score       int                  `json:"score"`
	Counts      *app.FrameworkCounts `json:"counts"`
}

type complianceStatusOut struct {
	Frameworks []frameworkStatus `json:"frameworks"`
}

func (s *Server) toolComplianceStatus(ctx context.Context, _ noIn) (*complianceStatusOut, error) {
	on := true
	out := &complianceStatusOut{Frameworks: []frameworkStatus{}}
	for page := 1; ; page++ {
		l, err := s.app.ListFrameworks(ctx, &on, app.Page{Page: page, PerPage: app.MaxPerPage})
		if err != nil {
			return nil, err
		}
		for _, f := range l.Items {
			score, counts, err := s.app.FrameworkScore(ctx, f.ID)
			if err != nil {
				return nil, err
			}
			out.Frameworks = append(out.Frameworks, frameworkStatus{FrameworkID: f.ID, Slug: f.Slug, Name: f.Name, Score: score, Counts: counts})
		}
		if page*app.MaxPerPage >= l.Total {
			return out, nil
		}
	}
}

type listControlsIn struct {
	pageIn
	FrameworkID string `json:"frameworkId,omitempty" jsonschema:"framework id or slug"`
	Status      string `json:"status,omitempty" jsonschema:"not_started, in_progress, implemented or not_applicable"`
	OwnerID     string `json:"ownerId,omitempty" jsonschema:"person id of the control owner"`
}

func (s *Server) toolListControls(ctx context.Context, in listControlsIn) (listOut[app.Control], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.Control]{}, err
	}
	l, err := s.app.ListControls(ctx, app.ControlFilter{FrameworkID: in.FrameworkID, Status: in.Status, OwnerID: in.OwnerID, Page: pg})
	if err != nil {
		return listOut[app.Control]{}, err
	}
	return listOut[app.Control]{Data: l.Items, Meta: httpx.NewMeta(pg, l.Total)}, nil
}

func (s *Server) toolGetControl(ctx context.Context, in idIn) (*app.Control, error) {
	return s.app.GetControl(ctx, in.ID)
}

type listFindingsIn struct {
	pageIn
	Status    string `json:"status,omitempty" jsonschema:"open, in_review, resolved or closed"`
	Severity  string `json:"severity,omitempty" jsonschema:"critical, high, medium, low or informational"`
	Type      string `json:"type,omitempty" jsonschema:"soc2, iso27001, dora, gdpr, hipaa, pci_dss or nis2"`
	ControlID string `json:"controlId,omitempty" jsonschema:"findings linked to this control"`
}

func (s *Server) toolListFindings(ctx context.Context, in listFindingsIn) (listOut[app.Finding], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.Finding]{}, err
	}
	l, err := s.app.ListFindings(ctx, app.FindingFilter{Status: in.Status, Severity: in.Severity, Type: in.Type, ControlID: in.ControlID, Page: pg})
	if err != nil {
		return listOut[app.Finding]{}, err
	}
	return listOut[app.Finding]{Data: l.Items, Meta: httpx.NewMeta(pg, l.Total)}, nil
}

type createFindingIn struct {
	Title            string   `json:"title" jsonschema:"short title of the finding"`
	Severity         string   `json:"severity,omitempty" jsonschema:"critical, high, medium, low or informational (default medium)"`
	Description      string   `json:"description,omitempty"`
	Source           string   `json:"source,omitempty" jsonschema:"where the finding comes from, e.g. a scanner or an audit"`
	Type             string   `json:"type,omitempty" jsonschema:"soc2, iso27001, dora, gdpr, hipaa, pci_dss or nis2"`
	FindingClass     string   `json:"findingClass,omitempty" jsonschema:"major_nonconformity, minor_nonconformity, observation, opportunity_for_improvement or not_applicable"`
	LinkedControlIDs []string `json:"linkedControlIds,omitempty" jsonschema:"controls the finding concerns; open critical, high and medium findings keep them from counting as met"`
	CVSS             *float64 `json:"cvss,omitempty" jsonschema:"scanner score 0-10; sets the severity unless severity is given"`
	DueDate          string   `json:"dueDate,omitempty" jsonschema:"RFC 3339 time"`
}

func (s *Server) toolCreateFinding(ctx context.Context, in createFindingIn) (*app.Finding, error) {
	// Through the REST body's JSON form, which carries its rules (Shape B).
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	var body app.FindingCreate
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, err
	}
	return s.app.CreateFinding(ctx, body)
}

type expiringEvidenceIn struct {
	pageIn
	Days int `json:"days,omitempty" jsonschema:"look-ahead window in days, 1 to 366 (default 30)"`
}

func (s *Server) toolListExpiringEvidence(ctx context.Context, in expiringEvidenceIn) (listOut[app.Evidence], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.Evidence]{}, err
	}
	if in.Days < 0 {
		return listOut[app.Evidence]{}, app.Invalid("days", app.CodeInvalid, in.Days, "days must be between 1 and 366")
	}
	l, err := s.app.ExpiringEvidence(ctx, time.Duration(in.Days)*24*time.Hour, pg)
	if err != nil {
		return listOut[app.Evidence]{}, err
	}
	return listOut[app.Evidence]{Data: l.Items, Meta: httpx.NewMeta(pg, l.Total)}, nil
}

type listIncidentsIn struct {
	pageIn
	Status  string `json:"status,omitempty" jsonschema:"open, contained, resolved or closed"`
	Type    string `json:"type,omitempty" jsonschema:"security_incident, personal_data_breach, ict_incident or vulnerability"`
	Regime  string `json:"regime,omitempty" jsonschema:"a confirmed regime: nis2, dora, gdpr or cra"`
	Overdue *bool  `json:"overdue,omitempty" jsonschema:"true for incidents with a report past its due time and not sent"`
}

func (s *Server) toolListIncidents(ctx context.Context, in listIncidentsIn) (listOut[app.Incident], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.Incident]{}, err
	}
	l, err := s.app.ListIncidents(ctx, app.IncidentFilter{Status: in.Status, Type: in.Type, Regime: in.Regime, Overdue: in.Overdue, Page: pg})
	if err != nil {
		return listOut[app.Incident]{}, err
	}
	return listOut[app.Incident]{Data: l.Items, Meta: httpx.NewMeta(pg, l.Total)}, nil
}

func (s *Server) toolGetIncident(ctx context.Context, in idIn) (*app.Incident, error) {
	return s.app.GetIncident(ctx, in.ID)
}

type listPentestsIn struct {
	pageIn
	TargetURL string `json:"targetUrl,omitempty" jsonschema:"the tests of one target URL (its scheme, host and port)"`
	Status    string `json:"status,omitempty" jsonschema:"queued, running, completed, failed, cancelled or interrupted"`
}

func (s *Server) toolListPentests(ctx context.Context, in listPentestsIn) (listOut[app.PentestRun], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.PentestRun]{}, err
	}
	l, err := s.app.ListPentests(ctx, in.TargetURL, in.Status, pg)
	if err != nil {
		return listOut[app.PentestRun]{}, err
	}
	return listOut[app.PentestRun]{Data: l.Items, Meta: httpx.NewMeta(pg, l.Total)}, nil
}

func (s *Server) toolGetPentestReport(ctx context.Context, in idIn) (*app.PentestReport, error) {
	return s.app.PentestReport(ctx, in.ID)
}

type askIn struct {
	Question string `json:"question" jsonschema:"the question, at most 4000 characters"`
}

func (s *Server) toolAskAssistant(ctx context.Context, in askIn) (*app.AssistantMessage, error) {
	return s.app.AskAssistant(ctx, in.Question)
}

func (s *Server) toolListConnections(ctx context.Context, in pageIn) (listOut[app.Connection], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.Connection]{}, err
	}
	cs, err := s.app.ListConnections(ctx)
	if err != nil {
		return listOut[app.Connection]{}, err
	}
	from := min(pg.Offset(), len(cs))
	return listOut[app.Connection]{Data: cs[from:min(from+pg.PerPage, len(cs))], Meta: httpx.NewMeta(pg, len(cs))}, nil
}

type listCheckResultsIn struct {
	pageIn
	ConnectionID string `json:"connectionId" jsonschema:"the connection (icn_...)"`
	CheckID      string `json:"checkId,omitempty" jsonschema:"one check, e.g. https.tls_version"`
	Status       string `json:"status,omitempty" jsonschema:"pass, fail, error or excepted"`
}

func (s *Server) toolListCheckResults(ctx context.Context, in listCheckResultsIn) (listOut[app.CheckResult], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.CheckResult]{}, err
	}
	if in.ConnectionID == "" {
		return listOut[app.CheckResult]{}, app.Invalid("connectionId", app.CodeRequired, nil, "connectionId is required")
	}
	l, err := s.app.ListCheckResults(ctx, app.CheckResultFilter{ConnectionID: in.ConnectionID, CheckID: in.CheckID, Status: in.Status, Page: pg})
	if err != nil {
		return listOut[app.CheckResult]{}, err
	}
	return listOut[app.CheckResult]{Data: l.Items, Meta: httpx.NewMeta(pg, l.Total)}, nil
}

type trainingStatusIn struct {
	pageIn
	PersonID string `json:"personId,omitempty" jsonschema:"only this person's assignments (usr_...)"`
	ModuleID string `json:"moduleId,omitempty" jsonschema:"only this module's assignments (a catalog slug such as security-awareness, or trm_...)"`
	Status   string `json:"status,omitempty" jsonschema:"assigned, overdue or completed"`
}

type trainingStatusOut struct {
	Modules []app.TrainingModuleStats `json:"modules"`
	Data    []app.TrainingAssignment  `json:"data"`
	Meta    httpx.Meta                `json:"meta"`
}

// toolListTrainingStatus reports completion rates (staff only) and the
// assignments the caller may see.
func (s *Server) toolListTrainingStatus(ctx context.Context, in trainingStatusIn) (trainingStatusOut, error) {
	pg, err := in.page()
	if err != nil {
		return trainingStatusOut{}, err
	}
	out := trainingStatusOut{Modules: []app.TrainingModuleStats{}}
	if p := app.PrincipalFrom(ctx); p != nil && !p.SeesOnlyAssigned() {
		if out.Modules, err = s.app.TrainingOverview(ctx); err != nil {
			return trainingStatusOut{}, err
		}
	}
	l, err := s.app.ListTrainingAssignments(ctx, app.TrainingAssignmentFilter{PersonID: in.PersonID, ModuleID: in.ModuleID, Status: in.Status, Page: pg})
	if err != nil {
		return trainingStatusOut{}, err
	}
	out.Data, out.Meta = l.Items, httpx.NewMeta(pg, l.Total)
	return out, nil
}

type listDevicesIn struct {
	pageIn
	PersonID  string `json:"personId,omitempty" jsonschema:"only the devices of this person (usr_...)"`
	Platform  string `json:"platform,omitempty" jsonschema:"macos, windows or linux"`
	Compliant *bool  `json:"compliant,omitempty" jsonschema:"true for compliant devices, false for the others"`
	Stale     *bool  `json:"stale,omitempty" jsonschema:"true for devices without a check-in for 7 days (or never)"`
}

func (s *Server) toolListDevices(ctx context.Context, in listDevicesIn) (listOut[app.Device], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.Device]{}, err
	}
	l, err := s.app.ListDevices(ctx, app.DeviceFilter{PersonID: in.PersonID, Platform: in.Platform, Compliant: in.Compliant, Stale: in.Stale, Page: pg})
	if err != nil {
		return listOut[app.Device]{}, err
	}
	return listOut[app.Device]{Data: l.Items, Meta: httpx.NewMeta(pg, l.Total)}, nil
}

type automationRunsIn struct {
	pageIn
	TaskID       string `json:"taskId" jsonschema:"the task (tsk_...)"`
	AutomationID string `json:"automationId,omitempty" jsonschema:"only this automation's runs (tau_...)"`
}

// toolListAutomationRuns lists a task's automation runs without their logs.
func (s *Server) toolListAutomationRuns(ctx context.Context, in automationRunsIn) (listOut[app.TaskAutomationRun], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.TaskAutomationRun]{}, err
	}
	if in.TaskID == "" {
		return listOut[app.TaskAutomationRun]{}, app.Invalid("taskId", app.CodeRequired, nil, "taskId is required")
	}
	l, err := s.app.ListAutomationRuns(ctx, app.AutomationRunFilter{TaskID: in.TaskID, AutomationID: in.AutomationID, Page: pg})
	if err != nil {
		return listOut[app.TaskAutomationRun]{}, err
	}
	return listOut[app.TaskAutomationRun]{Data: l.Items, Meta: httpx.NewMeta(pg, l.Total)}, nil
}

type browserRunsIn struct {
	TaskID string `json:"taskId" jsonschema:"the task's id (tsk_...)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many runs, 1 to 100 (default 20)"`
}

func (s *Server) toolListBrowserRuns(ctx context.Context, in browserRunsIn) (map[string]any, error) {
	if in.TaskID == "" {
		return nil, app.Invalid("taskId", app.CodeRequired, nil, "taskId is required")
	}
	if in.Limit <= 0 {
		in.Limit = 20
	}
	runs, err := s.app.ListTaskBrowserRuns(ctx, in.TaskID, in.Limit)
	if err != nil {
		return nil, err
	}
	return map[string]any{"data": runs}, nil
}

type vendorAssessmentsIn struct {
	pageIn
	VendorID string `json:"vendorId" jsonschema:"the vendor (vnd_...)"`
}

func (s *Server) toolListVendorAssessments(ctx context.Context, in vendorAssessmentsIn) (listOut[app.VendorAssessment], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.VendorAssessment]{}, err
	}
	if in.VendorID == "" {
		return listOut[app.VendorAssessment]{}, app.Invalid("vendorId", app.CodeRequired, nil, "vendorId is required")
	}
	as, err := s.app.ListVendorAssessments(ctx, in.VendorID)
	if err != nil {
		return listOut[app.VendorAssessment]{}, err
	}
	from := min(pg.Offset(), len(as))
	return listOut[app.VendorAssessment]{Data: as[from:min(from+pg.PerPage, len(as))], Meta: httpx.NewMeta(pg, len(as))}, nil
}

type taskCheckRunsIn struct {
	TaskID string `json:"taskId" jsonschema:"the task (tsk_...)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"runs to return, 1 to 100 (default 20)"`
}

type taskCheckRunsOut struct {
	TaskID string        `json:"taskId"`
	Runs   []app.TaskRun `json:"runs"`
}

func (s *Server) toolListTaskCheckRuns(ctx context.Context, in taskCheckRunsIn) (taskCheckRunsOut, error) {
	if in.TaskID == "" {
		return taskCheckRunsOut{}, app.Invalid("taskId", app.CodeRequired, nil, "taskId is required")
	}
	runs, err := s.app.ListTaskCheckRuns(ctx, in.TaskID, in.Limit)
	if err != nil {
		return taskCheckRunsOut{}, err
	}
	return taskCheckRunsOut{TaskID: in.TaskID, Runs: runs}, nil
}
