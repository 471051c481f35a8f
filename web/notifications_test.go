package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// A person sets how they get each kind of notification on the
// notifications page and reads the same through the API with their
// session; an API key acting for no person is refused; bad input is 400
// naming the field.
func TestNotificationPreferences(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Notify Co")
	b := e.browser()
	b.signIn(f.employee)
	rec := b.get("/notifications")
	wantBody(t, rec, "<h1>Notifications</h1>", "Mail is not configured", "Policy to acknowledge", `name="policy_published"`)
	rec = b.post("/notifications", url.Values{app.NotifyPolicyPublished: {"digest"}, app.NotifyWebhookPaused: {"off"}})
	wantRedirect(t, rec, "/notifications?done=notifications-saved")
	wantBody(t, b.get("/notifications?done=notifications-saved"), "Notification preferences saved.", `<option value="digest" selected>`)

	rec = b.get("/v1/me/notification-preferences")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET with a session: %d %s", rec.Code, rec.Body)
	}
	var s app.NotificationSettings
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.MailConfigured || s.Preferences[app.NotifyPolicyPublished] != "digest" || s.Preferences[app.NotifyWebhookPaused] != "off" ||
		s.Preferences[app.NotifyEvidenceExpiring] != "immediate" || len(s.Kinds) != len(app.NotificationKinds) {
		t.Fatalf("settings %+v", s)
	}

	key := e.key(f.org, app.RoleOwner)
	if rec := e.do("GET", "/v1/me/notification-preferences", key, nil); rec.Code != http.StatusForbidden {
		t.Fatalf("an API key without a person: %d %s", rec.Code, rec.Body)
	}
	rec = b.post("/notifications", url.Values{app.NotifyPolicyPublished: {"weekly"}})
	if rec.Code != http.StatusBadRequest && rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("a bad delivery: %d", rec.Code)
	}
}
