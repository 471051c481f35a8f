package ui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

func init() {
	flashes["credentials-saved"] = "Credentials saved. Use Test to check them."
}

// uiUpdateConnectionCredentials replaces the credential fields the form
// filled; a blank field keeps the stored value (credentials are never
// shown, so the form cannot show them either).
func (s *Server) uiUpdateConnectionCredentials(w http.ResponseWriter, r *http.Request, v *view) error {
	c, err := s.app.GetConnection(r.Context(), id(r))
	if err != nil {
		return err
	}
	in := app.CredentialsUpdate{Credentials: map[string]json.RawMessage{}}
	for _, f := range c.CredentialFields {
		val := strings.TrimSpace(r.PostForm.Get("cred-" + f.Key))
		if val == "" {
			continue
		}
		raw, err := json.Marshal(val)
		if err != nil {
			return err
		}
		in.Credentials[f.Key] = raw
	}
	if len(in.Credentials) == 0 {
		return redirect(w, r, "/integrations/"+url.PathEscape(c.ID))
	}
	if _, err := s.app.UpdateConnectionCredentials(r.Context(), c.ID, in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.connectionPage(w, r, v, c.ID)
	}
	return redirect(w, r, "/integrations/"+url.PathEscape(c.ID)+"?done=credentials-saved")
}
