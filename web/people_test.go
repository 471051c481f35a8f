package web

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

func names(t *testing.T, m map[string]any) string {
	t.Helper()
	var out []string
	for _, p := range m["data"].([]any) {
		out = append(out, p.(map[string]any)["email"].(string))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestPeopleListRoleFilterAndPaging(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	e.person(org, "a@example.com", app.RoleOwner)
	e.person(org, "b@example.com", app.RoleAdmin)
	e.person(org, "c@example.com", app.RoleAuditor)
	e.person(org, "d@example.com", app.RoleEmployee)
	e.person(org, "e@example.com", app.RoleEmployee)
	e.person(org, "f@example.com", app.RoleContractor)
	e.person(e.org("Other", app.PlanProfessional), "x@example.com", app.RoleEmployee)

	for role, want := range map[string]string{
		"":           "a@example.com b@example.com c@example.com d@example.com e@example.com f@example.com",
		"owner":      "a@example.com",
		"admin":      "b@example.com",
		"auditor":    "c@example.com",
		"employee":   "d@example.com e@example.com",
		"contractor": "f@example.com",
	} {
		rec := e.do("GET", "/v1/people?role="+role, key, nil)
		wantStatus(t, rec, http.StatusOK)
		if got := names(t, obj(t, rec)); got != want {
			t.Errorf("role=%s: %s, want %s", role, got, want)
		}
	}
	wantField(t, e.do("GET", "/v1/people?role=king", key, nil), "role")

	rec := e.do("GET", "/v1/people?perPage=4&page=2", key, nil)
	m := obj(t, rec)
	meta := m["meta"].(map[string]any)
	if len(m["data"].([]any)) != 2 || meta["total"] != float64(6) || meta["totalPages"] != float64(2) {
		t.Fatalf("page 2 of 4: %s", rec.Body.String())
	}
	p := m["data"].([]any)[0].(map[string]any)
	for _, f := range []string{"id", "name", "email", "role", "lastLoginAt", "devices", "createdAt"} {
		if _, ok := p[f]; !ok {
			t.Errorf("a person entry carries %s: %v", f, p)
		}
	}
}

func TestPeopleCreateGetUpdate(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	otherKey := e.key(e.org("Other", app.PlanProfessional), app.RoleOwner)

	rec := e.do("POST", "/v1/people", key, map[string]any{"name": "Ann Lee", "email": " Ann@Example.com ", "role": "auditor", "department": "Risk"})
	wantStatus(t, rec, http.StatusCreated)
	p := obj(t, rec)
	id := p["id"].(string)
	if !strings.HasPrefix(id, "usr_") || p["email"] != "ann@example.com" || p["role"] != "auditor" || p["isActive"] != true {
		t.Fatalf("created person: %v", p)
	}
	if devs, ok := p["devices"].([]any); !ok || len(devs) != 0 {
		t.Fatalf("devices must be an empty array: %v", p["devices"])
	}
	wantError(t, e.do("POST", "/v1/people", key, map[string]any{"name": "Again", "email": "ann@example.com"}), http.StatusConflict, "conflict")
	wantField(t, e.do("POST", "/v1/people", key, map[string]any{"name": "X", "email": "nope"}), "email")
	wantField(t, e.do("POST", "/v1/people", key, map[string]any{"email": "y@example.com"}), "name")
	wantField(t, e.do("POST", "/v1/people", key, map[string]any{"name": "Y", "email": "y@example.com", "role": "boss"}), "role")
	wantField(t, e.do("POST", "/v1/people", key, map[string]any{"name": "Y", "email": "y@example.com", "role": "owner"}), "role")

	wantStatus(t, e.do("GET", "/v1/people/"+id, key, nil), http.StatusOK)
	wantError(t, e.do("GET", "/v1/people/"+id, otherKey, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("PATCH", "/v1/people/"+id, otherKey, map[string]any{"name": "stolen"}), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/people/usr_01JNOSUCHPERSON00000000000", key, nil), http.StatusNotFound, "not_found")

	rec = e.do("PATCH", "/v1/people/"+id, key, map[string]any{"name": "Ann Lee-Smith", "department": nil, "jobTitle": "CISO"})
	wantStatus(t, rec, http.StatusOK)
	p = obj(t, rec)
	if p["name"] != "Ann Lee-Smith" || p["department"] != nil || p["jobTitle"] != "CISO" || p["role"] != "auditor" {
		t.Fatalf("patched person: %v", p)
	}
	wantField(t, e.do("PATCH", "/v1/people/"+id, key, map[string]any{"role": "owner"}), "role")
	wantField(t, e.do("PATCH", "/v1/people/"+id, key, map[string]any{"email": "bad"}), "email")
	wantField(t, e.do("PATCH", "/v1/people/"+id, key, map[string]any{"department": 7}), "department")
}

func TestPeopleBulkCreateIsAtomic(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)

	rec := e.do("POST", "/v1/people/bulk", key, map[string]any{"members": []any{
		map[string]any{"name": "Ok", "email": "ok@example.com"},
		map[string]any{"name": "", "email": "bad"},
		map[string]any{"name": "Dup", "email": "ok@example.com", "role": "wizard"},
	}})
	e400 := wantError(t, rec, http.StatusBadRequest, "validation_error")
	fields := e400["details"].(map[string]any)["fields"].(map[string]any)
	for _, f := range []string{"members[1].name", "members[1].email", "members[2].email", "members[2].role"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("per-entry error %s missing: %v", f, fields)
		}
	}
	if _, ok := fields["members[0].name"]; ok {
		t.Error("a valid entry has no error")
	}
	if got := obj(t, e.do("GET", "/v1/people", key, nil))["meta"].(map[string]any)["total"]; got != float64(0) {
		t.Fatalf("a failed bulk create stores nobody: %v", got)
	}
	// A conflict on a later entry rolls back the earlier ones.
	e.person(org, "taken@example.com", app.RoleEmployee)
	rec = e.do("POST", "/v1/people/bulk", key, map[string]any{"members": []any{
		map[string]any{"name": "One", "email": "one@example.com"},
		map[string]any{"name": "Taken", "email": "taken@example.com"},
	}})
	wantError(t, rec, http.StatusConflict, "conflict")
	if !strings.Contains(rec.Body.String(), "members[1].email") {
		t.Fatalf("the conflict names the entry: %s", rec.Body.String())
	}
	if got := obj(t, e.do("GET", "/v1/people", key, nil))["meta"].(map[string]any)["total"]; got != float64(1) {
		t.Fatalf("bulk create is all or nothing: total %v", got)
	}
	rec = e.do("POST", "/v1/people/bulk", key, map[string]any{"members": []any{
		map[string]any{"name": "One", "email": "one@example.com"},
		map[string]any{"name": "Two", "email": "two@example.com", "role": "contractor"},
	}})
	wantStatus(t, rec, http.StatusCreated)
	if m := obj(t, rec); m["count"] != float64(2) || len(m["data"].([]any)) != 2 {
		t.Fatalf("bulk create answers every person: %s", rec.Body.String())
	}
	wantField(t, e.do("POST", "/v1/people/bulk", key, map[string]any{"members": []any{}}), "members")
}

func TestMemberLimit(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Tiny", app.PlanFree) // 3 members
	key := e.key(org, app.RoleOwner)
	e.person(org, "a@example.com", app.RoleOwner)
	e.person(org, "b@example.com", app.RoleEmployee)

	rec := e.do("POST", "/v1/people/bulk", key, map[string]any{"members": []any{
		map[string]any{"name": "C", "email": "c@example.com"},
		map[string]any{"name": "D", "email": "d@example.com"},
	}})
	d := wantError(t, rec, http.StatusForbidden, "forbidden")["details"].(map[string]any)
	if d["limit"] != "members" || d["allowed"] != float64(3) {
		t.Fatalf("details.limit must name the limit: %v", d)
	}
	if got := obj(t, e.do("GET", "/v1/people", key, nil))["meta"].(map[string]any)["total"]; got != float64(2) {
		t.Fatalf("over-limit bulk create stores nobody: %v", got)
	}
	c := obj(t, e.do("POST", "/v1/people", key, map[string]any{"name": "C", "email": "c@example.com"}))["id"].(string)
	d = wantError(t, e.do("POST", "/v1/people", key, map[string]any{"name": "D", "email": "d@example.com"}), http.StatusForbidden, "forbidden")["details"].(map[string]any)
	if d["limit"] != "members" {
		t.Fatalf("details.limit: %v", d)
	}
	// Deactivating frees a seat; reactivating needs one.
	wantStatus(t, e.do("PATCH", "/v1/people/"+c, key, map[string]any{"isActive": false}), http.StatusOK)
	wantStatus(t, e.do("POST", "/v1/people", key, map[string]any{"name": "D", "email": "d@example.com"}), http.StatusCreated)
	for query, want := range map[string]float64{"": 3, "?includeInactive=true": 4, "?includeDeactivated=true": 4} {
		if got := obj(t, e.do("GET", "/v1/people"+query, key, nil))["meta"].(map[string]any)["total"]; got != want {
			t.Errorf("GET /v1/people%s: total %v, want %v", query, got, want)
		}
	}
	d = wantError(t, e.do("PATCH", "/v1/people/"+c, key, map[string]any{"isActive": true}), http.StatusForbidden, "forbidden")["details"].(map[string]any)
	if d["limit"] != "members" {
		t.Fatalf("reactivation past the limit: %v", d)
	}
}

func TestLinkAndUnlinkDevice(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	otherKey := e.key(e.org("Other", app.PlanProfessional), app.RoleAdmin)
	ann := e.person(org, "ann@example.com", app.RoleEmployee)
	bob := e.person(org, "bob@example.com", app.RoleEmployee)

	rec := e.do("POST", "/v1/people/"+ann+"/devices", key, map[string]any{"name": "Ann's laptop", "hostname": "ann-mbp", "platform": "macos", "serialNumber": "C02X"})
	wantStatus(t, rec, http.StatusOK)
	devs := obj(t, rec)["devices"].([]any)
	if len(devs) != 1 {
		t.Fatalf("the person shows the device: %s", rec.Body.String())
	}
	dev := devs[0].(map[string]any)["id"].(string)
	if !strings.HasPrefix(dev, "dev_") {
		t.Fatalf("device id %s", dev)
	}
	wantField(t, e.do("POST", "/v1/people/"+ann+"/devices", key, map[string]any{"name": "x", "hostname": "x", "platform": "beos"}), "platform")
	wantField(t, e.do("POST", "/v1/people/"+ann+"/devices", key, map[string]any{"deviceId": "dev_nope"}), "deviceId")
	wantError(t, e.do("POST", "/v1/people/"+ann+"/devices", otherKey, map[string]any{"deviceId": dev}), http.StatusNotFound, "not_found")

	// Linking a known device moves it to another person.
	rec = e.do("POST", "/v1/people/"+bob+"/devices", key, map[string]any{"deviceId": dev})
	wantStatus(t, rec, http.StatusOK)
	if len(obj(t, rec)["devices"].([]any)) != 1 {
		t.Fatal("bob has the device")
	}
	if got := obj(t, e.do("GET", "/v1/people/"+ann, key, nil))["devices"].([]any); len(got) != 0 {
		t.Fatalf("ann no longer has it: %v", got)
	}
	rec = e.do("GET", "/v1/devices?personId="+bob, key, nil)
	if obj(t, rec)["meta"].(map[string]any)["total"] != float64(1) {
		t.Fatalf("device list by person: %s", rec.Body.String())
	}
	// Unlink: the device stays, the person loses it.
	wantError(t, e.do("DELETE", "/v1/people/"+ann+"/devices/"+dev, key, nil), http.StatusNotFound, "not_found")
	rec = e.do("DELETE", "/v1/people/"+bob+"/devices/"+dev, key, nil)
	wantStatus(t, rec, http.StatusOK)
	if len(obj(t, rec)["devices"].([]any)) != 0 {
		t.Fatal("unlinked")
	}
	rec = e.do("GET", "/v1/devices/"+dev, key, nil)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["personId"] != nil {
		t.Fatal("the device record stays, unassigned")
	}
	// unlinked=true lists the devices linked to nobody.
	unlinked := list(t, e.do("GET", "/v1/devices?unlinked=true", key, nil))
	if len(unlinked) != 1 || unlinked[0]["id"] != dev {
		t.Fatalf("unlinked devices: %v", unlinked)
	}
	if n := total(t, e.do("GET", "/v1/devices?unlinked=false", key, nil)); n < 1 {
		t.Fatalf("unlinked=false lists every device: %d", n)
	}
	wantField(t, e.do("GET", "/v1/devices?unlinked=maybe", key, nil), "unlinked")
	wantError(t, e.do("GET", "/v1/devices/"+dev, otherKey, nil), http.StatusNotFound, "not_found")
}

func TestTransferOwnership(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	ownerKey := e.key(org, app.RoleOwner)
	adminKey := e.key(org, app.RoleAdmin)
	old := e.person(org, "old@example.com", app.RoleOwner)
	next := e.person(org, "next@example.com", app.RoleAdmin)
	stranger := e.person(e.org("Other", app.PlanProfessional), "s@example.com", app.RoleEmployee)

	wantError(t, e.do("POST", "/v1/organization/transfer-ownership", adminKey, map[string]any{"newOwnerId": next}), http.StatusForbidden, "forbidden")
	wantField(t, e.do("POST", "/v1/organization/transfer-ownership", ownerKey, map[string]any{}), "newOwnerId")
	wantField(t, e.do("POST", "/v1/organization/transfer-ownership", ownerKey, map[string]any{"newOwnerId": stranger}), "newOwnerId")

	rec := e.do("POST", "/v1/organization/transfer-ownership", ownerKey, map[string]any{"newOwnerId": next})
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["role"] != "owner" {
		t.Fatalf("the new owner: %s", rec.Body.String())
	}
	if r := obj(t, e.do("GET", "/v1/people/"+old, ownerKey, nil))["role"]; r != "admin" {
		t.Fatalf("the previous owner becomes admin, got %v", r)
	}
	if got := obj(t, e.do("GET", "/v1/people?role=owner", ownerKey, nil))["meta"].(map[string]any)["total"]; got != float64(1) {
		t.Fatalf("one owner: %v", got)
	}
	wantError(t, e.do("POST", "/v1/organization/transfer-ownership", ownerKey, map[string]any{"newOwnerId": next}), http.StatusConflict, "conflict")
}

func TestSharedIdentityIsNotChangedByAnotherOrganization(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	a := e.org("A", app.PlanProfessional)
	b := e.org("B", app.PlanProfessional)
	ceo := e.person(a, "ceo@a.example", app.RoleOwner)
	bKey := e.key(b, app.RoleAdmin)
	rec := e.do("POST", "/v1/people", bKey, map[string]any{"name": "Guest", "email": "ceo@a.example"})
	wantStatus(t, rec, http.StatusCreated)
	if obj(t, rec)["id"] != ceo {
		t.Fatal("one login identity across organizations")
	}
	// B's admins may manage the membership, not the identity A relies on.
	wantError(t, e.do("PATCH", "/v1/people/"+ceo, bKey, map[string]any{"email": "attacker@b.example"}), http.StatusForbidden, "forbidden")
	wantStatus(t, e.do("PATCH", "/v1/people/"+ceo, bKey, map[string]any{"jobTitle": "Advisor"}), http.StatusOK)
	bCtx := app.WithPrincipal(e.ctx(b), &app.Principal{OrgID: b, Role: app.RoleAdmin, AuthType: app.AuthAPIKey, KeyID: "key_x"})
	if err := e.app.SetPassword(bCtx, ceo, "a long enough password"); err == nil {
		t.Fatal("another organization may not set the password of a shared identity")
	}
	if got := obj(t, e.do("GET", "/v1/people/"+ceo, e.key(a, app.RoleAdmin), nil)); got["email"] != "ceo@a.example" || got["jobTitle"] != nil {
		t.Fatalf("A's view is unchanged: %v", got)
	}
}

func TestOrganizationAndBranding(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme Corp", app.PlanStarter)
	key := e.key(org, app.RoleAdmin)
	rec := e.do("GET", "/v1/organization", key, nil)
	wantStatus(t, rec, http.StatusOK)
	o := obj(t, rec)
	if o["id"] != org || o["name"] != "Acme Corp" || o["plan"] != "starter" || !strings.HasPrefix(o["slug"].(string), "acme-corp") {
		t.Fatalf("organization: %v", o)
	}
	rec = e.do("PATCH", "/v1/organization", key, map[string]any{"name": "Acme", "website": "https://acme.example", "plan": "enterprise", "id": "org_x"})
	wantStatus(t, rec, http.StatusOK)
	if o := obj(t, rec); o["name"] != "Acme" || o["website"] != "https://acme.example" || o["plan"] != "starter" || o["id"] != org {
		t.Fatalf("plan and id are not client-settable: %v", o)
	}
	wantField(t, e.do("PATCH", "/v1/organization", key, map[string]any{"slug": "Not A Slug"}), "slug")
	wantField(t, e.do("PATCH", "/v1/organization", key, map[string]any{"name": ""}), "name")
	wantField(t, e.do("PATCH", "/v1/organization", key, map[string]any{"website": "nope"}), "website")

	rec = e.do("PATCH", "/v1/organization/branding", key, map[string]any{"primaryColor": "#AABBCC", "displayName": "ACME"})
	wantStatus(t, rec, http.StatusOK)
	if b := obj(t, rec); b["primaryColor"] != "#aabbcc" || b["displayName"] != "ACME" || b["logoUrl"] != nil {
		t.Fatalf("branding: %v", b)
	}
	wantField(t, e.do("PATCH", "/v1/organization/branding", key, map[string]any{"primaryColor": "red"}), "primaryColor")
	wantField(t, e.do("PATCH", "/v1/organization/branding", key, map[string]any{"logoUrl": "file:///etc/passwd"}), "logoUrl")
	if b := obj(t, e.do("GET", "/v1/organization/branding", key, nil)); b["displayName"] != "ACME" {
		t.Fatalf("branding read back: %v", b)
	}
}
