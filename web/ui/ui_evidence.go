package ui

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// The evidence library (/evidence): every evidence item with its control,
// frameworks, uploader and dates; filters, sort and page in the URL; and a
// twelve-month expiry timeline drawn on the server as SVG.

// uiEvidenceRoutes registers the evidence library.
func (s *Server) uiEvidenceRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/evidence", uiSignedIn, s.uiEvidenceLibrary)
}

// evidenceFilterKeys are the library's query parameters that filter.
var evidenceFilterKeys = []string{"expires", "month", "framework", "owner"}

// timelineBar is one month of the timeline as drawn.
type timelineBar struct {
	app.EvidenceMonth
	X, Y, H, LabelX, CountY int
	Label, Year             string
}

// timeline geometry (viewBox 0 0 720 190): bars 40 wide every 56, on a
// baseline at 150, 120 high at most.
const (
	tlLeft, tlStep, tlBarW, tlBase, tlMaxH = 28, 56, 40, 150, 120
)

func timelineBars(t *app.EvidenceTimeline) []timelineBar {
	bars := make([]timelineBar, len(t.Months))
	for i, m := range t.Months {
		h := 0
		if t.Max > 0 && m.Count > 0 {
			h = max(3, m.Count*tlMaxH/t.Max)
		}
		x := tlLeft + i*tlStep
		b := timelineBar{EvidenceMonth: m, X: x, Y: tlBase - h, H: h, LabelX: x + tlBarW/2, CountY: tlBase - h - 6,
			Label: m.Month.Format("Jan")}
		if i == 0 || m.Month.Month() == 1 {
			b.Year = m.Month.Format("2006")
		}
		bars[i] = b
	}
	return bars
}

// sortLink is a column header's sort: the link that sorts by it (the
// other direction when it is the current sort) and its aria-sort.
type sortLink struct {
	Href, Aria string
}

func (s *Server) uiEvidenceLibrary(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	pg := uiPage(r, 50)
	f := app.EvidenceLibraryFilter{Expires: q.Get("expires"), Month: q.Get("month"), FrameworkID: q.Get("framework"),
		OwnerID: q.Get("owner"), Sort: q.Get("sort"), Page: pg}
	v.Title, v.Section = "Evidence library", "evidence"
	v.Form = q
	if wantsCSV(r) {
		if err := s.evidenceCSV(w, r, v, f); err == nil || !formErrors(err, v, r) {
			return err
		}
	}
	l, err := s.app.EvidenceLibrary(r.Context(), f)
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = q
	tl, err := s.app.EvidenceTimeline(r.Context(), app.EvidenceLibraryFilter{FrameworkID: f.FrameworkID, OwnerID: f.OwnerID})
	if err != nil {
		return err
	}
	fws, err := s.app.EnabledFrameworkNames(r.Context())
	if err != nil {
		return err
	}
	people := s.people(r)
	names := map[string]string{}
	for _, p := range people {
		names[p.ID] = p.Name
	}
	filtered := false
	for _, k := range evidenceFilterKeys {
		filtered = filtered || q.Get(k) != ""
	}
	sorts := map[string]sortLink{}
	for _, key := range app.EvidenceLibrarySorts {
		cur := q.Get("sort")
		if cur == "" {
			cur = "-uploadedAt"
		}
		next, aria := key, ""
		switch cur {
		case key:
			next, aria = "-"+key, "ascending"
		case "-" + key:
			aria = "descending"
		}
		u := url.Values{}
		for k, vs := range q {
			if k != "page" && k != "sort" {
				u[k] = vs
			}
		}
		u.Set("sort", next)
		sorts[key] = sortLink{Href: "/evidence?" + u.Encode(), Aria: aria}
	}
	monthLink := func(key string) string {
		u := url.Values{"month": {key}}
		for _, k := range []string{"framework", "owner"} {
			if q.Get(k) != "" {
				u.Set(k, q.Get(k))
			}
		}
		return "/evidence?" + u.Encode()
	}
	months := map[string]string{}
	for _, m := range tl.Months {
		months[m.Key] = monthLink(m.Key)
	}
	v.Data = map[string]any{"Items": l.Items, "Total": l.Total, "Pager": newPager(r, pg, l.Total), "Frameworks": fws,
		"People": people, "Names": names, "Filtered": filtered, "Timeline": tl, "Bars": timelineBars(tl),
		"Sorts": sorts, "MonthLinks": months, "Expiries": app.EvidenceExpiryFilters, "Today": v.now.Format("2006-01-02"),
		"Soon": v.now.AddDate(0, 0, 30).Format("2006-01-02"), "CSV": csvLink(r), "XLSX": xlsxLink(r)}
	return s.page(w, r, "evidence", v)
}

// uploaderName names who uploaded evidence: a person of the organization,
// an API key or the system.
func uploaderName(names map[string]string, id string) string {
	switch {
	case names[id] != "":
		return names[id]
	case strings.HasPrefix(id, app.PrefixAPIKey+"_"):
		return "API key"
	case strings.HasPrefix(id, app.PrefixPerson+"_"):
		return "A former member"
	case id == "" || id == "system":
		return "The system"
	}
	return id
}
