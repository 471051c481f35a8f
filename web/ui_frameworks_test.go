package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/ui"
)

// fwFixture adds to a uiFixture a custom framework with one requirement,
// a task template on it, and a requirement of the enabled built-in
// framework that the fixture's control serves.
type fwFixture struct {
	uiFixture
	custom, customReq, template string
	builtinReq                  string
}

func (e *testEnv) fwFixture(name string) fwFixture {
	e.t.Helper()
	f := fwFixture{uiFixture: e.uiFixture(name)}
	ctx := e.ctx(f.org)
	fw, err := e.app.CreateCustomFramework(ctx, app.FrameworkInput{Name: app.Ptr(name + " Baseline"), Version: app.Ptr("1")})
	if err != nil {
		e.t.Fatal(err)
	}
	f.custom = fw.ID
	r, err := e.app.AddRequirement(ctx, fw.ID, app.RequirementInput{Ref: app.Ptr("BL-1"), Title: app.Ptr("Multi-factor sign-in everywhere"),
		Description: app.Ptr("Every administrative sign-in uses a second factor.")})
	if err != nil {
		e.t.Fatal(err)
	}
	f.customReq = r.ID
	t, err := e.app.CreateTaskTemplate(ctx, app.TaskTemplateInput{FrameworkID: app.Ptr(fw.ID), RequirementID: app.Ptr(r.ID),
		Name: app.Ptr("Export the MFA enrolment report"), Frequency: app.Some("quarterly")})
	if err != nil {
		e.t.Fatal(err)
	}
	f.template = t.ID
	c, err := e.app.GetControl(ctx, f.control)
	if err != nil || len(c.Requirements) == 0 {
		e.t.Fatalf("control requirements: %v", err)
	}
	f.builtinReq = c.Requirements[0].RequirementID
	return f
}

