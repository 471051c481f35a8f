package web

import (
	"errors"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

// ---- portal administration ----

func (s *Server) getTrustSettings(w http.ResponseWriter, r *http.Request) error {
	st, err := s.app.GetTrustSettings(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.settingsBody(r, st))
	return nil
}

func (s *Server) settingsBody(r *http.Request, st *app.TrustSettings) any {
	return struct {
		*app.TrustSettings
		PublicURL string `json:"publicUrl"`
	}{st, s.baseURL(r) + "/trust/" + st.Slug}
}

func (s *Server) updateTrustSettings(w http.ResponseWriter, r *http.Request) error {
	var in app.TrustSettingsPatch
	if err := decode(r, &in); err != nil {
		return err
	}
	st, err := s.app.UpdateTrustSettings(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.settingsBody(r, st))
	return nil
}

func pageOf[T any](items []T, p app.Page) app.List[T] {
	l := app.List[T]{Total: len(items), Items: []T{}}
	if off := p.Offset(); off < len(items) {
		l.Items = items[off:min(len(items), off+p.PerPage)]
	}
	return l
}

func (s *Server) listTrustDocuments(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	ds, err := s.app.ListTrustDocuments(r.Context(), r.URL.Query().Get("access"))
	if err != nil {
		return err
	}
	writeList(w, p, pageOf(ds, p))
	return nil
}

// createTrustDocument publishes an uploaded file (form field file; name,
// description and access are optional form fields, access defaults to nda).
func (s *Server) createTrustDocument(w http.ResponseWriter, r *http.Request) error {
	u, err := s.parseUpload(w, r, "file")
	if err != nil {
		return err
	}
	defer u.Close()
	in := app.TrustDocumentInput{}
	for k, dst := range map[string]**string{"name": &in.Name, "description": &in.Description, "access": &in.Access} {
		if v, ok := u.Fields[k]; ok {
			*dst = app.Ptr(v)
		}
	}
	ct := u.Type
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt == "" {
		ct = "application/octet-stream"
	}
	d, err := s.app.CreateTrustDocument(r.Context(), in, u.Filename, ct, u.File)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, d)
	return nil
}

