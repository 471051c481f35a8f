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

func trustRequestList(fetch func(app.Page) ([]app.TrustAccessRequest, int, error)) listSpec[app.TrustAccessRequest] {
	type R = app.TrustAccessRequest
	return listSpec[R]{Name: "trust-access-requests", Noun: "access request", Plural: "access requests", Default: "-createdAt", PerPage: 50,
		FilterKeys: []string{"status"}, Fetch: fetch,
		Cols: []listCol[R]{
			{Key: "id", Cell: func(t R) string { return t.ID }},
			{Key: "name", Cell: func(t R) string { return t.Name }, SortKey: func(t R) string { return lower(t.Name) }},
			{Key: "email", Cell: func(t R) string { return t.Email }},
			{Key: "company", Cell: func(t R) string { return t.Company }, SortKey: func(t R) string { return lower(t.Company) }},
			{Key: "reason", Cell: func(t R) string { return t.Reason }},
			{Key: "status", Cell: func(t R) string { return t.Status }, SortKey: func(t R) string { return rank(app.TrustRequestStatuses, t.Status) }},
			{Key: "ndaSignedAt", Cell: func(t R) string { return optTime(t.NDASignedAt) }},
			{Key: "decidedAt", Cell: func(t R) string { return optTime(t.DecidedAt) }},
			{Key: "accessExpiresAt", Cell: func(t R) string { return optTime(t.AccessExpiresAt) }, SortKey: func(t R) string { return lastIfEmpty(optTime(t.AccessExpiresAt)) }},
			{Key: "createdAt", Cell: func(t R) string { return iso(t.CreatedAt) }, SortKey: func(t R) string { return iso(t.CreatedAt) }},
		}}
}

func findingTemplateList(fetch func(app.Page) ([]app.FindingTemplate, int, error)) listSpec[app.FindingTemplate] {
	type T = app.FindingTemplate
	return listSpec[T]{Name: "finding-templates", Noun: "finding template", Plural: "finding templates", Default: "order", PerPage: 50,
		Fetch: fetch, Native: "order",
		Cols: []listCol[T]{
			{Key: "id", Cell: func(t T) string { return t.ID }},
			{Key: "title", Cell: func(t T) string { return t.Title }, SortKey: func(t T) string { return lower(t.Title) }},
			{Key: "content", Cell: func(t T) string { return t.Content }},
			{Key: "category", Cell: func(t T) string { return t.Category }, SortKey: func(t T) string { return lower(t.Category) }},
			{Key: "severity", Cell: func(t T) string { return deref(t.Severity) }, SortKey: func(t T) string { return rank(app.FindingSeverities, deref(t.Severity)) }},
			{Key: "findingClass", Cell: func(t T) string { return deref(t.FindingClass) }},
			{Key: "type", Cell: func(t T) string { return deref(t.Type) }},
			{Key: "order", Cell: func(t T) string { return itoa(t.Order) }, SortKey: func(t T) string { return padInt(t.Order) }},
		}}
}

// sliceFetch pages a list a service returns whole (a few rows per
// organization or person) for the list component.
func sliceFetch[T any](load func() ([]T, error)) func(app.Page) ([]T, int, error) {
	var all []T
	loaded := false
	return func(p app.Page) ([]T, int, error) {
		if !loaded {
			l, err := load()
			if err != nil {
				return nil, 0, err
			}
			all, loaded = l, true
		}
		from := min(len(all), p.Offset())
		return all[from:min(len(all), from+p.PerPage)], len(all), nil
	}
}

func oauthAppList(fetch func(app.Page) ([]app.OAuthClient, int, error)) listSpec[app.OAuthClient] {
	type C = app.OAuthClient
	return listSpec[C]{Name: "oauth-apps", Noun: "OAuth app", Plural: "OAuth apps", Default: "name", PerPage: 50, Fetch: fetch,
		Cols: []listCol[C]{
			{Key: "id", Cell: func(c C) string { return c.ID }},
			{Key: "name", Cell: func(c C) string { return c.Name }, SortKey: func(c C) string { return lower(c.Name) }},
			{Key: "description", Cell: func(c C) string { return c.Description }},
			{Key: "redirectUris", Cell: func(c C) string { return strings.Join(c.RedirectURIs, " ") }},
			{Key: "scopes", Cell: func(c C) string { return strings.Join(c.Scopes, " ") }},
			{Key: "tokenEndpointAuthMethod", Cell: func(c C) string { return c.TokenEndpointAuthMethod }},
			{Key: "createdAt", Cell: func(c C) string { return iso(c.CreatedAt) }, SortKey: func(c C) string { return iso(c.CreatedAt) }},
		}}
}

