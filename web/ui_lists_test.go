package web

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/xuri/excelize/v2"
)

// listFixture adds a second row of each kind to the UI fixture so every
// list has something to sort.
func listFixture(e *testEnv, f uiFixture) {
	e.t.Helper()
	ctx := e.ctx(f.org)
	if _, err := e.app.CreateFinding(ctx, app.FindingCreate{Title: app.Ptr("Backups untested"), Severity: app.Ptr("low")}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.app.CreateRisk(ctx, app.RiskInput{Title: app.Ptr("Admin account takeover"), Category: app.Ptr("operations"),
		InherentProbability: app.Ptr("unlikely"), InherentImpact: app.Ptr("minor")}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.app.CreateTask(ctx, app.TaskInput{Title: app.Ptr("Archive old records"), DueDate: app.Some("2026-02-01")}); err != nil {
		e.t.Fatal(err)
	}
	for _, n := range []string{"Access policy", "Backup policy"} {
		if _, err := e.app.CreatePolicy(ctx, app.PolicyInput{Name: app.Ptr(n), Content: app.Ptr("Text.")}); err != nil {
			e.t.Fatal(err)
		}
	}
	for _, n := range []string{"Lost laptop", "Phishing mail"} {
		if _, err := e.app.CreateIncident(ctx, app.IncidentInput{Title: app.Ptr(n), Type: app.Ptr(app.IncidentSecurity),
			AwareAt: app.Ptr("2026-01-15T08:00:00Z")}); err != nil {
			e.t.Fatal(err)
		}
	}
	for _, n := range []string{"legal_name", "head_office"} {
		if _, err := e.app.CreateVariable(ctx, app.VariableInput{Name: app.Ptr(n), Value: app.Ptr("Value of " + n)}); err != nil {
			e.t.Fatal(err)
		}
	}
	for _, n := range []string{"Build server", "Admin laptop"} {
		if _, err := e.app.LinkDevice(ctx, f.ownerID, app.DeviceLink{Name: n, Hostname: strings.ToLower(strings.ReplaceAll(n, " ", "-")), Platform: "linux"}); err != nil {
			e.t.Fatal(err)
		}
	}
	e.key(f.org, app.RoleAdmin)
	e.key(f.org, app.RoleAuditor)
	for _, n := range []string{"Do you encrypt backups?", "Is MFA enforced?"} {
		if _, err := e.app.CreateKBEntry(ctx, app.KBEntryInput{Question: app.Ptr(n), Answer: app.Ptr("Yes."), Tags: app.Some([]string{"ops"})}); err != nil {
			e.t.Fatal(err)
		}
	}
	for _, c := range []string{"E1-5", "E1-6"} {
		if _, err := e.app.CreateESGDataPoint(ctx, app.ESGDataPointInput{ESRSCode: app.Ptr(c), Value: app.Ptr(1.5), Period: app.Ptr("2025")}); err != nil {
			e.t.Fatal(err)
		}
	}
	for i, n := range []string{"Untested restore", "Stale access review"} {
		if _, err := e.app.CreateFindingTemplate(ctx, app.FindingTemplateInput{Title: app.Ptr(n), Category: app.Ptr("operations"), Order: app.Ptr(i)}); err != nil {
			e.t.Fatal(err)
		}
	}
	slug := "lists-" + strings.ToLower(f.org[len(f.org)-8:])
	wantStatus(e.t, e.do("PATCH", "/v1/trust-portal/settings", e.key(f.org, app.RoleOwner), map[string]any{"enabled": true, "slug": slug}), http.StatusOK)
	for _, n := range []string{"Alice Buyer", "Bob Buyer"} {
		if _, _, err := e.app.RequestTrustAccess(context.Background(), slug, app.TrustAccessRequestInput{Name: n, Email: "buyer@example.com", Company: "Buyer Ltd"}, app.Visitor{IP: "192.0.2.1"}); err != nil {
			e.t.Fatal(err)
		}
	}
	for _, n := range []string{"Reporting tool", "Ticket bridge"} {
		if _, err := e.app.CreateOAuthApp(ctx, app.OAuthClientInput{Name: app.Ptr(n), RedirectURIs: []string{"https://tool.example/cb"}}); err != nil {
			e.t.Fatal(err)
		}
	}
	fw, err := e.app.CreateCustomFramework(ctx, app.FrameworkInput{Name: app.Ptr("Lists Baseline"), Version: app.Ptr("1")})
	if err != nil {
		e.t.Fatal(err)
	}
	req, err := e.app.AddRequirement(ctx, fw.ID, app.RequirementInput{Ref: app.Ptr("LB-1"), Title: app.Ptr("Backups restored yearly")})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, n := range []string{"Restore a backup", "Review the restore log"} {
		if _, err := e.app.CreateTaskTemplate(ctx, app.TaskTemplateInput{FrameworkID: app.Ptr(fw.ID), RequirementID: app.Ptr(req.ID), Name: app.Ptr(n)}); err != nil {
			e.t.Fatal(err)
		}
	}
	for _, n := range []string{"Customer A", "Customer B"} {
		if _, err := e.app.CreateQuestionnaireFromFile(ctx, n, nil, nil, "q.csv", strings.NewReader("Question\nDo you encrypt backups?\n")); err != nil {
			e.t.Fatal(err)
		}
	}
}

// listCSV reads a CSV export: its header and rows.
func listCSV(t *testing.T, rec *http.Response, body []byte) ([]string, [][]string) {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("csv: %v (%q)", err, body)
	}
	return rows[0], rows[1:]
}

var countRe = regexp.MustCompile(`<p class="count" role="status">(\d+) `)

// TestUIListPages checks every list page built on the shared list
// component: the count, sorting by a column header (both ways), the
// filters kept in the sort, pager and export links, the CSV export
// holding exactly the filtered rows in the page's order, and the XLSX
// export with the same rows.
func TestUIListPages(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Lists")
	listFixture(e, f)
	lists := []struct {
		path, sort, filter string // filter matches at least two rows
		noun               string
	}{
		{"/findings", "title", "status=open", "findings"},
		{"/risks", "title", "status=open", "risks"},
		{"/tasks", "title", "status=todo", "tasks"},
		{"/controls", "code", "framework=" + f.frameworkID, "controls"},
		{"/policies", "name", "status=draft", "policies"},
		{"/incidents", "title", "type=security_incident", "incidents"},
		{"/people", "name", "inactive=", "people"},
		{"/audit-log", "resourceType", "action=created", "records"},
		{"/questionnaires", "name", "status=draft", "questionnaires"},
		{"/variables", "name", "q=_", "variables"},
		{"/api-keys", "name", "", "API keys"},
		{"/webhooks", "url", "", "webhooks"},
		{"/devices", "name", "platform=linux", "devices"},
		{"/knowledge-base", "question", "tag=ops", "entries"},
		{"/csrd", "esrsCode", "standard=E1", "data points"},
		{"/finding-templates", "title", "", "finding templates"},
		{"/trust-requests", "name", "status=under_review", "access requests"},
		{"/oauth-apps", "name", "", "OAuth apps"},
		{"/task-templates", "name", "", "task templates"},
		{"/frameworks", "name", "", "frameworks"},
		{"/training", "title", "", "modules"},
		{"/frameworks/" + f.frameworkID, "title", "", "requirements"},
	}
	lists = append(lists, runListPages(t, e, f)...)
	b := e.browser()
	b.signIn(f.owner)
	for _, l := range lists {
		t.Run(strings.TrimPrefix(l.path, "/"), func(t *testing.T) {
			base := l.path + "?" + l.filter
			rec := b.get(base)
			wantStatus(t, rec, http.StatusOK)
			body := rec.Body.String()
			m := countRe.FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("%s: no count in the page", base)
			}
			total, _ := strconv.Atoi(m[1])
			if !strings.Contains(body, " "+l.noun) {
				t.Errorf("%s: count does not name %q", base, l.noun)
			}
			if l.path == "/webhooks" {
				if total != 0 || !strings.Contains(body, `class="empty"`) || !strings.Contains(body, "Add a webhook") {
					t.Errorf("webhooks: want the empty state with its action, got count %d", total)
				}
				return
			}
			if total < 2 {
				t.Fatalf("%s: %d rows, want at least 2 to sort", base, total)
			}
			// The sort header link keeps the filter and carries aria-sort once sorted.
			if !strings.Contains(body, "sort="+l.sort) && !strings.Contains(body, "sort=-"+l.sort) {
				t.Errorf("%s: no header link sorting by %s", base, l.sort)
			}
			export := func(sort, format string) *http.Response {
				rec := b.get(base + "&sort=" + sort + "&format=" + format)
				wantStatus(t, rec, http.StatusOK)
				return rec.Result()
			}
			asc := export(l.sort, "csv")
			if ct := asc.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
				t.Errorf("%s csv: content type %q", base, ct)
			}
			ascBody := b.get(base + "&sort=" + l.sort + "&format=csv").Body.Bytes()
			hdr, ascRows := listCSV(t, asc, ascBody)
			if hdr[0] != "id" || len(ascRows) != total {
				t.Errorf("%s csv: header %v, %d rows, want id first and %d rows (the count)", base, hdr, len(ascRows), total)
			}
			descBody := b.get(base + "&sort=-" + l.sort + "&format=csv").Body.Bytes()
			_, descRows := listCSV(t, nil, descBody)
			col := -1
			for i, h := range hdr {
				if h == l.sort {
					col = i
				}
			}
			if col < 0 {
				t.Fatalf("%s: sort column %s not in the export %v", base, l.sort, hdr)
			}
			if ascRows[0][col] == descRows[0][col] || ascRows[0][col] != descRows[len(descRows)-1][col] {
				t.Errorf("%s: sort=%s and sort=-%s give first %q and %q, last of descending %q", base, l.sort, l.sort,
					ascRows[0][col], descRows[0][col], descRows[len(descRows)-1][col])
			}
			for i := 1; i < len(ascRows); i++ {
				if col != 0 && strings.ToLower(ascRows[i-1][col]) > strings.ToLower(ascRows[i][col]) && l.sort != "code" {
					t.Errorf("%s: ascending %s out of order at row %d: %q > %q", base, l.sort, i, ascRows[i-1][col], ascRows[i][col])
				}
			}
			// The page sorted descending shows the first descending row first.
			page := b.get(base + "&sort=-" + l.sort).Body.String()
			if !strings.Contains(page, `aria-sort="descending"`) {
				t.Errorf("%s: sorted descending without aria-sort", base)
			}
			if i := strings.Index(page, descRows[0][0]); l.path != "/audit-log" && (i < 0 || (strings.Contains(page, ascRows[0][0]) && strings.Index(page, ascRows[0][0]) < i && ascRows[0][0] != descRows[0][0])) {
				t.Errorf("%s: page sorted -%s does not start with %s", base, l.sort, descRows[0][0])
			}
			// One row a page: the pager says where we are and keeps the filter and sort.
			one := b.get(base + "&sort=" + l.sort + "&perPage=1").Body.String()
			if !strings.Contains(one, "1–1 of "+strconv.Itoa(total)) || !strings.Contains(one, `rel="next"`) || !strings.Contains(one, `aria-current="page"`) {
				t.Errorf("%s: pager without its range, next link or current page", base)
			}
			for _, a := range regexp.MustCompile(`<a href="([^"]*)" rel="next"`).FindAllStringSubmatch(one, -1) {
				if l.filter != "" && !strings.Contains(strings.ReplaceAll(a[1], "&amp;", "&"), l.filter) || !strings.Contains(a[1], "sort="+l.sort) {
					t.Errorf("%s: next link %s lost the filter or the sort", base, a[1])
				}
			}
			if !strings.Contains(one, "format=xlsx") || !strings.Contains(one, "format=csv") {
				t.Errorf("%s: no export links", base)
			}
			// XLSX: the same rows.
			xrec := b.get(base + "&sort=" + l.sort + "&format=xlsx")
			wantStatus(t, xrec, http.StatusOK)
			if ct := xrec.Header().Get("Content-Type"); !strings.Contains(ct, "spreadsheetml") {
				t.Errorf("%s xlsx: content type %q", base, ct)
			}
			x, err := excelize.OpenReader(bytes.NewReader(xrec.Body.Bytes()))
			if err != nil {
				t.Fatalf("%s xlsx: %v", base, err)
			}
			xrows, err := x.GetRows("Sheet1")
			if err != nil || len(xrows) != len(ascRows)+1 || xrows[1][0] != ascRows[0][0] || xrows[0][0] != "id" {
				t.Errorf("%s xlsx: %d rows (%v), want %d starting with %s", base, len(xrows), err, len(ascRows)+1, ascRows[0][0])
			}
		})
	}
	t.Run("bad sort", func(t *testing.T) {
		rec := b.get("/findings?sort=nonsense")
		wantStatus(t, rec, http.StatusUnprocessableEntity)
		wantBody(t, rec, "sort must be one of")
		wantStatus(t, b.get("/findings?sort=nonsense&format=csv"), http.StatusUnprocessableEntity)
	})
}

