package ui

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// The search page: the header's search box lands here. Without a type it
// shows the best hits of every type the person may search, grouped; with
// one (?types=vendor) every hit of that type, paginated.

// searchPerType is how many hits of each type the grouped page shows.
const searchPerType = 5

// uiSearchRoutes registers the search page.
func (s *Server) uiSearchRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/search", uiSignedIn, s.uiSearch)
}

// searchTypeLabels name the types as the page's headings.
var searchTypeLabels = map[string]string{
	app.SearchVendor: "Vendors", app.SearchControl: "Controls", app.SearchRequirement: "Requirements",
	app.SearchPolicy: "Policies", app.SearchRisk: "Risks", app.SearchFinding: "Findings", app.SearchPerson: "People",
	app.SearchKB: "Knowledge-base entries", app.SearchQuestionnaire: "Questionnaires",
}

// searchHitView is a hit with its link.
type searchHitView struct {
	app.SearchHit
	Href string
}

// searchGroupView is one type's hits on the page.
type searchGroupView struct {
	Type, Label string
	Hits        []searchHitView
	Total       int
	More        string // the link to every hit of the type, "" when all are shown
}

func hitViews(hits []app.SearchHit) []searchHitView {
	out := make([]searchHitView, len(hits))
	for i, h := range hits {
		_, href := httpx.SearchHitPaths(h)
		out[i] = searchHitView{SearchHit: h, Href: href}
	}
	return out
}

func (s *Server) uiSearch(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	query := strings.TrimSpace(q.Get("q"))
	typ := strings.TrimSpace(q.Get("types"))
	types := s.app.SearchTypesFor(r.Context())
	if typ != "" && !in(typ, types) {
		typ = "" // a stale or hand-made link: search everything
	}
	v.Title, v.Section, v.SearchQuery = "Search", "search", query
	if query != "" {
		v.Title = "Search: " + query
	}
	v.Form = q
	data := map[string]any{"Query": query, "Type": typ, "Types": types, "Labels": searchTypeLabels}
	v.Data = data
	if query == "" {
		return s.page(w, r, "search", v)
	}
	if typ != "" {
		pg := uiPage(r, 25)
		res, err := s.app.Search(r.Context(), app.SearchRequest{Query: query, Types: []string{typ}, Page: pg})
		if err != nil {
			if formErrors(err, v, r) {
				v.Form = q
				return s.page(w, r, "search", v)
			}
			return err
		}
		data["Total"] = res.Total
		if res.Total > 0 {
			data["Groups"] = []searchGroupView{{Type: typ, Label: searchTypeLabels[typ], Hits: hitViews(res.Hits), Total: res.Total}}
		}
		data["Pager"] = newPager(r, pg, res.Total)
		data["Empty"] = len(res.Terms) == 0
		return s.page(w, r, "search", v)
	}
	res, err := s.app.SearchGrouped(r.Context(), query, nil, searchPerType)
	if err != nil {
		if formErrors(err, v, r) {
			v.Form = q
			return s.page(w, r, "search", v)
		}
		return err
	}
	groups := make([]searchGroupView, 0, len(res.Groups))
	for _, g := range res.Groups {
		gv := searchGroupView{Type: g.Type, Label: searchTypeLabels[g.Type], Hits: hitViews(g.Hits), Total: g.Total}
		if g.Total > len(g.Hits) {
			gv.More = "/search?" + url.Values{"q": {query}, "types": {g.Type}}.Encode()
		}
		groups = append(groups, gv)
	}
	data["Groups"], data["Total"], data["Empty"] = groups, res.Total, len(res.Terms) == 0
	return s.page(w, r, "search", v)
}

func in(s string, list []string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
