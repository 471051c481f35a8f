package web

import (
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// TestAuthLatencyFigures measures sign-in (with the production argon2id
// cost), the token endpoint, a bearer-authenticated API call and an MCP
// tool call through the full handler chain. It runs only when
// COMPLIANCE_FIGURES=1 (go test -run TestAuthLatencyFigures -v ./web/).
func TestAuthLatencyFigures(t *testing.T) {
	if os.Getenv("COMPLIANCE_FIGURES") == "" {
		t.Skip("set COMPLIANCE_FIGURES=1 to measure")
	}
	e := newTestServer(t)
	org := e.org("Acme", app.PlanEnterprise)
	id := e.person(org, "ada@example.com", app.RoleAdmin)
	if err := e.app.SetPassword(e.ctx(org), id, testPassword); err != nil { // production cost
		t.Fatal(err)
	}
	report := func(name string, r testing.BenchmarkResult) {
		t.Logf("%-28s %8.2f ms/op  (%d ops)", name, float64(r.NsPerOp())/1e6, r.N)
	}

	start := time.Now()
	if _, err := app.HashPassword(testPassword); err != nil {
		t.Fatal(err)
	}
	t.Logf("%-28s %8.2f ms", "argon2id hash (t=3, 64 MiB)", float64(time.Since(start).Microseconds())/1e3)

	report("POST /v1/auth/login", testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if rec := e.do("POST", "/v1/auth/login", "", map[string]string{"email": "ada@example.com", "password": testPassword}); rec.Code != http.StatusOK {
				b.Fatalf("login %d", rec.Code)
			}
		}
	}))

	session, _ := e.login("ada@example.com")
	clientID := e.registerClient()
	p := newPKCE()
	tok := e.exchange(clientID, e.approve(authorizeQuery(clientID, "", p), session, org), p)
	refresh := tok.RefreshToken
	report("POST /oauth/token (refresh)", testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			e.clock.Advance(200 * time.Millisecond) // stay under the per-address limit
			status, tr := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}})
			if status != http.StatusOK {
				b.Fatalf("refresh %d", status)
			}
			refresh, tok.AccessToken = tr.RefreshToken, tr.AccessToken
		}
	}))
	report("POST /oauth/token (code)", testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			e.clock.Advance(time.Second)
			code := e.approve(authorizeQuery(clientID, "", p), session, org)
			b.StartTimer()
			e.exchange(clientID, code, p)
		}
	}))
	report("GET /v1/vendors (bearer)", testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			e.clock.Advance(25 * time.Millisecond)
			if rec := e.do("GET", "/v1/vendors", "", nil, bearer(tok.AccessToken)...); rec.Code != http.StatusOK {
				b.Fatalf("bearer call %d", rec.Code)
			}
		}
	}))
	key := e.key(org, app.RoleAdmin)
	if rec := e.do("GET", "/v1/vendors", key, nil); rec.Code != http.StatusOK {
		t.Fatalf("key call %d %s", rec.Code, rec.Body.String())
	}
	var failure string
	report("GET /v1/vendors (API key)", testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			e.clock.Advance(25 * time.Millisecond) // stay under the key's rate limit
			if rec := e.do("GET", "/v1/vendors", key, nil); rec.Code != http.StatusOK {
				failure = rec.Body.String()
				b.FailNow()
			}
		}
	}))
	if failure != "" {
		t.Fatal(failure)
	}
	cs := mcpSession(t, e, http.Header{"X-Api-Key": {key}})
	report("MCP tools/call list_vendors", testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			e.clock.Advance(25 * time.Millisecond)
			if _, isErr := callTool(b, cs, "list_vendors", nil); isErr {
				b.Fatal("tool error")
			}
		}
	}))
	report("MCP tools/call get_organization", testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			e.clock.Advance(25 * time.Millisecond)
			if _, isErr := callTool(b, cs, "get_organization", nil); isErr {
				b.Fatal("tool error")
			}
		}
	}))
}
