package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// uiIncidentFixture adds to a uiFixture an incident the owner recorded,
// with NIS2 and GDPR confirmed, and one the employee reported.
func (e *testEnv) uiIncidentFixture(f uiFixture) (ownerIncident, employeeIncident, reportID string) {
	e.t.Helper()
	ctx := e.ctx(f.org)
	if _, err := e.app.UpdateIncidentProfile(ctx, app.IncidentProfileInput{NIS2EntityType: app.Some(app.NIS2Important),
		GDPRRole: app.Some(app.GDPRController), GDPRAuthority: app.Some("BfDI")}); err != nil {
		e.t.Fatal(err)
	}
	inc, err := e.app.CreateIncident(ctx, app.IncidentInput{Title: app.Ptr("Ransomware on file server"), Type: app.Ptr(app.IncidentSecurity),
		AwareAt: app.Ptr("2026-01-15T08:00:00Z"), Facts: &app.IncidentFactsInput{SevereOperationalDisruption: app.Some(true),
			PersonalDataAffected: app.Some(true)}})
	if err != nil {
		e.t.Fatal(err)
	}
	inc, err = e.app.ConfirmIncidentRegimes(ctx, inc.ID, app.RegimesInput{Regimes: &[]string{app.RegimeNIS2, app.RegimeGDPR}})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range inc.Reports {
		if r.Regime == app.RegimeGDPR && r.Kind == app.ReportNotification {
			reportID = r.ID
		}
	}
	emp := app.WithPrincipal(e.ctx(f.org), &app.Principal{OrgID: f.org, Role: app.RoleEmployee, AuthType: app.AuthSession, UserID: f.employeeID})
	mine, err := e.app.CreateIncident(emp, app.IncidentInput{Title: app.Ptr("Phishing mail clicked"), Type: app.Ptr(app.IncidentSecurity),
		AwareAt: app.Ptr("2026-01-15T09:30:00Z")})
	if err != nil {
		e.t.Fatal(err)
	}
	return inc.ID, mine.ID, reportID
}

// TestUIIncidentPagesPerRole renders the incident pages for each role:
// the clocks with their countdowns, the proposals, the timeline, the DORA
// form and the report editor; write actions only for the roles that may
// take them; employees see the incidents they reported.
func TestUIIncidentPagesPerRole(t *testing.T) {
	t.Parallel()
	e := newTestServer(t) // 2026-01-15T10:00:00Z
	f := e.uiFixture("Acme")
	inc, mine, rid := e.uiIncidentFixture(f)
	pages := []struct {
		path     string
		want     []string
		writes   []string
		employee int // the employee's status when it differs from 200
	}{
		{"/incidents", []string{"<h1>Incidents</h1>", "Ransomware on file server", "data-countdown", "NIS2", `href="/incidents/profile"`},
			nil, 0},
		{"/incidents/" + inc, []string{"Reporting clocks", "NIS2 early warning", "NIS2 Art. 23(4)(a)", "in 22 h 0 min",
			"2026-01-16 08:00 UTC", "GDPR notification to the supervisory authority", "Which regimes apply", "Timeline", "Incident reported"},
			[]string{"Confirm regimes", "Save incident", `action="/incidents/` + inc + `/status"`}, http.StatusNotFound},
		{"/incidents/" + inc + "/dora", []string{"DORA classification", "Critical services affected (Art. 6)", "Not classified yet"},
			[]string{">Classify</button>"}, http.StatusNotFound},
		{"/incidents/" + inc + "/reports/" + rid, []string{"GDPR notification to the supervisory authority", "GDPR Art. 33(1)",
			"Draft filled from the incident record", "Reasons for the delay", "BfDI", "Download PDF"},
			[]string{"Save draft", "Record as sent"}, http.StatusNotFound},
		{"/incidents/profile", []string{"Incident reporting profile", "NIS2 entity (Art. 3)", `value="BfDI"`}, []string{"Save profile"}, http.StatusForbidden},
		{"/", []string{"Incident deadlines", "NIS2 early warning", "Ransomware on file server"}, nil, 0},
	}
	roles := []struct {
		email, role string
		writes      bool
	}{{f.owner, "owner", true}, {f.admin, "admin", true}, {f.auditor, "auditor", false}, {f.employee, "employee", false}}
	for _, ro := range roles {
		t.Run(ro.role, func(t *testing.T) {
			b := e.browser()
			b.signIn(ro.email)
			for _, pg := range pages {
				rec := b.get(pg.path)
				if ro.role == "employee" && pg.employee != 0 {
					if rec.Code != pg.employee {
						t.Errorf("%s as employee: status %d, want %d", pg.path, rec.Code, pg.employee)
					}
					continue
				}
				if rec.Code != http.StatusOK {
					t.Errorf("%s as %s: status %d", pg.path, ro.role, rec.Code)
					continue
				}
				wantBody(t, rec, `href="/incidents"`) // the nav entry
				if ro.role == "employee" {
					switch pg.path {
					case "/incidents":
						wantBody(t, rec, "Phishing mail clicked", `href="/incidents/new"`)
						wantNoBody(t, rec, "Ransomware on file server", `href="/incidents/profile"`)
					case "/":
						wantNoBody(t, rec, "Incident deadlines")
					}
					continue
				}
				wantBody(t, rec, pg.want...)
				if ro.writes {
					wantBody(t, rec, pg.writes...)
				} else {
					wantNoBody(t, rec, pg.writes...)
				}
			}
			// Reporting an incident: everyone but auditors.
			rec := b.get("/incidents/new")
			if ro.role == "auditor" {
				wantStatus(t, rec, http.StatusForbidden)
			} else {
				wantStatus(t, rec, http.StatusOK)
				wantBody(t, rec, "Report an incident", `name="awareAt"`, `name="tz"`)
			}
		})
	}
	// The employee's own incident: timeline and status, but not closing.
	b := e.browser()
	b.signIn(f.employee)
	rec := b.get("/incidents/" + mine)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Add to the timeline", "Change status", "Closing an incident is for owners and admins")
	wantNoBody(t, rec, `<option value="closed"`, "Save incident", "Confirm regimes")
}

