package ui

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/compliance-appliance/compliance/app"
)

func init() {
	flashes["mail-saved"] = "Mail settings saved: the next message goes through them."
	flashes["mail-deleted"] = "Saved mail settings removed: the configuration file's apply again."
	flashes["provider-on"] = "Provider switched on for every organization."
	flashes["provider-off"] = "Provider switched off for every organization: its connections stop running."
	flashes["platform-saved"] = "Platform OAuth app saved."
	flashes["platform-deleted"] = "Platform OAuth app removed."
}

// uiOperatorRoutes registers the Appliance pages of the appliance operator.
// Anyone else gets 404: the pages do not exist for them.
func (s *Server) uiOperatorRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/operator", uiSignedIn, s.operatorOnly(s.uiOperatorHome))
	page("GET", "/operator/mail", uiSignedIn, s.operatorOnly(s.uiOperatorMail))
	page("POST", "/operator/mail", uiSignedIn, s.operatorOnly(s.uiSaveOperatorMail))
	page("POST", "/operator/mail/test", uiSignedIn, s.operatorOnly(s.uiTestOperatorMail))
	page("POST", "/operator/mail/delete", uiSignedIn, s.operatorOnly(s.uiDeleteOperatorMail))
	page("GET", "/operator/integrations", uiSignedIn, s.operatorOnly(s.uiOperatorIntegrations))
	page("POST", "/operator/integrations/{slug}/active", uiSignedIn, s.operatorOnly(s.uiToggleOperatorIntegration))
	page("POST", "/operator/integrations/{slug}/credentials", uiSignedIn, s.operatorOnly(s.uiSavePlatformCredentials))
	page("POST", "/operator/integrations/{slug}/credentials/delete", uiSignedIn, s.operatorOnly(s.uiDeletePlatformCredentials))
}

// operatorOnly answers 404 to anyone but the appliance operator.
func (s *Server) operatorOnly(h uiHandler) uiHandler {
	return func(w http.ResponseWriter, r *http.Request, v *view) error {
		if !v.Operator {
			return app.Errorf(app.ErrNotFound, "page not found")
		}
		return h(w, r, v)
	}
}

func (s *Server) uiOperatorHome(w http.ResponseWriter, r *http.Request, v *view) error {
	return redirect(w, r, "/operator/mail")
}

func (s *Server) uiOperatorMail(w http.ResponseWriter, r *http.Request, v *view) error {
	v.Flash = flash(r)
	return s.operatorMailPage(w, r, v, nil)
}

// operatorMailPage renders the mail settings with the test's result, if any.
func (s *Server) operatorMailPage(w http.ResponseWriter, r *http.Request, v *view, test *app.MailTestResult) error {
	st, err := s.app.AdminGetMailSettings(r.Context())
	if err != nil {
		return err
	}
	v.Title, v.Section = "Mail settings", "operator-mail"
	port := ""
	if st.SMTPPort > 0 {
		port = strconv.Itoa(st.SMTPPort)
	}
	form := map[string]string{"smtpHost": st.SMTPHost, "smtpPort": port, "tls": st.TLS, "username": st.Username, "from": st.From}
	if v.Form != nil {
		for k := range form {
			form[k] = v.Form.Get(k)
		}
	}
	if form["tls"] == "" {
		form["tls"] = app.MailTLSStartTLS
	}
	v.Data = map[string]any{"S": st, "F": form, "Test": test, "TestTo": r.PostFormValue("to"),
		"Modes": []string{app.MailTLSStartTLS, app.MailTLSImplicit, app.MailTLSNone}}
	return s.page(w, r, "operator_mail", v)
}

func (s *Server) uiSaveOperatorMail(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.MailSettingsInput{SMTPHost: f.Get("smtpHost"), TLS: f.Get("tls"), Username: f.Get("username"), From: f.Get("from")}
	if p := strings.TrimSpace(f.Get("smtpPort")); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			n = -1
		}
		in.SMTPPort = n
	}
	if pw := f.Get("password"); pw != "" {
		in.Password = &pw
	}
	if f.Get("clearPassword") == "on" {
		empty := ""
		in.Password = &empty
	}
	_, err := s.app.AdminPutMailSettings(r.Context(), in)
	if formErrors(err, v, r) {
		return s.operatorMailPage(w, r, v, nil)
	}
	if err != nil {
		return err
	}
	return redirect(w, r, "/operator/mail?done=mail-saved")
}

func (s *Server) uiTestOperatorMail(w http.ResponseWriter, r *http.Request, v *view) error {
	res, err := s.app.AdminTestMail(r.Context(), r.PostFormValue("to"))
	if formErrors(err, v, r) {
		v.Form = nil
		return s.operatorMailPage(w, r, v, nil)
	}
	if err != nil {
		if errors.Is(err, app.ErrConflict) {
			v.Errors, v.Status = map[string]string{"to": "Mail is not configured: save SMTP settings first."}, http.StatusConflict
			return s.operatorMailPage(w, r, v, nil)
		}
		return err
	}
	return s.operatorMailPage(w, r, v, res)
}

func (s *Server) uiDeleteOperatorMail(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.AdminDeleteMailSettings(r.Context()); err != nil {
		return err
	}
	return redirect(w, r, "/operator/mail?done=mail-deleted")
}

func (s *Server) uiOperatorIntegrations(w http.ResponseWriter, r *http.Request, v *view) error {
	v.Flash = flash(r)
	return s.operatorIntegrationsPage(w, r, v, "")
}

func (s *Server) operatorIntegrationsPage(w http.ResponseWriter, r *http.Request, v *view, errSlug string) error {
	ps, err := s.app.AdminListIntegrations(r.Context())
	if err != nil {
		return err
	}
	v.Title, v.Section = "Integration providers", "operator-integrations"
	v.Data = map[string]any{"Providers": ps, "ErrSlug": errSlug}
	return s.page(w, r, "operator_integrations", v)
}

func (s *Server) uiToggleOperatorIntegration(w http.ResponseWriter, r *http.Request, v *view) error {
	on := r.PostFormValue("isActive") == "true"
	if _, err := s.app.AdminUpdateIntegration(r.Context(), mux.Vars(r)["slug"], app.AdminProviderPatch{IsActive: &on}); err != nil {
		return err
	}
	done := "provider-off"
	if on {
		done = "provider-on"
	}
	return redirect(w, r, "/operator/integrations?done="+done)
}

func (s *Server) uiSavePlatformCredentials(w http.ResponseWriter, r *http.Request, v *view) error {
	slug := mux.Vars(r)["slug"]
	in := app.PlatformCredentialsInput{ProviderSlug: slug, ClientID: r.PostFormValue("clientId"), ClientSecret: r.PostFormValue("clientSecret")}
	for _, sc := range strings.Fields(r.PostFormValue("customScopes")) {
		in.CustomScopes = append(in.CustomScopes, sc)
	}
	_, err := s.app.AdminSavePlatformCredentials(r.Context(), in)
	if formErrors(err, v, r) {
		return s.operatorIntegrationsPage(w, r, v, slug)
	}
	if err != nil {
		return err
	}
	return redirect(w, r, "/operator/integrations?done=platform-saved")
}

func (s *Server) uiDeletePlatformCredentials(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.AdminDeletePlatformCredentials(r.Context(), mux.Vars(r)["slug"]); err != nil {
		return err
	}
	return redirect(w, r, "/operator/integrations?done=platform-deleted")
}
