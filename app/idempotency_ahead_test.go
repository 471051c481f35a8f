package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// A held-back write whose reference disappears between the handler's run
// and the write transaction falls back to running the handler inside the
// writer: the stored answer is the 4xx that run gives, nothing is created,
// and a retry replays it.
func TestIdempotentAheadFallsBackWhenHeldBackWriteFails(t *testing.T) {
	t.Parallel()
	a, _, _ := newApp(t)
	ctx := context.Background()
	o, err := a.CreateOrganization(ctx, "One", "")
	if err != nil {
		t.Fatal(err)
	}
	sys := app.SystemContext(ctx, o.ID)
	tpl, err := a.CreateFindingTemplate(sys, app.FindingTemplateInput{Title: app.Ptr("Weak TLS")})
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	run := func(ctx context.Context) *app.StoredResponse {
		runs++
		f, err := a.CreateFinding(ctx, app.FindingCreate{Title: app.Ptr("TLS 1.0 on host a"), TemplateID: &tpl.ID})
		if runs == 1 {
			// Deleted after the handler checked it, before its write.
			if err := a.DeleteFindingTemplate(sys, tpl.ID); err != nil {
				t.Error(err)
			}
		}
		if err != nil {
			var ve *app.ValidationError
			if !errors.As(err, &ve) {
				t.Errorf("run %d: %v", runs, err)
			}
			return &app.StoredResponse{Status: 400, Body: []byte(`{"error":"templateId"}`)}
		}
		body, _ := json.Marshal(f)
		return &app.StoredResponse{Status: 201, Body: body}
	}
	resp, replayed, err := a.IdempotentAhead(sys, "k1", "h1", run)
	if err != nil || replayed {
		t.Fatalf("first: replayed=%v err=%v", replayed, err)
	}
	if resp.Status != 400 || runs != 2 {
		t.Fatalf("status %d after %d runs, want the 400 of a second run inside the writer", resp.Status, runs)
	}
	l, err := a.ListFindings(sys, app.FindingFilter{Page: app.Page{Page: 1, PerPage: 10}})
	if err != nil || l.Total != 0 {
		t.Fatalf("findings = %d (%v), want none", l.Total, err)
	}
	again, replayed, err := a.IdempotentAhead(sys, "k1", "h1", run)
	if err != nil || !replayed || again.Status != 400 || string(again.Body) != string(resp.Body) || runs != 2 {
		t.Fatalf("retry: status %d replayed=%v err=%v runs=%d", again.Status, replayed, err, runs)
	}
	if v, err := a.VerifyAuditChain(ctx); err != nil || !v.OK {
		t.Fatalf("audit chain: %+v %v", v, err)
	}
}

// A handler that writes twice cannot be held back: it runs again inside
// the writer and both writes commit with its stored response.
func TestIdempotentAheadTwoWritesRunInsideWriter(t *testing.T) {
	t.Parallel()
	a, _, _ := newApp(t)
	ctx := context.Background()
	o, err := a.CreateOrganization(ctx, "One", "")
	if err != nil {
		t.Fatal(err)
	}
	sys := app.SystemContext(ctx, o.ID)
	runs := 0
	run := func(ctx context.Context) *app.StoredResponse {
		runs++
		for _, name := range []string{"Acme", "Globex"} {
			if _, err := a.CreateVendor(ctx, app.VendorInput{Name: app.Ptr(name)}); err != nil {
				return &app.StoredResponse{Status: 500, Body: []byte(err.Error())}
			}
		}
		return &app.StoredResponse{Status: 201, Body: []byte(`{}`)}
	}
	resp, _, err := a.IdempotentAhead(sys, "k2", "h", run)
	if err != nil || resp.Status != 201 || runs != 2 {
		t.Fatalf("status %d after %d runs: %v", resp.Status, runs, err)
	}
	l, err := a.ListVendors(sys, app.VendorFilter{Page: app.Page{Page: 1, PerPage: 10}})
	if err != nil || l.Total != 2 {
		t.Fatalf("vendors = %d (%v), want 2", l.Total, err)
	}
	if _, replayed, err := a.IdempotentAhead(sys, "k2", "h", run); err != nil || !replayed || runs != 2 {
		t.Fatalf("retry: replayed=%v err=%v runs=%d", replayed, err, runs)
	}
}
