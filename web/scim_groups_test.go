package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

func scimGroupMembers(t *testing.T, body map[string]any) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	ms, _ := body["members"].([]any)
	for _, m := range ms {
		out[m.(map[string]any)["value"].(string)] = true
	}
	return out
}

func personRole(t *testing.T, e *testEnv, key, id string) string {
	t.Helper()
	return obj(t, e.do("GET", "/v1/people/"+id, key, nil))["role"].(string)
}

// TestSCIMGroupWrites: role groups take members through PATCH and PUT,
// by the rules in docs/sso.md; they are never created or deleted; the
// owner group and owners are never changed; admin only with an owner's
// token; another organization's people are unknown.
func TestSCIMGroupWrites(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "enterprise")
	other := e.org("Other", "enterprise")
	owner := e.key(org, app.RoleOwner)
	admin := e.key(org, app.RoleAdmin)
	ownerID := e.person(org, "olga@acme.test", app.RoleOwner)
	ann := e.person(org, "ann@acme.test", app.RoleEmployee)
	bob := e.person(org, "bob@acme.test", app.RoleEmployee)
	cid := e.person(org, "cid@acme.test", app.RoleAuditor)
	stranger := e.person(other, "sam@other.test", app.RoleEmployee)

	// A token made by an admin: roles change, but nobody joins admin.
	tok := scimToken(t, e, admin)
	patch := func(group, ops string) (int, map[string]any) {
		w, body := e.scimDo("PATCH", "/scim/v2/Groups/"+group, tok, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":`+ops+`}`)
		return w.Code, body
	}
	code, body := patch("auditor", `[{"op":"Add","path":"members","value":[{"value":"`+ann+`"}]}]`)
	if code != 200 || !scimGroupMembers(t, body)[ann] || !scimGroupMembers(t, body)[cid] {
		t.Fatalf("add: %d %v", code, body)
	}
	if r := personRole(t, e, owner, ann); r != "auditor" {
		t.Fatalf("ann is %s", r)
	}
	w, body := e.scimDo("PATCH", "/scim/v2/Groups/admin", tok, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"members","value":[{"value":"`+bob+`"}]}]}`)
	wantSCIMError(t, w, body, 403, "mutability")
	if r := personRole(t, e, owner, bob); r != "employee" {
		t.Fatalf("bob became %s with an admin's token", r)
	}

	// Remove by filter path (as Entra sends it): back to employee.
	code, body = patch("auditor", `[{"op":"remove","path":"members[value eq \"`+ann+`\"]"}]`)
	if code != 200 || scimGroupMembers(t, body)[ann] || personRole(t, e, owner, ann) != "employee" {
		t.Fatalf("remove: %d %v", code, body)
	}
	// Removing from employee has nowhere to go.
	w, body = e.scimDo("PATCH", "/scim/v2/Groups/employee", tok, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"remove","path":"members","value":[{"value":"`+bob+`"}]}]}`)
	wantSCIMError(t, w, body, 400, "invalidValue")

	// An owner's token may add admins.
	tok = scimToken(t, e, owner)
	code, body = patch("admin", `[{"op":"add","path":"members","value":[{"value":"`+bob+`"}]}]`)
	if code != 200 || personRole(t, e, owner, bob) != "admin" {
		t.Fatalf("admin by an owner's token: %d %v", code, body)
	}
	// PUT replaces the members: cid leaves auditor, ann joins.
	w, body = e.scimDo("PUT", "/scim/v2/Groups/auditor", tok, `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"auditor","members":[{"value":"`+ann+`"}]}`)
	if w.Code != 200 || !scimGroupMembers(t, body)[ann] || scimGroupMembers(t, body)[cid] {
		t.Fatalf("put: %d %s", w.Code, w.Body)
	}
	if personRole(t, e, owner, cid) != "employee" || personRole(t, e, owner, ann) != "auditor" {
		t.Fatal("put did not move cid and ann")
	}
	w, body = e.scimDo("PUT", "/scim/v2/Groups/auditor", tok, `{"displayName":"auditors","members":[]}`)
	wantSCIMError(t, w, body, 400, "mutability")

	// The owner group and owners are never written; groups are fixed.
	w, body = e.scimDo("PATCH", "/scim/v2/Groups/owner", tok, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"members","value":[{"value":"`+bob+`"}]}]}`)
	wantSCIMError(t, w, body, 403, "mutability")
	w, body = e.scimDo("PATCH", "/scim/v2/Groups/employee", tok, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"members","value":[{"value":"`+ownerID+`"}]}]}`)
	wantSCIMError(t, w, body, 403, "mutability")
	if personRole(t, e, owner, ownerID) != "owner" {
		t.Fatal("the owner was moved")
	}
	// Groups are never created or deleted: there is no such route.
	if w, _ := e.scimDo("POST", "/scim/v2/Groups", tok, `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"Tour Guides"}`); w.Code < 400 {
		t.Fatalf("create group: %d %s", w.Code, w.Body)
	}
	if w, _ := e.scimDo("DELETE", "/scim/v2/Groups/auditor", tok, nil); w.Code < 400 {
		t.Fatalf("delete group: %d %s", w.Code, w.Body)
	}
	if _, body := e.scimDo("GET", "/scim/v2/Groups", tok, nil); body["totalResults"] != float64(5) {
		t.Fatalf("groups after create and delete: %v", body)
	}
	w, body = e.scimDo("PATCH", "/scim/v2/Groups/nope", tok, `{"Operations":[{"op":"add","path":"members","value":[]}]}`)
	wantSCIMError(t, w, body, 404, "")

	// Bad input: another organization's person, other paths, bad ops.
	for _, ops := range []string{
		`[{"op":"add","path":"members","value":[{"value":"` + stranger + `"}]}]`,
		`[{"op":"replace","path":"displayName","value":"x"}]`,
		`[{"op":"add","path":"externalId","value":"x"}]`,
		`[{"op":"move","path":"members","value":[{"value":"` + bob + `"}]}]`,
		`[{"op":"add","path":"members","value":"nope"}]`,
		`[]`,
	} {
		w, body := e.scimDo("PATCH", "/scim/v2/Groups/auditor", tok, `{"Operations":`+ops+`}`)
		if w.Code != 400 {
			t.Errorf("%s: %d %s", ops, w.Code, w.Body)
		}
		wantSCIMError(t, w, body, 400, "")
	}
	w, body = e.scimDo("PATCH", "/scim/v2/Groups/auditor", tok, `{"Operations":`)
	wantSCIMError(t, w, body, 400, "invalidSyntax")
	if personRole(t, e, e.key(other, app.RoleOwner), stranger) != "employee" {
		t.Fatal("another organization's person changed")
	}
	// Another organization's token cannot touch this organization's people.
	otherTok := scimToken(t, e, e.key(other, app.RoleOwner))
	w, body = e.scimDo("PATCH", "/scim/v2/Groups/auditor", otherTok, `{"Operations":[{"op":"add","path":"members","value":[{"value":"`+bob+`"}]}]}`)
	wantSCIMError(t, w, body, 400, "invalidValue")
	if personRole(t, e, owner, bob) != "admin" {
		t.Fatal("bob changed through another organization's token")
	}

	// Group filters and the changes in the audit trail.
	w, body = e.scimDo("GET", "/scim/v2/Groups?filter="+url.QueryEscape(`displayName eq "admin" or members[value eq "`+ann+`"]`), tok, nil)
	if w.Code != 200 || body["totalResults"] != float64(2) {
		t.Fatalf("group filter: %d %s", w.Code, w.Body)
	}
	if a := e.do("GET", "/v1/audit-log?resourceId="+bob, owner, nil); !strings.Contains(a.Body.String(), `"admin"`) {
		t.Fatalf("role change not audited: %s", a.Body)
	}
}

