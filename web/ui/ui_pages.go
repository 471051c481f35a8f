package ui

import (
	"fmt"
	"html/template"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/gorilla/mux"
)

// uiPageRoutes registers the pages of the web application.
func (s *Server) uiPageRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/", uiSignedIn, s.uiDashboard)
	page("POST", "/onboarding/dismiss", uiManage, s.uiDismissOnboarding)
	s.uiFrameworkEditorRoutes(page)

	page("GET", "/frameworks", uiSignedIn, s.uiFrameworks)
	page("GET", "/frameworks/{id}", uiSignedIn, s.uiFramework)
	page("POST", "/frameworks/{id}/enable", uiManage, s.uiEnableFramework)

	page("GET", "/controls", uiSignedIn, s.uiControls)
	page("GET", "/controls/{id}", uiSignedIn, s.uiControl)
	page("POST", "/controls/{id}", uiManage, s.uiUpdateControl)
	page("POST", "/controls/{id}/evidence", uiManage, s.uiUploadEvidence)
	page("GET", "/evidence/{id}/file", uiSignedIn, s.uiDownloadEvidence)

	page("GET", "/tasks", uiSignedIn, s.uiTasks)
	page("POST", "/tasks", uiManage, s.uiCreateTask)
	page("POST", "/tasks/{id}/complete", uiSelf, s.uiCompleteTask)
	page("POST", "/tasks/{id}/evidence", uiSelf, s.uiTaskEvidence)

	page("GET", "/vendors", uiSignedIn, s.uiVendors)
	page("GET", "/vendors/new", uiManage, s.uiNewVendor)
	page("POST", "/vendors", uiManage, s.uiCreateVendor)
	page("GET", "/vendors/{id}", uiSignedIn, s.uiVendor)
	page("POST", "/vendors/{id}", uiManage, s.uiUpdateVendor)
	page("POST", "/vendors/{id}/archive", uiManage, s.uiArchiveVendor(true))
	page("POST", "/vendors/{id}/restore", uiManage, s.uiArchiveVendor(false))
	page("POST", "/vendors/{id}/assess", uiManage, s.uiAssessVendor)
	page("POST", "/vendors/{id}/assessments/{assessmentId}/accept", uiManage, s.uiAcceptVendorAssessment)

	page("GET", "/findings", uiSignedIn, s.uiFindings)
	page("GET", "/findings/new", uiReview, s.uiNewFinding)
	page("POST", "/findings", uiReview, s.uiCreateFinding)
	page("GET", "/findings/{id}", uiSignedIn, s.uiFinding)
	page("POST", "/findings/{id}", uiReview, s.uiUpdateFinding)
	page("POST", "/findings/{id}/actions", uiManage, s.uiCreateAction)
	page("POST", "/findings/{id}/actions/{actionId}", uiManage, s.uiUpdateAction)

	s.uiPolicyRoutes(page)
	s.uiAdminRoutes(page)
	s.uiSOATrustRoutes(page)
	s.uiMoreRoutes(page)
	s.uiQuestionnaireRoutes(page)
	s.uiNotificationRoutes(page)
	s.uiOperatorRoutes(page)
	s.uiSSORoutes(page)
	s.uiSAMLRoutes(page)
	s.uiAnswerRoutes(page)
	s.uiPeopleRoutes(page)
	s.uiCommentRoutes(page)
	s.uiFindingTemplateRoutes(page)
	s.uiVariableRoutes(page)
	s.uiAttachmentRoutes(page)
	s.uiExportRoutes(page)
	s.uiSendRoutes(page)
	s.uiOAuthRoutes(page)
	s.uiDeviceRoutes(page)
	s.uiDevicePageRoutes(page)
	s.uiContextRoutes(page)
	s.uiBrandRoutes(page)
	s.uiJobRoutes(page)
	s.uiSearchRoutes(page)
	s.uiAssistantRoutes(page)
	s.uiEvidenceRoutes(page)

	s.uiIncidentRoutes(page)
	s.uiPentestOSVRoutes(page)
	s.uiPentestRoutes(page)
	s.uiBrowserRoutes(page)
	s.uiIntegrationRoutes(page)
	s.uiTaskAutomationRoutes(page)
	s.uiCloudSecurityRoutes(page)
	s.uiTrainingRoutes(page)
	s.uiSyncRoutes(page)
	s.uiEvidenceExportRoutes(page)
	s.uiSyncRoleRoutes(page)

	page("GET", "/risks", uiSignedIn, s.uiRisks)
	page("GET", "/risks/new", uiManage, s.uiNewRisk)
	page("POST", "/risks", uiManage, s.uiCreateRisk)
	page("GET", "/risks/{id}", uiSignedIn, s.uiRisk)
	page("POST", "/risks/{id}", uiManage, s.uiUpdateRisk)
}

