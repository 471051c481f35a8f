package web

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// scimDo sends a SCIM request with a bearer token and decodes the answer.
func (e *testEnv) scimDo(method, path, token string, body any) (*httptest.ResponseRecorder, map[string]any) {
	e.t.Helper()
	hdr := []string{"Content-Type", "application/scim+json"}
	if token != "" {
		hdr = append(hdr, "Authorization", "Bearer "+token)
	}
	w := e.do(method, path, "", body, hdr...)
	out := map[string]any{}
	if w.Body.Len() > 0 {
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			e.t.Fatalf("%s %s: not JSON: %s", method, path, w.Body)
		}
	}
	return w, out
}

func scimToken(t *testing.T, e *testEnv, key string) string {
	t.Helper()
	w := e.do("POST", "/v1/organization/scim-token", key, nil)
	if w.Code != 201 {
		t.Fatalf("create scim token: %d %s", w.Code, w.Body)
	}
	tok, _ := obj(t, w)["token"].(string)
	if !strings.HasPrefix(tok, "scim_") {
		t.Fatalf("no token: %s", w.Body)
	}
	return tok
}

func wantSCIMError(t *testing.T, w *httptest.ResponseRecorder, body map[string]any, status int, scimType string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body)
	}
	schemas, _ := body["schemas"].([]any)
	if len(schemas) != 1 || schemas[0] != "urn:ietf:params:scim:api:messages:2.0:Error" || body["status"] != strings.TrimSpace(strings.Split(w.Result().Status, " ")[0]) {
		t.Fatalf("not a SCIM error: %s", w.Body)
	}
	if scimType != "" && body["scimType"] != scimType {
		t.Fatalf("scimType %v, want %s: %s", body["scimType"], scimType, w.Body)
	}
	if !strings.HasPrefix(w.Header().Get("Content-Type"), "application/scim+json") {
		t.Fatalf("content type %q", w.Header().Get("Content-Type"))
	}
}

