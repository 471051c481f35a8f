package main

import (
	"bytes"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-smtp"
)

// memBackend is an SMTP server keeping what it receives.
type memBackend struct {
	mu   sync.Mutex
	rcpt []string
	data []string
}

type memSession struct {
	b  *memBackend
	to string
}

func (s *memSession) Reset()                                    {}
func (s *memSession) Logout() error                             { return nil }
func (s *memSession) Mail(string, *smtp.MailOptions) error      { return nil }
func (s *memSession) Rcpt(to string, _ *smtp.RcptOptions) error { s.to = to; return nil }
func (s *memSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	s.b.mu.Lock()
	s.b.rcpt, s.b.data = append(s.b.rcpt, s.to), append(s.b.data, string(b))
	s.b.mu.Unlock()
	return err
}

// `compliance mail test` says when mail is not configured, and with a
// server configured through the environment sends one message through it
// and lists it as sent.
func TestMailCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, errOut, err := cliResult(t, dir, "mail", "test", "--to", "ops@acme.test"); err == nil || !strings.Contains(errOut, "mail is not configured") {
		t.Fatalf("without a server: err %v, stderr %s", err, errOut)
	}

	b := &memBackend{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &memSession{b: b}, nil }))
	srv.Domain = "localhost"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	_, port, _ := net.SplitHostPort(l.Addr().String())

	run := func(args ...string) string {
		cmd := exec.Command(binary(t), append([]string{"--data-dir", dir}, args...)...)
		cmd.Env = append(cleanEnv(), "COMPLIANCE_MAIL_SMTP_HOST=127.0.0.1", "COMPLIANCE_MAIL_SMTP_PORT="+port,
			"COMPLIANCE_MAIL_TLS=none", "COMPLIANCE_MAIL_FROM=Compliance <compliance@acme.test>")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("compliance %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String()
	}
	if out := run("mail", "test", "--to", "ops@acme.test"); !strings.HasPrefix(out, "sent eml_") {
		t.Fatalf("mail test: %q", out)
	}
	b.mu.Lock()
	if len(b.rcpt) != 1 || b.rcpt[0] != "ops@acme.test" || !strings.Contains(b.data[0], "Subject: Test message from the compliance appliance") {
		t.Errorf("server received %v %v", b.rcpt, b.data)
	}
	b.mu.Unlock()
	if out := run("mail", "list"); !strings.Contains(out, "ops@acme.test") || !strings.Contains(out, "sent") {
		t.Errorf("mail list: %s", out)
	}
}
