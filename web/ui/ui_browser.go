package ui

import (
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/compliance-appliance/compliance/app"
)

// uiBrowserRoutes registers the browser automation pages: the
// organization's automations and auth profiles, an automation with its
// steps and runs (screenshots inline), and the live view of a session
// (its screen as Chromium paints it, streamed as MJPEG into an image: no
// script). The services decide who may do what, as in the API.
func (s *Server) uiBrowserRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/browser-automations", uiSignedIn, s.uiBrowserAutomations)
	page("POST", "/browser-automations", uiManage, s.uiCreateBrowserAutomation)
	page("POST", "/browser-automations/profiles", uiManage, s.uiCreateBrowserProfile)
	page("POST", "/browser-automations/draft-steps", uiManage, s.uiDraftBrowserSteps)
	page("POST", "/browser-automations/profiles/{id}/credentials", uiManage, s.uiBrowserProfileCredentials)
	page("POST", "/browser-automations/profiles/{id}/sign-in", uiManage, s.uiBrowserProfileSignIn)
	page("POST", "/browser-automations/profiles/{id}/delete", uiManage, s.uiDeleteBrowserProfile)
	page("GET", "/browser-automations/runs/{id}/screenshots/{seq}", uiSignedIn, s.uiBrowserScreenshot)
	page("GET", "/browser-automations/{id}", uiSignedIn, s.uiBrowserAutomation)
	page("POST", "/browser-automations/{id}/run", uiManage, s.uiRunBrowserAutomation)
	page("POST", "/browser-automations/{id}/delete", uiManage, s.uiDeleteBrowserAutomation)
	page("GET", "/browser-sessions/{id}", uiSignedIn, s.uiBrowserSession)
	page("GET", "/browser-sessions/{id}/frame.jpg", uiSignedIn, s.uiBrowserFrame)
	page("GET", "/browser-sessions/{id}/stream", uiSignedIn, s.uiBrowserStream)
}

func init() {
	flashes["browser-automation-created"] = "Automation created."
	flashes["browser-run-started"] = "Run started. This page follows it."
	flashes["browser-profile-created"] = "Auth profile created."
	flashes["browser-credentials-stored"] = "Credentials stored (sealed; they are never shown again)."
	flashes["browser-signed-in"] = "Signed in: the profile is verified."
	flashes["browser-sign-in-failed"] = "Sign-in failed: see the profile's status."
	flashes["browser-deleted"] = "Deleted."
}

// browserErrors shows why the browser could not be used (Chromium missing,
// the session caps reached, a run under way) on the page itself.
func browserErrors(err error, v *view) bool {
	status := 0
	switch {
	case errors.Is(err, app.ErrBrowserUnavailable):
		status = http.StatusServiceUnavailable
	case errors.Is(err, app.ErrBrowserBusy):
		status = http.StatusTooManyRequests
	case errors.Is(err, app.ErrConflict):
		status = http.StatusConflict
	default:
		return false
	}
	v.Errors, v.Status = map[string]string{"browser": err.Error()}, status
	return true
}

const exampleSteps = `[
  {"kind": "navigate", "url": "https://admin.example.com/settings/security"},
  {"kind": "expectText", "selector": "#mfa", "text": "MFA enforced: yes"},
  {"kind": "screenshot", "name": "mfa-setting"}
]`

func (s *Server) uiBrowserAutomations(w http.ResponseWriter, r *http.Request, v *view) error {
	taskID, last := r.URL.Query().Get("taskId"), r.URL.Query().Get("lastRunStatus")
	profiles, err := s.app.ListBrowserProfiles(r.Context())
	if err != nil {
		return err
	}
	tasks, err := s.app.ListTasks(r.Context(), app.TaskFilter{Page: app.Page{Page: 1, PerPage: app.MaxPerPage}})
	if err != nil {
		return err
	}
	titles := map[string]string{}
	for _, t := range tasks.Items {
		titles[t.ID] = t.Title
	}
	form := v.Form
	ferr := filterEnum(r.URL.Query(), "lastRunStatus", browserRunStatuses)
	lv, autos, done, err := runList(w, r, v, browserAutomationList(func(id string) string { return titles[id] },
		keepFetch(func() ([]app.BrowserAutomation, error) {
			if ferr != nil {
				return nil, ferr
			}
			return s.app.ListBrowserAutomations(r.Context(), taskID)
		}, func(a app.BrowserAutomation) bool { return last == "" || deref(a.LastRunStatus) == last })))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = form
	if v.Form == nil {
		v.Form = url.Values{"taskId": {taskID}, "steps": {exampleSteps}}
	}
	lv.EmptyText = "No browser automation yet: an owner or admin creates one below, for a task whose evidence is a page of an admin console."
	v.Title, v.Section = "Browser automations", "browser-automations"
	v.Data = map[string]any{"Automations": autos, "List": lv, "RunStatuses": browserRunStatuses, "LastRunStatus": last, "Profiles": profiles, "Tasks": tasks.Items, "Titles": titles, "TaskID": taskID,
		"Kinds": app.BrowserStepKinds, "Frequencies": []string{"daily", "weekly", "monthly", "quarterly", "yearly"},
		"Model": s.app.AssistantModelConfigured()}
	return s.page(w, r, "browser_automations", v)
}