func grantList(fetch func(app.Page) ([]app.OAuthGrant, int, error)) listSpec[app.OAuthGrant] {
	type G = app.OAuthGrant
	return listSpec[G]{Name: "connected-apps", Noun: "connected app", Plural: "connected apps", Default: "-createdAt", PerPage: 50, Fetch: fetch,
		Cols: []listCol[G]{
			{Key: "id", Cell: func(g G) string { return g.ID }},
			{Key: "clientName", Cell: func(g G) string { return g.ClientName }, SortKey: func(g G) string { return lower(g.ClientName) }},
			{Key: "clientId", Cell: func(g G) string { return g.ClientID }},
			{Key: "scopes", Cell: func(g G) string { return strings.Join(g.Scopes, " ") }},
			{Key: "createdAt", Cell: func(g G) string { return iso(g.CreatedAt) }, SortKey: func(g G) string { return iso(g.CreatedAt) }},
			{Key: "lastUsedAt", Cell: func(g G) string { return optTime(g.LastUsedAt) }, SortKey: func(g G) string { return lastIfEmpty(optTime(g.LastUsedAt)) }},
		}}
}

func taskTemplateList(fetch func(app.Page) ([]templateRow, int, error)) listSpec[templateRow] {
	type R = templateRow
	req := func(r R) string {
		if r.Requirement == nil {
			return r.T.RequirementID
		}
		return r.Requirement.Ref
	}
	return listSpec[R]{Name: "task-templates", Noun: "task template", Plural: "task templates", Default: "framework", PerPage: 50,
		FilterKeys: []string{"framework"}, Fetch: fetch,
		Cols: []listCol[R]{
			{Key: "id", Cell: func(r R) string { return r.T.ID }},
			{Key: "name", Cell: func(r R) string { return r.T.Name }, SortKey: func(r R) string { return lower(r.T.Name) }},
			{Key: "framework", Cell: func(r R) string { return r.Framework }, SortKey: func(r R) string { return lower(r.Framework) + "\x00" + lower(r.T.Name) }},
			{Key: "requirement", Cell: req, SortKey: func(r R) string { return lower(req(r)) }},
			{Key: "frequency", Cell: func(r R) string { return deref(r.T.Frequency) }, SortKey: func(r R) string { return lastIfEmpty(deref(r.T.Frequency)) }},
			{Key: "department", Cell: func(r R) string { return deref(r.T.Department) }, SortKey: func(r R) string { return lastIfEmpty(deref(r.T.Department)) }},
			{Key: "description", Cell: func(r R) string { return r.T.Description }},
			{Key: "createdAt", Cell: func(r R) string { return iso(r.T.CreatedAt) }},
		}}
}

func frameworkList(fetch func(app.Page) ([]app.Framework, int, error)) listSpec[app.Framework] {
	type F = app.Framework
	enabled := func(f F) string {
		if f.Enabled {
			return "enabled"
		}
		return "not enabled"
	}
	score := func(f F) string {
		if !f.Enabled || f.Score == nil {
			return ""
		}
		return itoa(*f.Score)
	}
	return listSpec[F]{Name: "frameworks", Noun: "framework", Plural: "frameworks", Default: "name", PerPage: 50, Fetch: fetch,
		Cols: []listCol[F]{
			{Key: "id", Cell: func(f F) string { return f.ID }},
			{Key: "name", Cell: func(f F) string { return f.Name }, SortKey: func(f F) string { return lower(f.Name) }},
			{Key: "version", Cell: func(f F) string { return f.Version }},
			{Key: "publisher", Cell: func(f F) string { return f.Publisher }, SortKey: func(f F) string { return lower(f.Publisher) }},
			{Key: "requirementCount", Cell: func(f F) string { return itoa(f.RequirementCount) }, SortKey: func(f F) string { return padInt(f.RequirementCount) }},
			{Key: "status", Cell: enabled, SortKey: func(f F) string { return enabled(f) + "\x00" + lower(f.Name) }},
			{Key: "score", Cell: score, SortKey: func(f F) string {
				if s := score(f); s != "" {
					return padInt(*f.Score)
				}
				return lastIfEmpty("")
			}},
			{Key: "custom", Cell: func(f F) string { return strconv.FormatBool(f.Custom) }},
		}}
}

