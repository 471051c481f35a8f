package api

import (
	"io"
	"mime"
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/gorilla/mux"
)

// trustRoutes registers the routes of the handlers in this file.
func (s *Server) trustRoutes(handle routeFunc) {
	handle("GET", "/v1/trust-portal/settings", httpx.CanRead, s.getTrustSettings)
	handle("PATCH", "/v1/trust-portal/settings", httpx.CanManage, s.updateTrustSettings)
	handle("GET", "/v1/trust-portal/documents", httpx.CanRead, s.listTrustDocuments)
	handle("POST", "/v1/trust-portal/documents", httpx.CanManage, s.createTrustDocument)
	handle("GET", "/v1/trust-portal/documents/{id}", httpx.CanRead, s.getTrustDocument)
	handle("PATCH", "/v1/trust-portal/documents/{id}", httpx.CanManage, s.updateTrustDocument)
	handle("DELETE", "/v1/trust-portal/documents/{id}", httpx.CanManage, s.deleteTrustDocument)
	handle("GET", "/v1/trust-portal/documents/{id}/download", httpx.CanRead, s.downloadTrustDocument)
	handle("GET", "/v1/trust-portal/nda-signatories", httpx.CanRead, s.listNDASignatures)

	handle("GET", "/v1/trust-access/admin/requests", httpx.CanRead, s.listTrustRequests)
	handle("GET", "/v1/trust-access/admin/requests/{id}", httpx.CanRead, s.getTrustRequest)
	handle("POST", "/v1/trust-access/admin/requests/{id}/approve", httpx.CanManage, s.decideTrustRequest(app.DecisionApprove))
	handle("POST", "/v1/trust-access/admin/requests/{id}/deny", httpx.CanManage, s.decideTrustRequest(app.DecisionDeny))
	handle("POST", "/v1/trust-access/admin/requests/{id}/revoke", httpx.CanManage, s.decideTrustRequest(app.DecisionRevoke))
	handle("GET", "/v1/trust-access/admin/downloads", httpx.CanRead, s.listTrustDownloads)

	handle("GET", "/v1/trust/{slug}", httpx.Public, s.getPublicPortal)
	handle("GET", "/v1/trust/{slug}/documents/{documentId}", httpx.Public, s.downloadPublicDocument)
	handle("POST", "/v1/trust-access/{slug}/requests", httpx.Public, s.createAccessRequest)
	handle("GET", "/v1/trust-access/nda/{token}", httpx.Public, s.getNDA)
	handle("POST", "/v1/trust-access/nda/{token}/sign", httpx.Public, s.signNDA)
	handle("GET", "/v1/trust-access/access/{token}/documents", httpx.Public, s.listGrantedDocuments)
	handle("GET", "/v1/trust-access/access/{token}/documents/{documentId}", httpx.Public, s.downloadGrantedDocument)
}

// ---- portal administration ----

func (s *Server) getTrustSettings(w http.ResponseWriter, r *http.Request) error {
	st, err := s.app.GetTrustSettings(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s.settingsBody(r, st))
	return nil
}

func (s *Server) settingsBody(r *http.Request, st *app.TrustSettings) any {
	return struct {
		*app.TrustSettings
		PublicURL string `json:"publicUrl"`
	}{st, s.BaseURL(r) + "/trust/" + st.Slug}
}

func (s *Server) updateTrustSettings(w http.ResponseWriter, r *http.Request) error {
	var in app.TrustSettingsPatch
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	st, err := s.app.UpdateTrustSettings(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s.settingsBody(r, st))
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
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	ds, err := s.app.ListTrustDocuments(r.Context(), r.URL.Query().Get("access"))
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(ds, p))
	return nil
}

// createTrustDocument publishes an uploaded file (form field file; name,
// description and access are optional form fields, access defaults to nda).
func (s *Server) createTrustDocument(w http.ResponseWriter, r *http.Request) error {
	u, err := s.ParseUpload(w, r, "file")
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
	httpx.WriteJSON(w, http.StatusCreated, d)
	return nil
}

