package ui

import (
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// SAML sign-in's public pages: the service provider's metadata and the
// assertion consumer service (HTTP-POST binding). The sign-in itself
// starts at /sso/{org}/start like OpenID Connect's.

// uiSAMLRoutes registers the service provider's metadata.
func (s *Server) uiSAMLRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/sso/saml/{org}/metadata", uiPublic, s.uiSAMLMetadata)
}

// uiSAMLACSRoute registers the assertion consumer service. The identity
// provider's page posts it, so it carries no CSRF token of this site: the
// request is read without the session cookie (a sign-in opens a new
// session anyway), and the response is trusted only once its signature,
// audience, recipient and request id are verified.
func (s *Server) uiSAMLACSRoute(rt *mux.Router) {
	h := s.uiWrap(uiPublic, s.uiSAMLACS)
	rt.Handle("/sso/saml/{org}/acs", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Cookie")
		h.ServeHTTP(w, r)
	})).Methods("POST")
}

func (s *Server) uiSAMLMetadata(w http.ResponseWriter, r *http.Request, v *view) error {
	b, err := s.app.SAMLMetadata(r.Context(), mux.Vars(r)["org"], s.BaseURL(r))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/samlmetadata+xml")
	w.Header().Set("Cache-Control", "no-cache")
	_, err = w.Write(b)
	return err
}

func (s *Server) uiSAMLACS(w http.ResponseWriter, r *http.Request, v *view) error {
	res, err := s.app.CompleteSAML(r.Context(), mux.Vars(r)["org"], s.BaseURL(r), r.PostFormValue("SAMLResponse"),
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

// samlFormInput reads the protocol and the SAML fields of the settings
// form; a form without the SAML fields keeps the stored SAML part.
func samlFormInput(f url.Values) (string, *app.SAMLSettingsInput) {
	if _, ok := f["samlMetadataUrl"]; !ok {
		return f.Get("protocol"), nil
	}
	return f.Get("protocol"), &app.SAMLSettingsInput{MetadataURL: f.Get("samlMetadataUrl"), MetadataXML: f.Get("samlMetadataXml"),
		EmailAttribute: f.Get("samlEmailAttribute"), NameAttribute: f.Get("samlNameAttribute"),
		GroupsAttribute: f.Get("samlGroupsAttribute")}
}

// samlFormSettings shows a refused form's SAML fields again.
func samlFormSettings(in *app.SAMLSettingsInput) *app.SAMLSettings {
	if in == nil {
		return nil
	}
	return &app.SAMLSettings{MetadataURL: in.MetadataURL, MetadataXML: in.MetadataXML, EmailAttribute: in.EmailAttribute,
		NameAttribute: in.NameAttribute, GroupsAttribute: in.GroupsAttribute}
}

// samlPageData adds what the settings page shows for SAML: the addresses
// to copy into the identity provider and the parsed metadata.
func (s *Server) samlPageData(r *http.Request, v *view, st *app.SSOSettings) {
	d, ok := v.Data.(map[string]any)
	if !ok {
		return
	}
	md, acs := app.SAMLPaths(v.P.OrgID)
	sm := st.SAML
	if sm == nil {
		sm = &app.SAMLSettings{}
	}
	xmlShown := sm.MetadataXML
	if sm.MetadataURL != "" {
		xmlShown = "" // read from the URL; the textarea is for pasted metadata
	}
	d["SAML"], d["SAMLXML"], d["SAMLOn"] = sm, xmlShown, st.Protocol == app.SSOProtocolSAML
	d["SPMetadataURL"], d["ACSURL"] = s.BaseURL(r)+md, s.BaseURL(r)+acs
}
