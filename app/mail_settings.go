package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"strings"
	"sync"
	"time"
)

// Mail settings kept by the appliance operator (the Appliance pages and
// /v1/admin/mail). Precedence: SMTP settings saved in the database replace
// the mail.* settings of the configuration file as a whole (no field is
// mixed from both); deleting them falls back to the configuration file,
// which stays the default. The password is sealed at rest and never
// returned.

// Mail TLS modes (the same words as the mail adapter's).
const (
	MailTLSStartTLS = "starttls"
	MailTLSImplicit = "implicit"
	MailTLSNone     = "none"
)

// Mail settings sources.
const (
	MailSourceDatabase = "database"
	MailSourceConfig   = "config"
	MailSourceNone     = "none"
)

// Mail settings limits.
const (
	maxMailHost     = 253
	maxMailUsername = 320
	maxMailPassword = 1000
	maxMailFrom     = 320
)

// MailSettings are the settings an SMTP client is built from.
type MailSettings struct {
	Host     string
	Port     int
	TLS      string
	Username string
	Password string
	From     string
}

// StoredMailSettings is the row of mail_settings.
type StoredMailSettings struct {
	Host           string
	Port           int
	TLS            string
	Username       string
	SealedPassword []byte
	From           string
	UpdatedBy      string
	UpdatedAt      time.Time
}

// MailOutboxStats summarizes the outbox for the operator.
type MailOutboxStats struct {
	Queued    int `json:"queued"`
	Sent24h   int `json:"sent24h"`
	Failed24h int `json:"failed24h"`
	// LastError is the newest message's error with its outbox id.
	LastError   string `json:"lastError"`
	LastErrorID string `json:"lastErrorId"`
}

// MailSettingsStore keeps the operator's SMTP settings.
type MailSettingsStore interface {
	// GetMailSettings returns the stored settings, ErrNotFound without any.
	GetMailSettings(ctx context.Context) (*StoredMailSettings, error)
	PutMailSettings(ctx context.Context, s *StoredMailSettings) error
	// DeleteMailSettings removes them; it reports whether there were any.
	DeleteMailSettings(ctx context.Context) (bool, error)
	// MailOutboxStats counts the outbox: queued now, sent and failed since.
	MailOutboxStats(ctx context.Context, since time.Time) (MailOutboxStats, error)
}

// MailerFactory builds an SMTP client from settings (main wires the mail
// adapter's constructor in, with the configuration's CA file and timeout).
type MailerFactory func(MailSettings) (MailSender, error)

// mailState holds the client built from the database's settings.
type mailState struct {
	mu      sync.Mutex
	factory MailerFactory
	config  *MailSettings // the configuration file's settings, password dropped
	loaded  bool
	db      MailSender
	stored  *StoredMailSettings
}

// SetMailerFactory lets the operator's saved settings build SMTP clients;
// config is the configuration file's settings (nil: none), shown on the
// settings page when the database has none.
func (a *App) SetMailerFactory(f MailerFactory, config *MailSettings) {
	a.mailSt.mu.Lock()
	defer a.mailSt.mu.Unlock()
	a.mailSt.factory, a.mailSt.loaded, a.mailSt.db, a.mailSt.stored = f, false, nil, nil
	if config != nil {
		c := *config
		c.Password = ""
		a.mailSt.config = &c
	}
}

// activeMailer is the SMTP client in use: the one built from the
// database's settings if there are any, else the configuration's (nil:
// mail is not configured).
func (a *App) activeMailer() MailSender {
	db, _ := a.loadMailSettings(context.Background())
	if db != nil {
		return db
	}
	return a.mailer
}

// loadMailSettings builds (once, and again after each change) the client
// of the stored settings. A failure is logged and leaves the
// configuration's client in use.
func (a *App) loadMailSettings(ctx context.Context) (MailSender, *StoredMailSettings) {
	s := &a.mailSt
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.factory == nil {
		return nil, nil
	}
	if s.loaded {
		return s.db, s.stored
	}
	st, err := a.store.GetMailSettings(ctx)
	if errors.Is(err, ErrNotFound) {
		s.loaded = true
		return nil, nil
	}
	if err != nil {
		a.log.Error("mail settings read failed", "err", err)
		return nil, nil
	}
	pw := ""
	if len(st.SealedPassword) > 0 {
		if pw, err = a.openSecret("mail-settings", st.SealedPassword); err != nil {
			a.log.Error("mail settings password unreadable", "err", err)
			s.loaded = true
			return nil, st
		}
	}
	m, err := s.factory(MailSettings{Host: st.Host, Port: st.Port, TLS: st.TLS, Username: st.Username, Password: pw, From: st.From})
	if err != nil {
		a.log.Error("mail settings unusable", "err", err)
		s.loaded = true
		return nil, st
	}
	s.loaded, s.db, s.stored = true, m, st
	return m, st
}

func (a *App) forgetMailSettings() {
	a.mailSt.mu.Lock()
	a.mailSt.loaded, a.mailSt.db, a.mailSt.stored = false, nil, nil
	a.mailSt.mu.Unlock()
}

