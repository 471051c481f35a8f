package web

import (
	"bytes"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	assets "github.com/compliance-appliance/compliance/embed"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/compliance-appliance/compliance/web/ui"
	"github.com/gorilla/mux"
)

// uiBrowser is a cookie jar over the test server, like a person's browser
// with JavaScript off.
type uiBrowser struct {
	e       *testEnv
	cookies map[string]string
	csrf    string
}

func (e *testEnv) browser() *uiBrowser { return &uiBrowser{e: e, cookies: map[string]string{}} }

// send issues a request with the jar's cookies and keeps what it sets.
func (b *uiBrowser) send(req *http.Request) *httptest.ResponseRecorder {
	b.e.t.Helper()
	for k, v := range b.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	rec := httptest.NewRecorder()
	b.e.srv.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.MaxAge < 0 || c.Value == "" {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c.Value
		}
	}
	if m := uiCSRFRe.FindStringSubmatch(rec.Body.String()); m != nil {
		b.csrf = m[1]
	}
	return rec
}

var uiCSRFRe = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func (b *uiBrowser) get(path string) *httptest.ResponseRecorder {
	b.e.t.Helper()
	return b.send(httptest.NewRequest("GET", path, nil))
}

// post submits a urlencoded form; the page's CSRF token is added unless
// the form sets csrf_token itself.
func (b *uiBrowser) post(path string, form url.Values) *httptest.ResponseRecorder {
	b.e.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form[ui.CSRFField]; !ok {
		form.Set(ui.CSRFField, b.csrf)
	}
	req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.send(req)
}

// upload submits a multipart form with one file.
func (b *uiBrowser) upload(path, name, content string, fields map[string]string) *httptest.ResponseRecorder {
	b.e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField(ui.CSRFField, b.csrf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = io.WriteString(fw, content)
	_ = mw.Close()
	req := httptest.NewRequest("POST", path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return b.send(req)
}

// signIn signs in through the login form.
func (b *uiBrowser) signIn(email string) {
	b.e.t.Helper()
	wantStatus(b.e.t, b.get("/login"), http.StatusOK)
	rec := b.post("/login", url.Values{"email": {email}, "password": {testPassword}})
	if rec.Code != http.StatusSeeOther {
		b.e.t.Fatalf("sign-in of %s: status %d: %s", email, rec.Code, rec.Body.String())
	}
	b.get("/") // picks up the session's CSRF token
}

func wantBody(t *testing.T, rec *httptest.ResponseRecorder, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(rec.Body.String(), s) {
			t.Errorf("page lacks %q (status %d)", s, rec.Code)
		}
	}
}

func wantNoBody(t *testing.T, rec *httptest.ResponseRecorder, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(rec.Body.String(), s) {
			t.Errorf("page must not contain %q", s)
		}
	}
}

func wantRedirect(t *testing.T, rec *httptest.ResponseRecorder, prefix string) string {
	t.Helper()
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("status %d, want 303: %s", rec.Code, rec.Body.String())
	}
	loc := rec.Header().Get("Location")
	if !strings.HasPrefix(loc, prefix) {
		t.Fatalf("redirect to %q, want prefix %q", loc, prefix)
	}
	return loc
}

// uiFixture is an organization with a person of every role and one
// resource of each kind the pages show.
type uiFixture struct {
	org                             string
	vendor, finding, risk, control  string
	frameworkID, task               string
	owner, admin, auditor, employee string
	ownerID, employeeID             string
}

func (e *testEnv) uiFixture(name string) uiFixture {
	e.t.Helper()
	f := uiFixture{org: e.org(name, app.PlanEnterprise)}
	slug := strings.ToLower(strings.ReplaceAll(name, " ", ""))
	f.owner, f.admin, f.auditor, f.employee = "owner@"+slug+".test", "admin@"+slug+".test", "auditor@"+slug+".test", "employee@"+slug+".test"
	f.ownerID = e.withPassword(f.org, f.owner, app.RoleOwner)
	e.withPassword(f.org, f.admin, app.RoleAdmin)
	e.withPassword(f.org, f.auditor, app.RoleAuditor)
	f.employeeID = e.withPassword(f.org, f.employee, app.RoleEmployee)
	ctx := e.ctx(f.org)
	res, err := e.app.EnableFramework(ctx, "iso9001-2015")
	if err != nil {
		e.t.Fatal(err)
	}
	f.frameworkID = res.Framework.ID
	cs, err := e.app.ListControls(ctx, app.ControlFilter{FrameworkID: f.frameworkID, Page: app.Page{Page: 1, PerPage: 1}})
	if err != nil || len(cs.Items) == 0 {
		e.t.Fatalf("controls: %v", err)
	}
	f.control = cs.Items[0].ID
	v, err := e.app.CreateVendor(ctx, app.VendorInput{Name: app.Ptr("Hosting GmbH"), Country: app.Some("DE"), ProcessesPersonalData: app.Ptr(true),
		SubProcessors: app.Some([]app.SubProcessor{{Name: "Backup AG", Country: "AT", Purpose: "Backups"}})})
	if err != nil {
		e.t.Fatal(err)
	}
	f.vendor = v.ID
	fd, err := e.app.CreateFinding(ctx, app.FindingCreate{Title: app.Ptr("Access reviews missing"), Severity: app.Ptr("high")})
	if err != nil {
		e.t.Fatal(err)
	}
	f.finding = fd.ID
	if _, err := e.app.CreateCorrectiveAction(ctx, fd.ID, app.CorrectiveActionInput{Title: app.Ptr("Run quarterly reviews"), DueDate: app.Some("2026-01-01")}); err != nil {
		e.t.Fatal(err)
	}
	rk, err := e.app.CreateRisk(ctx, app.RiskInput{Title: app.Ptr("Data centre outage"), Category: app.Ptr("operations"),
		InherentProbability: app.Ptr("likely"), InherentImpact: app.Ptr("major"), ResidualProbability: app.Some("unlikely"), ResidualImpact: app.Some("minor")})
	if err != nil {
		e.t.Fatal(err)
	}
	f.risk = rk.ID
	t, err := e.app.CreateTask(ctx, app.TaskInput{Title: app.Ptr("Collect the quality policy"), ControlID: app.Some(f.control),
		AssigneeID: app.Some(f.employeeID), DueDate: app.Some("2026-01-10")})
	if err != nil {
		e.t.Fatal(err)
	}
	f.task = t.ID
	return f
}