func (s *Server) uiCreateBrowserAutomation(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.BrowserAutomationInput{TaskID: app.Ptr(f.Get("taskId")), Name: app.Ptr(f.Get("name")), TargetURL: app.Ptr(f.Get("targetUrl")),
		Description: nonEmpty(f.Get("description")), Instruction: nonEmpty(f.Get("instruction"))}
	if p := f.Get("profileId"); p != "" {
		in.ProfileID = app.Some(p)
	}
	if fr := f.Get("scheduleFrequency"); fr != "" {
		in.ScheduleFrequency = app.Some(fr)
	}
	var err error
	if jerr := json.Unmarshal([]byte(f.Get("steps")), &in.Steps); jerr != nil {
		err = app.Invalid("steps", app.CodeInvalid, nil, "steps must be a JSON list of steps: "+jerr.Error())
	} else if hosts := strings.Fields(strings.ReplaceAll(f.Get("allowedHosts"), ",", " ")); len(hosts) > 0 {
		in.AllowedHosts = hosts
	}
	var au *app.BrowserAutomation
	if err == nil {
		au, err = s.app.CreateBrowserAutomation(r.Context(), in)
	}
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.uiBrowserAutomations(w, r, v)
	}
	return redirect(w, r, "/browser-automations/"+url.PathEscape(au.ID)+"?done=browser-automation-created")
}

func (s *Server) uiBrowserAutomation(w http.ResponseWriter, r *http.Request, v *view) error {
	id := mux.Vars(r)["id"]
	au, err := s.app.GetBrowserAutomation(r.Context(), id)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	status, verdict := q.Get("status"), q.Get("verdict")
	ferr := filterEnum(q, "status", browserRunStatuses)
	if ferr == nil {
		ferr = filterEnum(q, "verdict", verdicts)
	}
	var latest *app.BrowserAutomationRun
	form := v.Form
	lv, runs, done, err := runList(w, r, v, browserRunList(keepFetch(func() ([]app.BrowserAutomationRun, error) {
		if ferr != nil {
			return nil, ferr
		}
		all, err := s.app.ListBrowserRuns(r.Context(), id)
		if len(all) > 0 {
			latest = &all[0]
		}
		return all, err
	}, func(run app.BrowserAutomationRun) bool {
		return (status == "" || run.Status == status) && (verdict == "" || deref(run.EvaluationStatus) == verdict)
	})))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = form
	lv.EmptyText = "No run yet: Run now starts one on this appliance's Chromium; scheduled runs follow the automation's schedule."
	active := latest != nil && (latest.Status == app.BrowserRunRunning || latest.Status == app.BrowserRunPending)
	if active {
		v.Refresh = 2
	}
	steps, _ := json.MarshalIndent(au.Steps, "", "  ")
	v.Title, v.Section = "Browser automation "+au.Name, "browser-automations"
	v.Data = map[string]any{"A": au, "Runs": runs, "List": lv, "Active": active, "StepsJSON": string(steps),
		"RunStatuses": browserRunStatuses, "Verdicts": verdicts, "RunFilter": q}
	return s.page(w, r, "browser_automation", v)
}

func (s *Server) uiRunBrowserAutomation(w http.ResponseWriter, r *http.Request, v *view) error {
	id := mux.Vars(r)["id"]
	if _, err := s.app.RunBrowserAutomation(r.Context(), id); err != nil {
		if !browserErrors(err, v) && !formErrors(err, v, r) {
			return err
		}
		return s.uiBrowserAutomation(w, r, v)
	}
	return redirect(w, r, "/browser-automations/"+url.PathEscape(id)+"?done=browser-run-started")
}

func (s *Server) uiDeleteBrowserAutomation(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.DeleteBrowserAutomation(r.Context(), mux.Vars(r)["id"]); err != nil {
		return err
	}
	return redirect(w, r, "/browser-automations?done=browser-deleted")
}

func (s *Server) uiBrowserScreenshot(w http.ResponseWriter, r *http.Request, v *view) error {
	seq, err := strconv.Atoi(mux.Vars(r)["seq"])
	if err != nil || seq < 1 {
		return app.ErrNotFound
	}
	_, png, err := s.app.BrowserRunScreenshot(r.Context(), mux.Vars(r)["id"], seq)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(png)))
	w.Header().Set("Cache-Control", "private, max-age=3600")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(png)
	return nil
}

func (s *Server) uiCreateBrowserProfile(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	_, _, err := s.app.ResolveBrowserProfile(r.Context(), app.BrowserProfileInput{URL: app.Ptr(f.Get("url")), DisplayName: nonEmpty(f.Get("displayName")),
		LoginIdentity: nonEmpty(f.Get("loginIdentity")), VerifyText: nonEmpty(f.Get("verifyText"))})
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.uiBrowserAutomations(w, r, v)
	}
	return redirect(w, r, "/browser-automations?done=browser-profile-created#profiles")
}

