package ui

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
)

func init() {
	flashes["notifications-saved"] = "Notification preferences saved."
}

// uiNotificationRoutes registers the person's notifications page.
func (s *Server) uiNotificationRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/notifications", uiSignedIn, s.uiNotifications)
	page("POST", "/notifications", uiSignedIn, s.uiSaveNotifications)
}

func (s *Server) uiNotifications(w http.ResponseWriter, r *http.Request, v *view) error {
	st, err := s.app.MyNotificationSettings(r.Context())
	if err != nil {
		return err
	}
	v.Title, v.Section = "Notifications", "notifications"
	v.Flash = flash(r)
	v.Data = map[string]any{"S": st, "Labels": map[string]string{
		app.NotificationDeliveryMail: "E-mail at once", app.NotificationDigest: "Daily digest", app.NotificationOff: "Only list here"}}
	return s.page(w, r, "notifications", v)
}

func (s *Server) uiSaveNotifications(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	prefs := map[string]string{}
	for _, k := range app.NotificationKinds {
		if d := r.PostForm.Get(k.Kind); d != "" {
			prefs[k.Kind] = d
		}
	}
	if _, err := s.app.SetMyNotificationPreferences(r.Context(), prefs); err != nil {
		return err
	}
	return redirect(w, r, "/notifications?done=notifications-saved")
}
