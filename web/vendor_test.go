package web

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

func TestVendorValidationPerField(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	other := e.org("Other", app.PlanProfessional)
	stranger := e.person(other, "s@example.com", app.RoleEmployee)

	cases := []struct {
		name  string
		body  map[string]any
		field string
		code  string
	}{
		{"name missing", map[string]any{}, "name", app.CodeRequired},
		{"name blank", map[string]any{"name": "   "}, "name", app.CodeRequired},
		{"name too long", map[string]any{"name": strings.Repeat("n", 256)}, "name", app.CodeTooLong},
		{"description too long", map[string]any{"name": "V", "description": strings.Repeat("d", 20001)}, "description", app.CodeTooLong},
		{"category", map[string]any{"name": "V", "category": "aliens"}, "category", app.CodeInvalidEnum},
		{"category empty", map[string]any{"name": "V", "category": ""}, "category", app.CodeInvalidEnum},
		{"status", map[string]any{"name": "V", "status": "done"}, "status", app.CodeInvalidEnum},
		{"inherentProbability", map[string]any{"name": "V", "inherentProbability": "sure"}, "inherentProbability", app.CodeInvalidEnum},
		{"inherentImpact", map[string]any{"name": "V", "inherentImpact": "huge"}, "inherentImpact", app.CodeInvalidEnum},
		{"residualProbability", map[string]any{"name": "V", "residualProbability": "maybe"}, "residualProbability", app.CodeInvalidEnum},
		{"residualImpact", map[string]any{"name": "V", "residualImpact": "tiny"}, "residualImpact", app.CodeInvalidEnum},
		{"website scheme", map[string]any{"name": "V", "website": "ftp://example.com"}, "website", app.CodeInvalid},
		{"website relative", map[string]any{"name": "V", "website": "example.com"}, "website", app.CodeInvalid},
		{"contactEmail", map[string]any{"name": "V", "contactEmail": "not-an-email"}, "contactEmail", app.CodeInvalid},
		{"contactEmail display name", map[string]any{"name": "V", "contactEmail": "Bob <bob@example.com>"}, "contactEmail", app.CodeInvalid},
		{"country unknown", map[string]any{"name": "V", "country": "XX"}, "country", app.CodeInvalid},
		{"country alpha-3", map[string]any{"name": "V", "country": "DEU"}, "country", app.CodeInvalid},
		{"criticality", map[string]any{"name": "V", "criticality": "meh"}, "criticality", app.CodeInvalidEnum},
		{"dpaStatus", map[string]any{"name": "V", "dpaStatus": "maybe"}, "dpaStatus", app.CodeInvalidEnum},
		{"dpaSignedAt", map[string]any{"name": "V", "dpaSignedAt": "yesterday"}, "dpaSignedAt", app.CodeInvalid},
		{"dpaUrl", map[string]any{"name": "V", "dpaUrl": "javascript:alert(1)"}, "dpaUrl", app.CodeInvalid},
		{"lastReviewedAt", map[string]any{"name": "V", "lastReviewedAt": "2026-13-01"}, "lastReviewedAt", app.CodeInvalid},
		{"nextReviewDue", map[string]any{"name": "V", "nextReviewDue": "soon"}, "nextReviewDue", app.CodeInvalid},
		{"assigneeId unknown", map[string]any{"name": "V", "assigneeId": "usr_nobody"}, "assigneeId", app.CodeUnknownReference},
		{"assigneeId of another organization", map[string]any{"name": "V", "assigneeId": stranger}, "assigneeId", app.CodeUnknownReference},
		{"subProcessor name", map[string]any{"name": "V", "subProcessors": []any{map[string]any{"country": "DE", "purpose": "hosting"}}}, "subProcessors[0].name", app.CodeRequired},
		{"subProcessor country", map[string]any{"name": "V", "subProcessors": []any{map[string]any{"name": "S", "country": "ZZ", "purpose": "hosting"}}}, "subProcessors[0].country", app.CodeInvalid},
		{"subProcessor purpose", map[string]any{"name": "V", "subProcessors": []any{map[string]any{"name": "S", "country": "DE"}}}, "subProcessors[0].purpose", app.CodeRequired},
		{"transfer mechanism outside the EEA", map[string]any{"name": "V", "country": "US", "processesPersonalData": true}, "transferMechanism", app.CodeRequired},
		{"transfer mechanism through the alias", map[string]any{"name": "V", "country": "IN", "dataProcessing": true}, "transferMechanism", app.CodeRequired},
		{"alias disagreeing", map[string]any{"name": "V", "dataProcessing": true, "processesPersonalData": false}, "dataProcessing", app.CodeInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", "/v1/vendors", key, tc.body)
			wantField(t, rec, tc.field)
			d := obj(t, rec)["error"].(map[string]any)["details"].(map[string]any)
			code := d["reason"]
			if fs, ok := d["fields"].(map[string]any); ok {
				code = fs[tc.field]
			}
			if code != tc.code {
				t.Fatalf("%s: code %v, want %s: %s", tc.field, code, tc.code, rec.Body.String())
			}
		})
	}
	// Nothing invalid was stored.
	rec := e.do("GET", "/v1/vendors", key, nil)
	if obj(t, rec)["count"] != float64(0) {
		t.Fatalf("no invalid vendor may be stored: %s", rec.Body.String())
	}
	// PATCH validates the same way and leaves the vendor unchanged.
	v := obj(t, e.do("POST", "/v1/vendors", key, map[string]any{"name": "Good"}))
	id := v["id"].(string)
	wantField(t, e.do("PATCH", "/v1/vendors/"+id, key, map[string]any{"country": "US", "processesPersonalData": true}), "transferMechanism")
	wantField(t, e.do("PATCH", "/v1/vendors/"+id, key, map[string]any{"name": ""}), "name")
	if got := obj(t, e.do("GET", "/v1/vendors/"+id, key, nil)); got["country"] != nil || got["processesPersonalData"] != false {
		t.Fatalf("a rejected patch must change nothing: %v", got)
	}
}

