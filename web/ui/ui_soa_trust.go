package ui

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/compliance-appliance/compliance/app"
)

// uiSOATrustRoutes registers the Statement of Applicability and the trust
// portal's access requests.
func (s *Server) uiSOATrustRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/soa", uiSignedIn, s.uiSOA)
	page("POST", "/soa/{id}", uiManage, s.uiUpdateSOA)
	page("GET", "/trust-requests", uiSignedIn, s.uiTrustRequests)
	page("POST", "/trust-requests/{id}/{decision:approve|deny|revoke}", uiManage, s.uiDecideTrustRequest)
}

func (s *Server) uiSOA(w http.ResponseWriter, r *http.Request, v *view) error {
	if v.P.SeesOnlyAssigned() {
		// The service refuses these roles the SoA; say so even when no
		// framework with one is enabled yet.
		return app.ErrForbidden
	}
	enabled := true
	fws, err := s.app.ListFrameworks(r.Context(), &enabled, app.Page{Page: 1, PerPage: app.MaxPerPage})
	if err != nil {
		return err
	}
	// Only ISO 27001 and ISO 42001 have a Statement of Applicability.
	var soa []app.Framework
	for _, f := range fws.Items {
		if f.Slug == "iso27001-2022" || f.Slug == "iso42001-2023" {
			soa = append(soa, f)
		}
	}
	fw := r.URL.Query().Get("framework")
	if fw == "" && len(soa) > 0 {
		fw = soa[0].ID
	}
	v.Title, v.Section = "Statement of Applicability", "soa"
	v.Flash = flash(r)
	data := map[string]any{"Frameworks": soa, "Framework": fw}
	if fw != "" {
		doc, err := s.app.SOA(r.Context(), fw)
		if err != nil && !formErrors(err, v, r) {
			return err
		}
		if doc == nil {
			doc = &app.SOADocument{}
		}
		pg := uiPage(r, 100)
		from := min((pg.Page-1)*pg.PerPage, len(doc.Entries))
		to := min(from+pg.PerPage, len(doc.Entries))
		data["Doc"], data["Entries"], data["Pager"] = doc, doc.Entries[from:to], newPager(r, pg, len(doc.Entries))
	}
	v.Data = data
	return s.page(w, r, "soa", v)
}

func (s *Server) uiUpdateSOA(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.SOAInput{Applicable: app.Ptr(f.Get("applicable") == "yes"), Justification: optional(f, "justification")}
	if _, err := s.app.UpdateSOAEntry(r.Context(), id(r), in); err != nil {
		return err
	}
	back := localPath(f.Get("back"))
	if back == "/" {
		back = "/soa"
	}
	u, _ := url.Parse(back)
	q := u.Query()
	q.Set("done", "saved")
	u.RawQuery = q.Encode()
	return redirect(w, r, u.String()+"#"+url.PathEscape(id(r)))
}

func (s *Server) uiTrustRequests(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	status := q.Get("status")
	lv, items, done, err := runList(w, r, v, trustRequestList(func(p app.Page) ([]app.TrustAccessRequest, int, error) {
		l, err := s.app.ListTrustRequests(r.Context(), status, p)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = q
	v.Title, v.Section = "Trust portal access requests", "trust"
	v.Flash = flash(r)
	lv.EmptyText = "No access requests. Visitors of your public trust portal ask for access to gated documents here."
	v.Data = map[string]any{"Requests": items, "List": lv, "Statuses": app.TrustRequestStatuses}
	return s.page(w, r, "trust_requests", v)
}

func (s *Server) uiDecideTrustRequest(w http.ResponseWriter, r *http.Request, v *view) error {
	in := app.TrustDecision{Reason: nonEmpty(r.PostFormValue("reason"))}
	if n, err := strconv.Atoi(r.PostFormValue("durationDays")); err == nil {
		in.DurationDays = &n
	}
	decision := map[string]string{"approve": app.DecisionApprove, "deny": app.DecisionDeny, "revoke": app.DecisionRevoke}[varsOf(r)["decision"]]
	if _, err := s.app.DecideTrustRequest(r.Context(), id(r), decision, in); err != nil {
		return err
	}
	return redirect(w, r, "/trust-requests?done=decided")
}
