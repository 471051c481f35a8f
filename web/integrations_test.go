package web

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/custom"
	"github.com/compliance-appliance/compliance/integrations/https"
	"github.com/compliance-appliance/compliance/integrations/outbound"
	"github.com/compliance-appliance/compliance/storage/storagetest"
)

// fakeProvider is an in-test integration provider: two checks, resources
// whose verdicts the test sets, a token it accepts.
type fakeProvider struct {
	mu        sync.Mutex
	verdicts  map[string]string // resource -> pass/fail for fake.mfa
	token     string
	runErr    error
	gate      chan struct{} // when set, Run waits for it
	resources int           // when > 0, fake.mfa reports this many passing resources
}

const fakeToken = "tok-SECRET-4f9a2b7c1d"

func newFakeProvider() *fakeProvider {
	return &fakeProvider{verdicts: map[string]string{"alice": app.CheckPass, "bob": app.CheckFail}, token: fakeToken}
}

func (f *fakeProvider) Definition() app.ProviderDefinition {
	return app.ProviderDefinition{
		Slug: "fake", Name: "Fake directory", Category: "directory", Description: "A test provider.", AuthStrategy: app.ProviderAuthAPIKey,
		Credentials: []app.CredentialField{
			{Key: "token", Label: "Token", Type: "password", Secret: true, Required: true},
			{Key: "baseUrl", Label: "Base URL", Type: "url"},
		},
		Variables:    []app.ProviderVariable{{Key: "org", Label: "Organization", Type: "text"}},
		Services:     []app.ProviderService{{ID: "people", Name: "People", EnabledDefault: true}, {ID: "backup", Name: "Backups"}},
		Capabilities: []string{app.CapabilityChecks},
		Checks: []app.CheckDefinition{
			{ID: "fake.mfa", Title: "MFA enforced", Severity: "high", Remediation: "Turn MFA on.", Service: "people",
				Evidences: []app.RequirementRef{{Framework: "iso27001-2022", Ref: "A.8.5"}}},
			{ID: "fake.backup", Title: "Backups run", Severity: "medium", Service: "people",
				Evidences: []app.RequirementRef{{Framework: "iso27001-2022", Ref: "A.8.13"}}},
		},
	}
}

func (f *fakeProvider) Test(_ context.Context, c app.ConnectionTarget) app.TestResult {
	if c.Credentials["token"] != f.token {
		return app.TestResult{Message: "401 Bad credentials"}
	}
	return app.TestResult{Success: true, Message: "ok", Account: "audit-bot"}
}

func (f *fakeProvider) Run(ctx context.Context, c app.ConnectionTarget, ids []string, out app.CheckSink) error {
	f.mu.Lock()
	gate, runErr, n := f.gate, f.runErr, f.resources
	verdicts := map[string]string{}
	for k, v := range f.verdicts {
		verdicts[k] = v
	}
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if c.Credentials["token"] != f.token {
		return errors.New("401 Bad credentials")
	}
	if runErr != nil {
		return runErr
	}
	want := func(id string) bool {
		if len(ids) == 0 {
			return true
		}
		for _, i := range ids {
			if i == id {
				return true
			}
		}
		return false
	}
	out.Log("info", "listing users")
	if want("fake.mfa") {
		if n > 0 {
			for i := range n {
				out.Outcome(app.CheckOutcome{CheckID: "fake.mfa", ResourceType: "member", ResourceID: fmt.Sprintf("u%d", i),
					ResourceName: fmt.Sprintf("user %d", i), Status: app.CheckFail, Message: "MFA off"})
			}
		} else {
			for _, name := range []string{"alice", "bob"} {
				out.Outcome(app.CheckOutcome{CheckID: "fake.mfa", ResourceType: "member", ResourceID: name, ResourceName: name,
					Status: verdicts[name], Message: "MFA " + verdicts[name]})
			}
		}
	}
	if want("fake.backup") {
		out.Outcome(app.CheckOutcome{CheckID: "fake.backup", ResourceType: "organization", ResourceID: "acme", ResourceName: "acme",
			Status: app.CheckPass, Message: "nightly backup ran", Details: map[string]any{"lastBackup": "2026-01-15"}})
	}
	return nil
}

func (f *fakeProvider) set(resource, status string) {
	f.mu.Lock()
	f.verdicts[resource] = status
	f.mu.Unlock()
}

// integEnv is a test server with the fake and custom providers, an org on
// the professional plan with ISO 27001 enabled and every control set
// implemented (the score starts at 100).
type integEnv struct {
	*testEnv
	fake  *fakeProvider
	org   string
	owner string
}