// TestUIFrameworkEditorPagesPerRole renders every new page for each role:
// write actions are offered to owners and admins only, and the pages meant
// for them alone answer others with the 403 page.
func TestUIFrameworkEditorPagesPerRole(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.fwFixture("Acme")
	reqPage := "/frameworks/" + f.custom + "/requirements/" + f.customReq
	pages := []struct {
		path       string
		want       []string
		writes     []string // offered to owners and admins only
		manageOnly bool     // others get the 403 page
	}{
		{"/frameworks", []string{"Acme Baseline", `href="/task-templates"`, ">Custom<"}, []string{`href="/frameworks/new"`, "New custom framework"}, false},
		{"/frameworks/new", []string{"<h1>New custom framework</h1>", `<label for="name">`, `<label for="version">`, `<label for="slug">`, `<label for="description">`, "Create framework"}, nil, true},
		{"/frameworks/" + f.custom, []string{"<h1>Acme Baseline</h1>", `href="` + reqPage + `"`, "BL-1", "Defined by your organization"},
			[]string{"Edit framework", "Add a requirement", `<label for="ref">`, `<label for="kind">`}, false},
		{"/frameworks/" + f.custom + "/edit", []string{`value="Acme Baseline"`, "Save framework"}, nil, true},
		{"/frameworks/" + f.frameworkID, []string{"Requirements", `/requirements/` + f.builtinReq + `"`}, nil, false},
		{reqPage, []string{"BL-1 Multi-factor sign-in everywhere", "Every administrative sign-in uses a second factor.", "Mapped controls",
			"No control serves this requirement yet", "Export the MFA enrolment report"},
			[]string{"Map selected controls", `name="controlIds"`, `<label for="q">Search controls</label>`, "Add a task template for this requirement"}, false},
		{"/frameworks/" + f.frameworkID + "/requirements/" + f.builtinReq, []string{"Built-in catalog", "Mapped controls"}, []string{"Map selected controls"}, false},
		{"/task-templates", []string{"<h1>Task templates</h1>", "Export the MFA enrolment report", "BL-1 Multi-factor", "Quarterly", `<label for="framework">`},
			[]string{`href="/task-templates/new"`}, false},
		{"/task-templates?framework=" + f.frameworkID, []string{"No task template matches these filters."}, nil, false},
		{"/task-templates/new", []string{"Choose the framework whose requirement"}, nil, true},
		{"/task-templates/new?framework=" + f.custom + "&requirement=" + f.customReq, []string{"Task template for Acme Baseline",
			`<option value="` + f.customReq + `" selected>`, `<label for="requirementId">`, `<label for="name">`, `<label for="frequency">`, `<label for="department">`}, nil, true},
		{"/task-templates/" + f.template, []string{"<h1>Export the MFA enrolment report</h1>", "Acme Baseline", "Quarterly"},
			[]string{"Save task template", "Delete task template", `action="/task-templates/` + f.template + `/delete"`}, false},
	}
	roles := []struct {
		email, role string
		manage      bool
	}{{f.owner, "owner", true}, {f.admin, "admin", true}, {f.auditor, "auditor", false}, {f.employee, "employee", false}}
	for _, ro := range roles {
		t.Run(ro.role, func(t *testing.T) {
			b := e.browser()
			b.signIn(ro.email)
			for _, pg := range pages {
				rec := b.get(pg.path)
				if pg.manageOnly && !ro.manage {
					if rec.Code != http.StatusForbidden {
						t.Errorf("%s as %s: status %d, want 403", pg.path, ro.role, rec.Code)
					}
					wantBody(t, rec, "Not allowed", "Your role does not allow this")
					continue
				}
				if rec.Code != http.StatusOK {
					t.Errorf("%s as %s: status %d: %s", pg.path, ro.role, rec.Code, rec.Body.String())
					continue
				}
				wantBody(t, rec, `data-role="`+ro.role+`"`)
				wantBody(t, rec, pg.want...)
				if ro.manage {
					wantBody(t, rec, pg.writes...)
				} else {
					wantNoBody(t, rec, pg.writes...)
				}
			}
			// The built-in framework offers no edit, and its requirements
			// cannot be added to.
			rec := b.get("/frameworks/" + f.frameworkID)
			wantNoBody(t, rec, "Edit framework", "Add a requirement")
			// An employee does not see controls they do not own, not even
			// through a requirement page.
			rec = b.get("/frameworks/" + f.frameworkID + "/requirements/" + f.builtinReq)
			if ro.role == "employee" {
				wantNoBody(t, rec, `href="/controls/`+f.control+`"`)
				wantBody(t, rec, "1 more control not assigned to you")
			} else {
				wantBody(t, rec, `href="/controls/`+f.control+`"`)
			}
		})
	}
}

