package ui

import (
	"strconv"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// The columns of the remaining list pages on the shared list component.

func csrdList(fetch func(app.Page) ([]app.ESGDataPoint, int, error)) listSpec[app.ESGDataPoint] {
	type P = app.ESGDataPoint
	return listSpec[P]{Name: "csrd-data-points", Noun: "data point", Plural: "data points", Default: "esrsCode", PerPage: 50,
		FilterKeys: []string{"standard", "period"}, Fetch: fetch,
		Cols: []listCol[P]{
			{Key: "id", Cell: func(p P) string { return p.ID }},
			{Key: "esrsCode", Cell: func(p P) string { return p.ESRSCode }, SortKey: func(p P) string { return lower(p.ESRSCode) }},
			{Key: "standard", Cell: func(p P) string { return p.Standard }},
			{Key: "dataPointId", Cell: func(p P) string { return p.DataPointID }, SortKey: func(p P) string { return lower(p.DataPointID) }},
			{Key: "value", Cell: func(p P) string { return strconv.FormatFloat(p.Value, 'f', -1, 64) }},
			{Key: "unit", Cell: func(p P) string { return p.Unit }},
			{Key: "period", Cell: func(p P) string { return p.Period }, SortKey: func(p P) string { return p.Period }},
			{Key: "methodology", Cell: func(p P) string { return p.Methodology }},
			{Key: "notes", Cell: func(p P) string { return p.Notes }},
			{Key: "createdAt", Cell: func(p P) string { return iso(p.CreatedAt) }, SortKey: func(p P) string { return iso(p.CreatedAt) }},
		}}
}

func kbList(fetch func(app.Page) ([]app.KBEntry, int, error)) listSpec[app.KBEntry] {
	type E = app.KBEntry
	return listSpec[E]{Name: "knowledge-base", Noun: "entry", Plural: "entries", Default: "question", PerPage: 25,
		FilterKeys: []string{"tag"}, Fetch: fetch,
		Cols: []listCol[E]{
			{Key: "id", Cell: func(e E) string { return e.ID }},
			{Key: "question", Cell: func(e E) string { return e.Question }, SortKey: func(e E) string { return lower(e.Question) }},
			{Key: "answer", Cell: func(e E) string { return e.Answer }},
			{Key: "tags", Cell: func(e E) string { return strings.Join(e.Tags, ", ") }},
			{Key: "sourceDocument", Cell: func(e E) string { return deref(e.SourceDocument) }},
			{Key: "ownerId", Cell: func(e E) string { return deref(e.OwnerID) }},
			{Key: "reviewDate", Cell: func(e E) string { return deref(e.ReviewDate) }, SortKey: func(e E) string { return lastIfEmpty(deref(e.ReviewDate)) }},
			{Key: "updatedAt", Cell: func(e E) string { return iso(e.UpdatedAt) }, SortKey: func(e E) string { return iso(e.UpdatedAt) }},
		}}
}
