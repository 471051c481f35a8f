package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Global search: one query over the records people look for by name. The
// index (storage) is kept current by triggers on the source tables; this
// file turns what a person typed into a safe full-text expression, decides
// which types and records the principal may see, and shapes the hits.

// The searchable record types.
const (
	SearchVendor        = "vendor"
	SearchControl       = "control"
	SearchRequirement   = "requirement"
	SearchPolicy        = "policy"
	SearchRisk          = "risk"
	SearchFinding       = "finding"
	SearchPerson        = "person"
	SearchKB            = "kb"
	SearchQuestionnaire = "questionnaire"
)

// SearchTypes are the searchable types in the order results are grouped.
var SearchTypes = []string{SearchVendor, SearchControl, SearchRequirement, SearchPolicy, SearchRisk,
	SearchFinding, SearchPerson, SearchKB, SearchQuestionnaire}

// Search limits.
const (
	// MaxSearchQuery is the longest query, in characters.
	MaxSearchQuery = 200
	// maxSearchTerms bounds the terms of one query; further words are
	// ignored (they would only narrow an already narrow query).
	maxSearchTerms = 12
)

// TextPart is a piece of a hit's text, matched by the query or not.
type TextPart struct {
	Text  string
	Match bool
}

// Highlighted is a text in parts, the matched ones marked. Pages render
// each part escaped and the matched ones inside <mark>.
type Highlighted []TextPart

// String is the plain text.
func (h Highlighted) String() string {
	var b strings.Builder
	for _, p := range h {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Spans are the matched parts as [start, end) offsets in characters
// (Unicode code points) of the plain text.
func (h Highlighted) Spans() [][2]int {
	out := [][2]int{}
	pos := 0
	for _, p := range h {
		n := utf8.RuneCountInString(p.Text)
		if p.Match {
			out = append(out, [2]int{pos, pos + n})
		}
		pos += n
	}
	return out
}

// SearchHit is one record found.
type SearchHit struct {
	Type string
	ID   string
	// ParentID is the framework of a requirement, "" for other types.
	ParentID string
	Title    Highlighted
	Snippet  Highlighted
	// Score is the relevance (BM25, higher is better); comparable within
	// one query.
	Score float64
}

// SearchSpec is a search as the store runs it.
type SearchSpec struct {
	// Match is the full-text expression of the terms (SearchQuery.Match).
	Match string
	// Types are the types searched.
	Types []string
	// Frameworks are the built-in frameworks whose catalog requirements
	// are searched along with the organization's own records.
	Frameworks []string
	// ViewerID, when set, narrows every type to what is assigned to this
	// person, as the list endpoints do for employees and contractors.
	ViewerID string
}

// SearchStore is the full-text index.
type SearchStore interface {
	// SearchRecords returns a page of hits, best first.
	SearchRecords(ctx context.Context, orgID string, s SearchSpec, limit, offset int) ([]SearchHit, error)
	// SearchTop returns the best perType hits of each type.
	SearchTop(ctx context.Context, orgID string, s SearchSpec, perType int) ([]SearchHit, error)
	// CountSearch counts the hits per type.
	CountSearch(ctx context.Context, orgID string, s SearchSpec) (map[string]int, error)
	// SearchCatalogState returns the hash of each indexed catalog framework.
	SearchCatalogState(ctx context.Context) (map[string]string, error)
	// IndexSearchCatalog replaces the indexed requirements of a built-in
	// framework.
	IndexSearchCatalog(ctx context.Context, frameworkID, hash string, reqs []Requirement, at time.Time) error
}

// SearchQuery is what a person typed, as plain terms.
type SearchQuery struct {
	// Terms are the words searched for, in order; the last is matched as
	// a prefix (the person may still be typing it).
	Terms []string
}

// ParseSearchQuery reads user input as plain terms: every run of letters
// and digits is a term and everything else separates them, so FTS5 syntax
// (AND, OR, NOT, quotes, *, -, :, parentheses, ^) is never interpreted.
// Terms are deduplicated, at most 12 are kept.
func ParseSearchQuery(s string) SearchQuery {
	var q SearchQuery
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !isTermRune(r) }) {
		k := strings.ToLower(w)
		if seen[k] {
			continue
		}
		seen[k] = true
		q.Terms = append(q.Terms, w)
		if len(q.Terms) == maxSearchTerms {
			break
		}
	}
	return q
}

// isTermRune reports whether r belongs to a term: the characters the
// index's tokenizer (unicode61) keeps in tokens, letters, numbers and
// private-use characters.
func isTermRune(r rune) bool {
	return r != utf8.RuneError && unicode.In(r, unicode.L, unicode.N, unicode.Co) && r != '\uE000' && r != '\uE001'
}

// Empty reports whether nothing searchable was typed.
func (q SearchQuery) Empty() bool { return len(q.Terms) == 0 }