func newIntegEnv(t *testing.T) *integEnv {
	t.Helper()
	e := newTestServer(t)
	f := newFakeProvider()
	e.app.RegisterIntegrationProviders(f, custom.New())
	org := e.org("Acme", "professional")
	owner := e.key(org, app.RoleOwner)
	wantStatus(t, e.do("POST", "/v1/frameworks/iso27001-2022/enable", owner, nil), http.StatusOK)
	if _, err := e.raw().Exec(`UPDATE controls SET status = 'implemented' WHERE organization_id = ?`, org); err != nil {
		t.Fatal(err)
	}
	return &integEnv{testEnv: e, fake: f, org: org, owner: owner}
}

func (e *integEnv) connect(body map[string]any) string {
	e.t.Helper()
	rec := e.do("POST", "/v1/integrations/connections", e.owner, body)
	wantStatus(e.t, rec, http.StatusCreated)
	return obj(e.t, rec)["id"].(string)
}

func (e *integEnv) run(conn string) map[string]any {
	e.t.Helper()
	rec := e.do("POST", "/v1/integrations/checks/connections/"+conn+"/run", e.owner, nil)
	wantStatus(e.t, rec, http.StatusCreated)
	run := obj(e.t, rec)
	if run["status"] != "queued" || run["checkRunId"] != run["id"] {
		e.t.Fatalf("queued run: %v", run)
	}
	if n, err := e.app.ProcessQueuedRuns(context.Background()); err != nil || n != 1 {
		e.t.Fatalf("processed %d runs: %v", n, err)
	}
	rec = e.do("GET", "/v1/integrations/checks/runs/"+run["id"].(string), e.owner, nil)
	wantStatus(e.t, rec, http.StatusOK)
	return obj(e.t, rec)
}

func (e *integEnv) checkFindings() []map[string]any {
	e.t.Helper()
	var out []map[string]any
	for _, f := range list(e.t, e.do("GET", "/v1/findings?perPage=200", e.owner, nil)) {
		if s, _ := f["source"].(string); strings.HasPrefix(s, "integration:") {
			out = append(out, f)
		}
	}
	return out
}

func (e *integEnv) controlFor(ref string) string {
	e.t.Helper()
	var id string
	if err := e.raw().QueryRow(`SELECT rc.control_id FROM requirement_controls rc WHERE rc.organization_id = ? AND rc.requirement_id = ?`,
		e.org, app.RequirementIDFor("iso27001-2022", ref)).Scan(&id); err != nil {
		e.t.Fatalf("control of %s: %v", ref, err)
	}
	return id
}

