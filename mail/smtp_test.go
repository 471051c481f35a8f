package mail

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/compliance-appliance/compliance/app"
)

// The tests run a real SMTP server in process (github.com/emersion/go-smtp)
// on loopback: STARTTLS or implicit TLS with a test CA, PLAIN
// authentication, and recipients it refuses.

type received struct {
	From, To string
	Data     string
	TLS      bool
}

type smtpServer struct {
	srv  *smtp.Server
	addr string
	mu   sync.Mutex
	msgs []received
}

type serverOpts struct {
	implicit bool   // TLS from the first byte instead of STARTTLS
	user     string // empty: no authentication offered
	pass     string
	refuse   string // a recipient answered with 550
	addr     string // listen here (a fixed port for a restarted server)
	cert     *tls.Certificate
	pool     *x509.CertPool
}

func (s *smtpServer) messages() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.msgs...)
}

type session struct {
	s      *smtpServer
	o      serverOpts
	conn   *smtp.Conn
	authed bool
	cur    received
}

func (x *session) AuthMechanisms() []string {
	if x.o.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (x *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != x.o.user || pass != x.o.pass {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
		}
		x.authed = true
		return nil
	}), nil
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	if x.o.user != "" && !x.authed {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	}
	_, tlsOn := x.conn.TLSConnectionState()
	x.cur = received{From: from, TLS: tlsOn}
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if to == x.o.refuse {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user"}
	}
	x.cur.To = to
	return nil
}

func (x *session) Data(r io.Reader) error {
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

func (x *session) Reset()        { x.cur = received{} }
func (x *session) Logout() error { return nil }

// startSMTP starts a server; the returned pool trusts its certificate.
func startSMTP(t *testing.T, o serverOpts) (*smtpServer, *x509.CertPool) {
	t.Helper()
	cert, pool := testCert(t)
	if o.cert != nil {
		cert, pool = *o.cert, o.pool
	}
	s := &smtpServer{}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{s: s, o: o, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	addr := o.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var l net.Listener
	var err error
	if o.implicit {
		l, err = tls.Listen("tcp", addr, srv.TLSConfig)
	} else {
		l, err = net.Listen("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	s.srv, s.addr = srv, l.Addr().String()
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s, pool
}

func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
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
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

func hostPort(t *testing.T, addr string) (string, int) {
	t.Helper()
	h, p, _ := net.SplitHostPort(addr)
	port := 0
	for _, c := range p {
		port = port*10 + int(c-'0')
	}
	return h, port
}

func client(t *testing.T, s *smtpServer, pool *x509.CertPool, mode, user, pass string) *Client {
	t.Helper()
	host, port := hostPort(t, s.addr)
	c, err := New(Config{Host: host, Port: port, TLS: mode, Username: user, Password: pass, From: "Compliance <compliance@acme.test>",
		RootCAs: pool, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSendStartTLSWithAuth(t *testing.T) {
	t.Parallel()
	s, pool := startSMTP(t, serverOpts{user: "mailer", pass: "s3cret"})
	c := client(t, s, pool, TLSStartTLS, "mailer", "s3cret")
	err := c.Send(context.Background(), app.MailMessage{ID: "eml_01TEST", To: "alice@acme.test", Subject: "Evidence expires in 30 days",
		Text: "The evidence expires on 2026-12-25.", HTML: "<p>The evidence expires on <b>2026-12-25</b>.</p>"})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	msgs := s.messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages received", len(msgs))
	}
	m := msgs[0]
	if !m.TLS || m.From != "compliance@acme.test" || m.To != "alice@acme.test" {
		t.Fatalf("envelope %+v", m)
	}
	for _, want := range []string{"Subject: Evidence expires in 30 days", "To: <alice@acme.test>", `From: "Compliance" <compliance@acme.test>`,
		"Message-ID: <eml_01TEST@acme.test>", "Auto-Submitted: auto-generated", "multipart/alternative", "text/plain", "text/html",
		"The evidence expires on 2026-12-25."} {
		if !strings.Contains(m.Data, want) {
			t.Errorf("message lacks %q:\n%s", want, m.Data)
		}
	}
}

func TestSendImplicitTLS(t *testing.T) {
	t.Parallel()
	s, pool := startSMTP(t, serverOpts{implicit: true})
	if err := client(t, s, pool, TLSImplicit, "", "").Send(context.Background(), app.MailMessage{To: "bob@acme.test", Subject: "Hi", Text: "x"}); err != nil {
		t.Fatalf("send: %v", err)
	}
	if m := s.messages(); len(m) != 1 || !m[0].TLS {
		t.Fatalf("received %+v", m)
	}
}

// Refusals the server gives with 5xx are permanent; an untrusted
// certificate or a server that is down are not (a later attempt may work
// after the operator fixes the configuration or the server comes back).
func TestSendFailures(t *testing.T) {
	t.Parallel()
	s, pool := startSMTP(t, serverOpts{user: "mailer", pass: "s3cret", refuse: "nobody@acme.test"})
	cases := []struct {
		name string
		c    *Client
		to   string
		perm bool
		want string
	}{
		{"wrong password", client(t, s, pool, TLSStartTLS, "mailer", "wrong"), "alice@acme.test", true, "535"},
		{"refused recipient", client(t, s, pool, TLSStartTLS, "mailer", "s3cret"), "nobody@acme.test", true, "550"},
		{"untrusted certificate", client(t, s, x509.NewCertPool(), TLSStartTLS, "mailer", "s3cret"), "alice@acme.test", false, "certificate"},
	}
	for _, tc := range cases {
		err := tc.c.Send(context.Background(), app.MailMessage{To: tc.to, Subject: "x", Text: "x"})
		var pe app.PermanentMailError
		if err == nil || !errors.As(err, &pe) || pe.Permanent() != tc.perm || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want permanent=%v containing %q", tc.name, err, tc.perm, tc.want)
		}
		if strings.Contains(fmtErr(err), "s3cret") {
			t.Errorf("%s: the error shows the password: %v", tc.name, err)
		}
	}
	if n := len(s.messages()); n != 0 {
		t.Fatalf("%d messages delivered despite the failures", n)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{From: "a@b.test"}, "smtp_host"},
		{Config{Host: "mx"}, "mail.from"},
		{Config{Host: "mx", From: "not an address"}, "mail.from"},
		{Config{Host: "mx", From: "a@b.test", TLS: "ssl3"}, "mail.tls"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error about %s", tc.cfg, err, tc.want)
		}
	}
}