// MailSettingsView is the operator's view of the mail settings.
type MailSettingsView struct {
	// Configured: mail is sent (settings from the database or the
	// configuration file). Without it nothing is queued.
	Configured  bool            `json:"configured"`
	Source      string          `json:"source"`
	SMTPHost    string          `json:"smtpHost"`
	SMTPPort    int             `json:"smtpPort"`
	TLS         string          `json:"tls"`
	Username    string          `json:"username"`
	HasPassword bool            `json:"hasPassword"`
	From        string          `json:"from"`
	UpdatedBy   string          `json:"updatedBy,omitempty"`
	UpdatedAt   *time.Time      `json:"updatedAt"`
	Outbox      MailOutboxStats `json:"outbox"`
}

// MailSettingsInput is the body of PUT /v1/admin/mail. Password nil keeps
// the stored password; "" removes it.
type MailSettingsInput struct {
	SMTPHost string  `json:"smtpHost"`
	SMTPPort int     `json:"smtpPort"`
	TLS      string  `json:"tls"`
	Username string  `json:"username"`
	Password *string `json:"password"`
	From     string  `json:"from"`
}

// MailTestResult is the outcome of a test message.
type MailTestResult struct {
	ID       string `json:"id"`
	To       string `json:"to"`
	Status   string `json:"status"`
	Sent     bool   `json:"sent"`
	Attempts int    `json:"attempts"`
	// Message is the server's answer: accepted, or its error.
	Message string `json:"message"`
}

// AdminGetMailSettings returns the mail settings in use and the outbox's
// state (operator only).
func (a *App) AdminGetMailSettings(ctx context.Context) (*MailSettingsView, error) {
	if _, err := a.requireOperator(ctx); err != nil {
		return nil, err
	}
	return a.mailSettingsView(ctx)
}

func (a *App) mailSettingsView(ctx context.Context) (*MailSettingsView, error) {
	_, st := a.loadMailSettings(ctx)
	out := &MailSettingsView{Source: MailSourceNone}
	switch {
	case st != nil:
		out.Source, out.SMTPHost, out.SMTPPort, out.TLS, out.Username = MailSourceDatabase, st.Host, st.Port, st.TLS, st.Username
		out.HasPassword, out.From, out.UpdatedBy = len(st.SealedPassword) > 0, st.From, st.UpdatedBy
		at := st.UpdatedAt
		out.UpdatedAt = &at
	case a.mailer != nil:
		out.Source = MailSourceConfig
		a.mailSt.mu.Lock()
		if c := a.mailSt.config; c != nil {
			out.SMTPHost, out.SMTPPort, out.TLS, out.Username, out.From = c.Host, c.Port, c.TLS, c.Username, c.From
		}
		a.mailSt.mu.Unlock()
	}
	out.Configured = a.activeMailer() != nil
	stats, err := a.store.MailOutboxStats(ctx, a.Now().Add(-24*time.Hour))
	if err != nil {
		return nil, fmt.Errorf("mail outbox stats: %w", err)
	}
	out.Outbox = stats
	return out, nil
}

