package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestControlSearch: q narrows the control list to controls whose code or
// name contains it, case-insensitively, combined with the other filters;
// an over-long q is a 400 naming the field.
func TestControlSearch(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	e.firstControl(key)
	all := list(t, e.do("GET", "/v1/controls?perPage=100", key, nil))
	if len(all) < 2 {
		t.Fatalf("controls: %d", len(all))
	}
	name := all[1]["name"].(string)
	word := strings.ToUpper(strings.Fields(name)[0])
	rec := e.do("GET", "/v1/controls?perPage=100&q="+url.QueryEscape(word), key, nil)
	wantStatus(t, rec, http.StatusOK)
	found := list(t, rec)
	if len(found) == 0 || len(found) > len(all) {
		t.Fatalf("q=%s: %d of %d", word, len(found), len(all))
	}
	for _, c := range found {
		if !strings.Contains(strings.ToLower(c["code"].(string)+" "+c["name"].(string)), strings.ToLower(word)) {
			t.Fatalf("q=%s matched %v", word, c)
		}
	}
	if n := total(t, e.do("GET", "/v1/controls?q=no-such-control-anywhere", key, nil)); n != 0 {
		t.Fatalf("no match: %d", n)
	}
	if n := total(t, e.do("GET", "/v1/controls?status=implemented&q="+url.QueryEscape(word), key, nil)); n != 0 {
		t.Fatalf("combined with status: %d", n)
	}
	wantField(t, e.do("GET", "/v1/controls?q="+strings.Repeat("x", 201), key, nil), "q")
}
