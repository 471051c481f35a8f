package ui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// uiContextRoutes registers the organization's context (ISO/IEC 27001
// clause 4): owners, admins and auditors read it and its saved versions;
// owners and admins edit it and restore a saved version.
func (s *Server) uiContextRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/context", uiSignedIn, s.uiContext)
	page("POST", "/context", uiManage, s.uiUpdateContext)
	page("GET", "/context/snapshots", uiSignedIn, s.uiContextSnapshots)
	page("GET", "/context/snapshots/{id}", uiSignedIn, s.uiContextSnapshot)
	page("POST", "/context/snapshots/{id}/restore", uiManage, s.uiRestoreContextSnapshot)
}

// contextRows is the context as the edit form shows it: every list with
// a few blank rows to add entries.
type contextRows struct {
	C         *app.OrgContext
	Locations string
	Issues    []app.ContextIssue
	Parties   []app.InterestedParty
	Entries   []app.ContextEntry
	Climate   string
}

const contextBlankRows = 2

func newContextRows(c *app.OrgContext) contextRows {
	cr := contextRows{C: c, Locations: strings.Join(c.Scope.Locations, "\n"),
		Issues:  append([]app.ContextIssue{}, c.Issues...),
		Parties: append([]app.InterestedParty{}, c.InterestedParties...),
		Entries: append([]app.ContextEntry{}, c.Entries...)}
	if c.ClimateChangeRelevant != nil {
		cr.Climate = map[bool]string{true: "yes", false: "no"}[*c.ClimateChangeRelevant]
	}
	for range contextBlankRows {
		cr.Issues = append(cr.Issues, app.ContextIssue{})
		cr.Parties = append(cr.Parties, app.InterestedParty{})
		cr.Entries = append(cr.Entries, app.ContextEntry{})
	}
	return cr
}

func (s *Server) contextPage(w http.ResponseWriter, r *http.Request, v *view, c *app.OrgContext, form *app.ContextPatch) error {
	v.Title, v.Section = "Organization context", "context"
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	rows := newContextRows(c)
	if form != nil {
		// Show what was sent, so each error stays next to its row.
		shown := *c
		shown.Description, shown.Scope = *form.Description, *form.Scope
		shown.Issues, shown.InterestedParties, shown.Entries = *form.Issues, *form.InterestedParties, *form.Entries
		shown.ClimateChangeRelevant = nil
		if form.ClimateChangeRelevant.Set && !form.ClimateChangeRelevant.Null {
			shown.ClimateChangeRelevant = app.Ptr(form.ClimateChangeRelevant.Value)
		}
		rows = newContextRows(&shown)
	}
	names, err := s.actorNames(r)
	if err != nil {
		return err
	}
	v.Data = map[string]any{"Ctx": c, "Rows": rows, "Categories": app.IssueCategories, "Names": names}
	return s.page(w, r, "context", v)
}

func (s *Server) uiContext(w http.ResponseWriter, r *http.Request, v *view) error {
	c, err := s.app.GetContext(r.Context())
	if err != nil {
		return err
	}
	return s.contextPage(w, r, v, c, nil)
}

