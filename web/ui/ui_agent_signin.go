package ui

import (
	"net/http"
	"strconv"

	"github.com/compliance-appliance/compliance/app"
)

// The device agent's browser sign-in page: `compliance agent enroll` prints
// /agent/authorize?port=...&state=...&challenge=...; the signed-in person
// approves, and the page hands the one-time code back to the agent on its
// loopback address. The form's answer is a page with the link back (the
// content security policy keeps form posts from redirecting off-site).

func (s *Server) uiAgentSignInRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/agent/authorize", uiSignedIn, s.uiAgentAuthorize)
	page("POST", "/agent/authorize", uiSignedIn, s.uiAgentApprove)
}

// agentAuthInput reads the sign-in request from the query or the form.
func agentAuthInput(get func(string) string) app.AgentAuthCodeInput {
	in := app.AgentAuthCodeInput{State: get("state"), CodeChallenge: get("challenge")}
	if p, err := strconv.Atoi(get("port")); err == nil {
		in.CallbackPort = &p
	}
	return in
}

func (s *Server) uiAgentAuthorize(w http.ResponseWriter, r *http.Request, v *view) error {
	in := agentAuthInput(r.URL.Query().Get)
	v.Title, v.Section = "Sign in the device agent", "devices"
	orgs, err := s.app.MyAgentOrganizations(r.Context(), "")
	if err != nil {
		return err
	}
	v.Data = map[string]any{"Input": in, "Orgs": orgs, "Invalid": app.ValidateAgentAuthRequest(in)}
	return s.page(w, r, "agent_authorize", v)
}

func (s *Server) uiAgentApprove(w http.ResponseWriter, r *http.Request, v *view) error {
	in := agentAuthInput(r.PostFormValue)
	v.Title, v.Section = "Sign in the device agent", "devices"
	res, err := s.app.CreateAgentAuthCode(r.Context(), in)
	if err != nil {
		if formErrors(err, v, r) {
			v.Data = map[string]any{"Input": in, "Invalid": err}
			return s.page(w, r, "agent_authorize", v)
		}
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	v.Data = map[string]any{"Input": in, "Approved": res}
	return s.page(w, r, "agent_authorize", v)
}
