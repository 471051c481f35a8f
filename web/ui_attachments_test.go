package web

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/ui"
)

// attach submits the attachment form of a page: one file with its content
// type, and the description; csrf overrides the page's token when set.
func (b *uiBrowser) attach(page, name, contentType string, content []byte, desc string, csrf ...string) *httptest.ResponseRecorder {
	b.e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	tok := b.csrf
	if len(csrf) > 0 {
		tok = csrf[0]
	}
	_ = mw.WriteField(ui.CSRFField, tok)
	_ = mw.WriteField("attachmentDescription", desc)
	if name != "" || content != nil {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="attachmentFile"; filename="`+name+`"`)
		h.Set("Content-Type", contentType)
		pw, _ := mw.CreatePart(h)
		_, _ = pw.Write(content)
	}
	_ = mw.Close()
	req := httptest.NewRequest("POST", page+"/attachments", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return b.send(req)
}

// attachments lists the files of a resource through the service.
func (e *testEnv) attachments(orgID, entityType, entityID string) []app.Attachment {
	e.t.Helper()
	l, err := e.app.ListAttachments(e.ctx(orgID), entityType, entityID, app.Page{Page: 1, PerPage: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

// TestUIAttachments: the detail pages of every entity type files attach
// to list their attachments and offer the upload form (limit stated) to
// owners, admins and auditors; an upload is stored and downloads with the
// same bytes as an attachment; a missing, empty or too large file and a
// too long description are marked at their field.
func TestUIAttachments(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	pol, err := e.app.CreatePolicy(e.ctx(f.org), app.PolicyInput{Name: app.Ptr("Information security policy"), Content: app.Ptr("# Scope")})
	if err != nil {
		t.Fatal(err)
	}
	admin, aud := e.browser(), e.browser()
	admin.signIn(f.admin)
	aud.signIn(f.auditor)
	pages := []struct{ typ, id, path string }{
		{app.EntityVendor, f.vendor, "/vendors/" + f.vendor}, {app.EntityRisk, f.risk, "/risks/" + f.risk},
		{app.EntityFinding, f.finding, "/findings/" + f.finding}, {app.EntityControl, f.control, "/controls/" + f.control},
		{app.EntityPerson, f.ownerID, "/people/" + f.ownerID}, {app.EntityPolicy, pol.ID, "/policies/" + pol.ID},
		{app.EntityFramework, f.frameworkID, "/frameworks/" + f.frameworkID},
	}
	for _, pg := range pages {
		rec := admin.get(pg.path)
		wantStatus(t, rec, http.StatusOK)
		wantBody(t, rec, `id="attachments-h">Attachments`, "No files attached yet.", "Attach one below", `action="`+pg.path+`/attachments"`,
			`enctype="multipart/form-data"`, `<label for="attachmentFile">File (up to 2.0 MB)</label>`, `data-max-bytes="2097152"`,
			`<label for="attachmentDescription">Description (optional)</label>`)

		content := []byte("%PDF-1.4 contract of " + pg.typ + "\x00\x01\x02")
		loc := wantRedirect(t, admin.attach(pg.path, "contract.pdf", "application/pdf", content, "Signed contract"), pg.path+"?done=attached#attachments")
		ats := e.attachments(f.org, pg.typ, pg.id)
		if len(ats) != 1 || ats[0].Name != "contract.pdf" || ats[0].Size != int64(len(content)) || ats[0].Description != "Signed contract" ||
			ats[0].Type != "application/pdf" {
			t.Fatalf("%s: attachments %+v", pg.path, ats)
		}
		at := ats[0]
		link := pg.path + "/attachments/" + at.ID
		rec = admin.get(strings.SplitN(loc, "#", 2)[0])
		wantBody(t, rec, "File attached.", `href="`+link+`"`, ">contract.pdf</a>", "Signed contract", ui.HumanSize(at.Size), f.admin, "2026-01-15")
		wantNoBody(t, rec, "No files attached yet.")

		rec = admin.get(link)
		wantStatus(t, rec, http.StatusOK)
		if !bytes.Equal(rec.Body.Bytes(), content) {
			t.Fatalf("%s: downloaded %q, uploaded %q", pg.path, rec.Body.Bytes(), content)
		}
		if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename=contract.pdf` {
			t.Errorf("%s: Content-Disposition %q", pg.path, cd)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/pdf" {
			t.Errorf("%s: Content-Type %q", pg.path, ct)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("X-Content-SHA256") != at.SHA256 {
			t.Errorf("%s: headers %v", pg.path, rec.Header())
		}
		// The auditor reads, downloads and attaches too.
		rec = aud.get(pg.path)
		wantBody(t, rec, `href="`+link+`"`, `action="`+pg.path+`/attachments"`)
		wantStatus(t, aud.get(link), http.StatusOK)
		wantRedirect(t, aud.attach(pg.path, "notes.txt", "text/plain", []byte("sample checked"), ""), pg.path+"?done=attached")
		if n := len(e.attachments(f.org, pg.typ, pg.id)); n != 2 {
			t.Fatalf("%s: %d attachments after the auditor's", pg.path, n)
		}
		wantBody(t, admin.get(pg.path), "notes.txt", f.auditor)
	}

	// Active content is served as plain bytes; ranges work.
	page := "/vendors/" + f.vendor
	admin.get(page)
	html := []byte("<script>alert(1)</script>")
	wantRedirect(t, admin.attach(page, "page.html", "text/html", html, ""), page)
	var htmlAt app.Attachment
	for _, at := range e.attachments(f.org, app.EntityVendor, f.vendor) {
		if at.Name == "page.html" {
			htmlAt = at
		}
	}
	rec := admin.get(page + "/attachments/" + htmlAt.ID)
	if ct := rec.Header().Get("Content-Type"); ct != "application/octet-stream" || !bytes.Equal(rec.Body.Bytes(), html) {
		t.Errorf("html attachment served as %q: %q", ct, rec.Body.String())
	}
	if !strings.HasPrefix(rec.Header().Get("Content-Disposition"), "attachment") || !strings.Contains(rec.Header().Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("html attachment headers: %v", rec.Header())
	}
	req := httptest.NewRequest("GET", page+"/attachments/"+htmlAt.ID, nil)
	req.Header.Set("Range", "bytes=0-7")
	rec = admin.send(req)
	wantStatus(t, rec, http.StatusPartialContent)
	if rec.Body.String() != "<script>" {
		t.Errorf("range: %q", rec.Body.String())
	}

	// Errors next to their fields; nothing stored.
	before := len(e.attachments(f.org, app.EntityVendor, f.vendor))
	admin.get(page)
	rec = admin.attach(page, "", "", nil, "No file")
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="attachmentFile-error"`, `aria-describedby="attachmentFile-error"`, "Choose a file to attach.", `value="No file"`)
	rec = admin.attach(page, "empty.txt", "text/plain", []byte{}, "")
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="attachmentFile-error"`, "The file empty.txt is empty.")
	rec = admin.attach(page, "a.txt", "text/plain", []byte("a"), strings.Repeat("d", 501))
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	wantBody(t, rec, `id="attachmentDescription-error"`, `aria-describedby="attachmentDescription-error"`)
	// Over the limit: back to the page, which says so at the field.
	for _, size := range []int{2<<20 + 10, 4 << 20} {
		rec = admin.attach(page, "big.bin", "application/octet-stream", bytes.Repeat([]byte("x"), size), "")
		loc := wantRedirect(t, rec, page+"?attachment=too-large#attachments")
		rec = admin.get(strings.SplitN(loc, "#", 2)[0]) // browsers keep the fragment
		wantStatus(t, rec, http.StatusOK)
		wantBody(t, rec, `id="attachmentFile-error"`, `aria-describedby="attachmentFile-error"`, "larger than the upload limit of 2.0 MB")
	}
	if n := len(e.attachments(f.org, app.EntityVendor, f.vendor)); n != before {
		t.Fatalf("refused uploads stored files: %d, want %d", n, before)
	}
	// Without the form's token nothing is stored.
	wantStatus(t, admin.attach(page, "x.txt", "text/plain", []byte("x"), "", "forged"), http.StatusForbidden)
	if n := len(e.attachments(f.org, app.EntityVendor, f.vendor)); n != before {
		t.Fatalf("a forged upload stored a file")
	}
}

