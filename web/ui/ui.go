package ui

import (
	"bytes"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	assets "github.com/compliance-appliance/compliance/embed"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/gorilla/mux"
)

// The web application: server-rendered pages for people signed in with the
// session cookie of /v1/auth/login. Its routes live on their own router,
// mounted for a fixed set of top-level sections outside /v1, so the API's
// router, its OpenAPI contract and its JSON errors stay as they are. Every
// page calls the same app services as the API.

// uiSections are the first path segments the web application owns.
var uiSections = map[string]bool{
	"":                    true,
	"api-keys":            true,
	"audit-log":           true,
	"assistant":           true,
	"brand.css":           true,
	"connected-apps":      true,
	"notifications":       true,
	"operator":            true,
	"context":             true,
	"controls":            true,
	"csrd":                true,
	"devices":             true,
	"evidence":            true,
	"search":              true,
	"finding-templates":   true,
	"findings":            true,
	"frameworks":          true,
	"incidents":           true,
	"pentests":            true,
	"integrations":        true,
	"cloud-security":      true,
	"jobs":                true,
	"knowledge-base":      true,
	"login":               true,
	"logout":              true,
	"my-work":             true,
	"oauth-apps":          true,
	"onboarding":          true,
	"org":                 true,
	"people":              true,
	"policies":            true,
	"questionnaires":      true,
	"risks":               true,
	"settings":            true,
	"soa":                 true,
	"sso":                 true,
	"static":              true,
	"task-templates":      true,
	"tasks":               true,
	"training":            true,
	"trust-requests":      true,
	"trust-settings":      true,
	"variables":           true,
	"vendors":             true,
	"webhooks":            true,
	"browser-automations": true,
	"browser-sessions":    true,
	"agent":               true,
}

// isUIPath reports whether a path belongs to the web application.
func IsPagePath(p string) bool {
	if p == "/" {
		return true
	}
	seg := strings.TrimPrefix(p, "/")
	if i := strings.IndexByte(seg, '/'); i >= 0 {
		seg = seg[:i]
	}
	return seg != "" && uiSections[seg]
}

// uiCSP lets pages load only the appliance's own stylesheet, script and
// images, and post forms only back to it.
const CSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// apiCSP is the policy of every other response.
const APICSP = "default-src 'none'; frame-ancestors 'none'"

// cspFor picks the Content-Security-Policy of a path.
func cspFor(p string) string {
	if IsPagePath(p) {
		return CSP
	}
	return APICSP
}

// Cookie names of the web application.
const (
	orgCookie       = "compliance_org"      // selected organization id
	uiLoginCSRF     = "compliance_ui_login" // double-submit token of the sign-in form
	CSRFField       = "csrf_token"
	uiLoginCSRFPath = "/login"
)

// uiHandler renders one page; the view carries the principal and CSRF token.
type uiHandler func(w http.ResponseWriter, r *http.Request, v *view) error

// view is the data of every page.
type view struct {
	Title   string
	Section string
	P       *app.Principal
	User    *app.User
	Orgs    []app.Membership
	OrgName string
	CSRF    string
	Path    string // request URI, for links back
	Flash   string
	Errors  map[string]string // field -> message
	Form    url.Values
	Data    any
	Status  int
	Assets  map[string]string
	Brand   string // version of /brand.css, "" when the organization has no colour
	Refresh int    // seconds after which the page reloads itself, 0 for never
	// SearchQuery fills the header's search box (the search page's query).
	SearchQuery string
	now         time.Time
	lastPage    string

	// Operator: the signed-in person is the appliance operator.
	Operator bool
}

// Can reports whether the signed-in person may take an action of a kind:
// "manage", "review", "keys", "audit", "self".
func (v *view) Can(kind string) bool {
	if v.P == nil {
		return false
	}
	switch kind {
	case "manage":
		return v.P.Can(app.CapManage)
	case "review":
		return v.P.Can(app.CapReview)
	case "keys":
		return v.P.Can(app.CapManageKeys)
	case "audit":
		return v.P.Can(app.CapReadAudit)
	case "self":
		return v.P.Can(app.CapSelfService)
	}
	return false
}

// Err returns the message of a field, or "".
func (v *view) Err(field string) string { return v.Errors[field] }

// Inv marks a field invalid for assistive technology and ties it to its
// message, or returns nothing when the field is fine.
func (v *view) Inv(field string) template.HTMLAttr {
	if v.Errors[field] == "" {
		return ""
	}
	return template.HTMLAttr(`aria-invalid="true" aria-describedby="` + template.HTMLEscapeString(fieldID(field)) + `-error"`)
}

