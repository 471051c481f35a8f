package ui

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// uiMoreRoutes registers the knowledge base, CSRD data points and the
// trust portal settings.
func (s *Server) uiMoreRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/knowledge-base", uiSignedIn, s.uiKnowledgeBase)
	page("POST", "/knowledge-base", uiManage, s.uiCreateKBEntry)
	page("GET", "/csrd", uiSignedIn, s.uiCSRD)
	page("POST", "/csrd", uiManage, s.uiCreateESG)
	page("GET", "/trust-settings", uiSignedIn, s.uiTrustSettings)
	page("POST", "/trust-settings", uiManage, s.uiUpdateTrustSettings)
}

// --- knowledge base ---

func (s *Server) kbPage(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	data := map[string]any{"Query": q.Get("q")}
	form := v.Form
	if term := strings.TrimSpace(q.Get("q")); term != "" {
		pg := uiPage(r, 25)
		hits, err := s.app.SearchKB(r.Context(), term, pg)
		if err != nil && !formErrors(err, v, r) {
			return err
		}
		answers := make([]any, 0, len(hits.Items))
		for _, h := range hits.Items {
			answers = append(answers, map[string]any{"Hit": h, "HTML": renderMarkdown(h.Answer)})
		}
		data["Hits"], data["Pager"] = answers, newPager(r, pg, hits.Total)
	} else {
		f := app.KBFilter{Tag: q.Get("tag")}
		lv, items, done, err := runList(w, r, v, kbList(func(p app.Page) ([]app.KBEntry, int, error) {
			f.Page = p
			l, err := s.app.ListKBEntries(r.Context(), f)
			return l.Items, l.Total, err
		}))
		if done {
			return err
		}
		if err != nil && !formErrors(err, v, r) {
			return err
		}
		entries := make([]any, 0, len(items))
		for _, e := range items {
			entries = append(entries, map[string]any{"E": e, "HTML": renderMarkdown(e.Answer)})
		}
		lv.EmptyText = "The knowledge base is empty."
		if v.Can("manage") {
			lv.EmptyText += " Add approved answers below; questionnaires are then answered from them."
		}
		data["Entries"], data["List"] = entries, lv
	}
	v.Form = form
	if v.Form == nil {
		v.Form = q
	}
	v.Title, v.Section = "Knowledge base", "kb"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = data
	return s.page(w, r, "kb", v)
}

func (s *Server) uiKnowledgeBase(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.kbPage(w, r, v)
}

func (s *Server) uiCreateKBEntry(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.KBEntryInput{Question: app.Ptr(f.Get("question")), Answer: app.Ptr(f.Get("answer")), SourceDocument: optional(f, "sourceDocument")}
	if tags := strings.FieldsFunc(f.Get("tags"), func(r rune) bool { return r == ',' }); len(tags) > 0 {
		for i := range tags {
			tags[i] = strings.TrimSpace(tags[i])
		}
		in.Tags = app.Some(tags)
	}
	if _, err := s.app.CreateKBEntry(r.Context(), in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.kbPage(w, r, v)
	}
	return redirect(w, r, "/knowledge-base?done=created")
}

// --- CSRD data points ---

func (s *Server) csrdPage(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	form := v.Form
	f := app.ESGFilter{Standard: q.Get("standard"), Period: q.Get("period")}
	lv, items, done, err := runList(w, r, v, csrdList(func(p app.Page) ([]app.ESGDataPoint, int, error) {
		f.Page = p
		l, err := s.app.ListESGDataPoints(r.Context(), f)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = form
	if v.Form == nil {
		v.Form = q
	}
	v.Title, v.Section = "CSRD data points", "csrd"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	lv.EmptyText = "No data points recorded."
	if v.Can("manage") {
		lv.EmptyText += " Record the first one below."
	}
	v.Data = map[string]any{"Points": items, "List": lv}
	return s.page(w, r, "csrd", v)
}

func (s *Server) uiCSRD(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.csrdPage(w, r, v)
}

func (s *Server) uiCreateESG(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.ESGDataPointInput{ESRSCode: app.Ptr(f.Get("esrsCode")), DataPointID: app.Ptr(f.Get("dataPointId")), Unit: app.Ptr(f.Get("unit")),
		Period: app.Ptr(f.Get("period")), Methodology: app.Ptr(f.Get("methodology")), Notes: app.Ptr(f.Get("notes"))}
	if val, err := strconv.ParseFloat(strings.TrimSpace(f.Get("value")), 64); err == nil {
		in.Value = &val
	} else if strings.TrimSpace(f.Get("value")) != "" {
		v.Errors, v.Form, v.Status = map[string]string{"value": "value must be a number"}, f, http.StatusUnprocessableEntity
		return s.csrdPage(w, r, v)
	}
	if _, err := s.app.CreateESGDataPoint(r.Context(), in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.csrdPage(w, r, v)
	}
	return redirect(w, r, "/csrd?done=created")
}

// --- trust portal settings ---

func (s *Server) trustSettingsPage(w http.ResponseWriter, r *http.Request, v *view) error {
	ts, err := s.app.GetTrustSettings(r.Context())
	if err != nil {
		return err
	}
	v.Title, v.Section = "Trust portal", "trust"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = map[string]any{"T": ts, "Frameworks": strings.Join(ts.Frameworks, ", ")}
	return s.page(w, r, "trust_settings", v)
}

func (s *Server) uiTrustSettings(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.trustSettingsPage(w, r, v)
}

func (s *Server) uiUpdateTrustSettings(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	fws := []string{}
	for _, x := range strings.Split(f.Get("frameworks"), ",") {
		if x = strings.TrimSpace(x); x != "" {
			fws = append(fws, x)
		}
	}
	in := app.TrustSettingsPatch{Enabled: app.Ptr(f.Get("enabled") == "on"), Slug: app.Ptr(f.Get("slug")), Title: app.Ptr(f.Get("title")),
		Overview: app.Ptr(f.Get("overview")), ContactEmail: optional(f, "contactEmail"), Frameworks: app.Some(fws),
		ShowControls: app.Ptr(f.Get("showControls") == "on"), NDAText: app.Ptr(f.Get("ndaText")), NDAVersion: app.Ptr(f.Get("ndaVersion"))}
	if _, err := s.app.UpdateTrustSettings(r.Context(), in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.trustSettingsPage(w, r, v)
	}
	return redirect(w, r, "/trust-settings?done=saved")
}
