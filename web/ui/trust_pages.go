package ui

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/gorilla/mux"
)

// ---- public HTML ----

var trustTpl = template.Must(template.New("trust").Parse(httpx.LayoutHTML + `{{define "content"}}{{with .Data}}
{{if .P.Overview}}<section><p>{{.P.Overview}}</p>{{with .P.ContactEmail}}<p class="hint">Contact: {{.}}</p>{{end}}</section>{{end}}
<section><h2>Compliance</h2>
{{if .P.FrameworksPublished}}<table><thead><tr><th>Framework</th><th>Score</th><th>Controls implemented</th></tr></thead><tbody>
{{range .P.Frameworks}}<tr><td>{{.Name}}</td><td>{{with .Score}}{{.}}%{{else}}not computed{{end}}</td><td>{{.ControlsImplemented}} of {{.ControlsTotal}}{{if .ControlsInProgress}} ({{.ControlsInProgress}} in progress){{end}}</td></tr>
{{range .Controls}}<tr><td class="hint">&nbsp;&nbsp;{{.Name}}</td><td colspan="2"><span class="badge{{if eq .Status "implemented"}} ok{{end}}">{{.Status}}</span></td></tr>{{end}}
{{end}}</tbody></table>
{{else}}<p>No frameworks published.</p>{{end}}</section>
<section><h2>Documents</h2>
{{if .P.Documents}}<table><tbody>{{range .P.Documents}}<tr><td><strong>{{.Name}}</strong>{{if .Description}}<br><span class="hint">{{.Description}}</span>{{end}}</td>
<td>{{if eq .Access "public"}}<a href="/v1/trust/{{$.Data.P.Slug}}/documents/{{.ID}}">Download</a>{{else}}<span class="badge">NDA required</span>{{end}}</td></tr>{{end}}</tbody></table>
{{else}}<p>No documents published.</p>{{end}}</section>
{{if .HasGated}}<section><h2>Request access to NDA documents</h2>
{{if .Error}}<div class="error">{{.Error}}</div>{{end}}
<form method="post" action="/trust/{{.P.Slug}}/request">
<label for="name">Name</label><input type="text" id="name" name="name" required value="{{.Form.Name}}">
<label for="email">Work email</label><input type="email" id="email" name="email" required value="{{.Form.Email}}">
<label for="company">Company</label><input type="text" id="company" name="company" value="{{.Form.Company}}">
<label for="reason">Reason</label><textarea id="reason" name="reason">{{.Form.Reason}}</textarea>
<p><button type="submit">Request access</button></p></form></section>{{end}}
{{end}}{{end}}`))

var accessTpl = template.Must(template.New("access").Parse(httpx.LayoutHTML + `{{define "content"}}{{with .Data}}
{{if .Created}}<section><div class="notice"><p>Your request was recorded. This page is your personal link: bookmark it, it is the only way back and it is shown only now.</p>
<p><code>{{.Link}}</code></p></div></section>{{end}}
<section><h2>Your request</h2><p>{{.A.Request.Name}} ({{.A.Request.Email}}){{if .A.Request.Company}}, {{.A.Request.Company}}{{end}}</p>
<p>Status: <span class="badge">{{.Status}}</span></p></section>
{{if .Error}}<section><div class="error">{{.Error}}</div></section>{{end}}
{{if not .A.Request.NDASignedAt}}{{if eq .A.Request.Status "under_review"}}<section><h2>Non-disclosure agreement (version {{.A.Portal.NDAVersion}})</h2>
<pre>{{.A.Portal.NDAText}}</pre>
<form method="post" action="/trust/{{.A.Portal.Slug}}/access/{{.Token}}/nda">
<label for="name">Full name</label><input type="text" id="name" name="name" required>
<label for="email">Email (as in your request)</label><input type="email" id="email" name="email" required value="{{.A.Request.Email}}">
<label><input type="checkbox" name="accept" value="true" required> I have read and accept this agreement</label>
<p><button type="submit">Sign</button></p></form></section>{{end}}
{{else}}<section><p>You signed the NDA on {{.SignedAt}}.</p></section>{{end}}
{{if .A.Granted}}<section><h2>Documents</h2><p class="hint">Access until {{.Until}}. Every download is recorded.</p>
{{if .A.Documents}}<table><tbody>{{range .A.Documents}}<tr><td><strong>{{.Name}}</strong>{{if .Description}}<br><span class="hint">{{.Description}}</span>{{end}}</td>
<td><a href="/v1/trust-access/access/{{$.Data.Token}}/documents/{{.ID}}">Download</a></td></tr>{{end}}</tbody></table>
{{else}}<p>No NDA documents are published.</p>{{end}}</section>{{end}}
{{end}}{{end}}`))

// trustPageData feeds the portal page.
type trustPageData struct {
	P        *app.TrustPortal
	HasGated bool
	Error    string
	Form     app.TrustAccessRequestInput
}

// accessPageData feeds a visitor's access page.
type accessPageData struct {
	A        *app.VisitorAccess
	Token    string
	Link     string
	Created  bool
	Status   string
	SignedAt string
	Until    string
	Error    string
}

func portalPage(tp *app.TrustPortal, title string, data any) httpx.Page {
	p := httpx.Page{Title: title, Heading: tp.Title, Data: data}
	if p.Heading == "" {
		p.Heading = tp.Name + " trust center"
	}
	if tp.PrimaryColor != nil {
		p.Color = *tp.PrimaryColor
	}
	if tp.LogoURL != nil {
		p.Logo = *tp.LogoURL
	}
	return p
}