// Match is the FTS5 expression: every term quoted as a string (a quote
// inside doubled), all required, the last as a prefix, restricted to the
// title and body columns. It is "" for an empty query.
func (q SearchQuery) Match() string {
	if q.Empty() {
		return ""
	}
	parts := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		parts[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	parts[len(parts)-1] += "*"
	return "{title body} : (" + strings.Join(parts, " ") + ")"
}

// SearchRequest is a search of one page of hits.
type SearchRequest struct {
	Query string
	// Types restricts the search; empty means every type the principal
	// may search.
	Types []string
	Page  Page
}

// SearchResult is one page of hits with the counts per type.
type SearchResult struct {
	Query  string
	Terms  []string
	Types  []string
	Hits   []SearchHit
	Total  int
	Counts map[string]int
}

// searchState remembers which catalog frameworks were checked against the
// index since the process started.
type searchState struct {
	mu      sync.Mutex
	checked map[string]bool
}

// searchTypesFor returns the types a principal may search: employees and
// contractors do not read questionnaires (the list refuses them).
func searchTypesFor(p *Principal) []string {
	if !p.SeesOnlyAssigned() {
		return SearchTypes
	}
	out := make([]string, 0, len(SearchTypes))
	for _, t := range SearchTypes {
		if t != SearchQuestionnaire {
			out = append(out, t)
		}
	}
	return out
}

// SearchTypesFor returns the types the principal in ctx may search.
func (a *App) SearchTypesFor(ctx context.Context) []string {
	p, err := principal(ctx)
	if err != nil {
		return nil
	}
	return searchTypesFor(p)
}

// prepareSearch validates a query and types and builds the store's spec.
func (a *App) prepareSearch(ctx context.Context, p *Principal, query string, types []string) (SearchQuery, SearchSpec, error) {
	query = strings.TrimSpace(query)
	ve := NewValidationError()
	if query == "" {
		ve.Add("q", CodeRequired, nil, "q is required: the words to search for")
	}
	maxLen(ve, "q", query, MaxSearchQuery)
	allowed := searchTypesFor(p)
	var want []string
	forbidden := false
	for _, t := range types {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		oneOf(ve, "types", t, SearchTypes)
		if !contains(allowed, t) {
			forbidden = forbidden || contains(SearchTypes, t)
			continue
		}
		if !contains(want, t) {
			want = append(want, t)
		}
	}
	if err := ve.Err(); err != nil {
		return SearchQuery{}, SearchSpec{}, err
	}
	if forbidden {
		return SearchQuery{}, SearchSpec{}, Errorf(ErrForbidden, "the %s role may not search questionnaires", p.Role)
	}
	if len(want) == 0 {
		want = allowed
	}
	sq := ParseSearchQuery(query)
	spec := SearchSpec{Match: sq.Match(), Types: want}
	if p.SeesOnlyAssigned() {
		if p.UserID == "" {
			// A credential acting for nobody has nothing assigned.
			spec.Match = ""
		}
		spec.ViewerID = p.UserID
	}
	if contains(want, SearchRequirement) && spec.Match != "" {
		fws, err := a.catalogFrameworksIndexed(ctx, p.OrgID)
		if err != nil {
			return SearchQuery{}, SearchSpec{}, err
		}
		spec.Frameworks = fws
	}
	return sq, spec, nil
}

// Search returns one page of hits for a query, best first, over the types
// asked for (all the principal may search when none), with the number of
// hits per type. Employees and contractors find only what they can open:
// the records assigned to them, published policies, themselves and the
// requirements of enabled frameworks.
func (a *App) Search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	sq, spec, err := a.prepareSearch(ctx, p, req.Query, req.Types)
	if err != nil {
		return nil, err
	}
	out := &SearchResult{Query: strings.TrimSpace(req.Query), Terms: sq.Terms, Types: spec.Types, Hits: []SearchHit{},
		Counts: map[string]int{}}
	for _, t := range spec.Types {
		out.Counts[t] = 0
	}
	if spec.Match == "" {
		return out, nil
	}
	counts, err := a.store.CountSearch(ctx, p.OrgID, spec)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	for t, n := range counts {
		out.Counts[t] = n
		out.Total += n
	}
	if req.Page.Offset() >= out.Total {
		return out, nil
	}
	hits, err := a.store.SearchRecords(ctx, p.OrgID, spec, req.Page.PerPage, req.Page.Offset())
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if out.Hits, err = a.visibleHits(ctx, p, hits); err != nil {
		return nil, err
	}
	return out, nil
}

// SearchGroups is the search page: the best hits of each type.
type SearchGroups struct {
	Query  string
	Terms  []string
	Types  []string
	Groups []SearchGroup
	Total  int
}

