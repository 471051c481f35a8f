package ui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// uiIntegrationRoutes registers the integration pages: the catalog with
// the organization's connections and a connect form per provider, and the
// connection page (checks with their last result, run history with each
// run's results, exceptions, and the actions). Auditors read; owners and
// admins act; the services refuse employees and contractors.
func (s *Server) uiIntegrationRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/integrations", uiSignedIn, s.uiIntegrations)
	page("POST", "/integrations", uiManage, s.uiConnect)
	page("GET", "/integrations/{id}", uiSignedIn, s.uiConnection)
	page("POST", "/integrations/oauth", uiManage, s.uiStartOAuth)
	page("POST", "/integrations/{id}/variables", uiManage, s.uiSaveVariables)
	page("POST", "/integrations/{id}/test", uiManage, s.uiTestConnection)
	page("POST", "/integrations/{id}/run", uiManage, s.uiRunConnection)
	page("POST", "/integrations/{id}/pause", uiManage, s.uiConnectionAction("paused"))
	page("POST", "/integrations/{id}/resume", uiManage, s.uiConnectionAction("resumed"))
	page("POST", "/integrations/{id}/disconnect", uiManage, s.uiConnectionAction("disconnected"))
	page("POST", "/integrations/{id}/exceptions", uiManage, s.uiCreateCheckException)
	page("POST", "/integrations/{id}/credentials", uiManage, s.uiUpdateConnectionCredentials)
}

func init() {
	flashes["run-queued"] = "Run queued: it starts within moments. Reload to see its results."
	flashes["paused"] = "Connection paused: it runs only when asked."
	flashes["resumed"] = "Connection resumed: the next scheduled run is due now."
	flashes["disconnected"] = "Disconnected: the credentials were erased. The history stays."
	flashes["excepted"] = "Exception recorded: the next run records this resource as excepted."
}

func (s *Server) uiIntegrations(w http.ResponseWriter, r *http.Request, v *view) error {
	conns, err := s.app.ListConnections(r.Context())
	if err != nil {
		return err
	}
	provs, err := s.app.ListIntegrationProviders(r.Context())
	if err != nil {
		return err
	}
	v.Title, v.Section = "Integrations", "integrations"
	if v.Data == nil {
		v.Data = map[string]any{}
	}
	d := v.Data.(map[string]any)
	d["Connections"], d["Providers"], d["Frequencies"] = conns, provs, []string{"hourly", "daily", "weekly", "manual"}
	if err := s.addOAuthAvailability(r, d, provs); err != nil {
		return err
	}
	return s.page(w, r, "integrations", v)
}

// uiConnect creates a connection from the connect form: fields named
// cred.<key> and var.<key>.
func (s *Server) uiConnect(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.ConnectionCreate{ProviderSlug: f.Get("providerSlug"), Name: nonEmpty(f.Get("name")), SyncFrequency: nonEmpty(f.Get("syncFrequency")),
		Credentials: map[string]json.RawMessage{}, Variables: map[string]json.RawMessage{}}
	for k, vals := range f {
		raw, _ := json.Marshal(strings.TrimSpace(strings.Join(vals, "\n")))
		switch {
		case strings.HasPrefix(k, "cred.") && strings.TrimSpace(vals[0]) != "":
			in.Credentials[strings.TrimPrefix(k, "cred.")] = raw
		case strings.HasPrefix(k, "var.") && strings.TrimSpace(vals[0]) != "":
			in.Variables[strings.TrimPrefix(k, "var.")] = raw
		}
	}
	c, err := s.app.CreateConnection(r.Context(), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		v.Form = f
		v.Data = map[string]any{"Provider": in.ProviderSlug}
		return s.uiIntegrations(w, r, v)
	}
	if c.PushToken != "" {
		// Shown this once: render the page instead of redirecting.
		v.Data = map[string]any{"PushToken": c.PushToken}
		return s.connectionPage(w, r, v, c.ID)
	}
	return redirect(w, r, "/integrations/"+url.PathEscape(c.ID))
}

func (s *Server) uiConnection(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.connectionPage(w, r, v, id(r))
}

func (s *Server) connectionPage(w http.ResponseWriter, r *http.Request, v *view, connID string) error {
	ctx := r.Context()
	c, err := s.app.GetConnection(ctx, connID)
	if err != nil {
		return err
	}
	checks, err := s.app.ListConnectionChecks(ctx, connID)
	if err != nil {
		return err
	}
	runs, err := s.app.ListCheckRuns(ctx, app.CheckRunFilter{ConnectionID: connID, Page: app.Page{Page: 1, PerPage: 20}})
	if err != nil {
		return err
	}
	exceptions, err := s.app.ListCheckExceptions(ctx, connID)
	if err != nil {
		return err
	}
	if v.Data == nil {
		v.Data = map[string]any{}
	}
	d := v.Data.(map[string]any)
	d["C"], d["Checks"], d["Runs"], d["Exceptions"] = c, checks.Checks, runs.Items, exceptions
	if vars, err := s.app.GetConnectionVariables(ctx, connID); err == nil {
		d["VarDefs"] = vars.Definitions
	}
	// The selected run (default: the latest) with its results.
	runID := r.URL.Query().Get("run")
	if runID == "" && len(runs.Items) > 0 {
		runID = runs.Items[0].ID
	}
	if runID != "" {
		run, err := s.app.GetCheckRun(ctx, runID)
		if err == nil && run.ConnectionID == connID {
			res, err := s.app.ListCheckResults(ctx, app.CheckResultFilter{RunID: runID, Page: app.Page{Page: 1, PerPage: 200}})
			if err != nil {
				return err
			}
			d["Run"], d["Results"], d["ResultTotal"] = run, res.Items, res.Total
		}
	}
	v.Title, v.Section = c.Name, "integrations"
	return s.page(w, r, "integration", v)
}

func (s *Server) uiTestConnection(w http.ResponseWriter, r *http.Request, v *view) error {
	res, err := s.app.TestConnection(r.Context(), id(r))
	if err != nil {
		return err
	}
	v.Data = map[string]any{"Test": res}
	return s.connectionPage(w, r, v, id(r))
}

func (s *Server) uiRunConnection(w http.ResponseWriter, r *http.Request, v *view) error {
	if _, err := s.app.RunConnectionChecks(r.Context(), id(r), strings.TrimSpace(r.PostForm.Get("checkId"))); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.connectionPage(w, r, v, id(r))
	}
	return redirect(w, r, "/integrations/"+url.PathEscape(id(r))+"?done=run-queued")
}

func (s *Server) uiConnectionAction(done string) uiHandler {
	return func(w http.ResponseWriter, r *http.Request, v *view) error {
		var err error
		switch done {
		case "paused":
			_, err = s.app.PauseConnection(r.Context(), id(r))
		case "resumed":
			_, err = s.app.ResumeConnection(r.Context(), id(r))
		case "disconnected":
			_, err = s.app.DisconnectConnection(r.Context(), id(r))
		}
		if err != nil {
			return err
		}
		return redirect(w, r, "/integrations/"+url.PathEscape(id(r))+"?done="+done)
	}
}

func (s *Server) uiCreateCheckException(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	_, err := s.app.CreateCheckException(r.Context(), id(r), app.CheckExceptionCreate{CheckID: f.Get("checkId"), ResourceID: f.Get("resourceId"),
		Reason: f.Get("reason"), ReviewerID: f.Get("reviewerId"), ExpiresAt: f.Get("expiresAt")})
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		v.Form = f
		return s.connectionPage(w, r, v, id(r))
	}
	return redirect(w, r, "/integrations/"+url.PathEscape(id(r))+"?done=excepted")
}
