package ui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/compliance-appliance/compliance/app"
)

// uiTaskAutomationRoutes registers a task's automations pages: the list
// with the create form (from a template or a script), and one automation
// with its script editor (a new version), version history, run now,
// enable/disable and runs with their logs. Everyone who sees the task
// reads; owners and admins act.
func (s *Server) uiTaskAutomationRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/tasks/{id}/automations", uiSignedIn, s.uiTaskAutomations)
	page("POST", "/tasks/{id}/automations", uiManage, s.uiCreateTaskAutomation)
	page("GET", "/tasks/{id}/automations/{automationId}", uiSignedIn, s.uiTaskAutomation)
	page("POST", "/tasks/{id}/automations/{automationId}", uiManage, s.uiUpdateTaskAutomation)
	page("POST", "/tasks/{id}/automations/{automationId}/versions", uiManage, s.uiCreateAutomationVersion)
	page("POST", "/tasks/{id}/automations/{automationId}/run", uiManage, s.uiRunTaskAutomation)
}

func init() {
	flashes["automation-created"] = "Automation created."
	flashes["automation-saved"] = "Automation saved."
	flashes["version-created"] = "Version saved: runs use it from now on (unless another is pinned)."
	flashes["automation-run"] = "Run queued: it starts within moments. Reload to see its result."
}

func automationID(r *http.Request) string { return mux.Vars(r)["automationId"] }

func (s *Server) uiTaskAutomations(w http.ResponseWriter, r *http.Request, v *view) error {
	t, err := s.app.GetTask(r.Context(), id(r))
	if err != nil {
		return err
	}
	autos, err := s.app.ListTaskAutomations(r.Context(), t.ID, app.Page{Page: 1, PerPage: 200})
	if err != nil {
		return err
	}
	lv, runs, done, err := s.automationRuns(w, r, v, t.ID, "")
	if done || err != nil {
		return err
	}
	tpls, err := s.app.ListAutomationTemplates(r.Context())
	if err != nil {
		return err
	}
	lv.EmptyText = "No run yet: an automation runs on its schedule, or open one and press Run now."
	var browser []app.BrowserAutomation
	if !v.P.SeesOnlyAssigned() {
		if browser, err = s.app.ListBrowserAutomations(r.Context(), t.ID); err != nil {
			return err
		}
	}
	v.Title, v.Section = "Automations of "+t.Title, "tasks"
	v.Data = map[string]any{"Task": t, "Automations": autos.Items, "Runs": runs, "List": lv, "Templates": tpls,
		"Frequencies": []string{"daily", "weekly", "monthly", "quarterly", "yearly"}, "Template": r.URL.Query().Get("template"),
		"RunStatuses": automationRunStatuses, "Verdicts": verdicts, "RunFilter": r.URL.Query(), "BrowserAutomations": browser}
	if err := s.addTaskCheckFindings(r, v, t.ID); err != nil {
		return err
	}
	return s.page(w, r, "task_automations", v)
}

// uiCreateTaskAutomation creates an automation from the form: a template
// with fields named param.<name>, or a script.
func (s *Server) uiCreateTaskAutomation(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.TaskAutomationInput{Name: nonEmpty(f.Get("name")), Description: nonEmpty(f.Get("description")),
		EvaluationCriteria: nonEmpty(f.Get("evaluationCriteria")), Changelog: nonEmpty(f.Get("changelog"))}
	if freq := strings.TrimSpace(f.Get("scheduleFrequency")); freq != "" {
		in.ScheduleFrequency = app.Some(freq)
	}
	if hosts := splitHosts(f.Get("hosts")); hosts != nil {
		in.Hosts = &hosts
	}
	if tpl := strings.TrimSpace(f.Get("templateId")); tpl != "" {
		in.TemplateID = &tpl
		in.Parameters = map[string]string{}
		for k, vals := range f {
			if name, ok := strings.CutPrefix(k, "param."); ok && len(vals) > 0 {
				in.Parameters[name] = vals[0]
			}
		}
	} else if script := f.Get("script"); strings.TrimSpace(script) != "" {
		in.Script = &script
	}
	a, err := s.app.CreateTaskAutomation(r.Context(), id(r), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		v.Form = f
		return s.uiTaskAutomations(w, r, v)
	}
	return redirect(w, r, "/tasks/"+url.PathEscape(id(r))+"/automations/"+url.PathEscape(a.ID)+"?done=automation-created")
}

func splitHosts(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	out := []string{}
	for _, h := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == ' ' || r == '\r' }) {
		out = append(out, h)
	}
	return out
}