// TestSCIMUserFilters: RFC 7644 filters, sorting and invalid filters on
// /Users.
func TestSCIMUserFilters(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "enterprise")
	owner := e.key(org, app.RoleOwner)
	tok := scimToken(t, e, owner)
	for _, u := range []string{"bjensen@example.com", "jsmith@example.org", "alice@example.com"} {
		w, _ := e.scimDo("POST", "/scim/v2/Users", tok, `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"`+u+`","title":"`+map[bool]string{true: "Tour Guide", false: ""}[u == "bjensen@example.com"]+`"}`)
		if w.Code != 201 {
			t.Fatalf("create %s: %d %s", u, w.Code, w.Body)
		}
		e.clock.Advance(60e9)
	}
	names := func(body map[string]any) []string {
		var out []string
		for _, r := range body["Resources"].([]any) {
			out = append(out, r.(map[string]any)["userName"].(string))
		}
		return out
	}
	for _, c := range []struct {
		q    string
		want string
	}{
		{`filter=` + url.QueryEscape(`userName sw "J"`), "jsmith@example.org"},
		{`filter=` + url.QueryEscape(`emails[type eq "work" and value co "@example.com"]`) + `&sortBy=userName`, "alice@example.com,bjensen@example.com"},
		{`filter=` + url.QueryEscape(`emails.value ew ".org" or title pr`) + `&sortBy=userName&sortOrder=descending`, "jsmith@example.org,bjensen@example.com"},
		{`filter=` + url.QueryEscape(`meta.lastModified gt "2026-01-15T10:00:30Z"`) + `&sortBy=meta.lastModified`, "jsmith@example.org,alice@example.com"},
		{`filter=` + url.QueryEscape(`not (userName ew ".com")`), "jsmith@example.org"},
		{`sortBy=userName&count=2`, "alice@example.com,bjensen@example.com"},
	} {
		w, body := e.scimDo("GET", "/scim/v2/Users?"+c.q, tok, nil)
		if w.Code != 200 || strings.Join(names(body), ",") != c.want {
			t.Errorf("%s: %d %v, want %s", c.q, w.Code, names(body), c.want)
		}
	}
	for _, q := range []string{`filter=` + url.QueryEscape(`userName eq`), `filter=` + url.QueryEscape(`(userName eq "x"`), `filter=` + url.QueryEscape(`title gt true`)} {
		w, body := e.scimDo("GET", "/scim/v2/Users?"+q, tok, nil)
		wantSCIMError(t, w, body, 400, "invalidFilter")
	}
	w, body := e.scimDo("GET", "/scim/v2/Users?sortOrder=sideways", tok, nil)
	wantSCIMError(t, w, body, 400, "invalidValue")
}
