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
