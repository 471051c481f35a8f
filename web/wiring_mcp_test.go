package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// TestMCPComplianceTools: the compliance tools call the same services with
// the caller's permissions and organization.
func TestMCPComplianceTools(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	other := e.org("Other", app.PlanProfessional)
	fw, ctls := e.scoreFramework(org, 2)
	e.scoreFramework(other, 1)
	soon, err := e.app.UploadEvidence(e.ctx(org), ctls[0], "", app.EvidenceUpload{File: strings.NewReader("a"), Filename: "a.txt", ExpiresAt: "2026-02-01"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.UploadEvidence(e.ctx(org), ctls[1], "", app.EvidenceUpload{File: strings.NewReader("b"), Filename: "b.txt", ExpiresAt: "2026-06-01"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.UploadEvidence(e.ctx(other), e.control(other), "", app.EvidenceUpload{File: strings.NewReader("c"), Filename: "c.txt", ExpiresAt: "2026-01-20"}); err != nil {
		t.Fatal(err)
	}
	// The status rule is tested elsewhere; here the controls are set
	// implemented directly.
	if _, err := e.raw().Exec(`UPDATE controls SET status = 'implemented' WHERE organization_id = ?`, org); err != nil {
		t.Fatal(err)
	}

	cs := mcpSession(t, e, http.Header{"X-Api-Key": {e.key(org, app.RoleAdmin)}})
	status := func() map[string]any {
		out, isErr := callTool(t, cs, "compliance_status", map[string]any{})
		fws := out["frameworks"].([]any)
		if isErr || len(fws) != 1 {
			t.Fatalf("compliance_status: %v", out)
		}
		return fws[0].(map[string]any)
	}
	if s := status(); s["frameworkId"] != fw || s["score"] != float64(100) || s["counts"].(map[string]any)["requirements"].(map[string]any)["met"] != float64(2) {
		t.Fatalf("status: %v", s)
	}

	out, isErr := callTool(t, cs, "list_controls", map[string]any{"frameworkId": fw})
	if isErr || out["meta"].(map[string]any)["total"] != float64(2) {
		t.Fatalf("list_controls: %v", out)
	}
	out, isErr = callTool(t, cs, "create_finding", map[string]any{"title": "Open bucket", "severity": "high", "linkedControlIds": []string{ctls[0]}})
	if isErr || !strings.HasPrefix(out["id"].(string), "fnd_") {
		t.Fatalf("create_finding: %v", out)
	}
	fid := out["id"].(string)
	if s := status(); s["score"] != float64(50) {
		t.Fatalf("score after a high finding through MCP: %v", s["score"])
	}
	out, isErr = callTool(t, cs, "get_control", map[string]any{"id": ctls[0]})
	if isErr || out["openFindingCount"] != float64(1) || len(out["openFindings"].([]any)) != 1 {
		t.Fatalf("get_control: %v", out)
	}
	out, isErr = callTool(t, cs, "list_findings", map[string]any{"controlId": ctls[0], "status": "open"})
	if isErr || len(out["data"].([]any)) != 1 || out["data"].([]any)[0].(map[string]any)["id"] != fid {
		t.Fatalf("list_findings: %v", out)
	}
	out, isErr = callTool(t, cs, "list_expiring_evidence", map[string]any{})
	if data, _ := out["data"].([]any); isErr || len(data) != 1 || data[0].(map[string]any)["id"] != soon.ID {
		t.Fatalf("list_expiring_evidence (30 days): %v", out)
	}
	out, isErr = callTool(t, cs, "list_expiring_evidence", map[string]any{"days": 200})
	if isErr || out["meta"].(map[string]any)["total"] != float64(2) {
		t.Fatalf("list_expiring_evidence (200 days): %v", out)
	}
	out, isErr = callTool(t, cs, "list_expiring_evidence", map[string]any{"days": 400})
	if !isErr || !strings.Contains(out["error"].(string), "validation_error") {
		t.Fatalf("days 400: %v", out)
	}
	// Evidence past its expiry is no longer "expiring".
	e.clock.Advance(20 * 24 * time.Hour)
	out, _ = callTool(t, cs, "list_expiring_evidence", map[string]any{})
	if out["meta"].(map[string]any)["total"] != float64(0) {
		t.Fatalf("after expiry: %v", out)
	}
	// Errors keep the REST codes; another organization's control is not found.
	out, isErr = callTool(t, cs, "create_finding", map[string]any{"title": " "})
	if !isErr || !strings.Contains(out["error"].(string), "validation_error") {
		t.Fatalf("blank title: %v", out)
	}
	out, isErr = callTool(t, cs, "get_control", map[string]any{"id": e.control(other)})
	if !isErr || !strings.Contains(out["error"].(string), "not_found") {
		t.Fatalf("another organization's control: %v", out)
	}

	// An auditor key reads through MCP but cannot create a finding.
	aud := mcpSession(t, e, http.Header{"X-Api-Key": {e.key(org, app.RoleAuditor)}})
	out, isErr = callTool(t, aud, "create_finding", map[string]any{"title": "Nope", "severity": "critical", "linkedControlIds": []string{ctls[1]}})
	if !isErr || !strings.Contains(out["error"].(string), "forbidden") {
		t.Fatalf("auditor create_finding: %v", out)
	}
	if _, isErr := callTool(t, aud, "compliance_status", nil); isErr {
		t.Fatal("auditor must be able to read the status")
	}
	if _, isErr := callTool(t, aud, "list_findings", nil); isErr {
		t.Fatal("auditor must be able to list findings")
	}
	if s := status(); s["score"] != float64(50) {
		t.Fatalf("the refused finding changed the score: %v", s["score"])
	}

	// The manifest names every tool.
	m := obj(t, e.do("GET", "/.well-known/mcp.json", "", nil))
	names := map[string]bool{}
	for _, n := range m["tools"].([]any) {
		names[n.(string)] = true
	}
	for _, n := range []string{"compliance_status", "list_controls", "get_control", "list_findings", "create_finding", "list_expiring_evidence"} {
		if !names[n] {
			t.Errorf("manifest lacks %s: %v", n, m["tools"])
		}
	}
	// ... and exactly the tools the server registers.
	listed, err := aud.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Tools) != len(names) {
		t.Errorf("the server has %d tools, the manifest names %d", len(listed.Tools), len(names))
	}
	for _, tool := range listed.Tools {
		if !names[tool.Name] {
			t.Errorf("manifest lacks the registered tool %s", tool.Name)
		}
	}
}