// SearchGroup is the best hits of one type and how many there are.
type SearchGroup struct {
	Type  string
	Hits  []SearchHit
	Total int
}

// SearchGrouped returns up to perType of the best hits of each type the
// principal may search (or of the types given), for the search page.
func (a *App) SearchGrouped(ctx context.Context, query string, types []string, perType int) (*SearchGroups, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	sq, spec, err := a.prepareSearch(ctx, p, query, types)
	if err != nil {
		return nil, err
	}
	out := &SearchGroups{Query: strings.TrimSpace(query), Terms: sq.Terms, Types: spec.Types}
	if spec.Match == "" {
		return out, nil
	}
	counts, err := a.store.CountSearch(ctx, p.OrgID, spec)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	// Only the types with hits are ranked.
	top := spec
	top.Types = nil
	for _, t := range spec.Types {
		if counts[t] > 0 {
			top.Types = append(top.Types, t)
		}
	}
	hits, err := a.store.SearchTop(ctx, p.OrgID, top, perType)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if hits, err = a.visibleHits(ctx, p, hits); err != nil {
		return nil, err
	}
	byType := map[string][]SearchHit{}
	for _, h := range hits {
		byType[h.Type] = append(byType[h.Type], h)
	}
	for _, t := range spec.Types {
		if counts[t] == 0 {
			continue
		}
		out.Groups = append(out.Groups, SearchGroup{Type: t, Hits: byType[t], Total: counts[t]})
		out.Total += counts[t]
	}
	return out, nil
}

// visibleHits passes each hit of an employee or contractor through the
// service that opens the record, so search never shows what the record's
// own page would refuse. The store already narrowed the query the same
// way; this keeps the two from drifting apart.
func (a *App) visibleHits(ctx context.Context, p *Principal, hits []SearchHit) ([]SearchHit, error) {
	if !p.SeesOnlyAssigned() {
		return hits, nil
	}
	out := hits[:0]
	for _, h := range hits {
		var err error
		switch h.Type {
		case SearchVendor:
			_, err = a.GetVendor(ctx, h.ID)
		case SearchControl:
			_, err = a.GetControl(ctx, h.ID)
		case SearchRequirement:
			// Every role reads every framework's requirements; the index
			// holds only those of the organization and of the built-in
			// frameworks it enabled.
		case SearchPolicy:
			_, err = a.GetPolicy(ctx, h.ID)
		case SearchRisk:
			_, err = a.GetRisk(ctx, h.ID)
		case SearchFinding:
			_, err = a.GetFinding(ctx, h.ID)
		case SearchPerson:
			_, err = a.GetPerson(ctx, h.ID)
		case SearchKB:
			_, err = a.GetKBEntry(ctx, h.ID)
		default:
			err = ErrNotFound
		}
		switch {
		case err == nil:
			out = append(out, h)
		case errors.Is(err, ErrNotFound), errors.Is(err, ErrForbidden):
		default:
			return nil, fmt.Errorf("search: check %s %s: %w", h.Type, h.ID, err)
		}
	}
	return out, nil
}

// catalogFrameworksIndexed returns the organization's enabled built-in
// frameworks, indexing the requirements of any whose catalog the index
// does not hold yet (or holds an older version of). This happens once per
// framework and catalog version, then is remembered for the process.
func (a *App) catalogFrameworksIndexed(ctx context.Context, orgID string) ([]string, error) {
	c, err := a.catalog()
	if err != nil {
		return nil, err
	}
	enabled, err := a.store.EnabledFrameworks(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("search: enabled frameworks: %w", err)
	}
	var ids []string
	for id := range enabled {
		if c.lookup(id) != nil {
			ids = append(ids, id)
		}
	}
	a.search.mu.Lock()
	defer a.search.mu.Unlock()
	var todo []string
	for _, id := range ids {
		if !a.search.checked[id] {
			todo = append(todo, id)
		}
	}
	if len(todo) == 0 {
		return ids, nil
	}
	state, err := a.store.SearchCatalogState(ctx)
	if err != nil {
		return nil, fmt.Errorf("search: catalog state: %w", err)
	}
	if a.search.checked == nil {
		a.search.checked = map[string]bool{}
	}
	for _, id := range todo {
		reqs := c.Requirements(id)
		h := requirementsHash(reqs)
		if state[id] != h {
			if err := a.store.IndexSearchCatalog(ctx, id, h, reqs, a.Now()); err != nil {
				return nil, fmt.Errorf("search: index catalog %s: %w", id, err)
			}
		}
		a.search.checked[id] = true
	}
	return ids, nil
}

// requirementsHash identifies the indexed text of a framework's
// requirements.
func requirementsHash(reqs []Requirement) string {
	h := sha256.New()
	for _, r := range reqs {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x01", r.ID, r.Ref, r.Title, r.Description)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