func TestVendorCreateEveryField(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	owner := e.person(org, "olga@example.com", app.RoleAdmin)

	rec := e.do("POST", "/v1/vendors", key, map[string]any{
		"name": "  Cloudy  ", "description": "Hosting", "category": "Software as a Service", "status": "in_progress",
		"inherentProbability": "likely", "inherentImpact": "major", "website": "https://cloudy.example",
		"assigneeId": owner, "contactEmail": "dpo@cloudy.example", "country": "us", "criticality": "critical",
		"ictService": true, "dataProcessing": true, "dpaStatus": "signed", "dpaSignedAt": "2025-06-01",
		"dpaUrl": "https://cloudy.example/dpa", "lastReviewedAt": "2025-12-01T09:30:00Z", "nextReviewDue": "2026-12-01",
		"transferMechanism": "SCCs 2021/914 module 2",
		"subProcessors":     []any{map[string]any{"name": "Disks Inc", "country": "ie", "purpose": "storage"}},
	})
	wantStatus(t, rec, http.StatusCreated)
	v := obj(t, rec)
	want := map[string]any{
		"name": "Cloudy", "category": "software_as_a_service", "status": "in_progress", "country": "US",
		"criticality": "critical", "ictService": true, "processesPersonalData": true, "dpaStatus": "signed",
		"dpaSignedAt": "2025-06-01T00:00:00Z", "lastReviewedAt": "2025-12-01T09:30:00Z", "nextReviewDue": "2026-12-01",
		"assigneeId": owner, "contactEmail": "dpo@cloudy.example", "riskScore": float64(16), "archivedAt": nil,
		"residualProbability": nil, "transferMechanism": "SCCs 2021/914 module 2",
	}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %v, want %v", k, v[k], w)
		}
	}
	if id, _ := v["id"].(string); !strings.HasPrefix(id, "vnd_") || len(id) != 30 {
		t.Errorf("id %q must be vnd_ + ULID", id)
	}
	if ts, _ := v["createdAt"].(string); !strings.HasSuffix(ts, "Z") {
		t.Errorf("createdAt %q must be UTC RFC 3339", ts)
	}
	subs := v["subProcessors"].([]any)
	if len(subs) != 1 || subs[0].(map[string]any)["country"] != "IE" {
		t.Errorf("subProcessors: %v", subs)
	}
	// Residual values, once both are set, decide the risk score.
	id := v["id"].(string)
	rec = e.do("PATCH", "/v1/vendors/"+id, key, map[string]any{"residualProbability": "unlikely", "residualImpact": "minor"})
	wantStatus(t, rec, http.StatusOK)
	if got := obj(t, rec)["riskScore"]; got != float64(4) {
		t.Fatalf("riskScore from residual 2x2 = %v, want 4", got)
	}
	// null clears a nullable field.
	rec = e.do("PATCH", "/v1/vendors/"+id, key, map[string]any{"residualImpact": nil, "website": nil, "assigneeId": nil})
	got := obj(t, rec)
	if got["riskScore"] != float64(16) || got["website"] != nil || got["assigneeId"] != nil || got["name"] != "Cloudy" {
		t.Fatalf("null clears and the score falls back to inherent: %v", got)
	}
	// Defaults of a minimal vendor.
	rec = e.do("POST", "/v1/vendors", key, map[string]any{"name": "Min", "processesPersonalData": true, "country": "DE"})
	min := obj(t, rec)
	if min["category"] != "other" || min["status"] != "not_assessed" || min["criticality"] != "standard" ||
		min["dpaStatus"] != "pending" || min["riskScore"] != float64(1) {
		t.Fatalf("defaults: %v", min)
	}
}