func (s *Server) uiBrowserProfileCredentials(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.BrowserCredentialsInput{Username: app.Ptr(f.Get("username")), Password: app.Ptr(f.Get("password"))}
	if seed := f.Get("totpSeed"); seed != "" {
		in.TOTPSeed = app.Ptr(seed)
	}
	if _, err := s.app.SetBrowserProfileCredentials(r.Context(), mux.Vars(r)["id"], in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		v.Form = url.Values{} // never echo a password back into the page
		return s.uiBrowserAutomations(w, r, v)
	}
	return redirect(w, r, "/browser-automations?done=browser-credentials-stored#profiles")
}

func (s *Server) uiBrowserProfileSignIn(w http.ResponseWriter, r *http.Request, v *view) error {
	res, err := s.app.SignInBrowserProfile(r.Context(), mux.Vars(r)["id"], "", "")
	if err != nil {
		if !browserErrors(err, v) && !formErrors(err, v, r) {
			return err
		}
		return s.uiBrowserAutomations(w, r, v)
	}
	done := "browser-signed-in"
	if !res.SignedIn {
		done = "browser-sign-in-failed"
	}
	return redirect(w, r, "/browser-automations?done="+done+"#profiles")
}

func (s *Server) uiDeleteBrowserProfile(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.DeleteBrowserProfile(r.Context(), mux.Vars(r)["id"]); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.uiBrowserAutomations(w, r, v)
	}
	return redirect(w, r, "/browser-automations?done=browser-deleted#profiles")
}

func (s *Server) uiBrowserSession(w http.ResponseWriter, r *http.Request, v *view) error {
	info, err := s.app.GetBrowserSession(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	v.Title, v.Section = "Live view", "browser-automations"
	v.Data = map[string]any{"S": info}
	return s.page(w, r, "browser_session", v)
}

func (s *Server) uiBrowserFrame(w http.ResponseWriter, r *http.Request, v *view) error {
	frame, _, err := s.app.BrowserSessionFrame(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	if len(frame) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(frame)
	return nil
}

// maxStream bounds one live view stream; the page offers to reload it.
const maxStream = 10 * time.Minute

// uiBrowserStream streams the session's screen as multipart/x-mixed-replace
// JPEG frames (MJPEG), which an img element shows as they come. It ends
// when the session closes, the client leaves or after maxStream.
func (s *Server) uiBrowserStream(w http.ResponseWriter, r *http.Request, v *view) error {
	id := mux.Vars(r)["id"]
	if _, _, err := s.app.BrowserSessionFrame(r.Context(), id); err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(maxStream + 10*time.Second))
	mw := multipart.NewWriter(w)
	w.Header().Set("Content-Type", "multipart/x-mixed-replace; boundary="+mw.Boundary())
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	end := time.Now().Add(maxStream)
	var last int64 = -1
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(end) {
		frame, seq, err := s.app.BrowserSessionFrame(r.Context(), id)
		if err != nil {
			break // the session closed
		}
		if seq != last && len(frame) > 0 {
			last = seq
			h := textproto.MIMEHeader{"Content-Type": {"image/jpeg"}, "Content-Length": {strconv.Itoa(len(frame))}}
			pw, err := mw.CreatePart(h)
			if err != nil {
				break
			}
			if _, err := pw.Write(frame); err != nil {
				break
			}
			if err := rc.Flush(); err != nil {
				break
			}
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-tick.C:
		}
	}
	_ = mw.Close()
	return nil
}

// uiDraftBrowserSteps asks the configured model for steps from the form's
// description and target URL, saves them as a draft of the task and shows
// them in the form for review; nothing is created or run.
func (s *Server) uiDraftBrowserSteps(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	res, err := s.app.DraftBrowserStepsFromInstruction(r.Context(), app.BrowserInstructionInput{TaskID: app.Ptr(f.Get("taskId")),
		Name: nonEmpty(f.Get("name")), TargetURL: app.Ptr(f.Get("targetUrl")), Instruction: app.Ptr(f.Get("instruction"))})
	if err != nil {
		if formErrors(err, v, r) {
			return s.uiBrowserAutomations(w, r, v)
		}
		if errors.Is(err, app.ErrConflict) {
			v.Form, v.Status = r.PostForm, http.StatusConflict
			var pe *app.PublicError
			if errors.As(err, &pe) {
				v.Flash = pe.Error()
			}
			return s.uiBrowserAutomations(w, r, v)
		}
		return err
	}
	steps, _ := json.MarshalIndent(res.Draft.Steps, "", "  ")
	form := url.Values{}
	for k, vs := range r.PostForm {
		form[k] = vs
	}
	form.Set("steps", string(steps))
	if form.Get("name") == "" {
		form.Set("name", res.Draft.Name)
	}
	v.Form = form
	v.Flash = "Draft " + res.Draft.ID + " saved with the steps below. " + res.Notice
	return s.uiBrowserAutomations(w, r, v)
}
