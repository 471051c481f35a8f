package ui

import (
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

// attachmentPage is a detail page that lists the files attached to its
// resource: the section (first path segment) and the API's entity type.
type attachmentPage struct {
	section, entityType string
}

// attachmentPages are the detail pages of the entity types the API
// attaches files to.
var attachmentPages = []attachmentPage{
	{"controls", app.EntityControl},
	{"findings", app.EntityFinding},
	{"frameworks", app.EntityFramework},
	{"incidents", app.EntityIncident},
	{"people", app.EntityPerson},
	{"policies", app.EntityPolicy},
	{"risks", app.EntityRisk},
	{"vendors", app.EntityVendor},
}

// uiAttachmentRoutes registers uploading files to, and downloading them
// from, the detail pages of vendors, risks, findings, controls, people,
// policies and frameworks: everyone who can open the page downloads, the
// roles the API lets attach files (owners, admins, auditors signed in as
// people) upload.
func (s *Server) uiAttachmentRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	details := map[string]uiHandler{"controls": s.uiControl, "findings": s.uiFinding, "frameworks": s.uiFramework, "incidents": s.uiIncident,
		"people": s.uiPerson, "policies": s.uiPolicy, "risks": s.uiRisk, "vendors": s.uiVendor}
	for _, p := range attachmentPages {
		page("POST", "/"+p.section+"/{id}/attachments", uiReview, s.uiUploadAttachment(p, details[p.section]))
		page("GET", "/"+p.section+"/{id}/attachments/{attachmentId}", uiSignedIn, s.uiDownloadAttachment(p))
	}
}

func init() {
	flashes["attached"] = "File attached."
}

// uiAttachment is an attachment with its uploader's name and download link.
type uiAttachment struct {
	app.Attachment
	Uploader string
	URL      string
}

// tooLargeQuery marks a detail page reached after an upload over the limit.
const tooLargeQuery = "attachment=too-large"

// tooLargeUploadBack is where an attachment upload over the size limit is
// sent: back to its page, which says so next to the file field. It is ""
// for any other request or error. The form could not be read, so nothing
// was done; the redirect only shows a page.
func tooLargeUploadBack(r *http.Request, err error) string {
	var mbe *http.MaxBytesError
	if r.Method != http.MethodPost || !errors.As(err, &mbe) {
		return ""
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) != 3 || parts[1] == "" || parts[2] != "attachments" {
		return ""
	}
	for _, p := range attachmentPages {
		if p.section == parts[0] {
			return "/" + p.section + "/" + url.PathEscape(parts[1]) + "?" + tooLargeQuery + "#attachments"
		}
	}
	return ""
}

// uploadLimit is the upload size limit as people read it.
func (s *Server) uploadLimit() string { return HumanSize(s.opts.MaxUploadBytes) }

// addAttachments puts the files attached to a resource, the upload form's
// target and the size limit on the page's data.
func (s *Server) addAttachments(r *http.Request, v *view, entityType, section, entityID string) error {
	data, ok := v.Data.(map[string]any)
	if !ok || entityID == "" {
		return nil
	}
	l, err := s.app.ListAttachments(r.Context(), entityType, entityID, app.Page{Page: 1, PerPage: app.MaxPerPage})
	if errors.Is(err, app.ErrNotFound) {
		return nil // not assigned to an employee or contractor, or not an entity files attach to
	}
	if err != nil {
		return err
	}
	names := map[string]string{}
	if len(l.Items) > 0 {
		if names, err = s.actorNames(r); err != nil {
			return err
		}
	}
	base := "/" + section + "/" + url.PathEscape(entityID) + "/attachments"
	out := make([]uiAttachment, 0, len(l.Items))
	for _, at := range l.Items {
		out = append(out, uiAttachment{Attachment: at, Uploader: actorName(names, at.UploadedByType, at.UploadedByID),
			URL: base + "/" + url.PathEscape(at.ID)})
	}
	data["Attachments"] = out
	data["AttachmentsTotal"] = l.Total
	data["AttachmentAction"] = base
	data["UploadLimit"] = s.uploadLimit()
	data["UploadMaxBytes"] = s.opts.MaxUploadBytes
	if r.Method == http.MethodGet && r.URL.Query().Get("attachment") == "too-large" && v.Errors["attachmentFile"] == "" {
		if v.Errors == nil {
			v.Errors = map[string]string{}
		}
		v.Errors["attachmentFile"] = "The file was larger than the upload limit of " + s.uploadLimit() + " and was not attached. Choose a smaller file."
	}
	return nil
}

