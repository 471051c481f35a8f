package ui

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/compliance-appliance/compliance/app"
)

// uiSyncRoutes registers the directory sync pages: a directory
// connection's sync page (sync now, dry run, the organization's provider
// choices, its runs) and a run's page with its per-person changes.
// Auditors read; owners and admins act.
func (s *Server) uiSyncRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/integrations/{id}/sync", uiSignedIn, s.uiSyncConnection)
	page("POST", "/integrations/{id}/sync", uiManage, s.uiSyncNow)
	page("POST", "/integrations/{id}/sync/settings", uiManage, s.uiSyncSettings)
	page("GET", "/integrations/sync/runs/{runId}", uiSignedIn, s.uiSyncRun)
}

func init() {
	flashes["sync-settings"] = "Sync settings saved."
}

func (s *Server) uiSyncConnection(w http.ResponseWriter, r *http.Request, v *view) error {
	ctx := r.Context()
	c, err := s.app.GetConnection(ctx, id(r))
	if err != nil {
		return err
	}
	form := v.Form
	status := r.URL.Query().Get("status")
	lv, runs, done, err := runList(w, r, v, syncRunList(func(p app.Page) ([]app.SyncRun, int, error) {
		l, err := s.app.ListSyncRuns(ctx, app.SyncRunFilter{ConnectionID: c.ID, Status: status, Page: p})
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = form
	lv.EmptyText = "No sync yet: Sync now (or a dry run) starts the first; scheduled syncs follow the employee sync provider's frequency."
	emp, err := s.app.GetSyncProvider(ctx, app.SyncSettingEmployee)
	if err != nil {
		return err
	}
	tf, err := s.app.GetSyncProvider(ctx, app.SyncSettingTwoFactor)
	if err != nil {
		return err
	}
	sources, err := s.app.AvailableTwoFactorSources(ctx)
	if err != nil {
		return err
	}
	if v.Data == nil {
		v.Data = map[string]any{}
	}
	d := v.Data.(map[string]any)
	d["C"], d["Runs"], d["Employee"], d["TwoFactor"], d["Sources"] = c, runs, emp.Provider, tf.Provider, sources.Providers
	d["List"], d["RunStatuses"], d["RunStatus"] = lv, app.SyncRunStatuses, status
	mapping, err := s.app.GetSyncRoleMapping(ctx, c.ID)
	if err != nil {
		return err
	}
	d["Mapping"], d["MappingLines"], d["DefaultRoles"] = mapping, syncRoleLines(mapping), []string{"employee", "contractor", "auditor"}
	if err := s.deviceSyncData(r, c, d); err != nil {
		return err
	}
	v.Title, v.Section = c.Name+": directory sync", "integrations"
	return s.page(w, r, "sync", v)
}

func (s *Server) uiSyncNow(w http.ResponseWriter, r *http.Request, v *view) error {
	c, err := s.app.GetConnection(r.Context(), id(r))
	if err != nil {
		return err
	}
	dry, _ := strconv.ParseBool(r.PostForm.Get("dryRun"))
	var run *app.SyncRun
	if r.PostForm.Get("syncType") == app.SyncTypeDevice {
		run, err = s.app.SyncDevices(r.Context(), c.ProviderSlug, c.ID, dry)
	} else {
		run, err = s.app.SyncEmployees(r.Context(), c.ProviderSlug, c.ID, dry)
	}
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.uiSyncConnection(w, r, v)
	}
	return redirect(w, r, "/integrations/sync/runs/"+url.PathEscape(run.ID))
}

func (s *Server) uiSyncSettings(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	for kind, field := range map[string]string{app.SyncSettingEmployee: "employeeSyncProvider", app.SyncSettingTwoFactor: "twoFactorSource",
		app.SyncSettingDevice: "deviceSyncProvider"} {
		if _, ok := f[field]; !ok {
			continue
		}
		in := app.SyncProviderChoiceInput{Provider: app.Opt[string]{Set: true, Null: f.Get(field) == "", Value: f.Get(field)}}
		if _, err := s.app.SetSyncProvider(r.Context(), kind, in); err != nil {
			if !formErrors(err, v, r) {
				return err
			}
			return s.uiSyncConnection(w, r, v)
		}
	}
	return redirect(w, r, "/integrations/"+url.PathEscape(id(r))+"/sync?done=sync-settings")
}

func (s *Server) uiSyncRun(w http.ResponseWriter, r *http.Request, v *view) error {
	page := 1
	if p, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && p > 0 {
		page = p
	}
	run, err := s.app.GetSyncRun(r.Context(), mux.Vars(r)["runId"], app.Page{Page: page, PerPage: 200})
	if err != nil {
		return err
	}
	v.Title, v.Section = "Sync run", "integrations"
	next := 0
	if page*200 < run.ResultsTotal {
		next = page + 1
	}
	v.Data = map[string]any{"Run": run, "Page": page, "Next": next}
	return s.page(w, r, "sync_run", v)
}
