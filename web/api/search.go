package api

import (
	"net/http"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// searchRoutes registers the routes of the handlers in this file.
func (s *Server) searchRoutes(handle routeFunc) {
	handle("GET", "/v1/search", httpx.CanRead, s.searchAll)
}

// searchHitBody is one hit of GET /v1/search.
type searchHitBody struct {
	Type       string           `json:"type"`
	ID         string           `json:"id"`
	ParentID   *string          `json:"parentId"`
	Title      string           `json:"title"`
	Snippet    string           `json:"snippet"`
	Highlights searchHighlights `json:"highlights"`
	Score      float64          `json:"score"`
	APIPath    string           `json:"apiPath"`
	WebPath    string           `json:"webPath"`
}

// searchHighlights are the matched parts of the title and snippet as
// [start, end) offsets in characters (Unicode code points).
type searchHighlights struct {
	Title   [][2]int `json:"title"`
	Snippet [][2]int `json:"snippet"`
}

// searchBody is the list envelope with the query as read and the number of
// hits per type searched.
type searchBody struct {
	Data   []searchHitBody `json:"data"`
	Meta   httpx.Meta      `json:"meta"`
	Query  string          `json:"query"`
	Terms  []string        `json:"terms"`
	Counts map[string]int  `json:"counts"`
}

func (s *Server) searchAll(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var types []string
	for _, v := range q["types"] {
		types = append(types, strings.Split(v, ",")...)
	}
	res, err := s.app.Search(r.Context(), app.SearchRequest{Query: q.Get("q"), Types: types, Page: p})
	if err != nil {
		return err
	}
	body := searchBody{Data: make([]searchHitBody, 0, len(res.Hits)), Meta: httpx.NewMeta(p, res.Total), Query: res.Query,
		Terms: res.Terms, Counts: res.Counts}
	if body.Terms == nil {
		body.Terms = []string{}
	}
	for _, h := range res.Hits {
		b := searchHitBody{Type: h.Type, ID: h.ID, Title: h.Title.String(), Snippet: h.Snippet.String(),
			Highlights: searchHighlights{Title: h.Title.Spans(), Snippet: h.Snippet.Spans()}, Score: h.Score}
		if h.ParentID != "" {
			b.ParentID = app.Ptr(h.ParentID)
		}
		b.APIPath, b.WebPath = httpx.SearchHitPaths(h)
		body.Data = append(body.Data, b)
	}
	httpx.WriteJSON(w, http.StatusOK, body)
	return nil
}
