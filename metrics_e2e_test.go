package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scrapeMetrics fetches url with an optional bearer token.
func scrapeMetrics(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetricsEndpoints: /metrics is off by default; with metrics_token it
// is served on the main listener behind the token; with metrics_addr on an
// address of its own. The exposition counts the requests served.
func TestMetricsEndpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	const token = "metrics-token-0123456789"
	dir := t.TempDir()
	plain := serve(t, filepath.Join(dir, "plain"))
	if code, _ := scrapeMetrics(t, plain.url+"/metrics", ""); code != http.StatusNotFound {
		t.Fatalf("metrics must be off by default: %d", code)
	}

	cfg := filepath.Join(dir, "token.yaml")
	if err := os.WriteFile(cfg, []byte("metrics_token: "+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := serve(t, filepath.Join(dir, "token"), "--config", cfg)
	if code, _ := s.request(t, "GET", "/v1/health", "", nil); code != http.StatusOK {
		t.Fatalf("health %d", code)
	}
	if code, body := scrapeMetrics(t, s.url+"/metrics", ""); code != http.StatusUnauthorized || strings.Contains(body, "compliance_") {
		t.Fatalf("without the token: %d %s", code, body)
	}
	code, body := scrapeMetrics(t, s.url+"/metrics", token)
	if code != http.StatusOK {
		t.Fatalf("with the token: %d", code)
	}
	for _, want := range []string{`compliance_build_info{version=`, `compliance_http_request_duration_seconds_count{method="GET",route="/v1/health",status="200"} 1`,
		`compliance_webhook_queue_deliveries{status="pending"} 0`, `compliance_db_pool_waits_total{pool="writer"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}

	addr := freeAddr(t)
	cfg = filepath.Join(dir, "addr.yaml")
	if err := os.WriteFile(cfg, []byte("metrics_addr: "+addr+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s = serve(t, filepath.Join(dir, "addr"), "--config", cfg)
	if code, _ := scrapeMetrics(t, s.url+"/metrics", ""); code != http.StatusNotFound {
		t.Fatalf("with metrics_addr the main listener does not serve /metrics: %d", code)
	}
	waitFor(t, "the metrics listener", func() bool {
		code, body := scrapeMetrics(t, "http://"+addr+"/metrics", "")
		return code == http.StatusOK && strings.Contains(body, "compliance_build_info")
	})
}
