package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/aws"
)

// fakeCloud is a cloud-security provider without a network: a public
// bucket and the root user fail until fixed, one bucket passes.
type fakeCloud struct {
	slug     string
	mu       sync.Mutex
	verdicts map[string]string
}

func newFakeCloud(slug string) *fakeCloud {
	return &fakeCloud{slug: slug, verdicts: map[string]string{"bucket-a": app.CheckFail, "bucket-b": app.CheckPass, "root": app.CheckFail}}
}

func (f *fakeCloud) set(res, status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verdicts[res] = status
}

func (f *fakeCloud) Definition() app.ProviderDefinition {
	return app.ProviderDefinition{
		Slug: f.slug, Name: "Fake cloud", Category: "cloud", Description: "A test cloud provider.", AuthStrategy: app.ProviderAuthAWSKeys,
		Credentials: []app.CredentialField{{Key: "accessKeyId", Label: "Key", Type: "text"}},
		Variables: []app.ProviderVariable{{Key: "regions", Label: "Regions", Type: "text"},
			{Key: "scanMode", Label: "Scan mode", Type: "select", Options: aws.ScanModes}},
		Services:     []app.ProviderService{{ID: "iam", Name: "IAM", EnabledDefault: true}, {ID: "s3", Name: "S3", EnabledDefault: true}},
		Capabilities: []string{app.CapabilityChecks, app.CapabilityCloudSecurity},
		Checks: []app.CheckDefinition{
			{ID: f.slug + ".bucket_public", Title: "Buckets block public access", Severity: "high", Service: "s3", CloudSecurity: true,
				Remediation: "Turn on Block Public Access.", Evidences: []app.RequirementRef{{Framework: "iso27001-2022", Ref: "A.8.3"}}},
			{ID: f.slug + ".root_mfa", Title: "Root user has MFA", Severity: "critical", Service: "iam", CloudSecurity: true,
				Remediation: "Assign an MFA device to the root user.", Evidences: []app.RequirementRef{{Framework: "iso27001-2022", Ref: "A.8.5"}}},
		},
	}
}

func (f *fakeCloud) Test(context.Context, app.ConnectionTarget) app.TestResult {
	return app.TestResult{Success: true, Message: "ok"}
}

func (f *fakeCloud) Run(_ context.Context, _ app.ConnectionTarget, _ []string, out app.CheckSink) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range []string{"bucket-a", "bucket-b"} {
		out.Outcome(app.CheckOutcome{CheckID: f.slug + ".bucket_public", ResourceType: "bucket", ResourceID: "arn:aws:s3:::" + b, ResourceName: b,
			Status: f.verdicts[b], Message: b + " " + f.verdicts[b]})
	}
	out.Outcome(app.CheckOutcome{CheckID: f.slug + ".root_mfa", ResourceType: "root_user", ResourceID: "root", ResourceName: "root user",
		Status: f.verdicts["root"], Message: "root " + f.verdicts["root"]})
	return nil
}

func (f *fakeCloud) DetectServices(context.Context, app.ConnectionTarget) ([]app.CloudServiceAccess, error) {
	return []app.CloudServiceAccess{{ID: "iam", Name: "IAM", Accessible: true, Regions: []string{"eu-west-1"}, Message: "readable"}}, nil
}

type cloudEnv struct {
	*integEnv
	cloud *fakeCloud
	conn  string
}

func newCloudEnv(t *testing.T) *cloudEnv {
	e := newIntegEnv(t)
	fc := newFakeCloud("fakecloud")
	e.app.RegisterIntegrationProviders(fc)
	conn := e.connect(map[string]any{"providerSlug": "fakecloud", "name": "Production account"})
	return &cloudEnv{integEnv: e, cloud: fc, conn: conn}
}

// scan triggers a run through the cloud routes and processes it.
func (e *cloudEnv) scan() string {
	e.t.Helper()
	rec := e.do("POST", "/v1/cloud-security/trigger/"+e.conn, e.owner, nil)
	wantStatus(e.t, rec, http.StatusCreated)
	id := obj(e.t, rec)["runId"].(string)
	if n, err := e.app.ProcessQueuedRuns(context.Background()); err != nil || n != 1 {
		e.t.Fatalf("processed %d runs: %v", n, err)
	}
	return id
}