func TestVendorArchiveAndCrossOrganization(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	otherKey := e.key(e.org("Other", app.PlanProfessional), app.RoleOwner)

	a := obj(t, e.do("POST", "/v1/vendors", key, map[string]any{"name": "A"}))["id"].(string)
	b := obj(t, e.do("POST", "/v1/vendors", key, map[string]any{"name": "B"}))["id"].(string)

	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/vendors/" + a, nil},
		{"PATCH", "/v1/vendors/" + a, map[string]any{"name": "stolen"}},
		{"DELETE", "/v1/vendors/" + a, nil},
		{"POST", "/v1/vendors/" + a + "/archive", nil},
		{"GET", "/v1/vendors/vnd_01JNOSUCHVENDOR0000000000", nil},
	} {
		wantError(t, e.do(c.method, c.path, otherKey, c.body), http.StatusNotFound, "not_found")
	}
	if got := obj(t, e.do("GET", "/v1/vendors", otherKey, nil))["count"]; got != float64(0) {
		t.Fatalf("another organization lists none: %v", got)
	}

	rec := e.do("POST", "/v1/vendors/"+a+"/archive", key, nil)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["archivedAt"] == nil {
		t.Fatal("archive sets archivedAt")
	}
	wantStatus(t, e.do("DELETE", "/v1/vendors/"+b, key, nil), http.StatusNoContent)
	if got := obj(t, e.do("GET", "/v1/vendors", key, nil))["count"]; got != float64(0) {
		t.Fatalf("archived vendors leave the default list: %v", got)
	}
	if got := obj(t, e.do("GET", "/v1/vendors?archived=true", key, nil))["count"]; got != float64(2) {
		t.Fatalf("?archived=true shows them: %v", got)
	}
	wantStatus(t, e.do("GET", "/v1/vendors/"+a, key, nil), http.StatusOK)
	wantStatus(t, e.do("POST", "/v1/vendors/"+a+"/restore", key, nil), http.StatusOK)
	if got := obj(t, e.do("GET", "/v1/vendors", key, nil))["count"]; got != float64(1) {
		t.Fatalf("restore returns a vendor to the list: %v", got)
	}
}

