package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// mailSettingsRoutes registers the AdminMail group: the appliance
// operator's SMTP settings and test message (any other caller is 403).
func (s *Server) mailSettingsRoutes(handle routeFunc) {
	handle("GET", "/v1/admin/mail", httpx.CanRead, s.adminGetMail)
	handle("PUT", "/v1/admin/mail", httpx.CanRead, s.adminPutMail)
	handle("DELETE", "/v1/admin/mail", httpx.CanRead, s.adminDeleteMail)
	handle("POST", "/v1/admin/mail/test", httpx.CanRead, s.adminTestMail)
}

func (s *Server) adminGetMail(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.AdminGetMailSettings(r.Context())
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) adminPutMail(w http.ResponseWriter, r *http.Request) error {
	var in app.MailSettingsInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.AdminPutMailSettings(r.Context(), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) adminDeleteMail(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.AdminDeleteMailSettings(r.Context()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// mailTestBody is the body of POST /v1/admin/mail/test.
type mailTestBody struct {
	To string `json:"to"`
}

func (s *Server) adminTestMail(w http.ResponseWriter, r *http.Request) error {
	var in mailTestBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.AdminTestMail(r.Context(), in.To)
	return ok(w, http.StatusOK, v, err)
}
