package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// Training assigned reaches the person assigned (not the admins), and every
// notification mail carries a text and an HTML part, the HTML escaped.
func TestNotifyTrainingAndHTMLParts(t *testing.T) {
	t.Parallel()
	a, _, _ := newApp(t)
	mm := &memMailer{}
	a.SetMailer(mm)
	ctx := context.Background()
	org, err := a.CreateOrganization(ctx, "Acme", app.PlanProfessional)
	if err != nil {
		t.Fatal(err)
	}
	sys := app.SystemContext(ctx, org.ID)
	olga, err := a.CreatePerson(sys, app.PersonCreate{Name: "Olga", Email: "olga@acme.test", Role: "owner"})
	if err != nil {
		t.Fatal(err)
	}
	emma, err := a.CreatePerson(sys, app.PersonCreate{Name: "Emma", Email: "emma@acme.test", Role: "employee"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Notify(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AssignTraining(sys, app.TrainingAssignInput{ModuleID: "phishing-social-engineering", Target: "people", PersonIDs: []string{emma.ID}, DueDate: app.Ptr("2030-01-31")}); err != nil {
		t.Fatal(err)
	}
	pol, err := a.CreatePolicy(sys, app.PolicyInput{Name: app.Ptr(`Use <script>alert(1)</script> & "quotes"`), Content: app.Ptr("x"), IsRequiredToSign: app.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.PublishPolicy(sys, pol.ID, app.PublishInput{Changelog: "first"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Notify(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DeliverMail(ctx); err != nil {
		t.Fatal(err)
	}
	var training *app.MailMessage
	for _, m := range mm.to(emma.Email) {
		if strings.HasPrefix(m.Subject, "Training assigned") {
			training = &m
		}
	}
	if training == nil || !strings.Contains(training.Text, "due 2030-01-31") || !strings.Contains(training.HTML, "due 2030-01-31") {
		t.Fatalf("training mail to the person: %+v", mm.to(emma.Email))
	}
	for _, m := range mm.to(olga.Email) {
		if strings.HasPrefix(m.Subject, "Training assigned") {
			t.Fatalf("the owner was told of someone else's training: %+v", m)
		}
	}
	for _, m := range append(mm.to(emma.Email), mm.to(olga.Email)...) {
		if m.Text == "" || !strings.HasPrefix(m.HTML, "<!DOCTYPE html>") || !strings.Contains(m.HTML, "style=") || strings.Contains(m.HTML, "<img") {
			t.Fatalf("message without both parts: %+v", m)
		}
		if strings.Contains(m.Subject, "script") && (strings.Contains(m.HTML, "<script>") || !strings.Contains(m.HTML, "&lt;script&gt;alert(1)&lt;/script&gt;")) {
			t.Fatalf("HTML part not escaped:\n%s", m.HTML)
		}
	}
	if len(mm.to(olga.Email)) == 0 {
		t.Fatal("the owner got no policy mail")
	}
}