func TestVendorListFilters(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAuditor)
	assignee := e.person(org, "amy@example.com", app.RoleEmployee)
	type vend struct {
		name, crit, cat, country, dpa, status string
		personal, ict                         bool
		assigned                              bool
	}
	vendors := []vend{
		{"alpha", "critical", "cloud", "US", "signed", "assessed", true, true, true},
		{"bravo", "critical", "cloud", "DE", "pending", "not_assessed", true, false, false},
		{"charlie", "important", "hr", "DE", "not_required", "in_progress", false, false, true},
		{"delta", "standard", "software_as_a_service", "FR", "signed", "assessed", true, true, false},
		{"echo", "critical", "finance", "", "not_required", "not_assessed", false, true, false},
	}
	for _, v := range vendors {
		in := app.VendorInput{Name: app.Ptr(v.name), Criticality: app.Ptr(v.crit), Category: app.Ptr(v.cat),
			DPAStatus: app.Ptr(v.dpa), Status: app.Ptr(v.status), ProcessesPersonalData: app.Ptr(v.personal),
			ICTService: app.Ptr(v.ict), TransferMechanism: app.Some("SCCs")}
		if v.country != "" {
			in.Country = app.Some(v.country)
		}
		if v.assigned {
			in.AssigneeID = app.Some(assignee)
		}
		if _, err := e.app.CreateVendor(e.ctx(org), in); err != nil {
			t.Fatal(err)
		}
	}
	// Another organization's vendors never match.
	otherOrg := e.org("Other", app.PlanProfessional)
	if _, err := e.app.CreateVendor(e.ctx(otherOrg), app.VendorInput{Name: app.Ptr("zulu"), Criticality: app.Ptr("critical"), Category: app.Ptr("cloud")}); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		query string
		want  string
	}{
		{"", "alpha bravo charlie delta echo"},
		{"criticality=critical", "alpha bravo echo"},
		{"processesPersonalData=true", "alpha bravo delta"},
		{"processesPersonalData=false", "charlie echo"},
		{"dataProcessing=true", "alpha bravo delta"},
		{"ictService=true", "alpha delta echo"},
		{"ictService=false", "bravo charlie"},
		{"category=cloud", "alpha bravo"},
		{"category=Cloud", "alpha bravo"},
		{"category=Software as a Service", "delta"},
		{"category=HR", "charlie"},
		{"category=nonsense", ""},
		{"country=DE", "bravo charlie"},
		{"country=de", "bravo charlie"},
		{"dpaStatus=signed", "alpha delta"},
		{"status=assessed", "alpha delta"},
		{"assigneeId=" + assignee, "alpha charlie"},
		{"q=RAV", "bravo"},
		{"q=A&sort=-name", "delta charlie bravo alpha"},
		{"q=a&criticality=critical&sort=name", "alpha bravo"},
		{"criticality=critical&processesPersonalData=true", "alpha bravo"},
		{"criticality=critical&processesPersonalData=true&ictService=true", "alpha"},
		{"criticality=critical&country=DE&category=cloud", "bravo"},
		{"criticality=critical&ictService=true&dpaStatus=not_required", "echo"},
		{"processesPersonalData=true&ictService=true&category=software_as_a_service&country=FR&dpaStatus=signed&criticality=standard", "delta"},
		{"criticality=important&ictService=true", ""},
		{"sort=-name&criticality=critical", "echo bravo alpha"},
		{"sort=riskScore", "alpha bravo charlie delta echo"},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			u := "/v1/vendors?" + (url.Values(parseQuery(tc.query))).Encode()
			rec := e.do("GET", u, key, nil)
			wantStatus(t, rec, http.StatusOK)
			m := obj(t, rec)
			var names []string
			for _, v := range m["data"].([]any) {
				names = append(names, v.(map[string]any)["name"].(string))
			}
			got := strings.Join(names, " ")
			want := tc.want
			if !strings.Contains(tc.query, "sort=") {
				sort.Strings(names)
				got = strings.Join(names, " ")
			}
			if got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
			n := len(names)
			if m["count"] != float64(n) || m["meta"].(map[string]any)["total"] != float64(n) || m["authType"] != "api-key" {
				t.Fatalf("both envelope forms must agree: %s", rec.Body.String())
			}
			if _, ok := m["authenticatedUser"]; ok {
				t.Fatal("authenticatedUser is for session auth only")
			}
		})
	}
	// A text search pages like any list: the total counts every match.
	for _, pg := range []struct {
		page string
		want string
	}{{"1", "alpha bravo"}, {"2", "charlie delta"}, {"3", ""}} {
		m := obj(t, e.do("GET", "/v1/vendors?q=a&sort=name&perPage=2&page="+pg.page, key, nil))
		var names []string
		for _, v := range m["data"].([]any) {
			names = append(names, v.(map[string]any)["name"].(string))
		}
		if got := strings.Join(names, " "); got != pg.want || m["meta"].(map[string]any)["total"] != float64(4) {
			t.Fatalf("search page %s: %q, meta %v", pg.page, got, m["meta"])
		}
	}
	for _, bad := range []struct{ query, field string }{
		{"criticality=urgent", "criticality"},
		{"processesPersonalData=yes", "processesPersonalData"},
		{"ictService=1", "ictService"},
		{"country=Germany", "country"},
		{"dpaStatus=done", "dpaStatus"},
		{"status=finished", "status"},
		{"sort=password", "sort"},
		{"archived=maybe", "archived"},
	} {
		wantField(t, e.do("GET", "/v1/vendors?"+bad.query, key, nil), bad.field)
	}
}

// parseQuery splits a&b=c without unescaping (test queries hold spaces).
func parseQuery(q string) map[string][]string {
	out := map[string][]string{}
	if q == "" {
		return out
	}
	for _, kv := range strings.Split(q, "&") {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = append(out[k], v)
	}
	return out
}

func TestEmployeesSeeOnlyAssignedVendors(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	emp := e.person(org, "eve@example.com", app.RoleEmployee)
	mine := obj(t, e.do("POST", "/v1/vendors", admin, map[string]any{"name": "Mine", "assigneeId": emp}))["id"].(string)
	theirs := obj(t, e.do("POST", "/v1/vendors", admin, map[string]any{"name": "Theirs"}))["id"].(string)
	// A key made without a person behind it sees nothing assigned.
	empKey := e.key(org, app.RoleEmployee)
	if got := obj(t, e.do("GET", "/v1/vendors", empKey, nil))["count"]; got != float64(0) {
		t.Fatalf("an employee key with no person sees no vendors: %v", got)
	}
	// Acting as the person: only the assigned vendor.
	k, err := e.app.CreateAPIKey(app.WithPrincipal(e.ctx(org), &app.Principal{OrgID: org, Role: app.RoleEmployee, UserID: emp, AuthType: app.AuthSession}), app.APIKeyCreate{Name: "x", Role: "employee"})
	if err == nil {
		t.Fatalf("an employee may not create keys: %v", k)
	}
	wantError(t, e.do("GET", "/v1/vendors/"+theirs, empKey, nil), http.StatusNotFound, "not_found")
	wantStatus(t, e.do("GET", "/v1/vendors/"+mine, admin, nil), http.StatusOK)
	wantError(t, e.do("POST", "/v1/vendors", empKey, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
}
