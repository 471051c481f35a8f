package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

func TestESRSCodes(t *testing.T) {
	t.Parallel()
	want := map[string]int{"ESRS2": 16, "E1": 9, "E2": 6, "E3": 5, "E4": 6, "E5": 6, "S1": 17, "S2": 5, "S3": 5, "S4": 5, "G1": 6}
	total := 0
	for std, n := range want {
		if got := len(app.ESRSCodes(std)); got != n {
			t.Errorf("%s has %d disclosure requirements, want %d", std, got, n)
		}
		total += n
	}
	if len(app.ESRSStandards) != len(want) || total != 86 {
		t.Errorf("standards %d, codes %d", len(app.ESRSStandards), total)
	}
	for in, out := range map[string]string{"e1-6": "E1-6", "ESRS E1-6": "E1-6", "ESRS 2 GOV-1": "GOV-1", " s1-17 ": "S1-17"} {
		if got := app.NormalizeESRSCode(in); got != out {
			t.Errorf("NormalizeESRSCode(%q) = %q, want %q", in, got, out)
		}
	}
	for in, out := range map[string]string{"E1": "E1", "esrs e1": "E1", "ESRS-E1": "E1", "ESRS 2": "ESRS2", "2": "ESRS2", "E9": "", "X": ""} {
		if got := app.NormalizeESRSStandard(in); got != out {
			t.Errorf("NormalizeESRSStandard(%q) = %q, want %q", in, got, out)
		}
	}
}

