package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/automation"
	"github.com/compliance-appliance/compliance/integrations/custom"
	"github.com/getkin/kin-openapi/openapi3"
)

// sweepFixture is one resource kind the cross-organization sweep can point
// at. names lists every way an operation refers to the kind: the collection
// path segment before an {id} parameter ("vendors"), named path or query
// parameters ("vendorId") and body reference fields ("assigneeId").
//
// When a new resource kind lands, add ONE entry here. An operation whose
// path or query names an id parameter that no entry claims fails the sweep,
// so a new route is never skipped silently.
type sweepFixture struct {
	kind  string
	names []string
	// create makes one resource of the kind in org and returns its id; ref
	// returns the id of another kind's fixture in the same org (created
	// first). A nil create means the kind cannot be created yet: the sweep
	// then uses a syntactically valid id with prefix, which proves only
	// that an id unknown to the caller's organization is 404, not that a
	// real resource of another organization is hidden.
	create func(e *testEnv, org string, ref func(kind string) string) string
	prefix string
	// shared marks kinds every organization may read (built-in catalogs,
	// public portals): the 404 assertion does not apply to them.
	shared bool
	// catalog marks shared kinds whose value is the same in every
	// organization (a compiled-in provider, its check ids): B showing it
	// leaks nothing of A.
	catalog bool
}

