package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// recordingMailer keeps what would go to the SMTP server.
type recordingMailer struct {
	mu   sync.Mutex
	msgs []app.MailMessage
}

func (m *recordingMailer) Send(_ context.Context, msg app.MailMessage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, msg)
	return nil
}

func (m *recordingMailer) to(addr string) []app.MailMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []app.MailMessage
	for _, x := range m.msgs {
		if x.To == addr {
			out = append(out, x)
		}
	}
	return out
}

// TestTrustAccessRequestedNotification: a visitor's request on the public
// trust portal raises trust.access_requested and tells the organization's
// owners and admins by their preferences (at once, digest, off), with who
// asked, their company, why and where to review it; nobody else, and no
// other organization, is told.
func TestTrustAccessRequestedNotification(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	mm := &recordingMailer{}
	e.app.SetMailer(mm)
	ctx := context.Background()
	org := e.org("Acme", app.PlanProfessional)
	other := e.org("Other", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	people := map[string]string{}
	for _, p := range []struct {
		email string
		role  app.Role
		org   string
	}{{"olga@acme.test", app.RoleOwner, org}, {"adam@acme.test", app.RoleAdmin, org}, {"dina@acme.test", app.RoleAdmin, org},
		{"otto@acme.test", app.RoleAdmin, org}, {"emma@acme.test", app.RoleEmployee, org}, {"audrey@acme.test", app.RoleAuditor, org},
		{"oscar@other.test", app.RoleOwner, other}} {
		people[p.email] = e.person(p.org, p.email, p.role)
	}
	as := func(email string) context.Context {
		return app.WithPrincipal(ctx, &app.Principal{OrgID: org, Role: app.RoleAdmin, AuthType: app.AuthSession, UserID: people[email], Email: email})
	}
	if _, err := e.app.SetMyNotificationPreferences(as("dina@acme.test"), map[string]string{app.NotifyTrustAccess: app.NotificationDigest}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.SetMyNotificationPreferences(as("otto@acme.test"), map[string]string{app.NotifyTrustAccess: app.NotificationOff}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.Notify(ctx); err != nil {
		t.Fatal(err)
	}
	enablePortal(t, e, admin, "acme")

	rec := e.postForm("/trust/acme/request", url.Values{"name": {"Bob <b>Buyer</b>"}, "email": {"Bob@Customer.test"}, "company": {"Customer Ltd"},
		"reason": {"Vendor due diligence\r\nfor the 2026 renewal"}})
	if rec.Code != http.StatusCreated {
		t.Fatalf("request: %d %s", rec.Code, rec.Body.String())
	}
	evs := e.events(org, app.EventTrustAccessRequested)
	if len(evs) != 1 {
		t.Fatalf("%d trust.access_requested events", len(evs))
	}
	ev := evs[0]
	if ev["name"] != "Bob <b>Buyer</b>" || ev["email"] != "bob@customer.test" || ev["company"] != "Customer Ltd" || ev["status"] != "under_review" ||
		ev["requestId"] == "" || ev["requestedAt"] == "" {
		t.Fatalf("event data: %v", ev)
	}
	for _, k := range []string{"ipAddress", "userAgent", "token", "tokenHash"} {
		if _, ok := ev[k]; ok {
			t.Errorf("the event carries %s", k)
		}
	}

	if n, err := e.app.Notify(ctx); err != nil || n != 4 {
		t.Fatalf("Notify recorded %d (%v), want 4: the owner and three admins", n, err)
	}
	if _, err := e.app.DeliverMail(ctx); err != nil {
		t.Fatal(err)
	}
	for email, want := range map[string]int{"olga@acme.test": 1, "adam@acme.test": 1, "dina@acme.test": 0, "otto@acme.test": 0,
		"emma@acme.test": 0, "audrey@acme.test": 0, "oscar@other.test": 0, "bob@customer.test": 0} {
		got := mm.to(email)
		if len(got) != want {
			t.Errorf("%s got %d messages, want %d", email, len(got), want)
			continue
		}
		if want == 0 {
			continue
		}
		m := got[0]
		if m.Subject != "Trust access requested by Bob <b>Buyer</b> (Customer Ltd)" {
			t.Errorf("subject %q", m.Subject)
		}
		for _, s := range []string{"<bob@customer.test>", "Customer Ltd", "NDA-gated documents", "Vendor due diligence", "/trust-requests", ev["requestId"].(string)} {
			if !strings.Contains(m.Text, s) {
				t.Errorf("text part misses %q: %s", s, m.Text)
			}
		}
		if !strings.Contains(m.HTML, "Bob &lt;b&gt;Buyer&lt;/b&gt;") || strings.Contains(m.HTML, "<b>Buyer</b>") || !strings.Contains(m.HTML, "/trust-requests") {
			t.Errorf("HTML part: %s", m.HTML)
		}
	}
	// Otto only sees it listed; Dina gets it in the daily digest.
	s, err := e.app.MyNotificationSettings(as("otto@acme.test"))
	if err != nil || len(s.Recent) != 1 || s.Recent[0].Mailed || s.Recent[0].Kind != app.NotifyTrustAccess {
		t.Fatalf("otto: %+v %v", s, err)
	}
	e.clock.Advance(24 * time.Hour)
	if sent, err := e.app.SendDigests(ctx); err != nil || sent != 1 {
		t.Fatalf("digests: %d %v", sent, err)
	}
	if _, err := e.app.DeliverMail(ctx); err != nil {
		t.Fatal(err)
	}
	if got := mm.to("dina@acme.test"); len(got) != 1 || !strings.Contains(got[0].Text, "Trust access requested by Bob") {
		t.Fatalf("dina's digest: %+v", got)
	}
	if got := mm.to("otto@acme.test"); len(got) != 0 {
		t.Fatalf("otto turned it off and got %d", len(got))
	}
}

// TestTrustAccessRequestedWithoutMail: with mail not configured the
// notification is only listed, and nothing is queued.
func TestTrustAccessRequestedWithoutMail(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	ctx := context.Background()
	org := e.org("Acme", app.PlanProfessional)
	owner := e.person(org, "olga@acme.test", app.RoleOwner)
	if _, err := e.app.Notify(ctx); err != nil {
		t.Fatal(err)
	}
	enablePortal(t, e, e.key(org, app.RoleAdmin), "acme")
	e.postForm("/trust/acme/request", url.Values{"name": {"Bob"}, "email": {"bob@customer.test"}})
	if n, err := e.app.Notify(ctx); err != nil || n != 1 {
		t.Fatalf("Notify: %d %v", n, err)
	}
	s, err := e.app.MyNotificationSettings(app.WithPrincipal(ctx, &app.Principal{OrgID: org, Role: app.RoleOwner, AuthType: app.AuthSession, UserID: owner, Email: "olga@acme.test"}))
	if err != nil || s.MailConfigured || len(s.Recent) != 1 || s.Recent[0].Mailed || !strings.Contains(s.Recent[0].Body, "Reason: none given") {
		t.Fatalf("settings: %+v %v", s, err)
	}
	var queued int
	if err := e.db.Raw().QueryRow(`SELECT COUNT(*) FROM mail_outbox`).Scan(&queued); err != nil || queued != 0 {
		t.Fatalf("%d messages queued without mail (%v)", queued, err)
	}
}
