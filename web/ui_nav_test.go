package web

import (
	"context"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// navOf reads the sidebar of a page: each group's label with the links
// under it, in order.
func navOf(t *testing.T, body string) (groups []string, links map[string][]string) {
	t.Helper()
	start := strings.Index(body, `<nav class="main" aria-label="Main">`)
	end := strings.Index(body, "</nav></details>")
	if start < 0 || end < start {
		t.Fatalf("no sidebar in the page")
	}
	nav := body[start:end]
	links = map[string][]string{}
	for _, g := range navGroupRe.FindAllStringSubmatch(nav, -1) {
		groups = append(groups, g[2])
		for _, a := range navLinkRe.FindAllStringSubmatch(g[3], -1) {
			links[g[2]] = append(links[g[2]], a[1])
		}
		if !strings.Contains(g[3], `aria-labelledby="`+g[1]+`"`) {
			t.Errorf("group %s: its list is not labelled by its name", g[2])
		}
	}
	return groups, links
}

var (
	navGroupRe = regexp.MustCompile(`(?s)<div class="nav-group"><span class="nav-label" id="([^"]+)">([^<]+)</span>(.*?)</ul></div>`)
	navLinkRe  = regexp.MustCompile(`<li><a href="([^"]+)"`)
)

// TestUINavigationPerRole: the sidebar groups sections by what people do
// and shows each role only the sections it may open; every link shown
// opens for that role, and the current section is marked.
func TestUINavigationPerRole(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	manager := map[string][]string{
		"Overview":   {"/", "/my-work", "/assistant"},
		"Compliance": {"/frameworks", "/controls", "/evidence", "/soa", "/policies", "/tasks"},
		"Risk":       {"/risks", "/vendors", "/findings", "/incidents"},
		"Trust":      {"/trust-settings", "/questionnaires", "/knowledge-base", "/csrd"},
		"Automation": {"/integrations", "/cloud-security", "/pentests", "/browser-automations"},
		"People":     {"/people", "/training", "/devices"},
		"Settings": {"/settings", "/context", "/variables", "/api-keys", "/webhooks", "/oauth-apps",
			"/connected-apps", "/notifications", "/settings/sso", "/audit-log"},
	}
	all := []string{"Overview", "Compliance", "Risk", "Trust", "Automation", "People", "Settings"}
	auditor := map[string][]string{}
	for k, v := range manager {
		auditor[k] = v
	}
	auditor["Settings"] = []string{"/settings", "/context", "/variables", "/connected-apps", "/notifications", "/settings/sso", "/audit-log"}
	employee := map[string][]string{
		"Overview":   {"/", "/my-work", "/assistant"},
		"Compliance": {"/frameworks", "/controls", "/evidence", "/policies", "/tasks"},
		"Risk":       {"/risks", "/vendors", "/findings", "/incidents"},
		"People":     {"/people", "/training", "/devices"},
		"Settings":   {"/settings", "/connected-apps", "/notifications"},
	}
	// The appliance operator (here an employee of the organization) sees
	// the Appliance group besides the links of their role; nobody else does.
	operatorEmail := "ops@acme.test"
	e.withPassword(f.org, operatorEmail, app.RoleEmployee)
	if _, err := e.app.GrantOperator(context.Background(), operatorEmail); err != nil {
		t.Fatal(err)
	}
	operatorLinks := map[string][]string{"Appliance": {"/operator/mail", "/operator/integrations"}}
	for k, v := range employee {
		operatorLinks[k] = v
	}
	for _, tc := range []struct {
		role, email string
		groups      []string
		links       map[string][]string
	}{
		{"owner", f.owner, all, manager},
		{"admin", f.admin, all, manager},
		{"auditor", f.auditor, all, auditor},
		{"employee", f.employee, []string{"Overview", "Compliance", "Risk", "People", "Settings"}, employee},
		{"operator", operatorEmail, []string{"Overview", "Compliance", "Risk", "People", "Settings", "Appliance"}, operatorLinks},
	} {
		t.Run(tc.role, func(t *testing.T) {
			b := e.browser()
			b.signIn(tc.email)
			rec := b.get("/")
			wantStatus(t, rec, http.StatusOK)
			groups, links := navOf(t, rec.Body.String())
			if !reflect.DeepEqual(groups, tc.groups) {
				t.Errorf("groups %v, want %v", groups, tc.groups)
			}
			if !reflect.DeepEqual(links, tc.links) {
				t.Errorf("links %v,\nwant %v", links, tc.links)
			}
			wantBody(t, rec, `<a href="/" aria-current="page">Dashboard</a>`, `<summary>Menu</summary>`, `role="search"`)
			// Every link shown opens for the role and marks itself current.
			for _, hrefs := range links {
				for _, h := range hrefs {
					rec := b.get(h)
					if rec.Code != http.StatusOK {
						t.Errorf("%s offers %s, which answers %d", tc.role, h, rec.Code)
						continue
					}
					if n := strings.Count(rec.Body.String(), `aria-current="page"`); n != 1 {
						t.Errorf("%s: %d links marked current, want 1", h, n)
					}
					wantBody(t, rec, `<a href="`+h+`" aria-current="page">`)
				}
			}
		})
	}
}
