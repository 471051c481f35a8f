package https

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/outbound"
)

type sink struct {
	mu  sync.Mutex
	out map[string]app.CheckOutcome // check -> outcome (one URL per test)
}

func (s *sink) Outcome(o app.CheckOutcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out[o.CheckID] = o
}
func (s *sink) Log(string, string) {}

func goodHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// serve starts a TLS server with cfg's versions and certificate (nil: the
// httptest certificate) and returns its URL and a provider trusting it.
func serve(t *testing.T, handler http.HandlerFunc, cfg *tls.Config, cert *x509.Certificate) (string, *Provider) {
	t.Helper()
	srv := httptest.NewUnstartedServer(handler)
	if cfg != nil {
		srv.TLS = cfg
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	if cert == nil {
		cert = srv.Certificate()
	}
	pool.AddCert(cert)
	c, err := outbound.New(outbound.Options{TLSConfig: &tls.Config{RootCAs: pool}, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return srv.URL, New(c)
}

func run(t *testing.T, p *Provider, url string) map[string]app.CheckOutcome {
	t.Helper()
	s := &sink{out: map[string]app.CheckOutcome{}}
	if err := p.Run(context.Background(), app.ConnectionTarget{Variables: map[string]string{"urls": url}}, nil, s); err != nil {
		t.Fatal(err)
	}
	return s.out
}

func want(t *testing.T, out map[string]app.CheckOutcome, check, status string) {
	t.Helper()
	o, ok := out[check]
	if !ok {
		t.Fatalf("%s: no outcome (%v)", check, out)
	}
	if o.Status != status {
		t.Fatalf("%s: %s (%s), want %s", check, o.Status, o.Message, status)
	}
}

func TestGoodEndpoint(t *testing.T) {
	url, p := serve(t, func(w http.ResponseWriter, r *http.Request) { goodHeaders(w) }, &tls.Config{MinVersion: tls.VersionTLS12}, nil)
	out := run(t, p, url)
	for _, c := range []string{CheckTLSVersion, CheckCertificate, CheckHostname, CheckExpiry, CheckHSTS, CheckHeaders} {
		want(t, out, c, app.CheckPass)
	}
	if out[CheckTLSVersion].ResourceID != url || out[CheckTLSVersion].ResourceType != "url" {
		t.Fatalf("resource %+v", out[CheckTLSVersion])
	}
	if res := p.Test(context.Background(), app.ConnectionTarget{Variables: map[string]string{"urls": url}}); !res.Success {
		t.Fatalf("test %+v", res)
	}
}

func TestMissingHeaders(t *testing.T) {
	url, p := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=86400")
		w.Header().Set("X-Frame-Options", "DENY")
	}, &tls.Config{MinVersion: tls.VersionTLS12}, nil)
	out := run(t, p, url)
	want(t, out, CheckHSTS, app.CheckFail)
	want(t, out, CheckHeaders, app.CheckFail)
	msg := out[CheckHeaders].Message
	if !strings.Contains(msg, "Content-Security-Policy") || !strings.Contains(msg, "Referrer-Policy") || strings.Contains(msg, "X-Frame-Options") {
		t.Fatalf("headers message %q", msg)
	}
}

func TestWrongHost(t *testing.T) {
	url, p := serve(t, func(w http.ResponseWriter, r *http.Request) { goodHeaders(w) }, &tls.Config{MinVersion: tls.VersionTLS12}, nil)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(url, "https://"))
	out := run(t, p, "https://localhost:"+port) // the test certificate names example.com and 127.0.0.1
	want(t, out, CheckHostname, app.CheckFail)
	want(t, out, CheckCertificate, app.CheckPass)
	want(t, out, CheckHeaders, app.CheckError) // no trusted connection to read them over
}

