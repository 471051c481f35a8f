package web

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// reportByKey returns the report of a regime and kind from an incident body.
func reportByKey(t *testing.T, inc map[string]any, regime, kind string) map[string]any {
	t.Helper()
	rs, _ := inc["reports"].([]any)
	for _, x := range rs {
		r := x.(map[string]any)
		if r["regime"] == regime && r["kind"] == kind {
			return r
		}
	}
	t.Fatalf("no %s %s report in %v", regime, kind, inc["reports"])
	return nil
}

// newIncident creates an incident through the API and returns its body.
func (e *testEnv) newIncident(key string, body map[string]any) map[string]any {
	e.t.Helper()
	rec := e.do("POST", "/v1/incidents", key, body)
	wantStatus(e.t, rec, http.StatusCreated)
	return obj(e.t, rec)
}

// TestIncidentLifecycle records an incident, proposes and confirms the
// regimes, follows the clocks as facts change, and keeps the timeline.
func TestIncidentLifecycle(t *testing.T) {
	t.Parallel()
	e := newTestServer(t) // clock: 2026-01-15T10:00:00Z
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	risk := sweepCreate(e, org, "/v1/risks", map[string]any{"title": "Ransomware"})
	vendor := sweepCreate(e, org, "/v1/vendors", map[string]any{"name": "Hoster"})

	rec := e.do("POST", "/v1/incidents", key, map[string]any{"title": "Customer database exposed", "type": "personal_data_breach",
		"description": "A backup bucket was public.", "detectedAt": "2026-01-15T08:30:00+01:00", "awareAt": "2026-01-15T09:15:00+01:00",
		"affectedServices": []string{"Webshop"}, "dataCategories": []string{"contact data"}, "countries": []string{"de", "AT"}, "crossBorder": true,
		"dataSubjectsAffected": 1200, "linkedRiskIds": []string{risk}, "linkedVendorIds": []string{vendor},
		"facts": map[string]any{"severeOperationalDisruption": true}}, "Idempotency-Key", "inc-1")
	wantStatus(t, rec, http.StatusCreated)
	inc := obj(t, rec)
	id := inc["id"].(string)
	if !strings.HasPrefix(id, "inc_") || inc["awareAt"] != "2026-01-15T08:15:00Z" || inc["detectedAt"] != "2026-01-15T07:30:00Z" ||
		inc["status"] != "open" || inc["severity"] != "medium" {
		t.Fatalf("created: %s", rec.Body.String())
	}
	if fmt.Sprint(inc["countries"]) != "[DE AT]" || fmt.Sprint(inc["linkedRiskIds"]) != "["+risk+"]" || len(inc["reports"].([]any)) != 0 {
		t.Fatalf("lists, links and (no) clocks: %s", rec.Body.String())
	}
	if len(e.events(org, app.EventIncidentCreated)) != 1 {
		t.Fatal("incident.created raised once")
	}
	// The same key and body replays the first answer.
	rec = e.do("POST", "/v1/incidents", key, map[string]any{"title": "Customer database exposed", "type": "personal_data_breach",
		"description": "A backup bucket was public.", "detectedAt": "2026-01-15T08:30:00+01:00", "awareAt": "2026-01-15T09:15:00+01:00",
		"affectedServices": []string{"Webshop"}, "dataCategories": []string{"contact data"}, "countries": []string{"de", "AT"}, "crossBorder": true,
		"dataSubjectsAffected": 1200, "linkedRiskIds": []string{risk}, "linkedVendorIds": []string{vendor},
		"facts": map[string]any{"severeOperationalDisruption": true}}, "Idempotency-Key", "inc-1")
	if rec.Header().Get("Idempotent-Replayed") != "true" || obj(t, rec)["id"] != id {
		t.Fatalf("idempotent create: %s", rec.Body.String())
	}

	// The proposal shows its criteria and asks for the facts it lacks.
	rec = e.do("GET", "/v1/incidents/"+id+"/applicability", key, nil)
	wantStatus(t, rec, http.StatusOK)
	props := map[string]map[string]any{}
	for _, p := range obj(t, rec)["regimes"].([]any) {
		props[p.(map[string]any)["regime"].(string)] = p.(map[string]any)
	}
	if props["nis2"]["proposal"] != "undetermined" || !strings.Contains(fmt.Sprint(props["nis2"]["missingFacts"]), "profile.nis2EntityType") ||
		props["gdpr"]["proposal"] != "undetermined" {
		t.Fatalf("proposals: %v", props)
	}
	rec = e.do("PATCH", "/v1/incident-profile", key, map[string]any{"nis2EntityType": "important", "financialEntity": false,
		"gdprRole": "controller", "gdprAuthority": "BfDI", "nis2Authority": "BSI", "contactEmail": "sec@acme.test"})
	wantStatus(t, rec, http.StatusOK)
	rec = e.do("GET", "/v1/incidents/"+id+"/applicability", key, nil)
	for _, p := range obj(t, rec)["regimes"].([]any) {
		props[p.(map[string]any)["regime"].(string)] = p.(map[string]any)
	}
	if props["nis2"]["proposal"] != "applies" || props["gdpr"]["proposal"] != "applies" || props["dora"]["proposal"] != "does_not_apply" {
		t.Fatalf("proposals after the profile: %v", props)
	}

	// Confirming starts the clocks.
	rec = e.do("POST", "/v1/incidents/"+id+"/regimes", key, map[string]any{"regimes": []string{"gdpr", "nis2"}})
	wantStatus(t, rec, http.StatusOK)
	inc = obj(t, rec)
	if fmt.Sprint(inc["confirmedRegimes"]) != "[nis2 gdpr]" {
		t.Fatalf("confirmed: %v", inc["confirmedRegimes"])
	}
	ew := reportByKey(t, inc, "nis2", "early_warning")
	if ew["dueAt"] != "2026-01-16T08:15:00Z" || ew["status"] != "pending" || ew["startEvent"] != "awareness" || ew["overdue"] != false {
		t.Fatalf("early warning: %v", ew)
	}
	if n := reportByKey(t, inc, "gdpr", "notification"); n["dueAt"] != "2026-01-18T08:15:00Z" || n["secondsLeft"].(float64) != float64(70*3600+15*60) {
		t.Fatalf("gdpr notification: %v", n)
	}
	if inc["nextDueAt"] != "2026-01-16T08:15:00Z" {
		t.Fatalf("next due: %v", inc["nextDueAt"])
	}
	// A later awareness moves every clock that starts there.
	rec = e.do("PATCH", "/v1/incidents/"+id, key, map[string]any{"awareAt": "2026-01-15T10:00:00+01:00", "facts": map[string]any{"personalDataRisk": "high_risk"}})
	wantStatus(t, rec, http.StatusOK)
	inc = obj(t, rec)
	if reportByKey(t, inc, "nis2", "early_warning")["dueAt"] != "2026-01-16T09:00:00Z" || reportByKey(t, inc, "gdpr", "communication")["status"] != "pending" {
		t.Fatalf("recomputed: %v", inc["reports"])
	}
	// Status, with its event and timeline entry.
	rec = e.do("POST", "/v1/incidents/"+id+"/status", key, map[string]any{"status": "contained", "note": "Bucket made private."})
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["containedAt"] != "2026-01-15T10:00:00Z" {
		t.Fatalf("contained: %s", rec.Body.String())
	}
	ev := e.events(org, app.EventIncidentStatusChanged)
	if len(ev) != 1 || ev[0]["previousStatus"] != "open" || ev[0]["status"] != "contained" {
		t.Fatalf("status event: %v", ev)
	}
	wantStatus(t, e.do("POST", "/v1/incidents/"+id+"/timeline", key, map[string]any{"kind": "communication", "content": "Customers informed by email."}), http.StatusCreated)
	rec = e.do("GET", "/v1/incidents/"+id+"/timeline", key, nil)
	wantStatus(t, rec, http.StatusOK)
	var kinds []string
	for _, x := range list(t, rec) {
		kinds = append(kinds, x["kind"].(string))
	}
	if strings.Join(kinds, ",") != "reported,regimes,status,communication" {
		t.Fatalf("timeline kinds: %v", kinds)
	}
	// Every step is in the audit trail.
	rec = e.do("GET", "/v1/audit-log?resourceId="+id+"&perPage=50", key, nil)
	wantStatus(t, rec, http.StatusOK)
	var actions []string
	for _, x := range list(t, rec) {
		actions = append(actions, x["action"].(string))
	}
	for _, a := range []string{"created", "regimes_confirmed", "updated", "status_changed", "timeline_added"} {
		if !strings.Contains(strings.Join(actions, ","), a) {
			t.Errorf("audit trail lacks %s: %v", a, actions)
		}
	}

	// Filters and paging.
	other := e.newIncident(key, map[string]any{"title": "Phishing wave", "type": "security_incident", "awareAt": "2026-01-10T09:00:00Z"})
	wantStatus(t, e.do("POST", "/v1/incidents/"+other["id"].(string)+"/regimes", key, map[string]any{"regimes": []string{"nis2"}}), http.StatusOK)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{other["id"].(string), id}},
		{"?status=contained", []string{id}},
		{"?type=security_incident", []string{other["id"].(string)}},
		{"?regime=gdpr", []string{id}},
		{"?regime=nis2", []string{other["id"].(string), id}},
		{"?overdue=true", []string{other["id"].(string)}},
		{"?overdue=false", []string{id}},
		{"?perPage=1&page=2", []string{id}},
	} {
		rec := e.do("GET", "/v1/incidents"+tc.query, key, nil)
		wantStatus(t, rec, http.StatusOK)
		var got []string
		for _, x := range list(t, rec) {
			got = append(got, x["id"].(string))
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	rec = e.do("GET", "/v1/incidents?perPage=1", key, nil)
	if m := obj(t, rec)["meta"].(map[string]any); m["total"] != float64(2) || m["totalPages"] != float64(2) {
		t.Fatalf("meta: %v", m)
	}
	if obj(t, e.do("GET", "/v1/incidents/"+other["id"].(string), key, nil))["overdue"] != true {
		t.Fatal("an incident with a report past due is overdue")
	}
}

// TestIncidentValidation: every bad field is a 400 naming it.
func TestIncidentValidation(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleOwner)
	otherRisk := sweepCreate(e, e.org("Other", app.PlanProfessional), "/v1/risks", map[string]any{"title": "theirs"})
	ok := map[string]any{"title": "T", "type": "security_incident", "awareAt": "2026-01-15T09:00:00Z"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range ok {
			m[a] = b
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		body  any
		field string
	}{
		{with("title", nil), "title"},
		{with("type", "outage"), "type"},
		{with("awareAt", nil), "awareAt"},
		{with("awareAt", "2026-01-15"), "awareAt"},
		{with("awareAt", "2026-01-15T09:00:00"), "awareAt"},
		{with("awareAt", "2026-02-01T09:00:00Z"), "awareAt"}, // in the future
		{with("detectedAt", "2026-01-15T09:30:00Z"), "awareAt"},
		{with("countries", []string{"XX"}), "countries"},
		{with("severity", "urgent"), "severity"},
		{with("dataSubjectsAffected", -1), "dataSubjectsAffected"},
		{with("linkedRiskIds", []string{otherRisk}), "linkedRiskIds"},
		{with("facts", map[string]any{"personalDataRisk": "maybe"}), "facts.personalDataRisk"},
		{with("facts", map[string]any{"nis2IntermediateDueAt": "2026-01-20T00:00:00Z"}), "facts.nis2IntermediateDueAt"},
		{with("title", 5), "title"},
	} {
		wantField(t, e.do("POST", "/v1/incidents", key, tc.body), tc.field)
	}
	id := e.newIncident(key, ok)["id"].(string)
	for _, tc := range []struct {
		method, path string
		body         any
		field        string
	}{
		{"POST", "/v1/incidents/" + id + "/status", map[string]any{"status": "done"}, "status"},
		{"POST", "/v1/incidents/" + id + "/status", map[string]any{}, "status"},
		{"POST", "/v1/incidents/" + id + "/timeline", map[string]any{"content": " "}, "content"},
		{"POST", "/v1/incidents/" + id + "/timeline", map[string]any{"content": "x", "kind": "gossip"}, "kind"},
		{"POST", "/v1/incidents/" + id + "/regimes", map[string]any{"regimes": []string{"hipaa"}}, "regimes"},
		{"POST", "/v1/incidents/" + id + "/regimes", map[string]any{}, "regimes"},
		{"PUT", "/v1/incidents/" + id + "/dora-classification", map[string]any{"memberStatesAffected": []string{"US"}}, "memberStatesAffected"},
		{"PUT", "/v1/incidents/" + id + "/dora-classification", map[string]any{"clientsAffected": -3}, "clientsAffected"},
		{"PATCH", "/v1/incident-profile", map[string]any{"nis2EntityType": "huge"}, "nis2EntityType"},
		{"PATCH", "/v1/incident-profile", map[string]any{"lei": "short"}, "lei"},
		{"GET", "/v1/incidents?status=gone", nil, "status"},
		{"GET", "/v1/incidents?overdue=maybe", nil, "overdue"},
		{"GET", "/v1/incidents?regime=sox", nil, "regime"},
	} {
		wantField(t, e.do(tc.method, tc.path, key, tc.body), tc.field)
	}
	wantError(t, e.do("GET", "/v1/incidents/inc_01HZZZZZZZZZZZZZZZZZZZZZZZ", key, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/v1/incidents", "", nil), http.StatusUnauthorized, "unauthorized")
}

// TestIncidentDORAClassification: the guided form's answers give the
// result, its reasoning and the 4-hour clock.
func TestIncidentDORAClassification(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Bank", app.PlanProfessional)
	key := e.key(org, app.RoleOwner)
	wantStatus(t, e.do("PATCH", "/v1/incident-profile", key, map[string]any{"financialEntity": true, "lei": "529900T8BM49AURSDO55"}), http.StatusOK)
	id := e.newIncident(key, map[string]any{"title": "Payments down", "type": "ict_incident", "awareAt": "2026-01-15T08:00:00Z"})["id"].(string)
	inc := obj(t, e.do("POST", "/v1/incidents/"+id+"/regimes", key, map[string]any{"regimes": []string{"dora"}}))
	if r := reportByKey(t, inc, "dora", "initial"); r["status"] != "awaiting_facts" || r["dueAt"] != "2026-01-16T08:00:00Z" || r["provisional"] != true {
		t.Fatalf("before classification: %v", r)
	}
	// Undetermined: the result waits for answers.
	rec := e.do("PUT", "/v1/incidents/"+id+"/dora-classification", key, map[string]any{"criticalFunctionsAffected": true, "economicImpactEur": 250000})
	wantStatus(t, rec, http.StatusOK)
	c := obj(t, rec)["doraClassification"].(map[string]any)
	if c["major"] != nil || c["thresholdsMet"] != float64(1) {
		t.Fatalf("undetermined: %v", c)
	}
	rec = e.do("PUT", "/v1/incidents/"+id+"/dora-classification", key, map[string]any{"criticalFunctionsAffected": true, "economicImpactEur": 250000,
		"downtimeHours": 3, "durationHours": 3, "memberStatesAffected": []string{"de", "FR"}, "classifiedAt": "2026-01-15T10:30:00+01:00"})
	wantStatus(t, rec, http.StatusOK)
	inc = obj(t, rec)
	c = inc["doraClassification"].(map[string]any)
	if c["major"] != true || c["thresholdsMet"] != float64(3) || c["majorSince"] != "2026-01-15T09:30:00Z" || len(c["criteria"].([]any)) != 8 {
		t.Fatalf("major: %v", c)
	}
	if !strings.Contains(fmt.Sprint(c["reasoning"]), "Art. 8(1)(b)") {
		t.Fatalf("the reasoning names the rule: %v", c["reasoning"])
	}
	if r := reportByKey(t, inc, "dora", "initial"); r["status"] != "pending" || r["dueAt"] != "2026-01-15T13:30:00Z" || r["startEvent"] != "classification as major" {
		t.Fatalf("initial notification: %v", r)
	}
	// The draft carries the classification.
	rid := reportByKey(t, inc, "dora", "initial")["id"].(string)
	rec = e.do("GET", "/v1/incidents/"+id+"/reports/"+rid, key, nil)
	wantStatus(t, rec, http.StatusOK)
	d := obj(t, rec)
	content := d["content"].(map[string]any)
	if d["prefilled"] != true || content["lei"] != "529900T8BM49AURSDO55" || !strings.Contains(content["classificationCriteria"].(string), "Economic impact") ||
		content["memberStatesAffected"] != "DE, FR" || content["classifiedAt"] != "2026-01-15 09:30 UTC" {
		t.Fatalf("draft: %v", content)
	}
	// Sending the initial notification starts the intermediate report's 72 hours.
	rec = e.do("POST", "/v1/incidents/"+id+"/reports/"+rid+"/send", key, map[string]any{"authority": "BaFin", "reference": "MVP-4711",
		"sentAt": "2026-01-15T09:50:00Z"})
	wantStatus(t, rec, http.StatusOK)
	inc = obj(t, e.do("GET", "/v1/incidents/"+id, key, nil))
	if r := reportByKey(t, inc, "dora", "intermediate"); r["dueAt"] != "2026-01-18T09:50:00Z" || r["provisional"] != false {
		t.Fatalf("intermediate after the initial notification: %v", r)
	}
	// Reclassified as not major: the open reports are no longer due.
	rec = e.do("PUT", "/v1/incidents/"+id+"/dora-classification", key, map[string]any{"criticalFunctionsAffected": false,
		"authorisedServicesAffected": false, "maliciousUnauthorisedAccess": false})
	inc = obj(t, rec)
	if reportByKey(t, inc, "dora", "final")["status"] != "not_required" || reportByKey(t, inc, "dora", "initial")["status"] != "sent" {
		t.Fatalf("not major: %v", inc["reports"])
	}
}

// TestIncidentReportVersions: drafts and sent reports are versions; a sent
// version never changes, through the API or in the database.
func TestIncidentReportVersions(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	id := e.newIncident(key, map[string]any{"title": "Laptop stolen", "type": "personal_data_breach", "awareAt": "2026-01-15T09:00:00Z",
		"dataSubjectsAffected": 40})["id"].(string)
	inc := obj(t, e.do("POST", "/v1/incidents/"+id+"/regimes", key, map[string]any{"regimes": []string{"gdpr"}}))
	rid := reportByKey(t, inc, "gdpr", "notification")["id"].(string)
	base := "/v1/incidents/" + id + "/reports/" + rid

	rec := e.do("GET", base, key, nil)
	d := obj(t, rec)
	if d["prefilled"] != true || !strings.Contains(d["content"].(map[string]any)["dataSubjects"].(string), "40") || len(d["fields"].([]any)) < 8 {
		t.Fatalf("prefilled draft: %s", rec.Body.String())
	}
	wantField(t, e.do("PATCH", base, key, map[string]any{"content": map[string]any{"colour": "red"}}), "content.colour")
	rec = e.do("PATCH", base, key, map[string]any{"content": map[string]any{"likelyConsequences": "Phishing against the customers."}})
	wantStatus(t, rec, http.StatusOK)
	d = obj(t, rec)
	if d["versions"] != float64(1) || d["prefilled"] != false || d["content"].(map[string]any)["likelyConsequences"] != "Phishing against the customers." ||
		!strings.Contains(d["content"].(map[string]any)["dataSubjects"].(string), "40") {
		t.Fatalf("draft version 1: %s", rec.Body.String())
	}
	// No authority in the profile and none given: 400.
	wantField(t, e.do("POST", base+"/send", key, map[string]any{}), "authority")
	rec = e.do("POST", base+"/send", key, map[string]any{"authority": "LfDI Baden-Württemberg", "reference": "DB-2026-17",
		"content": map[string]any{"measures": "Remote wipe issued."}})
	wantStatus(t, rec, http.StatusOK)
	d = obj(t, rec)
	if d["status"] != "sent" || d["versions"] != float64(2) || d["firstSentAt"] != "2026-01-15T10:00:00Z" {
		t.Fatalf("sent: %s", rec.Body.String())
	}
	sent := e.events(org, app.EventIncidentReportSent)
	if len(sent) != 1 || sent[0]["authority"] != "LfDI Baden-Württemberg" || sent[0]["late"] != false || sent[0]["version"] != float64(2) {
		t.Fatalf("incident.report.sent: %v", sent)
	}
	// A later edit is a new version; version 2 stays exactly as sent.
	wantStatus(t, e.do("PATCH", base, key, map[string]any{"content": map[string]any{"measures": "Changed afterwards."}}), http.StatusOK)
	rec = e.do("GET", base+"/versions", key, nil)
	wantStatus(t, rec, http.StatusOK)
	vs := list(t, rec)
	if len(vs) != 3 || vs[1]["state"] != "sent" || vs[1]["content"].(map[string]any)["measures"] != "Remote wipe issued." ||
		vs[1]["authority"] != "LfDI Baden-Württemberg" || vs[1]["reference"] != "DB-2026-17" || vs[1]["sentAt"] != "2026-01-15T10:00:00Z" ||
		vs[1]["createdBy"].(map[string]any)["type"] != "api_key" || vs[2]["state"] != "draft" {
		t.Fatalf("versions: %s", rec.Body.String())
	}
	// The API has no way to change or remove a version.
	for _, m := range []string{"PUT", "PATCH", "DELETE"} {
		rec := e.do(m, base+"/versions", key, map[string]any{"content": map[string]any{}})
		wantError(t, rec, http.StatusMethodNotAllowed, "method_not_allowed")
	}
	// Neither has the database.
	raw := e.raw()
	if _, err := raw.Exec(`UPDATE incident_report_versions SET content = '{}' WHERE report_id = ? AND version = 2`, rid); err == nil ||
		!strings.Contains(err.Error(), "immutable") {
		t.Fatalf("update of a sent version: %v", err)
	}
	if _, err := raw.Exec(`DELETE FROM incident_report_versions WHERE report_id = ?`, rid); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Fatalf("delete of versions: %v", err)
	}
	// The PDF renders the sent version.
	rec = e.do("GET", base+"/pdf?version=2", key, nil)
	wantStatus(t, rec, http.StatusOK)
	if rec.Header().Get("Content-Type") != "application/pdf" || !strings.HasPrefix(rec.Body.String(), "%PDF") ||
		!strings.Contains(rec.Header().Get("Content-Disposition"), "-v2.pdf") {
		t.Fatalf("pdf: %v", rec.Header())
	}
	wantError(t, e.do("GET", base+"/pdf?version=9", key, nil), http.StatusNotFound, "not_found")
	wantField(t, e.do("GET", base+"/pdf?version=x", key, nil), "version")
}

// TestGDPRLateNotificationNeedsReasons: after 72 hours the notification
// must give the reasons for the delay (GDPR Art. 33(1)).
func TestGDPRLateNotificationNeedsReasons(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleOwner)
	wantStatus(t, e.do("PATCH", "/v1/incident-profile", key, map[string]any{"gdprAuthority": "CNIL"}), http.StatusOK)
	id := e.newIncident(key, map[string]any{"title": "Mail sent to the wrong list", "type": "personal_data_breach", "awareAt": "2026-01-15T10:00:00Z"})["id"].(string)
	inc := obj(t, e.do("POST", "/v1/incidents/"+id+"/regimes", key, map[string]any{"regimes": []string{"gdpr"}}))
	rid := reportByKey(t, inc, "gdpr", "notification")["id"].(string)
	e.clock.Advance(73 * time.Hour)
	send := "/v1/incidents/" + id + "/reports/" + rid + "/send"
	wantField(t, e.do("POST", send, key, map[string]any{}), "content.reasonsForDelay")
	// Sent in time, recorded late: judged by when it was sent.
	wantStatus(t, e.do("POST", send, key, map[string]any{"sentAt": "2026-01-18T09:00:00Z"}), http.StatusOK)
	id2 := e.newIncident(key, map[string]any{"title": "Second", "type": "personal_data_breach", "awareAt": "2026-01-16T10:00:00Z"})["id"].(string)
	inc = obj(t, e.do("POST", "/v1/incidents/"+id2+"/regimes", key, map[string]any{"regimes": []string{"gdpr"}}))
	rid = reportByKey(t, inc, "gdpr", "notification")["id"].(string)
	e.clock.Advance(72 * time.Hour)
	rec := e.do("POST", "/v1/incidents/"+id2+"/reports/"+rid+"/send", key, map[string]any{
		"content": map[string]any{"reasonsForDelay": "The breach was confirmed only after the processor's forensic report."}})
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["authority"] != "CNIL" {
		t.Fatalf("the profile's authority: %s", rec.Body.String())
	}
	ev := e.events(org, app.EventIncidentReportSent)
	if len(ev) != 2 || ev[0]["late"] != false || ev[1]["late"] != true || ev[1]["authority"] != "CNIL" {
		t.Fatalf("events: %v", ev)
	}
}

// TestIncidentDeadlineReminders: the scheduled scan raises
// incident.deadline.approaching once per report and threshold, and once
// when a report is overdue.
func TestIncidentDeadlineReminders(t *testing.T) {
	t.Parallel()
	e := newTestServer(t) // 2026-01-15T10:00:00Z
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleOwner)
	wantStatus(t, e.do("PATCH", "/v1/incident-profile", key, map[string]any{"nis2EntityType": "essential"}), http.StatusOK)
	id := e.newIncident(key, map[string]any{"title": "DDoS", "type": "security_incident", "awareAt": "2026-01-15T10:00:00Z"})["id"].(string)
	wantStatus(t, e.do("POST", "/v1/incidents/"+id+"/regimes", key, map[string]any{"regimes": []string{"nis2"}}), http.StatusOK)
	ctx := e.ctx(org)
	remind := func() int {
		n, err := e.app.RemindIncidentDeadlines(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	thresholds := func() []string {
		var out []string
		for _, ev := range e.events(org, app.EventIncidentDeadlineApproaching) {
			out = append(out, ev["kind"].(string)+"@"+ev["threshold"].(string))
		}
		return out
	}
	if remind() != 0 {
		t.Fatal("nothing is near its due time yet")
	}
	e.clock.Advance(20*time.Hour + time.Minute) // 3 h 59 min before the early warning
	if remind() != 1 || remind() != 0 {
		t.Fatal("one reminder, then none: idempotent")
	}
	e.clock.Advance(3 * time.Hour) // 59 min before
	remind()
	e.clock.Advance(2 * time.Hour) // overdue; the notification is 47 h away
	remind()
	remind()
	e.clock.Advance(24 * time.Hour) // 23 h before the notification
	remind()
	got := strings.Join(thresholds(), ",")
	if got != "early_warning@4h,early_warning@1h,early_warning@overdue,notification@24h" {
		t.Fatalf("reminders: %s", got)
	}
	ev := e.events(org, app.EventIncidentDeadlineApproaching)[2]
	if ev["incidentId"] != id || ev["overdue"] != true || ev["dueAt"] != "2026-01-16T10:00:00Z" || ev["regime"] != "nis2" {
		t.Fatalf("event data: %v", ev)
	}
	// A report sent in time gets no more reminders.
	inc := obj(t, e.do("GET", "/v1/incidents/"+id, key, nil))
	rid := reportByKey(t, inc, "nis2", "notification")["id"].(string)
	wantStatus(t, e.do("POST", "/v1/incidents/"+id+"/reports/"+rid+"/send", key, map[string]any{"authority": "BSI"}), http.StatusOK)
	e.clock.Advance(23 * time.Hour)
	remind()
	if got := strings.Join(thresholds(), ","); strings.Contains(got, "notification@4h") || strings.Contains(got, "notification@overdue") {
		t.Fatalf("a sent report is not reminded: %s", got)
	}
	// The audit trail records the reminders.
	rec := e.do("GET", "/v1/audit-log?action=deadline_overdue", key, nil)
	if len(list(t, rec)) != 1 {
		t.Fatalf("overdue reminder audited: %s", rec.Body.String())
	}
}

// TestIncidentPermissions: auditors read; employees report and add to the
// timeline of their own incidents, but do not close them or send reports;
// another organization's ids are 404.
func TestIncidentPermissions(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	owner, auditor, employee := e.key(org, app.RoleOwner), e.key(org, app.RoleAuditor), e.key(org, app.RoleEmployee)
	mine := e.newIncident(employee, map[string]any{"title": "Suspicious mail opened", "type": "security_incident", "awareAt": "2026-01-15T09:55:00Z"})
	if mine["reportedBy"].(map[string]any)["type"] != "api_key" {
		t.Fatalf("reporter: %v", mine["reportedBy"])
	}
	id := mine["id"].(string)
	theirs := e.newIncident(owner, map[string]any{"title": "Owner's incident", "type": "ict_incident", "awareAt": "2026-01-15T09:00:00Z"})["id"].(string)
	inc := obj(t, e.do("POST", "/v1/incidents/"+id+"/regimes", owner, map[string]any{"regimes": []string{"gdpr"}}))
	rid := reportByKey(t, inc, "gdpr", "notification")["id"].(string)

	// Employee.
	wantStatus(t, e.do("GET", "/v1/incidents/"+id, employee, nil), http.StatusOK)
	wantStatus(t, e.do("POST", "/v1/incidents/"+id+"/timeline", employee, map[string]any{"content": "I clicked the link at 09:50."}), http.StatusCreated)
	wantStatus(t, e.do("POST", "/v1/incidents/"+id+"/status", employee, map[string]any{"status": "contained"}), http.StatusOK)
	wantError(t, e.do("POST", "/v1/incidents/"+id+"/status", employee, map[string]any{"status": "closed"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/incidents/"+id+"/reports/"+rid+"/send", employee, map[string]any{"authority": "x"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("PATCH", "/v1/incidents/"+id, employee, map[string]any{"title": "x"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("PUT", "/v1/incidents/"+id+"/dora-classification", employee, map[string]any{}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("GET", "/v1/incidents/"+theirs, employee, nil), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/incidents/"+theirs+"/timeline", employee, map[string]any{"content": "x"}), http.StatusNotFound, "not_found")
	if l := list(t, e.do("GET", "/v1/incidents", employee, nil)); len(l) != 1 || l[0]["id"] != id {
		t.Fatalf("an employee lists the incidents they reported: %v", l)
	}
	wantError(t, e.do("GET", "/v1/incident-profile", employee, nil), http.StatusForbidden, "forbidden")

	// Auditor: reads everything, writes nothing.
	for _, p := range []string{"/v1/incidents", "/v1/incidents/" + id, "/v1/incidents/" + id + "/timeline", "/v1/incidents/" + id + "/applicability",
		"/v1/incidents/" + id + "/reports/" + rid, "/v1/incidents/" + id + "/reports/" + rid + "/pdf", "/v1/incident-profile"} {
		wantStatus(t, e.do("GET", p, auditor, nil), http.StatusOK)
	}
	for _, w := range []struct{ method, path string }{
		{"POST", "/v1/incidents"}, {"PATCH", "/v1/incidents/" + id}, {"POST", "/v1/incidents/" + id + "/status"},
		{"POST", "/v1/incidents/" + id + "/timeline"}, {"POST", "/v1/incidents/" + id + "/regimes"},
		{"POST", "/v1/incidents/" + id + "/reports/" + rid + "/send"}, {"PATCH", "/v1/incidents/" + id + "/reports/" + rid},
		{"PATCH", "/v1/incident-profile"},
	} {
		wantError(t, e.do(w.method, w.path, auditor, map[string]any{"status": "closed", "title": "x", "type": "ict_incident", "awareAt": "2026-01-15T09:00:00Z"}),
			http.StatusForbidden, "forbidden")
	}

	// Owner closes; only an owner or admin reopens.
	wantStatus(t, e.do("POST", "/v1/incidents/"+id+"/status", owner, map[string]any{"status": "closed"}), http.StatusOK)
	wantError(t, e.do("POST", "/v1/incidents/"+id+"/status", employee, map[string]any{"status": "open"}), http.StatusForbidden, "forbidden")

	// Another organization.
	other := e.key(e.org("Globex", app.PlanProfessional), app.RoleOwner)
	for _, p := range []string{"/v1/incidents/" + id, "/v1/incidents/" + id + "/timeline", "/v1/incidents/" + id + "/reports/" + rid,
		"/v1/incidents/" + id + "/reports/" + rid + "/versions"} {
		wantError(t, e.do("GET", p, other, nil), http.StatusNotFound, "not_found")
	}
	wantError(t, e.do("PATCH", "/v1/incidents/"+id, other, map[string]any{"title": "mine now"}), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/v1/incidents/"+id+"/reports/"+rid+"/send", other, map[string]any{"authority": "x"}), http.StatusNotFound, "not_found")
	if l := list(t, e.do("GET", "/v1/incidents", other, nil)); len(l) != 0 {
		t.Fatalf("another organization lists nothing of Acme: %v", l)
	}
	// Comments and attachments attach to incidents.
	rec := e.do("POST", "/v1/comments", owner, map[string]any{"entityType": "incident", "entityId": id, "content": "Lessons learnt meeting on Friday."})
	wantStatus(t, rec, http.StatusCreated)
	wantError(t, e.do("POST", "/v1/comments", other, map[string]any{"entityType": "incident", "entityId": id, "content": "x"}), http.StatusNotFound, "not_found")
}

// TestIncidentMCPTools: the read tools list incidents and return one with
// its clocks.
func TestIncidentMCPTools(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAuditor)
	owner := e.key(org, app.RoleOwner)
	id := e.newIncident(owner, map[string]any{"title": "Outage", "type": "ict_incident", "awareAt": "2026-01-15T09:00:00Z"})["id"].(string)
	wantStatus(t, e.do("POST", "/v1/incidents/"+id+"/regimes", owner, map[string]any{"regimes": []string{"nis2"}}), http.StatusOK)
	cs := mcpSession(t, e, http.Header{"X-Api-Key": {key}})
	out, isErr := callTool(t, cs, "list_incidents", map[string]any{"regime": "nis2"})
	if isErr || len(out["data"].([]any)) != 1 {
		t.Fatalf("list_incidents: %v", out)
	}
	out, isErr = callTool(t, cs, "get_incident", map[string]any{"id": id})
	if isErr || out["id"] != id || len(out["reports"].([]any)) != 5 || out["nextDueAt"] != "2026-01-16T09:00:00Z" {
		t.Fatalf("get_incident: %v", out)
	}
	other := mcpSession(t, e, http.Header{"X-Api-Key": {e.key(e.org("Globex", app.PlanProfessional), app.RoleOwner)}})
	out, _ = callTool(t, other, "get_incident", map[string]any{"id": id})
	if !strings.Contains(fmt.Sprint(out["error"]), "not_found") {
		t.Fatalf("another organization: %v", out)
	}
}