var sweepFixtures = []sweepFixture{
	{kind: "person", names: []string{"people", "personId", "assigneeId", "ownerId", "newOwnerId", "userId", "actorId", "memberId", "Users"}, prefix: app.PrefixPerson,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return e.person(org, "sweep-"+strings.ToLower(org[len(org)-6:])+"@example.com", app.RoleEmployee)
		}},
	{kind: "device", names: []string{"devices", "deviceId"}, prefix: app.PrefixDevice,
		create: func(e *testEnv, org string, ref func(string) string) string {
			p, err := e.app.LinkDevice(e.ctx(org), ref("person"), app.DeviceLink{Name: "Sweep laptop", Hostname: "sweep-1", Platform: "linux"})
			if err != nil || len(p.Devices) == 0 {
				e.t.Fatalf("device fixture: %v", err)
			}
			return p.Devices[0].ID
		}},
	{kind: "enrolment_token", names: []string{"enrolment-tokens"}, prefix: app.PrefixEnrolmentToken,
		create: func(e *testEnv, org string, _ func(string) string) string {
			t, err := e.app.CreateEnrolmentToken(e.ctx(org), app.EnrolmentTokenCreate{Name: "Sweep enrolment"})
			if err != nil {
				e.t.Fatalf("enrolment token fixture: %v", err)
			}
			return t.ID
		}},
	{kind: "agent_file", names: []string{"filename"}, shared: true,
		create: func(*testEnv, string, func(string) string) string { return "compliance-sweep-agent" }},
	{kind: "vendor", names: []string{"vendors", "vendorId", "resourceId", "linkedVendorIds"}, prefix: app.PrefixVendor,
		create: func(e *testEnv, org string, ref func(string) string) string {
			v, err := e.app.CreateVendor(e.ctx(org), app.VendorInput{Name: app.Ptr("Sweep vendor"), AssigneeID: app.Some(ref("person"))})
			if err != nil {
				e.t.Fatalf("vendor fixture: %v", err)
			}
			return v.ID
		}},
	{kind: "api_key", names: []string{"api-keys", "apiKeyId", "keyId"}, prefix: app.PrefixAPIKey,
		create: func(e *testEnv, org string, _ func(string) string) string {
			k, err := e.app.CreateAPIKey(e.ctx(org), app.APIKeyCreate{Name: "sweep", Role: string(app.RoleAdmin)})
			if err != nil {
				e.t.Fatalf("api key fixture: %v", err)
			}
			return k.ID
		}},
	{kind: "control", names: []string{"controls", "controlId", "linkedControlIds", "controlIds"}, prefix: app.PrefixControl,
		create: func(e *testEnv, org string, _ func(string) string) string {
			now := e.app.Now()
			c := &app.Control{ID: app.NewID(app.PrefixControl), Name: "Sweep control", Status: app.ControlNotStarted, CreatedAt: now, UpdatedAt: now}
			if err := e.db.CreateControl(e.ctx(org), org, c); err != nil {
				e.t.Fatalf("control fixture: %v", err)
			}
			return c.ID
		}},
	// Custom frameworks belong to their organization; built-in ones are a
	// catalog every organization reads (TestSweepBuiltInFrameworksShared).
	{kind: "framework", names: []string{"frameworks", "frameworkId"}, prefix: app.PrefixFramework,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return sweepCreate(e, org, "/v1/frameworks", map[string]any{"name": "Sweep framework " + org[len(org)-6:]})
		}},
	{kind: "requirement", names: []string{"requirements", "requirementId"}, prefix: app.PrefixRequirement,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return sweepCreate(e, org, "/v1/frameworks/"+ref("framework")+"/requirements",
				map[string]any{"ref": "SW-1", "title": "Sweep requirement", "controlIds": []string{ref("control")}})
		}},
	{kind: "task_template", names: []string{"task-template", "taskTemplateId", "templateId"}, prefix: app.PrefixTaskTemplate,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return sweepCreate(e, org, "/v1/framework-editor/task-template", map[string]any{"name": "Sweep template", "frameworkId": ref("framework"), "requirementId": ref("requirement")})
		}},
	{kind: "task", names: []string{"tasks", "taskId"}, prefix: app.PrefixTask,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return sweepCreate(e, org, "/v1/tasks", map[string]any{"title": "Sweep task", "controlId": ref("control")})
		}},
	{kind: "evidence", names: []string{"evidence", "evidenceId", "linkedEvidenceIds"}, prefix: app.PrefixEvidence,
		create: func(e *testEnv, org string, ref func(string) string) string {
			rec := e.upload("/v1/controls/"+ref("control")+"/evidence", sweepKey(e, org), "sweep.txt", []byte("sweep evidence"), nil)
			return sweepID(e, rec, "evidence")
		}},
	{kind: "policy", names: []string{"policies", "policyId"}, prefix: app.PrefixPolicy,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return sweepCreate(e, org, "/v1/policies", map[string]any{"name": "Sweep policy", "content": "Sweep policy text."})
		}},
	{kind: "policy_version", names: []string{"versions", "versionId"}, prefix: app.PrefixPolicyVersion,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return sweepCreate(e, org, "/v1/policies/"+ref("policy")+"/publish", map[string]any{"changelog": "sweep"})
		}},
	{kind: "variable", names: []string{"variables", "variableId"}, prefix: app.PrefixVariable,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return sweepCreate(e, org, "/v1/variables", map[string]any{"name": "{{sweep_officer}}", "value": "Sweep"})
		}},
	// Context versions are numbered per organization (1, 2, ...): B has
	// its own version 1, so the sweep gives A one version more than B
	// (see TestCrossOrganizationSweep).
	{kind: "context_snapshot", names: []string{"snapshots"},
		create: func(e *testEnv, org string, _ func(string) string) string {
			rec := e.do("PATCH", "/v1/context", sweepKey(e, org), map[string]any{"description": "Sweep context " + org})
			wantStatus(e.t, rec, http.StatusOK)
			return fmt.Sprint(obj(e.t, rec)["version"])
		}},
	{kind: "risk", names: []string{"risks", "riskId", "entityId", "linkedRiskIds"}, prefix: app.PrefixRisk,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return sweepCreate(e, org, "/v1/risks", map[string]any{"title": "Sweep risk"})
		}},
	{kind: "finding", names: []string{"findings", "findingId", "linkedFindingIds"}, prefix: app.PrefixFinding,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return sweepCreate(e, org, "/v1/findings", map[string]any{"title": "Sweep finding"})
		}},
	{kind: "finding_template", names: []string{"finding-template", "findingTemplateId"}, prefix: app.PrefixFindingTpl,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return sweepCreate(e, org, "/v1/finding-template", map[string]any{"title": "Sweep template"})
		}},
	{kind: "corrective_action", names: []string{"corrective-actions", "actionId"}, prefix: app.PrefixCorrectiveAction,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return sweepCreate(e, org, "/v1/findings/"+ref("finding")+"/corrective-actions", map[string]any{"title": "Sweep action"})
		}},
	{kind: "comment", names: []string{"comments", "commentId"}, prefix: app.PrefixComment,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return sweepCreate(e, org, "/v1/comments", map[string]any{"entityType": "risk", "entityId": ref("risk"), "content": "Sweep comment"})
		}},
	{kind: "attachment", names: []string{"attachments", "attachmentId"}, prefix: app.PrefixAttachment,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return uploadFile(e.t, e, sweepKey(e, org), "risk", ref("risk"), "sweep.txt", "sweep attachment")
		}},
	{kind: "data_point", names: []string{"data-points", "dataPointId"}, prefix: app.PrefixESG,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return sweepCreate(e, org, "/v1/csrd/data-points", map[string]any{"esrsCode": "E1-1", "value": 1, "period": "2025"})
		}},
	{kind: "webhook", names: []string{"webhooks", "webhookId"}, prefix: app.PrefixWebhook,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return sweepCreate(e, org, "/v1/webhooks", map[string]any{"url": "https://hooks.example.com/sweep", "events": []string{"*"}})
		}},
	{kind: "delivery", names: []string{"deliveries", "deliveryId"}, prefix: app.PrefixDelivery,
		create: func(e *testEnv, org string, ref func(string) string) string {
			d, err := e.app.PingWebhook(e.ctx(org), ref("webhook"))
			if err != nil {
				e.t.Fatalf("delivery fixture: %v", err)
			}
			return d.ID
		}},
	{kind: "oauth_app", names: []string{"oauth-apps", "oauthAppId", "clientId"}, prefix: app.PrefixOAuthClient,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return sweepCreate(e, org, "/v1/integrations/oauth-apps", map[string]any{"name": "Sweep app", "redirectUris": []string{"https://app.example.com/cb"}})
		}},
	{kind: "oauth_grant", names: []string{"grants", "grantId"}, prefix: app.PrefixOAuthGrant,
		create: func(e *testEnv, org string, ref func(string) string) string {
			ref("person")
			g := &app.OAuthGrant{ID: app.NewID(app.PrefixOAuthGrant), OrganizationID: org, UserID: mustUserID(e.t, e, "sweep-"+strings.ToLower(org[len(org)-6:])+"@example.com"), ClientID: ref("oauth_app"),
				ClientName: "Sweep app", Scopes: []string{"read"}, CreatedAt: e.app.Now()}
			if err := e.db.CreateOAuthGrant(e.ctx(org), g); err != nil {
				e.t.Fatalf("grant fixture: %v", err)
			}
			return g.ID
		}},
	{kind: "kb_entry", names: []string{"entries", "entryId"}, prefix: app.PrefixKBEntry,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return sweepCreate(e, org, "/v1/knowledge-base/entries", map[string]any{"question": "Sweep question?", "answer": "Sweep answer."})
		}},
	{kind: "questionnaire", names: []string{"questionnaire", "questionnaireId"}, prefix: app.PrefixQuestionnaire,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return sweepCreate(e, org, "/v1/questionnaire", map[string]any{"name": "Sweep questionnaire", "vendorId": ref("vendor"),
				"questions": []map[string]any{{"question": "Do you encrypt data at rest?"}}})
		}},
	{kind: "trust_document", names: []string{"documents", "documentId"}, prefix: app.PrefixTrustDocument,
		create: func(e *testEnv, org string, _ func(string) string) string {
			rec := e.uploadField("/v1/trust-portal/documents", sweepKey(e, org), "file", "sweep.pdf", []byte("%PDF sweep"), "name", "Sweep report")
			return sweepID(e, rec, "trust document")
		}},
	// An incident with confirmed regimes, so it has reports (clocks).
	{kind: "incident", names: []string{"incidents", "incidentId"}, prefix: app.PrefixIncident,
		create: func(e *testEnv, org string, ref func(string) string) string {
			id := sweepCreate(e, org, "/v1/incidents", map[string]any{"title": "Sweep incident", "type": "personal_data_breach",
				"awareAt": "2026-01-15T08:00:00Z", "linkedRiskIds": []string{ref("risk")}})
			wantStatus(e.t, e.do("POST", "/v1/incidents/"+id+"/regimes", sweepKey(e, org), map[string]any{"regimes": []string{"nis2", "gdpr"}}), http.StatusOK)
			return id
		}},
	{kind: "incident_report", names: []string{"reports", "reportId"}, prefix: app.PrefixIncidentReport,
		create: func(e *testEnv, org string, ref func(string) string) string {
			reports := list(e.t, e.do("GET", "/v1/incidents/"+ref("incident")+"/reports", sweepKey(e, org), nil))
			if len(reports) == 0 {
				e.t.Fatal("incident report fixture: no reports")
			}
			return reports[0]["id"].(string)
		}},
	// Penetration tests: an allowlist entry, a completed run of the
	// loopback fixture site, and one of its issues.
	{kind: "pentest_target", names: []string{"pentest-targets"}, prefix: app.PrefixPentestTarget,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return sweepCreate(e, org, "/v1/pentest-targets", map[string]any{"value": "127.0.0.1"})
		}},
	{kind: "pentest", names: []string{"security-penetration-tests", "runId"}, prefix: app.PrefixPentestRun,
		create: func(e *testEnv, org string, ref func(string) string) string {
			ref("pentest_target")
			site := newPentestSite(e.t)
			e.enablePentests(app.PentestConfig{}, site)
			id := sweepCreate(e, org, "/v1/security-penetration-tests", map[string]any{"targetUrl": site.srv.URL, "scanDepth": "quick",
				"checks": []string{"exposed_files"}})
			e.waitPentest(org, id)
			return id
		}},
	{kind: "pentest_issue", names: []string{"issueId"}, prefix: app.PrefixPentestIssue,
		create: func(e *testEnv, org string, ref func(string) string) string {
			issues := list(e.t, e.do("GET", "/v1/security-penetration-tests/"+ref("pentest")+"/issues", sweepKey(e, org), nil))
			if len(issues) == 0 {
				e.t.Fatal("pentest issue fixture: no issues")
			}
			return issues[0]["id"].(string)
		}},
	{kind: "vendor_assessment", names: []string{"assessments", "assessmentId"}, prefix: app.PrefixVendorAssessment,
		create: func(e *testEnv, org string, ref func(string) string) string {
			if _, err := e.app.UpdateVendor(e.ctx(org), ref("vendor"), app.VendorInput{Website: app.Some("https://vendor.invalid")}); err != nil {
				e.t.Fatalf("vendor website: %v", err)
			}
			as, err := e.app.TriggerVendorAssessment(e.ctx(org), app.VendorAssessmentTrigger{VendorID: ref("vendor")})
			if err != nil {
				e.t.Fatalf("vendor assessment fixture: %v", err)
			}
			return as.ID
		}},
	// Integrations: the providers are a catalog every organization reads;
	// a custom (push) connection needs no outbound call.
	{kind: "integration_provider", names: []string{"providerSlug"}, shared: true, catalog: true,
		create: func(e *testEnv, _ string, _ func(string) string) string {
			e.app.RegisterIntegrationProviders(sweepPushProvider{})
			return sweepProviderSlug
		}},
	// A variable of the sweep's provider (the custom provider's
	// requirements), for the variable options route.
	{kind: "integration_variable", shared: true, catalog: true,
		create: func(_ *testEnv, _ string, _ func(string) string) string { return "requirements" }},
	{kind: "integration_check", names: []string{"checkId"}, shared: true, catalog: true,
		create: func(_ *testEnv, _ string, _ func(string) string) string { return "sweep-check-q7x" }},
	{kind: "connection", names: []string{"connections", "connectionId"}, prefix: app.PrefixConnection,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return sweepCreate(e, org, "/v1/integrations/connections", map[string]any{"providerSlug": ref("integration_provider")})
		}},
	{kind: "check_run", names: []string{"runs", "checkRunId"}, prefix: app.PrefixCheckRun,
		create: func(e *testEnv, org string, ref func(string) string) string {
			conn := ref("connection")
			rec := e.do("POST", "/v1/integrations/connections/"+conn+"/push-token", sweepKey(e, org), nil)
			wantStatus(e.t, rec, http.StatusOK)
			run, err := e.app.PushCheckResults(context.Background(), conn, obj(e.t, rec)["pushToken"].(string), app.PushResults{Checks: []app.PushCheck{
				{CheckID: ref("integration_check"), Resources: []app.PushResource{{ID: "sweep-1", Status: "pass"}}}}})
			if err != nil {
				e.t.Fatalf("check run fixture: %v", err)
			}
			return run.ID
		}},
	// A finished sync run of the organization's connection, written
	// directly: the sweep's provider is not a directory.
	{kind: "sync_run", names: []string{"syncRunId"}, prefix: app.PrefixSyncRun,
		create: func(e *testEnv, org string, ref func(string) string) string {
			id := app.NewID(app.PrefixSyncRun)
			if _, err := e.raw().Exec(`INSERT INTO sync_runs (id, organization_id, connection_id, provider_slug, sync_type, trigger,
				status, requested_by, started_at, finished_at) VALUES (?, ?, ?, 'ldap', 'employee', 'manual', 'succeeded', 'sweep',
				'2026-01-15T10:00:00Z', '2026-01-15T10:00:01Z')`, id, org, ref("connection")); err != nil {
				e.t.Fatalf("sync run fixture: %v", err)
			}
			return id
		}},
	{kind: "check_exception", names: []string{"exceptions", "exceptionId"}, prefix: app.PrefixCheckException,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return sweepCreate(e, org, "/v1/integrations/checks/connections/"+ref("connection")+"/exceptions", map[string]any{
				"checkId": ref("integration_check"), "resourceId": "sweep-1", "reason": "Accepted for the sweep: a test resource only.",
				"reviewerId": ref("person"), "expiresAt": "2026-06-01"})
		}},
	// Cloud security: a connection of a cloud-security provider, a
	// processed scan of it, one of its findings and an exception to it.
	{kind: "cloud_provider", shared: true, catalog: true,
		create: func(e *testEnv, _ string, _ func(string) string) string {
			e.app.RegisterIntegrationProviders(newFakeCloud(sweepCloudSlug))
			return sweepCloudSlug
		}},
	{kind: "cloud_connection", prefix: app.PrefixConnection,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return sweepCreate(e, org, "/v1/integrations/connections", map[string]any{"providerSlug": ref("cloud_provider")})
		}},
	{kind: "cloud_run", prefix: app.PrefixCheckRun,
		create: func(e *testEnv, org string, ref func(string) string) string {
			rec := e.do("POST", "/v1/cloud-security/trigger/"+ref("cloud_connection"), sweepKey(e, org), nil)
			wantStatus(e.t, rec, http.StatusCreated)
			if _, err := e.app.ProcessQueuedRuns(context.Background()); err != nil {
				e.t.Fatalf("cloud run fixture: %v", err)
			}
			return obj(e.t, rec)["runId"].(string)
		}},
	{kind: "cloud_finding", prefix: app.PrefixFinding,
		create: func(e *testEnv, org string, ref func(string) string) string {
			ref("cloud_run")
			fs := list(e.t, e.do("GET", "/v1/cloud-security/findings?connectionId="+ref("cloud_connection"), sweepKey(e, org), nil))
			if len(fs) == 0 {
				e.t.Fatal("cloud finding fixture: no findings")
			}
			return fs[0]["id"].(string)
		}},
	{kind: "cloud_exception", prefix: app.PrefixCheckException,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return sweepCreate(e, org, "/v1/cloud-security/findings/"+ref("cloud_finding")+"/exception", map[string]any{
				"reason": "Accepted for the sweep: a test resource only.", "reviewedBy": ref("person"), "expiresAt": "2026-06-01"})
		}},
	// The public portal and its links are addressed by slug and token, not
	// by the caller's organization: public operations are shared.
	// The Statement of Applicability is addressed by a built-in catalog
	// requirement (the same id in every organization, each with its own
	// entry): see sweepParamKinds.
	{kind: "catalog_requirement", shared: true,
		create: func(e *testEnv, org string, _ func(string) string) string {
			key := sweepKey(e, org)
			wantStatus(e.t, e.do("POST", "/v1/frameworks/iso27001-2022/enable", key, nil), http.StatusOK)
			entries := list(e.t, e.do("GET", "/v1/soa?frameworkId=iso27001-2022", key, nil))
			if len(entries) == 0 {
				e.t.Fatal("catalog requirement fixture: no SOA entries")
			}
			return entries[0]["requirementId"].(string)
		}},
	{kind: "trust_slug", names: []string{"slug"}, shared: true,
		create: func(e *testEnv, org string, _ func(string) string) string {
			slug := "sweep-" + strings.ToLower(org[len(org)-8:])
			wantStatus(e.t, e.do("PATCH", "/v1/trust-portal/settings", sweepKey(e, org), map[string]any{"enabled": true, "slug": slug}), http.StatusOK)
			return slug
		}},
	{kind: "access_request", names: []string{"requests", "requestId"}, prefix: app.PrefixTrustRequest,
		create: func(e *testEnv, org string, ref func(string) string) string {
			r, _, err := e.app.RequestTrustAccess(context.Background(), ref("trust_slug"),
				app.TrustAccessRequestInput{Name: "Sweep Buyer", Email: "buyer@example.com", Company: "Buyer Ltd"}, app.Visitor{IP: "192.0.2.1"})
			if err != nil {
				e.t.Fatalf("access request fixture: %v", err)
			}
			return r.ID
		}},
	// SCIM groups are the roles (the same in every organization); SCIM
	// operations take the SCIM token, so API keys get 401 there.
	{kind: "scim_group", names: []string{"Groups"}, shared: true, catalog: true,
		create: func(*testEnv, string, func(string) string) string { return string(app.RoleEmployee) }},
	{kind: "public_token", names: []string{"token"}, shared: true,
		create: func(e *testEnv, org string, ref func(string) string) string {
			_, tok, err := e.app.RequestTrustAccess(context.Background(), ref("trust_slug"),
				app.TrustAccessRequestInput{Name: "Sweep Visitor", Email: "visitor@example.com", Company: "Visitor Ltd"}, app.Visitor{IP: "192.0.2.2"})
			if err != nil {
				e.t.Fatalf("access token fixture: %v", err)
			}
			return tok
		}},
	// Assistant sessions belong to who started them; a key acting for
	// nobody shares them with the organization's keys of its role, so one
	// started by an owner key is A's owner key's own.
	{kind: "assistant_session", names: []string{"sessions", "sessionId"}, prefix: app.PrefixAssistantSession,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return sweepCreate(e, org, "/v1/assistant-chat/sessions", map[string]any{"title": "Sweep session"})
		}},
	// A write the assistant proposed in that session, stored as a model
	// answer would leave it (the sweep needs no model).
	{kind: "assistant_action", names: []string{"assistantActionId"}, prefix: app.PrefixAssistantAction,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return e.assistantActionFixture(org, ref("assistant_session"))
		}},
	// Browser automations: the run fixture is a stored run (no Chromium needed).
	{kind: "browser_automation", names: []string{"browserAutomationId"}, prefix: app.PrefixBrowserAutomation,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return e.browserAutomationFixture(org, ref("task"))
		}},
	{kind: "browser_run", names: []string{"browserRunId"}, prefix: app.PrefixBrowserRun,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return e.browserRunFixture(org, ref("browser_automation"), ref("task"))
		}},
	{kind: "browser_draft", names: []string{"browserDraftId"}, prefix: app.PrefixBrowserDraft,
		create: func(e *testEnv, org string, ref func(string) string) string {
			return sweepCreate(e, org, "/v1/browserbase/automation-drafts", map[string]any{"taskId": ref("task"), "steps": []any{}})
		}},
	{kind: "browser_profile", names: []string{"browserProfileId", "profileId"}, prefix: app.PrefixBrowserProfile,
		create: func(e *testEnv, org string, _ func(string) string) string { return e.browserProfileFixture(org) }},
	{kind: "training_module", names: []string{"videoId", "moduleId"}, prefix: app.PrefixTrainingModule,
		create: func(e *testEnv, org string, _ func(string) string) string {
			rec := e.uploadField("/v1/training/modules", sweepKey(e, org), "file", "sweep.pdf", []byte("%PDF sweep"), "title", "Sweep module")
			return sweepID(e, rec, "training module")
		}},
	{kind: "training_completion", names: []string{"completionId"}, prefix: app.PrefixTrainingCompletion,
		create: func(e *testEnv, org string, ref func(string) string) string {
			ctx := app.WithPrincipal(context.Background(), &app.Principal{OrgID: org, Role: app.RoleEmployee, AuthType: app.AuthSession, UserID: ref("person")})
			c, err := e.app.CompleteTrainingModule(ctx, ref("training_module"))
			if err != nil {
				e.t.Fatalf("training completion fixture: %v", err)
			}
			return c.ID
		}},
	{kind: "certificate_code", names: []string{"code"}, shared: true,
		create: func(e *testEnv, org string, ref func(string) string) string {
			c, err := e.app.GetTrainingCompletion(e.ctx(org), ref("training_completion"))
			if err != nil || c.VerificationCode == nil {
				e.t.Fatalf("certificate code fixture: %v", err)
			}
			return *c.VerificationCode
		}},
	{kind: "task_automation", names: []string{"automationId"}, prefix: app.PrefixTaskAutomation,
		create: func(e *testEnv, org string, ref func(string) string) string {
			e.app.SetScriptRunner(automation.New(nil), app.TaskAutomationOptions{})
			return sweepCreate(e, org, "/v1/tasks/"+ref("task")+"/automations", map[string]any{"name": "Sweep automation",
				"script": "result({\"ok\": True})\n"})
		}},
	{kind: "automation_run", names: []string{"automationRunId"}, prefix: app.PrefixAutomationRun,
		create: func(e *testEnv, org string, ref func(string) string) string {
			rec := e.do("POST", "/v1/tasks/"+ref("task")+"/automations/"+ref("task_automation")+"/run", sweepKey(e, org), nil)
			return sweepID(e, rec, "automation run")
		}},
}