// TestUIListExportPermissions: exports go through the same services as
// the API: an auditor's file holds what the auditor reads, an employee's
// only what is theirs, and a list the API refuses is refused as a file.
func TestUIListExportPermissions(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Export Perms")
	listFixture(e, f)
	owner, aud, emp := e.browser(), e.browser(), e.browser()
	owner.signIn(f.owner)
	aud.signIn(f.auditor)
	emp.signIn(f.employee)
	rows := func(b *uiBrowser, path string) [][]string {
		t.Helper()
		rec := b.get(path)
		wantStatus(t, rec, http.StatusOK)
		_, r := listCSV(t, nil, rec.Body.Bytes())
		return r
	}
	for _, p := range []string{"/findings", "/risks", "/controls", "/policies", "/incidents", "/audit-log", "/questionnaires"} {
		if o, a := rows(owner, p+"?format=csv"), rows(aud, p+"?format=csv"); len(o) != len(a) || len(a) == 0 {
			t.Errorf("%s: auditor's export has %d rows, owner's %d", p, len(a), len(o))
		}
	}
	// The employee's task export holds their own task only, as GET /v1/tasks.
	tasks := rows(emp, "/tasks?format=csv")
	if len(tasks) != 1 || tasks[0][0] != f.task {
		t.Errorf("employee's tasks export: %v, want only %s", tasks, f.task)
	}
	if all := rows(owner, "/tasks?format=csv"); len(all) < 2 {
		t.Errorf("owner's tasks export: %d rows", len(all))
	}
	// Lists the API refuses them are refused as files too.
	for _, p := range []string{"/audit-log?format=csv", "/audit-log?format=xlsx", "/webhooks?format=csv", "/questionnaires?format=xlsx"} {
		if rec := emp.get(p); rec.Code != http.StatusForbidden || strings.Contains(rec.Header().Get("Content-Type"), "csv") {
			t.Errorf("employee %s: %d %s, want the 403 page", p, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	if rec := aud.get("/webhooks?format=csv"); rec.Code != http.StatusForbidden {
		t.Errorf("auditor webhooks export: %d, want 403", rec.Code)
	}
	// The API agrees with the employee's file.
	rec := e.do("GET", "/v1/audit-log", e.key(f.org, app.RoleEmployee), nil)
	if rec.Code != http.StatusForbidden {
		t.Errorf("GET /v1/audit-log as employee: %d", rec.Code)
	}
}