func TestCSRDDataPoints(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	other := e.org("Other", "professional")
	key := e.key(org, app.RoleAdmin)
	auditor := e.key(org, app.RoleAuditor)
	otherKey := e.key(other, app.RoleAdmin)

	d := e.create("/v1/csrd/data-points", key, map[string]any{"esrsCode": "E1-6", "dataPointId": "E1-6_01", "value": 1234.5,
		"unit": "tCO2e", "period": "2025", "methodology": "GHG Protocol", "notes": "scope 1"})
	if !strings.HasPrefix(d["id"].(string), "esg_") || d["standard"] != "E1" || d["value"] != 1234.5 || d["unit"] != "tCO2e" {
		t.Fatalf("data point: %v", d)
	}
	id := d["id"].(string)
	gov := e.create("/v1/csrd/data-points", key, map[string]any{"esrsCode": "ESRS 2 GOV-1", "value": 7, "period": "2025"})
	s1 := e.create("/v1/csrd/data-points", key, map[string]any{"esrsCode": "s1-6", "value": 250, "period": "2024", "unit": "headcount"})
	if gov["esrsCode"] != "GOV-1" || gov["standard"] != "ESRS2" || s1["esrsCode"] != "S1-6" {
		t.Errorf("normalized: %v %v", gov, s1)
	}
	// Integer zero and negative values are numbers too.
	e.create("/v1/csrd/data-points", key, map[string]any{"esrsCode": "E1-5", "value": 0, "period": "2025"})

	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"value": 1, "period": "2025"}, "esrsCode"},
		{map[string]any{"esrsCode": "E1-10", "value": 1, "period": "2025"}, "esrsCode"},
		{map[string]any{"esrsCode": "E6-1", "value": 1, "period": "2025"}, "esrsCode"},
		{map[string]any{"esrsCode": "S1-18", "value": 1, "period": "2025"}, "esrsCode"},
		{map[string]any{"esrsCode": "E1-6", "period": "2025"}, "value"},
		{map[string]any{"esrsCode": "E1-6", "value": "12", "period": "2025"}, "value"},
		{map[string]any{"esrsCode": "E1-6", "value": true, "period": "2025"}, "value"},
		{map[string]any{"esrsCode": "E1-6", "value": nil, "period": "2025"}, "value"},
		{map[string]any{"esrsCode": "E1-6", "value": 1}, "period"},
		{map[string]any{"esrsCode": "E1-6", "value": 1, "period": "FY25"}, "period"},
		{map[string]any{"esrsCode": "E1-6", "value": 1, "period": "2025", "unit": strings.Repeat("u", 51)}, "unit"},
	} {
		wantField(t, e.do("POST", "/v1/csrd/data-points", key, c.body), c.field)
	}

	// One value per data point and period.
	dup := e.do("POST", "/v1/csrd/data-points", key, map[string]any{"esrsCode": "e1-6", "dataPointId": "E1-6_01", "value": 1, "period": "2025"})
	wantError(t, dup, http.StatusConflict, "conflict")
	if !strings.Contains(obj(t, dup)["message"].(string), id) {
		t.Errorf("the conflict names the existing value: %s", dup.Body.String())
	}
	e.create("/v1/csrd/data-points", key, map[string]any{"esrsCode": "E1-6", "dataPointId": "E1-6_01", "value": 1, "period": "2024"})
	e.create("/v1/csrd/data-points", key, map[string]any{"esrsCode": "E1-6", "dataPointId": "E1-6_02", "value": 1, "period": "2025"})

	// Explicit update.
	up := obj(t, e.do("PATCH", "/v1/csrd/data-points/"+id, key, map[string]any{"value": 1300, "notes": "restated"}))
	if up["value"] != float64(1300) || up["notes"] != "restated" || up["esrsCode"] != "E1-6" {
		t.Errorf("update: %v", up)
	}
	wantField(t, e.do("PATCH", "/v1/csrd/data-points/"+id, key, map[string]any{"value": "x"}), "value")
	wantError(t, e.do("PATCH", "/v1/csrd/data-points/"+id, key, map[string]any{"period": "2024"}), http.StatusConflict, "conflict")
	if got := obj(t, e.do("GET", "/v1/csrd/data-points/"+id, auditor, nil)); got["value"] != float64(1300) {
		t.Errorf("get: %v", got)
	}

	// Filters.
	count := func(q string) float64 {
		_, meta := listIDs(t, e, "/v1/csrd/data-points"+q, key)
		return meta["total"].(float64)
	}
	for q, want := range map[string]float64{"": 6, "?standard=E1": 4, "?standard=ESRS%20E1": 4, "?period=2025": 4,
		"?standard=E1&period=2025": 3, "?standard=ESRS2": 1, "?standard=S1&period=2024": 1, "?esrsCode=E1-6": 3, "?standard=G1": 0} {
		if got := count(q); got != want {
			t.Errorf("GET /v1/csrd/data-points%s: total %v, want %v", q, got, want)
		}
	}
	for _, q := range []string{"standard=E9", "period=25", "esrsCode=X-1"} {
		wantError(t, e.do("GET", "/v1/csrd/data-points?"+q, key, nil), http.StatusBadRequest, "validation_error")
	}

	// Permissions and isolation.
	wantError(t, e.do("POST", "/v1/csrd/data-points", auditor, map[string]any{"esrsCode": "G1-1", "value": 1, "period": "2025"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("PATCH", "/v1/csrd/data-points/"+id, auditor, map[string]any{"value": 1}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/csrd/data-points/"+id, otherKey, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("PATCH", "/v1/csrd/data-points/"+id, otherKey, map[string]any{"value": 1}), http.StatusNotFound, "not_found")
	if _, meta := listIDs(t, e, "/v1/csrd/data-points", otherKey); meta["total"] != float64(0) {
		t.Errorf("another organization sees %v values", meta["total"])
	}
	// The other organization may report the same data point.
	e.create("/v1/csrd/data-points", otherKey, map[string]any{"esrsCode": "E1-6", "dataPointId": "E1-6_01", "value": 1, "period": "2025"})
}

func TestFindingTemplatesCRUD(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	auditor := e.key(org, app.RoleAuditor)
	b := e.create("/v1/finding-template", key, map[string]any{"title": "B", "order": 2})
	a := e.create("/v1/finding-template", key, map[string]any{"title": "A", "content": "c", "order": 1, "severity": "LOW"})
	if a["severity"] != "low" || a["type"] != nil {
		t.Errorf("template: %v", a)
	}
	ids, _ := listIDs(t, e, "/v1/finding-template", auditor)
	if !sameIDs(ids, a["id"].(string), b["id"].(string)) {
		t.Errorf("templates by order = %v", ids)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{}, "title"},
		{map[string]any{"title": "t", "content": strings.Repeat("c", 5001)}, "content"},
		{map[string]any{"title": "t", "severity": "major"}, "severity"},
		{map[string]any{"title": "t", "type": "sox"}, "type"},
		{map[string]any{"title": "t", "findingClass": "x"}, "findingClass"},
		{map[string]any{"title": "t", "order": -1}, "order"},
	} {
		wantField(t, e.do("POST", "/v1/finding-template", key, c.body), c.field)
	}
	path := "/v1/finding-template/" + a["id"].(string)
	up := obj(t, e.do("PATCH", path, key, map[string]any{"title": "A2", "severity": nil, "type": "dora"}))
	if up["title"] != "A2" || up["severity"] != nil || up["type"] != "dora" || up["content"] != "c" {
		t.Errorf("update: %v", up)
	}
	wantError(t, e.do("POST", "/v1/finding-template", auditor, map[string]any{"title": "x"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("DELETE", path, auditor, nil), http.StatusForbidden, "forbidden")
	wantStatus(t, e.do("DELETE", path, key, nil), http.StatusNoContent)
	wantError(t, e.do("GET", path, key, nil), http.StatusNotFound, "not_found")
	wantField(t, e.do("POST", "/v1/findings", key, map[string]any{"templateId": a["id"], "scope": "people"}), "templateId")
}