// sweepPushProvider is the custom (push) provider under a slug no response
// carries by chance, so the leak check can look for it.
type sweepPushProvider struct{ custom.Provider }

const sweepProviderSlug = "sweep-push-q7x"

// sweepCloudSlug is the cloud-security provider of the sweep.
const sweepCloudSlug = "sweep-cloud-q7x"

func (sweepPushProvider) Definition() app.ProviderDefinition {
	d := custom.New().Definition()
	d.Slug, d.Name = sweepProviderSlug, "Sweep push"
	return d
}

// sweepKeys caches one owner key per organization for fixtures made
// through the API.
var sweepKeys sync.Map

func sweepKey(e *testEnv, org string) string {
	if k, ok := sweepKeys.Load(org); ok {
		return k.(string)
	}
	k := e.key(org, app.RoleOwner)
	sweepKeys.Store(org, k)
	return k
}

// sweepCreate posts body with an owner key of org and returns the id.
func sweepCreate(e *testEnv, org, path string, body any) string {
	e.t.Helper()
	return sweepID(e, e.do("POST", path, sweepKey(e, org), body), path)
}

func sweepID(e *testEnv, rec *httptest.ResponseRecorder, what string) string {
	e.t.Helper()
	if rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
		e.t.Fatalf("fixture %s: status %d: %s", what, rec.Code, rec.Body.String())
	}
	id, _ := obj(e.t, rec)["id"].(string)
	if id == "" {
		e.t.Fatalf("fixture %s: no id: %s", what, rec.Body.String())
	}
	return id
}

