package ui

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

// uiAdminRoutes registers people and devices, organization settings and
// branding, API keys, webhooks with their delivery log, and the audit log.
func (s *Server) uiAdminRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/people", uiSignedIn, s.uiPeople)
	page("GET", "/people/{id}", uiSignedIn, s.uiPerson)

	page("GET", "/settings", uiSignedIn, s.uiSettings)
	page("POST", "/settings", uiManage, s.uiUpdateSettings)
	page("POST", "/settings/branding", uiManage, s.uiUpdateBranding)

	page("GET", "/api-keys", uiKeys, s.uiAPIKeys)
	page("POST", "/api-keys", uiKeys, s.uiCreateAPIKey)
	page("POST", "/api-keys/{id}/revoke", uiKeys, s.uiRevokeAPIKey)

	page("GET", "/webhooks", uiManage, s.uiWebhooks)
	page("POST", "/webhooks", uiManage, s.uiCreateWebhook)
	page("GET", "/webhooks/{id}", uiManage, s.uiWebhook)
	page("POST", "/webhooks/{id}/deliveries/{deliveryId}/redeliver", uiManage, s.uiRedeliver)

	page("GET", "/audit-log", uiAudit, s.uiAuditLog)
}

// --- people and devices ---

func (s *Server) uiPeople(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	f := app.PersonFilter{Role: q.Get("role"), Inactive: q.Get("inactive") == "1"}
	f.Source, f.TwoFactor = q.Get("source"), q.Get("twoFactor")
	lv, items, done, err := runList(w, r, v, personList(func(p app.Page) ([]app.Person, int, error) {
		f.Page = p
		l, err := s.app.ListPeople(r.Context(), f)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	roles := make([]string, 0, len(app.Roles))
	for _, ro := range app.Roles {
		roles = append(roles, string(ro))
	}
	if v.Form == nil || r.Method == http.MethodGet {
		v.Form = q
	}
	v.Title, v.Section = "People", "people"
	lv.EmptyText = "Nobody here yet."
	if v.Can("manage") {
		lv.EmptyHref, lv.EmptyAction = "#person-name", "Add a person"
	}
	v.Data = map[string]any{"People": items, "List": lv, "Roles": roles, "MemberRoles": memberRoles(),
		"Sources": app.PersonSources, "TwoFactorFilterValues": app.TwoFactorFilterValues}
	return s.page(w, r, "people", v)
}

func (s *Server) uiPerson(w http.ResponseWriter, r *http.Request, v *view) error {
	p, err := s.app.GetPerson(r.Context(), id(r))
	if err != nil {
		return err
	}
	devs, err := s.app.ListDevices(r.Context(), app.DeviceFilter{PersonID: p.ID, Page: app.Page{Page: 1, PerPage: app.MaxPerPage}})
	if err != nil {
		return err
	}
	v.Title, v.Section = p.Name, "people"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = map[string]any{"Person": p, "Devices": devs.Items, "MemberRoles": memberRoles()}
	if err := s.addDeviceChoices(r, v); err != nil {
		return err
	}
	if err := s.addAttachments(r, v, app.EntityPerson, "people", p.ID); err != nil {
		return err
	}
	return s.page(w, r, "person", v)
}

// --- organization settings ---

func (s *Server) settingsPage(w http.ResponseWriter, r *http.Request, v *view) error {
	o, err := s.app.GetOrganization(r.Context())
	if err != nil {
		return err
	}
	v.Title, v.Section = "Organization settings", "settings"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = map[string]any{"O": o}
	return s.page(w, r, "settings", v)
}

func (s *Server) uiSettings(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.settingsPage(w, r, v)
}

func (s *Server) uiUpdateSettings(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	_, err := s.app.UpdateOrganization(r.Context(), app.OrganizationPatch{Name: app.Ptr(f.Get("name")), Slug: app.Ptr(f.Get("slug")),
		Website: optional(f, "website")})
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.settingsPage(w, r, v)
	}
	return redirect(w, r, "/settings?done=saved")
}

func (s *Server) uiUpdateBranding(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	_, err := s.app.UpdateBranding(r.Context(), app.BrandingPatch{DisplayName: optional(f, "displayName"),
		PrimaryColor: optional(f, "primaryColor"), LogoURL: optional(f, "logoUrl")})
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.settingsPage(w, r, v)
	}
	return redirect(w, r, "/settings?done=saved")
}

// --- API keys ---

func (s *Server) apiKeysPage(w http.ResponseWriter, r *http.Request, v *view, created *app.APIKey) error {
	lv, keys, done, err := runList(w, r, v, apiKeyList(func(p app.Page) ([]app.APIKey, int, error) {
		if p.Page > 1 {
			return nil, 0, nil
		}
		keys, err := s.app.ListAPIKeys(r.Context())
		return keys, len(keys), err
	}))
	if done || err != nil {
		return err
	}
	roles := make([]string, 0, len(app.Roles))
	for _, ro := range app.Roles {
		roles = append(roles, string(ro))
	}
	v.Title, v.Section = "API keys", "api-keys"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	lv.EmptyText, lv.EmptyHref, lv.EmptyAction = "No API keys yet: create one for scripts and integrations.", "#name", "Create a key"
	v.Data = map[string]any{"Keys": keys, "List": lv, "Created": created, "Roles": roles}
	return s.page(w, r, "apikeys", v)
}

func (s *Server) uiAPIKeys(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.apiKeysPage(w, r, v, nil)
}

// uiCreateAPIKey answers with the page itself, not a redirect: the
// plaintext key is shown this once and never put in a URL.
func (s *Server) uiCreateAPIKey(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.APIKeyCreate{Name: strings.TrimSpace(f.Get("name")), Role: f.Get("role")}
	if d := f.Get("expiresAt"); d != "" {
		if t, err := time.Parse("2006-01-02", d); err == nil {
			in.ExpiresAt = t.Format(time.RFC3339)
		} else {
			in.ExpiresAt = d
		}
	}
	k, err := s.app.CreateAPIKey(r.Context(), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.apiKeysPage(w, r, v, nil)
	}
	v.Status = http.StatusCreated
	return s.apiKeysPage(w, r, v, k)
}

func (s *Server) uiRevokeAPIKey(w http.ResponseWriter, r *http.Request, v *view) error {
	if err := s.app.RevokeAPIKey(r.Context(), id(r)); err != nil {
		return err
	}
	return redirect(w, r, "/api-keys?done=revoked")
}

// --- webhooks ---

func (s *Server) webhooksPage(w http.ResponseWriter, r *http.Request, v *view, created *app.Webhook) error {
	lv, items, done, err := runList(w, r, v, webhookList(func(p app.Page) ([]app.Webhook, int, error) {
		l, err := s.app.ListWebhooks(r.Context(), p)
		return l.Items, l.Total, err
	}))
	if done || err != nil {
		return err
	}
	v.Title, v.Section = "Webhooks", "webhooks"
	lv.EmptyText, lv.EmptyHref, lv.EmptyAction = "No webhooks yet: add one to have events sent to your systems.", "#url", "Add a webhook"
	v.Data = map[string]any{"Webhooks": items, "List": lv, "Created": created}
	return s.page(w, r, "webhooks", v)
}

func (s *Server) uiWebhooks(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.webhooksPage(w, r, v, nil)
}

// uiCreateWebhook shows the signing secret once, on the answer page.
func (s *Server) uiCreateWebhook(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	events := strings.FieldsFunc(f.Get("events"), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' })
	if len(events) == 0 {
		events = []string{"*"}
	}
	wh, err := s.app.CreateWebhook(r.Context(), app.WebhookInput{URL: app.Ptr(strings.TrimSpace(f.Get("url"))),
		Description: app.Ptr(f.Get("description")), Events: &events, Active: app.Ptr(true)})
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.webhooksPage(w, r, v, nil)
	}
	v.Status = http.StatusCreated
	return s.webhooksPage(w, r, v, wh)
}

func (s *Server) uiWebhook(w http.ResponseWriter, r *http.Request, v *view) error {
	wh, err := s.app.GetWebhook(r.Context(), id(r))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := app.DeliveryFilter{Status: q.Get("status"), Event: q.Get("event")}
	lv, items, done, err := runList(w, r, v, deliveryList(func(p app.Page) ([]app.Delivery, int, error) {
		f.Page = p
		l, err := s.app.ListDeliveries(r.Context(), wh.ID, f)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = q
	v.Title, v.Section = "Webhook "+wh.URL, "webhooks"
	v.Flash = flash(r)
	lv.EmptyText = "Nothing was delivered yet. Deliveries appear here when events happen."
	v.Data = map[string]any{"W": wh, "Deliveries": items, "List": lv, "Statuses": app.DeliveryStatuses}
	return s.page(w, r, "webhook", v)
}

func (s *Server) uiRedeliver(w http.ResponseWriter, r *http.Request, v *view) error {
	if _, err := s.app.Redeliver(r.Context(), id(r), mux.Vars(r)["deliveryId"]); err != nil {
		return err
	}
	return redirect(w, r, "/webhooks/"+url.PathEscape(id(r))+"?done=redelivered")
}

// --- audit log ---

func (s *Server) uiAuditLog(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	f := app.AuditFilter{ResourceType: q.Get("resourceType"), ResourceID: q.Get("resourceId"), ActorID: q.Get("actorId"),
		Action: q.Get("action")}
	if t, err := time.Parse("2006-01-02", q.Get("from")); err == nil {
		f.From = &t
	}
	if t, err := time.Parse("2006-01-02", q.Get("to")); err == nil {
		t = t.AddDate(0, 0, 1)
		f.To = &t
	}
	lv, items, done, err := runList(w, r, v, auditList(func(p app.Page) ([]app.AuditRecord, int, error) {
		f.Page = p
		l, err := s.app.ListAuditLog(r.Context(), f)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = q
	v.Title, v.Section = "Audit log", "audit"
	lv.EmptyText = "Nothing recorded yet: every change made in the organization appears here."
	v.Data = map[string]any{"Records": items, "List": lv}
	return s.page(w, r, "audit", v)
}
