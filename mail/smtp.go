// Package mail sends the appliance's e-mail through the SMTP server the
// operator configures, with STARTTLS or implicit TLS and authentication,
// using github.com/wneessen/go-mail for the message format and the SMTP
// conversation. It implements app.MailSender.
package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/compliance-appliance/compliance/app"
)

// TLS modes.
const (
	TLSStartTLS = "starttls" // plain connection upgraded with STARTTLS, which must succeed
	TLSImplicit = "implicit" // TLS from the first byte (SMTPS, usually port 465)
	TLSNone     = "none"     // no encryption: only for a relay on the same host or network
)

// Config is the SMTP server and the sender.
type Config struct {
	Host     string
	Port     int // 0: 587 for starttls, 465 for implicit, 25 for none
	TLS      string
	Username string // empty: no authentication
	Password string
	From     string // the From address, e.g. "Compliance <compliance@corp.example>"
	HELO     string // the name given in HELO/EHLO; empty: the library's default
	Timeout  time.Duration
	// RootCAs verifies the server's certificate; nil: the system's roots.
	RootCAs *x509.CertPool
	// Dialer connects to the server; it carries the outbound network
	// policy. nil: a plain dialer.
	Dialer *net.Dialer
}

// Client sends messages; it opens one SMTP connection per message.
type Client struct {
	cfg  Config
	opts []gomail.Option
}

var _ app.MailSender = (*Client)(nil)

// New checks the configuration and returns a client.
func New(cfg Config) (*Client, error) {
	cfg.Host = strings.TrimSpace(cfg.Host)
	if cfg.Host == "" {
		return nil, errors.New("mail.smtp_host is empty")
	}
	if cfg.From == "" {
		return nil, errors.New("mail.from is required when mail.smtp_host is set")
	}
	if _, err := parseFrom(cfg.From); err != nil {
		return nil, fmt.Errorf("mail.from: %w", err)
	}
	if cfg.TLS == "" {
		cfg.TLS = TLSStartTLS
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	tc := &tls.Config{ServerName: cfg.Host, RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
	opts := []gomail.Option{gomail.WithTimeout(cfg.Timeout), gomail.WithTLSConfig(tc)}
	switch cfg.TLS {
	case TLSStartTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory), gomail.WithPort(portOr(cfg.Port, 587)))
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL(), gomail.WithPort(portOr(cfg.Port, 465)))
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS), gomail.WithPort(portOr(cfg.Port, 25)))
	default:
		return nil, fmt.Errorf("mail.tls must be %s, %s or %s", TLSStartTLS, TLSImplicit, TLSNone)
	}
	if cfg.Username != "" {
		auth := gomail.SMTPAuthPlain
		if cfg.TLS == TLSNone {
			// PLAIN over an unencrypted connection: the operator chose
			// no TLS for a relay they trust.
			auth = gomail.SMTPAuthPlainNoEnc
		}
		opts = append(opts, gomail.WithSMTPAuth(auth), gomail.WithUsername(cfg.Username), gomail.WithPassword(cfg.Password))
	}
	if cfg.HELO != "" {
		opts = append(opts, gomail.WithHELO(cfg.HELO))
	}
	if cfg.Dialer != nil {
		d := cfg.Dialer
		opts = append(opts, gomail.WithDialContextFunc(d.DialContext))
	}
	return &Client{cfg: cfg, opts: opts}, nil
}

func portOr(p, def int) int {
	if p > 0 {
		return p
	}
	return def
}

// Send delivers one message.
func (c *Client) Send(ctx context.Context, m app.MailMessage) error {
	msg := gomail.NewMsg()
	if err := msg.From(c.cfg.From); err != nil {
		return permanent(fmt.Errorf("from address: %w", err))
	}
	if err := msg.To(m.To); err != nil {
		return permanent(fmt.Errorf("recipient: %w", err))
	}
	msg.Subject(m.Subject)
	if m.ID != "" {
		msg.SetMessageIDWithValue(m.ID + "@" + messageIDHost(c.cfg.From))
	}
	msg.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	client, err := gomail.NewClient(c.cfg.Host, c.opts...)
	if err != nil {
		return fmt.Errorf("mail client: %w", err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return classify(err)
	}
	return nil
}

// sendError is a failed send with the server's verdict on retrying.
type sendError struct {
	err  error
	perm bool
}

func (e *sendError) Error() string   { return e.err.Error() }
func (e *sendError) Unwrap() error   { return e.err }
func (e *sendError) Permanent() bool { return e.perm }

func permanent(err error) error { return &sendError{err: err, perm: true} }

// classify marks an SMTP 5xx answer (refused recipient, failed
// authentication, message rejected) as permanent; connection problems and
// 4xx answers are retried.
func classify(err error) error {
	var se *gomail.SendError
	if errors.As(err, &se) {
		code := se.ErrorCode()
		if code >= 500 && code < 600 {
			return &sendError{err: err, perm: true}
		}
		return &sendError{err: err}
	}
	msg := err.Error()
	if strings.Contains(msg, "535") || strings.Contains(msg, "534") || strings.Contains(strings.ToLower(msg), "authentication failed") {
		return &sendError{err: err, perm: true}
	}
	return &sendError{err: err}
}

// messageIDHost is the domain of the From address, for Message-IDs.
func messageIDHost(from string) string {
	a, err := parseFrom(from)
	if err != nil {
		return "compliance.invalid"
	}
	if i := strings.LastIndexByte(a, '@'); i >= 0 {
		return a[i+1:]
	}
	return "compliance.invalid"
}

func parseFrom(from string) (string, error) {
	msg := gomail.NewMsg()
	if err := msg.From(from); err != nil {
		return "", err
	}
	addrs := msg.GetFrom()
	if len(addrs) != 1 {
		return "", errors.New("one address is required")
	}
	return addrs[0].Address, nil
}