// sweepBodies overrides the generated request body of an operation
// ("METHOD /path") when the schema alone cannot produce one that passes
// validation.
var sweepBodies = map[string]any{
	// Free-text settings echo what was sent: a body without ids.
	"PUT /v1/organization/sso": map[string]any{"enabled": false, "displayName": "Sweep"},
	// Analysis opens Chromium, which the sweep runs without (503): a URL
	// the validator refuses keeps the sweep to roles (TestBrowserAnalyzeLogin
	// covers the rest).
	"POST /v1/browserbase/analyze-login": map[string]any{"url": "not a url"},
}

// sweepNotWrites lists non-GET operations that do not change data, with
// the reason; the auditor sweep skips them.
var sweepNotWrites = map[string]string{
	"POST /oauth/authorize":                                  "the consent form of a signed-in person; an API key is not a credential there",
	"POST /v1/auth/logout":                                   "ends the caller's own session; with a key there is none to end",
	"POST /v1/mcp":                                           "the MCP transport: each tool checks the role itself (an auditor's create_vendor is refused, see TestMCPWithAPIKey)",
	"POST /v1/training/generate-certificate":                 "renders a certificate PDF; it reads and changes nothing (auditors may download certificates)",
	"POST /v1/cloud-security/detect-services/{connectionId}": "asks the provider which services the credentials can read; it changes nothing (auditors may)",
	"POST /v1/integrations/sync/google-workspace/status":     "a status read the reference makes a POST; it changes nothing (auditors read it)",
}

