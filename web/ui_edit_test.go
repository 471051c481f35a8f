package web

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// commentsOn lists the comments of a resource through the service.
func (e *testEnv) commentsOn(orgID, entityType, entityID string) []app.Comment {
	e.t.Helper()
	l, err := e.app.ListComments(e.ctx(orgID), entityType, entityID, app.Page{Page: 1, PerPage: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

// TestUICommentEditDelete: on every detail page with comments, Edit and
// Delete are offered only on comments the person may change (the author,
// or an owner or admin); the edit box opens in place without JavaScript,
// an empty text is marked at the box, deletion asks first; the server
// refuses others with the 403 page, and another resource's or
// organization's comment is the 404 page.
func TestUICommentEditDelete(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	owner, admin, aud, emp := e.browser(), e.browser(), e.browser(), e.browser()
	owner.signIn(f.owner)
	admin.signIn(f.admin)
	aud.signIn(f.auditor)
	emp.signIn(f.employee)
	pages := []struct{ typ, path string }{{app.EntityVendor, "/vendors/" + f.vendor}, {app.EntityRisk, "/risks/" + f.risk},
		{app.EntityFinding, "/findings/" + f.finding}, {app.EntityControl, "/controls/" + f.control}}
	for _, pg := range pages {
		admin.get(pg.path)
		wantRedirect(t, admin.post(pg.path+"/comments", url.Values{"comment": {"Written by the admin"}}), pg.path)
		aud.get(pg.path)
		wantRedirect(t, aud.post(pg.path+"/comments", url.Values{"comment": {"Written by the auditor"}}), pg.path)
		cs := e.commentsOn(f.org, pg.typ, f.entityID(pg.typ))
		if len(cs) != 2 {
			t.Fatalf("%s: %d comments", pg.path, len(cs))
		}
		mine, theirs := cs[1].ID, cs[0].ID // the auditor's, the admin's

		// Owner and admin may change both; the auditor only their own.
		for _, b := range []*uiBrowser{owner, admin} {
			rec := b.get(pg.path)
			wantBody(t, rec, pg.path+"?edit="+mine, pg.path+"?edit="+theirs, pg.path+"?delete="+mine, pg.path+"?delete="+theirs)
		}
		rec := aud.get(pg.path)
		wantBody(t, rec, pg.path+"?edit="+mine, pg.path+"?delete="+mine)
		wantNoBody(t, rec, pg.path+"?edit="+theirs, pg.path+"?delete="+theirs)
		// Asking to edit someone else's comment opens nothing.
		wantNoBody(t, aud.get(pg.path+"?edit="+theirs), `id="commentEdit"`)
		rec = aud.get(pg.path + "?edit=" + mine)
		wantBody(t, rec, `<label for="commentEdit">Edit the comment</label>`, `action="`+pg.path+`/comments/`+mine+`"`, "Written by the auditor</textarea>")

		// An empty text is marked at the box, which stays open.
		rec = aud.post(pg.path+"/comments/"+mine, url.Values{"commentEdit": {"  "}})
		wantStatus(t, rec, http.StatusUnprocessableEntity)
		wantBody(t, rec, `id="commentEdit-error"`, `aria-describedby="commentEdit-error"`, "content is required")
		e.clock.Advance(time.Minute)
		wantRedirect(t, aud.post(pg.path+"/comments/"+mine, url.Values{"commentEdit": {"Corrected by the auditor"}}), pg.path+"?done=comment-saved#comment-"+mine)
		if c, err := e.app.GetComment(e.ctx(f.org), mine); err != nil || c.Content != "Corrected by the auditor" {
			t.Fatalf("%s: edited comment %+v %v", pg.path, c, err)
		}
		wantBody(t, aud.get(pg.path+"?done=comment-saved"), "Comment saved.", "Corrected by the auditor", "edited")

		// The auditor may not change the admin's comment: 403 page.
		rec = aud.post(pg.path+"/comments/"+theirs, url.Values{"commentEdit": {"Overwritten"}})
		wantStatus(t, rec, http.StatusForbidden)
		wantBody(t, rec, "Not allowed")
		wantStatus(t, aud.post(pg.path+"/comments/"+theirs+"/delete", nil), http.StatusForbidden)
		if c, _ := e.app.GetComment(e.ctx(f.org), theirs); c == nil || c.Content != "Written by the admin" {
			t.Fatalf("%s: the admin's comment changed: %+v", pg.path, c)
		}
		// An admin may change the auditor's comment.
		wantRedirect(t, admin.post(pg.path+"/comments/"+mine, url.Values{"commentEdit": {"Tidied by the admin"}}), pg.path)
		if c, _ := e.app.GetComment(e.ctx(f.org), mine); c == nil || c.Content != "Tidied by the admin" {
			t.Fatalf("%s: admin edit: %+v", pg.path, c)
		}

		// Deleting asks first, then removes the comment.
		rec = aud.get(pg.path + "?delete=" + mine)
		wantBody(t, rec, `action="`+pg.path+`/comments/`+mine+`/delete"`, "This cannot be undone.", ">Delete comment</button>")
		wantNoBody(t, aud.get(pg.path+"?delete="+theirs), ">Delete comment</button>")
		wantRedirect(t, aud.post(pg.path+"/comments/"+mine+"/delete", nil), pg.path+"?done=comment-deleted")
		if _, err := e.app.GetComment(e.ctx(f.org), mine); !errors.Is(err, app.ErrNotFound) {
			t.Fatalf("%s: deleted comment still there: %v", pg.path, err)
		}
		wantBody(t, aud.get(pg.path+"?done=comment-deleted"), "Comment deleted.")
		wantStatus(t, aud.post(pg.path+"/comments/"+mine+"/delete", nil), http.StatusNotFound)
		wantRedirect(t, owner.post(pg.path+"/comments/"+theirs+"/delete", nil), pg.path)
		if len(e.commentsOn(f.org, pg.typ, f.entityID(pg.typ))) != 0 {
			t.Fatalf("%s: comments left", pg.path)
		}
	}

	// Employees are offered nothing and refused by hand.
	admin.get("/risks/" + f.risk)
	wantRedirect(t, admin.post("/risks/"+f.risk+"/comments", url.Values{"comment": {"Kept"}}), "/risks/")
	kept := e.commentsOn(f.org, app.EntityRisk, f.risk)[0].ID
	emp.get("/")
	wantStatus(t, emp.post("/risks/"+f.risk+"/comments/"+kept, url.Values{"commentEdit": {"x"}}), http.StatusForbidden)
	wantStatus(t, emp.post("/risks/"+f.risk+"/comments/"+kept+"/delete", nil), http.StatusForbidden)

	// A comment of another resource, or of another organization, is 404.
	wantStatus(t, admin.post("/vendors/"+f.vendor+"/comments/"+kept, url.Values{"commentEdit": {"x"}}), http.StatusNotFound)
	wantStatus(t, admin.post("/vendors/"+f.vendor+"/comments/"+kept+"/delete", nil), http.StatusNotFound)
	other := e.uiFixture("Other")
	ob := e.browser()
	ob.signIn(other.admin)
	ob.get("/risks/" + other.risk)
	wantRedirect(t, ob.post("/risks/"+other.risk+"/comments", url.Values{"comment": {"Theirs"}}), "/risks/")
	foreign := e.commentsOn(other.org, app.EntityRisk, other.risk)[0].ID
	rec := admin.post("/risks/"+f.risk+"/comments/"+foreign, url.Values{"commentEdit": {"x"}})
	wantStatus(t, rec, http.StatusNotFound)
	wantBody(t, rec, "Page not found")
	wantStatus(t, admin.post("/risks/"+other.risk+"/comments/"+foreign+"/delete", nil), http.StatusNotFound)
	if c, err := e.app.GetComment(e.ctx(other.org), foreign); err != nil || c.Content != "Theirs" {
		t.Fatalf("foreign comment: %+v %v", c, err)
	}
	wantNoBody(t, admin.get("/risks/"+f.risk+"?edit="+foreign), `id="commentEdit"`)
}

// entityID returns the fixture's resource id of an entity type.
func (f uiFixture) entityID(typ string) string {
	switch typ {
	case app.EntityRisk:
		return f.risk
	case app.EntityFinding:
		return f.finding
	case app.EntityControl:
		return f.control
	}
	return f.vendor
}

// TestUIFindingTemplateEditDelete: owners and admins edit a template on its
// own page (errors next to their field, a blank severity cleared) and
// delete it; auditors and employees are offered neither and refused with
// the 403 page; another organization's template is the 404 page.
func TestUIFindingTemplateEditDelete(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	tpl, err := e.app.CreateFindingTemplate(e.ctx(f.org), app.FindingTemplateInput{Title: app.Ptr("Missing MFA"), Content: app.Ptr("MFA is off."),
		Severity: app.Some("high"), FindingClass: app.Some("minor_nonconformity"), Order: app.Ptr(3)})
	if err != nil {
		t.Fatal(err)
	}
	edit := "/finding-templates/" + tpl.ID + "/edit"
	owner, admin, aud, emp := e.browser(), e.browser(), e.browser(), e.browser()
	owner.signIn(f.owner)
	admin.signIn(f.admin)
	aud.signIn(f.auditor)
	emp.signIn(f.employee)
	for _, b := range []*uiBrowser{owner, admin} {
		wantBody(t, b.get("/finding-templates"), `href="`+edit+`"`)
		rec := b.get(edit)
		wantStatus(t, rec, http.StatusOK)
		wantBody(t, rec, `action="/finding-templates/`+tpl.ID+`"`, `<label for="title">Title</label>`, `value="Missing MFA"`,
			`<option value="high" selected>`, `<option value="minor_nonconformity" selected>`, `value="3"`,
			`action="/finding-templates/`+tpl.ID+`/delete"`, ">Delete template</button>")
	}
	for _, b := range []*uiBrowser{aud, emp} {
		wantNoBody(t, b.get("/finding-templates"), edit, "/delete")
		wantStatus(t, b.get(edit), http.StatusForbidden)
		wantStatus(t, b.post("/finding-templates/"+tpl.ID, url.Values{"title": {"Sneaky"}}), http.StatusForbidden)
		wantStatus(t, b.post("/finding-templates/"+tpl.ID+"/delete", nil), http.StatusForbidden)
	}
	// Errors next to their fields; nothing changes.
	admin.get(edit)
	rec := admin.post("/finding-templates/"+tpl.ID, url.Values{"title": {" "}, "severity": {"apocalyptic"}, "order": {"3"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="title-error"`, `aria-describedby="title-error"`, `id="severity-error"`, "Edit finding template")
	rec = admin.post("/finding-templates/"+tpl.ID, url.Values{"title": {"Missing MFA"}, "order": {"first"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="order-error"`, `value="first"`)
	if got, _ := e.app.GetFindingTemplate(e.ctx(f.org), tpl.ID); got.Title != "Missing MFA" || got.Order != 3 {
		t.Fatalf("template changed by a refused form: %+v", got)
	}
	// A valid edit: every field saved, the blank severity cleared.
	wantRedirect(t, admin.post("/finding-templates/"+tpl.ID, url.Values{"title": {"MFA not enforced"}, "content": {"Admins sign in without MFA."},
		"category": {"access"}, "severity": {""}, "findingClass": {"major_nonconformity"}, "type": {"iso27001"}, "order": {"1"}}), "/finding-templates?done=saved")
	got, err := e.app.GetFindingTemplate(e.ctx(f.org), tpl.ID)
	if err != nil || got.Title != "MFA not enforced" || got.Content != "Admins sign in without MFA." || got.Category != "access" ||
		got.Severity != nil || got.FindingClass == nil || *got.FindingClass != "major_nonconformity" || got.Type == nil || *got.Type != "iso27001" || got.Order != 1 {
		t.Fatalf("edited template: %+v %v", got, err)
	}
	wantBody(t, admin.get("/finding-templates?done=saved"), "Saved.", "MFA not enforced")

	// Another organization's template is not found, for reading and writing.
	other := e.uiFixture("Other")
	otpl, err := e.app.CreateFindingTemplate(e.ctx(other.org), app.FindingTemplateInput{Title: app.Ptr("Theirs")})
	if err != nil {
		t.Fatal(err)
	}
	rec = admin.get("/finding-templates/" + otpl.ID + "/edit")
	wantStatus(t, rec, http.StatusNotFound)
	wantBody(t, rec, "Page not found")
	wantStatus(t, admin.post("/finding-templates/"+otpl.ID, url.Values{"title": {"Mine"}}), http.StatusNotFound)
	wantStatus(t, admin.post("/finding-templates/"+otpl.ID+"/delete", nil), http.StatusNotFound)
	if o, err := e.app.GetFindingTemplate(e.ctx(other.org), otpl.ID); err != nil || o.Title != "Theirs" {
		t.Fatalf("other organization's template: %+v %v", o, err)
	}

	// Delete.
	wantRedirect(t, owner.post("/finding-templates/"+tpl.ID+"/delete", nil), "/finding-templates?done=deleted")
	if _, err := e.app.GetFindingTemplate(e.ctx(f.org), tpl.ID); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("deleted template: %v", err)
	}
	wantBody(t, owner.get("/finding-templates?done=deleted"), "Deleted.", "No finding templates yet.")
	wantStatus(t, owner.get(edit), http.StatusNotFound)
}

// TestUIVariableEdit: owners and admins edit a variable on its own page
// (errors next to their field, a taken name included); auditors see no
// edit link and are refused with the 403 page, employees too; another
// organization's variable is the 404 page.
func TestUIVariableEdit(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	ctx := e.ctx(f.org)
	vr, err := e.app.CreateVariable(ctx, app.VariableInput{Name: app.Ptr("company_name"), Value: app.Ptr("Acme GmbH"), Description: app.Ptr("Legal name")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.CreateVariable(ctx, app.VariableInput{Name: app.Ptr("dpo_email"), Value: app.Ptr("dpo@acme.test")}); err != nil {
		t.Fatal(err)
	}
	edit := "/variables/" + vr.ID + "/edit"
	owner, admin, aud, emp := e.browser(), e.browser(), e.browser(), e.browser()
	owner.signIn(f.owner)
	admin.signIn(f.admin)
	aud.signIn(f.auditor)
	emp.signIn(f.employee)
	for _, b := range []*uiBrowser{owner, admin} {
		wantBody(t, b.get("/variables"), `href="`+edit+`"`)
		rec := b.get(edit)
		wantStatus(t, rec, http.StatusOK)
		wantBody(t, rec, `action="/variables/`+vr.ID+`"`, `<label for="name">Name</label>`, `<label for="value">Value</label>`,
			`<label for="description">Description</label>`, `value="company_name"`, "Acme GmbH</textarea>", `value="Legal name"`)
	}
	rec := aud.get("/variables")
	wantStatus(t, rec, http.StatusOK)
	wantNoBody(t, rec, edit)
	for _, b := range []*uiBrowser{aud, emp} {
		wantStatus(t, b.get(edit), http.StatusForbidden)
		wantStatus(t, b.post("/variables/"+vr.ID, url.Values{"name": {"x"}, "value": {"y"}}), http.StatusForbidden)
	}
	admin.get(edit)
	rec = admin.post("/variables/"+vr.ID, url.Values{"name": {"Not A Name"}, "value": {"Acme AG"}, "description": {"Legal name"}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="name-error"`, `aria-describedby="name-error"`, `value="Not A Name"`, "Acme AG</textarea>")
	rec = admin.post("/variables/"+vr.ID, url.Values{"name": {"dpo_email"}, "value": {"Acme AG"}})
	wantStatus(t, rec, http.StatusConflict)
	wantBody(t, rec, `id="name-error"`, "already exists")
	if got, _ := e.app.GetVariable(ctx, vr.ID); got.Name != "company_name" || got.Value != "Acme GmbH" {
		t.Fatalf("variable changed by a refused form: %+v", got)
	}
	wantRedirect(t, admin.post("/variables/"+vr.ID, url.Values{"name": {"legal_name"}, "value": {"Acme AG"}, "description": {"Registered name"}}),
		"/variables?done=saved")
	got, err := e.app.GetVariable(ctx, vr.ID)
	if err != nil || got.Name != "legal_name" || got.Placeholder != "{{legal_name}}" || got.Value != "Acme AG" || got.Description != "Registered name" {
		t.Fatalf("edited variable: %+v %v", got, err)
	}
	wantBody(t, admin.get("/variables?done=saved"), "Saved.", "Acme AG", "{{legal_name}}")

	other := e.uiFixture("Other")
	ovr, err := e.app.CreateVariable(e.ctx(other.org), app.VariableInput{Name: app.Ptr("company_name"), Value: app.Ptr("Other Ltd")})
	if err != nil {
		t.Fatal(err)
	}
	rec = admin.get("/variables/" + ovr.ID + "/edit")
	wantStatus(t, rec, http.StatusNotFound)
	wantBody(t, rec, "Page not found")
	wantStatus(t, admin.post("/variables/"+ovr.ID, url.Values{"name": {"company_name"}, "value": {"Mine"}}), http.StatusNotFound)
	if o, _ := e.app.GetVariable(e.ctx(other.org), ovr.ID); o == nil || o.Value != "Other Ltd" {
		t.Fatalf("other organization's variable: %+v", o)
	}
}
