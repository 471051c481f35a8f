package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/web/httpx"
)

// notificationRoutes registers the routes of the handlers in this file.
func (s *Server) notificationRoutes(handle routeFunc) {
	handle("GET", "/v1/me/notification-preferences", httpx.CanRead, s.getMyNotificationPreferences)
	handle("PUT", "/v1/me/notification-preferences", httpx.CanRead, s.updateMyNotificationPreferences)
}

func (s *Server) getMyNotificationPreferences(w http.ResponseWriter, r *http.Request) error {
	out, err := s.app.MyNotificationSettings(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// notificationPreferencesBody is the body of PUT /v1/me/notification-preferences.
type notificationPreferencesBody struct {
	Preferences map[string]string `json:"preferences"`
}

func (s *Server) updateMyNotificationPreferences(w http.ResponseWriter, r *http.Request) error {
	var in notificationPreferencesBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	out, err := s.app.SetMyNotificationPreferences(r.Context(), in.Preferences)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}
