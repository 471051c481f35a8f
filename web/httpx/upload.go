package httpx

import (
	"errors"
	"mime"
	"mime/multipart"
	"net/http"
)

// upload is one file part of a multipart request plus its text fields.
type Upload struct {
	File     multipart.File
	Filename string
	Type     string
	Size     int64
	Fields   map[string]string
	form     *multipart.Form
}

// Close releases the file and any temporary files of the form (the server
// removes them only for the request it created, not for a copy of it).
func (u *Upload) Close() error {
	err := u.File.Close()
	if u.form != nil {
		err = errors.Join(err, u.form.RemoveAll())
	}
	return err
}

// parseUpload reads a multipart/form-data body with one file field named
// field. The body is capped at MaxUploadBytes (413 beyond); a missing file or
// a wrong content type is 400.
func (s *Server) ParseUpload(w http.ResponseWriter, r *http.Request, field string) (*Upload, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, BadRequest("Content-Type", r.Header.Get("Content-Type"), "Content-Type must be multipart/form-data")
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxUploadBytes)
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &http.MaxBytesError{Limit: s.opts.MaxUploadBytes}
		}
		return nil, BadRequest("body", nil, "malformed multipart body: %s", err.Error())
	}
	f, hdr, err := r.FormFile(field)
	if err != nil {
		return nil, BadRequest(field, nil, "a file in the form field %q is required", field)
	}
	u := &Upload{File: f, Filename: hdr.Filename, Type: hdr.Header.Get("Content-Type"), Size: hdr.Size, Fields: map[string]string{}, form: r.MultipartForm}
	for k, v := range r.MultipartForm.Value {
		if len(v) > 0 {
			u.Fields[k] = v[0]
		}
	}
	return u, nil
}