func TestSCIMClientFlow(t *testing.T) {
	e := newTestServer(t)
	org := e.org("Acme", "enterprise")
	owner := e.key(org, app.RoleOwner)
	tok := scimToken(t, e, owner)

	// The token's status never shows the token.
	w := e.do("GET", "/v1/organization/scim-token", owner, nil)
	if w.Code != 200 || strings.Contains(w.Body.String(), tok) || !strings.Contains(w.Body.String(), `"configured":true`) {
		t.Fatalf("token status: %d %s", w.Code, w.Body)
	}
	var stored string
	if err := e.db.Raw().QueryRow(`SELECT token_hash FROM scim_tokens WHERE organization_id = ?`, org).Scan(&stored); err != nil || stored == tok || stored != app.HashKey(tok) {
		t.Fatalf("token not stored hashed: %v", err)
	}

	// Wrong, missing token: 401 in SCIM's format.
	w, body := e.scimDo("GET", "/scim/v2/Users", "scim_wrong", nil)
	wantSCIMError(t, w, body, 401, "")
	w, body = e.scimDo("GET", "/scim/v2/Users", "", nil)
	wantSCIMError(t, w, body, 401, "")
	// An API key is not a SCIM token.
	w, body = e.scimDo("GET", "/scim/v2/Users", owner, nil)
	wantSCIMError(t, w, body, 401, "")

	// Malformed JSON: 400 invalidSyntax.
	w, body = e.scimDo("POST", "/scim/v2/Users", tok, `{"userName": "x@example.com",`)
	wantSCIMError(t, w, body, 400, "invalidSyntax")

	// Create: the full user representation of RFC 7643 section 8.2 (trimmed).
	w, body = e.scimDo("POST", "/scim/v2/Users", tok, `{
	  "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
	  "externalId": "701984",
	  "userName": "bjensen@example.com",
	  "name": {"formatted": "Ms. Barbara J Jensen, III", "familyName": "Jensen", "givenName": "Barbara"},
	  "displayName": "Babs Jensen",
	  "title": "Tour Guide",
	  "emails": [{"value": "bjensen@example.com", "type": "work", "primary": true}],
	  "active": true
	}`)
	if w.Code != 201 || body["userName"] != "bjensen@example.com" || body["active"] != true || w.Header().Get("Location") == "" {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	id, _ := body["id"].(string)
	p, err := e.app.GetPerson(e.ctx(org), id)
	if err != nil || p.Name != "Ms. Barbara J Jensen, III" || p.Role != app.RoleEmployee || p.JobTitle == nil || *p.JobTitle != "Tour Guide" {
		t.Fatalf("person: %+v %v", p, err)
	}
	// The create example of RFC 7644 section 3.3 names no e-mail: refused
	// with a reason (people are identified by e-mail here).
	w, body = e.scimDo("POST", "/scim/v2/Users", tok, `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],
	  "userName":"bjensen","externalId":"bjensen","name":{"formatted":"Ms. Barbara J Jensen III","familyName":"Jensen","givenName":"Barbara"}}`)
	wantSCIMError(t, w, body, 400, "invalidValue")
	if !strings.Contains(body["detail"].(string), "email") {
		t.Fatalf("detail does not name the e-mail: %s", w.Body)
	}
	// The same userName again: 409 uniqueness.
	w, body = e.scimDo("POST", "/scim/v2/Users", tok, map[string]any{"userName": "BJensen@example.com"})
	wantSCIMError(t, w, body, 409, "uniqueness")

	// Filter by userName (case-insensitive).
	w, body = e.scimDo("GET", `/scim/v2/Users?filter=userName+eq+%22BJENSEN%40example.com%22`, tok, nil)
	if w.Code != 200 || body["totalResults"] != float64(1) {
		t.Fatalf("filter: %d %s", w.Code, w.Body)
	}
	w, body = e.scimDo("GET", `/scim/v2/Users?filter=userName+eq+%22nobody%40example.com%22`, tok, nil)
	if w.Code != 200 || body["totalResults"] != float64(0) || len(body["Resources"].([]any)) != 0 {
		t.Fatalf("filter without match: %d %s", w.Code, w.Body)
	}
	w, body = e.scimDo("GET", `/scim/v2/Users?filter=title+zz+%22x%22`, tok, nil)
	wantSCIMError(t, w, body, 400, "invalidFilter")

	// PATCH active false, the way Entra sends it (a string), then a
	// name change the way RFC 7644 section 3.5.2 describes.
	w, body = e.scimDo("PATCH", "/scim/v2/Users/"+id, tok, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
	  "Operations":[{"op":"Replace","path":"active","value":"False"}]}`)
	if w.Code != 200 || body["active"] != false {
		t.Fatalf("patch active: %d %s", w.Code, w.Body)
	}
	if p, _ := e.app.GetPerson(e.ctx(org), id); p.IsActive {
		t.Fatal("person still active")
	}
	w, body = e.scimDo("PATCH", "/scim/v2/Users/"+id, tok, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
	  "Operations":[{"op":"replace","value":{"active":true,"name":{"givenName":"Babs","familyName":"Jensen"}}}]}`)
	if w.Code != 200 || body["active"] != true || body["displayName"] != "Babs Jensen" {
		t.Fatalf("patch object: %d %s", w.Code, w.Body)
	}
	w, body = e.scimDo("PATCH", "/scim/v2/Users/"+id, tok, `{"Operations":[{"op":"remove","path":"title"}]}`)
	wantSCIMError(t, w, body, 400, "invalidValue")

	// Paging: three more people; startIndex is 1-based.
	for _, m := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		if w, _ := e.scimDo("POST", "/scim/v2/Users", tok, map[string]any{"userName": m}); w.Code != 201 {
			t.Fatalf("create %s: %d", m, w.Code)
		}
	}
	w, body = e.scimDo("GET", "/scim/v2/Users?startIndex=2&count=2", tok, nil)
	if w.Code != 200 || body["totalResults"] != float64(4) || body["itemsPerPage"] != float64(2) || body["startIndex"] != float64(2) {
		t.Fatalf("paging: %d %s", w.Code, w.Body)
	}

	// DELETE deactivates; the person and their history stay.
	w, _ = e.scimDo("DELETE", "/scim/v2/Users/"+id, tok, nil)
	if w.Code != 204 {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	w, body = e.scimDo("GET", "/scim/v2/Users/"+id, tok, nil)
	if w.Code != 200 || body["active"] != false {
		t.Fatalf("after delete: %d %s", w.Code, w.Body)
	}
	audit := e.do("GET", "/v1/audit-log?resourceId="+id, owner, nil)
	if audit.Code == 200 && !strings.Contains(audit.Body.String(), id) {
		t.Fatalf("history of the person lost: %s", audit.Body)
	}

	// Groups are the roles, read-only.
	w, body = e.scimDo("GET", "/scim/v2/Groups", tok, nil)
	if w.Code != 200 || body["totalResults"] != float64(5) {
		t.Fatalf("groups: %d %s", w.Code, w.Body)
	}
	w, body = e.scimDo("GET", "/scim/v2/Groups/employee", tok, nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "c@example.com") || strings.Contains(w.Body.String(), "bjensen") {
		t.Fatalf("group: %d %s", w.Code, w.Body)
	}
	w, body = e.scimDo("GET", "/scim/v2/Groups/nope", tok, nil)
	wantSCIMError(t, w, body, 404, "")

	// Discovery.
	for _, p := range []string{"/scim/v2/ServiceProviderConfig", "/scim/v2/Schemas", "/scim/v2/ResourceTypes"} {
		if w, body := e.scimDo("GET", p, tok, nil); w.Code != 200 || len(body["schemas"].([]any)) == 0 {
			t.Fatalf("%s: %d %s", p, w.Code, w.Body)
		}
	}
	if w, _ := e.scimDo("GET", "/scim/v2/Schemas", tok, nil); !strings.Contains(w.Body.String(), "urn:ietf:params:scim:schemas:core:2.0:User") {
		t.Fatal("schemas without the User schema")
	}

	// Rotation ends the old token; revocation ends the new one.
	tok2 := scimToken(t, e, owner)
	w, body = e.scimDo("GET", "/scim/v2/Users", tok, nil)
	wantSCIMError(t, w, body, 401, "")
	if w, _ := e.scimDo("GET", "/scim/v2/Users", tok2, nil); w.Code != 200 {
		t.Fatalf("new token: %d", w.Code)
	}
	if w := e.do("DELETE", "/v1/organization/scim-token", owner, nil); w.Code != 204 {
		t.Fatalf("revoke: %d %s", w.Code, w.Body)
	}
	w, body = e.scimDo("GET", "/scim/v2/Users", tok2, nil)
	wantSCIMError(t, w, body, 401, "")
	if w := e.do("DELETE", "/v1/organization/scim-token", owner, nil); w.Code != 404 {
		t.Fatalf("revoke twice: %d", w.Code)
	}
}