func TestLegacyTLSOnly(t *testing.T) {
	url, p := serve(t, func(w http.ResponseWriter, r *http.Request) { goodHeaders(w) },
		&tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS10}, nil)
	out := run(t, p, url)
	want(t, out, CheckTLSVersion, app.CheckFail)
	if !strings.Contains(out[CheckTLSVersion].Message, "TLS 1.0") {
		t.Fatalf("message %q", out[CheckTLSVersion].Message)
	}
	want(t, out, CheckCertificate, app.CheckError)
}

func TestLegacyTLSAlsoAccepted(t *testing.T) {
	url, p := serve(t, func(w http.ResponseWriter, r *http.Request) { goodHeaders(w) },
		&tls.Config{MinVersion: tls.VersionTLS10}, nil)
	out := run(t, p, url)
	want(t, out, CheckTLSVersion, app.CheckFail)
	want(t, out, CheckCertificate, app.CheckPass)
}

func TestExpiredCertificate(t *testing.T) {
	cert, key := selfSigned(t, time.Now().Add(-60*24*time.Hour), time.Now().Add(-24*time.Hour))
	tlsCert := tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key}
	url, p := serve(t, func(w http.ResponseWriter, r *http.Request) { goodHeaders(w) },
		&tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{tlsCert}}, cert)
	out := run(t, p, url)
	want(t, out, CheckExpiry, app.CheckFail)
	want(t, out, CheckCertificate, app.CheckFail)
	if !strings.Contains(out[CheckExpiry].Message, "expired") {
		t.Fatalf("message %q", out[CheckExpiry].Message)
	}
}

func TestExpiringSoon(t *testing.T) {
	cert, key := selfSigned(t, time.Now().Add(-24*time.Hour), time.Now().Add(7*24*time.Hour))
	tlsCert := tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key}
	url, p := serve(t, func(w http.ResponseWriter, r *http.Request) { goodHeaders(w) },
		&tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{tlsCert}}, cert)
	out := run(t, p, url)
	want(t, out, CheckExpiry, app.CheckFail)
	want(t, out, CheckCertificate, app.CheckPass)
}

func TestPlainHTTPAndUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { goodHeaders(w) }))
	defer srv.Close()
	c, _ := outbound.New(outbound.Options{MaxRetries: -1})
	p := New(c)
	out := run(t, p, srv.URL)
	want(t, out, CheckTLSVersion, app.CheckFail)
	want(t, out, CheckHeaders, app.CheckPass)
	if err := p.Run(context.Background(), app.ConnectionTarget{Variables: map[string]string{}}, nil, &sink{out: map[string]app.CheckOutcome{}}); err == nil {
		t.Fatal("a run without URLs succeeded")
	}
	if res := p.Test(context.Background(), app.ConnectionTarget{Variables: map[string]string{"urls": "https://127.0.0.1:1"}}); res.Success {
		t.Fatalf("unreachable test %+v", res)
	}
}

// TestEvidencesResolve: every check's requirement references name a
// requirement of the built-in catalog.
func TestEvidencesResolve(t *testing.T) {
	cat, err := app.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range definition.Checks {
		if len(c.Evidences) == 0 {
			t.Errorf("%s maps to no requirement", c.ID)
		}
		ve := app.NewValidationError()
		cat.ValidateRequirementRefs(ve, c.ID, c.Evidences)
		if !ve.Empty() {
			t.Errorf("%s: %v", c.ID, ve.Fields)
		}
		if direct, _ := cat.ResolveRequirementRefs(c.Evidences); len(direct) < len(c.Evidences) {
			t.Errorf("%s resolves to %d requirements for %d refs", c.ID, len(direct), len(c.Evidences))
		}
		if !strings.HasPrefix(c.ID, "https.") {
			t.Errorf("check id %s", c.ID)
		}
	}
}

func selfSigned(t *testing.T, notBefore, notAfter time.Time) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(42), Subject: pkix.Name{CommonName: "test"},
		NotBefore: notBefore, NotAfter: notAfter, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}