func (s *Server) uiTaskAutomation(w http.ResponseWriter, r *http.Request, v *view) error {
	ctx := r.Context()
	t, err := s.app.GetTask(ctx, id(r))
	if err != nil {
		return err
	}
	a, err := s.app.GetTaskAutomation(ctx, t.ID, automationID(r))
	if err != nil {
		return err
	}
	versions, err := s.app.ListAutomationVersions(ctx, t.ID, a.ID, app.Page{Page: 1, PerPage: 50})
	if err != nil {
		return err
	}
	lv, runs, done, err := s.automationRuns(w, r, v, t.ID, a.ID)
	if done || err != nil {
		return err
	}
	lv.EmptyText = "No run yet: Run now starts one (the automation needs a script version)."
	d := map[string]any{"Task": t, "A": a, "Versions": versions.Items, "Runs": runs, "List": lv,
		"Frequencies": []string{"daily", "weekly", "monthly", "quarterly", "yearly"},
		"RunStatuses": automationRunStatuses, "Verdicts": verdicts, "RunFilter": r.URL.Query()}
	script := ""
	if len(versions.Items) > 0 {
		script = versions.Items[0].Script
	}
	d["Script"], d["NextVersion"] = script, a.LatestVersion+1
	d["HostsText"], d["Pinned"], d["ResultJSON"] = strings.Join(a.Hosts, ", "), 0, ""
	if a.PinnedVersion != nil {
		d["Pinned"] = *a.PinnedVersion
	}
	if runID := r.URL.Query().Get("run"); runID != "" {
		run, err := s.app.GetAutomationRun(ctx, t.ID, a.ID, runID)
		if err != nil {
			return err
		}
		d["Run"] = run
	} else if len(runs) > 0 {
		if run, err := s.app.GetAutomationRun(ctx, t.ID, a.ID, runs[0].ID); err == nil {
			d["Run"] = run
		}
	}
	if run, ok := d["Run"].(*app.TaskAutomationRun); ok {
		raw, _ := json.MarshalIndent(run.Result, "", "  ")
		d["ResultJSON"] = string(raw)
	}
	v.Title, v.Section, v.Data = a.Name, "tasks", d
	return s.page(w, r, "task_automation", v)
}

func (s *Server) uiUpdateTaskAutomation(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.TaskAutomationInput{}
	switch f.Get("action") {
	case "enable":
		in.IsEnabled = app.Ptr(true)
	case "disable":
		in.IsEnabled = app.Ptr(false)
	default:
		in.Name, in.Description = app.Ptr(f.Get("name")), app.Ptr(f.Get("description"))
		in.EvaluationCriteria = app.Ptr(f.Get("evaluationCriteria"))
		hosts := splitHosts(f.Get("hosts"))
		if hosts == nil {
			hosts = []string{}
		}
		in.Hosts = &hosts
		if freq := strings.TrimSpace(f.Get("scheduleFrequency")); freq != "" {
			in.ScheduleFrequency = app.Some(freq)
		} else {
			in.ScheduleFrequency = app.Opt[string]{Set: true, Null: true}
		}
		if pin := strings.TrimSpace(f.Get("pinnedVersion")); pin != "" {
			n, err := strconv.Atoi(pin)
			if err != nil {
				n = -1
			}
			in.PinnedVersion = app.Opt[int]{Set: true, Value: n}
		} else {
			in.PinnedVersion = app.Opt[int]{Set: true, Null: true}
		}
	}
	if _, err := s.app.UpdateTaskAutomation(r.Context(), id(r), automationID(r), in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		v.Form = f
		return s.uiTaskAutomation(w, r, v)
	}
	return redirect(w, r, "/tasks/"+url.PathEscape(id(r))+"/automations/"+url.PathEscape(automationID(r))+"?done=automation-saved")
}

func (s *Server) uiCreateAutomationVersion(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.TaskAutomationVersionInput{Script: app.Ptr(f.Get("script")), Changelog: app.Ptr(f.Get("changelog"))}
	if n, err := strconv.Atoi(strings.TrimSpace(f.Get("version"))); err == nil {
		in.Version = &n
	}
	if _, err := s.app.CreateAutomationVersion(r.Context(), id(r), automationID(r), in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		v.Form = f
		return s.uiTaskAutomation(w, r, v)
	}
	return redirect(w, r, "/tasks/"+url.PathEscape(id(r))+"/automations/"+url.PathEscape(automationID(r))+"?done=version-created")
}

func (s *Server) uiRunTaskAutomation(w http.ResponseWriter, r *http.Request, v *view) error {
	if _, err := s.app.RunTaskAutomation(r.Context(), id(r), automationID(r)); err != nil {
		return err
	}
	return redirect(w, r, "/tasks/"+url.PathEscape(id(r))+"/automations/"+url.PathEscape(automationID(r))+"?done=automation-run")
}

// automationRuns is the list of a task's automation runs (of one
// automation when automationID is set) on the list component, filtered by
// automation, status and verdict (pass, fail) from the URL. done is true
// when an export was written.
func (s *Server) automationRuns(w http.ResponseWriter, r *http.Request, v *view, taskID, automationID string) (*listView, []app.TaskAutomationRun, bool, error) {
	q := r.URL.Query()
	auto, status, verdict := q.Get("automation"), q.Get("status"), q.Get("verdict")
	if automationID != "" {
		auto = automationID
	}
	form := v.Form
	var ferr error
	for _, e := range []error{filterEnum(q, "status", automationRunStatuses), filterEnum(q, "verdict", verdicts)} {
		if e != nil && ferr == nil {
			ferr = e
		}
	}
	name := "automation-runs"
	if automationID != "" {
		name = "automation-" + automationID + "-runs"
	}
	fetch := keepFetch(func() ([]app.TaskAutomationRun, error) {
		if ferr != nil {
			return nil, ferr
		}
		return pagedAll(func(p app.Page) (app.List[app.TaskAutomationRun], error) {
			return s.app.ListAutomationRuns(r.Context(), app.AutomationRunFilter{TaskID: taskID, AutomationID: auto, Page: p})
		})
	}, func(run app.TaskAutomationRun) bool {
		return (status == "" || run.Status == status) && (verdict == "" || deref(run.EvaluationStatus) == verdict)
	})
	lv, runs, done, err := runList(w, r, v, automationRunList(name, fetch))
	if done {
		return lv, nil, true, err
	}
	if err != nil && !formErrors(err, v, r) {
		return lv, nil, false, err
	}
	v.Form = form
	return lv, runs, false, nil
}
