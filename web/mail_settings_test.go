package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/mail"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// A real SMTP server in process (github.com/emersion/go-smtp, as the mail
// adapter's tests use) on loopback: STARTTLS with a test CA and PLAIN
// authentication.

type testSMTP struct {
	addr string
	user string
	pass string
	mu   sync.Mutex
	msgs []testSMTPMsg
}

type testSMTPMsg struct {
	To, Data string
	TLS      bool
}

func (s *testSMTP) messages() []testSMTPMsg {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]testSMTPMsg(nil), s.msgs...)
}

func (s *testSMTP) port() int {
	_, p, _ := net.SplitHostPort(s.addr)
	n, _ := strconv.Atoi(p)
	return n
}

type testSMTPSession struct {
	s      *testSMTP
	conn   *smtp.Conn
	authed bool
	cur    testSMTPMsg
}

func (x *testSMTPSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (x *testSMTPSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != x.s.user || pass != x.s.pass {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
		}
		x.authed = true
		return nil
	}), nil
}

func (x *testSMTPSession) Mail(string, *smtp.MailOptions) error {
	if !x.authed {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	}
	_, tlsOn := x.conn.TLSConnectionState()
	x.cur = testSMTPMsg{TLS: tlsOn}
	return nil
}

func (x *testSMTPSession) Rcpt(to string, _ *smtp.RcptOptions) error { x.cur.To = to; return nil }

func (x *testSMTPSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.cur.Data = string(b)
	x.s.mu.Lock()
	x.s.msgs = append(x.s.msgs, x.cur)
	x.s.mu.Unlock()
	return nil
}

func (x *testSMTPSession) Reset()        { x.cur = testSMTPMsg{} }
func (x *testSMTPSession) Logout() error { return nil }

// startTestSMTP starts a STARTTLS server with PLAIN authentication; the
// pool trusts its certificate.
func startTestSMTP(t *testing.T, user, pass string) (*testSMTP, *x509.CertPool) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	s := &testSMTP{user: user, pass: pass}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &testSMTPSession{s: s, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}}}
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = l.Addr().String()
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s, pool
}

// withMailFactory wires the mail adapter in as main does, trusting pool.
func withMailFactory(a *app.App, pool *x509.CertPool) {
	a.SetMailerFactory(func(s app.MailSettings) (app.MailSender, error) {
		c, err := mail.New(mail.Config{Host: s.Host, Port: s.Port, TLS: s.TLS, Username: s.Username, Password: s.Password, From: s.From,
			RootCAs: pool, Timeout: 5 * time.Second})
		if err != nil {
			return nil, err
		}
		return c, nil
	}, nil)
}

// operatorEnv signs in an operator and an owner who is not one.
func operatorEnv(t *testing.T) (e *testEnv, org string, op, owner func(method, path string, body any) *httptest.ResponseRecorder) {
	e = newTestServer(t)
	org = e.org("Acme", "enterprise")
	e.withPassword(org, "ops@example.com", app.RoleAdmin)
	e.withPassword(org, "owner@example.com", app.RoleOwner)
	if _, err := e.app.GrantOperator(context.Background(), "ops@example.com"); err != nil {
		t.Fatal(err)
	}
	opCookie, opCSRF := e.login("ops@example.com")
	ownCookie, ownCSRF := e.login("owner@example.com")
	op = func(method, path string, body any) *httptest.ResponseRecorder {
		return e.do(method, path, "", body, "Cookie", opCookie, httpx.CSRFHeader, opCSRF)
	}
	owner = func(method, path string, body any) *httptest.ResponseRecorder {
		return e.do(method, path, "", body, "Cookie", ownCookie, httpx.CSRFHeader, ownCSRF)
	}
	return e, org, op, owner
}