func (s *Server) getTrustDocument(w http.ResponseWriter, r *http.Request) error {
	d, err := s.app.GetTrustDocument(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (s *Server) updateTrustDocument(w http.ResponseWriter, r *http.Request) error {
	var in app.TrustDocumentInput
	if err := decode(r, &in); err != nil {
		return err
	}
	d, err := s.app.UpdateTrustDocument(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (s *Server) deleteTrustDocument(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteTrustDocument(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) downloadTrustDocument(w http.ResponseWriter, r *http.Request) error {
	d, f, err := s.app.OpenTrustDocumentFile(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	defer f.Close()
	serveDocument(w, r, d, f)
	return nil
}

// serveDocument streams a document as an attachment.
func serveDocument(w http.ResponseWriter, r *http.Request, d *app.TrustDocument, f io.ReadSeeker) {
	w.Header().Set("Content-Type", d.ContentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": d.FileName}))
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	http.ServeContent(w, r, "", d.UpdatedAt, f)
}

func (s *Server) listNDASignatures(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListNDASignatures(r.Context(), p)
	if err != nil {
		return err
	}
	writeList(w, p, l)
	return nil
}

// ---- access administration ----

func (s *Server) listTrustRequests(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListTrustRequests(r.Context(), r.URL.Query().Get("status"), p)
	if err != nil {
		return err
	}
	writeList(w, p, l)
	return nil
}

func (s *Server) getTrustRequest(w http.ResponseWriter, r *http.Request) error {
	tr, err := s.app.GetTrustRequest(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tr)
	return nil
}

func (s *Server) decideTrustRequest(decision string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var in app.TrustDecision
		if r.ContentLength != 0 {
			if err := decode(r, &in); err != nil {
				return err
			}
		}
		tr, err := s.app.DecideTrustRequest(r.Context(), pathID(r, "id"), decision, in)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, tr)
		return nil
	}
}

func (s *Server) listTrustDownloads(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListTrustDownloads(r.Context(), r.URL.Query().Get("requestId"), p)
	if err != nil {
		return err
	}
	writeList(w, p, l)
	return nil
}

// ---- public JSON ----

// visitor is who a public request comes from: the client address (behind
// a trusted proxy, the one it forwarded) and the user agent.
func (s *Server) visitor(r *http.Request) app.Visitor {
	return app.Visitor{IP: s.clientAddress(r), UserAgent: r.UserAgent()}
}

// publicDocument is a portal document as visitors see it.
type publicDocument struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Access      string `json:"access"`
	FileName    string `json:"fileName"`
	Size        int64  `json:"size"`
	DownloadURL string `json:"downloadUrl,omitempty"`
}

func (s *Server) publicPortalBody(r *http.Request, tp *app.TrustPortal) any {
	docs := make([]publicDocument, 0, len(tp.Documents))
	for _, d := range tp.Documents {
		pd := publicDocument{ID: d.ID, Name: d.Name, Description: d.Description, Access: d.Access, FileName: d.FileName, Size: d.Size}
		if d.Access == app.TrustPublic {
			pd.DownloadURL = s.baseURL(r) + "/v1/trust/" + tp.Slug + "/documents/" + d.ID
		}
		docs = append(docs, pd)
	}
	return struct {
		*app.TrustPortal
		Documents     []publicDocument `json:"documents"`
		RequestAccess string           `json:"requestAccessUrl"`
	}{tp, docs, s.baseURL(r) + "/v1/trust-access/" + tp.Slug + "/requests"}
}

func (s *Server) getPublicPortal(w http.ResponseWriter, r *http.Request) error {
	tp, err := s.app.TrustPortalBySlug(r.Context(), mux.Vars(r)["slug"])
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.publicPortalBody(r, tp))
	return nil
}

func (s *Server) downloadPublicDocument(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	d, f, err := s.app.OpenPublicTrustDocument(r.Context(), v["slug"], v["documentId"], s.visitor(r))
	if err != nil {
		return err
	}
	defer f.Close()
	serveDocument(w, r, d, f)
	return nil
}

func (s *Server) createAccessRequest(w http.ResponseWriter, r *http.Request) error {
	var in app.TrustAccessRequestInput
	if err := decode(r, &in); err != nil {
		return err
	}
	slug := mux.Vars(r)["slug"]
	tr, token, err := s.app.RequestTrustAccess(r.Context(), slug, in, s.visitor(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": tr.ID, "status": tr.Status, "token": token,
		"accessUrl": s.baseURL(r) + "/trust/" + slug + "/access/" + token,
		"message":   "Sign the NDA with this token, then wait for the organization's decision. Keep the token: it is shown only once."})
	return nil
}

// ndaBody is what a visitor's token shows over JSON.
func ndaBody(va *app.VisitorAccess) map[string]any {
	return map[string]any{"requestId": va.Request.ID, "status": va.Request.Status, "ndaSignedAt": va.Request.NDASignedAt,
		"accessExpiresAt": va.Request.AccessExpiresAt, "granted": va.Granted, "ndaVersion": va.Portal.NDAVersion, "ndaText": va.Portal.NDAText,
		"organization": va.Portal.Name}
}

func (s *Server) getNDA(w http.ResponseWriter, r *http.Request) error {
	va, err := s.app.VisitorAccessByToken(r.Context(), mux.Vars(r)["token"])
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ndaBody(va))
	return nil
}

func (s *Server) signNDA(w http.ResponseWriter, r *http.Request) error {
	var in app.NDASignInput
	if err := decode(r, &in); err != nil {
		return err
	}
	token := mux.Vars(r)["token"]
	if _, err := s.app.SignNDA(r.Context(), token, in, s.visitor(r)); err != nil {
		return err
	}
	va, err := s.app.VisitorAccessByToken(r.Context(), token)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ndaBody(va))
	return nil
}

func (s *Server) listGrantedDocuments(w http.ResponseWriter, r *http.Request) error {
	token := mux.Vars(r)["token"]
	va, err := s.app.VisitorAccessByToken(r.Context(), token)
	if err != nil {
		return err
	}
	if !va.Granted {
		return app.Errorf(app.ErrForbidden, "access to the NDA documents has not been granted, or it has expired or been revoked")
	}
	docs := make([]publicDocument, 0, len(va.Documents))
	for _, d := range va.Documents {
		docs = append(docs, publicDocument{ID: d.ID, Name: d.Name, Description: d.Description, Access: d.Access, FileName: d.FileName,
			Size: d.Size, DownloadURL: s.baseURL(r) + "/v1/trust-access/access/" + token + "/documents/" + d.ID})
	}
	p := app.Page{Page: 1, PerPage: max(len(docs), 1)}
	writeList(w, p, app.List[publicDocument]{Items: docs, Total: len(docs)})
	return nil
}

func (s *Server) downloadGrantedDocument(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	d, f, err := s.app.OpenGatedTrustDocument(r.Context(), v["token"], v["documentId"], s.visitor(r))
	if err != nil {
		return err
	}
	defer f.Close()
	serveDocument(w, r, d, f)
	return nil
}

// ---- public HTML ----

var trustTpl = template.Must(template.New("trust").Parse(layoutHTML + `{{define "content"}}{{with .Data}}
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

var accessTpl = template.Must(template.New("access").Parse(layoutHTML + `{{define "content"}}{{with .Data}}
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

func portalPage(tp *app.TrustPortal, title string, data any) page {
	p := page{Title: title, Heading: tp.Title, Data: data}
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
	return renderPage(w, status, trustTpl, portalPage(tp, tp.Name+" trust center", trustPageData{P: tp, HasGated: gated, Error: msg, Form: form}))
}

func (s *Server) trustPage(w http.ResponseWriter, r *http.Request) error {
	tp, err := s.app.TrustPortalBySlug(r.Context(), mux.Vars(r)["slug"])
	if errors.Is(err, app.ErrNotFound) {
		return renderMessage(w, http.StatusNotFound, "Not found", "There is no published trust portal at this address.", true)
	}
	if err != nil {
		return err
	}
	return s.renderPortal(w, http.StatusOK, tp, app.TrustAccessRequestInput{}, "")
}

func (s *Server) trustRequestForm(w http.ResponseWriter, r *http.Request) error {
	slug := mux.Vars(r)["slug"]
	if s.crossSite(r) {
		return renderMessage(w, http.StatusForbidden, "Form refused", "The form must be sent from the trust portal itself.", true)
	}
	if err := r.ParseForm(); err != nil {
		return renderMessage(w, http.StatusBadRequest, "Form unreadable", "The form could not be read.", true)
	}
	in := app.TrustAccessRequestInput{Name: r.PostForm.Get("name"), Email: r.PostForm.Get("email"), Company: r.PostForm.Get("company"),
		Reason: r.PostForm.Get("reason")}
	_, token, err := s.app.RequestTrustAccess(r.Context(), slug, in, s.visitor(r))
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
			return renderMessage(w, http.StatusNotFound, "Not found", "There is no published trust portal at this address.", true)
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
		return renderMessage(w, http.StatusNotFound, "Link not valid", "This access link does not exist or has expired.", true)
	}
	if err != nil {
		return err
	}
	d := accessPageData{A: va, Token: token, Created: created, Error: msg,
		Link: s.baseURL(r) + "/trust/" + url.PathEscape(va.Portal.Slug) + "/access/" + token}
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
	return renderPage(w, status, accessTpl, portalPage(va.Portal, va.Portal.Name+" trust center: access", d))
}

func (s *Server) trustAccessPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderAccess(w, r, mux.Vars(r)["token"], http.StatusOK, false, "")
}

func (s *Server) trustNDAForm(w http.ResponseWriter, r *http.Request) error {
	token := mux.Vars(r)["token"]
	if s.crossSite(r) {
		return renderMessage(w, http.StatusForbidden, "Form refused", "The form must be sent from the trust portal itself.", true)
	}
	if err := r.ParseForm(); err != nil {
		return renderMessage(w, http.StatusBadRequest, "Form unreadable", "The form could not be read.", true)
	}
	in := app.NDASignInput{Name: r.PostForm.Get("name"), Email: r.PostForm.Get("email"), Accept: r.PostForm.Get("accept") == "true"}
	_, err := s.app.SignNDA(r.Context(), token, in, s.visitor(r))
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
		return renderMessage(w, http.StatusNotFound, "Link not valid", "This access link does not exist or has expired.", true)
	case err != nil:
		return err
	}
	http.Redirect(w, r, "/trust/"+url.PathEscape(mux.Vars(r)["slug"])+"/access/"+token, http.StatusSeeOther)
	return nil
}