func TestSCIMOrganizationsAndRoles(t *testing.T) {
	e := newTestServer(t)
	a := e.org("A", "enterprise")
	b := e.org("B", "enterprise")
	tokA, tokB := scimToken(t, e, e.key(a, app.RoleOwner)), scimToken(t, e, e.key(b, app.RoleOwner))
	person := e.person(a, "shared@example.com", app.RoleEmployee)
	ownerID := e.person(a, "boss@example.com", app.RoleOwner)

	// B's token cannot see or change A's people.
	for _, m := range []string{"GET", "PUT", "PATCH", "DELETE"} {
		w, body := e.scimDo(m, "/scim/v2/Users/"+person, tokB, map[string]any{"userName": "x@example.com",
			"Operations": []map[string]any{{"op": "replace", "path": "active", "value": false}}})
		wantSCIMError(t, w, body, 404, "")
	}
	if _, body := e.scimDo("GET", "/scim/v2/Users", tokB, nil); body["totalResults"] != float64(0) {
		t.Fatalf("B lists A's people: %v", body)
	}
	// A person who also belongs to B: A's provisioning may deactivate them
	// in A but not rename their shared identity.
	e.person(b, "shared@example.com", app.RoleEmployee)
	w, body := e.scimDo("PATCH", "/scim/v2/Users/"+person, tokA, map[string]any{"Operations": []map[string]any{
		{"op": "replace", "path": "userName", "value": "attacker@example.com"}}})
	wantSCIMError(t, w, body, 403, "")
	w, _ = e.scimDo("PATCH", "/scim/v2/Users/"+person, tokA, map[string]any{"Operations": []map[string]any{
		{"op": "replace", "path": "active", "value": false}}})
	if w.Code != 200 {
		t.Fatalf("deactivate shared person in A: %d %s", w.Code, w.Body)
	}
	// The owner cannot be deprovisioned.
	w, body = e.scimDo("DELETE", "/scim/v2/Users/"+ownerID, tokA, nil)
	wantSCIMError(t, w, body, 400, "invalidValue")

	// Token routes: owner and admin manage, auditors read, employees not.
	if w := e.do("GET", "/v1/organization/scim-token", e.key(a, app.RoleAuditor), nil); w.Code != 200 {
		t.Fatalf("auditor read: %d", w.Code)
	}
	for _, m := range []string{"POST", "DELETE"} {
		if w := e.do(m, "/v1/organization/scim-token", e.key(a, app.RoleAuditor), nil); w.Code != 403 {
			t.Fatalf("auditor %s: %d", m, w.Code)
		}
	}
	if w := e.do("GET", "/v1/organization/scim-token", e.key(a, app.RoleEmployee), nil); w.Code != 403 {
		t.Fatalf("employee read: %d", w.Code)
	}
	if w := e.do("POST", "/v1/organization/scim-token", e.key(a, app.RoleAdmin), nil); w.Code != 201 {
		t.Fatalf("admin create: %d", w.Code)
	}
	// Idempotency-Key on create replays the same answer.
	k := e.key(a, app.RoleOwner)
	w1 := e.do("POST", "/v1/organization/scim-token", k, nil, "Idempotency-Key", "scim-1")
	w2 := e.do("POST", "/v1/organization/scim-token", k, nil, "Idempotency-Key", "scim-1")
	if w1.Code != 201 || w2.Code != 201 || w1.Body.String() != w2.Body.String() {
		t.Fatalf("idempotent create: %d %d", w1.Code, w2.Code)
	}
}