func requirementList(fetch func(app.Page) ([]app.Requirement, int, error)) listSpec[app.Requirement] {
	type R = app.Requirement
	return listSpec[R]{Name: "requirements", Noun: "requirement", Plural: "requirements", Default: "position", Native: "position", PerPage: 50, Fetch: fetch,
		Cols: []listCol[R]{
			{Key: "id", Cell: func(r R) string { return r.ID }},
			{Key: "position", SortKey: func(r R) string { return padInt(r.Position) }},
			{Key: "ref", Cell: func(r R) string { return r.Ref }, SortKey: func(r R) string { return lower(r.Ref) }},
			{Key: "title", Cell: func(r R) string { return r.Title }, SortKey: func(r R) string { return lower(r.Title) }},
			{Key: "description", Cell: func(r R) string { return r.Description }},
			{Key: "parentRef", Cell: func(r R) string { return r.ParentRef }},
			{Key: "assessable", Cell: func(r R) string { return strconv.FormatBool(r.Assessable) }},
			{Key: "controls", Cell: func(r R) string { return itoa(len(r.ControlIDs)) }, SortKey: func(r R) string { return padInt(len(r.ControlIDs)) }},
		}}
}

func deliveryList(fetch func(app.Page) ([]app.Delivery, int, error)) listSpec[app.Delivery] {
	type D = app.Delivery
	code := func(d D) string {
		if d.LastStatusCode == nil {
			return ""
		}
		return itoa(*d.LastStatusCode)
	}
	return listSpec[D]{Name: "webhook-deliveries", Noun: "delivery", Plural: "deliveries", Default: "-createdAt", Native: "-createdAt", PerPage: 50,
		FilterKeys: []string{"status", "event"}, Fetch: fetch,
		Cols: []listCol[D]{
			{Key: "id", Cell: func(d D) string { return d.ID }},
			{Key: "event", Cell: func(d D) string { return d.Event }, SortKey: func(d D) string { return d.Event + "\x00" + d.ID }},
			{Key: "eventId", Cell: func(d D) string { return d.EventID }},
			{Key: "status", Cell: func(d D) string { return d.Status }, SortKey: func(d D) string { return rank(app.DeliveryStatuses, d.Status) + d.ID }},
			{Key: "attemptCount", Cell: func(d D) string { return itoa(d.AttemptCount) }, SortKey: func(d D) string { return padInt(d.AttemptCount) }},
			{Key: "lastStatusCode", Cell: code},
			{Key: "lastError", Cell: func(d D) string { return deref(d.LastError) }},
			{Key: "lastAttemptAt", Cell: func(d D) string { return optTime(d.LastAttemptAt) }},
			{Key: "nextAttemptAt", Cell: func(d D) string { return optTime(d.NextAttemptAt) }},
			{Key: "createdAt", Cell: func(d D) string { return iso(d.CreatedAt) }, SortKey: func(d D) string { return iso(d.CreatedAt) + d.ID }},
		}}
}

func contextVersionList(fetch func(app.Page) ([]app.OrgContext, int, error)) listSpec[app.OrgContext] {
	type C = app.OrgContext
	by := func(c C) string {
		if c.SavedBy == nil {
			return ""
		}
		return c.SavedBy.ID
	}
	return listSpec[C]{Name: "context-versions", Noun: "version", Plural: "versions", Default: "-version", Native: "-version", PerPage: 50, Fetch: fetch,
		Cols: []listCol[C]{
			{Key: "id", Cell: func(c C) string { return deref(c.ID) }},
			{Key: "version", Cell: func(c C) string { return itoa(c.Version) }, SortKey: func(c C) string { return padInt(c.Version) }},
			{Key: "savedAt", Cell: func(c C) string { return optTime(c.SavedAt) }},
			{Key: "savedBy", Cell: by},
			{Key: "changeNote", Cell: func(c C) string { return c.ChangeNote }, SortKey: func(c C) string { return lower(c.ChangeNote) }},
			{Key: "isCurrent", Cell: func(c C) string { return strconv.FormatBool(c.IsCurrent) }},
		}}
}

