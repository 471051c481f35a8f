package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/custom"
	"github.com/compliance-appliance/compliance/integrations/github"
)

// TestUIOperatorPagesHiddenFromOthers: the Appliance pages are 404 for
// everyone but the operator, whatever their role, and for an operator's
// forms posted by someone else.
func TestUIOperatorPagesHiddenFromOthers(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	for _, who := range []string{f.owner, f.admin, f.auditor, f.employee} {
		b := e.browser()
		b.signIn(who)
		for _, p := range []string{"/operator", "/operator/mail", "/operator/integrations"} {
			wantStatus(t, b.get(p), http.StatusNotFound)
		}
		for _, p := range []string{"/operator/mail", "/operator/mail/test", "/operator/mail/delete", "/operator/integrations/custom/active",
			"/operator/integrations/github/credentials", "/operator/integrations/github/credentials/delete"} {
			wantStatus(t, b.post(p, url.Values{"smtpHost": {"127.0.0.1"}, "from": {"x@acme.test"}, "to": {"x@acme.test"}}), http.StatusNotFound)
		}
		wantNoBody(t, b.get("/"), "/operator/")
	}
	// Not signed in: to sign-in, as every page.
	wantRedirect(t, e.browser().get("/operator/mail"), "/login")
}

func TestUIOperatorMail(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	srv, pool := startTestSMTP(t, "mailer", "s3cret")
	withMailFactory(e.app, pool)
	e.withPassword(f.org, "ops@acme.test", app.RoleAuditor)
	if _, err := e.app.GrantOperator(context.Background(), "ops@acme.test"); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signIn("ops@acme.test")

	rec := b.get("/operator")
	wantRedirect(t, rec, "/operator/mail")
	rec = b.get("/operator/mail")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Mail is not configured: nothing is queued", `<a href="/operator/mail" aria-current="page">Mail settings</a>`, "Queued now")

	// A test with nothing configured says so next to the field.
	rec = b.post("/operator/mail/test", url.Values{"to": {"alice@acme.test"}})
	wantStatus(t, rec, http.StatusConflict)
	wantBody(t, rec, "Mail is not configured: save SMTP settings first.")

	// Invalid settings: the page again, each message next to its field.
	rec = b.post("/operator/mail", url.Values{"smtpHost": {"smtp.example.com"}, "tls": {"none"}, "smtpPort": {"x"}, "from": {"nope"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, "tls none is allowed only for a server on this machine", "smtpPort is between 1 and 65535", "from must be one address",
		`value="smtp.example.com"`)

	// Wrong password: the test shows the server's refusal on the page.
	port := strconv.Itoa(srv.port())
	rec = b.post("/operator/mail", url.Values{"smtpHost": {"localhost"}, "smtpPort": {port}, "tls": {"starttls"},
		"username": {"mailer"}, "password": {"wrong"}, "from": {"Compliance <compliance@acme.test>"}})
	wantRedirect(t, rec, "/operator/mail?done=mail-saved")
	rec = b.get("/operator/mail?done=mail-saved")
	wantBody(t, rec, "Mail settings saved", "Mail is configured with the settings saved here: localhost:"+port+" (starttls), signing in as mailer",
		"stored; leave blank to keep it")
	wantNoBody(t, rec, "wrong")
	rec = b.post("/operator/mail/test", url.Values{"to": {"alice@acme.test"}})
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, `class="alert" role="status">Test message eml_`, "refused:", "535", "Authentication credentials invalid")

	// The right password: accepted over STARTTLS and received.
	rec = b.post("/operator/mail", url.Values{"smtpHost": {"localhost"}, "smtpPort": {port}, "tls": {"starttls"},
		"username": {"mailer"}, "password": {"s3cret"}, "from": {"Compliance <compliance@acme.test>"}})
	wantRedirect(t, rec, "/operator/mail")
	rec = b.post("/operator/mail/test", url.Values{"to": {"alice@acme.test"}})
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, `class="notice" role="status">Test message eml_`, "accepted by the SMTP server")
	if msgs := srv.messages(); len(msgs) != 1 || !msgs[0].TLS || msgs[0].To != "alice@acme.test" {
		t.Fatalf("received %+v", msgs)
	}
	body := b.get("/operator/mail").Body.String()
	for _, want := range []string{"<dt>Sent in the last 24 hours</dt><dd>1</dd>", "<dt>Failed in the last 24 hours</dt><dd>1</dd>", "535"} {
		if !strings.Contains(body, want) {
			t.Errorf("outbox misses %q", want)
		}
	}

	// Removing the saved settings: not configured again (no configuration file's).
	wantRedirect(t, b.post("/operator/mail/delete", nil), "/operator/mail?done=mail-deleted")
	wantBody(t, b.get("/operator/mail"), "Mail is not configured")

	// The change is in the audit trail of the operator's organization.
	rec = e.do("GET", "/v1/audit-log?resourceType=mail_settings", e.key(f.org, app.RoleOwner), nil)
	wantBody(t, rec, "mail_settings_saved", "mail_settings_deleted")
	if strings.Contains(rec.Body.String(), "s3cret") {
		t.Fatal("the password is in the audit trail")
	}
}

func TestUIOperatorIntegrations(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	e.app.RegisterIntegrationProviders(github.New(nil), custom.New())
	f := e.uiFixture("Acme")
	e.withPassword(f.org, "ops@acme.test", app.RoleEmployee)
	if _, err := e.app.GrantOperator(context.Background(), "ops@acme.test"); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signIn("ops@acme.test")
	rec := b.get("/operator/integrations")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "GitHub", `action="/operator/integrations/github/credentials"`, `action="/operator/integrations/custom/active"`, "does not use OAuth")

	// Switch a provider off: it leaves the organizations' catalog.
	wantRedirect(t, b.post("/operator/integrations/custom/active", url.Values{"isActive": {"false"}}), "/operator/integrations?done=provider-off")
	wantBody(t, b.get("/operator/integrations"), "Switch on")
	owner := e.key(f.org, app.RoleOwner)
	cat := e.do("GET", "/v1/integrations/connections/providers", owner, nil)
	wantStatus(t, cat, http.StatusOK)
	wantBody(t, cat, `"slug":"github"`)
	if strings.Contains(cat.Body.String(), `"slug":"custom"`) {
		t.Fatal("a provider switched off is still in the catalog")
	}
	wantRedirect(t, b.post("/operator/integrations/custom/active", url.Values{"isActive": {"true"}}), "/operator/integrations?done=provider-on")

	// Platform OAuth app: a missing secret names the field; saved, the
	// secret is never shown; removed.
	rec = b.post("/operator/integrations/github/credentials", url.Values{"clientId": {"Iv1.abc"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, "clientSecret")
	wantRedirect(t, b.post("/operator/integrations/github/credentials", url.Values{"clientId": {"Iv1.abc"}, "clientSecret": {"topsecret"},
		"customScopes": {"read:org repo"}}), "/operator/integrations?done=platform-saved")
	rec = b.get("/operator/integrations")
	wantBody(t, rec, "Client id Iv1.abc", `value="read:org repo"`)
	wantNoBody(t, rec, "topsecret")
	rec = b.post("/operator/integrations/custom/credentials", url.Values{"clientId": {"x"}, "clientSecret": {"y"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, "does not connect through OAuth")
	wantRedirect(t, b.post("/operator/integrations/github/credentials/delete", nil), "/operator/integrations?done=platform-deleted")
	wantNoBody(t, b.get("/operator/integrations"), "Client id Iv1.abc")
	wantStatus(t, b.post("/operator/integrations/nope/active", url.Values{"isActive": {"false"}}), http.StatusNotFound)
}
