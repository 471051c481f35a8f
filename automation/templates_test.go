package automation

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// runTemplate fills a template, runs it against the test server and
// applies its criteria.
func runTemplate(t *testing.T, srv *httptest.Server, id string, params map[string]string, secret func(context.Context, string, string) (string, error)) (bool, string, app.ScriptOutcome) {
	t.Helper()
	script, hosts, err := app.InstantiateAutomationTemplate(id, params)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	r := New(testClient(t, srv))
	if err := r.Check(script); err != nil {
		t.Fatalf("%s does not compile: %v\n%s", id, err, script)
	}
	out := r.Run(context.Background(), app.ScriptJob{Script: script, Hosts: hosts, Secret: secret})
	if out.StopReason != "" {
		return false, out.Error, out
	}
	var criteria string
	for _, tpl := range app.AutomationTemplates {
		if tpl.ID == id {
			criteria = tpl.Criteria
		}
	}
	pass, reason, err := r.Evaluate(criteria, out.Result)
	if err != nil {
		t.Fatalf("%s criteria: %v (result %v)", id, err, out.Result)
	}
	return pass, reason, out
}

func TestTemplateTLSAndHeaders(t *testing.T) {
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
		_, _ = w.Write([]byte("ok"))
	}))
	defer secure.Close()
	pass, reason, out := runTemplate(t, secure, "tls-and-headers", map[string]string{"url": secure.URL + "/login"}, nil)
	if !pass || out.Result["certificate_valid"] != true || out.Result["tls_version"] != 1.3 || len(out.Evidence) != 1 {
		t.Fatalf("secure site: %v %s %v", pass, reason, out.Result)
	}
	bare := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer bare.Close()
	pass, _, out = runTemplate(t, bare, "tls-and-headers", map[string]string{"url": bare.URL}, nil)
	if pass || len(out.Result["missing_headers"].([]any)) != 3 {
		t.Fatalf("bare site passed: %v", out.Result)
	}
}

func TestTemplateGitLabProtectedBranches(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("PRIVATE-TOKEN") != "glpat-test" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.EscapedPath() {
		case "/api/v4/projects/acme%2Fweb/protected_branches":
			_, _ = w.Write([]byte(`[{"name": "main", "allow_force_push": false, "push_access_levels": [{"access_level": 40}]}]`))
		case "/api/v4/projects/acme%2Fapi/protected_branches":
			_, _ = w.Write([]byte(`[{"name": "main", "allow_force_push": true}]`))
		default:
			_, _ = w.Write([]byte(`[]`))
		}
	}))
	defer srv.Close()
	secret := func(_ context.Context, conn, field string) (string, error) {
		if conn == "icn_gitlab" && field == "token" {
			return "glpat-test", nil
		}
		return "", errors.New("no such connection")
	}
	cases := []struct {
		project string
		pass    bool
	}{{"acme/web", true}, {"acme/api", false}, {"acme/docs", false}}
	for _, c := range cases {
		pass, reason, out := runTemplate(t, srv, "gitlab-protected-branches", map[string]string{"baseUrl": srv.URL, "project": c.project, "connectionId": "icn_gitlab"}, secret)
		if pass != c.pass {
			t.Errorf("%s: pass=%v (%s) %v", c.project, pass, reason, out.Result)
		}
	}
	_, reason, out := runTemplate(t, srv, "gitlab-protected-branches", map[string]string{"baseUrl": srv.URL, "project": "acme/web", "connectionId": "icn_other"}, secret)
	if out.StopReason != StopError || !strings.Contains(reason, "no such connection") {
		t.Fatalf("unknown connection: %s %s", out.StopReason, reason)
	}
}

func TestTemplateHTTPJSONField(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("b") != "2" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(`{"settings": {"mfa": {"required": true}, "methods": ["totp", "webauthn"], "mode": "strict"}}`))
	}))
	defer srv.Close()
	cases := []struct {
		field, expected string
		pass            bool
	}{
		{"settings.mfa.required", "true", true},
		{"settings.mfa.required", "false", false},
		{"settings.methods.1", "webauthn", true},
		{"settings.mode", "strict", true},
		{"settings.missing", "x", false},
	}
	for _, c := range cases {
		pass, reason, _ := runTemplate(t, srv, "http-json-field", map[string]string{"url": srv.URL + "/cfg?a=1&b=2", "field": c.field, "expected": c.expected}, nil)
		if pass != c.pass {
			t.Errorf("%s == %s: pass=%v (%s)", c.field, c.expected, pass, reason)
		}
	}
}

func TestTemplateCertificateExpiry(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "https://")
	pass, reason, out := runTemplate(t, srv, "certificate-expiry", map[string]string{"host": host}, nil)
	if !pass || out.Result["min_days"] != float64(30) {
		t.Fatalf("valid certificate: %v %s %v", pass, reason, out.Result)
	}
	if pass, _, _ = runTemplate(t, srv, "certificate-expiry", map[string]string{"host": host, "minDays": "100000"}, nil); pass {
		t.Fatal("a certificate with fewer days left than required passed")
	}
	// Against a client that does not trust the test CA, the certificate
	// does not verify and the template fails.
	script, hosts, _ := app.InstantiateAutomationTemplate("certificate-expiry", map[string]string{"host": host})
	r := New(testClient(t, nil))
	out = r.Run(context.Background(), app.ScriptJob{Script: script, Hosts: hosts})
	if ok, _, err := r.Evaluate(`result["verified"]`, out.Result); err != nil || ok {
		t.Fatalf("untrusted certificate verified: %v %v", out.Result, err)
	}
}

func TestTemplateParametersValidated(t *testing.T) {
	cases := []struct {
		id     string
		params map[string]string
		field  string
	}{
		{"nope", nil, "templateId"},
		{"certificate-expiry", map[string]string{"host": "bad host:443"}, "parameters.host"},
		{"certificate-expiry", map[string]string{"host": "a.example.com", "minDays": "-3"}, "parameters.minDays"},
		{"gitlab-protected-branches", map[string]string{"baseUrl": "https://gitlab.example.com", "project": "a/b"}, "parameters.connectionId"},
	}
	for _, c := range cases {
		_, _, err := app.InstantiateAutomationTemplate(c.id, c.params)
		var ve *app.ValidationError
		if !errors.As(err, &ve) || ve.Fields[c.field] == "" {
			t.Errorf("%s %v: err = %v, want field %s", c.id, c.params, err, c.field)
		}
	}
	// A quote in a value stays inside the string literal.
	script, _, err := app.InstantiateAutomationTemplate("http-json-field", map[string]string{"url": "https://a.example.com/", "field": `x")` + "\nfail(\"injected", "expected": "y"})
	if err != nil {
		t.Fatal(err)
	}
	if err := New(nil).Check(script); err != nil || strings.Count(script, "\nfail(") != 0 {
		t.Fatalf("parameter escaped its literal: %v\n%s", err, script)
	}
}