// uiUploadAttachment attaches the uploaded file to the page's resource; a
// missing or empty file, or a bad description, shows the page again with
// the message next to its field.
func (s *Server) uiUploadAttachment(p attachmentPage, detail uiHandler) uiHandler {
	return func(w http.ResponseWriter, r *http.Request, v *view) error {
		if r.MultipartForm != nil {
			defer func() { _ = r.MultipartForm.RemoveAll() }()
		}
		desc := r.PostFormValue("attachmentDescription")
		file, hdr, err := r.FormFile("attachmentFile")
		switch {
		case err != nil:
			v.Errors = map[string]string{"attachmentFile": "Choose a file to attach."}
		case hdr.Size == 0:
			_ = file.Close()
			v.Errors = map[string]string{"attachmentFile": "The file " + hdr.Filename + " is empty. Choose a file with content."}
		default:
			defer file.Close()
			_, err = s.app.CreateAttachment(r.Context(), app.AttachmentUpload{EntityType: p.entityType, EntityID: id(r), Name: hdr.Filename,
				ContentType: hdr.Header.Get("Content-Type"), Description: desc, Body: file})
			if err == nil {
				return redirect(w, r, "/"+p.section+"/"+url.PathEscape(id(r))+"?done=attached#attachments")
			}
			if !formErrors(err, v, r) {
				return err
			}
			// The form's own names: the page's other forms keep theirs.
			errs := map[string]string{}
			for f, msg := range v.Errors {
				switch f {
				case "description":
					errs["attachmentDescription"] = msg
				default:
					errs["attachmentFile"] = msg
				}
			}
			v.Errors = errs
		}
		v.Form, v.Status = url.Values{"attachmentDescription": {desc}}, http.StatusUnprocessableEntity
		return detail(w, r, v)
	}
}

// activeTypes are content types a browser could run or render as a page;
// they are served as plain bytes.
var activeTypes = []string{"text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml",
	"text/javascript", "application/javascript", "application/ecmascript", "text/ecmascript"}

// downloadType is the content type a file is served with: the one it was
// uploaded with, as the API serves it, unless it cannot be parsed or is
// active content.
func downloadType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "application/octet-stream"
	}
	for _, a := range activeTypes {
		if mt == a {
			return "application/octet-stream"
		}
	}
	return ct
}

// uiDownloadAttachment sends an attachment of the page's resource as a
// download (ranges work); another resource's attachment is not found.
func (s *Server) uiDownloadAttachment(p attachmentPage) uiHandler {
	return func(w http.ResponseWriter, r *http.Request, v *view) error {
		at, f, err := s.app.OpenAttachment(r.Context(), mux.Vars(r)["attachmentId"])
		if err != nil {
			return err
		}
		defer f.Close()
		if at.EntityType != p.entityType || at.EntityID != id(r) {
			return app.ErrNotFound
		}
		h := w.Header()
		h.Set("Content-Type", downloadType(at.Type))
		cd := mime.FormatMediaType("attachment", map[string]string{"filename": at.Name})
		if cd == "" {
			cd = "attachment"
		}
		h.Set("Content-Disposition", cd)
		h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
		h.Set("X-Content-SHA256", at.SHA256)
		http.ServeContent(w, r, "", at.CreatedAt, f)
		return nil
	}
}