func jobList(fetch func(app.Page) ([]jobView, int, error)) listSpec[jobView] {
	type J = jobView
	return listSpec[J]{Name: "jobs", Noun: "job", Plural: "jobs", Default: "-created", PerPage: 50, Fetch: fetch,
		Cols: []listCol[J]{
			{Key: "id", Cell: func(j J) string { return j.ID }},
			{Key: "title", Cell: func(j J) string { return j.Title }, SortKey: func(j J) string { return lower(j.Title) }},
			{Key: "kind", Cell: func(j J) string { return j.Kind }},
			{Key: "status", Cell: func(j J) string { return j.Status }, SortKey: func(j J) string { return j.Status }},
			{Key: "done", Cell: func(j J) string { return itoa(j.Done) }},
			{Key: "total", Cell: func(j J) string { return itoa(j.Total) }},
			{Key: "error", Cell: func(j J) string { return j.Error }},
			{Key: "created", Cell: func(j J) string { return iso(j.Created) }, SortKey: func(j J) string { return iso(j.Created) + padInt(int(j.seq)) }},
			{Key: "expires", Cell: func(j J) string {
				if j.Expires.IsZero() {
					return ""
				}
				return iso(j.Expires)
			}},
		}}
}

func pentestList(fetch func(app.Page) ([]app.PentestRun, int, error)) listSpec[app.PentestRun] {
	type P = app.PentestRun
	issues := func(p P) int {
		n := 0
		for _, c := range p.Summary.IssueCounts {
			n += c
		}
		return n
	}
	return listSpec[P]{Name: "pentests", Noun: "penetration test", Plural: "penetration tests", Default: "-createdAt", Native: "-createdAt", PerPage: 50,
		FilterKeys: []string{"targetUrl", "status"}, Fetch: fetch,
		Cols: []listCol[P]{
			{Key: "id", Cell: func(p P) string { return p.ID }},
			{Key: "targetUrl", Cell: func(p P) string { return p.TargetURL }, SortKey: func(p P) string { return lower(p.TargetURL) + "\x00" + p.ID }},
			{Key: "status", Cell: func(p P) string { return p.Status }, SortKey: func(p P) string { return rank(app.PentestStatuses, p.Status) + p.ID }},
			{Key: "scanDepth", Cell: func(p P) string { return p.ScanDepth }, SortKey: func(p P) string { return rank(app.PentestDepths, p.ScanDepth) + p.ID }},
			{Key: "issues", Cell: func(p P) string { return itoa(issues(p)) }, SortKey: func(p P) string { return padInt(issues(p)) + p.ID }},
			{Key: "testMode", Cell: func(p P) string { return strconv.FormatBool(p.TestMode) }},
			{Key: "startedAt", Cell: func(p P) string { return optTime(p.StartedAt) }},
			{Key: "completedAt", Cell: func(p P) string { return optTime(p.CompletedAt) }},
			{Key: "createdAt", Cell: func(p P) string { return iso(p.CreatedAt) }, SortKey: func(p P) string { return iso(p.CreatedAt) + p.ID }},
		}}
}

func trainingModuleList(fetch func(app.Page) ([]app.TrainingModule, int, error)) listSpec[app.TrainingModule] {
	type M = app.TrainingModule
	return listSpec[M]{Name: "training-modules", Noun: "module", Plural: "modules", Default: "title", PerPage: 50, Fetch: fetch,
		Cols: []listCol[M]{
			{Key: "id", Cell: func(m M) string { return m.ID }},
			{Key: "title", Cell: func(m M) string { return m.Title }, SortKey: func(m M) string { return lower(m.Title) }},
			{Key: "kind", Cell: func(m M) string { return m.Kind }, SortKey: func(m M) string { return m.Kind + "\x00" + lower(m.Title) }},
			{Key: "builtin", Cell: func(m M) string { return strconv.FormatBool(m.Builtin) }},
			{Key: "version", Cell: func(m M) string { return itoa(m.Version) }, SortKey: func(m M) string { return padInt(m.Version) }},
			{Key: "durationMinutes", Cell: func(m M) string { return itoa(m.DurationMinutes) }},
			{Key: "passMark", Cell: func(m M) string { return itoa(m.PassMark) }},
			{Key: "required", Cell: func(m M) string { return strings.Join(m.Required, " ") }, SortKey: func(m M) string { return lastIfEmpty(strings.Join(m.Required, " ")) }},
		}}
}
