package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// policyBench is a server with one organization holding n policies of
// about 4 KiB each, half of them published, each linked to three controls.
type policyBench struct {
	srv           *Server
	admin, emp    string
	firstPolicyID string
	controlID     string
}

func newPolicyBench(b *testing.B, n int) *policyBench {
	b.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := app.New(db, nil, log, app.Config{EnterpriseRate: 1 << 30})
	srv, err := New(a, log, Options{Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	o, err := a.CreateOrganization(ctx, "Bench", app.PlanEnterprise)
	if err != nil {
		b.Fatal(err)
	}
	sys := app.SystemContext(ctx, o.ID)
	var controls []string
	for i := 0; i < 30; i++ {
		now := time.Now().UTC()
		c := &app.Control{ID: app.NewID(app.PrefixControl), Code: fmt.Sprintf("C.%d", i), Name: "control", Status: app.ControlNotStarted, CreatedAt: now, UpdatedAt: now}
		if err := db.CreateControl(ctx, o.ID, c); err != nil {
			b.Fatal(err)
		}
		controls = append(controls, c.ID)
	}
	person, err := a.CreatePerson(sys, app.PersonCreate{Name: "E", Email: "e@bench.test", Role: "employee"})
	if err != nil {
		b.Fatal(err)
	}
	body := strings.Repeat("Every {{company_name}} employee follows this rule. ", 80)
	pb := &policyBench{srv: srv}
	for i := 0; i < n; i++ {
		p, err := a.CreatePolicy(sys, app.PolicyInput{Name: app.Ptr(fmt.Sprintf("Policy %04d", i)), Content: &body,
			ControlIDs: []string{controls[i%30], controls[(i+1)%30], controls[(i+2)%30]}})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			pb.firstPolicyID = p.ID
		}
		if i%2 == 0 {
			if _, err := a.PublishPolicy(sys, p.ID, app.PublishInput{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	k, err := a.CreateAPIKey(sys, app.APIKeyCreate{Name: "admin", Role: "admin"})
	if err != nil {
		b.Fatal(err)
	}
	pb.admin = k.Key
	ek, err := a.CreateAPIKey(app.WithPrincipal(ctx, &app.Principal{OrgID: o.ID, Role: app.RoleOwner, AuthType: app.AuthSystem, UserID: person.ID}),
		app.APIKeyCreate{Name: "employee", Role: "employee"})
	if err != nil {
		b.Fatal(err)
	}
	pb.emp = ek.Key
	pb.controlID = controls[0]
	// 200 people, half of whom acknowledged the first policy.
	for i := 0; i < 200; i++ {
		pp, err := a.CreatePerson(sys, app.PersonCreate{Name: fmt.Sprintf("P %03d", i), Email: fmt.Sprintf("p%d@bench.test", i), Role: "employee"})
		if err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 {
			pctx := app.WithPrincipal(ctx, &app.Principal{OrgID: o.ID, Role: app.RoleEmployee, AuthType: app.AuthSystem, UserID: pp.ID})
			if _, _, err := a.AcknowledgePolicy(pctx, pb.firstPolicyID, app.AcknowledgeInput{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return pb
}

func (pb *policyBench) run(b *testing.B, path, key string) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("X-API-Key", key)
		rec := httptest.NewRecorder()
		pb.srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
		}
	}
}

// BenchmarkPolicyList is a page of 50 of 1,000 policies over the full HTTP
// chain (auth, rate limit, query, JSON).
func BenchmarkPolicyList(b *testing.B) {
	pb := newPolicyBench(b, 1000)
	b.Run("admin", func(b *testing.B) { pb.run(b, "/v1/policies?perPage=50", pb.admin) })
	b.Run("admin-excludeContent", func(b *testing.B) { pb.run(b, "/v1/policies?perPage=50&excludeContent=true", pb.admin) })
	b.Run("admin-lastPage-status", func(b *testing.B) { pb.run(b, "/v1/policies?perPage=50&page=10&status=published", pb.admin) })
	b.Run("employee-publishedView", func(b *testing.B) { pb.run(b, "/v1/policies?perPage=50", pb.emp) })
	b.Run("admin-controlId-filter", func(b *testing.B) { pb.run(b, "/v1/policies?perPage=50&controlId="+pb.controlID, pb.admin) })
	b.Run("employee-pending-acknowledgement", func(b *testing.B) { pb.run(b, "/v1/policies?perPage=50&acknowledged=false", pb.emp) })
	b.Run("get", func(b *testing.B) { pb.run(b, "/v1/policies/"+pb.firstPolicyID, pb.admin) })
	b.Run("acknowledgements-200-people", func(b *testing.B) {
		pb.run(b, "/v1/policies/"+pb.firstPolicyID+"/acknowledgements?perPage=50&status=pending", pb.admin)
	})
}