// TestUICustomFrameworkFlow: an admin creates a custom framework, edits it,
// adds a requirement and maps it to a control; validation errors appear
// next to their fields, and every effect shows through the app services
// and on the control's page.
func TestUICustomFrameworkFlow(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	ctx := e.ctx(f.org)
	b := e.browser()
	b.signIn(f.admin)

	// Create: a missing name is reported at the field, the input kept.
	b.get("/frameworks/new")
	rec := b.post("/frameworks", url.Values{"name": {" "}, "version": {"2026"}, "slug": {"Bad Slug!"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantFieldError(t, rec, "name", "<input")
	wantFieldError(t, rec, "slug", "<input")
	wantBody(t, rec, `value="2026"`, "Some fields need attention")
	loc := wantRedirect(t, b.post("/frameworks", url.Values{"name": {"Internal Security Baseline"}, "shortName": {"ISB"},
		"version": {"2026"}, "description": {"Our own rules."}}), "/frameworks/frk_")
	fwID := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], "/frameworks/")
	fw, err := e.app.GetFramework(ctx, fwID)
	if err != nil {
		t.Fatal(err)
	}
	if !fw.Custom || fw.Name != "Internal Security Baseline" || fw.ShortName != "ISB" || fw.Version != "2026" || fw.Slug != "custom-internal-security-baseline" {
		t.Fatalf("framework: %+v", fw)
	}
	rec = b.get(loc)
	wantBody(t, rec, "Created.", "<h1>Internal Security Baseline</h1>", "This framework has no requirements yet", "Add the first one below")

	// A second framework with the same slug: the conflict is shown at the slug.
	b.get("/frameworks/new")
	rec = b.post("/frameworks", url.Values{"name": {"Other"}, "slug": {"custom-internal-security-baseline"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantFieldError(t, rec, "slug", "<input")
	wantBody(t, rec, "already exists")

	// Edit.
	rec = b.get("/frameworks/" + fwID + "/edit")
	wantBody(t, rec, `value="Internal Security Baseline"`, `value="custom-internal-security-baseline"`, "Our own rules.")
	rec = b.post("/frameworks/"+fwID, url.Values{"name": {""}, "slug": {"custom-internal-security-baseline"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantFieldError(t, rec, "name", "<input")
	wantRedirect(t, b.post("/frameworks/"+fwID, url.Values{"name": {"Internal Security Baseline"}, "shortName": {"ISB"}, "version": {"2027"},
		"slug": {"isb"}, "description": {"Our own rules, revised."}}), "/frameworks/"+fwID+"?done=saved")
	if fw, err = e.app.GetFramework(ctx, "isb"); err != nil || fw.Version != "2027" || fw.Description != "Our own rules, revised." {
		t.Fatalf("after edit: %+v %v", fw, err)
	}

	// Add a requirement: a missing ref is reported at the field.
	b.get("/frameworks/" + fwID)
	rec = b.post("/frameworks/"+fwID+"/requirements", url.Values{"ref": {""}, "title": {"MFA everywhere"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantFieldError(t, rec, "ref", "<input")
	wantBody(t, rec, `value="MFA everywhere"`, "<h1>Internal Security Baseline</h1>")
	rec = b.post("/frameworks/"+fwID+"/requirements", url.Values{"ref": {"ISB-1"}, "title": {"MFA everywhere"}, "parentRef": {"ISB-0"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantFieldError(t, rec, "parentRef", "<input")
	rec = b.post("/frameworks/"+fwID+"/requirements", url.Values{"ref": {"ISB"}, "title": {"Access"}, "kind": {"heading"}})
	wantRedirect(t, rec, "/frameworks/"+fwID+"/requirements/")
	loc = wantRedirect(t, b.post("/frameworks/"+fwID+"/requirements", url.Values{"ref": {"ISB-1"}, "title": {"MFA everywhere"},
		"description": {"Second factor for every sign-in."}, "parentRef": {"ISB"}}), "/frameworks/"+fwID+"/requirements/req_")
	reqID := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], "/frameworks/"+fwID+"/requirements/")
	reqs, err := e.app.ListRequirements(ctx, fwID, app.Page{Page: 1, PerPage: 10})
	if err != nil || reqs.Total != 2 || reqs.Items[1].ID != reqID || reqs.Items[1].ParentRef != "ISB" || !reqs.Items[1].Assessable || reqs.Items[0].Assessable {
		t.Fatalf("requirements: %+v %v", reqs, err)
	}
	rec = b.get(loc)
	wantBody(t, rec, "Requirement added.", "ISB-1 MFA everywhere", "Second factor for every sign-in.", "No control serves this requirement yet",
		`value="`+f.control+`"`)
	// The heading takes no controls.
	rec = b.get("/frameworks/" + fwID + "/requirements/" + reqs.Items[0].ID)
	wantBody(t, rec, "it is not assessed and takes no controls")
	wantNoBody(t, rec, "Map selected controls")

	// Search narrows the list of controls.
	c, err := e.app.GetControl(ctx, f.control)
	if err != nil {
		t.Fatal(err)
	}
	rec = b.get(loc + "&q=" + url.QueryEscape(strings.ToLower(c.Name)))
	wantBody(t, rec, `value="`+f.control+`"`)
	rec = b.get(ui.RequirementPath(fwID, reqID) + "?q=no-such-control-xyz")
	wantBody(t, rec, "No unmapped control matches")
	wantNoBody(t, rec, `value="`+f.control+`"`)

	// Map: none chosen is reported at the list.
	rec = b.post(ui.RequirementPath(fwID, reqID)+"/controls", url.Values{})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `<p class="field-error" id="controlIds-error">Choose at least one control.</p>`, `aria-describedby="controlIds-error"`)
	rec = b.post(ui.RequirementPath(fwID, reqID)+"/controls", url.Values{"controlIds": {"ctl_01HZZZZZZZZZZZZZZZZZZZZZZZ"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="controlIds-error"`)
	wantRedirect(t, b.post(ui.RequirementPath(fwID, reqID)+"/controls", url.Values{"controlIds": {f.control}}), ui.RequirementPath(fwID, reqID)+"?done=mapped")
	r, err := e.app.GetRequirement(ctx, fwID, reqID)
	if err != nil || len(r.ControlIDs) != 1 || r.ControlIDs[0] != f.control {
		t.Fatalf("mapping: %+v %v", r, err)
	}
	rec = b.get(ui.RequirementPath(fwID, reqID) + "?done=mapped")
	wantBody(t, rec, "Mapping saved", `href="/controls/`+f.control+`"`)
	wantNoBody(t, rec, `value="`+f.control+`"`) // no longer offered
	// The control's page lists the requirement among its mapped requirements.
	rec = b.get("/controls/" + f.control)
	wantBody(t, rec, "Mapped requirements", "Internal Security Baseline", `href="`+ui.RequirementPath(fwID, reqID)+`">ISB-1</a> MFA everywhere`)

	// A built-in requirement can be mapped too, as the API allows.
	reqs, err = e.app.ListRequirements(ctx, f.frameworkID, app.Page{Page: 1, PerPage: 200})
	if err != nil {
		t.Fatal(err)
	}
	var other string
	for _, q := range reqs.Items {
		if q.Assessable && len(q.ControlIDs) > 0 && q.ControlIDs[0] != f.control {
			other = q.ID
			break
		}
	}
	if other == "" {
		t.Fatal("no second built-in requirement")
	}
	wantRedirect(t, b.post(ui.RequirementPath(f.frameworkID, other)+"/controls", url.Values{"controlIds": {f.control}}), ui.RequirementPath(f.frameworkID, other))
	if r, err = e.app.GetRequirement(ctx, f.frameworkID, other); err != nil || len(r.ControlIDs) != 2 {
		t.Fatalf("built-in mapping: %+v %v", r, err)
	}
}

// TestUIBuiltinFrameworkNotEditable: built-in frameworks are not offered for
// editing, and the app refuses an edit posted by hand.
func TestUIBuiltinFrameworkNotEditable(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	b := e.browser()
	b.signIn(f.owner)
	rec := b.get("/frameworks/iso27001-2022")
	wantNoBody(t, rec, "Edit framework", "Add a requirement")
	for _, rec := range []*httptest.ResponseRecorder{b.get("/frameworks/iso27001-2022/edit"),
		b.post("/frameworks/iso27001-2022", url.Values{"name": {"Renamed"}})} {
		wantStatus(t, rec, http.StatusConflict)
		wantBody(t, rec, "built-in frameworks cannot be changed")
	}
	// Adding a requirement to a complete built-in framework is refused too.
	rec = b.post("/frameworks/iso27001-2022/requirements", url.Values{"ref": {"X-1"}, "title": {"Extra"}})
	wantStatus(t, rec, http.StatusConflict)
	fw, err := e.app.GetFramework(e.ctx(f.org), "iso27001-2022")
	if err != nil || fw.Name == "Renamed" {
		t.Fatalf("built-in framework changed: %+v %v", fw, err)
	}
	// Outline frameworks take added requirements.
	rec = b.get("/frameworks/nen7510")
	wantBody(t, rec, "Add a requirement")
	wantNoBody(t, rec, "Edit framework")
}

// TestUITaskTemplates: an admin creates, edits and deletes a task template;
// creating it on an enabled framework makes its task at once.
func TestUITaskTemplates(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.fwFixture("Acme")
	ctx := e.ctx(f.org)
	b := e.browser()
	b.signIn(f.admin)

	rec := b.get("/task-templates/new?framework=" + f.frameworkID + "&requirement=" + f.builtinReq)
	wantBody(t, rec, `<option value="`+f.builtinReq+`" selected>`, "the task is created at once")
	form := url.Values{"frameworkId": {f.frameworkID}, "requirementId": {f.builtinReq}, "name": {""}, "frequency": {"yearly"}, "department": {"qms"}}
	rec = b.post("/task-templates", form)
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantFieldError(t, rec, "name", "<input")
	wantBody(t, rec, `value="yearly" selected`, `<option value="`+f.builtinReq+`" selected>`)
	// A requirement of another framework is refused at the requirement.
	rec = b.post("/task-templates", url.Values{"frameworkId": {f.frameworkID}, "requirementId": {f.customReq}, "name": {"X"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantFieldError(t, rec, "requirementId", "<select")
	// An unknown framework is refused at the framework.
	rec = b.post("/task-templates", url.Values{"frameworkId": {"frk_nope"}, "requirementId": {f.customReq}, "name": {"X"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantFieldError(t, rec, "frameworkId", "<select")

	form.Set("name", "Management review minutes")
	loc := wantRedirect(t, b.post("/task-templates", form), "/task-templates/ttp_")
	tplID := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], "/task-templates/")
	tpl, err := e.app.GetTaskTemplate(ctx, tplID)
	if err != nil || tpl.Name != "Management review minutes" || tpl.RequirementID != f.builtinReq || sp(tpl.Frequency) != "yearly" || sp(tpl.Department) != "qms" {
		t.Fatalf("template: %+v %v", tpl, err)
	}
	tasks, err := e.app.ListTasks(ctx, app.TaskFilter{ControlID: f.control, Page: app.Page{Page: 1, PerPage: 100}})
	if err != nil {
		t.Fatal(err)
	}
	made := false
	for _, tk := range tasks.Items {
		made = made || (tk.TemplateID != nil && *tk.TemplateID == tplID)
	}
	if !made {
		t.Fatal("no task made from the template of an enabled framework")
	}
	rec = b.get(loc)
	wantBody(t, rec, "Task template created", "<h1>Management review minutes</h1>", "Yearly")
	rec = b.get("/task-templates?framework=" + f.frameworkID)
	wantBody(t, rec, "Management review minutes")
	wantNoBody(t, rec, "Export the MFA enrolment report")

	// Edit: errors next to the field, then saved.
	rec = b.post("/task-templates/"+tplID, url.Values{"name": {""}, "frequency": {"yearly"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantFieldError(t, rec, "name", "<input")
	wantRedirect(t, b.post("/task-templates/"+tplID, url.Values{"name": {"Management review"}, "description": {"Minutes signed."},
		"frequency": {""}, "department": {"gov"}}), "/task-templates/"+tplID+"?done=template-saved")
	if tpl, err = e.app.GetTaskTemplate(ctx, tplID); err != nil || tpl.Name != "Management review" || tpl.Frequency != nil ||
		sp(tpl.Department) != "gov" || tpl.Description != "Minutes signed." {
		t.Fatalf("after edit: %+v %v", tpl, err)
	}

	// Delete.
	wantRedirect(t, b.post("/task-templates/"+tplID+"/delete", nil), "/task-templates?done=template-deleted")
	if _, err := e.app.GetTaskTemplate(ctx, tplID); err == nil {
		t.Fatal("template still there after delete")
	}
	rec = b.get("/task-templates?done=template-deleted")
	wantBody(t, rec, "Task template deleted")
	wantNoBody(t, rec, "Management review")
}

// TestUIFrameworkEditorForbidden: auditors and employees posting the forms
// by hand get the 403 page and nothing changes.
func TestUIFrameworkEditorForbidden(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.fwFixture("Acme")
	ctx := e.ctx(f.org)
	for _, email := range []string{f.auditor, f.employee} {
		b := e.browser()
		b.signIn(email)
		posts := map[string]url.Values{
			"/frameworks":                                           {"name": {"Sneaky"}},
			"/frameworks/" + f.custom:                               {"name": {"Sneaky"}},
			"/frameworks/" + f.custom + "/requirements":             {"ref": {"S-1"}, "title": {"Sneaky"}},
			ui.RequirementPath(f.custom, f.customReq) + "/controls": {"controlIds": {f.control}},
			"/task-templates":                                       {"frameworkId": {f.custom}, "requirementId": {f.customReq}, "name": {"Sneaky"}},
			"/task-templates/" + f.template:                         {"name": {"Sneaky"}},
			"/task-templates/" + f.template + "/delete":             nil,
		}
		for path, form := range posts {
			rec := b.post(path, form)
			if rec.Code != http.StatusForbidden {
				t.Errorf("%s by %s: status %d, want 403", path, email, rec.Code)
			}
			wantBody(t, rec, "Not allowed")
		}
	}
	fws, err := e.app.ListFrameworks(ctx, nil, app.Page{Page: 1, PerPage: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, fw := range fws.Items {
		if fw.Name == "Sneaky" {
			t.Fatal("a refused post created or renamed a framework")
		}
	}
	r, err := e.app.GetRequirement(ctx, f.custom, f.customReq)
	if err != nil || len(r.ControlIDs) != 0 {
		t.Fatalf("a refused post mapped controls: %+v %v", r, err)
	}
	reqs, _ := e.app.ListRequirements(ctx, f.custom, app.Page{Page: 1, PerPage: 10})
	tpls, _ := e.app.ListTaskTemplates(ctx, "")
	if reqs.Total != 1 || len(tpls) != 1 || tpls[0].Name != "Export the MFA enrolment report" {
		t.Fatalf("a refused post changed requirements or templates: %d %+v", reqs.Total, tpls)
	}
}

// TestUIFrameworkEditorOtherOrganization: another organization's custom
// framework, requirement and task template answer with the 404 page, for
// reads and for form posts, and are left unchanged.
func TestUIFrameworkEditorOtherOrganization(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	a := e.fwFixture("Acme")
	other := e.fwFixture("Globex")
	b := e.browser()
	b.signIn(a.owner)
	for _, path := range []string{"/frameworks/" + other.custom, "/frameworks/" + other.custom + "/edit",
		ui.RequirementPath(other.custom, other.customReq), ui.RequirementPath(a.custom, other.customReq),
		"/task-templates/" + other.template, "/task-templates/new?framework=" + other.custom} {
		rec := b.get(path)
		if strings.HasPrefix(path, "/task-templates/new") {
			// The form page stays; the foreign framework is not offered.
			wantStatus(t, rec, http.StatusUnprocessableEntity)
			wantNoBody(t, rec, "Globex", other.customReq)
			continue
		}
		if rec.Code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", path, rec.Code)
		}
		wantBody(t, rec, "Page not found")
		wantNoBody(t, rec, "Globex", "Multi-factor")
	}
	for path, form := range map[string]url.Values{
		"/frameworks/" + other.custom:                                   {"name": {"Hijacked"}},
		"/frameworks/" + other.custom + "/requirements":                 {"ref": {"H-1"}, "title": {"Hijacked"}},
		ui.RequirementPath(other.custom, other.customReq) + "/controls": {"controlIds": {a.control}},
		"/task-templates/" + other.template:                             {"name": {"Hijacked"}},
		"/task-templates/" + other.template + "/delete":                 nil,
	} {
		rec := b.post(path, form)
		if rec.Code != http.StatusNotFound {
			t.Errorf("POST %s: status %d, want 404", path, rec.Code)
		}
		wantBody(t, rec, "Page not found")
	}
	// A task template cannot be made on the other organization's framework.
	rec := b.post("/task-templates", url.Values{"frameworkId": {other.custom}, "requirementId": {other.customReq}, "name": {"Hijacked"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantFieldError(t, rec, "frameworkId", "<select")
	ctx := e.ctx(other.org)
	fw, err := e.app.GetFramework(ctx, other.custom)
	if err != nil || fw.Name != "Globex Baseline" {
		t.Fatalf("other framework: %+v %v", fw, err)
	}
	tpl, err := e.app.GetTaskTemplate(ctx, other.template)
	if err != nil || tpl.Name != "Export the MFA enrolment report" {
		t.Fatalf("other template: %+v %v", tpl, err)
	}
	r, err := e.app.GetRequirement(ctx, other.custom, other.customReq)
	if err != nil || len(r.ControlIDs) != 0 {
		t.Fatalf("other requirement: %+v %v", r, err)
	}
}

// wantFieldError checks that a field is marked invalid, points at its
// message, and the message follows it directly, before any other input of
// the kind given.
func wantFieldError(t *testing.T, rec *httptest.ResponseRecorder, field, kind string) {
	t.Helper()
	body := rec.Body.String()
	loc := regexp.MustCompile(`aria-describedby="(?:[^"]* )?` + regexp.QuoteMeta(field) + `-error"`).FindStringIndex(body)
	in := -1
	if loc != nil {
		in = loc[0]
	}
	msg := strings.Index(body, `<p class="field-error" id="`+field+`-error">`)
	if in < 0 || msg < 0 {
		t.Errorf("%s: no invalid field or message", field)
		return
	}
	if msg < in || strings.Contains(body[in:msg], kind) {
		t.Errorf("%s: message is not next to its field", field)
	}
	// One aria-describedby on the field: a second one would be ignored.
	start := strings.LastIndex(body[:in], "<")
	end := in + strings.Index(body[in:], ">")
	if start < 0 || strings.Count(body[start:end], "aria-describedby=") != 1 {
		t.Errorf("%s: the field does not point at its message alone", field)
	}
}

func sp(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// BenchmarkUIRequirementPage renders a requirement page (every control
// loaded for the mapping list) and the task templates page for an owner of
// an organization with 2,000 controls, and reports p50 and p95 server time.
//
//	go test -run '^$' -bench BenchmarkUIRequirementPage -benchtime 100x ./web/
func BenchmarkUIRequirementPage(b *testing.B) {
	a, db, srv := benchEnv(b, 8<<20)
	sys, o := benchOrgWithOwner(b, a, db)
	seedBenchControls(b, a, db, sys, o.ID)
	fw, err := a.CreateCustomFramework(sys, app.FrameworkInput{Name: app.Ptr("Baseline")})
	if err != nil {
		b.Fatal(err)
	}
	r, err := a.AddRequirement(sys, fw.ID, app.RequirementInput{Ref: app.Ptr("B-1"), Title: app.Ptr("MFA")})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := a.CreateTaskTemplate(sys, app.TaskTemplateInput{FrameworkID: app.Ptr(fw.ID), RequirementID: app.Ptr(r.ID),
			Name: app.Ptr(fmt.Sprintf("Template %d", i))}); err != nil {
			b.Fatal(err)
		}
	}
	do := benchSignIn(b, srv, "owner@bench.test")
	for _, pg := range []struct{ name, path string }{{"requirement", ui.RequirementPath(fw.ID, r.ID)},
		{"requirement-search", ui.RequirementPath(fw.ID, r.ID) + "?q=custom+control+19"}, {"task-templates", "/task-templates"}} {
		benchPage(b, pg.name, pg.path, do)
	}
}