func (s *Server) renderPortal(w http.ResponseWriter, status int, tp *app.TrustPortal, form app.TrustAccessRequestInput, msg string) error {
	gated := false
	for _, d := range tp.Documents {
		gated = gated || d.Access == app.TrustNDA
	}
	return httpx.RenderPage(w, status, trustTpl, portalPage(tp, tp.Name+" trust center", trustPageData{P: tp, HasGated: gated, Error: msg, Form: form}))
}

func (s *Server) trustPage(w http.ResponseWriter, r *http.Request) error {
	tp, err := s.app.TrustPortalBySlug(r.Context(), mux.Vars(r)["slug"])
	if errors.Is(err, app.ErrNotFound) {
		return httpx.RenderMessage(w, http.StatusNotFound, "Not found", "There is no published trust portal at this address.", true)
	}
	if err != nil {
		return err
	}
	return s.renderPortal(w, http.StatusOK, tp, app.TrustAccessRequestInput{}, "")
}

func (s *Server) trustRequestForm(w http.ResponseWriter, r *http.Request) error {
	slug := mux.Vars(r)["slug"]
	if s.CrossSite(r) {
		return httpx.RenderMessage(w, http.StatusForbidden, "Form refused", "The form must be sent from the trust portal itself.", true)
	}
	if err := r.ParseForm(); err != nil {
		return httpx.RenderMessage(w, http.StatusBadRequest, "Form unreadable", "The form could not be read.", true)
	}
	in := app.TrustAccessRequestInput{Name: r.PostForm.Get("name"), Email: r.PostForm.Get("email"), Company: r.PostForm.Get("company"),
		Reason: r.PostForm.Get("reason")}
	_, token, err := s.app.RequestTrustAccess(r.Context(), slug, in, s.Visitor(r))
	if err != nil {
		var ve *app.ValidationError
		if errors.As(err, &ve) {
			tp, terr := s.app.TrustPortalBySlug(r.Context(), slug)
			if terr != nil {
				return terr
			}
			return s.renderPortal(w, http.StatusBadRequest, tp, in, ve.Error())
		}
		if errors.Is(err, app.ErrNotFound) {
			return httpx.RenderMessage(w, http.StatusNotFound, "Not found", "There is no published trust portal at this address.", true)
		}
		return err
	}
	return s.renderAccess(w, r, token, http.StatusCreated, true, "")
}

func (s *Server) renderAccess(w http.ResponseWriter, r *http.Request, token string, status int, created bool, msg string) error {
	va, err := s.app.VisitorAccessByToken(r.Context(), token)
	if err == nil && !strings.EqualFold(va.Portal.Slug, mux.Vars(r)["slug"]) {
		err = app.ErrNotFound
	}
	if errors.Is(err, app.ErrNotFound) {
		return httpx.RenderMessage(w, http.StatusNotFound, "Link not valid", "This access link does not exist or has expired.", true)
	}
	if err != nil {
		return err
	}
	d := accessPageData{A: va, Token: token, Created: created, Error: msg,
		Link: s.BaseURL(r) + "/trust/" + url.PathEscape(va.Portal.Slug) + "/access/" + token}
	switch {
	case va.Granted:
		d.Status = "access granted"
		d.Until = va.Request.AccessExpiresAt.Format("2 January 2006")
	case va.Request.Status == app.RequestApproved:
		d.Status = "access expired"
	case va.Request.Status == app.RequestUnderReview && va.Request.NDASignedAt == nil:
		d.Status = "waiting for your NDA signature"
	case va.Request.Status == app.RequestUnderReview:
		d.Status = "under review"
	default:
		d.Status = strings.ReplaceAll(va.Request.Status, "_", " ")
	}
	if va.Request.NDASignedAt != nil {
		d.SignedAt = va.Request.NDASignedAt.Format("2 January 2006 15:04 MST")
	}
	return httpx.RenderPage(w, status, accessTpl, portalPage(va.Portal, va.Portal.Name+" trust center: access", d))
}

func (s *Server) trustAccessPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderAccess(w, r, mux.Vars(r)["token"], http.StatusOK, false, "")
}

func (s *Server) trustNDAForm(w http.ResponseWriter, r *http.Request) error {
	token := mux.Vars(r)["token"]
	if s.CrossSite(r) {
		return httpx.RenderMessage(w, http.StatusForbidden, "Form refused", "The form must be sent from the trust portal itself.", true)
	}
	if err := r.ParseForm(); err != nil {
		return httpx.RenderMessage(w, http.StatusBadRequest, "Form unreadable", "The form could not be read.", true)
	}
	in := app.NDASignInput{Name: r.PostForm.Get("name"), Email: r.PostForm.Get("email"), Accept: r.PostForm.Get("accept") == "true"}
	_, err := s.app.SignNDA(r.Context(), token, in, s.Visitor(r))
	var ve *app.ValidationError
	switch {
	case errors.As(err, &ve):
		return s.renderAccess(w, r, token, http.StatusBadRequest, false, ve.Error())
	case errors.Is(err, app.ErrConflict):
		msg := "the NDA cannot be signed now"
		var pe *app.PublicError
		if errors.As(err, &pe) {
			msg = pe.Msg
		}
		return s.renderAccess(w, r, token, http.StatusConflict, false, msg)
	case errors.Is(err, app.ErrNotFound):
		return httpx.RenderMessage(w, http.StatusNotFound, "Link not valid", "This access link does not exist or has expired.", true)
	case err != nil:
		return err
	}
	http.Redirect(w, r, "/trust/"+url.PathEscape(mux.Vars(r)["slug"])+"/access/"+token, http.StatusSeeOther)
	return nil
}
