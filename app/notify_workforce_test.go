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

	// Completing the module mails the person the certificate's link and
	// its verification code; nobody else is told.
	mods, err := app.BuiltinTrainingModules()
	if err != nil {
		t.Fatal(err)
	}
	var sub app.TrainingQuizSubmission
	for _, m := range mods {
		if m.ID == "phishing-social-engineering" {
			sub.Version = m.Version
			for _, q := range m.Quiz {
				sub.Answers = append(sub.Answers, app.TrainingAnswer{QuestionID: q.ID, Choice: q.Answer})
			}
		}
	}
	me := app.WithPrincipal(ctx, &app.Principal{OrgID: org.ID, Role: app.RoleEmployee, AuthType: app.AuthSession, UserID: emma.ID, Email: emma.Email})
	c, err := a.SubmitTrainingQuiz(me, "phishing-social-engineering", sub)
	if err != nil || c.VerificationCode == nil {
		t.Fatalf("complete: %+v %v", c, err)
	}
	if _, err := a.Notify(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DeliverMail(ctx); err != nil {
		t.Fatal(err)
	}
	var done *app.MailMessage
	for _, m := range mm.to(emma.Email) {
		if strings.HasPrefix(m.Subject, "Training completed") {
			done = &m
		}
	}
	if done == nil || !strings.Contains(done.Text, "/training/completions/"+c.ID+"/certificate") || !strings.Contains(done.Text, *c.VerificationCode) ||
		!strings.Contains(done.HTML, *c.VerificationCode) {
		t.Fatalf("completion mail: %+v", done)
	}
	for _, m := range mm.to(olga.Email) {
		if strings.HasPrefix(m.Subject, "Training completed") {
			t.Fatalf("the owner was told of someone else's completion: %+v", m)
		}
	}
}
