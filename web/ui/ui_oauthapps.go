package ui

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// OAuth apps of the organization (roles that manage API keys) and every
// person's connected apps: the grants they gave, which they revoke here.

// uiOAuthRoutes registers OAuth apps and connected apps.
func (s *Server) uiOAuthRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/oauth-apps", uiKeys, s.uiOAuthApps)
	page("POST", "/oauth-apps", uiKeys, s.uiCreateOAuthApp)
	page("GET", "/oauth-apps/{id}", uiKeys, s.uiOAuthApp)
	page("POST", "/oauth-apps/{id}", uiKeys, s.uiUpdateOAuthApp)
	page("POST", "/oauth-apps/{id}/rotate-secret", uiKeys, s.uiRotateOAuthSecret)
	page("POST", "/oauth-apps/{id}/delete", uiKeys, s.uiDeleteOAuthApp)

	page("GET", "/connected-apps", uiSignedIn, s.uiConnectedApps)
	page("POST", "/connected-apps/{id}/revoke", uiSignedIn, s.uiRevokeGrant)
}

// oauthFlashes are the confirmations of these pages.
var oauthFlashes = map[string]string{
	"app-deleted":      "App deleted: every authorization it held ended and its tokens stopped working.",
	"app-disconnected": "App disconnected: it can no longer act for you.",
}

func init() {
	for k, v := range oauthFlashes {
		flashes[k] = v
	}
}

// scopeLabels describe the scopes people choose from.
var scopeLabels = []struct{ Value, Label string }{
	{app.ScopeRead, "Read (compliance:read)"},
	{app.ScopeWrite, "Write (compliance:write)"},
}

// oauthAppInput maps the app form onto the API's input; blank lines of
// the redirect URIs are skipped. Lists are always given, so an empty one
// is refused on update rather than left unchanged.
func oauthAppInput(f url.Values) app.OAuthClientInput {
	uris := []string{}
	for _, line := range strings.Split(f.Get("redirectUris"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			uris = append(uris, line)
		}
	}
	scopes := []string{}
	for _, sc := range f["scopes"] {
		if sc = strings.TrimSpace(sc); sc != "" {
			scopes = append(scopes, sc)
		}
	}
	return app.OAuthClientInput{Name: app.Ptr(f.Get("name")), Description: app.Ptr(strings.TrimSpace(f.Get("description"))),
		ClientURI: app.Ptr(strings.TrimSpace(f.Get("clientUri"))), RedirectURIs: uris, Scopes: scopes}
}

// oauthEndpoints are the addresses an app's developer needs.
func (s *Server) oauthEndpoints(r *http.Request) map[string]string {
	base := s.BaseURL(r)
	return map[string]string{"Authorize": base + "/oauth/authorize", "Token": base + "/oauth/token", "Revoke": base + "/oauth/revoke",
		"Metadata": base + "/.well-known/oauth-authorization-server"}
}

func (s *Server) oauthAppsPage(w http.ResponseWriter, r *http.Request, v *view) error {
	form := v.Form
	lv, apps, done, err := runList(w, r, v, oauthAppList(sliceFetch(func() ([]app.OAuthClient, error) { return s.app.ListOAuthApps(r.Context()) })))
	if done || err != nil {
		return err
	}
	v.Form = form
	v.Title, v.Section = "OAuth apps", "oauth-apps"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	lv.EmptyText = "No OAuth apps yet. Register one below to let an integration act for the people who approve it. AI agents and tools that register themselves need nothing here."
	v.Data = map[string]any{"Apps": apps, "List": lv, "Scopes": scopeLabels, "Endpoints": s.oauthEndpoints(r)}
	return s.page(w, r, "oauth_apps", v)
}

func (s *Server) uiOAuthApps(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.oauthAppsPage(w, r, v)
}

// uiCreateOAuthApp registers an app and answers with its page showing the
// client secret this once; it is never put in a URL.
func (s *Server) uiCreateOAuthApp(w http.ResponseWriter, r *http.Request, v *view) error {
	in := oauthAppInput(r.PostForm)
	if len(in.Scopes) == 0 {
		in.Scopes = nil // none ticked: both, as in the API
	}
	c, err := s.app.CreateOAuthApp(r.Context(), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.oauthAppsPage(w, r, v)
	}
	v.Status, v.Flash = http.StatusCreated, "App registered."
	return s.oauthAppPage(w, r, v, c, c.ClientSecret)
}

// oauthAppPage shows one app with its edit form; secret is a new client
// secret to show once, or "".
func (s *Server) oauthAppPage(w http.ResponseWriter, r *http.Request, v *view, c *app.OAuthClient, secret string) error {
	v.Title, v.Section = c.Name, "oauth-apps"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = map[string]any{"A": c, "Secret": secret, "Scopes": scopeLabels, "Endpoints": s.oauthEndpoints(r),
		"RedirectURIs": strings.Join(c.RedirectURIs, "\n")}
	return s.page(w, r, "oauth_app", v)
}

func (s *Server) uiOAuthApp(w http.ResponseWriter, r *http.Request, v *view) error {
	c, err := s.app.GetOAuthApp(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.oauthAppPage(w, r, v, c, "")
}

func (s *Server) uiUpdateOAuthApp(w http.ResponseWriter, r *http.Request, v *view) error {
	c, err := s.app.UpdateOAuthApp(r.Context(), id(r), oauthAppInput(r.PostForm))
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		if c, err = s.app.GetOAuthApp(r.Context(), id(r)); err != nil {
			return err
		}
		return s.oauthAppPage(w, r, v, c, "")
	}
	return redirect(w, r, "/oauth-apps/"+url.PathEscape(c.ID)+"?done=saved")
}

// uiRotateOAuthSecret replaces the client secret and shows the new one once.
func (s *Server) uiRotateOAuthSecret(w http.ResponseWriter, r *http.Request, v *view) error {
	c, err := s.app.RotateOAuthAppSecret(r.Context(), id(r))
	if err != nil {
		return err
	}
	v.Flash = "New client secret issued: the old one no longer works. Tokens already issued stay valid."
	return s.oauthAppPage(w, r, v, c, c.ClientSecret)
}

func (s *Server) uiDeleteOAuthApp(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.DeleteOAuthApp(r.Context(), id(r)); err != nil {
		return err
	}
	return redirect(w, r, "/oauth-apps?done=app-deleted")
}

// --- connected apps ---

func (s *Server) uiConnectedApps(w http.ResponseWriter, r *http.Request, v *view) error {
	lv, grants, done, err := runList(w, r, v, grantList(sliceFetch(func() ([]app.OAuthGrant, error) { return s.app.ListMyGrants(r.Context()) })))
	if done || err != nil {
		return err
	}
	v.Title, v.Section = "Connected apps", "connected-apps"
	v.Flash = flash(r)
	lv.EmptyText = "No apps are connected to your account here. When an app or AI agent asks for access and you allow it on the consent page, it is listed here, and you can disconnect it at any time."
	v.Data = map[string]any{"Grants": grants, "List": lv}
	return s.page(w, r, "connected_apps", v)
}

func (s *Server) uiRevokeGrant(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.RevokeMyGrant(r.Context(), id(r)); err != nil {
		return err
	}
	return redirect(w, r, "/connected-apps?done=app-disconnected")
}