// fieldID makes a field name usable as an element id.
func fieldID(field string) string {
	return strings.NewReplacer("[", "-", "]", "", ".", "-").Replace(field)
}

// Val returns the submitted value of a field, or def.
func (v *view) Val(field, def string) string {
	if v.Form != nil {
		if _, ok := v.Form[field]; ok {
			return v.Form.Get(field)
		}
	}
	return def
}

// ui holds the web application's router and templates.
type ui struct {
	router *mux.Router
	pages  map[string]*template.Template
	static fs.FS
	Assets map[string]string // file -> content hash
}

func (s *Server) newUI() (*ui, error) {
	static, err := fs.Sub(assets.UI, "ui/static")
	if err != nil {
		return nil, err
	}
	parsed, err := loadUITemplates(static)
	if err != nil {
		return nil, err
	}
	u := &ui{router: mux.NewRouter(), pages: parsed.pages, static: static, Assets: parsed.assets}
	u.router.Use(s.LabelRoute)
	rt := u.router
	rt.NotFoundHandler = s.uiWrap(uiPublic, func(w http.ResponseWriter, r *http.Request, v *view) error { return app.ErrNotFound })
	rt.MethodNotAllowedHandler = s.uiWrap(uiPublic, func(w http.ResponseWriter, r *http.Request, v *view) error {
		return &httpx.HTTPError{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Msg: "This address does not accept that kind of request."}
	})
	page := func(method, p string, acc uiAccess, h uiHandler) { rt.Handle(p, s.uiWrap(acc, h)).Methods(method) }
	rt.PathPrefix("/static/").Methods("GET", "HEAD").HandlerFunc(s.uiStatic)
	page("GET", "/login", uiPublic, s.uiLoginPage)
	page("POST", "/login", uiPublic, s.uiLoginSubmit)
	page("POST", "/logout", uiSignedIn, s.uiLogout)
	page("POST", "/org", uiSignedIn, s.uiSwitchOrg)
	s.uiPageRoutes(page)
	s.uiSAMLACSRoute(rt)
	return u, nil
}

// uiAccess says who may open a page.
type uiAccess struct {
	public bool
	cap    app.Capability
}

var (
	uiPublic   = uiAccess{public: true}
	uiSignedIn = uiAccess{cap: app.CapRead}
	uiManage   = uiAccess{cap: app.CapManage}
	uiReview   = uiAccess{cap: app.CapReview}
	uiSelf     = uiAccess{cap: app.CapSelfService}
	uiKeys     = uiAccess{cap: app.CapManageKeys}
	uiAudit    = uiAccess{cap: app.CapReadAudit}
)

// uiWrap authenticates by session cookie (sending people without a valid
// session to sign-in and back), checks the CSRF token of every form post
// and the role, then runs the page and renders its error, if any, as a page.
func (s *Server) uiWrap(acc uiAccess, h uiHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := &view{Path: r.URL.RequestURI(), Assets: s.webui.Assets, now: s.app.Now()}
		token := s.Sess.Token(r)
		var info *app.SessionInfo
		if token != "" {
			var err error
			if info, err = s.app.AuthenticateSession(r.Context(), token); err != nil {
				if !errors.Is(err, app.ErrUnauthenticated) {
					s.uiError(w, r, v, err)
					return
				}
				info = nil
			}
		}
		if info == nil && !acc.public {
			s.toLogin(w, r, token != "" || hasCookie(r, httpx.SessionCookie))
			return
		}
		if !httpx.SafeMethod(r.Method) {
			if err := s.parseForm(w, r); err != nil {
				if to := tooLargeUploadBack(r, err); to != "" {
					_ = redirect(w, r, to)
					return
				}
				s.uiError(w, r, v, err)
				return
			}
			if info != nil && !s.Sess.ValidCSRF(token, r.PostFormValue(CSRFField)) {
				s.uiError(w, r, v, &httpx.HTTPError{Status: http.StatusForbidden, Code: "forbidden",
					Msg: "This form has expired or did not come from this site. Go back, reload the page and try again."})
				return
			}
		}
		if info != nil {
			p, err := s.uiPrincipal(r, info)
			if err != nil {
				s.uiError(w, r, v, err)
				return
			}
			v.P, v.User, v.Orgs, v.CSRF = p, info.User, info.Organizations, s.Sess.CSRFToken(token)
			for _, m := range info.Organizations {
				if m.OrganizationID == p.OrgID {
					v.OrgName = m.Name
				}
			}
			if hd, ok := r.Context().Value(httpx.HolderKey{}).(*httpx.PrincipalHolder); ok {
				hd.Principal = p
			}
			r = r.WithContext(app.WithPrincipal(r.Context(), p))
			v.Brand = s.brandVersion(r.Context())
			v.Operator = s.app.IsOperator(r.Context())
			if !acc.public {
				if err := p.Require(acc.cap); err != nil {
					s.uiError(w, r, v, err)
					return
				}
			}
		}
		if err := h(w, r, v); err != nil {
			s.uiError(w, r, v, err)
		}
	})
}

