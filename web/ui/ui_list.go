package ui

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/xuri/excelize/v2"
)

// The shared list component: every list page describes its columns once
// (header, export value, sort key) and gets sorting by column header links
// with aria-sort, the filters kept in every link, a count, a pager that
// says where you are, an empty state and CSV/XLSX export of the filtered
// list, through the same app service as the page and the API (so the same
// permissions). The partials are in _list.html.

// listCol is one column of a list: Key names it in the URL (sort=Key,
// sort=-Key) and in the export's header row.
type listCol[T any] struct {
	Key string
	// Cell is the column's value in the export; nil leaves it out of it.
	Cell func(T) string
	// SortKey orders the rows by this column (strings compared as they
	// are: dates ISO, ranks zero-padded); nil when it does not sort.
	SortKey func(T) string
}

// listSpec describes one list page.
type listSpec[T any] struct {
	Name, Noun, Plural string // file name ("findings"), "finding", "findings"
	Cols               []listCol[T]
	Default            string // sort when none is asked for
	PerPage            int
	// FilterKeys are the query parameters that filter (for the empty state).
	FilterKeys []string
	// Native is the order the service itself returns ("" for none of the
	// columns): a page in that order is read as one page from the service,
	// not sorted here.
	Native string
	// Fetch reads one page of the filtered list from the app service.
	Fetch func(p app.Page) ([]T, int, error)
}

// listView is what the partials render.
type listView struct {
	Noun, Plural     string
	Total, From, To  int
	Page, Pages      int
	Filtered         bool
	Sort             string
	Prev, Next       string
	Numbers          []pageNumber
	CSV, XLSX, Clear string
	sorts            map[string]sortLink
	// EmptyText, EmptyHref and EmptyAction say what to do on an empty
	// list (the action only for a role that may take it).
	EmptyText, EmptyHref, EmptyAction string
}

// pageNumber is one link of the pager; Gap is an ellipsis.
type pageNumber struct {
	N       int
	Href    string
	Current bool
	Gap     bool
}

// listTh is a column header as the "listth" partial draws it.
type listTh struct {
	Label, Href, Aria string
	Num               bool
}

// Th is the header of a column: a sort link when it sorts.
func (l *listView) Th(key, label string) listTh {
	s, ok := l.sorts[key]
	if !ok {
		return listTh{Label: label}
	}
	return listTh{Label: label, Href: s.Href, Aria: s.Aria}
}

// ThNum is Th for a right-aligned numeric column.
func (l *listView) ThNum(key, label string) listTh {
	t := l.Th(key, label)
	t.Num = true
	return t
}

// Range is "51–100 of 342".
func (l *listView) Range() string {
	if l.Total == 0 {
		return "0 " + l.Plural
	}
	return fmt.Sprintf("%d–%d of %d", l.From, l.To, l.Total)
}

// Count is "42 findings".
func (l *listView) Count() string {
	if l.Total == 1 {
		return "1 " + l.Noun
	}
	return strconv.Itoa(l.Total) + " " + l.Plural
}

// listFormats are the export formats (format= on the list URL).
var listFormats = map[string]bool{"csv": true, "xlsx": true}

