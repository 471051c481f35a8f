package httpx

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzUpload feeds arbitrary multipart bodies and content types to
// parseUpload: every failure is a 4xx (400 or 413), never a panic.
func FuzzUpload(f *testing.F) {
	ok := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nfirst\r\n--b--\r\n"
	f.Add("multipart/form-data; boundary=b", []byte(ok))
	f.Add("multipart/form-data; boundary=b", []byte(strings.Replace(ok, "--b--", "--b", 1)))
	f.Add("multipart/form-data; boundary=b", []byte(strings.Replace(ok, `name="file"`, `name="other"`, 1)))
	f.Add("multipart/form-data", []byte(ok))
	f.Add("multipart/form-data; boundary=\"\"", []byte("--\r\n\r\n"))
	f.Add("application/json", []byte(`{}`))
	f.Add("multipart/mixed; boundary=b", []byte(ok))
	f.Add("multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"../../etc/passwd\"\r\n\r\nx\r\n--b--\r\n"))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := &Server{log: log, opts: Options{MaxUploadBytes: 64 << 10}}
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		req := httptest.NewRequest("POST", "/v1/controls/x/evidence", bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		u, err := s.ParseUpload(rec, req, "file")
		if req.MultipartForm != nil {
			defer req.MultipartForm.RemoveAll()
		}
		if err != nil {
			if status, _, _, _ := s.Classify(err); status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
				t.Fatalf("parseUpload(%q): status %d: %v", contentType, status, err)
			}
			return
		}
		defer u.Close()
		if u.File == nil || u.Size < 0 {
			t.Fatalf("parseUpload(%q) returned no file", contentType)
		}
	})
}