// TestIntegrationEndToEnd: connect, run, a failing resource opens one
// finding linked to the mapped control (the score drops), the passing
// check attaches evidence with an expiry, a re-run never duplicates, a
// fixed resource resolves the finding and the score comes back.
func TestIntegrationEndToEnd(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	iso := app.FrameworkIDFor("iso27001-2022")
	if s := e.score(e.owner, iso); s != 100 {
		t.Fatalf("score %d, want 100", s)
	}
	rec := e.do("POST", "/v1/integrations/connections", e.owner, map[string]any{"providerSlug": "fake", "name": "Directory",
		"credentials": map[string]any{"token": fakeToken}, "variables": map[string]any{"org": "acme"}, "syncFrequency": "hourly"})
	wantStatus(t, rec, http.StatusCreated)
	if strings.Contains(rec.Body.String(), fakeToken) {
		t.Fatalf("create answer carries the credential: %s", rec.Body.String())
	}
	c := obj(t, rec)
	conn := c["id"].(string)
	fields := c["credentialFields"].([]any)
	if len(fields) != 2 || fields[0].(map[string]any)["key"] != "token" || fields[0].(map[string]any)["set"] != true || fields[1].(map[string]any)["set"] != false {
		t.Fatalf("credentialFields %v", fields)
	}
	if c["status"] != "active" || c["syncFrequency"] != "hourly" || c["nextRunAt"] == nil {
		t.Fatalf("connection %v", c)
	}
	// Never returned, never in the audit trail, never in the file.
	for _, path := range []string{"/v1/integrations/connections", "/v1/integrations/connections/" + conn} {
		if r := e.do("GET", path, e.owner, nil); strings.Contains(r.Body.String(), fakeToken) {
			t.Fatalf("%s carries the credential", path)
		}
	}
	var audit string
	if err := e.raw().QueryRow(`SELECT group_concat(coalesce(changes, ''), ' ') FROM audit_log WHERE organization_id = ?`, e.org).Scan(&audit); err == nil && strings.Contains(audit, fakeToken) {
		t.Fatal("the audit trail carries the credential")
	}
	e.assertNotInFiles(fakeToken)

	// Test: success with the account.
	rec = e.do("POST", "/v1/integrations/connections/"+conn+"/test", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["success"] != true || m["account"] != "audit-bot" {
		t.Fatalf("test %v", m)
	}

	run := e.run(conn)
	if run["status"] != "succeeded" || run["passed"].(float64) != 2 || run["failed"].(float64) != 1 || run["findingsOpened"].(float64) != 1 {
		t.Fatalf("run %v", run)
	}
	if run["evidenceAttached"].(float64) != 1 || len(run["logs"].([]any)) == 0 {
		t.Fatalf("run evidence/logs %v", run)
	}
	fs := e.checkFindings()
	if len(fs) != 1 || fs[0]["severity"] != "high" || fs[0]["scope"] != "security" || fs[0]["status"] != "open" || fs[0]["type"] != "iso27001" {
		t.Fatalf("findings %v", fs)
	}
	mfaControl := e.controlFor("A.8.5")
	if ids := fs[0]["linkedControlIds"].([]any); len(ids) == 0 || ids[0] != mfaControl {
		t.Fatalf("finding controls %v, want %s", ids, mfaControl)
	}
	if !strings.Contains(fs[0]["source"].(string), conn+":fake.mfa:bob") {
		t.Fatalf("finding source %v", fs[0]["source"])
	}
	failing := e.score(e.owner, iso)
	if failing >= 100 {
		t.Fatalf("score with a failing check %d, want below 100", failing)
	}
	// Evidence on the backup control, expiring one hour plus the grace.
	evs := list(t, e.do("GET", "/v1/controls/"+e.controlFor("A.8.13")+"/evidence", e.owner, nil))
	if len(evs) != 1 || evs[0]["expiresAt"] != e.app.Now().Add(25*time.Hour).Format("2006-01-02T15:04:05Z") {
		t.Fatalf("evidence %v", evs)
	}
	body := e.do("GET", "/v1/evidence/"+evs[0]["id"].(string)+"/download", e.owner, nil)
	if body.Code == http.StatusOK && !strings.Contains(body.Body.String(), "nightly backup ran") {
		t.Fatalf("evidence file: %s", body.Body.String())
	}
	// The MFA control got no evidence: its check failed.
	if evs := list(t, e.do("GET", "/v1/controls/"+mfaControl+"/evidence", e.owner, nil)); len(evs) != 0 {
		t.Fatalf("failing check attached evidence: %v", evs)
	}

	// Results and check list.
	results := list(t, e.do("GET", "/v1/integrations/checks/runs/"+run["id"].(string)+"/results?status=fail", e.owner, nil))
	if len(results) != 1 || results[0]["resourceId"] != "bob" || results[0]["findingId"] != fs[0]["id"] {
		t.Fatalf("results %v", results)
	}
	checks := obj(t, e.do("GET", "/v1/integrations/checks/connections/"+conn, e.owner, nil))["checks"].([]any)
	if len(checks) != 2 || checks[0].(map[string]any)["lastResult"].(map[string]any)["status"] != "fail" {
		t.Fatalf("checks %v", checks)
	}

	// A re-run while bob still fails opens nothing new.
	e.clock.Advance(time.Hour)
	run = e.run(conn)
	if run["findingsOpened"].(float64) != 0 || len(e.checkFindings()) != 1 {
		t.Fatalf("re-run duplicated: %v", run)
	}
	if evs := list(t, e.do("GET", "/v1/controls/"+e.controlFor("A.8.13")+"/evidence", e.owner, nil)); len(evs) != 1 {
		t.Fatalf("re-run kept %d evidence records, want the latest only", len(evs))
	}

	// Bob fixed: the finding is resolved, the score is back.
	e.fake.set("bob", app.CheckPass)
	run = e.run(conn)
	if run["findingsResolved"].(float64) != 1 {
		t.Fatalf("run %v", run)
	}
	if fs := e.checkFindings(); len(fs) != 1 || fs[0]["status"] != "resolved" {
		t.Fatalf("findings after fix %v", fs)
	}
	if s := e.score(e.owner, iso); s != 100 {
		t.Fatalf("score after fix %d, want 100", s)
	}
	// Failing again opens a new finding (the resolved one stays resolved).
	e.fake.set("bob", app.CheckFail)
	e.run(conn)
	if fs := e.checkFindings(); len(fs) != 2 {
		t.Fatalf("findings after relapse %v", fs)
	}
	// Events were raised.
	var n int
	if err := e.raw().QueryRow(`SELECT count(*) FROM events WHERE organization_id = ? AND type IN ('check.failed', 'check.recovered', 'integration.run.completed')`, e.org).Scan(&n); err != nil || n < 6 {
		t.Fatalf("integration events %d (%v)", n, err)
	}
	runs := list(t, e.do("GET", "/v1/integrations/checks/connections/"+conn+"/runs", e.owner, nil))
	if len(runs) != 4 {
		t.Fatalf("runs %d", len(runs))
	}
}

// assertNotInFiles fails when s occurs in any file of the data directory
// (the SQLite database, its WAL, stored files) and, on PostgreSQL, in any
// stored row.
func (e *testEnv) assertNotInFiles(s string) {
	e.t.Helper()
	if storagetest.Postgres() {
		if inDatabase(e.t, e, s) {
			e.t.Errorf("the database holds the plain credential")
		}
	} else if _, err := e.raw().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		e.t.Fatal(err)
	}
	err := filepath.Walk(e.dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(s)) {
			e.t.Errorf("%s holds the plain credential", filepath.Base(path))
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// TestIntegrationValidationAndLimits: every bad input is a 400 naming the
// field; the plan limits connections.
func TestIntegrationValidationAndLimits(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no provider", map[string]any{}, "providerSlug"},
		{"unknown provider", map[string]any{"providerSlug": "nope"}, "providerSlug"},
		{"missing token", map[string]any{"providerSlug": "fake"}, "credentials.token"},
		{"malformed url", map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": "x", "baseUrl": "ftp:/x"}}, "credentials.baseUrl"},
		{"unknown credential", map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": "x", "password": "y"}}, "credentials.password"},
		{"credential not a string", map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": map[string]any{"a": 1}}}, "credentials.token"},
		{"unknown variable", map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": "x"}, "variables": map[string]any{"zone": "x"}}, "variables.zone"},
		{"bad frequency", map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": "x"}, "syncFrequency": "yearly"}, "syncFrequency"},
		{"unknown service", map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": "x"}, "services": []string{"mail"}}, "services[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := e.do("POST", "/v1/integrations/connections", e.owner, c.body)
			wantField(t, rec, c.field)
			if strings.Contains(rec.Body.String(), `"y"`) {
				t.Fatalf("error echoes a credential value: %s", rec.Body.String())
			}
		})
	}
	wantError(t, e.do("POST", "/v1/integrations/connections", e.owner, "{"), http.StatusBadRequest, "validation_error")

	free := e.testEnv.org("Free Ltd", "free")
	rec := e.do("POST", "/v1/integrations/connections", e.key(free, app.RoleOwner), map[string]any{"providerSlug": "custom"})
	er := wantError(t, rec, http.StatusForbidden, "forbidden")
	if d := er["details"].(map[string]any); d["limit"] == nil {
		t.Fatalf("limit error details %v", d)
	}
	// Idempotency-Key replays a create.
	body := map[string]any{"providerSlug": "custom", "name": "Script"}
	a := e.do("POST", "/v1/integrations/connections", e.owner, body, "Idempotency-Key", "conn-1")
	b := e.do("POST", "/v1/integrations/connections", e.owner, body, "Idempotency-Key", "conn-1")
	wantStatus(t, a, http.StatusCreated)
	if b.Code != http.StatusCreated || b.Header().Get("Idempotent-Replayed") != "true" || obj(t, a)["id"] != obj(t, b)["id"] {
		t.Fatalf("replay %d %s", b.Code, b.Body.String())
	}
	// Checks of a provider; unknown provider 404.
	rec = e.do("GET", "/v1/integrations/checks/providers/fake", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	wantError(t, e.do("GET", "/v1/integrations/checks/providers/nope", e.owner, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/integrations/connections/providers/nope", e.owner, nil), http.StatusNotFound, "not_found")
}

// TestIntegrationRunsConflictAndRestart: a second run while one is queued or
// running is 409; a run left running by a stop is interrupted at start-up;
// a provider refusing the credentials fails the run, not the worker.
func TestIntegrationRunsConflictAndRestart(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	conn := e.connect(map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": fakeToken}})
	wantStatus(t, e.do("POST", "/v1/integrations/checks/connections/"+conn+"/run", e.owner, nil), http.StatusCreated)
	wantError(t, e.do("POST", "/v1/integrations/checks/connections/"+conn+"/run/fake.mfa", e.owner, nil), http.StatusConflict, "conflict")

	// The worker claims it; the process stops mid-run.
	run, err := e.db.ClaimCheckRun(context.Background(), e.app.Now())
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, e.do("POST", "/v1/integrations/checks/connections/"+conn+"/run", e.owner, nil), http.StatusConflict, "conflict")
	if n, err := e.app.InterruptStaleRuns(context.Background()); err != nil || n != 1 {
		t.Fatalf("interrupted %d: %v", n, err)
	}
	got := obj(t, e.do("GET", "/v1/integrations/checks/runs/"+run.ID, e.owner, nil))
	if got["status"] != "interrupted" || got["error"] == nil || got["finishedAt"] == nil {
		t.Fatalf("run after restart %v", got)
	}
	// A new run may start; an unknown check is 404.
	wantError(t, e.do("POST", "/v1/integrations/checks/connections/"+conn+"/run/fake.nope", e.owner, nil), http.StatusNotFound, "not_found")
	// Refused credentials: the run fails with the provider's message and
	// the connection shows the error; the test answers success false.
	wantStatus(t, e.do("PUT", "/v1/integrations/connections/"+conn+"/credentials", e.owner,
		map[string]any{"credentials": map[string]any{"token": "wrong-token-value"}}), http.StatusOK)
	rec := e.do("POST", "/v1/integrations/connections/"+conn+"/test", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if m := obj(t, rec); m["success"] != false || m["message"] != "401 Bad credentials" {
		t.Fatalf("test %v", m)
	}
	failed := e.run(conn)
	if failed["status"] != "failed" || failed["error"] != "401 Bad credentials" {
		t.Fatalf("run %v", failed)
	}
	c := obj(t, e.do("GET", "/v1/integrations/connections/"+conn, e.owner, nil))
	if c["status"] != "error" || c["lastRunStatus"] != "failed" || c["errorMessage"] != "401 Bad credentials" {
		t.Fatalf("connection %v", c)
	}
	// Scheduler: the hourly connection is due; a paused one is not.
	wantStatus(t, e.do("PUT", "/v1/integrations/connections/"+conn+"/credentials", e.owner,
		map[string]any{"credentials": map[string]any{"token": fakeToken}}), http.StatusOK)
	e.clock.Advance(25 * time.Hour)
	if err := e.app.ScheduleIntegrationRuns(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, err := e.app.ProcessQueuedRuns(context.Background()); err != nil || n != 1 {
		t.Fatalf("scheduled runs %d: %v", n, err)
	}
	wantStatus(t, e.do("POST", "/v1/integrations/connections/"+conn+"/pause", e.owner, nil), http.StatusOK)
	e.clock.Advance(25 * time.Hour)
	if err := e.app.ScheduleIntegrationRuns(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.app.ProcessQueuedRuns(context.Background()); n != 0 {
		t.Fatalf("a paused connection ran %d times", n)
	}
}

// TestIntegrationExceptions: an excepted failure opens no finding (and
// resolves an open one); an expired exception stops applying.
func TestIntegrationExceptions(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	conn := e.connect(map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": fakeToken}})
	reviewer := e.person(e.org, "reviewer@example.com", app.RoleAdmin)
	path := "/v1/integrations/checks/connections/" + conn + "/exceptions"
	wantField(t, e.do("POST", path, e.owner, map[string]any{"checkId": "fake.mfa", "resourceId": "bob", "reason": "too short",
		"reviewerId": reviewer, "expiresAt": "2026-02-01"}), "reason")
	wantField(t, e.do("POST", path, e.owner, map[string]any{"checkId": "fake.mfa", "resourceId": "bob", "reason": "Service account without a person behind it.",
		"reviewerId": "usr_nobody", "expiresAt": "2026-02-01"}), "reviewerId")
	wantField(t, e.do("POST", path, e.owner, map[string]any{"checkId": "fake.mfa", "resourceId": "bob", "reason": "Service account without a person behind it.",
		"reviewerId": reviewer, "expiresAt": "2025-02-01"}), "expiresAt")
	e.run(conn)
	if fs := e.checkFindings(); len(fs) != 1 || fs[0]["status"] != "open" {
		t.Fatalf("findings %v", fs)
	}
	rec := e.do("POST", path, e.owner, map[string]any{"checkId": "fake.mfa", "resourceId": "bob", "reason": "Service account without a person behind it.",
		"reviewerId": reviewer, "expiresAt": "2026-02-01"})
	wantStatus(t, rec, http.StatusCreated)
	run := e.run(conn)
	if run["excepted"].(float64) != 1 || run["failed"].(float64) != 0 || run["findingsResolved"].(float64) != 1 {
		t.Fatalf("run with exception %v", run)
	}
	if fs := e.checkFindings(); len(fs) != 1 || fs[0]["status"] != "resolved" {
		t.Fatalf("findings %v", fs)
	}
	res := list(t, e.do("GET", "/v1/integrations/checks/runs/"+run["id"].(string)+"/results?status=excepted", e.owner, nil))
	if len(res) != 1 || res[0]["exceptionId"] != obj(t, rec)["id"] {
		t.Fatalf("excepted results %v", res)
	}
	// Expired: the failure counts again.
	e.clock.Advance(30 * 24 * time.Hour)
	run = e.run(conn)
	if run["failed"].(float64) != 1 || run["findingsOpened"].(float64) != 1 {
		t.Fatalf("run after expiry %v", run)
	}
	ex := list(t, e.do("GET", path, e.owner, nil))
	if len(ex) != 1 || ex[0]["active"] != false {
		t.Fatalf("exceptions %v", ex)
	}
	wantStatus(t, e.do("DELETE", "/v1/integrations/checks/exceptions/"+ex[0]["id"].(string), e.owner, nil), http.StatusNoContent)
}

// TestIntegrationCrossOrgAndRoles: another organization's connection is
// 404 everywhere; auditors read and may not act; employees see nothing.
func TestIntegrationCrossOrgAndRoles(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	conn := e.connect(map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": fakeToken}})
	run := e.run(conn)
	other := e.testEnv.org("Other", "professional")
	ko := e.key(other, app.RoleOwner)
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/integrations/connections/" + conn},
		{"PATCH", "/v1/integrations/connections/" + conn},
		{"DELETE", "/v1/integrations/connections/" + conn},
		{"POST", "/v1/integrations/connections/" + conn + "/test"},
		{"POST", "/v1/integrations/connections/" + conn + "/pause"},
		{"GET", "/v1/integrations/checks/connections/" + conn},
		{"POST", "/v1/integrations/checks/connections/" + conn + "/run"},
		{"GET", "/v1/integrations/checks/runs/" + run["id"].(string)},
		{"GET", "/v1/integrations/checks/runs/" + run["id"].(string) + "/results"},
	} {
		var body any
		if r.method == "PATCH" {
			body = map[string]any{"name": "x"}
		}
		wantError(t, e.do(r.method, r.path, ko, body), http.StatusNotFound, "not_found")
	}
	if l := list(t, e.do("GET", "/v1/integrations/connections", ko, nil)); len(l) != 0 {
		t.Fatalf("other org lists %v", l)
	}
	auditor := e.key(e.org, app.RoleAuditor)
	wantStatus(t, e.do("GET", "/v1/integrations/connections/"+conn, auditor, nil), http.StatusOK)
	wantStatus(t, e.do("GET", "/v1/integrations/checks/runs/"+run["id"].(string), auditor, nil), http.StatusOK)
	for _, r := range []struct{ method, path string }{
		{"POST", "/v1/integrations/checks/connections/" + conn + "/run"},
		{"POST", "/v1/integrations/connections/" + conn + "/test"},
		{"POST", "/v1/integrations/connections/" + conn + "/disconnect"},
		{"DELETE", "/v1/integrations/connections/" + conn},
	} {
		wantError(t, e.do(r.method, r.path, auditor, nil), http.StatusForbidden, "forbidden")
	}
	emp := e.key(e.org, app.RoleEmployee)
	wantError(t, e.do("GET", "/v1/integrations/connections/"+conn, emp, nil), http.StatusForbidden, "forbidden")
	// Disconnect erases the credentials; resume is then a conflict.
	rec := e.do("POST", "/v1/integrations/connections/"+conn+"/disconnect", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	if c := obj(t, rec); c["status"] != "disconnected" || c["credentialFields"].([]any)[0].(map[string]any)["set"] != false {
		t.Fatalf("disconnected %v", c)
	}
	wantError(t, e.do("POST", "/v1/integrations/connections/"+conn+"/resume", e.owner, nil), http.StatusConflict, "conflict")
	wantStatus(t, e.do("DELETE", "/v1/integrations/connections/"+conn, e.owner, nil), http.StatusNoContent)
	wantError(t, e.do("GET", "/v1/integrations/checks/runs/"+run["id"].(string), e.owner, nil), http.StatusNotFound, "not_found")
}

// TestIntegrationCustomPush: the push token is shown once and stored
// hashed; a bad token is 401 and records nothing; pushed results go through
// the engine; a rotated token replaces the old one.
func TestIntegrationCustomPush(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	rec := e.do("POST", "/v1/integrations/connections", e.owner, map[string]any{"providerSlug": "custom", "name": "Backup script",
		"variables": map[string]any{"requirements": "iso27001-2022:A.8.13"}})
	wantStatus(t, rec, http.StatusCreated)
	c := obj(t, rec)
	conn, token := c["id"].(string), c["pushToken"].(string)
	if !strings.HasPrefix(token, app.PushTokenPrefix) || c["pushTokenHint"] == nil {
		t.Fatalf("push connection %v", c)
	}
	if r := e.do("GET", "/v1/integrations/connections/"+conn, e.owner, nil); strings.Contains(r.Body.String(), token) {
		t.Fatal("the push token is shown again")
	}
	e.assertNotInFiles(token)
	push := map[string]any{"checks": []map[string]any{{"checkId": "backup.restore_test", "title": "Restore tested", "severity": "high",
		"resources": []map[string]any{{"id": "db-1", "name": "Main database", "status": "fail", "message": "last restore test 200 days ago"},
			{"id": "db-2", "name": "Reporting", "status": "pass"}}}}}
	path := "/v1/integrations/push/" + conn
	wantError(t, e.do("POST", path, "", push), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("POST", path, "", push, "X-Push-Token", "cpt_wrong"), http.StatusUnauthorized, "unauthorized")
	other := e.connect(map[string]any{"providerSlug": "custom"})
	wantError(t, e.do("POST", "/v1/integrations/push/"+other, "", push, "X-Push-Token", token), http.StatusUnauthorized, "unauthorized")
	if runs := list(t, e.do("GET", "/v1/integrations/checks/connections/"+conn+"/runs", e.owner, nil)); len(runs) != 0 {
		t.Fatalf("a refused push recorded %v", runs)
	}
	wantField(t, e.do("POST", path, "", map[string]any{"checks": []map[string]any{{"checkId": "x", "evidences": []map[string]any{{"framework": "iso27001-2022", "ref": "Z.9"}},
		"resources": []map[string]any{{"id": "a", "status": "maybe"}}}}}, "X-Push-Token", token), "checks[0].evidences[0]")
	rec = e.do("POST", path, "", push, "X-Push-Token", token)
	wantStatus(t, rec, http.StatusCreated)
	run := obj(t, rec)
	if run["status"] != "succeeded" || run["trigger"] != "push" || run["findingsOpened"].(float64) != 1 {
		t.Fatalf("push run %v", run)
	}
	fs := e.checkFindings()
	if len(fs) != 1 || fs[0]["severity"] != "high" {
		t.Fatalf("findings %v", fs)
	}
	if ids := fs[0]["linkedControlIds"].([]any); len(ids) != 1 || ids[0] != e.controlFor("A.8.13") {
		t.Fatalf("finding controls %v", ids)
	}
	checks := obj(t, e.do("GET", "/v1/integrations/checks/connections/"+conn, e.owner, nil))["checks"].([]any)
	if len(checks) != 1 || checks[0].(map[string]any)["id"] != "backup.restore_test" {
		t.Fatalf("pushed checks %v", checks)
	}
	wantField(t, e.do("POST", "/v1/integrations/checks/connections/"+conn+"/run", e.owner, nil), "connectionId")
	// Rotation: the old token stops working.
	rec = e.do("POST", "/v1/integrations/connections/"+conn+"/push-token", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	fresh := obj(t, rec)["pushToken"].(string)
	wantError(t, e.do("POST", path, "", push, "X-Push-Token", token), http.StatusUnauthorized, "unauthorized")
	wantStatus(t, e.do("POST", path, "", push, "X-Push-Token", fresh), http.StatusCreated)
	if fs := e.checkFindings(); len(fs) != 1 {
		t.Fatalf("a second push duplicated findings: %v", fs)
	}
}

// TestIntegrationHTTPSProvider: the https provider through the engine
// against a local TLS server: passing TLS checks attach evidence to the
// cryptography control, missing headers open a finding.
func TestIntegrationHTTPSProvider(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000")
	}))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c, err := outbound.New(outbound.Options{TLSConfig: &tls.Config{RootCAs: pool}, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.app.RegisterIntegrationProviders(https.New(c))
	wantField(t, e.do("POST", "/v1/integrations/connections", e.owner, map[string]any{"providerSlug": "https",
		"variables": map[string]any{"urls": []string{"not a url"}}}), "variables.urls")
	wantField(t, e.do("POST", "/v1/integrations/connections", e.owner, map[string]any{"providerSlug": "https"}), "variables.urls")
	conn := e.connect(map[string]any{"providerSlug": "https", "variables": map[string]any{"urls": []string{srv.URL}}})
	run := e.run(conn)
	if run["status"] != "succeeded" || run["passed"].(float64) != 5 || run["failed"].(float64) != 1 || run["findingsOpened"].(float64) != 1 {
		t.Fatalf("run %v", run)
	}
	fs := e.checkFindings()
	if len(fs) != 1 || fs[0]["severity"] != "low" || !strings.Contains(fs[0]["content"].(string), "Content-Security-Policy") {
		t.Fatalf("findings %v", fs)
	}
	if evs := list(t, e.do("GET", "/v1/controls/"+e.controlFor("A.8.24")+"/evidence", e.owner, nil)); len(evs) == 0 {
		t.Fatal("no evidence on the cryptography control")
	}
}

// TestIntegrationMCPTools: the read tools list connections and a
// connection's results; another organization's connection is not found.
func TestIntegrationMCPTools(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	conn := e.connect(map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": fakeToken}})
	e.run(conn)
	cs := mcpSession(t, e.testEnv, http.Header{"X-Api-Key": {e.key(e.org, app.RoleAuditor)}})
	out, isErr := callTool(t, cs, "list_connections", map[string]any{})
	if isErr || len(out["data"].([]any)) != 1 || strings.Contains(fmt.Sprint(out), fakeToken) {
		t.Fatalf("list_connections: %v", out)
	}
	out, isErr = callTool(t, cs, "list_check_results", map[string]any{"connectionId": conn, "status": "fail"})
	if isErr || len(out["data"].([]any)) != 1 {
		t.Fatalf("list_check_results: %v", out)
	}
	other := mcpSession(t, e.testEnv, http.Header{"X-Api-Key": {e.key(e.testEnv.org("Globex", app.PlanProfessional), app.RoleOwner)}})
	out, _ = callTool(t, other, "list_check_results", map[string]any{"connectionId": conn})
	if !strings.Contains(fmt.Sprint(out["error"]), "not_found") {
		t.Fatalf("another organization: %v", out)
	}
}

// TestIntegrationProviderWebhook: a delivery signed with the connection's
// secret queues a run; a bad signature, another provider's path or a
// connection without a secret is 401 and records nothing.
func TestIntegrationProviderWebhook(t *testing.T) {
	t.Parallel()
	e := newIntegEnv(t)
	conn := e.connect(map[string]any{"providerSlug": "fake", "credentials": map[string]any{"token": fakeToken}})
	path := "/v1/integrations/webhooks/fake/" + conn
	body := `{"ref":"refs/heads/main"}`
	sign := func(secret, b string) string {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(b))
		return "sha256=" + hex.EncodeToString(m.Sum(nil))
	}
	// No secret yet: refused.
	wantError(t, e.do("POST", path, "", body, "X-Hub-Signature-256", sign("x", body)), http.StatusUnauthorized, "unauthorized")
	rec := e.do("POST", "/v1/integrations/connections/"+conn+"/webhook-secret", e.owner, nil)
	wantStatus(t, rec, http.StatusOK)
	ws := obj(t, rec)
	secret := ws["webhookSecret"].(string)
	if ws["webhookPath"] != path || !strings.HasPrefix(secret, app.ConnectionWebhookSecretPrefix) {
		t.Fatalf("secret %v", ws)
	}
	if c := obj(t, e.do("GET", "/v1/integrations/connections/"+conn, e.owner, nil)); c["webhookEnabled"] != true {
		t.Fatalf("connection %v", c)
	}
	e.assertNotInFiles(secret)
	wantError(t, e.do("POST", path, "", body, "X-Hub-Signature-256", sign("wrong", body)), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("POST", path, "", body), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("POST", path, "", body+" ", "X-Hub-Signature-256", sign(secret, body)), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("POST", "/v1/integrations/webhooks/gitlab/"+conn, "", body, "X-Gitlab-Token", secret), http.StatusUnauthorized, "unauthorized")
	if runs := list(t, e.do("GET", "/v1/integrations/checks/connections/"+conn+"/runs", e.owner, nil)); len(runs) != 0 {
		t.Fatalf("refused deliveries recorded runs: %v", runs)
	}
	rec = e.do("POST", path, "", body, "X-Hub-Signature-256", sign(secret, body))
	wantStatus(t, rec, http.StatusAccepted)
	if m := obj(t, rec); m["success"] != true || m["checkRunId"] == nil {
		t.Fatalf("delivery %v", m)
	}
	// A second delivery while the run is queued adds none.
	rec = e.do("POST", path, "", body, "X-Hub-Signature-256", sign(secret, body))
	wantStatus(t, rec, http.StatusAccepted)
	if m := obj(t, rec); m["checkRunId"] != nil {
		t.Fatalf("second delivery %v", m)
	}
	if n, err := e.app.ProcessQueuedRuns(context.Background()); err != nil || n != 1 {
		t.Fatalf("ran %d: %v", n, err)
	}
	runs := list(t, e.do("GET", "/v1/integrations/checks/connections/"+conn+"/runs", e.owner, nil))
	if len(runs) != 1 || runs[0]["trigger"] != "webhook" || runs[0]["status"] != "succeeded" {
		t.Fatalf("runs %v", runs)
	}
	// The auditor may not rotate the secret.
	wantError(t, e.do("POST", "/v1/integrations/connections/"+conn+"/webhook-secret", e.key(e.org, app.RoleAuditor), nil), http.StatusForbidden, "forbidden")
}