// TestUIAttachmentsAccess: employees see the files of what is assigned to
// them, with no upload form, and are refused uploads with the 403 page;
// another resource's or organization's attachment is the 404 page.
func TestUIAttachmentsAccess(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	ctx := e.ctx(f.org)
	own, err := e.app.CreateRisk(ctx, app.RiskInput{Title: app.Ptr("Laptop theft"), OwnerID: app.Some(f.employeeID)})
	if err != nil {
		t.Fatal(err)
	}
	admin, emp := e.browser(), e.browser()
	admin.signIn(f.admin)
	emp.signIn(f.employee)
	mine, vendor := "/risks/"+own.ID, "/vendors/"+f.vendor
	admin.get(mine)
	wantRedirect(t, admin.attach(mine, "inventory.csv", "text/csv", []byte("serial,owner\n1,me\n"), ""), mine)
	wantRedirect(t, admin.attach(vendor, "dpa.pdf", "application/pdf", []byte("dpa"), ""), vendor)
	mineAt := e.attachments(f.org, app.EntityRisk, own.ID)[0]
	vendorAt := e.attachments(f.org, app.EntityVendor, f.vendor)[0]

	rec := emp.get(mine)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, `id="attachments-h">Attachments`, "inventory.csv", `href="`+mine+`/attachments/`+mineAt.ID+`"`)
	wantNoBody(t, rec, `action="`+mine+`/attachments"`, "Attach a file")
	rec = emp.get(mine + "/attachments/" + mineAt.ID)
	wantStatus(t, rec, http.StatusOK)
	if rec.Body.String() != "serial,owner\n1,me\n" {
		t.Errorf("employee download: %q", rec.Body.String())
	}
	rec = emp.attach(mine, "x.txt", "text/plain", []byte("x"), "")
	wantStatus(t, rec, http.StatusForbidden)
	wantBody(t, rec, "Not allowed")
	// Not assigned to them: not found.
	wantStatus(t, emp.get(vendor+"/attachments/"+vendorAt.ID), http.StatusNotFound)
	if n := len(e.attachments(f.org, app.EntityRisk, own.ID)); n != 1 {
		t.Fatalf("employee upload stored: %d", n)
	}

	// Another resource's attachment through this page: not found.
	wantStatus(t, admin.get(vendor+"/attachments/"+mineAt.ID), http.StatusNotFound)
	wantStatus(t, admin.get("/findings/"+f.vendor+"/attachments/"+vendorAt.ID), http.StatusNotFound)
	// Another organization's resource and attachment: not found.
	other := e.uiFixture("Other")
	ob := e.browser()
	ob.signIn(other.admin)
	ov := "/vendors/" + other.vendor
	ob.get(ov)
	wantRedirect(t, ob.attach(ov, "theirs.pdf", "application/pdf", []byte("theirs"), ""), ov)
	theirs := e.attachments(other.org, app.EntityVendor, other.vendor)[0]
	rec = admin.get(ov + "/attachments/" + theirs.ID)
	wantStatus(t, rec, http.StatusNotFound)
	wantBody(t, rec, "Page not found")
	wantNoBody(t, rec, "theirs")
	wantStatus(t, admin.get(vendor+"/attachments/"+theirs.ID), http.StatusNotFound)
	admin.get(vendor)
	wantStatus(t, admin.attach(ov, "x.txt", "text/plain", []byte("x"), ""), http.StatusNotFound)
	if n := len(e.attachments(other.org, app.EntityVendor, other.vendor)); n != 1 {
		t.Fatalf("cross-organization upload stored: %d", n)
	}
}
