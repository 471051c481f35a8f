package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// The columns of each list page for the shared list component (ui_list.go):
// what its headers sort by and what its CSV/XLSX export holds.

func day(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02")
}

func title(f app.Finding) string {
	if f.Title != nil && *f.Title != "" {
		return *f.Title
	}
	return f.Content
}

func itoa(n int) string { return strconv.Itoa(n) }

func optInt(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

// padInt makes a number sort as a string (negative numbers not expected).
func padInt(n int) string { return fmt.Sprintf("%010d", n) }

func findingList(fetch func(app.Page) ([]app.Finding, int, error)) listSpec[app.Finding] {
	type F = app.Finding
	return listSpec[F]{Name: "findings", Noun: "finding", Plural: "findings", Default: "-createdAt", PerPage: 50,
		FilterKeys: []string{"status", "severity"}, Fetch: fetch,
		Cols: []listCol[F]{
			{Key: "id", Cell: func(f F) string { return f.ID }},
			{Key: "title", Cell: title, SortKey: func(f F) string { return lower(title(f)) }},
			{Key: "severity", Cell: func(f F) string { return f.Severity }, SortKey: func(f F) string { return rank(app.FindingSeverities, f.Severity) }},
			{Key: "status", Cell: func(f F) string { return f.Status }, SortKey: func(f F) string { return rank(app.FindingStatuses, f.Status) }},
			{Key: "findingClass", Cell: func(f F) string { return deref(f.FindingClass) }, SortKey: func(f F) string { return lastIfEmpty(deref(f.FindingClass)) }},
			{Key: "type", Cell: func(f F) string { return f.Type }},
			{Key: "source", Cell: func(f F) string { return deref(f.Source) }},
			{Key: "dueDate", Cell: func(f F) string { return day(f.DueDate) }, SortKey: func(f F) string { return lastIfEmpty(day(f.DueDate)) }},
			{Key: "closedAt", Cell: func(f F) string { return optTime(f.ClosedAt) }},
			{Key: "createdAt", Cell: func(f F) string { return iso(f.CreatedAt) }, SortKey: func(f F) string { return iso(f.CreatedAt) }},
		}}
}

func riskList(fetch func(app.Page) ([]app.Risk, int, error)) listSpec[app.Risk] {
	type R = app.Risk
	return listSpec[R]{Name: "risks", Noun: "risk", Plural: "risks", Default: "-score", PerPage: 50,
		FilterKeys: []string{"status", "band", "category"}, Fetch: fetch,
		Cols: []listCol[R]{
			{Key: "id", Cell: func(r R) string { return r.ID }},
			{Key: "title", Cell: func(r R) string { return r.Title }, SortKey: func(r R) string { return lower(r.Title) }},
			{Key: "category", Cell: func(r R) string { return r.Category }, SortKey: func(r R) string { return r.Category }},
			{Key: "status", Cell: func(r R) string { return r.Status }, SortKey: func(r R) string { return rank(app.RiskStatuses, r.Status) }},
			{Key: "inherentScore", Cell: func(r R) string { return itoa(r.InherentScore) }, SortKey: func(r R) string { return padInt(r.InherentScore) }},
			{Key: "residualScore", Cell: func(r R) string { return optInt(r.ResidualScore) }},
			{Key: "score", Cell: func(r R) string { return itoa(r.Score) }, SortKey: func(r R) string { return padInt(r.Score) }},
			{Key: "band", Cell: func(r R) string { return r.Band }, SortKey: func(r R) string { return rank(app.RiskBands, r.Band) }},
			{Key: "treatment", Cell: func(r R) string { return deref(r.Treatment) }, SortKey: func(r R) string { return lastIfEmpty(deref(r.Treatment)) }},
			{Key: "ownerId", Cell: func(r R) string { return deref(r.OwnerID) }},
			{Key: "createdAt", Cell: func(r R) string { return iso(r.CreatedAt) }, SortKey: func(r R) string { return iso(r.CreatedAt) }},
		}}
}

func taskList(fetch func(app.Page) ([]app.Task, int, error)) listSpec[app.Task] {
	type T = app.Task
	return listSpec[T]{Name: "tasks", Noun: "task", Plural: "tasks", Default: "dueDate", PerPage: 50,
		FilterKeys: []string{"status", "mine", "overdue"}, Fetch: fetch,
		Cols: []listCol[T]{
			{Key: "id", Cell: func(t T) string { return t.ID }},
			{Key: "title", Cell: func(t T) string { return t.Title }, SortKey: func(t T) string { return lower(t.Title) }},
			{Key: "status", Cell: func(t T) string { return t.Status }, SortKey: func(t T) string { return rank(app.TaskStatuses, t.Status) }},
			{Key: "assigneeId", Cell: func(t T) string { return deref(t.AssigneeID) }},
			{Key: "controlId", Cell: func(t T) string { return deref(t.ControlID) }},
			{Key: "dueDate", Cell: func(t T) string { return deref(t.DueDate) }, SortKey: func(t T) string { return lastIfEmpty(deref(t.DueDate)) }},
			{Key: "completedAt", Cell: func(t T) string { return optTime(t.CompletedAt) }},
			{Key: "createdAt", Cell: func(t T) string { return iso(t.CreatedAt) }, SortKey: func(t T) string { return iso(t.CreatedAt) }},
		}}
}

func controlList(fetch func(app.Page) ([]app.Control, int, error)) listSpec[app.Control] {
	type C = app.Control
	return listSpec[C]{Name: "controls", Noun: "control", Plural: "controls", Default: "code", PerPage: 50,
		FilterKeys: []string{"framework", "status"}, Fetch: fetch,
		Cols: []listCol[C]{
			{Key: "id", Cell: func(c C) string { return c.ID }},
			{Key: "code", Cell: func(c C) string { return c.Code }, SortKey: func(c C) string { return naturalKey(c.Code) }},
			{Key: "name", Cell: func(c C) string { return c.Name }, SortKey: func(c C) string { return lower(c.Name) }},
			{Key: "status", Cell: func(c C) string { return c.Status }, SortKey: func(c C) string { return rank(app.ControlStatuses, c.Status) }},
			{Key: "ownerId", Cell: func(c C) string { return deref(c.OwnerID) }},
			{Key: "evidenceCount", Cell: func(c C) string { return itoa(c.EvidenceCount) }, SortKey: func(c C) string { return padInt(c.EvidenceCount) }},
			{Key: "openFindingCount", Cell: func(c C) string { return itoa(c.OpenFindingCount) }},
			{Key: "updatedAt", Cell: func(c C) string { return iso(c.UpdatedAt) }},
		}}
}

func policyList(fetch func(app.Page) ([]app.Policy, int, error)) listSpec[app.Policy] {
	type P = app.Policy
	return listSpec[P]{Name: "policies", Noun: "policy", Plural: "policies", Default: "name", PerPage: 50,
		FilterKeys: []string{"status", "q", "pending"}, Fetch: fetch,
		Cols: []listCol[P]{
			{Key: "id", Cell: func(p P) string { return p.ID }},
			{Key: "name", Cell: func(p P) string { return p.Name }, SortKey: func(p P) string { return lower(p.Name) }},
			{Key: "status", Cell: func(p P) string { return p.Status }, SortKey: func(p P) string { return p.Status }},
			{Key: "version", Cell: func(p P) string { return itoa(p.Version) }, SortKey: func(p P) string { return padInt(p.Version) }},
			{Key: "reviewDate", Cell: func(p P) string { return deref(p.ReviewDate) }, SortKey: func(p P) string { return lastIfEmpty(deref(p.ReviewDate)) }},
			{Key: "lastPublishedAt", Cell: func(p P) string { return optTime(p.LastPublishedAt) }, SortKey: func(p P) string { return lastIfEmpty(optTime(p.LastPublishedAt)) }},
			{Key: "assigneeId", Cell: func(p P) string { return deref(p.AssigneeID) }},
			{Key: "updatedAt", Cell: func(p P) string { return iso(p.UpdatedAt) }, SortKey: func(p P) string { return iso(p.UpdatedAt) }},
		}}
}

func incidentList(fetch func(app.Page) ([]app.Incident, int, error)) listSpec[app.Incident] {
	type I = app.Incident
	return listSpec[I]{Name: "incidents", Noun: "incident", Plural: "incidents", Default: "-awareAt", PerPage: 50,
		FilterKeys: []string{"status", "type", "regime", "overdue"}, Fetch: fetch,
		Cols: []listCol[I]{
			{Key: "id", Cell: func(i I) string { return i.ID }},
			{Key: "title", Cell: func(i I) string { return i.Title }, SortKey: func(i I) string { return lower(i.Title) }},
			{Key: "type", Cell: func(i I) string { return i.Type }, SortKey: func(i I) string { return i.Type }},
			{Key: "severity", Cell: func(i I) string { return i.Severity }, SortKey: func(i I) string { return rank(app.IncidentSeverities, i.Severity) }},
			{Key: "status", Cell: func(i I) string { return i.Status }, SortKey: func(i I) string { return rank(app.IncidentStatuses, i.Status) }},
			{Key: "detectedAt", Cell: func(i I) string { return iso(i.DetectedAt) }},
			{Key: "awareAt", Cell: func(i I) string { return iso(i.AwareAt) }, SortKey: func(i I) string { return iso(i.AwareAt) }},
			{Key: "closedAt", Cell: func(i I) string { return optTime(i.ClosedAt) }},
		}}
}

func personList(fetch func(app.Page) ([]app.Person, int, error)) listSpec[app.Person] {
	type P = app.Person
	return listSpec[P]{Name: "people", Noun: "person", Plural: "people", Default: "name", PerPage: 50,
		FilterKeys: []string{"role", "inactive", "source", "twoFactor"}, Fetch: fetch,
		Cols: []listCol[P]{
			{Key: "id", Cell: func(p P) string { return p.ID }},
			{Key: "name", Cell: func(p P) string { return p.Name }, SortKey: func(p P) string { return lower(p.Name) }},
			{Key: "email", Cell: func(p P) string { return p.Email }, SortKey: func(p P) string { return lower(p.Email) }},
			{Key: "role", Cell: func(p P) string { return string(p.Role) }, SortKey: func(p P) string { return string(p.Role) }},
			{Key: "department", Cell: func(p P) string { return deref(p.Department) }},
			{Key: "isActive", Cell: func(p P) string { return strconv.FormatBool(p.IsActive) }, SortKey: func(p P) string { return strconv.FormatBool(!p.IsActive) }},
			{Key: "lastLoginAt", Cell: func(p P) string { return optTime(p.LastLoginAt) }, SortKey: func(p P) string { return lastIfEmpty(optTime(p.LastLoginAt)) }},
			{Key: "createdAt", Cell: func(p P) string { return iso(p.CreatedAt) }},
		}}
}

// naturalKey sorts codes such as A.5.10 after A.5.9: every run of digits
// is zero-padded.
func naturalKey(s string) string {
	var b strings.Builder
	digits := ""
	flush := func() {
		if digits != "" {
			b.WriteString(fmt.Sprintf("%08s", digits))
			digits = ""
		}
	}
	for _, r := range strings.ToLower(s) {
		if r >= '0' && r <= '9' {
			digits += string(r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	return b.String()
}

func auditList(fetch func(app.Page) ([]app.AuditRecord, int, error)) listSpec[app.AuditRecord] {
	type A = app.AuditRecord
	return listSpec[A]{Name: "audit-log", Noun: "record", Plural: "records", Default: "-occurredAt", Native: "-occurredAt", PerPage: 50,
		FilterKeys: []string{"resourceType", "resourceId", "actorId", "action", "from", "to"}, Fetch: fetch,
		Cols: []listCol[A]{
			{Key: "id", Cell: func(a A) string { return a.ID }},
			{Key: "occurredAt", Cell: func(a A) string { return iso(a.OccurredAt) }, SortKey: func(a A) string { return iso(a.OccurredAt) + fmt.Sprintf("%020d", a.Seq) }},
			{Key: "actorType", Cell: func(a A) string { return a.ActorType }, SortKey: func(a A) string { return a.ActorType + " " + a.ActorID }},
			{Key: "actorId", Cell: func(a A) string { return a.ActorID }},
			{Key: "action", Cell: func(a A) string { return a.Action }, SortKey: func(a A) string { return a.Action }},
			{Key: "resourceType", Cell: func(a A) string { return a.ResourceType }, SortKey: func(a A) string { return a.ResourceType + " " + a.ResourceID }},
			{Key: "resourceId", Cell: func(a A) string { return a.ResourceID }},
			{Key: "changedFields", Cell: func(a A) string {
				keys := make([]string, 0, len(a.Changes))
				for k := range a.Changes {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				return strings.Join(keys, " ")
			}},
			{Key: "requestId", Cell: func(a A) string { return a.RequestID }},
		}}
}

func webhookList(fetch func(app.Page) ([]app.Webhook, int, error)) listSpec[app.Webhook] {
	type W = app.Webhook
	return listSpec[W]{Name: "webhooks", Noun: "webhook", Plural: "webhooks", Default: "url", PerPage: 50, Fetch: fetch,
		Cols: []listCol[W]{
			{Key: "id", Cell: func(w W) string { return w.ID }},
			{Key: "url", Cell: func(w W) string { return w.URL }, SortKey: func(w W) string { return lower(w.URL) }},
			{Key: "description", Cell: func(w W) string { return w.Description }},
			{Key: "events", Cell: func(w W) string { return strings.Join(w.Events, " ") }},
			{Key: "active", Cell: func(w W) string { return strconv.FormatBool(w.Active) }, SortKey: func(w W) string { return strconv.FormatBool(!w.Active) }},
			{Key: "lastSuccessAt", Cell: func(w W) string { return optTime(w.LastSuccessAt) }, SortKey: func(w W) string { return lastIfEmpty(optTime(w.LastSuccessAt)) }},
			{Key: "lastFailureAt", Cell: func(w W) string { return optTime(w.LastFailureAt) }, SortKey: func(w W) string { return lastIfEmpty(optTime(w.LastFailureAt)) }},
			{Key: "createdAt", Cell: func(w W) string { return iso(w.CreatedAt) }},
		}}
}

func questionnaireList(fetch func(app.Page) ([]app.Questionnaire, int, error)) listSpec[app.Questionnaire] {
	type Q = app.Questionnaire
	return listSpec[Q]{Name: "questionnaires", Noun: "questionnaire", Plural: "questionnaires", Default: "-createdAt", PerPage: 50,
		FilterKeys: []string{"status"}, Fetch: fetch,
		Cols: []listCol[Q]{
			{Key: "id", Cell: func(q Q) string { return q.ID }},
			{Key: "name", Cell: func(q Q) string { return q.Name }, SortKey: func(q Q) string { return lower(q.Name) }},
			{Key: "direction", Cell: func(q Q) string { return q.Direction }},
			{Key: "vendorId", Cell: func(q Q) string { return deref(q.VendorID) }},
			{Key: "status", Cell: func(q Q) string { return q.Status }, SortKey: func(q Q) string { return q.Status }},
			{Key: "answeredQuestions", Cell: func(q Q) string { return itoa(q.AnsweredQuestions) }, SortKey: func(q Q) string { return padInt(q.AnsweredQuestions) }},
			{Key: "totalQuestions", Cell: func(q Q) string { return itoa(q.TotalQuestions) }},
			{Key: "dueDate", Cell: func(q Q) string { return deref(q.DueDate) }, SortKey: func(q Q) string { return lastIfEmpty(deref(q.DueDate)) }},
			{Key: "createdAt", Cell: func(q Q) string { return iso(q.CreatedAt) }, SortKey: func(q Q) string { return iso(q.CreatedAt) }},
		}}
}

func apiKeyList(fetch func(app.Page) ([]app.APIKey, int, error)) listSpec[app.APIKey] {
	type K = app.APIKey
	status := func(k K) string {
		if k.RevokedAt != nil {
			return "revoked"
		}
		return "active"
	}
	return listSpec[K]{Name: "api-keys", Noun: "API key", Plural: "API keys", Default: "-createdAt", PerPage: 50, Fetch: fetch,
		Cols: []listCol[K]{
			{Key: "id", Cell: func(k K) string { return k.ID }},
			{Key: "name", Cell: func(k K) string { return k.Name }, SortKey: func(k K) string { return lower(k.Name) }},
			{Key: "prefix", Cell: func(k K) string { return k.Prefix }},
			{Key: "role", Cell: func(k K) string { return string(k.Role) }, SortKey: func(k K) string { return string(k.Role) }},
			{Key: "createdAt", Cell: func(k K) string { return iso(k.CreatedAt) }, SortKey: func(k K) string { return iso(k.CreatedAt) }},
			{Key: "expiresAt", Cell: func(k K) string { return optTime(k.ExpiresAt) }, SortKey: func(k K) string { return lastIfEmpty(optTime(k.ExpiresAt)) }},
			{Key: "lastUsedAt", Cell: func(k K) string { return optTime(k.LastUsedAt) }, SortKey: func(k K) string { return lastIfEmpty(optTime(k.LastUsedAt)) }},
			{Key: "status", Cell: status, SortKey: status},
			{Key: "revokedAt", Cell: func(k K) string { return optTime(k.RevokedAt) }},
		}}
}

func variableList(fetch func(app.Page) ([]app.Variable, int, error)) listSpec[app.Variable] {
	type V = app.Variable
	return listSpec[V]{Name: "variables", Noun: "variable", Plural: "variables", Default: "name", PerPage: 50,
		FilterKeys: []string{"q"}, Fetch: fetch,
		Cols: []listCol[V]{
			{Key: "id", Cell: func(v V) string { return v.ID }},
			{Key: "name", Cell: func(v V) string { return v.Name }, SortKey: func(v V) string { return lower(v.Name) }},
			{Key: "placeholder", Cell: func(v V) string { return v.Placeholder }, SortKey: func(v V) string { return lower(v.Placeholder) }},
			{Key: "value", Cell: func(v V) string { return v.Value }, SortKey: func(v V) string { return lower(v.Value) }},
			{Key: "description", Cell: func(v V) string { return v.Description }},
			{Key: "updatedAt", Cell: func(v V) string { return iso(v.UpdatedAt) }},
		}}
}