func hasCookie(r *http.Request, name string) bool {
	_, err := r.Cookie(name)
	return err == nil
}

// uiPrincipal picks the organization: the one chosen with the switcher if
// the person still belongs to it, else their first.
func (s *Server) uiPrincipal(r *http.Request, info *app.SessionInfo) (*app.Principal, error) {
	if len(info.Organizations) == 0 {
		return nil, app.Errorf(app.ErrForbidden, "you are not an active member of any organization")
	}
	orgID := info.Organizations[0].OrganizationID
	if c, err := r.Cookie(orgCookie); err == nil {
		for _, m := range info.Organizations {
			if m.OrganizationID == c.Value {
				orgID = c.Value
			}
		}
	}
	return app.PrincipalFor(info.User, info.Organizations, orgID, app.AuthSession)
}

// parseForm reads a urlencoded or multipart form, within the upload limit.
func (s *Server) parseForm(w http.ResponseWriter, r *http.Request) error {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxUploadBytes)
	var err error
	if mt == "multipart/form-data" {
		err = r.ParseMultipartForm(8 << 20)
	} else {
		err = r.ParseForm()
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &http.MaxBytesError{Limit: s.opts.MaxUploadBytes}
	}
	if err != nil {
		return &httpx.HTTPError{Status: http.StatusBadRequest, Code: "validation_error", Msg: "The form could not be read."}
	}
	return nil
}

// toLogin sends the person to sign-in, remembering where they were going.
func (s *Server) toLogin(w http.ResponseWriter, r *http.Request, expired bool) {
	next := r.URL.RequestURI()
	if !httpx.SafeMethod(r.Method) {
		next = "/"
		if ref, err := url.Parse(r.Referer()); err == nil && ref.Host == r.Host {
			next = localPath(ref.RequestURI())
		}
	}
	q := url.Values{}
	if next != "/" {
		q.Set("next", next)
	}
	if expired {
		q.Set("expired", "1")
		s.Sess.ClearCookie(w, r)
	}
	target := "/login"
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// localPath returns p if it is a path on this site, else "/": sign-in never
// redirects elsewhere.
func localPath(p string) string {
	if p == "" || p[0] != '/' || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\r\n") {
		return "/"
	}
	u, err := url.Parse(p)
	if err != nil || u.Host != "" || u.Scheme != "" || !IsPagePath(u.Path) || u.Path == "/login" {
		return "/"
	}
	return p
}

// uiError renders an error as a page with the fitting status.
func (s *Server) uiError(w http.ResponseWriter, r *http.Request, v *view, err error) {
	status, _, msg, _ := s.Classify(err)
	if status >= 500 {
		s.log.ErrorContext(r.Context(), "page failed", slog.String("request_id", httpx.RequestID(r)),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("error", err))
		msg = "Something went wrong on our side. The error was logged with request id " + httpx.RequestID(r) + "."
	}
	title := map[int]string{400: "Check your input", 403: "Not allowed", 404: "Page not found", 405: "Not allowed",
		409: "Conflict", 413: "File too large", 429: "Too many attempts"}[status]
	if title == "" {
		title = "Something went wrong"
	}
	if status == http.StatusNotFound {
		msg = "There is nothing here, or it belongs to an organization you are not signed in to."
	}
	if status == http.StatusForbidden && errors.Is(err, app.ErrForbidden) && !strings.Contains(msg, "plan") {
		msg = "Your role does not allow this. Ask an owner or admin of the organization if you need it."
	}
	v.Title, v.Status = title, status
	v.Data = map[string]any{"Message": msg, "RequestID": httpx.RequestID(r)}
	s.render(w, r, status, "error", v)
}

