package ui

import (
	"bytes"
	"html/template"
	"net/http"
	"net/url"
	"strconv"

	"github.com/compliance-appliance/compliance/app"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// markdown renders policy text: GitHub-flavoured Markdown without raw
// HTML, then sanitized, so a policy cannot carry script or styles into
// the page.
var (
	markdown  = goldmark.New(goldmark.WithExtensions(extension.GFM))
	sanitizer = bluemonday.UGCPolicy()
)

func renderMarkdown(src string) template.HTML {
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(src), &buf); err != nil {
		return template.HTML(template.HTMLEscapeString(src))
	}
	return template.HTML(sanitizer.SanitizeBytes(buf.Bytes())) // #nosec: sanitized above
}

// uiPolicyRoutes registers the policy pages.
func (s *Server) uiPolicyRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/policies", uiSignedIn, s.uiPolicies)
	page("GET", "/policies/new", uiManage, s.uiNewPolicy)
	page("POST", "/policies", uiManage, s.uiCreatePolicy)
	page("GET", "/policies/{id}", uiSignedIn, s.uiPolicy)
	page("POST", "/policies/{id}", uiManage, s.uiUpdatePolicy)
	page("POST", "/policies/{id}/publish", uiManage, s.uiPublishPolicy)
	page("POST", "/policies/{id}/acknowledge", uiSelf, s.uiAcknowledgePolicy)
}

func (s *Server) uiPolicies(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	v.Form = q
	f := app.PolicyFilter{Status: q.Get("status"), Search: q.Get("q"), ExcludeContent: true}
	if q.Get("pending") == "1" {
		f.Acknowledged = app.Ptr(false)
	}
	lv, items, done, err := runList(w, r, v, policyList(func(p app.Page) ([]app.Policy, int, error) {
		f.Page = p
		l, err := s.app.ListPolicies(r.Context(), f)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = q
	v.Title, v.Section = "Policies", "policies"
	lv.EmptyText = "No policies yet. Write a policy, publish it and ask people to acknowledge it."
	if v.Can("manage") {
		lv.EmptyHref, lv.EmptyAction = "/policies/new", "Write your first policy"
	} else {
		lv.EmptyText = "No policy has been published yet."
	}
	v.Data = map[string]any{"Policies": items, "List": lv, "Statuses": app.PolicyStatuses}
	return s.page(w, r, "policies", v)
}

func (s *Server) policyForm(w http.ResponseWriter, r *http.Request, v *view, p *app.Policy) error {
	if p == nil {
		v.Title = "New policy"
		p = &app.Policy{IsRequiredToSign: true}
	}
	v.Section = "policies"
	v.Data = map[string]any{"P": p, "People": s.people(r), "Frequencies": app.PolicyFrequencies}
	return s.page(w, r, "policy_edit", v)
}

func (s *Server) uiNewPolicy(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.policyForm(w, r, v, nil)
}

func policyInput(f url.Values) app.PolicyInput {
	return app.PolicyInput{Name: app.Ptr(f.Get("name")), Description: app.Ptr(f.Get("description")), Content: app.Ptr(f.Get("content")),
		Frequency: optional(f, "frequency"), ReviewDate: optional(f, "reviewDate"), AssigneeID: optional(f, "assigneeId"),
		ApproverID: optional(f, "approverId"), IsRequiredToSign: app.Ptr(f.Get("isRequiredToSign") == "on")}
}

func (s *Server) uiCreatePolicy(w http.ResponseWriter, r *http.Request, v *view) error {
	p, err := s.app.CreatePolicy(r.Context(), policyInput(r.PostForm))
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.policyForm(w, r, v, nil)
	}
	return redirect(w, r, "/policies/"+url.PathEscape(p.ID)+"?done=created")
}

func (s *Server) policyPage(w http.ResponseWriter, r *http.Request, v *view, p *app.Policy) error {
	data := map[string]any{"P": p, "Draft": renderMarkdown(p.Content), "People": s.people(r), "Frequencies": app.PolicyFrequencies}
	if p.CurrentVersionID != nil {
		cur, err := s.app.GetPolicyVersion(r.Context(), p.ID, strconv.Itoa(p.Version))
		if err != nil {
			return err
		}
		data["Current"] = cur
		data["Published"] = renderMarkdown(cur.Content)
		if v.P.UserID != "" {
			mine, err := s.app.ListPolicies(r.Context(), app.PolicyFilter{Acknowledged: app.Ptr(true), ExcludeContent: true,
				Search: p.Name, Page: app.Page{Page: 1, PerPage: app.MaxPerPage}})
			if err != nil {
				return err
			}
			acked := false
			for _, m := range mine.Items {
				acked = acked || m.ID == p.ID
			}
			data["Acknowledged"] = acked
		}
	}
	if v.Can("manage") || v.Can("audit") {
		rep, err := s.app.PolicyAcknowledgements(r.Context(), p.ID, app.PolicyAckFilter{Page: app.Page{Page: 1, PerPage: app.MaxPerPage}})
		if err == nil {
			data["Acks"] = rep
		}
	}
	v.Title, v.Section = p.Name, "policies"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Data = data
	if err := s.addAttachments(r, v, app.EntityPolicy, "policies", p.ID); err != nil {
		return err
	}
	return s.page(w, r, "policy", v)
}

func (s *Server) uiPolicy(w http.ResponseWriter, r *http.Request, v *view) error {
	p, err := s.app.GetPolicy(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.policyPage(w, r, v, p)
}

func (s *Server) uiUpdatePolicy(w http.ResponseWriter, r *http.Request, v *view) error {
	p, err := s.app.UpdatePolicy(r.Context(), id(r), policyInput(r.PostForm))
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		if p, err = s.app.GetPolicy(r.Context(), id(r)); err != nil {
			return err
		}
		return s.policyPage(w, r, v, p)
	}
	return redirect(w, r, "/policies/"+url.PathEscape(p.ID)+"?done=saved")
}

func (s *Server) uiPublishPolicy(w http.ResponseWriter, r *http.Request, v *view) error {
	_, err := s.app.PublishPolicy(r.Context(), id(r), app.PublishInput{Changelog: r.PostFormValue("changelog"),
		AllowUnresolved: r.PostFormValue("allowUnresolved") == "on"})
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		p, gerr := s.app.GetPolicy(r.Context(), id(r))
		if gerr != nil {
			return gerr
		}
		return s.policyPage(w, r, v, p)
	}
	return redirect(w, r, "/policies/"+url.PathEscape(id(r))+"?done=published")
}

func (s *Server) uiAcknowledgePolicy(w http.ResponseWriter, r *http.Request, v *view) error {
	in := app.AcknowledgeInput{}
	if n, err := strconv.Atoi(r.PostFormValue("version")); err == nil {
		in.Version = &n
	}
	if _, _, err := s.app.AcknowledgePolicy(r.Context(), id(r), in); err != nil {
		return err
	}
	return redirect(w, r, "/policies/"+url.PathEscape(id(r))+"?done=acknowledged")
}