func TestAdminMailSettingsAPI(t *testing.T) {
	t.Parallel()
	e, org, op, owner := operatorEnv(t)
	srv, pool := startTestSMTP(t, "mailer", "s3cret")
	withMailFactory(e.app, pool)

	// Only the operator: an owner's session and every key are 403.
	for _, r := range []struct{ method, path string }{{"GET", "/v1/admin/mail"}, {"PUT", "/v1/admin/mail"},
		{"DELETE", "/v1/admin/mail"}, {"POST", "/v1/admin/mail/test"}} {
		body := map[string]any{"smtpHost": "127.0.0.1", "from": "c@acme.test", "to": "x@acme.test"}
		wantError(t, owner(r.method, r.path, body), http.StatusForbidden, "forbidden")
		wantError(t, e.do(r.method, r.path, e.key(org, app.RoleOwner), body), http.StatusForbidden, "forbidden")
		wantError(t, e.do(r.method, r.path, e.key(org, app.RoleAuditor), body), http.StatusForbidden, "forbidden")
		wantError(t, e.do(r.method, r.path, "", body), http.StatusUnauthorized, "unauthorized")
	}

	// Not configured: it says so, and a test message is refused.
	got := obj(t, op("GET", "/v1/admin/mail", nil))
	if got["configured"] != false || got["source"] != "none" {
		t.Fatalf("unconfigured: %v", got)
	}
	wantError(t, op("POST", "/v1/admin/mail/test", map[string]any{"to": "alice@acme.test"}), http.StatusConflict, "conflict")

	// Bad input names the field.
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"from": "c@acme.test"}, "smtpHost"},
		{map[string]any{"smtpHost": "smtp.example.com", "tls": "none", "from": "c@acme.test"}, "tls"},
		{map[string]any{"smtpHost": "127.0.0.1", "tls": "ssl", "from": "c@acme.test"}, "tls"},
		{map[string]any{"smtpHost": "127.0.0.1", "smtpPort": 70000, "from": "c@acme.test"}, "smtpPort"},
		{map[string]any{"smtpHost": "127.0.0.1"}, "from"},
		{map[string]any{"smtpHost": "127.0.0.1", "from": "not an address"}, "from"},
		{map[string]any{"smtpHost": "smtp.example.com:25", "from": "c@acme.test"}, "smtpHost"},
	} {
		rec := op("PUT", "/v1/admin/mail", c.body)
		wantError(t, rec, http.StatusBadRequest, "validation_error")
		wantField(t, rec, c.field)
	}
	wantError(t, op("DELETE", "/v1/admin/mail", nil), http.StatusNotFound, "not_found")

	// Wrong password: saved, and the test shows the server's refusal.
	rec := op("PUT", "/v1/admin/mail", map[string]any{"smtpHost": "localhost", "smtpPort": srv.port(), "tls": "starttls",
		"username": "mailer", "password": "wrong", "from": "Compliance <compliance@acme.test>"})
	wantStatus(t, rec, http.StatusOK)
	got = obj(t, rec)
	if got["configured"] != true || got["source"] != "database" || got["hasPassword"] != true || got["username"] != "mailer" {
		t.Fatalf("saved: %v", got)
	}
	if strings.Contains(rec.Body.String(), "wrong") {
		t.Fatal("the password is returned")
	}
	rec = op("POST", "/v1/admin/mail/test", map[string]any{"to": "alice@acme.test"})
	wantStatus(t, rec, http.StatusOK)
	res := obj(t, rec)
	if res["sent"] != false || res["status"] != "failed" || !strings.Contains(res["message"].(string), "535") {
		t.Fatalf("auth failure: %v", res)
	}
	if n := len(srv.messages()); n != 0 {
		t.Fatalf("%d messages delivered with a wrong password", n)
	}
	got = obj(t, op("GET", "/v1/admin/mail", nil))
	outbox := got["outbox"].(map[string]any)
	if outbox["failed24h"] != float64(1) || !strings.Contains(outbox["lastError"].(string), "535") || outbox["lastErrorId"] != res["id"] {
		t.Fatalf("outbox after the failure: %v", outbox)
	}

	// The right password (username unchanged, password replaced): sent
	// over STARTTLS, received.
	rec = op("PUT", "/v1/admin/mail", map[string]any{"smtpHost": "localhost", "smtpPort": srv.port(),
		"username": "mailer", "password": "s3cret", "from": "Compliance <compliance@acme.test>"})
	wantStatus(t, rec, http.StatusOK)
	rec = op("POST", "/v1/admin/mail/test", map[string]any{"to": "alice@acme.test"})
	wantStatus(t, rec, http.StatusOK)
	res = obj(t, rec)
	if res["sent"] != true || res["status"] != "sent" {
		t.Fatalf("test message: %v", res)
	}
	msgs := srv.messages()
	if len(msgs) != 1 || msgs[0].To != "alice@acme.test" || !msgs[0].TLS || !strings.Contains(msgs[0].Data, "Subject: Test message from the compliance appliance") {
		t.Fatalf("received %+v", msgs)
	}
	// Saving again without a password keeps the stored one.
	wantStatus(t, op("PUT", "/v1/admin/mail", map[string]any{"smtpHost": "localhost", "smtpPort": srv.port(),
		"username": "mailer", "from": "Compliance <compliance@acme.test>"}), http.StatusOK)
	if res := obj(t, op("POST", "/v1/admin/mail/test", map[string]any{"to": "bob@acme.test"})); res["sent"] != true {
		t.Fatalf("after keeping the password: %v", res)
	}
	got = obj(t, op("GET", "/v1/admin/mail", nil))
	if o := got["outbox"].(map[string]any); o["sent24h"] != float64(2) || o["queued"] != float64(0) {
		t.Fatalf("outbox: %v", o)
	}
	// The database holds the password sealed, not in clear.
	var sealed []byte
	if err := e.db.Raw().QueryRow("SELECT sealed_password FROM mail_settings").Scan(&sealed); err != nil || len(sealed) == 0 {
		t.Fatalf("sealed password: %v", err)
	}
	if strings.Contains(string(sealed), "s3cret") {
		t.Fatal("the SMTP password is stored in clear")
	}
	// tls none is accepted for loopback.
	wantStatus(t, op("PUT", "/v1/admin/mail", map[string]any{"smtpHost": "127.0.0.1", "smtpPort": srv.port(), "tls": "none",
		"from": "compliance@acme.test"}), http.StatusOK)

	// Deleted: back to the configuration (none here).
	wantStatus(t, op("DELETE", "/v1/admin/mail", nil), http.StatusNoContent)
	if got := obj(t, op("GET", "/v1/admin/mail", nil)); got["configured"] != false || got["source"] != "none" {
		t.Fatalf("after delete: %v", got)
	}
	if _, err := e.app.QueueMail(context.Background(), "", "test", app.MailMessage{To: "a@acme.test", Subject: "x", Text: "y"}); err == nil {
		t.Fatal("mail queued with mail not configured")
	}
}