// uiFuncs are the template helpers.
var uiFuncs = template.FuncMap{
	"label": func(s string) string {
		s = strings.ReplaceAll(s, "_", " ")
		if s == "" {
			return s
		}
		return strings.ToUpper(s[:1]) + s[1:]
	},
	"date": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return v.Format("2006-01-02")
		case *time.Time:
			if v != nil {
				return v.Format("2006-01-02")
			}
		case *string:
			if v != nil {
				return *v
			}
		case string:
			return v
		}
		return ""
	},
	"deref": func(p any) string {
		switch v := p.(type) {
		case *string:
			if v != nil {
				return *v
			}
		case *int:
			if v != nil {
				return strconv.Itoa(*v)
			}
		case *float64:
			if v != nil {
				return strconv.FormatFloat(*v, 'f', -1, 64)
			}
		}
		return ""
	},
	"add":  func(a, b int) int { return a + b },
	"mul":  func(a, b int) int { return a * b },
	"mulf": func(a *float64, b float64) float64 { return *a * b },
	"pct":  func(n, of int) int { return int(math.Round(float64(n) * 100 / math.Max(1, float64(of)))) },
	"size": HumanSize,
	"seq": func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		return s
	},
	"asset": func(assets map[string]string, name string) string {
		return "/static/" + name + "?v=" + assets[name]
	},
	"scoreOr0": func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	},
	"in": func(v string, list []string) bool {
		for _, x := range list {
			if x == v {
				return true
			}
		}
		return false
	},
	// cellColor shades a heatmap cell by score (probability x impact).
	"cellColor": func(score int) string {
		switch {
		case score >= 15:
			return "#b3261e"
		case score >= 10:
			return "#e8710a"
		case score >= 5:
			return "#f9cb3c"
		}
		return "#6fbf73"
	},
	// cellText keeps the count readable (WCAG AA) on its cell's colour.
	"cellText": func(score int) string {
		if score >= 15 {
			return "#ffffff"
		}
		return "#1f2328"
	},
	"fid":  fieldID,
	"barw": func(score, width int) int { return score * width / 100 },
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	},
	"uploader": uploaderName,
	"sp": func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	},
}

func HumanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// pager is the paging state of a list page; links keep every filter.
type pager struct {
	Page, PerPage, Total, Pages int
	query                       url.Values
	path                        string
}

func newPager(r *http.Request, p app.Page, total int) pager {
	pages := (total + p.PerPage - 1) / p.PerPage
	if pages < 1 {
		pages = 1
	}
	return pager{Page: p.Page, PerPage: p.PerPage, Total: total, Pages: pages, query: r.URL.Query(), path: r.URL.Path}
}

// Link is the URL of another page of the same list.
func (pg pager) Link(n int) string {
	q := url.Values{}
	for k, v := range pg.query {
		q[k] = v
	}
	q.Set("page", strconv.Itoa(n))
	return pg.path + "?" + q.Encode()
}

// Prev and Next are the neighbouring page numbers, 0 when there is none.
func (pg pager) Prev() int {
	if pg.Page > 1 {
		return pg.Page - 1
	}
	return 0
}

// Next is the following page number, 0 on the last page.
func (pg pager) Next() int {
	if pg.Page < pg.Pages {
		return pg.Page + 1
	}
	return 0
}

// uiPage reads page and perPage leniently: a bad value falls back to the
// default instead of failing a page someone opened from a stale link.
func uiPage(r *http.Request, def int) app.Page {
	p := app.Page{Page: 1, PerPage: def}
	q := r.URL.Query()
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n >= 1 && n <= httpx.MaxPage {
		p.Page = n
	}
	if n, err := strconv.Atoi(q.Get("perPage")); err == nil && n >= 1 && n <= app.MaxPerPage {
		p.PerPage = n
	}
	return p
}

func id(r *http.Request) string { return mux.Vars(r)["id"] }

func varsOf(r *http.Request) map[string]string { return mux.Vars(r) }

// people lists the organization's active people for owner pickers.
func (s *Server) people(r *http.Request) []app.Person {
	l, err := s.app.ListPeople(r.Context(), app.PersonFilter{Page: app.Page{Page: 1, PerPage: app.MaxPerPage}})
	if err != nil {
		return nil
	}
	return l.Items
}

// --- dashboard ---

func (s *Server) uiDashboard(w http.ResponseWriter, r *http.Request, v *view) error {
	d, err := s.app.Dashboard(r.Context())
	if err != nil {
		return err
	}
	maxSev := 0
	for _, n := range d.OpenFindings {
		maxSev = max(maxSev, n)
	}
	v.Title, v.Section = "Dashboard", "dashboard"
	v.Flash = flash(r)
	data := map[string]any{"D": d, "MaxSeverity": maxSev, "Severities": app.FindingSeverities, "Now": s.app.Now()}
	if v.Can("manage") {
		// Getting started: owners and admins, until done or dismissed.
		o, err := s.app.Onboarding(r.Context())
		if err != nil {
			return err
		}
		if o.DismissedAt == nil && !o.Complete() {
			data["Onboarding"] = o
		}
	}
	v.Data = data
	return s.page(w, r, "dashboard", v)
}