// render executes a page template into a buffer, then writes it.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, v *view) {
	t, ok := s.webui.pages[name]
	if !ok {
		s.log.Error("no such page template", slog.String("page", name))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		s.log.ErrorContext(r.Context(), "render page", slog.String("request_id", httpx.RequestID(r)), slog.String("page", name), slog.Any("error", err))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", CSP)
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// page renders a page with status 200.
func (s *Server) page(w http.ResponseWriter, r *http.Request, name string, v *view) error {
	status := v.Status
	if status == 0 {
		status = http.StatusOK
	}
	s.render(w, r, status, name, v)
	return nil
}

// redirect answers a form post with 303 to a page.
func redirect(w http.ResponseWriter, r *http.Request, to string) error {
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// formErrors turns a validation error into per-field messages; it returns
// false for any other error.
func formErrors(err error, v *view, r *http.Request) bool {
	var ve *app.ValidationError
	if !errors.As(err, &ve) {
		return false
	}
	v.Errors = map[string]string{}
	for _, f := range ve.FieldNames() {
		msg := ve.Msgs[f]
		if msg == "" {
			msg = f + ": " + strings.ReplaceAll(ve.Fields[f], "_", " ")
		}
		v.Errors[f] = msg
	}
	v.Form = r.PostForm
	v.Status = http.StatusUnprocessableEntity
	return true
}

func (s *Server) uiStatic(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	b, err := fs.ReadFile(s.webui.static, name)
	if err != nil || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	if r.URL.Query().Get("v") == s.webui.Assets[name] {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(b)
}

// --- sign-in, sign-out, organization switcher ---

func (s *Server) uiLoginPage(w http.ResponseWriter, r *http.Request, v *view) error {
	next := localPath(r.URL.Query().Get("next"))
	if v.P != nil {
		return redirect(w, r, next)
	}
	return s.loginForm(w, r, v, http.StatusOK, next, "", "")
}

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request, v *view, status int, next, email, msg string) error {
	tok := httpx.RandomString(24)
	http.SetCookie(w, &http.Cookie{Name: uiLoginCSRF, Value: tok, Path: uiLoginCSRFPath, HttpOnly: true,
		Secure: s.Sess.Secure || r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	if msg == "" && r.URL.Query().Get("expired") == "1" {
		v.Flash = "Your session has ended. Sign in again to continue."
	}
	v.Title, v.Status = "Sign in", status
	v.Data = map[string]string{"Next": next, "Email": email, "Error": msg, "Token": tok}
	return s.page(w, r, "login", v)
}

func (s *Server) uiLoginSubmit(w http.ResponseWriter, r *http.Request, v *view) error {
	next := localPath(r.PostFormValue("next"))
	email := strings.TrimSpace(r.PostFormValue("email"))
	c, err := r.Cookie(uiLoginCSRF)
	if err != nil || c.Value == "" || r.PostFormValue(CSRFField) != c.Value {
		return s.loginForm(w, r, v, http.StatusForbidden, next, email, "The sign-in form expired. Please try again.")
	}
	res, err := s.app.Login(r.Context(), email, r.PostFormValue("password"), httpx.ClientIP(r), r.UserAgent())
	var te *app.ThrottleError
	switch {
	case errors.As(err, &te):
		w.Header().Set("Retry-After", strconv.Itoa(te.RetrySeconds()))
		return s.loginForm(w, r, v, http.StatusTooManyRequests, next, email, te.Error())
	case errors.Is(err, app.ErrUnauthenticated):
		return s.loginForm(w, r, v, http.StatusUnauthorized, next, email, "The email or password is not right.")
	case errors.Is(err, app.ErrForbidden):
		// The organization requires single sign-on (app.passwordAllowed).
		return s.loginForm(w, r, v, http.StatusForbidden, next, email, err.Error())
	case err != nil:
		return err
	}
	if err := s.Sess.SetCookie(w, r, res.Token, res.Session.ExpiresAt.Sub(res.Session.CreatedAt)); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: uiLoginCSRF, Value: "", Path: uiLoginCSRFPath, MaxAge: -1})
	return redirect(w, r, next)
}

func (s *Server) uiLogout(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.Logout(r.Context(), s.Sess.Token(r)); err != nil {
		return err
	}
	s.Sess.ClearCookie(w, r)
	http.SetCookie(w, &http.Cookie{Name: orgCookie, Value: "", Path: "/", MaxAge: -1})
	return redirect(w, r, "/login")
}

func (s *Server) uiSwitchOrg(w http.ResponseWriter, r *http.Request, v *view) error {
	id := r.PostFormValue("organization")
	for _, m := range v.Orgs {
		if m.OrganizationID == id {
			http.SetCookie(w, &http.Cookie{Name: orgCookie, Value: id, Path: "/", HttpOnly: true,
				Secure: s.Sess.Secure || r.TLS != nil, SameSite: http.SameSiteLaxMode})
			// Ids of the previous organization mean nothing in the new one.
			return redirect(w, r, "/")
		}
	}
	return app.ErrNotFound
}