// TestUIPagesPerRole renders every page for each role: key elements are
// there, and write actions are offered only to roles that may take them.
func TestUIPagesPerRole(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	pages := []struct {
		path string
		want []string
		// writes are the markers of actions a manager may take there.
		writes []string
		// employee: what an employee sees (status); 0 means as others.
		employee int
		// auditor: the auditor's status when it differs; 0 means 200.
		auditor int
	}{
		{"/", []string{"<h1>Dashboard</h1>", "Score per framework", "data-score=", "Open findings by severity", "Overdue tasks",
			"Overdue corrective actions", "Run quarterly reviews", "Evidence expiring within 30 days"}, nil, 0, 0},
		{"/frameworks", []string{"<h1>Frameworks</h1>", "ISO 9001", "SOC 2"}, []string{"/enable\""}, 0, 0},
		{"/frameworks/" + f.frameworkID, []string{"Requirements", "data-score=", "Controls by status"}, nil, 0, 0},
		{"/frameworks/soc2-2017", []string{"This framework is not enabled"}, []string{"Enable this framework"}, 0, 0},
		{"/controls", []string{"<h1>Controls</h1>", `href="/controls/` + f.control}, nil, 0, 0},
		{"/controls?framework=" + f.frameworkID + "&status=not_started", []string{`href="/controls/` + f.control, `selected>Not started`}, nil, 0, 0},
		{"/controls/" + f.control, []string{"Mapped requirements", "Evidence (0)", "Collect the quality policy"},
			[]string{"Upload evidence", "Save control", "Add an evidence task"}, http.StatusNotFound, 0},
		{"/tasks", []string{"<h1>Tasks</h1>", "Collect the quality policy"}, nil, 0, 0},
		{"/vendors", []string{"<h1>Vendors</h1>", "Hosting GmbH", `name="criticality"`}, []string{`href="/vendors/new"`}, 0, 0},
		{"/vendors?category=cloud", []string{"No vendor matches these filters"}, nil, 0, 0},
		{"/vendors/" + f.vendor, []string{"Backup AG", "Sub-processors", "DPA status", `value="Hosting GmbH"`},
			[]string{"Save vendor", "/archive\""}, http.StatusNotFound, 0},
		{"/findings", []string{"<h1>Findings</h1>", "Access reviews missing"}, nil, 0, 0},
		{"/findings/" + f.finding, []string{"Corrective actions", "Run quarterly reviews"}, []string{"Add a corrective action"}, http.StatusNotFound, 0},
		{"/risks", []string{"<h1>Risks</h1>", `data-heatmap="inherent"`, `data-heatmap="residual"`, "Data centre outage",
			`data-cell="likely/major">1<`, `data-cell="unlikely/minor">1<`}, []string{`href="/risks/new"`}, 0, 0},
		{"/risks/" + f.risk, []string{`value="Data centre outage"`, "Residual probability"}, []string{"Save risk"}, http.StatusNotFound, 0},
		{"/policies", []string{"<h1>Policies</h1>"}, []string{`href="/policies/new"`}, 0, 0},
		{"/people", []string{"<h1>People</h1>"}, nil, 0, 0},
		{"/people/" + f.employeeID, []string{"Devices"}, nil, 0, 0},
		{"/settings", []string{"Organization settings", `value="Acme"`}, []string{"Save branding"}, 0, 0},
		{"/soa", []string{"Statement of Applicability"}, nil, http.StatusForbidden, 0},
		{"/knowledge-base", []string{"<h1>Knowledge base</h1>"}, []string{"Add an entry"}, 0, 0},
		{"/csrd", []string{"CSRD data points"}, []string{"Record a data point"}, 0, 0},
		{"/trust-settings", []string{"Trust portal"}, []string{`href="/trust-requests"`}, http.StatusForbidden, 0},
		{"/trust-requests", []string{"access requests"}, nil, http.StatusForbidden, 0},
		{"/audit-log", []string{"<h1>Audit log</h1>"}, nil, http.StatusForbidden, 0},
		{"/api-keys", []string{"Create a key"}, nil, http.StatusForbidden, http.StatusForbidden},
		{"/webhooks", []string{"Add a webhook"}, nil, http.StatusForbidden, http.StatusForbidden},
		{"/questionnaires", []string{"<h1>Questionnaires</h1>"}, []string{"Upload a questionnaire"}, http.StatusForbidden, 0},
	}
	roles := []struct {
		email  string
		role   string
		writes bool
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
				if ro.role == "auditor" && pg.auditor != 0 {
					if rec.Code != pg.auditor {
						t.Errorf("%s as auditor: status %d, want %d", pg.path, rec.Code, pg.auditor)
					}
					continue
				}
				if rec.Code != http.StatusOK {
					t.Errorf("%s as %s: status %d", pg.path, ro.role, rec.Code)
					continue
				}
				if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
					t.Errorf("%s: content type %q", pg.path, ct)
				}
				wantBody(t, rec, `data-role="`+ro.role+`"`, "Sign out")
				if ro.role == "employee" && pg.path == "/" {
					wantBody(t, rec, "Your overdue tasks", "Collect the quality policy")
					continue
				}
				if ro.role == "employee" && (strings.HasPrefix(pg.path, "/controls") || pg.path == "/vendors" || pg.path == "/vendors?category=cloud" ||
					pg.path == "/findings" || pg.path == "/risks" || strings.HasPrefix(pg.path, "/findings/")) {
					// Employees see only what is assigned to them.
					wantNoBody(t, rec, "Hosting GmbH", "Data centre outage", "Access reviews missing", `href="/controls/`+f.control)
					continue
				}
				if !t.Failed() {
					wantBody(t, rec, pg.want...)
				}
				if ro.writes {
					wantBody(t, rec, pg.writes...)
				} else {
					wantNoBody(t, rec, pg.writes...)
				}
			}
			// The review action (findings) follows CapReview: auditors
			// signed in as people may record findings.
			rec := b.get("/findings")
			if ro.role == "employee" {
				wantNoBody(t, rec, `href="/findings/new"`)
			} else {
				wantBody(t, rec, `href="/findings/new"`)
			}
		})
	}
}

// TestUIForbiddenActions: actions a role may not take are refused with
// the 403 page even when posted directly.
func TestUIForbiddenActions(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	for _, email := range []string{f.auditor, f.employee} {
		b := e.browser()
		b.signIn(email)
		for _, path := range []string{"/vendors/new", "/risks/new"} {
			rec := b.get(path)
			wantStatus(t, rec, http.StatusForbidden)
			wantBody(t, rec, "Not allowed", "Your role does not allow this")
		}
		for _, path := range []string{"/vendors", "/vendors/" + f.vendor + "/archive", "/frameworks/soc2-2017/enable",
			"/controls/" + f.control, "/risks"} {
			rec := b.post(path, url.Values{"name": {"Sneaky"}, "title": {"Sneaky"}, "status": {"not_applicable"}})
			wantStatus(t, rec, http.StatusForbidden)
			wantBody(t, rec, "Not allowed")
		}
	}
	l, _ := e.app.ListVendors(e.ctx(f.org), app.VendorFilter{Search: "Sneaky", Page: app.Page{Page: 1, PerPage: 10}})
	if l.Total != 0 {
		t.Fatal("a refused form post created a vendor")
	}
}

