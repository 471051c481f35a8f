package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// contextFormValues is a full edit form of the context page.
func contextFormValues(base int) url.Values {
	return url.Values{
		"baseVersion":           {strconv.Itoa(base)},
		"description":           {"We build accounting software."},
		"scope.statement":       {"The SaaS platform and its operations."},
		"scope.exclusions":      {"The marketing website."},
		"scope.locations":       {"Berlin office\n\nAWS eu-central-1\n"},
		"scope.interfaces":      {"Payment provider API."},
		"climateChangeRelevant": {"no"},
		"issueCategory":         {"external", "internal", "internal"},
		"issueDescription":      {"Stricter data protection rules", "", ""},
		"issueEffect":           {"More audits", "", ""},
		"partyName":             {"Customers", ""},
		"partyCategory":         {"customer", ""},
		"partyRequirements":     {"Confidentiality of their books", ""},
		"partyAddressed":        {"yes", "no"},
		"entryQuestion":         {"Where is data hosted?", ""},
		"entryAnswer":           {"In Frankfurt.", ""},
		"entryTags":             {"hosting, residency", ""},
		"changeNote":            {"First version"},
	}
}

// TestUIContext: owners and admins edit every field of the context and
// see each validation error next to its row; auditors read it with no
// form; employees are refused; versions list, open and restore; another
// organization's version is the 404 page.
func TestUIContext(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	other := e.uiFixture("Globex")
	admin, owner, aud, emp := e.browser(), e.browser(), e.browser(), e.browser()
	admin.signIn(f.admin)
	owner.signIn(f.owner)
	aud.signIn(f.auditor)
	emp.signIn(f.employee)

	wantBody(t, admin.get("/settings"), `href="/context"`)
	rec := admin.get("/context")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Organization context", "Not filled in yet.", `action="/context"`, `<label for="description">`,
		`<label for="scope-locations">`, `<label for="issue-desc-0">`, `<label for="party-name-0">`, `<label for="entry-q-0">`,
		`name="baseVersion" value="0"`, `aria-current="page"`)

	// A validation error of a row shows next to that row; nothing is saved.
	bad := contextFormValues(0)
	bad["issueEffect"] = []string{"More audits", "An effect without a description", ""}
	rec = admin.post("/context", bad)
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="issues-1-description-error"`, `aria-describedby="issues-1-description-error"`, "An effect without a description",
		"Nothing was saved")
	if c, err := e.app.GetContext(e.ctx(f.org)); err != nil || c.Version != 0 {
		t.Fatalf("saved despite the error: %+v %v", c, err)
	}

	wantRedirect(t, admin.post("/context", contextFormValues(0)), "/context?done=context-saved")
	c, err := e.app.GetContext(e.ctx(f.org))
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != 1 || c.Description != "We build accounting software." || len(c.Scope.Locations) != 2 || c.Scope.Locations[1] != "AWS eu-central-1" ||
		len(c.Issues) != 1 || c.Issues[0].Category != "external" || len(c.InterestedParties) != 1 || !c.InterestedParties[0].AddressedThroughIsms ||
		len(c.Entries) != 1 || len(c.Entries[0].Tags) != 2 || c.ClimateChangeRelevant == nil || *c.ClimateChangeRelevant || c.ChangeNote != "First version" {
		t.Fatalf("context as saved: %+v", c)
	}
	rec = admin.get("/context?done=context-saved")
	wantBody(t, rec, "Context saved as a new version", "Version 1 (current)", "Stricter data protection rules", `name="baseVersion" value="1"`)
	// The same content again saves no version.
	wantRedirect(t, admin.post("/context", contextFormValues(1)), "/context?done=context-same")
	// A save based on an old version is a conflict, not an overwrite.
	stale := contextFormValues(0)
	stale.Set("description", "Overwrites someone's work")
	wantStatus(t, admin.post("/context", stale), http.StatusConflict)
	second := contextFormValues(1)
	second.Set("description", "We build accounting and payroll software.")
	second.Set("changeNote", "Payroll added")
	wantRedirect(t, owner.post("/context", second), "/context?done=context-saved")

	// The auditor reads every field and is offered no form.
	rec = aud.get("/context")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "payroll software", "The marketing website.", "AWS eu-central-1", "Payment provider API.", "Stricter data protection rules",
		"More audits", "Customers", "Confidentiality of their books", "Where is data hosted?", "hosting, residency", "Version 2 (current)", "Payroll added")
	wantNoBody(t, rec, `action="/context"`, "<textarea")
	wantStatus(t, aud.post("/context", contextFormValues(2)), http.StatusForbidden)
	wantStatus(t, emp.get("/context"), http.StatusForbidden)
	wantStatus(t, emp.get("/context/snapshots"), http.StatusForbidden)

	// Versions: listed newest first, opened, restored by owners and admins.
	l, err := e.app.ListContextSnapshots(e.ctx(f.org), app.Page{Page: 1, PerPage: 10})
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("snapshots: %+v %v", l, err)
	}
	v1 := *l.Items[1].ID
	rec = aud.get("/context/snapshots")
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Version 2", "Version 1", `href="/context/snapshots/`+v1+`"`, "First version", "Current")
	rec = aud.get("/context/snapshots/" + v1)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Context version 1", "We build accounting software.")
	wantNoBody(t, rec, "/restore")
	wantStatus(t, aud.post("/context/snapshots/"+v1+"/restore", nil), http.StatusForbidden)
	rec = admin.get("/context/snapshots/" + v1)
	wantBody(t, rec, `action="/context/snapshots/`+v1+`/restore"`, "Restore version 1")
	rec = admin.get("/context/snapshots/" + *l.Items[0].ID)
	wantNoBody(t, rec, "/restore") // the current version has nothing to restore

	tooLong := strings.Repeat("x", 2001)
	rec = admin.post("/context/snapshots/"+v1+"/restore", url.Values{"changeNote": {tooLong}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="changeNote-error"`)
	wantRedirect(t, admin.post("/context/snapshots/"+v1+"/restore", url.Values{"changeNote": {"Back to the first text"}}), "/context?done=context-restored")
	c, err = e.app.GetContext(e.ctx(f.org))
	if err != nil || c.Version != 3 || c.Description != "We build accounting software." || c.ChangeNote != "Back to the first text" {
		t.Fatalf("after restore: %+v %v", c, err)
	}
	wantBody(t, admin.get("/context/snapshots?perPage=1&page=2"), "2–2 of 3", `aria-current="page">2<`, "Version 2")

	// Another organization's version: the 404 page, and nothing restored.
	if _, err := e.app.UpdateContext(e.ctx(other.org), app.ContextPatch{Description: app.Ptr("Globex secrets")}); err != nil {
		t.Fatal(err)
	}
	ol, _ := e.app.ListContextSnapshots(e.ctx(other.org), app.Page{Page: 1, PerPage: 10})
	oid := *ol.Items[0].ID
	rec = admin.get("/context/snapshots/" + oid)
	wantStatus(t, rec, http.StatusNotFound)
	wantNoBody(t, rec, "Globex secrets")
	wantStatus(t, admin.post("/context/snapshots/"+oid+"/restore", nil), http.StatusNotFound)
	wantNoBody(t, admin.get("/context"), "Globex secrets")
}
