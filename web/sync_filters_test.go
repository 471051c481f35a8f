package web

import (
	"net/http"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/ldap"
	"github.com/compliance-appliance/compliance/integrations/ldap/ldaptest"
)

// peopleEmails lists the e-mail addresses of a people list answer.
func peopleEmails(t *testing.T, s *syncEnv, key, query string) map[string]bool {
	t.Helper()
	rec := s.do("GET", "/v1/people?perPage=200"+query, key, nil)
	wantStatus(t, rec, http.StatusOK)
	out := map[string]bool{}
	for _, p := range obj(t, rec)["data"].([]any) {
		out[p.(map[string]any)["email"].(string)] = true
	}
	return out
}

// TestPeopleSyncFilters: the people list filters on source and two-factor
// status; unknown values are a 400 naming the field; another organization's
// directory people never show.
func TestPeopleSyncFilters(t *testing.T) {
	s := newSyncEnv(t, 10)
	s.sync(t, "")
	s.person(s.org, "hand@acme.test", app.RoleEmployee)
	// The two-factor source reported two people (LDAP reports none).
	var enrolled, enrolledEmail, notEnrolled, notEnrolledEmail string
	if err := s.raw().QueryRow(`SELECT u.id, u.email FROM users u JOIN person_directory d ON d.user_id = u.id
		WHERE d.organization_id = ? ORDER BY u.email LIMIT 1`, s.org).Scan(&enrolled, &enrolledEmail); err != nil {
		t.Fatal(err)
	}
	if err := s.raw().QueryRow(`SELECT u.id, u.email FROM users u JOIN person_directory d ON d.user_id = u.id
		WHERE d.organization_id = ? ORDER BY u.email DESC LIMIT 1`, s.org).Scan(&notEnrolled, &notEnrolledEmail); err != nil {
		t.Fatal(err)
	}
	for id, v := range map[string]int{enrolled: 1, notEnrolled: 0} {
		if _, err := s.raw().Exec(`UPDATE person_directory SET two_factor = ? WHERE organization_id = ? AND user_id = ?`, v, s.org, id); err != nil {
			t.Fatal(err)
		}
	}
	all := peopleEmails(t, s, s.aud, "")
	dir := peopleEmails(t, s, s.aud, "&source=directory")
	man := peopleEmails(t, s, s.aud, "&source=manual")
	if len(dir) == 0 || len(dir)+len(man) != len(all) {
		t.Fatalf("source split: %d directory + %d manual != %d", len(dir), len(man), len(all))
	}
	if !man["hand@acme.test"] || !man["owner@acme.test"] || dir["hand@acme.test"] || !dir[enrolledEmail] {
		t.Fatalf("source filter: directory %v, manual %v", dir, man)
	}
	if got := peopleEmails(t, s, s.aud, "&twoFactor=enrolled"); len(got) != 1 || !got[enrolledEmail] {
		t.Fatalf("enrolled: %v", got)
	}
	if got := peopleEmails(t, s, s.aud, "&twoFactor=not_enrolled&source=directory"); len(got) != 1 || !got[notEnrolledEmail] {
		t.Fatalf("not enrolled: %v", got)
	}
	unknown := peopleEmails(t, s, s.aud, "&twoFactor=unknown")
	if len(unknown) != len(all)-2 || unknown[enrolledEmail] || !unknown["hand@acme.test"] {
		t.Fatalf("unknown: %d of %d", len(unknown), len(all))
	}

	wantField(t, s.do("GET", "/v1/people?source=scim", s.owner, nil), "source")
	wantField(t, s.do("GET", "/v1/people?twoFactor=yes", s.owner, nil), "twoFactor")

	// Another organization's filters see only its own people.
	other := s.org2(t)
	rec := s.do("GET", "/v1/people?source=directory", other, nil)
	wantStatus(t, rec, http.StatusOK)
	if n := len(obj(t, rec)["data"].([]any)); n != 0 {
		t.Fatalf("another organization sees %d directory people", n)
	}
}

// TestUIPeopleSyncFilters: the people page filters on source and two-factor
// status, kept in the URL, and shows a bad value as a form error.
func TestUIPeopleSyncFilters(t *testing.T) {
	dir := ldaptest.Start(t, 10, 0)
	e := newTestServer(t)
	e.app.RegisterIntegrationProviders(ldap.New(nil))
	f := e.uiFixture("Acme")
	key := e.key(f.org, app.RoleOwner)
	rec := e.do("POST", "/v1/integrations/connections", key, map[string]any{"providerSlug": "ldap", "credentials": dir.Credentials(),
		"variables": map[string]string{"baseDn": ldaptest.PeopleDN}})
	wantStatus(t, rec, http.StatusCreated)
	conn := obj(t, rec)["id"].(string)
	wantStatus(t, e.do("POST", "/v1/integrations/sync/dynamic/ldap/employees?connectionId="+conn, key, nil), http.StatusCreated)

	b := e.browser()
	b.signIn(f.auditor)
	rec = b.get("/people?source=directory&perPage=100")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, `id="source"`, `id="twoFactor"`, `<option value="directory" selected>`, "user00002@example.test")
	wantNoBody(t, rec, "<td>Manual</td>")
	rec = b.get("/people?source=manual&twoFactor=unknown&perPage=100")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, `<option value="manual" selected>`, `<option value="unknown" selected>`, "<td>Manual</td>")
	wantNoBody(t, rec, "user00002@example.test")
	rec = b.get("/people?twoFactor=maybe")
	if rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("bad filter value: %d", rec.Code)
	}
	wantBody(t, rec, "twoFactor must be one of")
}
