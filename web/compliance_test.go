package web

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// upload sends a multipart form with one file and text fields.
func (e *testEnv) upload(path, key, filename string, content []byte, fields map[string]string) *httptest.ResponseRecorder {
	e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			e.t.Fatal(err)
		}
	}
	if filename != "" {
		fw, err := mw.CreateFormFile("file", filename)
		if err != nil {
			e.t.Fatal(err)
		}
		fw.Write(content)
	}
	mw.Close()
	req := httptest.NewRequest("POST", path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-API-Key", key)
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return rec
}

// list decodes a list response's data.
func list(t *testing.T, rec *httptest.ResponseRecorder) []map[string]any {
	t.Helper()
	wantStatus(t, rec, http.StatusOK)
	var body struct {
		Data []map[string]any `json:"data"`
		Meta map[string]any   `json:"meta"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.Meta == nil || body.Data == nil {
		t.Fatalf("not a list envelope: %s", rec.Body.String())
	}
	return body.Data
}

func total(t *testing.T, rec *httptest.ResponseRecorder) int {
	t.Helper()
	m := obj(t, rec)
	return int(m["meta"].(map[string]any)["total"].(float64))
}

// enable enables a framework and returns the result body.
func (e *testEnv) enable(key, slug string) map[string]any {
	e.t.Helper()
	rec := e.do("POST", "/v1/frameworks/"+slug+"/enable", key, nil)
	wantStatus(e.t, rec, http.StatusOK)
	return obj(e.t, rec)
}

func TestFrameworkCatalog(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanEnterprise)
	key := e.key(org, app.RoleAdmin)
	rec := e.do("GET", "/v1/frameworks?perPage=200", key, nil)
	data := list(t, rec)
	if len(data) != 16 {
		t.Fatalf("%d frameworks, want the 16 built-ins", len(data))
	}
	slugs := map[string]map[string]any{}
	for _, f := range data {
		slugs[f["slug"].(string)] = f
		if f["enabled"] != false || f["score"] != nil {
			t.Fatalf("fresh organization has %s enabled: %v", f["slug"], f)
		}
		if f["license"] == "" || len(f["sources"].([]any)) == 0 {
			t.Fatalf("%s lacks its source or licence note", f["slug"])
		}
	}
	for _, s := range []string{"dora", "nis2", "gdpr", "bafin-marisk", "iso27001-2022", "iso42001-2023", "iso9001-2015", "soc2-2017",
		"hipaa", "pci-dss-4.0", "nen7510", "nist-csf-2.0", "nist-sp800-53-r5", "eu-ai-act", "cra", "csrd-esrs"} {
		if slugs[s] == nil {
			t.Errorf("built-in %s missing", s)
		}
	}
	for _, s := range []string{"bafin-marisk", "nen7510"} {
		if slugs[s]["coverage"] != "outline" {
			t.Errorf("%s coverage %v, want outline", s, slugs[s]["coverage"])
		}
	}
	// By id and by slug, with the licence note.
	id := slugs["iso27001-2022"]["id"].(string)
	rec = e.do("GET", "/v1/frameworks/"+id, key, nil)
	wantStatus(t, rec, http.StatusOK)
	f := obj(t, rec)
	if f["slug"] != "iso27001-2022" || f["license"] == "" {
		t.Fatalf("get by id: %v", f)
	}
	// Requirements keep ids, titles and hierarchy.
	rec = e.do("GET", "/v1/frameworks/iso27001-2022/requirements?perPage=200", key, nil)
	reqs := list(t, rec)
	var a51 map[string]any
	for _, r := range reqs {
		if r["ref"] == "A.5.1" {
			a51 = r
		}
	}
	if a51 == nil || a51["title"] != "Policies for information security" || a51["parentRef"] != "A.5" || a51["parentId"] == nil {
		t.Fatalf("A.5.1: %v", a51)
	}
	if a51["description"] != "" {
		t.Fatal("ISO requirement text must not be shipped")
	}
	rec = e.do("GET", "/v1/frameworks/iso27001-2022/requirements/"+a51["id"].(string), key, nil)
	wantStatus(t, rec, http.StatusOK)
	// NIS2 includes the implementing regulation under its group node.
	rec = e.do("GET", "/v1/frameworks/nis2", key, nil)
	if n := obj(t, rec)["requirementCount"].(float64); n < 400 {
		t.Fatalf("nis2 has %v requirements, want Art. 21 plus the implementing regulation", n)
	}
	wantError(t, e.do("GET", "/v1/frameworks/nope", key, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/frameworks", "", nil), http.StatusUnauthorized, "unauthorized")
	wantField(t, e.do("GET", "/v1/frameworks?enabled=maybe", key, nil), "enabled")
}

func TestEnableSOC2AndISOShareControls(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	soc := e.enable(key, "soc2-2017")
	created := int(soc["controlsCreated"].(float64))
	if created != 301 || soc["controlsReused"].(float64) != 0 {
		t.Fatalf("soc2: %v", soc)
	}
	iso := e.enable(key, "iso27001-2022")
	reused := int(iso["controlsReused"].(float64))
	if reused == 0 {
		t.Fatalf("iso 27001 reused no SOC 2 control: %v", iso)
	}
	isoCreated := int(iso["controlsCreated"].(float64))
	t.Logf("ISO 27001 after SOC 2: %d controls created, %d reused", isoCreated, reused)
	if isoCreated+reused > 123 || isoCreated >= 123 {
		t.Fatalf("iso: created %d reused %d", isoCreated, reused)
	}
	// Enabling again changes nothing.
	again := e.enable(key, "iso27001-2022")
	if again["alreadyEnabled"] != true || again["controlsCreated"].(float64) != 0 {
		t.Fatalf("re-enable: %v", again)
	}
	rec := e.do("GET", "/v1/controls?perPage=1", key, nil)
	if n := total(t, rec); n != created+isoCreated {
		t.Fatalf("%d controls, want %d", n, created+isoCreated)
	}
	rec = e.do("GET", "/v1/controls?frameworkId=iso27001-2022&perPage=200", key, nil)
	ctls := list(t, rec)
	var shared map[string]any
	for _, c := range ctls {
		fws := map[string]bool{}
		for _, r := range c["requirements"].([]any) {
			fws[r.(map[string]any)["frameworkSlug"].(string)] = true
		}
		if fws["soc2-2017"] && fws["iso27001-2022"] {
			shared = c
			break
		}
	}
	if shared == nil {
		t.Fatal("no control lists requirements of both frameworks")
	}
	if shared["assessment"] != "not_met" || shared["status"] != "not_started" {
		t.Fatalf("fresh control: %v", shared)
	}
	rec = e.do("GET", "/v1/controls/"+shared["id"].(string), key, nil)
	wantStatus(t, rec, http.StatusOK)
	if len(obj(t, rec)["requirements"].([]any)) < 2 {
		t.Fatal("control lists fewer than 2 requirements")
	}
	// Both frameworks now have a score.
	rec = e.do("GET", "/v1/frameworks?enabled=true", key, nil)
	fws := list(t, rec)
	if len(fws) != 2 {
		t.Fatalf("%d enabled frameworks", len(fws))
	}
	for _, f := range fws {
		if f["score"] == nil {
			t.Fatalf("enabled framework without score: %v", f)
		}
	}
	// Status filter and bad filters.
	if n := total(t, e.do("GET", "/v1/controls?status=implemented", key, nil)); n != 0 {
		t.Fatalf("%d implemented", n)
	}
	wantField(t, e.do("GET", "/v1/controls?status=done", key, nil), "status")
	wantField(t, e.do("GET", "/v1/controls?frameworkId=nope", key, nil), "frameworkId")
}

func TestFrameworkPlanLimit(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Small", app.PlanFree)
	key := e.key(org, app.RoleOwner)
	e.enable(key, "iso9001-2015")
	rec := e.do("POST", "/v1/frameworks/nis2/enable", key, nil)
	er := wantError(t, rec, http.StatusForbidden, "forbidden")
	if er["details"].(map[string]any)["limit"] != "frameworks" {
		t.Fatalf("details: %v", er["details"])
	}
	aud := e.key(org, app.RoleAuditor)
	wantError(t, e.do("POST", "/v1/frameworks/iso9001-2015/enable", aud, nil), http.StatusForbidden, "forbidden")
}

func TestEnableAllFrameworks(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Big", app.PlanEnterprise)
	key := e.key(org, app.RoleOwner)
	rec := e.do("GET", "/v1/frameworks", key, nil)
	for _, f := range list(t, rec) {
		e.enable(key, f["slug"].(string))
	}
	var controls, shared int
	err := e.db.Raw().QueryRow(`SELECT count(*) FROM controls WHERE organization_id = ?`, org).Scan(&controls)
	if err != nil {
		t.Fatal(err)
	}
	err = e.db.Raw().QueryRow(`SELECT count(*) FROM (SELECT control_id FROM requirement_controls WHERE organization_id = ?
		GROUP BY control_id HAVING count(DISTINCT framework_id) >= 2)`, org).Scan(&shared)
	if err != nil {
		t.Fatal(err)
	}
	var links, viaShared int
	err = e.db.Raw().QueryRow(`SELECT count(*), coalesce(sum(CASE WHEN control_id IN (SELECT control_id FROM requirement_controls WHERE organization_id = ?
		GROUP BY control_id HAVING count(DISTINCT framework_id) >= 2) THEN 1 ELSE 0 END), 0) FROM requirement_controls WHERE organization_id = ?`, org, org).Scan(&links, &viaShared)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("16 frameworks: %d requirements linked, %d controls, %d controls shared by 2+ frameworks serving %d requirements", links, controls, shared, viaShared)
	if shared == 0 || controls == 0 {
		t.Fatal("no controls or no sharing")
	}
}

func TestControlsCrossOrgAndRoles(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	a := e.org("A", app.PlanProfessional)
	b := e.org("B", app.PlanProfessional)
	ka, kb := e.key(a, app.RoleAdmin), e.key(b, app.RoleAdmin)
	aud := e.key(a, app.RoleAuditor)
	e.enable(ka, "iso9001-2015")
	ctl := list(t, e.do("GET", "/v1/controls", ka, nil))[0]
	id := ctl["id"].(string)
	path := "/v1/controls/" + id
	wantError(t, e.do("GET", path, kb, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("PATCH", path, kb, map[string]any{"name": "x"}), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", path+"/evidence", kb, nil), http.StatusNotFound, "not_found")
	wantError(t, e.upload(path+"/evidence", kb, "a.txt", []byte("x"), nil), http.StatusNotFound, "not_found")
	if n := total(t, e.do("GET", "/v1/controls", kb, nil)); n != 0 {
		t.Fatalf("org B sees %d controls", n)
	}
	// Auditor: read yes, write no.
	wantStatus(t, e.do("GET", path, aud, nil), http.StatusOK)
	wantError(t, e.do("PATCH", path, aud, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	wantError(t, e.upload(path+"/evidence", aud, "a.txt", []byte("x"), nil), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/controls", aud, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")

	// Not applicable needs a justification.
	wantField(t, e.do("PATCH", path, ka, map[string]any{"status": "not_applicable"}), "justification")
	wantField(t, e.do("PATCH", path, ka, map[string]any{"status": "bogus"}), "status")
	wantField(t, e.do("PATCH", path, ka, map[string]any{"status": "implemented"}), "status")
	wantField(t, e.do("PATCH", path, ka, map[string]any{"ownerId": "usr_nope"}), "ownerId")
	owner := e.person(a, "o@a.test", app.RoleAdmin)
	rec := e.do("PATCH", path, ka, map[string]any{"status": "not_applicable", "justification": "No such processes", "ownerId": owner})
	wantStatus(t, rec, http.StatusOK)
	c := obj(t, rec)
	if c["status"] != "not_applicable" || c["assessment"] != "not_applicable" || c["ownerId"] != owner {
		t.Fatalf("patched: %v", c)
	}
	if n := total(t, e.do("GET", "/v1/controls?ownerId="+owner, ka, nil)); n != 1 {
		t.Fatalf("ownerId filter: %d", n)
	}
	evs := e.events(a, app.EventControlStatusChanged)
	if len(evs) != 1 || evs[0]["controlId"] != id || evs[0]["previousStatus"] != "not_started" || evs[0]["status"] != "not_applicable" || evs[0]["changedAt"] == nil {
		t.Fatalf("events: %v", evs)
	}
	rec = e.do("GET", "/v1/frameworks/iso9001-2015", ka, nil)
	f := obj(t, rec)
	counts := f["counts"].(map[string]any)
	if counts["controls"].(map[string]any)["not_applicable"].(float64) != 1 || counts["requirements"].(map[string]any)["notApplicable"].(float64) != 1 {
		t.Fatalf("counts: %v", counts)
	}
	// Back to in progress clears the justification.
	rec = e.do("PATCH", path, ka, map[string]any{"status": "in_progress"})
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["justification"] != nil {
		t.Fatal("justification kept after leaving not applicable")
	}
}

func TestStatusRuleEvidenceTaskAndExpiry(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("A", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	e.enable(key, "soc2-2017")
	e.enable(key, "iso27001-2022")
	// A control shared by both frameworks.
	var id string
	for _, c := range list(t, e.do("GET", "/v1/controls?frameworkId=iso27001-2022&perPage=200", key, nil)) {
		if len(c["requirements"].([]any)) >= 2 {
			id = c["id"].(string)
			break
		}
	}
	scores := func() (int, int) {
		s := obj(t, e.do("GET", "/v1/frameworks/soc2-2017", key, nil))["counts"].(map[string]any)["requirements"].(map[string]any)["met"].(float64)
		i := obj(t, e.do("GET", "/v1/frameworks/iso27001-2022", key, nil))["counts"].(map[string]any)["requirements"].(map[string]any)["met"].(float64)
		return int(s), int(i)
	}
	rec := e.do("POST", "/v1/tasks", key, map[string]any{"title": "Collect access review", "controlId": id, "dueDate": "2026-01-31", "recurrence": "monthly"})
	wantStatus(t, rec, http.StatusCreated)
	task := obj(t, rec)
	tid := task["id"].(string)
	// Completing without evidence does not implement the control.
	wantStatus(t, e.do("POST", "/v1/tasks/"+tid+"/complete", key, nil), http.StatusOK)
	if c := obj(t, e.do("GET", "/v1/controls/"+id, key, nil)); c["status"] != "in_progress" {
		t.Fatalf("control after completing without evidence: %v", c["status"])
	}
	// The recurrence scheduled the next occurrence.
	next := list(t, e.do("GET", "/v1/tasks?controlId="+id+"&status=todo", key, nil))
	if len(next) != 1 || next[0]["dueDate"] != "2026-02-28" || next[0]["seriesId"] != tid {
		t.Fatalf("next occurrence: %v", next)
	}
	// Evidence attached to the completed task that expires in 40 days.
	rec = e.upload("/v1/tasks/"+tid+"/evidence", key, "review.pdf", []byte("%PDF-1.4 review"), map[string]string{"description": "Q1 review", "expiresAt": "2026-02-24"})
	wantStatus(t, rec, http.StatusCreated)
	ev := obj(t, rec)
	if ev["controlId"] != id || ev["filename"] != "review.pdf" || ev["uploadedAt"] == nil || ev["expiresAt"] != "2026-02-24T00:00:00Z" || len(ev["sha256"].(string)) != 64 {
		t.Fatalf("evidence: %v", ev)
	}
	c := obj(t, e.do("GET", "/v1/controls/"+id, key, nil))
	if c["status"] != "implemented" || c["assessment"] != "met" || c["evidenceCount"].(float64) != 1 {
		t.Fatalf("control after evidence: %v", c)
	}
	s1, i1 := scores()
	if s1 == 0 || i1 == 0 {
		t.Fatalf("implemented shared control counts in both frameworks: soc2 %d iso %d", s1, i1)
	}
	evs := e.events(org, app.EventControlStatusChanged)
	last := evs[len(evs)-1]
	if last["status"] != "implemented" || last["previousStatus"] != "in_progress" {
		t.Fatalf("last status event: %v", last)
	}
	// The expiry scan: nothing yet (40 days out), then once inside 30 days.
	if err := e.app.ScanEvidenceExpiry(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(e.events(org, app.EventEvidenceExpiring)); n != 0 {
		t.Fatalf("%d expiring events 40 days out", n)
	}
	e.clock.Advance(11 * 24 * 3600e9)
	for range 2 {
		if err := e.app.ScanEvidenceExpiry(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	exp := e.events(org, app.EventEvidenceExpiring)
	if len(exp) != 1 || exp[0]["evidenceId"] != ev["id"] || exp[0]["controlId"] != id || exp[0]["expiresAt"] != "2026-02-24T00:00:00Z" {
		t.Fatalf("expiring events: %v", exp)
	}
	// Past expiry the control drops out of implemented.
	e.clock.Advance(30 * 24 * 3600e9)
	if err := e.app.ScanEvidenceExpiry(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := e.app.ScanEvidenceExpiry(t.Context()); err != nil {
		t.Fatal(err)
	}
	c = obj(t, e.do("GET", "/v1/controls/"+id, key, nil))
	if c["status"] != "in_progress" || c["evidenceCount"].(float64) != 0 {
		t.Fatalf("control after expiry: %v", c)
	}
	evs = e.events(org, app.EventControlStatusChanged)
	if last := evs[len(evs)-1]; last["status"] != "in_progress" || last["previousStatus"] != "implemented" {
		t.Fatalf("expiry status event: %v", last)
	}
	if s2, i2 := scores(); s2 >= s1 || i2 >= i1 {
		t.Fatalf("scores did not drop: soc2 %d->%d iso %d->%d", s1, s2, i1, i2)
	}
	if ev2 := obj(t, e.do("GET", "/v1/evidence/"+ev["id"].(string), key, nil)); ev2["expired"] != true {
		t.Fatalf("evidence not marked expired: %v", ev2)
	}
}
