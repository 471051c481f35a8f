package api

import (
	"net/http"
	"strconv"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// browserRoutes registers the browser automation routes. The group keeps
// the reference's name and paths (/v1/browserbase/...) because clients
// know them; it runs on the appliance's own headless Chromium. Owners and
// admins drive sessions and change automations; auditors read.
// analyze-login runs on the appliance's Chromium (deterministic DOM
// analysis), mfa-instructions answers from a built-in table (or the
// configured model), and drafting steps from an instruction needs the
// configured model; the hosted service's execute-live is not offered.
func (s *Server) browserRoutes(handle routeFunc) {
	handle("GET", "/v1/browserbase/org-context", httpx.CanRead, s.getBrowserContext)
	handle("POST", "/v1/browserbase/org-context", httpx.CanManage, s.ensureBrowserContext)
	handle("POST", "/v1/browserbase/session", httpx.CanManage, s.createBrowserSession)
	handle("POST", "/v1/browserbase/session/close", httpx.CanManage, s.closeBrowserSession)
	handle("POST", "/v1/browserbase/navigate", httpx.CanManage, s.navigateBrowserSession)
	handle("POST", "/v1/browserbase/check-auth", httpx.CanManage, s.checkBrowserAuth)

	handle("POST", "/v1/browserbase/automations", httpx.CanManage, s.createBrowserAutomation)
	handle("POST", "/v1/browserbase/automations/test", httpx.CanManage, s.testBrowserInstruction)
	handle("GET", "/v1/browserbase/automations/task/{taskId}", httpx.CanRead, s.listBrowserAutomations)
	handle("PATCH", "/v1/browserbase/automations/task/{taskId}/schedule", httpx.CanManage, s.setBrowserTaskSchedule)
	handle("GET", "/v1/browserbase/automations/task/{taskId}/drafts", httpx.CanRead, s.listBrowserDrafts)
	handle("GET", "/v1/browserbase/automations/{browserAutomationId}", httpx.CanRead, s.getBrowserAutomation)
	handle("PATCH", "/v1/browserbase/automations/{browserAutomationId}", httpx.CanManage, s.updateBrowserAutomation)
	handle("DELETE", "/v1/browserbase/automations/{browserAutomationId}", httpx.CanManage, s.deleteBrowserAutomation)
	handle("POST", "/v1/browserbase/automations/{browserAutomationId}/start-live", httpx.CanManage, s.startLiveBrowserAutomation)
	handle("POST", "/v1/browserbase/automations/{browserAutomationId}/execute", httpx.CanManage, s.executeBrowserAutomation)
	handle("POST", "/v1/browserbase/automations/{browserAutomationId}/run", httpx.CanManage, s.runBrowserAutomation)
	handle("GET", "/v1/browserbase/automations/{browserAutomationId}/runs", httpx.CanRead, s.listBrowserRuns)
	handle("GET", "/v1/browserbase/runs/{browserRunId}", httpx.CanRead, s.getBrowserRun)
	handle("GET", "/v1/browserbase/runs/{browserRunId}/screenshot", httpx.CanRead, s.getBrowserRunScreenshot)

	handle("POST", "/v1/browserbase/automation-drafts", httpx.CanManage, s.createBrowserDraft)
	handle("PATCH", "/v1/browserbase/automation-drafts/{browserDraftId}", httpx.CanManage, s.updateBrowserDraft)
	handle("DELETE", "/v1/browserbase/automation-drafts/{browserDraftId}", httpx.CanManage, s.deleteBrowserDraft)
	handle("POST", "/v1/browserbase/automation-drafts/from-instruction", httpx.CanManage.OutsideTransaction(), s.draftBrowserStepsFromInstruction)
	handle("POST", "/v1/browserbase/analyze-login", httpx.CanManage.OutsideTransaction(), s.analyzeLogin)
	handle("GET", "/v1/browserbase/mfa-instructions", httpx.CanRead, s.getMFAInstructions)

	handle("GET", "/v1/browserbase/profiles", httpx.CanRead, s.listBrowserProfiles)
	handle("GET", "/v1/browserbase/profiles/totp-statuses", httpx.CanRead, s.browserTOTPStatuses)
	handle("POST", "/v1/browserbase/profiles/resolve", httpx.CanManage, s.resolveBrowserProfile)
	handle("PATCH", "/v1/browserbase/profiles/{browserProfileId}", httpx.CanManage, s.updateBrowserProfile)
	handle("DELETE", "/v1/browserbase/profiles/{browserProfileId}", httpx.CanManage, s.deleteBrowserProfile)
	handle("POST", "/v1/browserbase/profiles/{browserProfileId}/session", httpx.CanManage, s.startBrowserProfileSession)
	handle("POST", "/v1/browserbase/profiles/{browserProfileId}/verify", httpx.CanManage, s.verifyBrowserProfile)
	handle("POST", "/v1/browserbase/profiles/{browserProfileId}/credentials", httpx.CanManage, s.setBrowserProfileCredentials)
	handle("POST", "/v1/browserbase/profiles/{browserProfileId}/sign-in", httpx.CanManage, s.signInBrowserProfile)
	handle("POST", "/v1/browserbase/profiles/{browserProfileId}/needs-reauth", httpx.CanManage, s.markBrowserProfileNeedsReauth)
	handle("GET", "/v1/browserbase/profiles/{browserProfileId}/totp", httpx.CanRead, s.getBrowserProfileTOTP)
	handle("POST", "/v1/browserbase/profiles/{browserProfileId}/totp", httpx.CanManage, s.setBrowserProfileTOTP)
	handle("DELETE", "/v1/browserbase/profiles/{browserProfileId}/totp", httpx.CanManage, s.clearBrowserProfileTOTP)
}

type browserSessionBody struct {
	ContextID string  `json:"contextId"`
	SessionID string  `json:"sessionId"`
	URL       string  `json:"url"`
	RunID     string  `json:"runId"`
	Mode      string  `json:"mode"`
	Reason    *string `json:"reason"`
	TOTPSeed  *string `json:"totpSeed"`
	Frequency *string `json:"scheduleFrequency"`
}

func success(w http.ResponseWriter, status int, err error) error {
	return ok(w, status, map[string]any{"success": true}, err)
}

func (s *Server) getBrowserContext(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.GetBrowserContext(r.Context())
	if err != nil {
		return err
	}
	out := map[string]any{"hasContext": c != nil, "contextId": nil}
	if c != nil {
		out["contextId"] = c.ContextID
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) ensureBrowserContext(w http.ResponseWriter, r *http.Request) error {
	c, isNew, err := s.app.EnsureBrowserContext(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, map[string]any{"contextId": c.ContextID, "isNew": isNew})
	return nil
}

func (s *Server) createBrowserSession(w http.ResponseWriter, r *http.Request) error {
	var in browserSessionBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.ContextID == "" {
		return app.Invalid("contextId", app.CodeRequired, nil, "contextId is required")
	}
	v, err := s.app.CreateBrowserSession(r.Context(), in.ContextID)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) closeBrowserSession(w http.ResponseWriter, r *http.Request) error {
	var in browserSessionBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.SessionID == "" {
		return app.Invalid("sessionId", app.CodeRequired, nil, "sessionId is required")
	}
	return success(w, http.StatusCreated, s.app.CloseBrowserSession(r.Context(), in.SessionID))
}

func (s *Server) navigateBrowserSession(w http.ResponseWriter, r *http.Request) error {
	var in browserSessionBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.SessionID == "" {
		return app.Invalid("sessionId", app.CodeRequired, nil, "sessionId is required")
	}
	loadErr, err := s.app.NavigateBrowserSession(r.Context(), in.SessionID, in.URL)
	if err == nil && loadErr != "" {
		// The page failing to load is an answer, not an error of the call.
		httpx.WriteJSON(w, http.StatusCreated, map[string]any{"success": false, "error": loadErr})
		return nil
	}
	return success(w, http.StatusCreated, err)
}

func (s *Server) checkBrowserAuth(w http.ResponseWriter, r *http.Request) error {
	var in browserSessionBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.SessionID == "" {
		return app.Invalid("sessionId", app.CodeRequired, nil, "sessionId is required")
	}
	v, err := s.app.CheckBrowserAuth(r.Context(), in.SessionID, in.URL)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) createBrowserAutomation(w http.ResponseWriter, r *http.Request) error {
	var in app.BrowserAutomationInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateBrowserAutomation(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) testBrowserInstruction(w http.ResponseWriter, r *http.Request) error {
	var in app.BrowserTestInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.TestBrowserInstruction(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) listBrowserAutomations(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	all, err := s.app.ListBrowserAutomations(r.Context(), pathID(r, "taskId"))
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(all, p))
	return nil
}

func (s *Server) setBrowserTaskSchedule(w http.ResponseWriter, r *http.Request) error {
	var in browserSessionBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	f, err := s.app.SetBrowserTaskSchedule(r.Context(), pathID(r, "taskId"), in.Frequency)
	return ok(w, http.StatusOK, map[string]any{"success": true, "scheduleFrequency": f}, err)
}

func (s *Server) listBrowserDrafts(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	all, err := s.app.ListBrowserDrafts(r.Context(), pathID(r, "taskId"))
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(all, p))
	return nil
}

func (s *Server) getBrowserAutomation(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetBrowserAutomation(r.Context(), pathID(r, "browserAutomationId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) updateBrowserAutomation(w http.ResponseWriter, r *http.Request) error {
	var in app.BrowserAutomationInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateBrowserAutomation(r.Context(), pathID(r, "browserAutomationId"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) deleteBrowserAutomation(w http.ResponseWriter, r *http.Request) error {
	return success(w, http.StatusOK, s.app.DeleteBrowserAutomation(r.Context(), pathID(r, "browserAutomationId")))
}

func (s *Server) startLiveBrowserAutomation(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.StartLiveBrowserAutomation(r.Context(), pathID(r, "browserAutomationId"))
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) executeBrowserAutomation(w http.ResponseWriter, r *http.Request) error {
	var in browserSessionBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.ExecuteBrowserAutomation(r.Context(), pathID(r, "browserAutomationId"), in.RunID, in.SessionID)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) runBrowserAutomation(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.RunBrowserAutomation(r.Context(), pathID(r, "browserAutomationId"))
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) listBrowserRuns(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	all, err := s.app.ListBrowserRuns(r.Context(), pathID(r, "browserAutomationId"))
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(all, p))
	return nil
}

func (s *Server) getBrowserRun(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetBrowserRun(r.Context(), pathID(r, "browserRunId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) getBrowserRunScreenshot(w http.ResponseWriter, r *http.Request) error {
	seq := 0
	if v := r.URL.Query().Get("seq"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return app.Invalid("seq", app.CodeInvalid, v, "seq must be a positive integer (the screenshot's number in the run)")
		}
		seq = n
	}
	sh, png, err := s.app.BrowserRunScreenshot(r.Context(), pathID(r, "browserRunId"), seq)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "image/png")
	disp := "inline"
	if r.URL.Query().Get("download") != "" {
		disp = "attachment"
	}
	w.Header().Set("Content-Disposition", disp+`; filename="`+pathID(r, "browserRunId")+"-"+sh.Name+`.png"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(png)))
	_, _ = w.Write(png)
	return nil
}

func (s *Server) createBrowserDraft(w http.ResponseWriter, r *http.Request) error {
	var in app.BrowserDraftInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateBrowserDraft(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) updateBrowserDraft(w http.ResponseWriter, r *http.Request) error {
	var in app.BrowserDraftInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateBrowserDraft(r.Context(), pathID(r, "browserDraftId"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) deleteBrowserDraft(w http.ResponseWriter, r *http.Request) error {
	return success(w, http.StatusOK, s.app.DeleteBrowserDraft(r.Context(), pathID(r, "browserDraftId")))
}

func (s *Server) listBrowserProfiles(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	all, err := s.app.ListBrowserProfiles(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(all, p))
	return nil
}

func (s *Server) browserTOTPStatuses(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.BrowserTOTPStatuses(r.Context())
	return ok(w, http.StatusOK, map[string]any{"statuses": v}, err)
}

func (s *Server) resolveBrowserProfile(w http.ResponseWriter, r *http.Request) error {
	var in app.BrowserProfileInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	p, isNew, err := s.app.ResolveBrowserProfile(r.Context(), in)
	return ok(w, http.StatusCreated, map[string]any{"profile": p, "isNew": isNew}, err)
}

func (s *Server) updateBrowserProfile(w http.ResponseWriter, r *http.Request) error {
	var in app.BrowserProfileInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateBrowserProfile(r.Context(), pathID(r, "browserProfileId"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) deleteBrowserProfile(w http.ResponseWriter, r *http.Request) error {
	return success(w, http.StatusOK, s.app.DeleteBrowserProfile(r.Context(), pathID(r, "browserProfileId")))
}

func (s *Server) startBrowserProfileSession(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.StartBrowserProfileSession(r.Context(), pathID(r, "browserProfileId"))
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) verifyBrowserProfile(w http.ResponseWriter, r *http.Request) error {
	var in browserSessionBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.VerifyBrowserProfile(r.Context(), pathID(r, "browserProfileId"), in.SessionID, in.URL)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) setBrowserProfileCredentials(w http.ResponseWriter, r *http.Request) error {
	var in app.BrowserCredentialsInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.SetBrowserProfileCredentials(r.Context(), pathID(r, "browserProfileId"), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) signInBrowserProfile(w http.ResponseWriter, r *http.Request) error {
	var in browserSessionBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.SignInBrowserProfile(r.Context(), pathID(r, "browserProfileId"), in.URL, in.Mode)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) markBrowserProfileNeedsReauth(w http.ResponseWriter, r *http.Request) error {
	var in browserSessionBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.MarkBrowserProfileNeedsReauth(r.Context(), pathID(r, "browserProfileId"), in.Reason)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getBrowserProfileTOTP(w http.ResponseWriter, r *http.Request) error {
	p, err := s.app.GetBrowserProfile(r.Context(), pathID(r, "browserProfileId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"configured": p.TOTPConfigured})
	return nil
}

func (s *Server) setBrowserProfileTOTP(w http.ResponseWriter, r *http.Request) error {
	var in browserSessionBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	p, err := s.app.SetBrowserProfileTOTP(r.Context(), pathID(r, "browserProfileId"), in.TOTPSeed)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, map[string]any{"configured": p.TOTPConfigured})
	return nil
}

func (s *Server) clearBrowserProfileTOTP(w http.ResponseWriter, r *http.Request) error {
	p, err := s.app.ClearBrowserProfileTOTP(r.Context(), pathID(r, "browserProfileId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"configured": p.TOTPConfigured})
	return nil
}