// TestUIVendorValidationErrorNextToField: a form with bad input is shown
// again with each message next to its field and the input kept.
func TestUIVendorValidationErrorNextToField(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	b := e.browser()
	b.signIn(f.admin)
	b.get("/vendors/new")
	form := url.Values{"name": {""}, "website": {"not a url"}, "country": {"US"}, "processesPersonalData": {"on"},
		"category": {"cloud"}, "status": {"not_assessed"}, "criticality": {"standard"}, "dpaStatus": {"pending"},
		"inherentProbability": {"possible"}, "inherentImpact": {"moderate"},
		"spName": {"Mail Inc", ""}, "spCountry": {"XX", ""}, "spPurpose": {"", ""}}
	rec := b.post("/vendors", form)
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	body := rec.Body.String()
	for _, field := range []string{"name", "website", "transferMechanism", "subProcessors-0-country", "subProcessors-0-purpose"} {
		in := strings.Index(body, `aria-describedby="`+field+`-error"`)
		msg := strings.Index(body, `<p class="field-error" id="`+field+`-error">`)
		if in < 0 || msg < 0 {
			t.Errorf("%s: no invalid input or message", field)
			continue
		}
		// The message follows its input directly, before any other input.
		if msg < in || strings.Contains(body[in:msg], "<input") || strings.Contains(body[in:msg], "<select") {
			t.Errorf("%s: message is not next to its field", field)
		}
	}
	wantBody(t, rec, "website must be an http or https URL", `value="not a url"`, `value="Mail Inc"`, "Some fields need attention")
	// Fixing the fields creates the vendor.
	form.Set("name", "Mail Inc")
	form.Set("website", "https://mail.example")
	form.Set("transferMechanism", "Standard contractual clauses")
	form["spCountry"] = []string{"US", ""}
	form["spPurpose"] = []string{"Email delivery", ""}
	loc := wantRedirect(t, b.post("/vendors", form), "/vendors/vnd_")
	rec = b.get(loc)
	wantBody(t, rec, "Created.", `value="Mail Inc"`, `value="Email delivery"`, `value="https://mail.example"`)
}

// TestUICSRF: a form post without the session's CSRF token is refused and
// changes nothing; so is a sign-in without the form's token.
func TestUICSRF(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	b := e.browser()
	b.signIn(f.owner)
	for _, tok := range []string{"", "forged"} {
		rec := b.post("/vendors", url.Values{ui.CSRFField: {tok}, "name": {"Forged"}})
		wantStatus(t, rec, http.StatusForbidden)
		wantBody(t, rec, "This form has expired")
		rec = b.post("/logout", url.Values{ui.CSRFField: {tok}})
		wantStatus(t, rec, http.StatusForbidden)
	}
	l, _ := e.app.ListVendors(e.ctx(f.org), app.VendorFilter{Search: "Forged", Page: app.Page{Page: 1, PerPage: 10}})
	if l.Total != 0 {
		t.Fatal("a forged form post created a vendor")
	}
	// The session is still valid: logout with the token works.
	wantRedirect(t, b.post("/logout", nil), "/login")
	wantRedirect(t, b.get("/vendors"), "/login")

	anon := e.browser()
	anon.get("/login")
	rec := anon.post("/login", url.Values{ui.CSRFField: {"wrong"}, "email": {f.owner}, "password": {testPassword}})
	wantStatus(t, rec, http.StatusForbidden)
	if _, ok := anon.cookies[httpx.SessionCookie]; ok {
		t.Fatal("sign-in without the form token set a session")
	}
}

// TestUIOtherOrganizationIs404: ids of another organization show the 404
// page, for reads and for form posts.
func TestUIOtherOrganizationIs404(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	a := e.uiFixture("Acme")
	other := e.uiFixture("Globex")
	b := e.browser()
	b.signIn(a.owner)
	for _, path := range []string{"/vendors/" + other.vendor, "/findings/" + other.finding, "/risks/" + other.risk,
		"/controls/" + other.control, "/frameworks/frk_nope", "/vendors/vnd_01HZZZZZZZZZZZZZZZZZZZZZZZ", "/no-such-page"} {
		if path == "/no-such-page" {
			continue // not a section of the web application: the API's JSON 404
		}
		rec := b.get(path)
		wantStatus(t, rec, http.StatusNotFound)
		wantBody(t, rec, "Page not found", "belongs to an organization you are not signed in to")
		wantNoBody(t, rec, "Globex", "Hosting GmbH")
	}
	rec := b.post("/vendors/"+other.vendor, url.Values{"name": {"Taken over"}})
	wantStatus(t, rec, http.StatusNotFound)
	rec = b.post("/vendors/"+other.vendor+"/archive", nil)
	wantStatus(t, rec, http.StatusNotFound)
	v, err := e.app.GetVendor(e.ctx(other.org), other.vendor)
	if err != nil || v.Name != "Hosting GmbH" || v.ArchivedAt != nil {
		t.Fatalf("another organization's vendor changed: %+v %v", v, err)
	}
}

// TestUISessionExpiry: without a valid session a page sends the person to
// sign-in and, after it, back to where they were; never elsewhere.
func TestUISessionExpiry(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	b := e.browser()
	loc := wantRedirect(t, b.get("/vendors?q=host&page=1"), "/login?")
	u, _ := url.Parse(loc)
	if u.Query().Get("next") != "/vendors?q=host&page=1" {
		t.Fatalf("next = %q", u.Query().Get("next"))
	}
	rec := b.get(loc)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, `name="next" value="/vendors?q=host&amp;page=1"`)
	loc = wantRedirect(t, b.post("/login", url.Values{"email": {f.owner}, "password": {testPassword}, "next": {"/vendors?q=host&page=1"}}), "/vendors")
	if loc != "/vendors?q=host&page=1" {
		t.Fatalf("back to %q", loc)
	}
	wantBody(t, b.get(loc), "Hosting GmbH")

	// The session lapses: the next page says so and remembers the page.
	e.clock.Advance(8 * 24 * time.Hour)
	loc = wantRedirect(t, b.get("/risks?band=high"), "/login?")
	u, _ = url.Parse(loc)
	if u.Query().Get("expired") != "1" || u.Query().Get("next") != "/risks?band=high" {
		t.Fatalf("expiry redirect %q", loc)
	}
	wantBody(t, b.get(loc), "Your session has ended")

	// Wrong password: the form says so, keeps the email.
	rec = b.post("/login", url.Values{"email": {f.owner}, "password": {"nope"}, "next": {"/risks"}})
	wantStatus(t, rec, http.StatusUnauthorized)
	wantBody(t, rec, "The email or password is not right", `value="`+f.owner+`"`)

	// next never leads off the site.
	for _, next := range []string{"//evil.example/x", "https://evil.example/", "/\\evil.example", "/v1/vendors", "javascript:alert(1)"} {
		c := e.browser()
		c.get("/login")
		loc := wantRedirect(t, c.post("/login", url.Values{"email": {f.owner}, "password": {testPassword}, "next": {next}}), "/")
		if loc != "/" {
			t.Errorf("next %q led to %q", next, loc)
		}
	}
}

