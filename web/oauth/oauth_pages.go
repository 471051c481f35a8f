package oauth

import (
	"crypto/subtle"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/ory/fosite"
)

// The sign-in and consent pages of the authorization server: server-side
// HTML that works without JavaScript. The consent form carries the
// session's CSRF token; the sign-in form a double-submit token.

const LoginCSRFCookie = "compliance_login_csrf"

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;padding:2rem 1rem;color:#1d2330}
main{max-width:28rem;margin:0 auto;background:#fff;border-radius:8px;padding:1.5rem 2rem;box-shadow:0 1px 3px #0002}
h1{font-size:1.3rem}label{display:block;margin:.8rem 0 .3rem;font-weight:600}
input[type=email],input[type=password],select{width:100%;padding:.5rem;box-sizing:border-box;font-size:1rem}
button{margin-top:1.2rem;padding:.6rem 1.2rem;font-size:1rem;border-radius:4px;border:1px solid #2a4fd6;background:#2a4fd6;color:#fff}
button.secondary{background:#fff;color:#2a4fd6}.error{color:#b00020;font-weight:600}.muted{color:#5b6270;font-size:.9rem}
ul{padding-left:1.2rem}
</style></head><body><main>
<h1>{{.Title}}</h1>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{if eq .Kind "login"}}
<p>Sign in to the compliance appliance to continue to <strong>{{.ClientName}}</strong>.</p>
<form method="post" action="/oauth/login">
<input type="hidden" name="login_csrf" value="{{.CSRF}}">
<input type="hidden" name="return" value="{{.Return}}">
<label for="email">Email</label><input id="email" type="email" name="email" value="{{.Email}}" autocomplete="username" required autofocus>
<label for="password">Password</label><input id="password" type="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
{{else if eq .Kind "consent"}}
<p><strong>{{.ClientName}}</strong> asks to act as you, <strong>{{.Email}}</strong>, with your role and permissions.</p>
<p class="muted">It will be sent back to {{.RedirectHost}}.</p>
<p>It asks to:</p><ul>{{range .Scopes}}<li>{{.}}</li>{{end}}</ul>
<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
{{if gt (len .Orgs) 1}}<label for="org">Organization</label><select id="org" name="organization_id">{{range .Orgs}}<option value="{{.OrganizationID}}">{{.Name}} ({{.Role}})</option>{{end}}</select>
{{else}}{{range .Orgs}}<input type="hidden" name="organization_id" value="{{.OrganizationID}}"><p>Organization: <strong>{{.Name}}</strong> ({{.Role}})</p>{{end}}{{end}}
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
<p class="muted">You can withdraw this at any time under your grants.</p>
{{end}}
</main></body></html>`))

type pageData struct {
	Kind, Title, Error, CSRF, Return, Email, ClientName, RedirectHost, Action string
	Scopes                                                                    []string
	Orgs                                                                      []app.Membership
}

var scopeText = map[string]string{
	app.ScopeRead:  "read your organization's compliance data",
	app.ScopeWrite: "create and change compliance data where your role allows",
}

func (s *Server) renderPage(w http.ResponseWriter, status int, d pageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	_ = pageTemplate.Execute(w, d)
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, status int, returnTo, clientName, email, msg string) {
	csrf := httpx.RandomString(24)
	http.SetCookie(w, &http.Cookie{Name: LoginCSRFCookie, Value: csrf, Path: "/oauth/", MaxAge: 3600, HttpOnly: true,
		Secure: s.Sess.Secure || r.TLS != nil, SameSite: http.SameSiteStrictMode})
	s.renderPage(w, status, pageData{Kind: "login", Title: "Sign in", Error: msg, CSRF: csrf, Return: returnTo, ClientName: clientName, Email: email})
}

// authorize is the authorization endpoint: sign-in when needed, then the
// consent page (GET) and the decision (POST).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	prov := s.oauth.provider
	ar, err := prov.NewAuthorizeRequest(ctx, r)
	if err != nil {
		prov.WriteAuthorizeError(ctx, w, ar, err)
		return nil
	}
	form := ar.GetRequestForm()
	if form.Get("code_challenge") == "" || form.Get("code_challenge_method") != "S256" {
		prov.WriteAuthorizeError(ctx, w, ar, fosite.ErrInvalidRequest.WithHint("PKCE with code_challenge_method=S256 is required; plain is not accepted."))
		return nil
	}
	client, _ := ar.GetClient().(*fositeClient)
	if client == nil {
		prov.WriteAuthorizeError(ctx, w, ar, fosite.ErrInvalidClient)
		return nil
	}
	returnTo := "/oauth/authorize?" + r.URL.RawQuery
	token := s.Sess.Token(r)
	var info *app.SessionInfo
	if token != "" {
		info, err = s.app.AuthenticateSession(ctx, token)
		if err != nil && !errors.Is(err, app.ErrUnauthenticated) {
			return err
		}
	}
	if info == nil {
		if r.Method == http.MethodPost {
			s.renderPage(w, http.StatusForbidden, pageData{Title: "Session ended", Error: "Your session ended. Go back to the app and start again."})
			return nil
		}
		s.loginPage(w, r, http.StatusOK, returnTo, client.name, "", "")
		return nil
	}
	orgs := info.Organizations
	if client.orgID != "" {
		var only []app.Membership
		for _, m := range orgs {
			if m.OrganizationID == client.orgID {
				only = append(only, m)
			}
		}
		orgs = only
	}
	if len(orgs) == 0 {
		s.renderPage(w, http.StatusForbidden, pageData{Title: "Not allowed", Error: "You are not an active member of an organization this app may be used with."})
		return nil
	}
	scopes := grantedScopes(ar)
	if r.Method != http.MethodPost {
		redirect := ar.GetRedirectURI()
		host := ""
		if redirect != nil {
			host = redirect.Scheme + "://" + redirect.Host
		}
		var texts []string
		for _, sc := range scopes {
			texts = append(texts, scopeText[sc])
		}
		s.renderPage(w, http.StatusOK, pageData{Kind: "consent", Title: "Allow access?", CSRF: s.Sess.CSRFToken(token), Email: info.User.Email,
			ClientName: client.name, RedirectHost: host, Action: returnTo, Scopes: texts, Orgs: orgs})
		return nil
	}
	if !s.Sess.ValidCSRF(token, r.PostFormValue("csrf_token")) {
		s.renderPage(w, http.StatusForbidden, pageData{Title: "Request refused", Error: "The form was not sent from this appliance (CSRF check failed)."})
		return nil
	}
	if r.PostFormValue("decision") != "approve" {
		prov.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHint("The person declined."))
		return nil
	}
	p, err := app.PrincipalFor(info.User, orgs, r.PostFormValue("organization_id"), app.AuthSession)
	if err != nil {
		s.renderPage(w, http.StatusBadRequest, pageData{Title: "Choose an organization", Error: "Choose one of your organizations."})
		return nil
	}
	grant, err := s.app.Consent(app.WithPrincipal(ctx, p), client.GetID(), scopes)
	if err != nil {
		return err
	}
	for _, sc := range scopes {
		ar.GrantScope(sc)
	}
	sess := &oauthSession{UserID: p.UserID, Email: p.Email, OrgID: p.OrgID, GrantID: grant.ID}
	resp, err := prov.NewAuthorizeResponse(ctx, ar, sess)
	if err != nil {
		prov.WriteAuthorizeError(ctx, w, ar, err)
		return nil
	}
	prov.WriteAuthorizeResponse(ctx, w, ar, resp)
	return nil
}

// oauthLogin handles the sign-in form of the authorization flow.
func (s *Server) oauthLogin(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return httpx.BadRequest("body", nil, "the form could not be read")
	}
	returnTo := r.PostFormValue("return")
	if !strings.HasPrefix(returnTo, "/oauth/authorize?") || strings.ContainsAny(returnTo, "\r\n") {
		returnTo = ""
	}
	clientName := "the app"
	if returnTo != "" {
		if q, err := url.ParseQuery(strings.TrimPrefix(returnTo, "/oauth/authorize?")); err == nil {
			if c, err := s.app.OAuthClient(r.Context(), q.Get("client_id")); err == nil {
				clientName = c.Name
			}
		}
	}
	c, err := r.Cookie(LoginCSRFCookie)
	got := r.PostFormValue("login_csrf")
	if err != nil || got == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(got)) != 1 {
		s.loginPage(w, r, http.StatusForbidden, returnTo, clientName, "", "The form expired or was not sent from this appliance. Try again.")
		return nil
	}
	email := r.PostFormValue("email")
	u, err := s.app.CheckPassword(r.Context(), email, r.PostFormValue("password"), s.Sess.ClientAddress(r))
	if err != nil {
		var te *app.ThrottleError
		var ve *app.ValidationError
		switch {
		case errors.As(err, &te):
			w.Header().Set("Retry-After", strconv.Itoa(te.RetrySeconds()))
			s.loginPage(w, r, http.StatusTooManyRequests, returnTo, clientName, email, te.Error())
		case errors.As(err, &ve), errors.Is(err, app.ErrUnauthenticated):
			s.loginPage(w, r, http.StatusUnauthorized, returnTo, clientName, email, "Wrong email or password.")
		default:
			return err
		}
		return nil
	}
	res, err := s.app.OpenSession(r.Context(), u, s.Sess.ClientAddress(r), r.UserAgent())
	if err != nil {
		return err
	}
	if err := s.Sess.SetCookie(w, r, res.Token, res.Session.ExpiresAt.Sub(res.Session.CreatedAt)); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: LoginCSRFCookie, Value: "", Path: "/oauth/", MaxAge: -1, Expires: time.Unix(1, 0)})
	if returnTo == "" {
		s.renderPage(w, http.StatusOK, pageData{Title: "Signed in", Error: ""})
		return nil
	}
	http.Redirect(w, r, returnTo, http.StatusSeeOther)
	return nil
}