// sweepParamKinds names the kind of a path parameter where the parameter
// name alone would pick the wrong one: path -> parameter -> kind.
var sweepParamKinds = map[string]map[string]string{
	"/v1/soa/{requirementId}":                                                    {"requirementId": "catalog_requirement"},
	"/v1/cloud-security/findings/{findingId}/exception":                          {"findingId": "cloud_finding"},
	"/v1/cloud-security/findings/{findingId}/check-definition":                   {"findingId": "cloud_finding"},
	"/v1/cloud-security/exceptions/{exceptionId}":                                {"exceptionId": "cloud_exception"},
	"/v1/cloud-security/scan/{connectionId}":                                     {"connectionId": "cloud_connection"},
	"/v1/cloud-security/trigger/{connectionId}":                                  {"connectionId": "cloud_connection"},
	"/v1/cloud-security/runs/{runId}":                                            {"runId": "cloud_run", "connectionId": "cloud_connection"},
	"/v1/cloud-security/detect-services/{connectionId}":                          {"connectionId": "cloud_connection"},
	"/v1/cloud-security/connections/{connectionId}/scan-mode":                    {"connectionId": "cloud_connection"},
	"/v1/cloud-security/history":                                                 {"connectionId": "cloud_connection"},
	"/v1/cloud-security/activity":                                                {"connectionId": "cloud_connection"},
	"/v1/cloud-security/findings":                                                {"connectionId": "cloud_connection"},
	"/v1/tasks/{taskId}/automations/{automationId}/runs/{runId}":                 {"runId": "automation_run"},
	"/v1/integrations/variables/connections/{connectionId}/options/{variableId}": {"variableId": "integration_variable"},
}

