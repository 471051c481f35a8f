package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// The evidence library: every evidence item of the organization in one
// list, with its control, the frameworks the control serves, who uploaded
// it and when it expires, and a twelve-month view of what expires when.

// Expiry filters of the evidence library.
const (
	EvidenceExpiring30 = "30"
	EvidenceExpiring60 = "60"
	EvidenceExpiring90 = "90"
	EvidenceExpired    = "expired"
	EvidenceNoExpiry   = "none"
)

// EvidenceExpiryFilters are the accepted values of EvidenceLibraryFilter.Expires.
var EvidenceExpiryFilters = []string{EvidenceExpiring30, EvidenceExpiring60, EvidenceExpiring90, EvidenceExpired, EvidenceNoExpiry}

// EvidenceLibrarySorts are the sort keys (a leading - sorts descending).
var EvidenceLibrarySorts = []string{"filename", "control", "uploadedAt", "expiresAt"}

// EvidenceLibraryFilter selects and orders the library.
type EvidenceLibraryFilter struct {
	// Expires is "30", "60" or "90" (unexpired, expiring within that many
	// days), "expired", "none" (no expiry date) or "" (all).
	Expires string
	// Month (YYYY-MM) keeps evidence expiring in that month.
	Month string
	// FrameworkID keeps evidence of controls serving the framework.
	FrameworkID string
	// OwnerID keeps evidence of controls this person owns.
	OwnerID string
	Sort    string
	Page    Page

	// Set by the service.
	Now      time.Time
	From, To *time.Time // expires_at in (From, To]
	ViewerID string     // employees and contractors: their controls and tasks
}

// EvidenceItem is one row of the library.
type EvidenceItem struct {
	Evidence
	ControlCode    string
	ControlName    string
	ControlOwnerID *string
	Frameworks     []FrameworkName
}

// FrameworkName names a framework in a list.
type FrameworkName struct {
	ID   string
	Name string
}

// EvidenceMonth is one month of the expiry timeline.
type EvidenceMonth struct {
	Month time.Time // the first day
	Key   string    // YYYY-MM
	Count int
}

// EvidenceTimeline is the library's twelve-month expiry view: the evidence
// expiring in each month from the current one, plus what has expired and
// what never expires.
type EvidenceTimeline struct {
	Months   []EvidenceMonth
	Expired  int
	NoExpiry int
	Max      int
}

// EvidenceLibraryStore reads the library.
type EvidenceLibraryStore interface {
	ListEvidenceLibrary(ctx context.Context, orgID string, f EvidenceLibraryFilter) (List[EvidenceItem], error)
	// EvidenceExpiryCounts counts the filtered evidence per expiry month
	// (YYYY-MM) from -> to, and the expired and never-expiring ones.
	EvidenceExpiryCounts(ctx context.Context, orgID string, f EvidenceLibraryFilter, from, to time.Time) (map[string]int, int, int, error)
}

// libraryFilter validates a filter and fills in what the store needs.
func (a *App) libraryFilter(p *Principal, f EvidenceLibraryFilter) (EvidenceLibraryFilter, error) {
	ve := NewValidationError()
	oneOf(ve, "expires", f.Expires, EvidenceExpiryFilters)
	if f.Sort != "" && !contains(EvidenceLibrarySorts, strings.TrimPrefix(f.Sort, "-")) {
		ve.Add("sort", CodeInvalidEnum, f.Sort, "sort must be one of "+strings.Join(EvidenceLibrarySorts, ", ")+" with an optional - prefix")
	}
	now := a.Now()
	f.Now = now
	if f.Month != "" {
		m, err := time.Parse("2006-01", f.Month)
		if err != nil {
			ve.Add("month", CodeInvalid, f.Month, "month must be YYYY-MM")
		} else {
			end := m.AddDate(0, 1, 0)
			f.From, f.To = Ptr(m.Add(-time.Millisecond)), Ptr(end.Add(-time.Millisecond))
		}
	}
	if err := ve.Err(); err != nil {
		return f, err
	}
	if p.SeesOnlyAssigned() {
		f.ViewerID = p.UserID
		if f.ViewerID == "" {
			f.ViewerID = "-" // a credential acting for nobody has nothing assigned
		}
	}
	return f, nil
}

