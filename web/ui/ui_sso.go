package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

func init() {
	flashes["sso-saved"] = "Single sign-on settings saved."
	flashes["scim-revoked"] = "The SCIM token was revoked; provisioning stopped."
}

// ssoCallbackPath is the redirect URI registered at identity providers.
const ssoCallbackPath = "/sso/oidc/callback"

// uiSSORoutes registers the single sign-on flow (public) and its settings
// page.
func (s *Server) uiSSORoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/sso/{org}/start", uiPublic, s.uiSSOStart)
	page("GET", ssoCallbackPath, uiPublic, s.uiSSOCallback)
	page("POST", "/login/sso", uiPublic, s.uiSSOByEmail)
	page("GET", "/settings/sso", uiAudit, s.uiSSOSettings)
	page("POST", "/settings/sso", uiManage, s.uiSaveSSOSettings)
	page("POST", "/settings/sso/test", uiManage, s.uiTestSSO)
	page("POST", "/settings/sso/scim-token", uiManage, s.uiCreateSCIMToken)
	page("POST", "/settings/sso/scim-token/revoke", uiManage, s.uiRevokeSCIMToken)
}

// ssoFailure renders a refused or failed sign-in as an error page that
// says why: 400 for what the person or the flow got wrong, 502 when the
// identity provider failed. Other errors take the usual error page.
func (s *Server) ssoFailure(w http.ResponseWriter, r *http.Request, v *view, err error) error {
	var se *app.SSOError
	if !errors.As(err, &se) {
		return err
	}
	status := http.StatusBadRequest
	if se.Upstream {
		status = http.StatusBadGateway
	}
	v.Title, v.Status = "Sign-in failed", status
	v.Data = map[string]any{"Message": se.Msg, "RequestID": httpx.RequestID(r)}
	s.render(w, r, status, "error", v)
	return nil
}

func (s *Server) uiSSOStart(w http.ResponseWriter, r *http.Request, v *view) error {
	next := localPath(r.URL.Query().Get("next"))
	to, err := s.app.BeginSSO(r.Context(), mux.Vars(r)["org"], s.BaseURL(r), next)
	if err != nil {
		return s.ssoFailure(w, r, v, err)
	}
	http.Redirect(w, r, to, http.StatusFound)
	return nil
}

func (s *Server) uiSSOCallback(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	idpErr := q.Get("error")
	if d := q.Get("error_description"); d != "" {
		idpErr += ": " + d
	}
	res, err := s.app.CompleteSSO(r.Context(), q.Get("state"), q.Get("code"), idpErr, s.BaseURL(r)+ssoCallbackPath,
		httpx.ClientIP(r), r.UserAgent())
	if err != nil {
		return s.ssoFailure(w, r, v, err)
	}
	if err := s.Sess.SetCookie(w, r, res.Token, res.Session.ExpiresAt.Sub(res.Session.CreatedAt)); err != nil {
		return err
	}
	next := res.Next
	if next == "" {
		next = "/"
	}
	return redirect(w, r, next)
}

// uiSSOByEmail is the e-mail-first step: the domain names the organization
// whose identity provider signs the person in.
func (s *Server) uiSSOByEmail(w http.ResponseWriter, r *http.Request, v *view) error {
	next := localPath(r.PostFormValue("next"))
	email := strings.TrimSpace(r.PostFormValue("email"))
	c, err := r.Cookie(uiLoginCSRF)
	if err != nil || c.Value == "" || r.PostFormValue(CSRFField) != c.Value {
		return s.loginForm(w, r, v, http.StatusForbidden, next, email, "The sign-in form expired. Please try again.")
	}
	st, err := s.app.SSOForEmail(r.Context(), email)
	if errors.Is(err, app.ErrNotFound) {
		return s.loginForm(w, r, v, http.StatusOK, next, email, "No single sign-on is set up for this e-mail's domain. Sign in with your password.")
	}
	if err != nil {
		return err
	}
	to := "/sso/" + url.PathEscape(st.OrganizationID) + "/start"
	if next != "" && next != "/" {
		to += "?next=" + url.QueryEscape(next)
	}
	return redirect(w, r, to)
}

func (s *Server) ssoPage(w http.ResponseWriter, r *http.Request, v *view, st *app.SSOSettings, test *app.SSOTestResult, errs map[string]string, status int) error {
	return s.ssoPageWith(w, r, v, st, test, errs, status, "")
}