// TestUIOrganizationSwitcher: a person in two organizations switches
// between them; pages show the chosen one's data.
func TestUIOrganizationSwitcher(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	a := e.uiFixture("Acme")
	other := e.org("Globex", app.PlanEnterprise)
	id := e.person(other, a.owner, app.RoleAuditor)
	_ = id
	if _, err := e.app.CreateVendor(e.ctx(other), app.VendorInput{Name: app.Ptr("Globex Cloud")}); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signIn(a.owner)
	rec := b.get("/vendors")
	wantBody(t, rec, `id="org-switch"`, ">Acme (owner)</option>", ">Globex (auditor)</option>", "Hosting GmbH")
	wantRedirect(t, b.post("/org", url.Values{"organization": {other}}), "/")
	rec = b.get("/vendors")
	wantBody(t, rec, "Globex Cloud", `data-role="auditor"`)
	wantNoBody(t, rec, "Hosting GmbH", `href="/vendors/new"`)
	// An organization the person is not in: 404, nothing changes.
	wantStatus(t, b.post("/org", url.Values{"organization": {"org_01HZZZZZZZZZZZZZZZZZZZZZZZ"}}), http.StatusNotFound)
	wantBody(t, b.get("/vendors"), "Globex Cloud")
}

// TestUIEvidenceMovesScore: enable a framework, add a task to a control
// that alone serves a requirement, upload evidence and complete the task:
// the control becomes implemented and the framework's score rises.
func TestUIEvidenceMovesScore(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	b := e.browser()
	b.signIn(f.owner)
	loc := wantRedirect(t, b.post("/frameworks/bafin-marisk/enable", nil), "/frameworks/")
	wantBody(t, b.get(loc), "Framework enabled")
	fwID, control := scoringControl(t, e, f.org, "iso9001-2015")
	before := score(t, b.get("/frameworks/"+fwID))

	wantRedirect(t, b.post("/tasks", url.Values{"controlId": {control}, "title": {"Evidence for the auditor"}, "back": {"/controls/" + control}}), "/controls/"+control)
	rec := b.get("/controls/" + control)
	task := regexp.MustCompile(`/tasks/(tsk_[A-Z0-9]+)/complete`).FindStringSubmatch(rec.Body.String())
	if task == nil {
		t.Fatal("no task on the control page")
	}
	wantRedirect(t, b.upload("/tasks/"+task[1]+"/evidence", "policy.pdf", "%PDF-1.4 policy", map[string]string{"back": "/controls/" + control}), "/controls/"+control)
	wantRedirect(t, b.post("/tasks/"+task[1]+"/complete", url.Values{"back": {"/controls/" + control}}), "/controls/"+control)
	rec = b.get("/controls/" + control)
	wantBody(t, rec, `data-status="implemented"`, "policy.pdf", "Evidence (1)")
	after := score(t, b.get("/frameworks/"+fwID))
	if after <= before {
		t.Fatalf("score %d -> %d, want a rise", before, after)
	}
	wantBody(t, b.get("/"), `data-score="`+strconv.Itoa(after)+`"`)

	// A control upload without a file names the field.
	rec = b.post("/controls/"+control+"/evidence", nil)
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="file-error"`)
	// Not applicable needs a justification, shown next to the field.
	rec = b.post("/controls/"+f.control, url.Values{"status": {"not_applicable"}, "ownerId": {""}, "justification": {""}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="justification-error"`)
	wantRedirect(t, b.post("/controls/"+f.control, url.Values{"status": {"not_applicable"}, "ownerId": {f.ownerID}, "justification": {"We do not design products."}}), "/controls/")
	wantBody(t, b.get("/controls/"+f.control), `data-status="not_applicable"`, "We do not design products.")
}

var uiScoreRe = regexp.MustCompile(`<p class="stat" data-score="(\d+)">`)

func score(t *testing.T, rec *httptest.ResponseRecorder) int {
	t.Helper()
	m := uiScoreRe.FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("no score on the page (%d)", rec.Code)
	}
	n := 0
	for _, c := range m[1] {
		n = n*10 + int(c-'0')
	}
	return n
}

// scoringControl returns an enabled framework and a control that alone
// serves one of its requirements, so implementing it moves the score.
func scoringControl(t *testing.T, e *testEnv, org, slug string) (string, string) {
	t.Helper()
	ctx := e.ctx(org)
	for page := 1; page < 20; page++ {
		l, err := e.app.ListRequirements(ctx, slug, app.Page{Page: page, PerPage: app.MaxPerPage})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.Items {
			if r.Assessable && len(r.ControlIDs) == 1 {
				return r.FrameworkID, r.ControlIDs[0]
			}
		}
		if len(l.Items) < app.MaxPerPage {
			break
		}
	}
	t.Fatalf("%s has no requirement served by one control", slug)
	return "", ""
}

// TestUIAssetsAndHeaders: pages carry their own CSP (own assets only),
// assets are served from the binary, and nothing refers to another site.
func TestUIAssetsAndHeaders(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	b := e.browser()
	rec := b.get("/login")
	wantStatus(t, rec, http.StatusOK)
	if csp := rec.Header().Get("Content-Security-Policy"); csp != ui.CSP {
		t.Fatalf("page CSP %q", csp)
	}
	if csp := e.do("GET", "/v1/health", "", nil).Header().Get("Content-Security-Policy"); csp != ui.APICSP {
		t.Fatalf("API CSP changed: %q", csp)
	}
	for _, name := range []string{"app.css", "app.js", "favicon.svg"} {
		href := "/static/" + name + "?v=" + e.srv.UI.AssetVersion(name)
		wantBody(t, rec, strings.ReplaceAll(href, "&", "&amp;"))
		r := b.get(href)
		wantStatus(t, r, http.StatusOK)
		if !strings.Contains(r.Header().Get("Cache-Control"), "immutable") || r.Body.Len() == 0 {
			t.Errorf("%s: %v", name, r.Header())
		}
	}
	wantStatus(t, b.get("/static/nope.css"), http.StatusNotFound)
	ext := regexp.MustCompile(`(?i)(src|href|url)\s*[=(]\s*["']?(https?:)?//`)
	err := fs.WalkDir(assets.UI, "ui", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, _ := fs.ReadFile(assets.UI, p)
		if m := ext.Find(raw); m != nil {
			t.Errorf("%s refers to another site: %s", p, m)
		}
		if strings.Contains(string(raw), " style=\"") || strings.Contains(string(raw), "<style") || strings.Contains(string(raw), "onclick=") {
			t.Errorf("%s has inline style or script, which the page CSP refuses", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUIRoutesOutsideAPI: the web application's routes are all outside
// the API's paths, so the OpenAPI contract (API operations) excludes them
// by construction, and the API router does not list them.
func TestUIRoutesOutsideAPI(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	n := 0
	err := e.srv.UI.PageRouter().Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		n++
		if strings.HasPrefix(tpl, "/v1") || !ui.IsPagePath(tpl) {
			t.Errorf("web route %s is not in a web section", tpl)
		}
		return nil
	})
	if err != nil || n < 20 {
		t.Fatalf("walked %d web routes: %v", n, err)
	}
	_ = e.srv.Router().Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		if tpl, err := route.GetPathTemplate(); err == nil && ui.IsPagePath(tpl) {
			t.Errorf("API router lists web path %s", tpl)
		}
		return nil
	})
	// API paths keep their JSON answers.
	rec := e.do("GET", "/v1/nope", "", nil)
	wantError(t, rec, http.StatusNotFound, "not_found")
}

