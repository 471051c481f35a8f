package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// newProxiedServer is newTestServer behind a reverse proxy: trusted_proxies
// lists 10.0.0.0/8.
func newProxiedServer(t *testing.T) *testEnv {
	t.Helper()
	return newTestServerWith(t, func(o *Options) { o.TrustedProxies = []string{"10.0.0.0/8"} })
}

// from sends a request as if from peer, with an X-Forwarded-For header
// when xff is not empty.
func (e *testEnv) from(peer, xff, method, path, contentType string, body []byte) *httptest.ResponseRecorder {
	e.t.Helper()
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.RemoteAddr = peer + ":40000"
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	if xff != "" {
		r.Header.Set("X-Forwarded-For", xff)
	}
	r.Header.Set("User-Agent", "proxy-test")
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, r)
	return rec
}

// TestTrustRecordsClientBehindProxy: access requests (JSON and the HTML
// form), NDA signatures, public downloads and the anonymous rate limit see
// the client a trusted proxy forwarded, and only a trusted proxy's header
// is believed.
func TestTrustRecordsClientBehindProxy(t *testing.T) {
	t.Parallel()
	e := newProxiedServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	enablePortal(t, e, admin, "acme")
	rec := e.uploadField("/v1/trust-portal/documents", admin, "file", "letter.pdf", []byte("%PDF letter"), "name", "Bridge letter", "access", "public")
	wantStatus(t, rec, http.StatusCreated)
	doc := obj(t, rec)["id"].(string)

	reqJSON := func(peer, xff, email string) map[string]any {
		body, _ := json.Marshal(map[string]any{"name": "Bob Buyer", "email": email, "company": "Customer Ltd"})
		rec := e.from(peer, xff, "POST", "/v1/trust-access/acme/requests", "application/json", body)
		wantStatus(t, rec, http.StatusCreated)
		return obj(t, rec)
	}
	// Through the proxy, with a client-supplied hop before the real one:
	// the right-most address that is not a trusted proxy counts.
	viaProxy := reqJSON("10.1.2.3", "198.51.100.66, 203.0.113.7, 10.9.9.9", "bob@customer.test")
	// A client that is not a proxy cannot claim another address.
	reqJSON("192.0.2.44", "203.0.113.99", "eve@customer.test")
	// The HTML form goes through the same rule.
	rec = e.from("10.1.2.3", "203.0.113.8", "POST", "/trust/acme/request", "application/x-www-form-urlencoded",
		[]byte(url.Values{"name": {"Carol"}, "email": {"carol@customer.test"}}.Encode()))
	wantStatus(t, rec, http.StatusCreated)

	rec = e.do("GET", "/v1/trust-access/admin/requests?perPage=10", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	ips := map[string]string{}
	for _, it := range obj(t, rec)["data"].([]any) {
		m := it.(map[string]any)
		ips[m["email"].(string)] = m["ipAddress"].(string)
	}
	if ips["bob@customer.test"] != "203.0.113.7" || ips["eve@customer.test"] != "192.0.2.44" || ips["carol@customer.test"] != "203.0.113.8" {
		t.Fatalf("recorded addresses: %v", ips)
	}

	// The NDA signature records the forwarded client.
	body, _ := json.Marshal(map[string]any{"name": "Bob Buyer", "email": "bob@customer.test", "accept": true})
	wantStatus(t, e.from("10.1.2.3", "203.0.113.7", "POST", "/v1/trust-access/nda/"+viaProxy["token"].(string)+"/sign", "application/json", body), http.StatusOK)
	rec = e.do("GET", "/v1/trust-portal/nda-signatories", admin, nil)
	wantStatus(t, rec, http.StatusOK)
	sigs := obj(t, rec)["data"].([]any)
	if len(sigs) != 1 || sigs[0].(map[string]any)["ipAddress"] != "203.0.113.7" {
		t.Fatalf("NDA signature: %v", sigs)
	}

	// A public download is logged with the forwarded client.
	wantStatus(t, e.from("10.1.2.3", "203.0.113.21", "GET", "/v1/trust/acme/documents/"+doc, "", nil), http.StatusOK)
	rec = e.do("GET", "/v1/trust-access/admin/downloads", admin, nil)
	dl := obj(t, rec)["data"].([]any)
	if len(dl) != 1 || dl[0].(map[string]any)["ipAddress"] != "203.0.113.21" {
		t.Fatalf("download log: %v", dl)
	}

	// The anonymous rate limit counts each forwarded client on its own,
	// not the proxy as one client.
	remaining := func(peer, xff string) int {
		rec := e.from(peer, xff, "GET", "/v1/trust/acme", "", nil)
		wantStatus(t, rec, http.StatusOK)
		n, err := strconv.Atoi(rec.Header()[httpx.HeaderRateRemaining][0])
		if err != nil {
			t.Fatalf("remaining header: %v", rec.Header())
		}
		return n
	}
	first := remaining("10.1.2.3", "203.0.113.50")
	if second := remaining("10.1.2.3", "203.0.113.50"); second != first-1 {
		t.Fatalf("the same client's remaining: %d then %d", first, second)
	}
	if other := remaining("10.1.2.3", "203.0.113.51"); other != first {
		t.Fatalf("another client behind the proxy shares a bucket: remaining %d, want %d", other, first)
	}
	// Without a trusted proxy in front, X-Forwarded-For changes nothing.
	a, b := remaining("192.0.2.80", "203.0.113.60"), remaining("192.0.2.80", "203.0.113.61")
	if b != a-1 {
		t.Fatalf("an untrusted peer's header split its bucket: %d then %d", a, b)
	}
}
