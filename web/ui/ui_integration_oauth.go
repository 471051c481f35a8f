package ui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

func init() {
	flashes["variables-saved"] = "Variables saved: the next run uses them."
}

// oauthErrorText explains the error codes a failed OAuth flow comes back
// with (the provider's own codes are shown as they are).
var oauthErrorText = map[string]string{
	"invalid_state":  "the sign-in link was already used or is unknown: start again",
	"expired_state":  "the sign-in took longer than 10 minutes: start again",
	"state_mismatch": "the flow came back in another session than the one that started it: sign in and start again",
	"access_denied":  "the provider's page was declined",
}

// addOAuthAvailability says, per provider with an OAuth flow, whether the
// "Connect with ..." button is offered, and explains a failed flow.
func (s *Server) addOAuthAvailability(r *http.Request, d map[string]any, provs []app.ProviderInfo) error {
	avail := map[string]bool{}
	for _, p := range provs {
		if p.OAuth == nil {
			continue
		}
		av, err := s.app.GetOAuthAvailability(r.Context(), p.Slug)
		if err != nil {
			return err
		}
		avail[p.Slug] = av.Available
	}
	d["OAuth"] = avail
	if code := r.URL.Query().Get("oauthError"); code != "" {
		msg := oauthErrorText[code]
		if msg == "" {
			msg = "the provider answered " + code + " (recorded for the organization)"
		}
		d["OAuthError"] = msg
	}
	return nil
}

// uiStartOAuth starts a connection through the provider's OAuth app and
// sends the browser to the provider.
func (s *Server) uiStartOAuth(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.OAuthStart{ProviderSlug: f.Get("providerSlug"), Name: f.Get("name"), BaseURL: f.Get("baseUrl"),
		ConnectionID: f.Get("connectionId"), Variables: map[string]json.RawMessage{},
		CallbackURL: s.BaseURL(r) + "/v1/integrations/oauth/callback"}
	for k, vals := range f {
		if strings.HasPrefix(k, "var.") && strings.TrimSpace(vals[0]) != "" {
			raw, _ := json.Marshal(strings.TrimSpace(strings.Join(vals, "\n")))
			in.Variables[strings.TrimPrefix(k, "var.")] = raw
		}
	}
	started, err := s.app.StartIntegrationOAuth(r.Context(), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		v.Form = f
		v.Data = map[string]any{"Provider": in.ProviderSlug}
		return s.uiIntegrations(w, r, v)
	}
	http.Redirect(w, r, started.AuthorizationURL, http.StatusSeeOther)
	return nil
}

// uiSaveVariables saves the variables form of a connection (fields named
// var.<key>; an empty field removes a value).
func (s *Server) uiSaveVariables(w http.ResponseWriter, r *http.Request, v *view) error {
	in := app.VariablesSave{Variables: map[string]json.RawMessage{}}
	for k, vals := range r.PostForm {
		if strings.HasPrefix(k, "var.") {
			raw, _ := json.Marshal(strings.TrimSpace(strings.Join(vals, "\n")))
			in.Variables[strings.TrimPrefix(k, "var.")] = raw
		}
	}
	if _, err := s.app.SaveConnectionVariables(r.Context(), id(r), in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		v.Form = r.PostForm
		return s.connectionPage(w, r, v, id(r))
	}
	return redirect(w, r, "/integrations/"+url.PathEscape(id(r))+"?done=variables-saved")
}
