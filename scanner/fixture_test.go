package scanner

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// fixture serves deliberately weak targets and a hardened one on loopback.
type fixture struct {
	roots    *x509.CertPool
	weakHTTP *httptest.Server // plain HTTP with every web weakness planted
	selfTLS  *httptest.Server // TLS 1.0, weak suites, self-signed certificate
	oldTLS   *httptest.Server // certificate expired, signed by the test CA
	hardened *httptest.Server // TLS 1.2+, CA-signed, every header, catch-all 200 pages
}

type certKey struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCert(t testing.TB, parent *certKey, cn string, names []string, notBefore, notAfter time.Time, ca bool) *certKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn}, NotBefore: notBefore, NotAfter: notAfter,
		DNSNames: names, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: ca}
	signer, signKey := tpl, key
	if parent != nil {
		signer, signKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &certKey{cert: c, key: key}
}

func (c *certKey) tls() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{c.cert.Raw}, PrivateKey: c.key, Leaf: c.cert}
}

const gitHeadBody = "ref: refs/heads/main\n"

func weakHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "Apache/2.4.29 (Ubuntu)")
		w.Header().Set("X-Powered-By", "PHP/5.6.40")
		if o := r.Header.Get("Origin"); o != "" {
			w.Header().Set("Access-Control-Allow-Origin", o)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
		}
		if r.Method == "TRACE" {
			w.Header().Set("Content-Type", "message/http")
			fmt.Fprintf(w, "TRACE %s HTTP/1.1\r\n", r.URL.RequestURI())
			for k, v := range r.Header {
				fmt.Fprintf(w, "%s: %s\r\n", k, strings.Join(v, ","))
			}
			return
		}
		if strings.Contains(r.URL.RawQuery, "%27") {
			w.WriteHeader(500)
			fmt.Fprint(w, "<pre>Traceback (most recent call last):\n  File \"app.py\", line 12, in view\nValueError</pre>")
			return
		}
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc"})
		fmt.Fprint(w, "<html><body><h1>It works!</h1></body></html>")
	})
	mux.HandleFunc("/.git/HEAD", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, gitHeadBody) })
	mux.HandleFunc("/.env", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "DB_PASSWORD=hunter2\nAPP_KEY=base64:xyz\n")
	})
	mux.HandleFunc("/files/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><head><title>Index of /files</title></head><body><h1>Index of /files</h1><a href=\"a.txt\">a.txt</a></body></html>")
	})
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		if n := r.URL.Query().Get("next"); n != "" {
			http.Redirect(w, r, n, http.StatusFound)
			return
		}
		fmt.Fprint(w, "login")
	})
	return mux
}

// hardenedHandler answers every path with the same 200 page (a single-page
// application's catch-all), the strictest headers, and safe redirects.
func hardenedHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Server", "nginx")
		h.Set("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
		if r.Header.Get("Origin") == "https://app.hardened.test" {
			h.Set("Access-Control-Allow-Origin", "https://app.hardened.test")
			h.Set("Access-Control-Allow-Credentials", "true")
		}
		if r.Method == "TRACE" {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if n := r.URL.Query().Get("next"); n != "" && strings.HasPrefix(n, "/") && !strings.HasPrefix(n, "//") {
			http.Redirect(w, r, n, http.StatusFound)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc", Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
		fmt.Fprintf(w, "<!doctype html><html><head><title>App</title><script src=\"/app.js\"></script></head><body><div id=app>%s</div></body></html>",
			"Loading")
	})
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	now := time.Now()
	ca := newCert(t, nil, "Fixture CA", nil, now.Add(-time.Hour), now.Add(24*time.Hour*365), true)
	f := &fixture{roots: x509.NewCertPool()}
	f.roots.AddCert(ca.cert)

	f.weakHTTP = httptest.NewServer(weakHandler())
	t.Cleanup(f.weakHTTP.Close)

	self := newCert(t, nil, "weak.test", []string{"weak.test"}, now.Add(-time.Hour), now.Add(24*time.Hour*365), false)
	f.selfTLS = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	f.selfTLS.TLS = &tls.Config{Certificates: []tls.Certificate{self.tls()}, MinVersion: tls.VersionTLS10,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}
	f.selfTLS.Config.ErrorLog = log.New(io.Discard, "", 0)
	f.selfTLS.StartTLS()
	t.Cleanup(f.selfTLS.Close)

	old := newCert(t, ca, "old.test", []string{"old.test"}, now.Add(-60*24*time.Hour), now.Add(-24*time.Hour), false)
	f.oldTLS = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	f.oldTLS.TLS = &tls.Config{Certificates: []tls.Certificate{old.tls()}, MinVersion: tls.VersionTLS12}
	f.oldTLS.Config.ErrorLog = log.New(io.Discard, "", 0)
	f.oldTLS.StartTLS()
	t.Cleanup(f.oldTLS.Close)

	good := newCert(t, ca, "hardened.test", []string{"hardened.test"}, now.Add(-time.Hour), now.Add(24*time.Hour*200), false)
	f.hardened = httptest.NewUnstartedServer(hardenedHandler())
	f.hardened.TLS = &tls.Config{Certificates: []tls.Certificate{good.tls()}, MinVersion: tls.VersionTLS12}
	f.hardened.Config.ErrorLog = log.New(io.Discard, "", 0)
	f.hardened.StartTLS()
	t.Cleanup(f.hardened.Close)
	return f
}

// port returns a test server's port.
func port(s *httptest.Server) int { return s.Listener.Addr().(*net.TCPAddr).Port }

// url returns the server's URL under a host name the fixture resolver knows.
func hostURL(s *httptest.Server, host string) string {
	scheme := "http"
	if s.TLS != nil {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s:%d/", scheme, host, port(s))
}

// names maps the fixture's host names to loopback.
var names = map[string][]netip.Addr{
	"weak.test":      {netip.MustParseAddr("127.0.0.1")},
	"old.test":       {netip.MustParseAddr("127.0.0.1")},
	"hardened.test":  {netip.MustParseAddr("127.0.0.1")},
	"rebind.test":    {netip.MustParseAddr("169.254.169.254")},
	"elsewhere.test": {netip.MustParseAddr("10.255.255.1")},
}

func lookup(_ context.Context, host string) ([]netip.Addr, error) {
	if a, ok := names[host]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

// scanner scans only the given fixture servers' ports (the machine running
// the tests has other listeners).
func (f *fixture) scanner(servers ...*httptest.Server) *Scanner {
	return New(Options{LookupIP: lookup, RootCAs: f.roots, Ports: func(string) []int {
		var out []int
		for _, s := range servers {
			out = append(out, port(s))
		}
		return out
	}})
}
