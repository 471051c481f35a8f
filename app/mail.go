package app

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
)

// E-mail leaves the appliance through one SMTP server the operator
// configures (mail.smtp_host). A message is written to the outbox in the
// transaction that decided to send it and delivered by the deliver_mail
// job with retries, so a crash or a server that is down loses nothing.
// Without a server configured nothing is queued: QueueMail says so, and no
// send is ever pretended.

// ErrMailNotConfigured is returned when mail would be sent but no SMTP
// server is configured.
var ErrMailNotConfigured = errors.New("mail is not configured: set mail.smtp_host and mail.from (docs/mail.md)")

// MailMessage is one e-mail to one recipient.
type MailMessage struct {
	ID      string // the outbox id; the adapter makes the Message-ID from it
	To      string
	Subject string
	Text    string
	HTML    string // optional alternative part
}

// MailSender is the SMTP adapter (package mail).
type MailSender interface {
	Send(ctx context.Context, m MailMessage) error
}

// PermanentMailError is implemented by send errors that retrying cannot
// fix (a 5xx answer: recipient refused, authentication failed).
type PermanentMailError interface {
	error
	Permanent() bool
}

// Outbox statuses.
const (
	MailQueued  = "queued"
	MailSending = "sending"
	MailSent    = "sent"
	MailFailed  = "failed"
)

// Mail delivery bounds.
const (
	mailBatch       = 20
	mailLease       = 2 * time.Minute
	mailSendTimeout = 60 * time.Second
	// MaxMailAttempts is how often a message is tried before it is failed;
	// with the backoff below that spans about a day.
	MaxMailAttempts = 10
	maxMailSubject  = 300
	maxMailBody     = 256 << 10
)

// mailBackoff is the wait after the n-th failed attempt: 1, 2, 4, ... minutes up to 4 hours.
func mailBackoff(n int) time.Duration {
	d := time.Minute << min(n-1, 8)
	return min(d, 4*time.Hour)
}

// QueuedMail is one message in the outbox.
type QueuedMail struct {
	ID             string     `json:"id"`
	OrganizationID *string    `json:"organizationId"`
	Kind           string     `json:"kind"`
	To             string     `json:"to"`
	Subject        string     `json:"subject"`
	Text           string     `json:"-"`
	HTML           string     `json:"-"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  time.Time  `json:"nextAttemptAt"`
	LastError      string     `json:"lastError,omitempty"`
	CreatedAt      time.Time  `json:"createdAt"`
	SentAt         *time.Time `json:"sentAt"`
}

// MailStore persists the outbox.
type MailStore interface {
	EnqueueMail(ctx context.Context, m *QueuedMail) error
	// ClaimMail marks up to limit due messages (queued and due, or
	// sending with an expired lease) as sending until leaseUntil and
	// returns them.
	ClaimMail(ctx context.Context, now, leaseUntil time.Time, limit int) ([]QueuedMail, error)
	// FinishMail records an attempt's outcome.
	FinishMail(ctx context.Context, m *QueuedMail) error
	// ListMail returns the newest messages, of one organization or (orgID
	// "") all of them.
	ListMail(ctx context.Context, orgID string, limit int) ([]QueuedMail, error)
}

// SetMailer wires the SMTP adapter in; nil leaves mail unconfigured.
func (a *App) SetMailer(m MailSender) { a.mailer = m }

// MailConfigured reports whether an SMTP server is configured.
func (a *App) MailConfigured() bool { return a.activeMailer() != nil }

// QueueMail writes a message to the outbox, in the transaction of ctx when
// there is one. orgID is empty for the appliance's own mail.
func (a *App) QueueMail(ctx context.Context, orgID, kind string, m MailMessage) (*QueuedMail, error) {
	if a.activeMailer() == nil {
		return nil, ErrMailNotConfigured
	}
	v := NewValidationError()
	to := strings.TrimSpace(m.To)
	if addr, err := mail.ParseAddress(to); err != nil || addr.Address != to {
		v.Add("to", CodeInvalid, to, "to must be one e-mail address")
	}
	subject := strings.TrimSpace(m.Subject)
	if subject == "" {
		v.Add("subject", CodeRequired, nil, "subject is required")
	} else if strings.ContainsAny(subject, "\r\n") {
		v.Add("subject", CodeInvalid, subject, "subject must be one line")
	}
	maxLen(v, "subject", subject, maxMailSubject)
	if len(m.Text) > maxMailBody || len(m.HTML) > maxMailBody {
		v.Add("body", CodeTooLong, nil, fmt.Sprintf("a message body is at most %d bytes", maxMailBody))
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	now := a.Now()
	q := &QueuedMail{ID: NewID(PrefixMail), Kind: kind, To: to, Subject: subject, Text: m.Text, HTML: m.HTML,
		Status: MailQueued, NextAttemptAt: now, CreatedAt: now}
	if orgID != "" {
		q.OrganizationID = &orgID
	}
	if err := a.store.EnqueueMail(ctx, q); err != nil {
		return nil, fmt.Errorf("queue mail: %w", err)
	}
	return q, nil
}

// DeliverMail sends the due messages of the outbox (the deliver_mail job).
// A message the server accepted is marked sent; a temporary failure is
// retried with backoff; a permanent one, or the last attempt, fails it.
// It returns the number of messages sent.
func (a *App) DeliverMail(ctx context.Context) (int, error) {
	mailer := a.activeMailer()
	if mailer == nil {
		return 0, nil
	}
	sent := 0
	for {
		now := a.Now()
		batch, err := a.store.ClaimMail(ctx, now, now.Add(mailLease), mailBatch)
		if err != nil {
			return sent, fmt.Errorf("claim mail: %w", err)
		}
		for i := range batch {
			m := &batch[i]
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mailSendTimeout)
			err := mailer.Send(sctx, MailMessage{ID: m.ID, To: m.To, Subject: m.Subject, Text: m.Text, HTML: m.HTML})
			cancel()
			m.Attempts++
			at := a.Now()
			var perm PermanentMailError
			switch {
			case err == nil:
				m.Status, m.SentAt, m.LastError = MailSent, &at, ""
				sent++
			case (errors.As(err, &perm) && perm.Permanent()) || m.Attempts >= MaxMailAttempts:
				m.Status, m.LastError = MailFailed, clipRunes(err.Error(), 500)
			default:
				m.Status, m.LastError, m.NextAttemptAt = MailQueued, clipRunes(err.Error(), 500), at.Add(mailBackoff(m.Attempts))
			}
			if err := a.store.FinishMail(ctx, m); err != nil {
				return sent, fmt.Errorf("record mail %s: %w", m.ID, err)
			}
			if m.Status == MailFailed {
				a.log.Warn("mail failed", "id", m.ID, "kind", m.Kind, "attempts", m.Attempts, "error", m.LastError)
			}
		}
		if len(batch) < mailBatch || ctx.Err() != nil {
			return sent, nil
		}
	}
}

// ListMail returns the newest messages of the outbox (the operator's view:
// `compliance mail list`).
func (a *App) ListMail(ctx context.Context, limit int) ([]QueuedMail, error) {
	return a.store.ListMail(ctx, "", limit)
}