func (s *Server) ssoPageWith(w http.ResponseWriter, r *http.Request, v *view, st *app.SSOSettings, test *app.SSOTestResult, errs map[string]string, status int, newToken string) error {
	scim, err := s.app.GetSCIMToken(r.Context())
	if err != nil {
		return err
	}
	v.Title, v.Section, v.Status = "Single sign-on", "sso", status
	v.Flash = flash(r)
	mapping := make([]string, 0, len(st.RoleMapping))
	for _, m := range st.RoleMapping {
		mapping = append(mapping, m.Group+" = "+string(m.Role))
	}
	v.Data = map[string]any{"S": st, "Test": test, "Errors": errs, "Domains": strings.Join(st.AllowedDomains, "\n"),
		"Mapping": strings.Join(mapping, "\n"), "RedirectURI": s.BaseURL(r) + ssoCallbackPath,
		"StartURL": "/sso/" + url.PathEscape(v.P.OrgID) + "/start?next=" + url.QueryEscape("/settings/sso"),
		"SCIM":     scim, "SCIMURL": s.BaseURL(r) + "/scim/v2", "NewToken": newToken}
	s.samlPageData(r, v, st)
	return s.page(w, r, "sso_settings", v)
}

func (s *Server) uiSSOSettings(w http.ResponseWriter, r *http.Request, v *view) error {
	st, err := s.app.GetSSOSettings(r.Context())
	if err != nil {
		return err
	}
	return s.ssoPage(w, r, v, st, nil, nil, http.StatusOK)
}

func ssoLines(s string) []string {
	out := []string{}
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' }) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (s *Server) uiSaveSSOSettings(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	breakGlass := f.Get("ownerBreakGlass") == "on"
	in := app.SSOSettingsInput{Enabled: f.Get("enabled") == "on", DisplayName: f.Get("displayName"), Issuer: f.Get("issuer"),
		ClientID: f.Get("clientId"), AllowedDomains: ssoLines(f.Get("allowedDomains")), GroupsClaim: f.Get("groupsClaim"),
		SSORequired: f.Get("ssoRequired") == "on", OwnerBreakGlass: &breakGlass, RoleMapping: []app.SSORoleMapping{}}
	in.Protocol, in.SAML = samlFormInput(f)
	if sec := f.Get("clientSecret"); sec != "" {
		in.ClientSecret = &sec
	}
	if f.Get("clearSecret") == "on" {
		empty := ""
		in.ClientSecret = &empty
	}
	for _, l := range strings.Split(f.Get("roleMapping"), "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		g, role, _ := strings.Cut(l, "=")
		in.RoleMapping = append(in.RoleMapping, app.SSORoleMapping{Group: strings.TrimSpace(g), Role: app.Role(strings.TrimSpace(role))})
	}
	_, err := s.app.PutSSOSettings(r.Context(), in)
	var ve *app.ValidationError
	if errors.As(err, &ve) {
		st := &app.SSOSettings{Enabled: in.Enabled, DisplayName: in.DisplayName, Issuer: in.Issuer, ClientID: in.ClientID,
			AllowedDomains: in.AllowedDomains, GroupsClaim: in.GroupsClaim, RoleMapping: in.RoleMapping,
			SSORequired: in.SSORequired, OwnerBreakGlass: breakGlass, Protocol: in.Protocol, SAML: samlFormSettings(in.SAML)}
		errs := map[string]string{}
		for k := range ve.Fields {
			msg := ve.Msgs[k]
			if msg == "" {
				msg = k + " is not valid"
			}
			errs[strings.SplitN(k, "[", 2)[0]] = msg
		}
		return s.ssoPage(w, r, v, st, nil, errs, http.StatusBadRequest)
	}
	if err != nil {
		return err
	}
	return redirect(w, r, "/settings/sso?done=sso-saved")
}

func (s *Server) uiTestSSO(w http.ResponseWriter, r *http.Request, v *view) error {
	res, err := s.app.TestSSO(r.Context())
	if err != nil {
		return err
	}
	st, err := s.app.GetSSOSettings(r.Context())
	if err != nil {
		return err
	}
	return s.ssoPage(w, r, v, st, res, nil, http.StatusOK)
}

// uiCreateSCIMToken makes (or rotates) the SCIM token and shows it once.
func (s *Server) uiCreateSCIMToken(w http.ResponseWriter, r *http.Request, v *view) error {
	t, err := s.app.CreateSCIMToken(r.Context())
	if err != nil {
		return err
	}
	st, err := s.app.GetSSOSettings(r.Context())
	if err != nil {
		return err
	}
	return s.ssoPageWith(w, r, v, st, nil, nil, http.StatusOK, t.Token)
}

func (s *Server) uiRevokeSCIMToken(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.RevokeSCIMToken(r.Context()); err != nil {
		return err
	}
	return redirect(w, r, "/settings/sso?done=scim-revoked")
}