// EvidenceLibrary lists the organization's evidence with its control and
// frameworks, filtered and sorted (newest upload first by default).
// Employees and contractors see the evidence of the controls they own and
// of the tasks assigned to them, as when they open evidence one by one.
func (a *App) EvidenceLibrary(ctx context.Context, f EvidenceLibraryFilter) (List[EvidenceItem], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[EvidenceItem]{}, err
	}
	if f, err = a.libraryFilter(p, f); err != nil {
		return List[EvidenceItem]{}, err
	}
	l, err := a.store.ListEvidenceLibrary(ctx, p.OrgID, f)
	if err != nil {
		return l, fmt.Errorf("evidence library: %w", err)
	}
	if len(l.Items) == 0 {
		return l, nil
	}
	ids := make([]string, 0, len(l.Items))
	seen := map[string]bool{}
	for _, it := range l.Items {
		if !seen[it.ControlID] {
			seen[it.ControlID] = true
			ids = append(ids, it.ControlID)
		}
	}
	links, err := a.store.ControlRequirementLinks(ctx, p.OrgID, ids)
	if err != nil {
		return l, fmt.Errorf("evidence library: %w", err)
	}
	names, err := a.frameworkNames(ctx, p.OrgID)
	if err != nil {
		return l, err
	}
	for i := range l.Items {
		it := &l.Items[i]
		it.fill(f.Now)
		it.Frameworks = []FrameworkName{}
		had := map[string]bool{}
		for _, link := range links[it.ControlID] {
			if had[link.FrameworkID] {
				continue
			}
			had[link.FrameworkID] = true
			it.Frameworks = append(it.Frameworks, FrameworkName{ID: link.FrameworkID, Name: names[link.FrameworkID]})
		}
		sort.Slice(it.Frameworks, func(x, y int) bool { return it.Frameworks[x].Name < it.Frameworks[y].Name })
	}
	return l, nil
}

// EvidenceTimeline counts the filtered evidence (framework and owner; the
// expiry filters do not apply) expiring in each of the twelve months from
// the current one, with the expired and never-expiring counts beside.
func (a *App) EvidenceTimeline(ctx context.Context, f EvidenceLibraryFilter) (*EvidenceTimeline, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	f.Expires, f.Month = "", ""
	if f, err = a.libraryFilter(p, f); err != nil {
		return nil, err
	}
	start := time.Date(f.Now.Year(), f.Now.Month(), 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(1, 0, 0)
	counts, expired, none, err := a.store.EvidenceExpiryCounts(ctx, p.OrgID, f, f.Now, end)
	if err != nil {
		return nil, fmt.Errorf("evidence timeline: %w", err)
	}
	t := &EvidenceTimeline{Expired: expired, NoExpiry: none}
	for i := range 12 {
		m := start.AddDate(0, i, 0)
		key := m.Format("2006-01")
		t.Months = append(t.Months, EvidenceMonth{Month: m, Key: key, Count: counts[key]})
		t.Max = max(t.Max, counts[key])
	}
	return t, nil
}

// frameworkNames names the built-in and the organization's custom
// frameworks by id (short names where the catalog has them).
func (a *App) frameworkNames(ctx context.Context, orgID string) (map[string]string, error) {
	c, err := a.catalog()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range c.Frameworks() {
		out[f.ID] = frameworkLabel(f)
	}
	custom, err := a.store.ListCustomFrameworks(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("framework names: %w", err)
	}
	for _, f := range custom {
		out[f.ID] = frameworkLabel(f)
	}
	return out, nil
}

func frameworkLabel(f Framework) string {
	if f.ShortName != "" {
		return f.ShortName
	}
	return f.Name
}

// EnabledFrameworkNames lists the organization's enabled frameworks by
// name, for pickers (no scores computed).
func (a *App) EnabledFrameworkNames(ctx context.Context) ([]FrameworkName, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	names, err := a.frameworkNames(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	enabled, err := a.store.EnabledFrameworks(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	out := []FrameworkName{}
	for id := range enabled {
		if n, ok := names[id]; ok {
			out = append(out, FrameworkName{ID: id, Name: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