// sweepSessionOnly lists operations only a signed-in person may call,
// with the reason: an API key (of any organization) is 403 whatever the id
// names, which tells B nothing about A's resources.
var sweepSessionOnly = map[string]string{
	"DELETE /v1/oauth/grants/{id}":                             "grants belong to the person who gave them",
	"POST /v1/policies/{id}/acknowledge":                       "a person acknowledges a policy; a key acts for no person",
	"POST /v1/training/completions/{videoId}/answers":          "a person takes a quiz; a key acts for no person",
	"POST /v1/training/completions/{videoId}/complete":         "a person acknowledges a module; a key acts for no person",
	"GET /v1/me/work":                                          "the signed-in person's own work; a key acts for no person",
	"POST /v1/integrations/oauth/start":                        "a person starts an OAuth flow in the browser; the callback must come back in that session",
	"GET /v1/admin/integrations":                               "the appliance operator's, through a session; a key is an organization's credential",
	"GET /v1/admin/integrations/{providerSlug}":                "the appliance operator's, through a session",
	"PATCH /v1/admin/integrations/{providerSlug}":              "the appliance operator's, through a session",
	"POST /v1/admin/integrations/credentials":                  "the appliance operator's, through a session",
	"DELETE /v1/admin/integrations/credentials/{providerSlug}": "the appliance operator's, through a session",
	"GET /v1/admin/mail":                                       "the appliance operator's, through a session",
	"PUT /v1/admin/mail":                                       "the appliance operator's, through a session",
	"DELETE /v1/admin/mail":                                    "the appliance operator's, through a session",
	"POST /v1/admin/mail/test":                                 "the appliance operator's, through a session",
}

// sweepFixtureSet is the fixtures of one organization by kind.
type sweepFixtureSet struct {
	org string
	ids map[string]string
}

func (e *testEnv) sweepFixtures(org string) sweepFixtureSet {
	e.t.Helper()
	set := sweepFixtureSet{org: org, ids: map[string]string{}}
	byKind := map[string]sweepFixture{}
	for _, f := range sweepFixtures {
		byKind[f.kind] = f
	}
	var mk func(kind string) string
	mk = func(kind string) string {
		if id, ok := set.ids[kind]; ok {
			return id
		}
		f, ok := byKind[kind]
		if !ok {
			e.t.Fatalf("fixture %q refers to unknown kind", kind)
		}
		id := app.NewID(f.prefix)
		if f.create != nil {
			id = f.create(e, org, mk)
		}
		set.ids[kind] = id
		return id
	}
	for _, f := range sweepFixtures {
		mk(f.kind)
	}
	return set
}

// sweepKind returns the fixture an id name refers to.
func sweepKind(name string) (sweepFixture, bool) {
	for _, f := range sweepFixtures {
		for _, n := range f.names {
			if n == name {
				return f, true
			}
		}
	}
	return sweepFixture{}, false
}

// sweepKindByName returns the fixture of a kind.
func sweepKindByName(kind string) (sweepFixture, bool) {
	for _, f := range sweepFixtures {
		if f.kind == kind {
			return f, true
		}
	}
	return sweepFixture{}, false
}

// sweepOp is one documented operation.
type sweepOp struct {
	method, path string
	op           *openapi3.Operation
	item         *openapi3.PathItem
}

func (o sweepOp) name() string { return o.method + " " + o.path }

func (o sweepOp) public() bool { return o.op.Security != nil && len(*o.op.Security) == 0 }

func (o sweepOp) params() openapi3.Parameters {
	return append(append(openapi3.Parameters{}, o.item.Parameters...), o.op.Parameters...)
}

// loadSweepOps reads every operation of the served OpenAPI document.
func loadSweepOps(t *testing.T, e *testEnv) []sweepOp {
	t.Helper()
	rec := e.do("GET", "/v1/openapi.json", "", nil)
	wantStatus(t, rec, http.StatusOK)
	doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("load document: %v", err)
	}
	var ops []sweepOp
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops = append(ops, sweepOp{method: strings.ToUpper(method), path: path, op: op, item: item})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].name() < ops[j].name() })
	if len(ops) == 0 {
		t.Fatal("the document lists no operations")
	}
	return ops
}