func (s *Server) getTrustDocument(w http.ResponseWriter, r *http.Request) error {
	d, err := s.app.GetTrustDocument(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, d)
	return nil
}

func (s *Server) updateTrustDocument(w http.ResponseWriter, r *http.Request) error {
	var in app.TrustDocumentInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	d, err := s.app.UpdateTrustDocument(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, d)
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
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListNDASignatures(r.Context(), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

// ---- access administration ----

func (s *Server) listTrustRequests(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListTrustRequests(r.Context(), r.URL.Query().Get("status"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getTrustRequest(w http.ResponseWriter, r *http.Request) error {
	tr, err := s.app.GetTrustRequest(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, tr)
	return nil
}

func (s *Server) decideTrustRequest(decision string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var in app.TrustDecision
		if r.ContentLength != 0 {
			if err := httpx.Decode(r, &in); err != nil {
				return err
			}
		}
		tr, err := s.app.DecideTrustRequest(r.Context(), pathID(r, "id"), decision, in)
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, tr)
		return nil
	}
}

func (s *Server) listTrustDownloads(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListTrustDownloads(r.Context(), r.URL.Query().Get("requestId"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

// ---- public JSON ----

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
			pd.DownloadURL = s.BaseURL(r) + "/v1/trust/" + tp.Slug + "/documents/" + d.ID
		}
		docs = append(docs, pd)
	}
	return struct {
		*app.TrustPortal
		Documents     []publicDocument `json:"documents"`
		RequestAccess string           `json:"requestAccessUrl"`
	}{tp, docs, s.BaseURL(r) + "/v1/trust-access/" + tp.Slug + "/requests"}
}

func (s *Server) getPublicPortal(w http.ResponseWriter, r *http.Request) error {
	tp, err := s.app.TrustPortalBySlug(r.Context(), mux.Vars(r)["slug"])
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s.publicPortalBody(r, tp))
	return nil
}

func (s *Server) downloadPublicDocument(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	d, f, err := s.app.OpenPublicTrustDocument(r.Context(), v["slug"], v["documentId"], s.Visitor(r))
	if err != nil {
		return err
	}
	defer f.Close()
	serveDocument(w, r, d, f)
	return nil
}

func (s *Server) createAccessRequest(w http.ResponseWriter, r *http.Request) error {
	var in app.TrustAccessRequestInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	slug := mux.Vars(r)["slug"]
	tr, token, err := s.app.RequestTrustAccess(r.Context(), slug, in, s.Visitor(r))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, map[string]any{"id": tr.ID, "status": tr.Status, "token": token,
		"accessUrl": s.BaseURL(r) + "/trust/" + slug + "/access/" + token,
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
	httpx.WriteJSON(w, http.StatusOK, ndaBody(va))
	return nil
}

func (s *Server) signNDA(w http.ResponseWriter, r *http.Request) error {
	var in app.NDASignInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	token := mux.Vars(r)["token"]
	if _, err := s.app.SignNDA(r.Context(), token, in, s.Visitor(r)); err != nil {
		return err
	}
	va, err := s.app.VisitorAccessByToken(r.Context(), token)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, ndaBody(va))
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
			Size: d.Size, DownloadURL: s.BaseURL(r) + "/v1/trust-access/access/" + token + "/documents/" + d.ID})
	}
	p := app.Page{Page: 1, PerPage: max(len(docs), 1)}
	httpx.WriteList(w, p, app.List[publicDocument]{Items: docs, Total: len(docs)})
	return nil
}

func (s *Server) downloadGrantedDocument(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	d, f, err := s.app.OpenGatedTrustDocument(r.Context(), v["token"], v["documentId"], s.Visitor(r))
	if err != nil {
		return err
	}
	defer f.Close()
	serveDocument(w, r, d, f)
	return nil
}