// listLink is the list's URL with the query changed by set (an empty value
// removes a key).
func listLink(r *http.Request, set map[string]string) string {
	q := url.Values{}
	for k, vs := range r.URL.Query() {
		q[k] = vs
	}
	for k, v := range set {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	if len(q) == 0 {
		return r.URL.Path
	}
	return r.URL.Path + "?" + q.Encode()
}

// runList reads the list for the request: the page as asked (sort, page,
// filters), or, with format=csv or xlsx, every row the filters select as a
// file (done is then true). Sorting happens on the rows the service
// returns, read in pages of app.MaxPerPage up to maxCSVRows, so the order
// is the same on every page and in the export. A validation error of the
// service comes back as err for the page's formErrors.
func runList[T any](w http.ResponseWriter, r *http.Request, v *view, spec listSpec[T]) (lv *listView, items []T, done bool, err error) {
	q := r.URL.Query()
	sort := q.Get("sort")
	sortable := map[string]func(T) string{}
	for _, c := range spec.Cols {
		if c.SortKey != nil {
			sortable[c.Key] = c.SortKey
		}
	}
	if sort != "" && sortable[strings.TrimPrefix(sort, "-")] == nil {
		keys := make([]string, 0, len(sortable))
		for _, c := range spec.Cols {
			if c.SortKey != nil {
				keys = append(keys, c.Key)
			}
		}
		ve := app.NewValidationError()
		ve.Add("sort", app.CodeInvalidEnum, sort, "sort must be one of "+strings.Join(keys, ", ")+" with an optional - prefix")
		formErrors(ve, v, r)
		v.Form = q
		sort = ""
	}
	if sort == "" {
		sort = spec.Default
	}
	lv = &listView{Noun: spec.Noun, Plural: spec.Plural, Sort: sort, sorts: map[string]sortLink{}}
	for _, k := range spec.FilterKeys {
		lv.Filtered = lv.Filtered || q.Get(k) != ""
	}
	clear := map[string]string{"page": "", "format": ""}
	for _, k := range spec.FilterKeys {
		clear[k] = ""
	}
	lv.Clear = listLink(r, clear)
	for key := range sortable {
		next, aria := key, ""
		switch sort {
		case key:
			next, aria = "-"+key, "ascending"
		case "-" + key:
			aria = "descending"
		}
		lv.sorts[key] = sortLink{Href: listLink(r, map[string]string{"sort": next, "page": "", "format": ""}), Aria: aria}
	}
	lv.CSV = listLink(r, map[string]string{"format": "csv", "page": "", "perPage": ""})
	lv.XLSX = listLink(r, map[string]string{"format": "xlsx", "page": "", "perPage": ""})

	pg := uiPage(r, spec.PerPage)
	link := func(n int) string { return listLink(r, map[string]string{"page": strconv.Itoa(n), "format": ""}) }
	if f := q.Get("format"); sort == spec.Native && spec.Native != "" && !listFormats[f] {
		rows, t, ferr := spec.Fetch(pg)
		if ferr != nil {
			return lv, nil, false, ferr
		}
		lv.pages(pg, t, len(rows), link)
		return lv, rows, false, nil
	}
	var all []T
	total := 0
	for page := 1; len(all) < maxCSVRows; page++ {
		rows, t, ferr := spec.Fetch(app.Page{Page: page, PerPage: app.MaxPerPage})
		if ferr != nil {
			return lv, nil, false, ferr
		}
		all, total = append(all, rows...), t
		if len(rows) < app.MaxPerPage || len(all) >= t {
			break
		}
	}
	if key := sortable[strings.TrimPrefix(sort, "-")]; key != nil {
		desc := strings.HasPrefix(sort, "-")
		slices.SortStableFunc(all, func(a, b T) int {
			c := strings.Compare(key(a), key(b))
			if desc {
				c = -c
			}
			return c
		})
	}
	if f := q.Get("format"); listFormats[f] && v.Errors == nil {
		return lv, all, true, writeList(w, f, spec.Name, v.now, spec.Cols, all)
	}

	if total < len(all) {
		total = len(all)
	}
	from := (max(1, min(pg.Page, (len(all)+pg.PerPage-1)/pg.PerPage)) - 1) * pg.PerPage
	items = all[from:min(len(all), from+pg.PerPage)]
	lv.pages(app.Page{Page: from/pg.PerPage + 1, PerPage: pg.PerPage}, len(all), len(items), link)
	lv.Total = total
	return lv, items, false, nil
}

// pages fills the count and the pager for page p of total rows, n of them
// on this page.
func (lv *listView) pages(p app.Page, total, n int, link func(int) string) {
	lv.Total, lv.Page = total, p.Page
	lv.Pages = max(1, (total+p.PerPage-1)/p.PerPage)
	if n > 0 {
		lv.From = (p.Page-1)*p.PerPage + 1
		lv.To = lv.From + n - 1
	}
	if lv.Page > 1 {
		lv.Prev = link(min(lv.Page-1, lv.Pages))
	}
	if lv.Page < lv.Pages {
		lv.Next = link(lv.Page + 1)
	}
	if lv.Pages > 1 {
		gap := false
		for i := 1; i <= lv.Pages; i++ {
			if i == 1 || i == lv.Pages || (i >= lv.Page-2 && i <= lv.Page+2) {
				lv.Numbers = append(lv.Numbers, pageNumber{N: i, Href: link(i), Current: i == lv.Page})
				gap = false
			} else if !gap {
				lv.Numbers = append(lv.Numbers, pageNumber{Gap: true})
				gap = true
			}
		}
	}
}

// writeList sends the rows as a CSV or XLSX attachment named
// name-YYYY-MM-DD.csv/.xlsx.
func writeList[T any](w http.ResponseWriter, format, name string, now time.Time, cols []listCol[T], rows []T) error {
	var header []string
	for _, c := range cols {
		if c.Cell != nil {
			header = append(header, c.Key)
		}
	}
	table := make([][]string, len(rows))
	for i, it := range rows {
		row := make([]string, 0, len(header))
		for _, c := range cols {
			if c.Cell != nil {
				row = append(row, c.Cell(it))
			}
		}
		table[i] = row
	}
	if format == "xlsx" {
		return writeXLSX(w, name, now, header, table)
	}
	return writeCSV(w, name, now, header, table)
}

// writeXLSX sends rows as one worksheet named after the list, every cell a
// string (so nothing is read as a formula or a number it is not).
func writeXLSX(w http.ResponseWriter, name string, now time.Time, header []string, rows [][]string) error {
	f := excelize.NewFile()
	defer f.Close()
	sheet := "Sheet1"
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	put := func(n int, vals []string) error {
		cells := make([]any, len(vals))
		for i, s := range vals {
			cells[i] = excelize.Cell{Value: s}
		}
		cell, _ := excelize.CoordinatesToCellName(1, n)
		return sw.SetRow(cell, cells)
	}
	if err := put(1, header); err != nil {
		return err
	}
	for i, row := range rows {
		if err := put(i+2, row); err != nil {
			return err
		}
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
	h.Set("Content-Disposition", `attachment; filename="`+name+"-"+now.Format("2006-01-02")+`.xlsx"`)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	_, _ = w.Write(buf.Bytes())
	return nil
}

// Sort-key helpers.

// rank orders a value by its place in an enumeration (unknown last).
func rank(order []string, v string) string {
	i := slices.Index(order, v)
	if i < 0 {
		i = len(order)
	}
	return fmt.Sprintf("%04d", i)
}

func lower(s string) string { return strings.ToLower(s) }

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func lastIfEmpty(s string) string {
	if s == "" {
		return "\uffff"
	}
	return s
}