// TestUIPolicies: a draft written in Markdown is rendered sanitized,
// published, and acknowledged by an employee for themselves; the owner sees
// the acknowledgement, the auditor no edit or publish forms.
func TestUIPolicies(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	owner := e.browser()
	owner.signIn(f.owner)
	wantBody(t, owner.get("/policies"), "Write your first policy")
	owner.get("/policies/new")
	rec := owner.post("/policies", url.Values{"name": {""}, "content": {"x"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="name-error"`)
	content := "# Access control\n\nAccess is **least privilege**.\n\n<script>alert(1)</script>\n\n[x](javascript:alert(2))\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
	loc := wantRedirect(t, owner.post("/policies", url.Values{"name": {"Access control policy"}, "content": {content}, "isRequiredToSign": {"on"}}), "/policies/pol_")
	rec = owner.get(loc)
	wantBody(t, rec, "<h1>Access control</h1>", "<strong>least privilege</strong>", "<table>", "Publish version 1", "not been published yet")
	wantNoBody(t, rec, "<script>alert(1)", `href="javascript:`)
	pid := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], "/policies/")
	wantRedirect(t, owner.post("/policies/"+pid+"/publish", url.Values{"changelog": {"First version"}}), "/policies/"+pid)

	emp := e.browser()
	emp.signIn(f.employee)
	rec = emp.get("/policies/" + pid)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Published version 1", "<strong>least privilege</strong>", "I have read and acknowledge version 1")
	wantNoBody(t, rec, "Save draft", "Publish version")
	wantBody(t, emp.get("/policies?pending=1"), "Access control policy")
	wantRedirect(t, emp.post("/policies/"+pid+"/acknowledge", url.Values{"version": {"1"}}), "/policies/"+pid)
	rec = emp.get("/policies/" + pid)
	wantBody(t, rec, "You acknowledged version 1")
	wantNoBody(t, emp.get("/policies?pending=1"), "Access control policy")

	rec = owner.get("/policies/" + pid)
	wantBody(t, rec, "Acknowledgements", "1 of ", "employee@acme.test", "Acknowledged")

	aud := e.browser()
	aud.signIn(f.auditor)
	rec = aud.get("/policies/" + pid)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Published version 1", "Acknowledgements")
	wantNoBody(t, rec, "Save draft", "Publish version", `href="/policies/new"`)
	wantStatus(t, aud.post("/policies/"+pid+"/publish", nil), http.StatusForbidden)
}

// TestUIAdminPages covers API keys (plaintext shown once), webhooks (secret
// shown once, delivery log, send again), the audit log, settings and
// people, with the roles that may and may not use them.
func TestUIAdminPages(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	owner := e.browser()
	owner.signIn(f.owner)

	// API keys: the plaintext is on the answer page only.
	owner.get("/api-keys")
	rec := owner.post("/api-keys", url.Values{"name": {"CI export"}, "role": {"auditor"}})
	wantStatus(t, rec, http.StatusCreated)
	m := regexp.MustCompile(`value="(cmp_[A-Za-z0-9]+)" data-plaintext-key`).FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatal("the new key is not shown")
	}
	wantStatus(t, e.do("GET", "/v1/vendors", m[1], nil), http.StatusOK)
	rec = owner.get("/api-keys")
	wantBody(t, rec, "CI export")
	wantNoBody(t, rec, m[1], "data-plaintext-key")
	rec = owner.post("/api-keys", url.Values{"name": {"Bad"}, "role": {"superuser"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="role-error"`)
	keys, _ := e.app.ListAPIKeys(e.ctx(f.org))
	var keyID string
	for _, k := range keys {
		if k.Name == "CI export" {
			keyID = k.ID
		}
	}
	wantRedirect(t, owner.post("/api-keys/"+keyID+"/revoke", nil), "/api-keys?done=revoked")
	wantStatus(t, e.do("GET", "/v1/vendors", m[1], nil), http.StatusUnauthorized)

	// Webhooks: secret once, a delivery in the log, sent again.
	owner.get("/webhooks")
	rec = owner.post("/webhooks", url.Values{"url": {"ftp://nope"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="url-error"`)
	rec = owner.post("/webhooks", url.Values{"url": {"http://127.0.0.1:9/hook"}, "events": {"finding.created, control.status.changed"}})
	wantStatus(t, rec, http.StatusCreated)
	wantBody(t, rec, "data-plaintext-secret", "finding.created, control.status.changed")
	hooks, _ := e.app.ListWebhooks(e.ctx(f.org), app.Page{Page: 1, PerPage: 10})
	if len(hooks.Items) != 1 {
		t.Fatalf("webhooks: %d", len(hooks.Items))
	}
	wh := hooks.Items[0]
	wantNoBody(t, owner.get("/webhooks"), "data-plaintext-secret")
	wantBody(t, owner.get("/webhooks/"+wh.ID), "Nothing was delivered yet")
	d, err := e.app.PingWebhook(e.ctx(f.org), wh.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec = owner.get("/webhooks/" + wh.ID)
	wantBody(t, rec, d.ID, "Send again")
	wantRedirect(t, owner.post("/webhooks/"+wh.ID+"/deliveries/"+d.ID+"/redeliver", nil), "/webhooks/"+wh.ID+"?done=redelivered")
	l, _ := e.app.ListDeliveries(e.ctx(f.org), wh.ID, app.DeliveryFilter{Page: app.Page{Page: 1, PerPage: 10}})
	if l.Total != 2 {
		t.Fatalf("deliveries after send again: %d", l.Total)
	}

	// Audit log: the key revocation is there.
	rec = owner.get("/audit-log?resourceType=api_key")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, keyID)

	// Settings: errors next to fields; a good change saves.
	owner.get("/settings")
	rec = owner.post("/settings/branding", url.Values{"primaryColor": {"red"}, "displayName": {"Acme"}, "logoUrl": {""}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="primaryColor-error"`)
	wantRedirect(t, owner.post("/settings/branding", url.Values{"primaryColor": {"#0b57d0"}, "displayName": {"Acme Corp"}, "logoUrl": {""}}), "/settings")
	wantBody(t, owner.get("/settings"), `value="Acme Corp"`, `value="#0b57d0"`)

	// People and their devices.
	if _, err := e.app.LinkDevice(e.ctx(f.org), f.employeeID, app.DeviceLink{Name: "Work laptop", Hostname: "wl-1", Platform: "linux"}); err != nil {
		t.Fatal(err)
	}
	wantBody(t, owner.get("/people"), f.employee, f.auditor)
	wantBody(t, owner.get("/people/"+f.employeeID), "Work laptop", "wl-1")

	// Who may see what.
	aud := e.browser()
	aud.signIn(f.auditor)
	wantStatus(t, aud.get("/audit-log"), http.StatusOK)
	for _, p := range []string{"/api-keys", "/webhooks", "/webhooks/" + wh.ID} {
		wantStatus(t, aud.get(p), http.StatusForbidden)
	}
	rec = aud.get("/settings")
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, "Save branding", `href="/api-keys"`, `href="/webhooks"`)
	wantBody(t, rec, `href="/audit-log"`)
	emp := e.browser()
	emp.signIn(f.employee)
	wantStatus(t, emp.get("/audit-log"), http.StatusForbidden)
	wantNoBody(t, emp.get("/people"), f.auditor)
}

// TestUISOAAndTrustRequests: the Statement of Applicability lists an
// enabled framework's requirements; a manager excludes one with a
// justification; the auditor reads it without forms; employees get 403.
func TestUISOAAndTrustRequests(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	owner := e.browser()
	owner.signIn(f.owner)
	wantBody(t, owner.get("/soa"), "neither is enabled")
	res, err := e.app.EnableFramework(e.ctx(f.org), "iso27001-2022")
	if err != nil {
		t.Fatal(err)
	}
	f.frameworkID = res.Framework.ID
	rec := owner.get("/soa?framework=" + f.frameworkID)
	wantStatus(t, rec, http.StatusOK)
	req := regexp.MustCompile(`action="/soa/(req_[A-Za-z0-9_]+)"`).FindStringSubmatch(rec.Body.String())
	if req == nil {
		t.Fatal("no requirement to decide on")
	}
	loc := wantRedirect(t, owner.post("/soa/"+req[1], url.Values{"applicable": {"no"}, "justification": {"We design no products."},
		"back": {"/soa?framework=" + f.frameworkID}}), "/soa?")
	wantBody(t, owner.get(strings.SplitN(loc, "#", 2)[0]), "Saved.", "We design no products.")
	aud := e.browser()
	aud.signIn(f.auditor)
	rec = aud.get("/soa")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "We design no products.")
	wantNoBody(t, rec, `action="/soa/`)
	rec = aud.get("/trust-requests")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "No access requests.")
	wantStatus(t, aud.post("/trust-requests/tar_01HZZZZZZZZZZZZZZZZZZZZZZZ/approve", nil), http.StatusForbidden)
	wantStatus(t, owner.post("/trust-requests/tar_01HZZZZZZZZZZZZZZZZZZZZZZZ/approve", nil), http.StatusNotFound)
	emp := e.browser()
	emp.signIn(f.employee)
	wantStatus(t, emp.get("/soa"), http.StatusForbidden)
}

// TestUIKnowledgeCSRDTrust covers the knowledge base (Markdown answers,
// search), CSRD data points and the trust portal settings.
func TestUIKnowledgeCSRDTrust(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	owner := e.browser()
	owner.signIn(f.owner)
	wantBody(t, owner.get("/knowledge-base"), "The knowledge base is empty")
	rec := owner.post("/knowledge-base", url.Values{"question": {""}, "answer": {"x"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="question-error"`)
	wantRedirect(t, owner.post("/knowledge-base", url.Values{"question": {"Is data encrypted at rest?"},
		"answer": {"Yes, with **AES-256**. <img src=x onerror=alert(1)>"}, "tags": {"crypto, storage"}}), "/knowledge-base?done=created")
	rec = owner.get("/knowledge-base")
	wantBody(t, rec, "Is data encrypted at rest?", "<strong>AES-256</strong>", ">crypto<")
	wantNoBody(t, rec, "onerror")
	wantBody(t, owner.get("/knowledge-base?q=encrypted"), "Results for", "Is data encrypted at rest?")

	owner.get("/csrd")
	rec = owner.post("/csrd", url.Values{"esrsCode": {"E1-6"}, "value": {"lots"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="value-error"`)
	rec = owner.post("/csrd", url.Values{"esrsCode": {"E1-6"}, "dataPointId": {"E1-6_01"}, "value": {"1234.5"}, "unit": {"tCO2e"}, "period": {"2025"}})
	if rec.Code != http.StatusSeeOther {
		wantStatus(t, rec, http.StatusUnprocessableEntity) // the service's rules, shown next to the fields
		wantBody(t, rec, `class="field-error"`)
	} else {
		wantBody(t, owner.get("/csrd"), "E1-6", "1234.5", "tCO2e")
	}

	rec = owner.get("/trust-settings")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "The portal is off")
	rec = owner.post("/trust-settings", url.Values{"enabled": {"on"}, "slug": {"Not A Slug!"}, "title": {"Acme trust"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="slug-error"`)
	wantRedirect(t, owner.post("/trust-settings", url.Values{"enabled": {"on"}, "slug": {"acme"}, "title": {"Acme trust"},
		"overview": {"Security at Acme"}, "ndaVersion": {"1"}, "ndaText": {"Keep it secret."}}), "/trust-settings")
	wantBody(t, owner.get("/trust-settings"), `href="/trust/acme"`)

	aud := e.browser()
	aud.signIn(f.auditor)
	for _, p := range []string{"/knowledge-base", "/csrd", "/trust-settings"} {
		rec := aud.get(p)
		wantStatus(t, rec, http.StatusOK)
		wantNoBody(t, rec, "Add an entry", "Record a data point", `<button type="submit">Save</button>`)
	}
	wantStatus(t, aud.post("/trust-settings", url.Values{"enabled": {"on"}}), http.StatusForbidden)
}

// TestUIQuestionnaires: upload a questionnaire file, answer it from the
// knowledge base and see the progress; the auditor only reads.
func TestUIQuestionnaires(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	if _, err := e.app.CreateKBEntry(e.ctx(f.org), app.KBEntryInput{Question: app.Ptr("Do you encrypt backups?"),
		Answer: app.Ptr("Yes, every backup is encrypted with AES-256.")}); err != nil {
		t.Fatal(err)
	}
	owner := e.browser()
	owner.signIn(f.owner)
	wantBody(t, owner.get("/questionnaires"), "No questionnaires yet")
	rec := owner.post("/questionnaires", nil)
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="file-error"`)
	loc := wantRedirect(t, owner.upload("/questionnaires", "review.csv", "Question\nDo you encrypt backups?\nWhat is your favourite colour?\n",
		map[string]string{"name": "Customer review"}), "/questionnaires/qst_")
	rec = owner.get(loc)
	wantBody(t, rec, "Customer review", "0 of 2 questions answered", "<progress", "Answer from the knowledge base")
	qid := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], "/questionnaires/")
	rec = owner.post("/questionnaires/"+qid+"/auto-answer", nil)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Auto-answer: 1 answered", "1 of 2 questions answered", "every backup is encrypted")
	aud := e.browser()
	aud.signIn(f.auditor)
	rec = aud.get("/questionnaires/" + qid)
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, "Answer from the knowledge base")
	wantNoBody(t, aud.get("/questionnaires"), "Upload a questionnaire")
	wantStatus(t, aud.post("/questionnaires/"+qid+"/auto-answer", nil), http.StatusForbidden)
}

// TestUIPeopleManage: owners and admins add people and change their role
// and active flag; errors sit next to their field, the plan's member limit
// is said plainly, and the auditor is offered none of it and refused.
func TestUIPeopleManage(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	admin := e.browser()
	admin.signIn(f.admin)
	rec := admin.get("/people")
	wantBody(t, rec, `method="post" action="/people"`, "Add a person", `<label for="person-email">Email</label>`)
	if sel := rec.Body.String(); strings.Contains(sel[strings.Index(sel, `id="person-role"`):], `<option value="owner"`) {
		t.Error("the owner role is offered for a new person")
	}

	rec = admin.post("/people", url.Values{"name": {""}, "email": {"not-an-email"}, "role": {"auditor"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="name-error"`, `id="email-error"`, `aria-describedby="email-error"`, `value="not-an-email"`, "Some fields need attention")
	rec = admin.post("/people", url.Values{"name": {"Dup"}, "email": {f.auditor}, "role": {"auditor"}})
	wantStatus(t, rec, http.StatusConflict)
	wantBody(t, rec, `id="email-error"`, "already a member")

	loc := wantRedirect(t, admin.post("/people", url.Values{"name": {"Rita Reviewer"}, "email": {"rita@acme.test"}, "role": {"auditor"}}), "/people/")
	rec = admin.get(loc)
	wantBody(t, rec, "Created.", "Rita Reviewer", "rita@acme.test", `action="/people/`, `<label for="role">Role</label>`)
	pid := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], "/people/")
	p, err := e.app.GetPerson(e.ctx(f.org), pid)
	if err != nil || p.Role != app.RoleAuditor || !p.IsActive {
		t.Fatalf("created person: %+v %v", p, err)
	}

	// Role change and deactivation.
	wantRedirect(t, admin.post("/people/"+pid, url.Values{"role": {"employee"}}), "/people/"+pid+"?done=saved")
	if p, _ = e.app.GetPerson(e.ctx(f.org), pid); p.Role != app.RoleEmployee || p.IsActive {
		t.Fatalf("after update: role %s active %v", p.Role, p.IsActive)
	}
	rec = admin.post("/people/"+pid, url.Values{"role": {"superuser"}, "isActive": {"on"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="role-error"`, `aria-describedby="role-error"`)
	// The owner keeps the owner role here and cannot be deactivated.
	rec = admin.get("/people/" + f.ownerID)
	wantBody(t, rec, "transferring ownership")
	rec = admin.post("/people/"+f.ownerID, url.Values{})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="isActive-error"`)

	// The auditor sees people but no forms, and is refused by hand.
	aud := e.browser()
	aud.signIn(f.auditor)
	rec = aud.get("/people")
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, `method="post" action="/people"`, "Add a person")
	wantNoBody(t, aud.get("/people/"+pid), `action="/people/`+pid+`"`) // attaching files is theirs (ui_attachments_test.go)
	wantStatus(t, aud.post("/people", url.Values{"name": {"Sneaky"}, "email": {"s@acme.test"}}), http.StatusForbidden)
	rec = aud.post("/people/"+pid, url.Values{"role": {"admin"}, "isActive": {"on"}})
	wantStatus(t, rec, http.StatusForbidden)
	wantBody(t, rec, "Your role does not allow this")
	if p, _ = e.app.GetPerson(e.ctx(f.org), pid); p.Role != app.RoleEmployee {
		t.Fatal("a refused post changed the role")
	}

	// The free plan's member limit is said plainly on the form.
	free := e.org("Tiny", app.PlanFree)
	e.withPassword(free, "owner@tiny.test", app.RoleOwner)
	e.person(free, "two@tiny.test", app.RoleEmployee)
	e.person(free, "three@tiny.test", app.RoleEmployee)
	owner := e.browser()
	owner.signIn("owner@tiny.test")
	owner.get("/people")
	rec = owner.post("/people", url.Values{"name": {"Four"}, "email": {"four@tiny.test"}, "role": {"employee"}})
	wantStatus(t, rec, http.StatusForbidden)
	wantBody(t, rec, "The free plan allows 3 members", `value="four@tiny.test"`, "Add a person")
}

// TestUIComments: the detail pages of vendors, risks, findings and
// controls list comments; owners, admins and signed-in auditors add them,
// an empty one is marked at the comment box, and employees are offered
// nothing and refused.
func TestUIComments(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	admin, aud, emp := e.browser(), e.browser(), e.browser()
	admin.signIn(f.admin)
	aud.signIn(f.auditor)
	emp.signIn(f.employee)
	for _, page := range []string{"/vendors/" + f.vendor, "/risks/" + f.risk, "/findings/" + f.finding, "/controls/" + f.control} {
		rec := admin.get(page)
		wantStatus(t, rec, http.StatusOK)
		wantBody(t, rec, `id="comments-h">Comments`, "No comments yet.", `action="`+page+`/comments"`, `<label for="comment">Add a comment</label>`)

		rec = admin.post(page+"/comments", url.Values{"comment": {"  "}})
		wantStatus(t, rec, http.StatusUnprocessableEntity)
		wantBody(t, rec, `id="comment-error"`, `aria-describedby="comment-error"`, "content is required")

		wantRedirect(t, admin.post(page+"/comments", url.Values{"comment": {"Checked the contract <b>today</b>"}}), page+"?done=commented")
		aud.get(page)
		wantRedirect(t, aud.post(page+"/comments", url.Values{"comment": {"Sample reviewed by the auditor"}}), page+"?done=commented")
		rec = aud.get(page)
		wantBody(t, rec, "Checked the contract &lt;b&gt;today&lt;/b&gt;", "Sample reviewed by the auditor", `action="`+page+`/comments"`)
		wantNoBody(t, rec, "No comments yet.", "<b>today</b>")
		if strings.Index(rec.Body.String(), "Checked the contract") > strings.Index(rec.Body.String(), "Sample reviewed") {
			t.Errorf("%s: comments are not oldest first", page)
		}
	}
	// Employees see no comment box and are refused by hand.
	rec := emp.get("/vendors/" + f.vendor)
	wantNoBody(t, rec, `/comments"`, "Add a comment")
	rec = emp.post("/vendors/"+f.vendor+"/comments", url.Values{"comment": {"Sneaky"}})
	wantStatus(t, rec, http.StatusForbidden)
	l, _ := e.app.ListComments(e.ctx(f.org), app.EntityVendor, f.vendor, app.Page{Page: 1, PerPage: 10})
	if l.Total != 2 {
		t.Fatalf("vendor comments: %d, want 2", l.Total)
	}
	// Another organization's resource is 404.
	other := e.uiFixture("Other")
	wantStatus(t, admin.post("/vendors/"+other.vendor+"/comments", url.Values{"comment": {"x"}}), http.StatusNotFound)
}

// TestUIFindingTemplates: templates are listed for everyone, created by
// owners and admins (errors next to their field), and chosen when
// recording a finding, with or without filling the form from them first.
func TestUIFindingTemplates(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	admin := e.browser()
	admin.signIn(f.admin)
	rec := admin.get("/finding-templates")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "No finding templates yet.", `action="/finding-templates"`, `<label for="title">Title</label>`)

	rec = admin.post("/finding-templates", url.Values{"title": {""}, "severity": {"apocalyptic"}, "order": {"1"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="title-error"`, `aria-describedby="title-error"`, `id="severity-error"`)
	rec = admin.post("/finding-templates", url.Values{"title": {"X"}, "order": {"first"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="order-error"`)
	wantRedirect(t, admin.post("/finding-templates", url.Values{"title": {"Missing MFA"}, "content": {"MFA is not enforced for admins."},
		"category": {"access"}, "severity": {"critical"}, "findingClass": {"major_nonconformity"}, "order": {"2"}}), "/finding-templates?done=created")
	tpls, _ := e.app.ListFindingTemplates(e.ctx(f.org), app.Page{Page: 1, PerPage: 10})
	if len(tpls.Items) != 1 {
		t.Fatalf("templates: %d", len(tpls.Items))
	}
	tpl := tpls.Items[0]
	rec = admin.get("/finding-templates?done=created")
	wantBody(t, rec, "Created.", "Missing MFA", "MFA is not enforced for admins.", "/findings/new?templateId="+tpl.ID)

	// Choosing the template without filling the form: its values apply.
	rec = admin.get("/findings/new")
	wantBody(t, rec, `<label for="templateId">Template</label>`, `<option value="`+tpl.ID+`"`, "Start from a template")
	loc := wantRedirect(t, admin.post("/findings", url.Values{"templateId": {tpl.ID}, "title": {""}, "severity": {""}}), "/findings/")
	fd, err := e.app.GetFinding(e.ctx(f.org), strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], "/findings/"))
	if err != nil || fd.Title == nil || *fd.Title != "Missing MFA" || fd.Severity != "critical" || fd.TemplateID == nil || *fd.TemplateID != tpl.ID {
		t.Fatalf("finding from template: %+v %v", fd, err)
	}
	// Filling the form from the template first (no JavaScript needed).
	rec = admin.get("/findings/new?templateId=" + tpl.ID)
	wantBody(t, rec, `value="Missing MFA"`, "MFA is not enforced for admins.", `<option value="critical" selected>`)
	wantStatus(t, admin.get("/findings/new?templateId=ftpl_nope"), http.StatusNotFound)
	rec = admin.post("/findings", url.Values{"templateId": {"ftpl_nope"}, "title": {"Something"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="templateId-error"`)

	// The auditor reads templates and may record findings from them, but
	// creates none.
	aud := e.browser()
	aud.signIn(f.auditor)
	rec = aud.get("/finding-templates")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Missing MFA", "Record a finding from it")
	wantNoBody(t, rec, `action="/finding-templates"`, "Create a template")
	wantStatus(t, aud.post("/finding-templates", url.Values{"title": {"Sneaky"}}), http.StatusForbidden)
	emp := e.browser()
	emp.signIn(f.employee)
	wantNoBody(t, emp.get("/finding-templates"), `action="/finding-templates"`, "Record a finding from it")
}

// TestUIVariables: owners and admins create and delete variables (errors
// next to their field); auditors read them with no write actions;
// employees are refused the page.
func TestUIVariables(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	admin := e.browser()
	admin.signIn(f.admin)
	wantBody(t, admin.get("/settings"), `href="/variables"`)
	rec := admin.get("/variables")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "No variables yet.", `action="/variables"`, `<label for="name">Name</label>`, `<label for="value">Value</label>`)
	rec = admin.post("/variables", url.Values{"name": {""}, "description": {"Legal name"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="name-error"`, `aria-describedby="name-error"`, `value="Legal name"`)
	wantRedirect(t, admin.post("/variables", url.Values{"name": {"company_name"}, "value": {"Acme GmbH"}, "description": {"Legal name"}}), "/variables?done=created")
	l, _ := e.app.ListVariables(e.ctx(f.org), app.VariableFilter{Page: app.Page{Page: 1, PerPage: 10}})
	if len(l.Items) != 1 {
		t.Fatalf("variables: %d", len(l.Items))
	}
	vr := l.Items[0]
	rec = admin.get("/variables?done=created")
	wantBody(t, rec, "Created.", "Acme GmbH", vr.Placeholder, `action="/variables/`+vr.ID+`/delete"`)
	wantNoBody(t, admin.get("/variables?q=nothing"), "Acme GmbH")

	aud := e.browser()
	aud.signIn(f.auditor)
	rec = aud.get("/variables")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Acme GmbH")
	wantNoBody(t, rec, `method="post" action="/variables"`, "/delete", "Create a variable")
	wantStatus(t, aud.post("/variables/"+vr.ID+"/delete", nil), http.StatusForbidden)
	wantStatus(t, aud.post("/variables", url.Values{"name": {"x"}, "value": {"y"}}), http.StatusForbidden)
	emp := e.browser()
	emp.signIn(f.employee)
	wantStatus(t, emp.get("/variables"), http.StatusForbidden)

	wantRedirect(t, admin.post("/variables/"+vr.ID+"/delete", nil), "/variables?done=deleted")
	wantBody(t, admin.get("/variables?done=deleted"), "Deleted.", "No variables yet.")
	wantStatus(t, admin.post("/variables/"+vr.ID+"/delete", nil), http.StatusNotFound)
}

// TestUIEvidenceExport: the frameworks page links the full export for
// owners and admins and the auditor package for auditors too; both
// download a zip; employees get neither.
func TestUIEvidenceExport(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	admin, aud, emp := e.browser(), e.browser(), e.browser()
	admin.signIn(f.admin)
	aud.signIn(f.auditor)
	emp.signIn(f.employee)
	wantBody(t, admin.get("/frameworks"), `href="/evidence/export"`, `href="/evidence/export/auditor"`)
	for _, c := range []struct {
		b    *uiBrowser
		path string
	}{{admin, "/evidence/export"}, {admin, "/evidence/export/auditor"}, {aud, "/evidence/export/auditor"}} {
		rec := c.b.get(c.path)
		wantStatus(t, rec, http.StatusOK)
		if ct := rec.Header().Get("Content-Type"); ct != "application/zip" || !strings.HasPrefix(rec.Body.String(), "PK") {
			t.Errorf("%s: %s, not a zip", c.path, ct)
		}
		if !strings.Contains(rec.Header().Get("Content-Disposition"), "attachment") {
			t.Errorf("%s: not an attachment", c.path)
		}
	}
	rec := aud.get("/frameworks")
	wantBody(t, rec, `href="/evidence/export/auditor"`)
	wantNoBody(t, rec, `href="/evidence/export"`)
	wantStatus(t, aud.get("/evidence/export"), http.StatusForbidden)
	wantNoBody(t, emp.get("/frameworks"), "/evidence/export")
	wantStatus(t, emp.get("/evidence/export/auditor"), http.StatusForbidden)
}
