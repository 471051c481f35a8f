package web

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// csvRows parses a CSV download and returns its header and rows.
func csvRows(t *testing.T, body string) ([]string, [][]string) {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("not CSV (%v): %.200s", err, body)
	}
	return recs[0], recs[1:]
}

// TestUIListCSV: the vendor and evidence lists download as CSV with their
// filters, every row (not one page), the same rows the API gives the same
// role, and cells a spreadsheet would run as formulas defused.
func TestUIListCSV(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Acme")
	ctx := e.ctx(f.org)
	for i := range 230 {
		if _, err := e.app.CreateVendor(ctx, app.VendorInput{Name: app.Ptr(fmt.Sprintf("Cloud %03d", i)), Category: app.Ptr("cloud")}); err != nil {
			t.Fatal(err)
		}
	}
	evil, err := e.app.CreateVendor(ctx, app.VendorInput{Name: app.Ptr(`=HYPERLINK("http://x.test","click")`), Category: app.Ptr("cloud"),
		AssigneeID: app.Some(f.employeeID)})
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signIn(f.owner)
	wantBody(t, b.get("/vendors?category=cloud&page=2"), `href="/vendors?category=cloud&amp;format=csv" download>Download CSV</a>`)
	rec := b.get("/vendors?category=cloud&format=csv")
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Fatalf("content type %q", ct)
	}
	if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="vendors-2026-01-15.csv"` {
		t.Fatalf("disposition %q", cd)
	}
	header, rows := csvRows(t, rec.Body.String())
	if header[0] != "id" || header[1] != "name" || len(rows) != 231 {
		t.Fatalf("header %v, %d rows, want 231", header, len(rows))
	}
	// The API gives the same vendors to the same role.
	var ids []string
	for _, r := range rows {
		ids = append(ids, r[0])
		if r[2] != "cloud" {
			t.Fatalf("a %s vendor in the cloud export", r[2])
		}
		if r[0] == evil.ID && r[1] != `'=HYPERLINK("http://x.test","click")` {
			t.Fatalf("formula cell %q", r[1])
		}
		if r[0] == evil.ID && r[11] != f.employee {
			t.Fatalf("assignee %q", r[11])
		}
	}
	var apiIDs []string
	owner := e.key(f.org, app.RoleOwner)
	for page := 1; page <= 2; page++ {
		for _, v := range list(t, e.do("GET", fmt.Sprintf("/v1/vendors?category=cloud&perPage=200&page=%d", page), owner, nil)) {
			apiIDs = append(apiIDs, v["id"].(string))
		}
	}
	sort.Strings(ids)
	sort.Strings(apiIDs)
	if strings.Join(ids, ",") != strings.Join(apiIDs, ",") {
		t.Fatalf("the export (%d) and the API (%d) differ", len(ids), len(apiIDs))
	}
	// An employee exports only what is assigned to them.
	emp := e.browser()
	emp.signIn(f.employee)
	_, rows = csvRows(t, emp.get("/vendors?format=csv").Body.String())
	if len(rows) != 1 || rows[0][0] != evil.ID {
		t.Fatalf("the employee's export: %v", rows)
	}
	// A bad filter is the page with the error, not a file.
	rec = b.get("/vendors?criticality=nope&format=csv")
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("content type %q", ct)
	}

	// Evidence, filtered.
	for _, exp := range []string{"2026-01-30", "2026-06-30", ""} {
		if _, err := e.app.UploadEvidence(ctx, f.control, "", app.EvidenceUpload{File: strings.NewReader("x"), Filename: "=SUM(A1)*2.pdf",
			ContentType: "application/pdf", ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
	}
	wantBody(t, b.get("/evidence?expires=30"), `href="/evidence?expires=30&amp;format=csv" download>Download CSV</a>`)
	rec = b.get("/evidence?expires=30&format=csv")
	wantStatus(t, rec, http.StatusOK)
	header, rows = csvRows(t, rec.Body.String())
	if len(rows) != 1 || header[1] != "filename" || rows[0][1] != "'=SUM(A1)*2.pdf" || rows[0][9] != "2026-01-30T00:00:00Z" ||
		rows[0][6] != "ISO 9001" {
		t.Fatalf("evidence export %v %v", header, rows)
	}
	aud := e.browser()
	aud.signIn(f.auditor)
	if _, rows = csvRows(t, aud.get("/evidence?format=csv").Body.String()); len(rows) != 3 {
		t.Fatalf("the auditor's export has %d rows", len(rows))
	}
	if _, rows = csvRows(t, emp.get("/evidence?format=csv").Body.String()); len(rows) != 0 {
		t.Fatalf("the employee, who owns no control, exports %d rows", len(rows))
	}
}