// contextForm maps the edit form onto PATCH /v1/context: every field,
// lists as a whole, rows left blank dropped.
func contextForm(f url.Values) app.ContextPatch {
	lines := func(s string) []string {
		out := []string{}
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	at := func(name string, i int) string {
		if vs := f[name]; i < len(vs) {
			return strings.TrimSpace(vs[i])
		}
		return ""
	}
	issues := []app.ContextIssue{}
	for i := range f["issueDescription"] {
		is := app.ContextIssue{Category: at("issueCategory", i), Description: at("issueDescription", i), Effect: at("issueEffect", i)}
		if is.Description == "" && is.Effect == "" {
			continue // a blank row; its category select always has a value
		}
		issues = append(issues, is)
	}
	parties := []app.InterestedParty{}
	for i := range f["partyName"] {
		p := app.InterestedParty{Name: at("partyName", i), Category: at("partyCategory", i), Requirements: at("partyRequirements", i),
			AddressedThroughIsms: at("partyAddressed", i) == "yes"}
		if p.Name == "" && p.Category == "" && p.Requirements == "" {
			continue
		}
		parties = append(parties, p)
	}
	entries := []app.ContextEntry{}
	for i := range f["entryQuestion"] {
		e := app.ContextEntry{Question: at("entryQuestion", i), Answer: at("entryAnswer", i), Tags: []string{}}
		for _, t := range strings.Split(at("entryTags", i), ",") {
			if t = strings.TrimSpace(t); t != "" {
				e.Tags = append(e.Tags, t)
			}
		}
		if e.Question == "" && e.Answer == "" && len(e.Tags) == 0 {
			continue
		}
		entries = append(entries, e)
	}
	in := app.ContextPatch{Description: app.Ptr(f.Get("description")),
		Scope: &app.ContextScope{Statement: f.Get("scope.statement"), Exclusions: f.Get("scope.exclusions"),
			Interfaces: f.Get("scope.interfaces"), Locations: lines(f.Get("scope.locations"))},
		Issues: &issues, InterestedParties: &parties, Entries: &entries, ChangeNote: f.Get("changeNote")}
	switch f.Get("climateChangeRelevant") {
	case "yes":
		in.ClimateChangeRelevant = app.Some(true)
	case "no":
		in.ClimateChangeRelevant = app.Some(false)
	default:
		in.ClimateChangeRelevant = app.Opt[bool]{Set: true, Null: true}
	}
	if n, err := strconv.Atoi(f.Get("baseVersion")); err == nil {
		in.BaseVersion = &n
	}
	return in
}

// contextErrorFields folds errors of single list items into the field the
// form shows them at (one textarea for locations, one input for tags).
func contextErrorFields(v *view) {
	for k, msg := range v.Errors {
		if strings.HasPrefix(k, "scope.locations[") {
			v.Errors["scope.locations"] = msg
		}
		if i := strings.Index(k, ".tags["); i > 0 && strings.HasPrefix(k, "entries[") {
			v.Errors[k[:i]+".tags"] = msg
		}
	}
}

func (s *Server) uiUpdateContext(w http.ResponseWriter, r *http.Request, v *view) error {
	before, err := s.app.GetContext(r.Context())
	if err != nil {
		return err
	}
	in := contextForm(r.PostForm)
	c, err := s.app.UpdateContext(r.Context(), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		contextErrorFields(v)
		return s.contextPage(w, r, v, before, &in)
	}
	if c.Version == before.Version {
		return redirect(w, r, "/context?done=context-same")
	}
	return redirect(w, r, "/context?done=context-saved")
}

func (s *Server) uiContextSnapshots(w http.ResponseWriter, r *http.Request, v *view) error {
	lv, items, done, err := runList(w, r, v, contextVersionList(func(p app.Page) ([]app.OrgContext, int, error) {
		l, err := s.app.ListContextSnapshots(r.Context(), p)
		return l.Items, l.Total, err
	}))
	if done || err != nil {
		return err
	}
	v.Title, v.Section = "Context versions", "context"
	names, err := s.actorNames(r)
	if err != nil {
		return err
	}
	lv.EmptyText = "No versions yet."
	if v.Can("manage") {
		lv.EmptyText += " Fill in the context; each save becomes a version."
		lv.EmptyHref, lv.EmptyAction = "/context", "Fill in the context"
	}
	v.Data = map[string]any{"Items": items, "List": lv, "Names": names}
	return s.page(w, r, "context_snapshots", v)
}

func (s *Server) uiContextSnapshot(w http.ResponseWriter, r *http.Request, v *view) error {
	c, err := s.app.GetContextSnapshot(r.Context(), id(r))
	if err != nil {
		return err
	}
	v.Title, v.Section = "Context version "+strconv.Itoa(c.Version), "context"
	names, err := s.actorNames(r)
	if err != nil {
		return err
	}
	v.Data = map[string]any{"Ctx": c, "Names": names}
	return s.page(w, r, "context_snapshot", v)
}

func (s *Server) uiRestoreContextSnapshot(w http.ResponseWriter, r *http.Request, v *view) error {
	if _, err := s.app.RestoreContextSnapshot(r.Context(), id(r), r.PostFormValue("changeNote")); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		c, gerr := s.app.GetContextSnapshot(r.Context(), id(r))
		if gerr != nil {
			return gerr
		}
		v.Title, v.Section = "Context version "+strconv.Itoa(c.Version), "context"
		names, err := s.actorNames(r)
		if err != nil {
			return err
		}
		v.Data = map[string]any{"Ctx": c, "Names": names}
		return s.page(w, r, "context_snapshot", v)
	}
	return redirect(w, r, "/context?done=context-restored")
}
