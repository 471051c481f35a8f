package httpx

import (
	"net/http"
	"strconv"

	"github.com/compliance-appliance/compliance/app"
)

// meta is the list envelope's paging block.
type Meta struct {
	Total      int `json:"total"`
	Page       int `json:"page"`
	PerPage    int `json:"perPage"`
	TotalPages int `json:"totalPages"`
}

// listBody is the envelope of every list response.
type ListBody[T any] struct {
	Data []T  `json:"data"`
	Meta Meta `json:"meta"`
}

const MaxPage = 10_000_000

// pageParams reads page and perPage (or its alias limit).
func PageParams(r *http.Request) (app.Page, error) {
	q := r.URL.Query()
	p := app.Page{Page: 1, PerPage: app.DefaultPerPage}
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPage {
			return p, BadRequest("page", s, "page must be an integer of at least 1")
		}
		p.Page = n
	}
	name := "perPage"
	s := q.Get("perPage")
	if s == "" {
		name, s = "limit", q.Get("limit")
	}
	if s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > app.MaxPerPage {
			return p, BadRequest(name, s, "%s must be an integer from 1 to %d", name, app.MaxPerPage)
		}
		p.PerPage = n
	}
	return p, nil
}

func NewMeta(p app.Page, total int) Meta {
	pages := (total + p.PerPage - 1) / p.PerPage
	if pages < 1 {
		pages = 1
	}
	return Meta{Total: total, Page: p.Page, PerPage: p.PerPage, TotalPages: pages}
}

func WriteList[T any](w http.ResponseWriter, p app.Page, l app.List[T]) {
	items := l.Items
	if items == nil {
		items = []T{}
	}
	WriteJSON(w, http.StatusOK, ListBody[T]{Data: items, Meta: NewMeta(p, l.Total)})
}

// boolParam reads an optional true/false query parameter.
func BoolParam(r *http.Request, name string) (*bool, error) {
	s := r.URL.Query().Get(name)
	switch s {
	case "":
		return nil, nil
	case "true":
		return app.Ptr(true), nil
	case "false":
		return app.Ptr(false), nil
	}
	return nil, BadRequest(name, s, "%s must be true or false", name)
}