// uiDismissOnboarding hides the getting-started checklist for the
// organization (owner, admin).
func (s *Server) uiDismissOnboarding(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.DismissOnboarding(r.Context()); err != nil {
		return err
	}
	return redirect(w, r, "/?done=onboarding-dismissed")
}

// --- frameworks ---

func (s *Server) uiFrameworks(w http.ResponseWriter, r *http.Request, v *view) error {
	lv, items, done, err := runList(w, r, v, frameworkList(sliceFetch(func() ([]app.Framework, error) {
		l, err := s.app.ListFrameworks(r.Context(), nil, app.Page{Page: 1, PerPage: app.MaxPerPage})
		return l.Items, err
	})))
	if done || err != nil {
		return err
	}
	v.Title, v.Section = "Frameworks", "frameworks"
	lv.EmptyText = "No frameworks."
	v.Data = map[string]any{"Frameworks": items, "List": lv}
	return s.page(w, r, "frameworks", v)
}

func (s *Server) uiFramework(w http.ResponseWriter, r *http.Request, v *view) error {
	f, err := s.app.GetFramework(r.Context(), id(r))
	if err != nil {
		return err
	}
	lv, reqs, done, err := runList(w, r, v, requirementList(func(p app.Page) ([]app.Requirement, int, error) {
		l, err := s.app.ListRequirements(r.Context(), f.ID, p)
		return l.Items, l.Total, err
	}))
	if done || err != nil {
		return err
	}
	lv.EmptyText = "This framework has no requirements yet."
	var counts *app.FrameworkCounts
	var score int
	if f.Enabled {
		if score, counts, err = s.app.FrameworkScore(r.Context(), f.ID); err != nil {
			return err
		}
	}
	v.Title, v.Section = f.Name, "frameworks"
	v.Flash = flash(r)
	v.Data = map[string]any{"F": f, "Reqs": reqs, "List": lv, "Score": score, "Counts": counts,
		"Statuses": app.ControlStatuses}
	if err := s.addAttachments(r, v, app.EntityFramework, "frameworks", f.ID); err != nil {
		return err
	}
	return s.page(w, r, "framework", v)
}

func (s *Server) uiEnableFramework(w http.ResponseWriter, r *http.Request, v *view) error {
	res, err := s.app.EnableFramework(r.Context(), id(r))
	if err != nil {
		return err
	}
	return redirect(w, r, "/frameworks/"+url.PathEscape(res.Framework.ID)+"?done=enabled")
}

// --- controls ---