// TestUIIncidentFlow: an employee reports an incident through the form,
// an owner confirms the regimes, classifies it under DORA, edits and
// records a report as sent; bad input is shown next to its field.
func TestUIIncidentFlow(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	emp := e.browser()
	emp.signIn(f.employee)
	emp.get("/incidents/new")
	form := url.Values{"title": {"Laptop stolen from car"}, "type": {"personal_data_breach"}, "severity": {"high"},
		"awareAt": {"2026-01-15T09:30"}, "tz": {"+01:00"}, "countries": {"DE AT"}, "dataCategories": {"contact data\nhealth data"},
		"dataSubjectsAffected": {"40"}, "personalDataAffected": {"yes"}}
	bad := url.Values{}
	for k, v := range form {
		bad[k] = v
	}
	bad.Set("awareAt", "")
	bad.Set("countries", "Germany")
	rec := emp.post("/incidents", bad)
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `aria-describedby="awareAt-error"`, `id="countries-error"`, `value="Laptop stolen from car"`)
	loc := wantRedirect(t, emp.post("/incidents", form), "/incidents/inc_")
	id := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], "/incidents/")
	rec = emp.get(loc)
	wantBody(t, rec, "Incident recorded", "Aware since 2026-01-15 08:30 UTC", "No clock runs yet")
	// Employees may not close or confirm.
	wantStatus(t, emp.post("/incidents/"+id+"/status", url.Values{"status": {"closed"}}), http.StatusForbidden)
	wantStatus(t, emp.post("/incidents/"+id+"/regimes", url.Values{"regime": {"gdpr"}}), http.StatusForbidden)
	wantRedirect(t, emp.post("/incidents/"+id+"/timeline", url.Values{"kind": {"note"}, "content": {"The car was parked at the office."}}), "/incidents/"+id)

	own := e.browser()
	own.signIn(f.owner)
	own.get("/incidents/" + id)
	wantRedirect(t, own.post("/incidents/"+id+"/regimes", url.Values{"regime": {"gdpr", "dora"}}), "/incidents/"+id)
	rec = own.get("/incidents/" + id)
	wantBody(t, rec, "GDPR notification to the supervisory authority", "in 2 d 22 h", "DORA initial notification", "Awaiting facts",
		"The car was parked at the office.")
	// The DORA form: a major classification starts the 4-hour clock.
	own.get("/incidents/" + id + "/dora")
	rec = own.post("/incidents/"+id+"/dora", url.Values{"maliciousUnauthorisedAccess": {"yes"}, "accessMayCauseDataLoss": {"yes"},
		"memberStatesAffected": {"DE, XX"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="memberStatesAffected-error"`)
	wantRedirect(t, own.post("/incidents/"+id+"/dora", url.Values{"maliciousUnauthorisedAccess": {"yes"}, "accessMayCauseDataLoss": {"yes"},
		"memberStatesAffected": {"DE"}}), "/incidents/"+id+"/dora")
	rec = own.get("/incidents/" + id + "/dora")
	wantBody(t, rec, "Result: major", "Art. 8(1)(a)")
	rec = own.get("/incidents/" + id)
	wantBody(t, rec, "classification as major", "in 4 h 0 min")

	// Edit the GDPR notification, then record it as sent.
	inc, err := e.app.GetIncident(e.ctx(f.org), id)
	if err != nil {
		t.Fatal(err)
	}
	var rid string
	for _, r := range inc.Reports {
		if r.Regime == app.RegimeGDPR && r.Kind == app.ReportNotification {
			rid = r.ID
		}
	}
	base := "/incidents/" + id + "/reports/" + rid
	rec = own.get(base)
	wantBody(t, rec, "Approximate number: 40", `name="c.likelyConsequences"`)
	wantRedirect(t, own.post(base, url.Values{"c.likelyConsequences": {"Disclosure of health data."}}), base)
	rec = own.post(base+"/send", url.Values{"authority": {""}, "c.likelyConsequences": {"Disclosure of health data."}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="authority-error"`)
	loc = wantRedirect(t, own.post(base+"/send", url.Values{"authority": {"BfDI"}, "reference": {"2026-0042"}, "c.likelyConsequences": {"Disclosure of health data."}}), base)
	rec = own.get(loc)
	wantBody(t, rec, "Recorded as sent", "Sent", "to BfDI", "ref. 2026-0042", "Current content (version 2)")
	pdf := own.get(base + "/pdf?version=2")
	wantStatus(t, pdf, http.StatusOK)
	if !strings.HasPrefix(pdf.Body.String(), "%PDF") {
		t.Fatal("the PDF download")
	}
	// An auditor reads the editor but has no form to change it.
	aud := e.browser()
	aud.signIn(f.auditor)
	rec = aud.get(base)
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, "Save draft", "Record as sent")
	wantStatus(t, aud.post(base+"/send", url.Values{"authority": {"x"}}), http.StatusForbidden)
	// Another organization's incident is the 404 page.
	other := e.uiFixture("Globex")
	ob := e.browser()
	ob.signIn(other.owner)
	for _, p := range []string{"/incidents/" + id, base, "/incidents/" + id + "/dora"} {
		wantStatus(t, ob.get(p), http.StatusNotFound)
	}
}
