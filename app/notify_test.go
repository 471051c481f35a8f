package app_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// memMailer records what would go to the SMTP server.
type memMailer struct {
	mu   sync.Mutex
	msgs []app.MailMessage
}

func (m *memMailer) Send(_ context.Context, msg app.MailMessage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, msg)
	return nil
}

func (m *memMailer) to(addr string) []app.MailMessage {
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

// A published policy notifies everyone who must acknowledge it, each by
// their preference: mail at once, a daily digest, or only the list;
// auditors and inactive people are not told; the cursor makes a second run
// tell nobody again.
func TestNotifyPolicyPublished(t *testing.T) {
	t.Parallel()
	a, _, c := newApp(t)
	mm := &memMailer{}
	a.SetMailer(mm)
	ctx := context.Background()
	org, err := a.CreateOrganization(ctx, "Acme", app.PlanProfessional)
	if err != nil {
		t.Fatal(err)
	}
	sys := app.SystemContext(ctx, org.ID)
	people := map[string]*app.Person{}
	for _, p := range []struct{ name, role string }{{"Olga", "owner"}, {"Emma", "employee"}, {"Dora", "employee"}, {"Otto", "employee"}, {"Audrey", "auditor"}, {"Ingo", "employee"}} {
		person, err := a.CreatePerson(sys, app.PersonCreate{Name: p.name, Email: strings.ToLower(p.name) + "@acme.test", Role: p.role})
		if err != nil {
			t.Fatal(err)
		}
		people[p.name] = person
	}
	if _, err := a.UpdatePerson(sys, people["Ingo"].ID, app.PersonPatch{IsActive: app.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	as := func(name string) context.Context {
		p := people[name]
		return app.WithPrincipal(ctx, &app.Principal{OrgID: org.ID, Role: p.Role, AuthType: app.AuthSession, UserID: p.ID, Email: p.Email})
	}
	if _, err := a.SetMyNotificationPreferences(as("Dora"), map[string]string{app.NotifyPolicyPublished: app.NotificationDigest}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SetMyNotificationPreferences(as("Otto"), map[string]string{app.NotifyPolicyPublished: app.NotificationOff}); err != nil {
		t.Fatal(err)
	}
	// Events before this point (people created) tell nobody anything.
	if _, err := a.Notify(ctx); err != nil {
		t.Fatal(err)
	}

	pol, err := a.CreatePolicy(sys, app.PolicyInput{Name: app.Ptr("Access control policy"), Content: app.Ptr("Use MFA."), IsRequiredToSign: app.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.PublishPolicy(sys, pol.ID, app.PublishInput{Changelog: "first"}); err != nil {
		t.Fatal(err)
	}
	n, err := a.Notify(ctx)
	if err != nil || n != 4 {
		t.Fatalf("Notify recorded %d (%v), want 4: Olga, Emma, Dora, Otto", n, err)
	}
	if n, _ := a.Notify(ctx); n != 0 {
		t.Fatalf("a second run recorded %d", n)
	}
	if _, err := a.DeliverMail(ctx); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"Olga": 1, "Emma": 1, "Dora": 0, "Otto": 0, "Audrey": 0, "Ingo": 0} {
		got := mm.to(strings.ToLower(name) + "@acme.test")
		if len(got) != want {
			t.Errorf("%s got %d messages, want %d", name, len(got), want)
			continue
		}
		if want == 1 && (!strings.Contains(got[0].Subject, "Access control policy") || !strings.Contains(got[0].Text, "/policies/"+pol.ID)) {
			t.Errorf("%s's message: %+v", name, got[0])
		}
	}
	// Otto keeps it in the list without a mail; the page says so.
	s, err := a.MyNotificationSettings(as("Otto"))
	if err != nil || len(s.Recent) != 1 || s.Recent[0].Mailed || s.Preferences[app.NotifyPolicyPublished] != app.NotificationOff ||
		s.Preferences[app.NotifyEvidenceExpiring] != app.NotificationDeliveryMail || !s.MailConfigured {
		t.Fatalf("Otto's settings: %+v %v", s, err)
	}

	// The daily digest gathers Dora's into one message, once.
	c.Advance(24 * time.Hour)
	if sent, err := a.SendDigests(ctx); err != nil || sent != 1 {
		t.Fatalf("digests: %d %v", sent, err)
	}
	if sent, _ := a.SendDigests(ctx); sent != 0 {
		t.Fatalf("digest sent again: %d", sent)
	}
	if _, err := a.DeliverMail(ctx); err != nil {
		t.Fatal(err)
	}
	if got := mm.to("dora@acme.test"); len(got) != 1 || !strings.Contains(got[0].Subject, "1 item") || !strings.Contains(got[0].Text, "Access control policy") {
		t.Fatalf("Dora's digest: %+v", got)
	}
}

func TestNotificationPreferencesValidation(t *testing.T) {
	t.Parallel()
	a, _, _ := newApp(t)
	ctx := context.Background()
	org, err := a.CreateOrganization(ctx, "Acme", app.PlanProfessional)
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.CreatePerson(app.SystemContext(ctx, org.ID), app.PersonCreate{Name: "Emma", Email: "emma@acme.test", Role: "employee"})
	if err != nil {
		t.Fatal(err)
	}
	me := app.WithPrincipal(ctx, &app.Principal{OrgID: org.ID, Role: app.RoleEmployee, AuthType: app.AuthSession, UserID: p.ID})
	for _, bad := range []map[string]string{nil, {"nope": "digest"}, {app.NotifyWebhookPaused: "weekly"}} {
		var ve *app.ValidationError
		if _, err := a.SetMyNotificationPreferences(me, bad); !errors.As(err, &ve) {
			t.Errorf("%v accepted: %v", bad, err)
		}
	}
	key := app.WithPrincipal(ctx, &app.Principal{OrgID: org.ID, Role: app.RoleAdmin, AuthType: app.AuthAPIKey, KeyID: "key_x"})
	if _, err := a.MyNotificationSettings(key); !errors.Is(err, app.ErrForbidden) {
		t.Errorf("an API key without a person: %v", err)
	}
	// Without mail configured the settings say so.
	s, err := a.MyNotificationSettings(me)
	if err != nil || s.MailConfigured || len(s.Preferences) != len(app.NotificationKinds) {
		t.Fatalf("settings %+v %v", s, err)
	}
}