// sweepRequest builds the path (ids filled from set) and body of op. It
// fails the test on an id parameter no fixture claims. shared reports that
// every id of the path is of a kind all organizations may read.
func sweepRequest(t *testing.T, o sweepOp, set sweepFixtureSet) (path, query string, body []byte, contentType string, hasPathIDs, shared bool) {
	t.Helper()
	segs := strings.Split(strings.TrimPrefix(o.path, "/"), "/")
	shared = true
	for i, s := range segs {
		if !strings.HasPrefix(s, "{") {
			continue
		}
		name := strings.Trim(s, "{}")
		key := name
		if name == "id" && i > 0 {
			key = segs[i-1]
		}
		f, ok := sweepKind(key)
		if k, over := sweepParamKinds[o.path][name]; over {
			f, ok = sweepKindByName(k)
		}
		if !ok {
			t.Fatalf("%s: path parameter {%s} (%s) matches no sweep fixture; add the resource kind to sweepFixtures", o.name(), name, key)
		}
		segs[i] = set.ids[f.kind]
		hasPathIDs = true
		shared = shared && f.shared
	}
	path = "/" + strings.Join(segs, "/")
	q := []string{}
	for _, p := range o.params() {
		if p.Value == nil || p.Value.In != "query" {
			continue
		}
		n := p.Value.Name
		if !strings.HasSuffix(n, "Id") && !strings.HasSuffix(n, "Ids") {
			continue
		}
		f, ok := sweepKind(n)
		if k, over := sweepParamKinds[o.path][n]; over {
			f, ok = sweepKindByName(k)
		}
		if !ok {
			t.Fatalf("%s: query parameter %s matches no sweep fixture; add it to sweepFixtures", o.name(), n)
		}
		q = append(q, n+"="+set.ids[f.kind])
	}
	query = strings.Join(q, "&")
	if b, ok := sweepBodies[o.name()]; ok {
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return path, query, raw, "application/json", hasPathIDs, shared
	}
	if o.op.RequestBody == nil || o.op.RequestBody.Value == nil {
		return path, query, nil, "", hasPathIDs, shared
	}
	content := o.op.RequestBody.Value.Content
	if mt := content.Get("application/json"); mt != nil {
		v := sweepValue(t, o, "", mt.Schema, set, 0)
		if v == nil {
			v = map[string]any{}
		}
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return path, query, raw, "application/json", hasPathIDs, shared
	}
	if mt := content.Get("multipart/form-data"); mt != nil {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		if mt.Schema != nil && mt.Schema.Value != nil {
			for name, ps := range mt.Schema.Value.Properties {
				if ps.Value != nil && ps.Value.Format == "binary" {
					fw, _ := mw.CreateFormFile(name, "sweep.txt")
					_, _ = fw.Write([]byte("sweep evidence\n"))
					continue
				}
				if v := sweepValue(t, o, name, ps, set, 1); v != nil {
					_ = mw.WriteField(name, fmt.Sprint(v))
				}
			}
		}
		_ = mw.Close()
		return path, query, buf.Bytes(), mw.FormDataContentType(), hasPathIDs, shared
	}
	return path, query, []byte("{}"), "application/json", hasPathIDs, shared
}