// isLoopbackHost reports whether host names this machine.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// AdminPutMailSettings saves SMTP settings in the database, where they take
// precedence over the configuration file (operator only).
func (a *App) AdminPutMailSettings(ctx context.Context, in MailSettingsInput) (*MailSettingsView, error) {
	p, err := a.requireOperator(ctx)
	if err != nil {
		return nil, err
	}
	a.mailSt.mu.Lock()
	factory := a.mailSt.factory
	a.mailSt.mu.Unlock()
	if factory == nil {
		return nil, Errorf(ErrConflict, "this appliance cannot take mail settings from the database")
	}
	in.SMTPHost, in.TLS, in.Username, in.From = strings.TrimSpace(in.SMTPHost), strings.TrimSpace(in.TLS), strings.TrimSpace(in.Username), strings.TrimSpace(in.From)
	if in.TLS == "" {
		in.TLS = MailTLSStartTLS
	}
	v := NewValidationError()
	switch {
	case in.SMTPHost == "":
		v.Add("smtpHost", CodeRequired, nil, "smtpHost is required")
	case len(in.SMTPHost) > maxMailHost || strings.ContainsAny(in.SMTPHost, " \t\r\n/:@") && net.ParseIP(strings.Trim(in.SMTPHost, "[]")) == nil:
		v.Add("smtpHost", CodeInvalid, in.SMTPHost, "smtpHost is a host name or IP address, without port or scheme")
	}
	if in.SMTPPort < 0 || in.SMTPPort > 65535 {
		v.Add("smtpPort", CodeInvalid, in.SMTPPort, "smtpPort is between 1 and 65535, or 0 for the mode's default")
	}
	switch in.TLS {
	case MailTLSStartTLS, MailTLSImplicit:
	case MailTLSNone:
		if in.SMTPHost != "" && !isLoopbackHost(in.SMTPHost) {
			v.Add("tls", CodeInvalid, in.TLS, "tls none is allowed only for a server on this machine (localhost, 127.0.0.1, ::1): use starttls or implicit")
		}
	default:
		v.Add("tls", CodeInvalidEnum, in.TLS, "tls must be starttls, implicit or none")
	}
	maxLen(v, "username", in.Username, maxMailUsername)
	if in.Password != nil && len(*in.Password) > maxMailPassword {
		v.Add("password", CodeTooLong, nil, fmt.Sprintf("password is at most %d characters", maxMailPassword))
	}
	if in.From == "" {
		v.Add("from", CodeRequired, nil, "from is required")
	} else if _, err := mail.ParseAddress(in.From); err != nil || len(in.From) > maxMailFrom || strings.ContainsAny(in.From, "\r\n") {
		v.Add("from", CodeInvalid, in.From, `from must be one address, e.g. "Compliance <compliance@corp.example>"`)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		var sealed []byte
		cur, err := a.store.GetMailSettings(ctx)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		default:
			sealed = cur.SealedPassword
		}
		pwChange := "kept"
		if in.Password != nil {
			sealed, pwChange = nil, "removed"
			if *in.Password != "" {
				sealed, pwChange = a.sealSecret("mail-settings", *in.Password), "changed"
			}
		}
		if in.Username == "" {
			sealed = nil
		}
		pw := ""
		if len(sealed) > 0 {
			if pw, err = a.openSecret("mail-settings", sealed); err != nil {
				return fmt.Errorf("open stored mail password: %w", err)
			}
		}
		if _, err := factory(MailSettings{Host: in.SMTPHost, Port: in.SMTPPort, TLS: in.TLS, Username: in.Username, Password: pw, From: in.From}); err != nil {
			return Invalid("smtpHost", CodeInvalid, in.SMTPHost, "these settings do not make a usable SMTP client: "+err.Error())
		}
		st := &StoredMailSettings{Host: in.SMTPHost, Port: in.SMTPPort, TLS: in.TLS, Username: in.Username, SealedPassword: sealed,
			From: in.From, UpdatedBy: p.ActorID(), UpdatedAt: a.Now()}
		if err := a.store.PutMailSettings(ctx, st); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "mail_settings_saved", ResourceType: "mail_settings", ResourceID: "mail",
			After: map[string]any{"smtpHost": st.Host, "smtpPort": st.Port, "tls": st.TLS, "username": st.Username, "from": st.From, "password": pwChange}})
	})
	a.forgetMailSettings()
	if err != nil {
		return nil, fmt.Errorf("save mail settings: %w", err)
	}
	return a.mailSettingsView(ctx)
}

// AdminDeleteMailSettings removes the saved SMTP settings: the
// configuration file's apply again (operator only).
func (a *App) AdminDeleteMailSettings(ctx context.Context) error {
	if _, err := a.requireOperator(ctx); err != nil {
		return err
	}
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		ok, err := a.store.DeleteMailSettings(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return Errorf(ErrNotFound, "no mail settings are saved in the database")
		}
		return a.record(ctx, Mutation{Action: "mail_settings_deleted", ResourceType: "mail_settings", ResourceID: "mail"})
	})
	a.forgetMailSettings()
	if err != nil {
		return fmt.Errorf("delete mail settings: %w", err)
	}
	return nil
}

// AdminTestMail queues a test message to an address and delivers the
// outbox at once through the mail settings in use, answering with what the
// server said (operator only).
func (a *App) AdminTestMail(ctx context.Context, to string) (*MailTestResult, error) {
	if _, err := a.requireOperator(ctx); err != nil {
		return nil, err
	}
	to = strings.TrimSpace(to)
	if to == "" {
		return nil, Invalid("to", CodeRequired, nil, "to is required")
	}
	if a.activeMailer() == nil {
		return nil, Errorf(ErrConflict, "mail is not configured: save SMTP settings first")
	}
	q, err := a.QueueMail(ctx, "", "test", MailMessage{To: to, Subject: "Test message from the compliance appliance",
		Text: "This message confirms that the compliance appliance can send e-mail through its SMTP settings.\n",
		HTML: notificationHTML("Test message from the compliance appliance", []notificationItem{{"Test message",
			"This message confirms that the compliance appliance can send e-mail through its SMTP settings.", ""}})})
	if err != nil {
		return nil, err
	}
	if _, err := a.DeliverMail(ctx); err != nil {
		return nil, err
	}
	out := &MailTestResult{ID: q.ID, To: q.To, Status: MailQueued, Message: "queued: the background job is delivering it"}
	recent, err := a.store.ListMail(ctx, "", 100)
	if err != nil {
		return nil, err
	}
	for _, m := range recent {
		if m.ID != q.ID {
			continue
		}
		out.Status, out.Attempts = m.Status, m.Attempts
		switch m.Status {
		case MailSent:
			out.Sent, out.Message = true, "accepted by the SMTP server"
		case MailFailed:
			out.Message = "refused: " + m.LastError
		case MailQueued:
			if m.LastError != "" {
				out.Message = "not delivered, will be retried: " + m.LastError
			}
		}
	}
	return out, nil
}