func (e *cloudEnv) findings(query string) []map[string]any {
	e.t.Helper()
	rec := e.do("GET", "/v1/cloud-security/findings"+query, e.owner, nil)
	wantStatus(e.t, rec, http.StatusOK)
	return list(e.t, rec)
}

// TestCloudSecurityFindingsAndExceptions: a scan's failures are cloud
// findings filtered by severity, service and status; an exception hides
// one until it expires, when a failing resource opens a finding again.
func TestCloudSecurityFindingsAndExceptions(t *testing.T) {
	t.Parallel()
	e := newCloudEnv(t)
	providers := list(t, e.do("GET", "/v1/cloud-security/providers", e.owner, nil))
	var fake map[string]any
	for _, p := range providers {
		if p["slug"] == "fakecloud" {
			fake = p
		}
		if p["slug"] == "fake" {
			t.Error("a provider without cloud security is listed")
		}
	}
	if fake == nil || fake["checks"].(float64) != 2 || len(fake["connections"].([]any)) != 1 {
		t.Fatalf("providers %v", providers)
	}
	runID := e.scan()
	rec := e.do("GET", "/v1/cloud-security/runs/"+runID+"?connectionId="+e.conn, e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if st := obj(t, rec); st["completed"] != true || st["success"] != true {
		t.Fatalf("run status %v", st)
	}
	fs := e.findings("")
	if len(fs) != 2 {
		t.Fatalf("findings %v", fs)
	}
	if got := e.findings("?severity=critical"); len(got) != 1 || got[0]["checkId"] != "fakecloud.root_mfa" || got[0]["service"] != "iam" {
		t.Fatalf("critical %v", got)
	}
	bucket := e.findings("?service=s3&status=open&connectionId=" + e.conn)
	if len(bucket) != 1 || bucket[0]["resourceName"] != "bucket-a" || bucket[0]["remediation"] != "Turn on Block Public Access." ||
		bucket[0]["lastResult"] != "fail" || bucket[0]["connectionName"] != "Production account" {
		t.Fatalf("s3 findings %v", bucket)
	}
	wantField(t, e.do("GET", "/v1/cloud-security/findings?status=bogus", e.owner, nil), "status")
	wantField(t, e.do("GET", "/v1/cloud-security/findings?severity=severe", e.owner, nil), "severity")
	fid := bucket[0]["id"].(string)
	rec = e.do("GET", "/v1/cloud-security/findings/"+fid+"/check-definition", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if d := obj(t, rec); d["id"] != "fakecloud.bucket_public" || len(d["requirements"].([]any)) == 0 {
		t.Fatalf("definition %v", d)
	}
	// A finding no cloud check opened is not a cloud finding.
	plain := sweepCreate(e.testEnv, e.org, "/v1/findings", map[string]any{"title": "Manual finding"})
	wantStatus(t, e.do("GET", "/v1/cloud-security/findings/"+plain+"/check-definition", e.owner, nil), http.StatusNotFound)

	reviewer := e.person(e.org, "reviewer@example.com", app.RoleAdmin)
	path := "/v1/cloud-security/findings/" + fid + "/exception"
	wantField(t, e.do("POST", path, e.owner, map[string]any{"reason": "too short", "reviewedBy": reviewer}), "reason")
	wantField(t, e.do("POST", path, e.owner, map[string]any{"reason": "Public website assets, reviewed quarterly."}), "reviewedBy")
	wantField(t, e.do("POST", path, e.owner, map[string]any{"reason": "Public website assets, reviewed quarterly.", "reviewedBy": reviewer,
		"expiresAt": "2020-01-01"}), "expiresAt")
	body := map[string]any{"reason": "Public website assets, reviewed quarterly.", "reviewedBy": reviewer, "expiresAt": "2026-02-15"}
	rec = e.do("POST", path, e.owner, body, "Idempotency-Key", "exc-1")
	wantStatus(t, rec, http.StatusCreated)
	ex := obj(t, rec)
	again := e.do("POST", path, e.owner, body, "Idempotency-Key", "exc-1")
	if again.Code != http.StatusCreated || obj(t, again)["id"] != ex["id"] {
		t.Fatalf("idempotent replay %d %s", again.Code, again.Body.String())
	}
	if got := e.findings("?status=excepted"); len(got) != 1 || got[0]["exceptionId"] != ex["id"] {
		t.Fatalf("excepted %v", got)
	}
	// The next scan records the resource as excepted and resolves the finding.
	e.scan()
	if got := e.findings("?status=excepted"); len(got) != 1 || got[0]["findingStatus"] != "resolved" || got[0]["lastResult"] != "excepted" {
		t.Fatalf("excepted after scan %v", got)
	}
	// Expired: the failure opens a finding again.
	e.clock.Advance(40 * 24 * time.Hour)
	e.scan()
	open := e.findings("?service=s3&status=open")
	if len(open) != 1 || open[0]["id"] == fid {
		t.Fatalf("reopened %v", open)
	}
	// Fixed: resolved.
	e.cloud.set("bucket-a", app.CheckPass)
	e.scan()
	if got := e.findings("?service=s3&status=open"); len(got) != 0 {
		t.Fatalf("fixed bucket still open %v", got)
	}
	wantStatus(t, e.do("DELETE", "/v1/cloud-security/exceptions/"+ex["id"].(string), e.owner, nil), http.StatusOK)
	wantStatus(t, e.do("DELETE", "/v1/cloud-security/exceptions/"+ex["id"].(string), e.owner, nil), http.StatusNotFound)

	rec = e.do("GET", "/v1/cloud-security/history?connectionId="+e.conn, e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	h := obj(t, rec)
	points := h["data"].([]any)
	if h["count"].(float64) != 4 || points[0].(map[string]any)["failed"].(float64) != 2 || points[3].(map[string]any)["failed"].(float64) != 1 {
		t.Fatalf("history %v", h)
	}
	rec = e.do("GET", "/v1/cloud-security/activity?connectionId="+e.conn+"&take=3", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if a := obj(t, rec); a["count"].(float64) != 3 {
		t.Fatalf("activity %v", a)
	}
	wantField(t, e.do("GET", "/v1/cloud-security/activity?connectionId="+e.conn+"&take=abc", e.owner, nil), "take")
	wantField(t, e.do("GET", "/v1/cloud-security/activity?connectionId="+e.conn+"&take=501", e.owner, nil), "take")
	wantField(t, e.do("GET", "/v1/cloud-security/history", e.owner, nil), "connectionId")
}

// TestCloudSecurityScanModeAndDetect: the scan mode is one of the
// provider's modes; detect-services answers the provider's view.
func TestCloudSecurityScanModeAndDetect(t *testing.T) {
	t.Parallel()
	e := newCloudEnv(t)
	path := "/v1/cloud-security/connections/" + e.conn + "/scan-mode"
	wantField(t, e.do("PATCH", path, e.owner, map[string]any{"mode": "everywhere"}), "mode")
	wantField(t, e.do("PATCH", path, e.owner, map[string]any{}), "mode")
	rec := e.do("PATCH", path, e.owner, map[string]any{"mode": "all_regions"})
	wantStatus(t, rec, http.StatusOK)
	if v := obj(t, rec)["variables"].(map[string]any); v["scanMode"] != "all_regions" {
		t.Fatalf("variables %v", v)
	}
	rec = e.do("POST", "/v1/cloud-security/detect-services/"+e.conn, e.owner, nil)
	wantStatus(t, rec, http.StatusCreated)
	if s := obj(t, rec)["services"].([]any); len(s) != 1 {
		t.Fatalf("services %v", s)
	}
	// A connection of a provider without cloud security is not found here.
	other := e.connect(map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": fakeToken}})
	wantStatus(t, e.do("POST", "/v1/cloud-security/trigger/"+other, e.owner, nil), http.StatusNotFound)
	wantStatus(t, e.do("PATCH", "/v1/cloud-security/connections/"+other+"/scan-mode", e.owner, map[string]any{"mode": "all_regions"}), http.StatusNotFound)
}

// TestCloudSecurityScanWaits: scan answers the finished run's counts.
func TestCloudSecurityScanWaits(t *testing.T) {
	t.Parallel()
	e := newCloudEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	wg := e.app.StartIntegrationWorker(ctx)
	defer func() { cancel(); wg.Wait() }()
	rec := e.do("POST", "/v1/cloud-security/scan/"+e.conn, e.owner, nil)
	wantStatus(t, rec, http.StatusCreated)
	if r := obj(t, rec); r["completed"] != true || r["findingsCount"].(float64) != 2 || r["provider"] != "fakecloud" || r["scannedAt"] == nil {
		t.Fatalf("scan %v", r)
	}
}

// TestCloudSecurityIsolation: another organization's cloud resources are
// 404; auditors read and may not act.
func TestCloudSecurityIsolation(t *testing.T) {
	t.Parallel()
	e := newCloudEnv(t)
	runID := e.scan()
	fid := e.findings("?service=s3")[0]["id"].(string)
	reviewer := e.person(e.org, "reviewer@example.com", app.RoleAdmin)
	rec := e.do("POST", "/v1/cloud-security/findings/"+fid+"/exception", e.owner, map[string]any{"reason": "Public website assets, reviewed quarterly.", "reviewedBy": reviewer})
	wantStatus(t, rec, http.StatusCreated)
	exID := obj(t, rec)["id"].(string)

	other := e.testEnv.org("Other", "professional")
	ob := e.key(other, app.RoleOwner)
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/cloud-security/findings?connectionId=" + e.conn},
		{"GET", "/v1/cloud-security/findings/" + fid + "/check-definition"},
		{"POST", "/v1/cloud-security/findings/" + fid + "/exception"},
		{"DELETE", "/v1/cloud-security/exceptions/" + exID},
		{"GET", "/v1/cloud-security/history?connectionId=" + e.conn},
		{"GET", "/v1/cloud-security/activity?connectionId=" + e.conn},
		{"POST", "/v1/cloud-security/scan/" + e.conn},
		{"POST", "/v1/cloud-security/trigger/" + e.conn},
		{"GET", "/v1/cloud-security/runs/" + runID},
		{"POST", "/v1/cloud-security/detect-services/" + e.conn},
		{"PATCH", "/v1/cloud-security/connections/" + e.conn + "/scan-mode"},
	} {
		if rec := e.do(c.method, c.path, ob, map[string]any{"mode": "all_regions", "reason": "Public website assets, reviewed quarterly.", "reviewedBy": reviewer}); rec.Code != http.StatusNotFound {
			t.Errorf("other org %s %s: %d %s", c.method, c.path, rec.Code, rec.Body.String())
		}
	}
	if got := list(t, e.do("GET", "/v1/cloud-security/findings", ob, nil)); len(got) != 0 {
		t.Fatalf("other org sees findings %v", got)
	}
	aud := e.key(e.org, app.RoleAuditor)
	wantStatus(t, e.do("GET", "/v1/cloud-security/findings", aud, nil), http.StatusOK)
	wantStatus(t, e.do("GET", "/v1/cloud-security/history?connectionId="+e.conn, aud, nil), http.StatusOK)
	wantStatus(t, e.do("POST", "/v1/cloud-security/detect-services/"+e.conn, aud, nil), http.StatusCreated)
	for _, c := range []struct{ method, path string }{
		{"POST", "/v1/cloud-security/trigger/" + e.conn},
		{"POST", "/v1/cloud-security/scan/" + e.conn},
		{"POST", "/v1/cloud-security/findings/" + fid + "/exception"},
		{"DELETE", "/v1/cloud-security/exceptions/" + exID},
		{"PATCH", "/v1/cloud-security/connections/" + e.conn + "/scan-mode"},
	} {
		if rec := e.do(c.method, c.path, aud, map[string]any{"mode": "all_regions"}); rec.Code != http.StatusForbidden {
			t.Errorf("auditor %s %s: %d", c.method, c.path, rec.Code)
		}
	}
	emp := e.key(e.org, app.RoleEmployee)
	if rec := e.do("GET", "/v1/cloud-security/findings", emp, nil); rec.Code != http.StatusForbidden {
		t.Errorf("employee reads cloud findings: %d", rec.Code)
	}
}

// TestAWSConnectionValidation: a region or role ARN of the wrong shape is
// a 400 naming the field when connecting; nothing is sent to AWS.
func TestAWSConnectionValidation(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	e.app.RegisterIntegrationProviders(aws.New(http.DefaultClient))
	creds := map[string]any{"accessKeyId": "AKIAEXAMPLE0000001", "secretAccessKey": "secret-value"}
	wantField(t, e.do("POST", "/v1/integrations/connections", e.owner, map[string]any{"providerSlug": "aws", "credentials": creds,
		"variables": map[string]any{"regions": "eu-west-1, Frankfurt"}}), "variables.regions")
	bad := map[string]any{"accessKeyId": "AKIAEXAMPLE0000001", "secretAccessKey": "secret-value", "roleArn": "arn:aws:iam::1:user/x"}
	wantField(t, e.do("POST", "/v1/integrations/connections", e.owner, map[string]any{"providerSlug": "aws", "credentials": bad}), "credentials.roleArn")
	rec := e.do("POST", "/v1/integrations/connections", e.owner, map[string]any{"providerSlug": "aws", "credentials": creds,
		"variables": map[string]any{"regions": "eu-west-1, eu-central-1"}})
	wantStatus(t, rec, http.StatusCreated)
	if strings.Contains(rec.Body.String(), "secret-value") {
		t.Fatal("secret in the answer")
	}
}

// TestCloudSecurityMCPTool: list_cloud_findings reads with an auditor's
// key and filters; another organization's connection is not found.
func TestCloudSecurityMCPTool(t *testing.T) {
	t.Parallel()
	e := newCloudEnv(t)
	e.scan()
	cs := mcpSession(t, e.testEnv, http.Header{"X-Api-Key": {e.key(e.org, app.RoleAuditor)}})
	out, isErr := callTool(t, cs, "list_cloud_findings", map[string]any{"severity": "critical"})
	if isErr || len(out["data"].([]any)) != 1 {
		t.Fatalf("list_cloud_findings: %v", out)
	}
	out, isErr = callTool(t, cs, "list_cloud_findings", map[string]any{"service": "s3", "status": "open"})
	if isErr || len(out["data"].([]any)) != 1 || !strings.Contains(fmt.Sprint(out), "Turn on Block Public Access.") {
		t.Fatalf("list_cloud_findings s3: %v", out)
	}
	other := mcpSession(t, e.testEnv, http.Header{"X-Api-Key": {e.key(e.testEnv.org("Globex", app.PlanProfessional), app.RoleOwner)}})
	out, _ = callTool(t, other, "list_cloud_findings", map[string]any{"connectionId": e.conn})
	if !strings.Contains(fmt.Sprint(out["error"]), "not_found") {
		t.Fatalf("another organization: %v", out)
	}
}

// TestCloudSecurityPage: the overview shows open findings by severity and
// service, the chart of failing resources per scan, the filters and the
// exceptions; owners may scan, auditors read, employees may not, and the
// connection page links to it.
func TestCloudSecurityPage(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	fc := newFakeCloud("fakecloud")
	e.app.RegisterIntegrationProviders(fc)
	key := e.key(f.org, app.RoleOwner)
	rec := e.do("POST", "/v1/integrations/connections", key, map[string]any{"providerSlug": "fakecloud", "name": "Production account"})
	wantStatus(t, rec, http.StatusCreated)
	conn := obj(t, rec)["id"].(string)
	owner := e.browser()
	owner.signIn(f.owner)
	wantRedirect(t, owner.post("/cloud-security/scan", url.Values{"connection": {conn}}), "/cloud-security?connection="+conn+"&done=cloud-scan-queued")
	if _, err := e.app.ProcessQueuedRuns(context.Background()); err != nil {
		t.Fatal(err)
	}
	fc.set("root", app.CheckPass)
	wantStatus(t, e.do("POST", "/v1/cloud-security/trigger/"+conn, key, nil), http.StatusCreated)
	if _, err := e.app.ProcessQueuedRuns(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec = owner.get("/cloud-security")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "<h1>Cloud security</h1>", "Open findings: 1", "<svg", "Failing resources over the last 2 scans, from 2 to 1",
		"bucket-a", "Turn on Block Public Access.", "Production account", `action="/cloud-security/scan"`, `href="/cloud-security"`)
	wantNoBody(t, owner.get("/cloud-security?service=iam&status=open"), "bucket-a")
	wantBody(t, owner.get("/integrations/"+conn), "/cloud-security?connection="+conn)

	auditor := e.browser()
	auditor.signIn(f.auditor)
	rec = auditor.get("/cloud-security")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "bucket-a")
	wantNoBody(t, rec, `action="/cloud-security/scan"`)
	wantStatus(t, auditor.post("/cloud-security/scan", url.Values{"connection": {conn}}), http.StatusForbidden)
	emp := e.browser()
	emp.signIn(f.employee)
	if rec := emp.get("/cloud-security"); rec.Code != http.StatusForbidden {
		t.Fatalf("employee: %d", rec.Code)
	}
}