func (s *Server) uiControls(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	f := app.ControlFilter{FrameworkID: q.Get("framework"), Status: q.Get("status")}
	lv, items, done, err := runList(w, r, v, controlList(func(p app.Page) ([]app.Control, int, error) {
		f.Page = p
		l, err := s.app.ListControls(r.Context(), f)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	enabled := true
	fws, err := s.app.ListFrameworks(r.Context(), &enabled, app.Page{Page: 1, PerPage: app.MaxPerPage})
	if err != nil {
		return err
	}
	v.Form = q
	v.Title, v.Section = "Controls", "controls"
	lv.EmptyText = "No controls yet: enabling a framework brings its controls."
	if v.Can("manage") {
		lv.EmptyHref, lv.EmptyAction = "/frameworks", "Enable a framework"
	}
	v.Data = map[string]any{"Controls": items, "List": lv, "Frameworks": fws.Items,
		"Statuses": app.ControlStatuses, "Framework": f.FrameworkID, "Status": f.Status}
	return s.page(w, r, "controls", v)
}

func (s *Server) controlPage(w http.ResponseWriter, r *http.Request, v *view, c *app.Control) error {
	ev, err := s.app.ListEvidence(r.Context(), app.EvidenceFilter{ControlID: c.ID, Page: app.Page{Page: 1, PerPage: app.MaxPerPage}})
	if err != nil {
		return err
	}
	v.Title, v.Section = c.Code+" "+c.Name, "controls"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	tasks, err := s.app.ListTasks(r.Context(), app.TaskFilter{ControlID: c.ID, Page: app.Page{Page: 1, PerPage: app.MaxPerPage}})
	if err != nil {
		return err
	}
	v.Data = map[string]any{"C": c, "Evidence": ev.Items, "EvidenceTotal": ev.Total, "People": s.people(r), "Statuses": app.ControlStatuses,
		"Tasks": tasks.Items, "Recurrences": app.Recurrences}
	if err := s.addControlChecks(r, v, c.ID); err != nil {
		return err
	}
	if err := s.addComments(r, v, app.EntityControl, "controls", c.ID); err != nil {
		return err
	}
	if err := s.addAttachments(r, v, app.EntityControl, "controls", c.ID); err != nil {
		return err
	}
	return s.page(w, r, "control", v)
}

func (s *Server) uiControl(w http.ResponseWriter, r *http.Request, v *view) error {
	c, err := s.app.GetControl(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.controlPage(w, r, v, c)
}

func (s *Server) uiUpdateControl(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.ControlInput{Status: app.Ptr(f.Get("status"))}
	in.OwnerID = optional(f, "ownerId")
	in.Justification = optional(f, "justification")
	c, err := s.app.UpdateControl(r.Context(), id(r), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		if c, err = s.app.GetControl(r.Context(), id(r)); err != nil {
			return err
		}
		return s.controlPage(w, r, v, c)
	}
	return redirect(w, r, "/controls/"+url.PathEscape(c.ID)+"?done=saved")
}

// optional maps a form field to a PATCH value: blank clears it.
func optional(f url.Values, name string) app.Opt[string] {
	if _, ok := f[name]; !ok {
		return app.Opt[string]{}
	}
	v := strings.TrimSpace(f.Get(name))
	if v == "" {
		return app.Opt[string]{Set: true, Null: true}
	}
	return app.Some(v)
}

func (s *Server) uiUploadEvidence(w http.ResponseWriter, r *http.Request, v *view) error {
	file, hdr, err := r.FormFile("file")
	if err != nil {
		v.Errors = map[string]string{"file": "Choose a file to upload."}
	} else {
		defer file.Close()
		_, err = s.app.UploadEvidence(r.Context(), id(r), "", app.EvidenceUpload{File: file, Filename: hdr.Filename,
			ContentType: hdr.Header.Get("Content-Type"), Description: r.PostFormValue("description"), ExpiresAt: r.PostFormValue("expiresAt")})
		if err == nil {
			return redirect(w, r, "/controls/"+url.PathEscape(id(r))+"?done=uploaded")
		}
		if !formErrors(err, v, r) {
			return err
		}
	}
	v.Form, v.Status = r.PostForm, http.StatusUnprocessableEntity
	c, err := s.app.GetControl(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.controlPage(w, r, v, c)
}

func (s *Server) uiDownloadEvidence(w http.ResponseWriter, r *http.Request, v *view) error {
	ev, f, err := s.app.OpenEvidence(r.Context(), id(r))
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", ev.ContentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": ev.Filename}))
	http.ServeContent(w, r, "", ev.UploadedAt, f)
	return nil
}

// --- tasks ---

func (s *Server) uiTasks(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	v.Form = q
	f := app.TaskFilter{Status: q.Get("status")}
	if q.Get("mine") == "1" {
		f.AssigneeID = v.P.UserID
	}
	if q.Get("overdue") == "1" {
		f.DueTo = v.now.AddDate(0, 0, -1).Format("2006-01-02")
	}
	lv, items, done, err := runList(w, r, v, taskList(func(p app.Page) ([]app.Task, int, error) {
		f.Page = p
		l, err := s.app.ListTasks(r.Context(), f)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = q
	v.Title, v.Section = "Tasks", "tasks"
	v.Flash = flash(r)
	lv.EmptyText = "No tasks yet. Tasks come from the frameworks you enable (their evidence tasks) or are added by hand."
	if v.Can("manage") {
		lv.EmptyHref, lv.EmptyAction = "/frameworks", "Enable a framework"
	} else {
		lv.EmptyText = "Nothing is assigned to you right now."
	}
	v.Data = map[string]any{"Tasks": items, "List": lv, "Statuses": app.TaskStatuses,
		"People": s.people(r), "Today": v.now.Format("2006-01-02")}
	return s.page(w, r, "tasks", v)
}

// back is where a task action returns to: the page it was taken on.
func back(r *http.Request, done string) string {
	to := localPath(r.PostFormValue("back"))
	if to == "/" {
		to = "/tasks"
	}
	if i := strings.IndexAny(to, "?#"); i >= 0 {
		to = to[:i]
	}
	return to + "?done=" + done
}

func (s *Server) uiCreateTask(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.TaskInput{Title: app.Ptr(f.Get("title")), Description: app.Ptr(f.Get("description")), AssigneeID: optional(f, "assigneeId"),
		ControlID: optional(f, "controlId"), DueDate: optional(f, "dueDate"), Recurrence: optional(f, "recurrence")}
	t, err := s.app.CreateTask(r.Context(), in)
	if err != nil {
		if !formErrors(err, v, r) || t != nil {
			return err
		}
		c, gerr := s.app.GetControl(r.Context(), f.Get("controlId"))
		if gerr != nil {
			return err
		}
		return s.controlPage(w, r, v, c)
	}
	return redirect(w, r, back(r, "task-created"))
}

func (s *Server) uiCompleteTask(w http.ResponseWriter, r *http.Request, v *view) error {
	if _, err := s.app.CompleteTask(r.Context(), id(r)); err != nil {
		return err
	}
	return redirect(w, r, back(r, "task-done"))
}

func (s *Server) uiTaskEvidence(w http.ResponseWriter, r *http.Request, v *view) error {
	file, hdr, err := r.FormFile("file")
	if err != nil {
		return &httpx.HTTPError{Status: http.StatusBadRequest, Code: "validation_error", Msg: "Choose a file to upload, then try again."}
	}
	defer file.Close()
	_, err = s.app.UploadEvidence(r.Context(), "", id(r), app.EvidenceUpload{File: file, Filename: hdr.Filename,
		ContentType: hdr.Header.Get("Content-Type"), Description: r.PostFormValue("description"), ExpiresAt: r.PostFormValue("expiresAt")})
	if err != nil {
		return err
	}
	return redirect(w, r, back(r, "uploaded"))
}

// --- vendors ---

func (s *Server) uiVendors(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	pg := uiPage(r, 50)
	f := app.VendorFilter{Criticality: q.Get("criticality"), Category: q.Get("category"), Status: q.Get("status"),
		DPAStatus: q.Get("dpaStatus"), Search: q.Get("q"), Sort: q.Get("sort"), Archived: q.Get("archived") == "1", Page: pg}
	if b := q.Get("personalData"); b == "yes" || b == "no" {
		f.ProcessesPersonalData = app.Ptr(b == "yes")
	}
	if wantsCSV(r) {
		if err := s.vendorsCSV(w, r, v, f); err == nil || !formErrors(err, v, r) {
			return err
		}
	}
	l, err := s.app.ListVendors(r.Context(), f)
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = q
	v.Title, v.Section = "Vendors", "vendors"
	v.Data = map[string]any{"Vendors": l.Items, "Pager": newPager(r, pg, l.Total), "Categories": app.VendorCategories,
		"Criticalities": app.Criticalities, "Statuses": app.VendorStatuses, "DPAStatuses": app.DPAStatuses, "Sorts": app.VendorSorts,
		"Filtered": len(q) > 0 && !(len(q) == 1 && q.Has("page")), "CSV": csvLink(r), "XLSX": xlsxLink(r)}
	return s.page(w, r, "vendors", v)
}

func (s *Server) vendorForm(w http.ResponseWriter, r *http.Request, v *view, vd *app.Vendor) error {
	subs := []app.SubProcessor{}
	if v.Form != nil {
		subs = formSubProcessors(v.Form)
	} else if vd != nil {
		subs = append(subs, vd.SubProcessors...)
	}
	for range 3 {
		subs = append(subs, app.SubProcessor{})
	}
	if vd == nil {
		v.Title = "New vendor"
		vd = &app.Vendor{Category: "other", Status: "not_assessed", InherentProbability: "possible", InherentImpact: "moderate",
			Criticality: "standard", DPAStatus: "not_required"}
	} else {
		v.Title = vd.Name
		if v.Flash == "" {
			v.Flash = flash(r)
		}
	}
	v.Section = "vendors"
	v.Data = map[string]any{"V": vd, "Subs": subs, "People": s.people(r), "Categories": app.VendorCategories,
		"Statuses": app.VendorStatuses, "Probabilities": app.Probabilities, "Impacts": app.Impacts,
		"Criticalities": app.Criticalities, "DPAStatuses": app.DPAStatuses}
	if err := s.addComments(r, v, app.EntityVendor, "vendors", vd.ID); err != nil {
		return err
	}
	if err := s.addVendorQuestionnaires(r, v, vd.ID); err != nil {
		return err
	}
	if done, err := s.addVendorAssessments(w, r, v, vd.ID); done || err != nil {
		return err
	}
	if err := s.addAttachments(r, v, app.EntityVendor, "vendors", vd.ID); err != nil {
		return err
	}
	return s.page(w, r, "vendor", v)
}

func (s *Server) uiNewVendor(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.vendorForm(w, r, v, nil)
}

func (s *Server) uiVendor(w http.ResponseWriter, r *http.Request, v *view) error {
	vd, err := s.app.GetVendor(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.vendorForm(w, r, v, vd)
}

// formSubProcessors reads the sub-processor rows, skipping blank ones.
func formSubProcessors(f url.Values) []app.SubProcessor {
	names, countries, purposes := f["spName"], f["spCountry"], f["spPurpose"]
	out := []app.SubProcessor{}
	for i := range names {
		sp := app.SubProcessor{Name: names[i]}
		if i < len(countries) {
			sp.Country = countries[i]
		}
		if i < len(purposes) {
			sp.Purpose = purposes[i]
		}
		if strings.TrimSpace(sp.Name+sp.Country+sp.Purpose) == "" {
			continue
		}
		out = append(out, sp)
	}
	return out
}

// vendorInput maps the vendor form onto the API's input: every field.
func vendorInput(f url.Values) app.VendorInput {
	str := func(n string) *string { return app.Ptr(f.Get(n)) }
	return app.VendorInput{
		Name: str("name"), Description: str("description"), Category: str("category"), Status: str("status"),
		InherentProbability: str("inherentProbability"), InherentImpact: str("inherentImpact"),
		ResidualProbability: optional(f, "residualProbability"), ResidualImpact: optional(f, "residualImpact"),
		Website: optional(f, "website"), AssigneeID: optional(f, "assigneeId"), ContactEmail: optional(f, "contactEmail"),
		Country: optional(f, "country"), Criticality: str("criticality"),
		ICTService: app.Ptr(f.Get("ictService") == "on"), ProcessesPersonalData: app.Ptr(f.Get("processesPersonalData") == "on"),
		DPAStatus: str("dpaStatus"), DPASignedAt: optional(f, "dpaSignedAt"), DPAURL: optional(f, "dpaUrl"),
		LastReviewedAt: optional(f, "lastReviewedAt"), NextReviewDue: optional(f, "nextReviewDue"),
		TransferMechanism: optional(f, "transferMechanism"), SubProcessors: app.Some(formSubProcessors(f)),
	}
}

func (s *Server) uiCreateVendor(w http.ResponseWriter, r *http.Request, v *view) error {
	vd, err := s.app.CreateVendor(r.Context(), vendorInput(r.PostForm))
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.vendorForm(w, r, v, nil)
	}
	return redirect(w, r, "/vendors/"+url.PathEscape(vd.ID)+"?done=created")
}

func (s *Server) uiUpdateVendor(w http.ResponseWriter, r *http.Request, v *view) error {
	vd, err := s.app.UpdateVendor(r.Context(), id(r), vendorInput(r.PostForm))
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		if vd, err = s.app.GetVendor(r.Context(), id(r)); err != nil {
			return err
		}
		return s.vendorForm(w, r, v, vd)
	}
	return redirect(w, r, "/vendors/"+url.PathEscape(vd.ID)+"?done=saved")
}

func (s *Server) uiArchiveVendor(archive bool) uiHandler {
	return func(w http.ResponseWriter, r *http.Request, v *view) error {
		vd, err := s.app.SetVendorArchived(r.Context(), id(r), archive)
		if err != nil {
			return err
		}
		done := "restored"
		if archive {
			done = "archived"
		}
		return redirect(w, r, "/vendors/"+url.PathEscape(vd.ID)+"?done="+done)
	}
}

// --- findings and corrective actions ---

func (s *Server) uiFindings(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	v.Form = q
	v.Title, v.Section = "Findings", "findings"
	f := app.FindingFilter{Status: q.Get("status"), Severity: q.Get("severity")}
	lv, items, done, err := runList(w, r, v, findingList(func(p app.Page) ([]app.Finding, int, error) {
		f.Page = p
		l, err := s.app.ListFindings(r.Context(), f)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = q
	if v.Can("review") {
		lv.EmptyHref, lv.EmptyAction = "/findings/new", "Record a finding"
	}
	lv.EmptyText = "No findings recorded yet. Record what an audit, a scan or a review found, then track its corrective actions."
	v.Data = map[string]any{"Findings": items, "List": lv, "Statuses": app.FindingStatuses,
		"Severities": app.FindingSeverities}
	return s.page(w, r, "findings", v)
}

func (s *Server) findingForm(w http.ResponseWriter, r *http.Request, v *view) error {
	v.Title, v.Section = "New finding", "findings"
	ts, err := s.findingTemplates(r)
	if err != nil {
		return err
	}
	v.Data = map[string]any{"Severities": app.FindingSeverities, "Classes": app.FindingClasses, "Types": app.FindingTypes, "Templates": ts}
	return s.page(w, r, "finding_new", v)
}

func (s *Server) uiNewFinding(w http.ResponseWriter, r *http.Request, v *view) error {
	if tid := r.URL.Query().Get("templateId"); tid != "" {
		t, err := s.app.GetFindingTemplate(r.Context(), tid)
		if err != nil {
			return err
		}
		v.Form = templateForm(t)
	}
	return s.findingForm(w, r, v)
}

func (s *Server) uiCreateFinding(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.FindingCreate{Title: app.Ptr(f.Get("title")), Severity: nonEmpty(f.Get("severity")),
		Description: nonEmpty(f.Get("description")), Source: nonEmpty(f.Get("source")), FindingClass: nonEmpty(f.Get("findingClass")),
		Type: nonEmpty(f.Get("type")), DueDate: nonEmpty(f.Get("dueDate")), TemplateID: nonEmpty(f.Get("templateId"))}
	if in.TemplateID != nil && strings.TrimSpace(f.Get("title")) == "" {
		// A template chosen without filling in the form gives its title.
		if t, err := s.app.GetFindingTemplate(r.Context(), *in.TemplateID); err == nil {
			in.Title = app.Ptr(t.Title)
		}
	}
	for _, c := range strings.FieldsFunc(f.Get("linkedControlIds"), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
		in.LinkedControlIDs = append(in.LinkedControlIDs, c)
	}
	fd, err := s.app.CreateFinding(r.Context(), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.findingForm(w, r, v)
	}
	return redirect(w, r, "/findings/"+url.PathEscape(fd.ID)+"?done=created")
}

func nonEmpty(s string) *string {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return &s
}

func (s *Server) findingPage(w http.ResponseWriter, r *http.Request, v *view, fd *app.Finding) error {
	acts, err := s.app.ListCorrectiveActions(r.Context(), fd.ID, app.Page{Page: 1, PerPage: app.MaxPerPage})
	if err != nil {
		return err
	}
	title := fd.Content
	if fd.Title != nil {
		title = *fd.Title
	}
	if len(title) > 80 {
		title = title[:80] + "…"
	}
	v.Title, v.Section = title, "findings"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = map[string]any{"F": fd, "Actions": acts.Items, "Statuses": app.FindingStatuses, "Severities": app.FindingSeverities,
		"ActionStatuses": app.ActionStatuses, "Priorities": app.ActionPriorities, "People": s.people(r)}
	if err := s.addComments(r, v, app.EntityFinding, "findings", fd.ID); err != nil {
		return err
	}
	if err := s.addAttachments(r, v, app.EntityFinding, "findings", fd.ID); err != nil {
		return err
	}
	return s.page(w, r, "finding", v)
}

func (s *Server) uiFinding(w http.ResponseWriter, r *http.Request, v *view) error {
	fd, err := s.app.GetFinding(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.findingPage(w, r, v, fd)
}

func (s *Server) uiUpdateFinding(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.FindingPatch{Status: nonEmpty(f.Get("status")), Severity: nonEmpty(f.Get("severity")),
		RevisionNote: optional(f, "revisionNote"), DueDate: optional(f, "dueDate")}
	fd, err := s.app.UpdateFinding(r.Context(), id(r), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		if fd, err = s.app.GetFinding(r.Context(), id(r)); err != nil {
			return err
		}
		return s.findingPage(w, r, v, fd)
	}
	return redirect(w, r, "/findings/"+url.PathEscape(fd.ID)+"?done=saved")
}

func actionInput(f url.Values) app.CorrectiveActionInput {
	return app.CorrectiveActionInput{Title: nonEmpty(f.Get("title")), Description: app.Ptr(f.Get("description")),
		Status: nonEmpty(f.Get("status")), Priority: nonEmpty(f.Get("priority")), OwnerID: optional(f, "ownerId"),
		DueDate: optional(f, "dueDate"), ClosureNote: optional(f, "closureNote")}
}

func (s *Server) uiCreateAction(w http.ResponseWriter, r *http.Request, v *view) error {
	in := actionInput(r.PostForm)
	if in.Title == nil {
		in.Title = app.Ptr("")
	}
	_, err := s.app.CreateCorrectiveAction(r.Context(), id(r), in)
	return s.afterAction(w, r, v, err, "action-added")
}

func (s *Server) uiUpdateAction(w http.ResponseWriter, r *http.Request, v *view) error {
	_, err := s.app.UpdateCorrectiveAction(r.Context(), id(r), mux.Vars(r)["actionId"], actionInput(r.PostForm))
	return s.afterAction(w, r, v, err, "action-saved")
}

func (s *Server) afterAction(w http.ResponseWriter, r *http.Request, v *view, err error, done string) error {
	if err == nil {
		return redirect(w, r, "/findings/"+url.PathEscape(id(r))+"?done="+done+"#actions")
	}
	if !formErrors(err, v, r) {
		return err
	}
	fd, err := s.app.GetFinding(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.findingPage(w, r, v, fd)
}

// --- risks ---

// heatCell is one cell of a risk heatmap as drawn.
type heatCell struct {
	X, Y, Count, Score int
	Probability        string
	Impact             string
}

func heatCells(m [5][5]int) []heatCell {
	cells := make([]heatCell, 0, 25)
	for p := 0; p < 5; p++ {
		for i := 0; i < 5; i++ {
			cells = append(cells, heatCell{X: i, Y: 4 - p, Count: m[p][i], Score: (p + 1) * (i + 1),
				Probability: app.Probabilities[p], Impact: app.Impacts[i]})
		}
	}
	return cells
}

func (s *Server) uiRisks(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	v.Form = q
	f := app.RiskFilter{Status: q.Get("status"), Band: q.Get("band"), Category: q.Get("category")}
	lv, items, done, err := runList(w, r, v, riskList(func(p app.Page) ([]app.Risk, int, error) {
		f.Page = p
		l, err := s.app.ListRisks(r.Context(), f)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	h, err := s.app.RiskHeatmap(r.Context())
	if err != nil {
		return err
	}
	v.Form = q
	v.Title, v.Section = "Risks", "risks"
	lv.EmptyText = "The risk register is empty. Record what could go wrong, how likely and how bad it is, and how you treat it."
	if v.Can("manage") {
		lv.EmptyHref, lv.EmptyAction = "/risks/new", "Record the first risk"
	}
	v.Data = map[string]any{"Risks": items, "List": lv, "Statuses": app.RiskStatuses, "Bands": app.RiskBands,
		"Categories": app.RiskCategories, "Inherent": heatCells(h.Inherent), "Residual": heatCells(h.Residual), "Unassessed": h.Unassessed,
		"Probabilities": app.Probabilities, "Impacts": app.Impacts}
	return s.page(w, r, "risks", v)
}

func (s *Server) riskForm(w http.ResponseWriter, r *http.Request, v *view, rk *app.Risk) error {
	if rk == nil {
		v.Title = "New risk"
		rk = &app.Risk{Category: "operations", Status: "open", InherentProbability: "possible", InherentImpact: "moderate"}
	} else {
		v.Title = rk.Title
		if v.Flash == "" {
			v.Flash = flash(r)
		}
	}
	v.Section = "risks"
	v.Data = map[string]any{"R": rk, "Categories": app.RiskCategories, "Statuses": app.RiskStatuses, "Treatments": app.RiskTreatments,
		"Probabilities": app.Probabilities, "Impacts": app.Impacts, "People": s.people(r)}
	if err := s.addComments(r, v, app.EntityRisk, "risks", rk.ID); err != nil {
		return err
	}
	if err := s.addAttachments(r, v, app.EntityRisk, "risks", rk.ID); err != nil {
		return err
	}
	return s.page(w, r, "risk", v)
}

func riskInput(f url.Values) app.RiskInput {
	str := func(n string) *string { return app.Ptr(f.Get(n)) }
	return app.RiskInput{Title: str("title"), Description: str("description"), Category: str("category"), Status: str("status"),
		InherentProbability: str("inherentProbability"), InherentImpact: str("inherentImpact"),
		ResidualProbability: optional(f, "residualProbability"), ResidualImpact: optional(f, "residualImpact"),
		Treatment: optional(f, "treatment"), TreatmentDescription: optional(f, "treatmentDescription"), OwnerID: optional(f, "ownerId")}
}

func (s *Server) uiNewRisk(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.riskForm(w, r, v, nil)
}

func (s *Server) uiRisk(w http.ResponseWriter, r *http.Request, v *view) error {
	rk, err := s.app.GetRisk(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.riskForm(w, r, v, rk)
}

func (s *Server) uiCreateRisk(w http.ResponseWriter, r *http.Request, v *view) error {
	rk, err := s.app.CreateRisk(r.Context(), riskInput(r.PostForm))
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.riskForm(w, r, v, nil)
	}
	return redirect(w, r, "/risks/"+url.PathEscape(rk.ID)+"?done=created")
}

func (s *Server) uiUpdateRisk(w http.ResponseWriter, r *http.Request, v *view) error {
	rk, err := s.app.UpdateRisk(r.Context(), id(r), riskInput(r.PostForm))
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		if rk, err = s.app.GetRisk(r.Context(), id(r)); err != nil {
			return err
		}
		return s.riskForm(w, r, v, rk)
	}
	return redirect(w, r, "/risks/"+url.PathEscape(rk.ID)+"?done=saved")
}

// flashes are the confirmations a page shows after a form post redirected
// to it (?done=code); codes, not text, so a link cannot put words on a page.
var flashes = map[string]string{"saved": "Saved.", "created": "Created.", "uploaded": "Evidence uploaded.",
	"archived": "Archived.", "restored": "Restored.", "enabled": "Framework enabled: its controls are now in the control list.",
	"action-added": "Corrective action added.", "action-saved": "Corrective action saved.", "task-done": "Task completed.", "task-created": "Task created.",
	"published": "Published: people who must sign are asked to acknowledge it.", "acknowledged": "Thank you: your acknowledgement is recorded.",
	"revoked": "Key revoked: it stops working at once.", "redelivered": "Delivery queued again.", "decided": "Decision recorded; the requester is told by email where mail is set up.",
	"commented": "Comment added.", "deleted": "Deleted.",
	"assess-queued": "Assessment started: the site is checked in the background; reload to see the result.", "assess-no-website": "This vendor has no website to assess: set one first.", "assess-accepted": "Suggestion accepted: the vendor's inherent probability and impact are updated.",
	"onboarding-dismissed": "The getting-started checklist is dismissed for everyone in the organization.",
	"answers-saved":        "Answers saved.",
	"answers-same":         "No answer changed, so nothing was saved.",
	"context-saved":        "Context saved as a new version; the previous one is kept as a snapshot.",
	"context-same":         "Nothing changed, so no new version was saved.",
	"context-restored":     "Version restored: it is now the current context, saved as a new version.",
}

func flash(r *http.Request) string { return flashes[r.URL.Query().Get("done")] }