// sweepValue generates a value for a schema: required properties and every
// id reference (filled with the fixture set's ids), enums take their first
// value, formats a valid example.
func sweepValue(t *testing.T, o sweepOp, name string, ref *openapi3.SchemaRef, set sweepFixtureSet, depth int) any {
	if ref == nil || ref.Value == nil || depth > 6 {
		return nil
	}
	s := ref.Value
	if name != "" && (strings.HasSuffix(name, "Id") || strings.HasSuffix(name, "Ids")) {
		if f, ok := sweepKind(name); ok {
			if s.Type.Is("array") {
				return []string{set.ids[f.kind]}
			}
			return set.ids[f.kind]
		}
	}
	if s.Example != nil {
		return s.Example
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if len(s.AllOf) > 0 {
		merged := &openapi3.Schema{Type: &openapi3.Types{"object"}, Properties: openapi3.Schemas{}}
		for _, part := range s.AllOf {
			if part.Value == nil {
				continue
			}
			for k, v := range part.Value.Properties {
				merged.Properties[k] = v
			}
			merged.Required = append(merged.Required, part.Value.Required...)
		}
		return sweepValue(t, o, name, openapi3.NewSchemaRef("", merged), set, depth+1)
	}
	if len(s.OneOf) > 0 {
		return sweepValue(t, o, name, s.OneOf[0], set, depth+1)
	}
	switch {
	case s.Type.Is("object") || len(s.Properties) > 0:
		m := map[string]any{}
		required := map[string]bool{}
		for _, r := range s.Required {
			required[r] = true
		}
		for pn, ps := range s.Properties {
			isRef := strings.HasSuffix(pn, "Id") || strings.HasSuffix(pn, "Ids")
			if _, known := sweepKind(pn); isRef && !known {
				isRef = false
			}
			if !required[pn] && !isRef {
				continue
			}
			if ps.Value != nil && ps.Value.ReadOnly {
				continue
			}
			if v := sweepValue(t, o, pn, ps, set, depth+1); v != nil {
				m[pn] = v
			}
		}
		return m
	case s.Type.Is("array"):
		item := sweepValue(t, o, "", s.Items, set, depth+1)
		if item == nil {
			return []any{}
		}
		return []any{item}
	case s.Type.Is("integer"), s.Type.Is("number"):
		if s.Min != nil {
			return *s.Min
		}
		return 1
	case s.Type.Is("boolean"):
		return true
	case s.Type.Is("string"):
		switch s.Format {
		case "email":
			return "sweep@example.com"
		case "uri", "url":
			return "https://example.com/sweep"
		case "date":
			return "2026-06-30"
		case "date-time":
			return "2026-06-30T12:00:00Z"
		}
		return "Sweep"
	}
	return nil
}

// sweepDo sends a request with a content type of its own.
func (e *testEnv) sweepDo(method, path, query, key string, body []byte, contentType string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	if query != "" {
		path += "?" + query
	}
	var r *http.Request
	if body != nil {
		r = httptest.NewRequest(method, path, bytes.NewReader(body))
		r.Header.Set("Content-Type", contentType)
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	r.Header.Set("X-API-Key", key)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, r)
	return rec
}

// TestCrossOrganizationSweep walks every operation of the OpenAPI document:
//   - with organization A's own key, every GET that names A's resources
//     answers 2xx (the fixtures are real, so the 404s below mean something);
//   - with organization B's owner key, every operation that names one of A's
//     resources in its path is 404 not_found, and every other operation
//     answers without a single id of A (a write whose body references A's
//     resources must refuse or drop them; an error may echo the input);
//   - with B's key and X-Organization-Id of A, every authenticated
//     operation is 404;
//   - with A's auditor key, every write is 403 forbidden.
func TestCrossOrganizationSweep(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	orgA := e.org("Sweep A", app.PlanEnterprise)
	orgB := e.org("Sweep B", app.PlanEnterprise)
	a := e.sweepFixtures(orgA)
	e.sweepFixtures(orgB) // B has resources of its own, so a leak is not hidden by an empty register
	// Context versions are numbered per organization: A gets one B lacks.
	rec := e.do("PATCH", "/v1/context", sweepKey(e, orgA), map[string]any{"description": "A's second context"})
	wantStatus(t, rec, http.StatusOK)
	a.ids["context_snapshot"] = fmt.Sprint(obj(t, rec)["version"])
	ownerA, auditorA := e.key(orgA, app.RoleOwner), e.key(orgA, app.RoleAuditor)
	ownerB := e.key(orgB, app.RoleOwner)
	secretsA := []string{orgA}
	for kind, id := range a.ids {
		if f, ok := sweepKindByName(kind); ok && f.catalog {
			continue
		}
		if strings.Trim(id, "0123456789") == "" {
			continue // a per-organization number (context versions): B has its own
		}
		secretsA = append(secretsA, id)
	}

	ops := loadSweepOps(t, e)
	var swept, notFound, forbidden, leakChecked, crossHeader int
	for _, o := range ops {
		path, query, body, ct, hasIDs, shared := sweepRequest(t, o, a)
		// A public operation has no caller organization: it is addressed by
		// slug or token, and what it shows is public or gated by the token.
		shared = shared || o.public()
		write := o.method != http.MethodGet && o.method != http.MethodHead
		t.Run(o.name(), func(t *testing.T) {
			swept++
			// Positive control: A reads its own resources.
			if !write && hasIDs && !o.public() && sweepSessionOnly[o.name()] == "" {
				rec := e.sweepDo(o.method, path, query, ownerA, nil, "")
				if rec.Code < 200 || rec.Code > 299 {
					t.Errorf("A's own key: status %d, want 2xx (fixture not real?): %s", rec.Code, rec.Body.String())
				}
			}
			// B names A's organization explicitly.
			if !o.public() {
				rec := e.sweepDo(o.method, path, query, ownerB, body, ct, "X-Organization-Id", orgA)
				if rec.Code != http.StatusNotFound {
					t.Errorf("B's key with X-Organization-Id of A: status %d, want 404: %s", rec.Code, rec.Body.String())
				}
				crossHeader++
			}
			// B uses A's ids.
			rec := e.sweepDo(o.method, path, query, ownerB, body, ct)
			switch {
			case rec.Code >= 500:
				t.Errorf("B's key: status %d: %s", rec.Code, rec.Body.String())
			case sweepSessionOnly[o.name()] != "":
				wantError(t, rec, http.StatusForbidden, "forbidden")
			case hasIDs && !shared:
				if rec.Code != http.StatusNotFound {
					t.Errorf("B's key on A's resource: status %d, want 404: %s", rec.Code, rec.Body.String())
				} else {
					wantError(t, rec, http.StatusNotFound, "not_found")
					notFound++
				}
			case hasIDs && shared:
				// Every organization may read it (a catalog, a public portal).
			default:
				// A 2xx may carry no id of A at all (a write that names A's
				// resources in its body must refuse them or drop them, never
				// link to them); an error may echo what the client sent.
				for _, id := range secretsA {
					if !strings.Contains(rec.Body.String(), id) || strings.Contains(query, id) {
						continue
					}
					if rec.Code < 400 {
						t.Errorf("B's key: %d response carries A's id %s: %s", rec.Code, id, rec.Body.String())
					} else if !bytes.Contains(body, []byte(id)) {
						t.Errorf("B's key: error leaks A's id %s: %s", id, rec.Body.String())
					}
				}
				leakChecked++
			}
			// A's auditor key may not write.
			if write && !o.public() {
				if _, ok := sweepNotWrites[o.name()]; !ok {
					rec := e.sweepDo(o.method, path, query, auditorA, body, ct)
					wantError(t, rec, http.StatusForbidden, "forbidden")
					forbidden++
				}
			}
		})
	}
	// The fixtures of A survive the sweep: nothing B or the auditor did
	// touched them.
	if _, err := e.app.GetVendor(e.ctx(orgA), a.ids["vendor"]); err != nil {
		t.Errorf("A's vendor after the sweep: %v", err)
	}
	keys, err := e.app.ListAPIKeys(e.ctx(orgA))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.RevokedAt != nil {
			t.Errorf("A's key %s was revoked during the sweep", k.ID)
		}
	}
	t.Logf("routes swept: %d operations; 404 on A's resources: %d; 404 with X-Organization-Id of A: %d; leak-checked: %d; auditor 403: %d",
		swept, notFound, crossHeader, leakChecked, forbidden)
}

// TestSweepBuiltInFrameworksShared documents the one kind the sweep treats
// as global: the built-in framework catalog reads the same for every
// organization, while a custom framework stays its organization's own.
func TestSweepBuiltInFrameworksShared(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	orgA, orgB := e.org("Shared A", app.PlanEnterprise), e.org("Shared B", app.PlanEnterprise)
	ka, kb := e.key(orgA, app.RoleOwner), e.key(orgB, app.RoleOwner)
	wantStatus(t, e.do("POST", "/v1/frameworks/iso27001-2022/enable", ka, nil), http.StatusOK)
	for _, path := range []string{"/v1/frameworks/iso27001-2022", "/v1/frameworks/iso27001-2022/requirements"} {
		wantStatus(t, e.do("GET", path, ka, nil), http.StatusOK)
		wantStatus(t, e.do("GET", path, kb, nil), http.StatusOK)
	}
	custom := sweepCreate(e, orgA, "/v1/frameworks", map[string]any{"name": "A's own framework"})
	wantStatus(t, e.do("GET", "/v1/frameworks/"+custom, ka, nil), http.StatusOK)
	wantError(t, e.do("GET", "/v1/frameworks/"+custom, kb, nil), http.StatusNotFound, "not_found")
}
