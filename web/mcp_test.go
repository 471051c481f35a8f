package web

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// headerTransport adds fixed headers to every request of the MCP client.
type headerTransport struct{ hdr http.Header }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects a real SDK client to the router over HTTP.
func mcpSession(t testing.TB, e *testEnv, hdr http.Header) *mcp.ClientSession {
	t.Helper()
	ts := httptest.NewServer(e.srv)
	t.Cleanup(ts.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1.0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/v1/mcp",
		HTTPClient: &http.Client{Transport: headerTransport{hdr}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		return map[string]any{"error": text}, true
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("%s result is not JSON: %s", name, text)
	}
	return out, false
}

func TestMCPWithAPIKey(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	other := e.org("Other", app.PlanProfessional)
	e.person(org, "ada@example.com", app.RoleAdmin)
	if _, err := e.app.CreateVendor(e.ctx(other), app.VendorInput{Name: app.Ptr("Hidden"), Category: app.Ptr("cloud")}); err != nil {
		t.Fatal(err)
	}

	cs := mcpSession(t, e, http.Header{"X-Api-Key": {e.key(org, app.RoleAdmin)}})
	if init := cs.InitializeResult(); init == nil || init.ServerInfo.Name != "compliance" {
		t.Fatalf("initialize: %+v", init)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"list_vendors", "get_vendor", "create_vendor", "list_people", "get_organization"} {
		if !names[want] {
			t.Fatalf("tool %s missing: %v", want, names)
		}
	}

	out, isErr := callTool(t, cs, "create_vendor", map[string]any{"name": "Cloudy", "category": "cloud", "criticality": "critical"})
	if isErr || !strings.HasPrefix(out["id"].(string), "vnd_") {
		t.Fatalf("create_vendor: %v", out)
	}
	vid := out["id"].(string)
	out, _ = callTool(t, cs, "list_vendors", map[string]any{"criticality": "critical"})
	if data := out["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != vid {
		t.Fatalf("list_vendors sees only this organization's vendors: %v", out)
	}
	out, isErr = callTool(t, cs, "get_vendor", map[string]any{"id": vid})
	if isErr || out["name"] != "Cloudy" {
		t.Fatalf("get_vendor: %v", out)
	}
	out, _ = callTool(t, cs, "get_organization", map[string]any{})
	if out["id"] != org {
		t.Fatalf("get_organization: %v", out)
	}
	out, _ = callTool(t, cs, "list_people", map[string]any{})
	if out["meta"].(map[string]any)["total"] != float64(1) {
		t.Fatalf("list_people: %v", out)
	}
	// Errors come back as tool errors with the REST code.
	out, isErr = callTool(t, cs, "get_vendor", map[string]any{"id": "vnd_nope"})
	if !isErr || !strings.Contains(out["error"].(string), "not_found") {
		t.Fatalf("missing vendor: %v", out)
	}
	out, isErr = callTool(t, cs, "create_vendor", map[string]any{"name": ""})
	if !isErr || !strings.Contains(out["error"].(string), "validation_error") {
		t.Fatalf("invalid vendor: %v", out)
	}
	out, isErr = callTool(t, cs, "list_people", map[string]any{"perPage": 500})
	if !isErr || !strings.Contains(out["error"].(string), "validation_error") {
		t.Fatalf("perPage 500: %v", out)
	}

	// An auditor may read through MCP but not create.
	aud := mcpSession(t, e, http.Header{"X-Api-Key": {e.key(org, app.RoleAuditor)}})
	out, isErr = callTool(t, aud, "create_vendor", map[string]any{"name": "Nope", "category": "cloud"})
	if !isErr || !strings.Contains(out["error"].(string), "forbidden") {
		t.Fatalf("auditor create: %v", out)
	}
	if _, isErr := callTool(t, aud, "list_vendors", nil); isErr {
		t.Fatal("auditor must be able to list")
	}
	// An employee sees only themselves in people.
	emp := e.person(org, "bob@example.com", app.RoleEmployee)
	k, err := e.app.CreateAPIKey(e.ctx(org), app.APIKeyCreate{Name: "bob", Role: "employee"})
	if err != nil {
		t.Fatal(err)
	}
	_ = emp
	es := mcpSession(t, e, http.Header{"X-Api-Key": {k.Key}})
	out, _ = callTool(t, es, "create_vendor", map[string]any{"name": "Nope", "category": "cloud"})
	if !strings.Contains(out["error"].(string), "forbidden") {
		t.Fatalf("employee create: %v", out)
	}

	// Without credentials: 401 with the MCP resource metadata.
	ts := httptest.NewServer(e.srv)
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/v1/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "/.well-known/oauth-protected-resource/v1/mcp") {
		t.Fatalf("anonymous MCP: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "anon"}, nil)
	if _, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/v1/mcp", DisableStandaloneSSE: true}, nil); err == nil {
		t.Fatal("connect without credentials must fail")
	}

	// The manifest names endpoint, transport and both auth options.
	rec := e.do("GET", "/.well-known/mcp.json", "", nil)
	wantStatus(t, rec, http.StatusOK)
	m := obj(t, rec)
	if m["endpoint"] != "http://example.com/v1/mcp" || m["transport"].(map[string]any)["type"] != "streamable-http" || len(m["authentication"].([]any)) != 2 {
		t.Fatalf("manifest: %v", m)
	}
}

func TestMCPWithOAuth(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	e.withPassword(org, "ada@example.com", app.RoleAdmin)
	session, _ := e.login("ada@example.com")
	clientID := e.registerClient()
	p := newPKCE()

	rw := e.exchange(clientID, e.approve(authorizeQuery(clientID, "", p), session, org), p)
	cs := mcpSession(t, e, http.Header{"Authorization": {"Bearer " + rw.AccessToken}})
	out, isErr := callTool(t, cs, "create_vendor", map[string]any{"name": "Cloudy", "category": "cloud"})
	if isErr {
		t.Fatalf("create through OAuth: %v", out)
	}
	out, _ = callTool(t, cs, "get_organization", nil)
	if out["id"] != org {
		t.Fatalf("organization: %v", out)
	}

	ro := e.exchange(clientID, e.approve(authorizeQuery(clientID, app.ScopeRead, p), session, org), p)
	rs := mcpSession(t, e, http.Header{"Authorization": {"Bearer " + ro.AccessToken}})
	if _, isErr := callTool(t, rs, "list_vendors", nil); isErr {
		t.Fatal("read-only token must list")
	}
	out, isErr = callTool(t, rs, "create_vendor", map[string]any{"name": "Nope", "category": "cloud"})
	if !isErr || !strings.Contains(out["error"].(string), "scope") {
		t.Fatalf("read-only token create: %v", out)
	}
}

// TestMCPOAuthWithSDKClient runs the SDK's own OAuth client against the
// appliance: discovery from the 401, dynamic registration, PKCE, the
// sign-in and consent pages (driven like a browser), token exchange, then
// a tool call with the bearer token.
func TestMCPOAuthWithSDKClient(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	e.withPassword(org, "ada@example.com", app.RoleAdmin)
	ts := httptest.NewServer(e.srv)
	defer ts.Close()

	browser := newBrowser(t)
	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		page := browser.get(t, args.URL)
		page = browser.post(t, ts.URL+"/oauth/login", url.Values{"email": {"ada@example.com"}, "password": {testPassword},
			"login_csrf": {hidden(t, page, "login_csrf")}, "return": {hidden(t, page, "return")}})
		action := regexp.MustCompile(`<form method="post" action="([^"]+)"`).FindStringSubmatch(page)
		if action == nil {
			t.Fatalf("no consent form: %s", page)
		}
		loc := browser.postNoFollow(t, ts.URL+html.UnescapeString(action[1]), url.Values{"csrf_token": {hidden(t, page, "csrf_token")},
			"organization_id": {org}, "decision": {"approve"}})
		u, err := url.Parse(loc)
		if err != nil {
			return nil, err
		}
		return &auth.AuthorizationResult{Code: u.Query().Get("code"), State: u.Query().Get("state")}, nil
	}
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "SDK agent", RedirectURIs: []string{testRedirect}, GrantTypes: []string{"authorization_code", "refresh_token"},
			TokenEndpointAuthMethod: "none"}},
		AuthorizationCodeFetcher: fetch,
		RequestRefreshToken:      true,
	})
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-agent", Version: "1.0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/v1/mcp", OAuthHandler: handler,
		DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect with OAuth: %v", err)
	}
	defer cs.Close()
	out, isErr := callTool(t, cs, "get_organization", nil)
	if isErr || out["id"] != org {
		t.Fatalf("get_organization over OAuth: %v", out)
	}
}

// browser is a cookie-keeping HTTP client that follows redirects within
// the appliance.
type browser struct{ c *http.Client }

func newBrowser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{c: &http.Client{Jar: jar}}
}

func (b *browser) get(t *testing.T, u string) string {
	t.Helper()
	resp, err := b.c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, body)
	}
	return string(body)
}

func (b *browser) post(t *testing.T, u string, v url.Values) string {
	t.Helper()
	resp, err := b.c.PostForm(u, v)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", u, resp.StatusCode, body)
	}
	return string(body)
}

// postNoFollow posts and returns the redirect target (the client's callback).
func (b *browser) postNoFollow(t *testing.T, u string, v url.Values) string {
	t.Helper()
	c := *b.c
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.PostForm(u, v)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
		t.Fatalf("consent: %d", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}
