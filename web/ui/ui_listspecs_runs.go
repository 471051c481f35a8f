package ui

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// The columns of the run and automation lists (directory sync runs, task
// automation runs, browser automations and their runs, cloud security
// findings, vendor assessments) on the shared list component.

var (
	automationRunStatuses = []string{app.AutomationRunPending, app.AutomationRunRunning, app.AutomationRunCompleted, app.AutomationRunFailed, app.AutomationRunInterrupted}
	browserRunStatuses    = []string{app.BrowserRunPending, app.BrowserRunRunning, app.BrowserRunCompleted, app.BrowserRunFailed, app.BrowserRunInterrupted}
	assessmentStatuses    = []string{app.AssessmentQueued, app.AssessmentRunning, app.AssessmentCompleted, app.AssessmentFailed}
	verdicts              = []string{"pass", "fail"}
)

// filterEnum checks a filter parameter against its values (422 naming it
// on the page, as the API does for its own filters).
func filterEnum(q url.Values, key string, values []string) error {
	v := q.Get(key)
	if v == "" || slices.Contains(values, v) {
		return nil
	}
	return app.Invalid(key, app.CodeInvalidEnum, v, key+" must be one of "+strings.Join(values, ", "))
}

// keepFetch pages a whole list the service returns, keeping the rows that
// pass keep (filters the service itself has no parameter for).
func keepFetch[T any](load func() ([]T, error), keep func(T) bool) func(app.Page) ([]T, int, error) {
	return sliceFetch(func() ([]T, error) {
		all, err := load()
		if err != nil {
			return nil, err
		}
		out := all[:0:0]
		for _, it := range all {
			if keep(it) {
				out = append(out, it)
			}
		}
		return out, nil
	})
}

// pagedAll reads every row of a paged service list (up to maxCSVRows).
func pagedAll[T any](fetch func(app.Page) (app.List[T], error)) ([]T, error) {
	var all []T
	for page := 1; len(all) < maxCSVRows; page++ {
		l, err := fetch(app.Page{Page: page, PerPage: app.MaxPerPage})
		if err != nil {
			return nil, err
		}
		all = append(all, l.Items...)
		if len(l.Items) < app.MaxPerPage || len(all) >= l.Total {
			break
		}
	}
	return all, nil
}

func syncRunList(fetch func(app.Page) ([]app.SyncRun, int, error)) listSpec[app.SyncRun] {
	type R = app.SyncRun
	changes := func(r R) int { return r.Created + r.Updated + r.Deactivated + r.Reactivated }
	return listSpec[R]{Name: "sync-runs", Noun: "sync run", Plural: "sync runs", Default: "-startedAt", Native: "-startedAt", PerPage: 25,
		FilterKeys: []string{"status"}, Fetch: fetch,
		Cols: []listCol[R]{
			{Key: "id", Cell: func(r R) string { return r.ID }},
			{Key: "startedAt", Cell: func(r R) string { return iso(r.StartedAt) }, SortKey: func(r R) string { return iso(r.StartedAt) + r.ID }},
			{Key: "finishedAt", Cell: func(r R) string { return optTime(r.FinishedAt) }},
			{Key: "trigger", Cell: func(r R) string { return r.Trigger }, SortKey: func(r R) string { return r.Trigger + "\x00" + iso(r.StartedAt) }},
			{Key: "dryRun", Cell: func(r R) string { return strconv.FormatBool(r.DryRun) }},
			{Key: "status", Cell: func(r R) string { return r.Status }, SortKey: func(r R) string { return rank(app.SyncRunStatuses, r.Status) + iso(r.StartedAt) }},
			{Key: "found", Cell: func(r R) string { return itoa(r.Found) }, SortKey: func(r R) string { return padInt(r.Found) + iso(r.StartedAt) }},
			{Key: "changes", Cell: func(r R) string { return itoa(changes(r)) }, SortKey: func(r R) string { return padInt(changes(r)) + iso(r.StartedAt) }},
			{Key: "created", Cell: func(r R) string { return itoa(r.Created) }},
			{Key: "updated", Cell: func(r R) string { return itoa(r.Updated) }},
			{Key: "deactivated", Cell: func(r R) string { return itoa(r.Deactivated) }},
			{Key: "reactivated", Cell: func(r R) string { return itoa(r.Reactivated) }},
			{Key: "unchanged", Cell: func(r R) string { return itoa(r.Unchanged) }},
			{Key: "skipped", Cell: func(r R) string { return itoa(r.Skipped) }},
			{Key: "errors", Cell: func(r R) string { return itoa(r.Errors) }, SortKey: func(r R) string { return padInt(r.Errors) + iso(r.StartedAt) }},
			{Key: "error", Cell: func(r R) string { return deref(r.Error) }},
			{Key: "requestedBy", Cell: func(r R) string { return r.RequestedBy }},
		}}
}

func automationRunList(name string, fetch func(app.Page) ([]app.TaskAutomationRun, int, error)) listSpec[app.TaskAutomationRun] {
	type R = app.TaskAutomationRun
	return listSpec[R]{Name: name, Noun: "run", Plural: "runs", Default: "-createdAt", PerPage: 25,
		FilterKeys: []string{"automation", "status", "verdict"}, Fetch: fetch,
		Cols: []listCol[R]{
			{Key: "id", Cell: func(r R) string { return r.ID }},
			{Key: "createdAt", Cell: func(r R) string { return iso(r.CreatedAt) }, SortKey: func(r R) string { return iso(r.CreatedAt) + r.ID }},
			{Key: "automationId", Cell: func(r R) string { return r.AutomationID }},
			{Key: "automationName", Cell: func(r R) string { return r.AutomationName }, SortKey: func(r R) string { return lower(r.AutomationName) + "\x00" + iso(r.CreatedAt) }},
			{Key: "version", Cell: func(r R) string { return itoa(r.Version) }, SortKey: func(r R) string { return padInt(r.Version) + iso(r.CreatedAt) }},
			{Key: "trigger", Cell: func(r R) string { return r.Trigger }},
			{Key: "status", Cell: func(r R) string { return r.Status }, SortKey: func(r R) string { return rank(automationRunStatuses, r.Status) + iso(r.CreatedAt) }},
			{Key: "evaluationStatus", Cell: func(r R) string { return deref(r.EvaluationStatus) }, SortKey: func(r R) string {
				return lastIfEmpty(deref(r.EvaluationStatus)) + iso(r.CreatedAt)
			}},
			{Key: "evaluationReason", Cell: func(r R) string { return deref(r.EvaluationReason) }},
			{Key: "durationMs", Cell: func(r R) string { return strconv.FormatInt(r.DurationMs, 10) }, SortKey: func(r R) string { return padInt(int(r.DurationMs)) + r.ID }},
			{Key: "error", Cell: func(r R) string { return deref(r.Error) }},
			{Key: "evidenceId", Cell: func(r R) string { return deref(r.EvidenceID) }},
			{Key: "findingId", Cell: func(r R) string { return deref(r.FindingID) }},
			{Key: "finishedAt", Cell: func(r R) string { return optTime(r.FinishedAt) }},
		}}
}

func browserAutomationList(title func(string) string, fetch func(app.Page) ([]app.BrowserAutomation, int, error)) listSpec[app.BrowserAutomation] {
	type A = app.BrowserAutomation
	return listSpec[A]{Name: "browser-automations", Noun: "browser automation", Plural: "browser automations", Default: "name", PerPage: 50,
		FilterKeys: []string{"taskId", "lastRunStatus"}, Fetch: fetch,
		Cols: []listCol[A]{
			{Key: "id", Cell: func(a A) string { return a.ID }},
			{Key: "name", Cell: func(a A) string { return a.Name }, SortKey: func(a A) string { return lower(a.Name) + "\x00" + a.ID }},
			{Key: "targetUrl", Cell: func(a A) string { return a.TargetURL }},
			{Key: "taskId", Cell: func(a A) string { return a.TaskID }},
			{Key: "task", Cell: func(a A) string { return title(a.TaskID) }, SortKey: func(a A) string { return lower(title(a.TaskID)) + "\x00" + lower(a.Name) }},
			{Key: "scheduleFrequency", Cell: func(a A) string { return deref(a.ScheduleFrequency) }, SortKey: func(a A) string { return lastIfEmpty(deref(a.ScheduleFrequency)) + lower(a.Name) }},
			{Key: "isEnabled", Cell: func(a A) string { return strconv.FormatBool(a.IsEnabled) }},
			{Key: "lastRunAt", Cell: func(a A) string { return optTime(a.LastRunAt) }, SortKey: func(a A) string { return lastIfEmpty(optTime(a.LastRunAt)) + a.ID }},
			{Key: "lastRunStatus", Cell: func(a A) string { return deref(a.LastRunStatus) }},
			{Key: "nextRunAt", Cell: func(a A) string { return optTime(a.NextRunAt) }, SortKey: func(a A) string { return lastIfEmpty(optTime(a.NextRunAt)) + a.ID }},
			{Key: "createdAt", Cell: func(a A) string { return iso(a.CreatedAt) }, SortKey: func(a A) string { return iso(a.CreatedAt) + a.ID }},
		}}
}

func browserRunList(fetch func(app.Page) ([]app.BrowserAutomationRun, int, error)) listSpec[app.BrowserAutomationRun] {
	type R = app.BrowserAutomationRun
	return listSpec[R]{Name: "browser-automation-runs", Noun: "run", Plural: "runs", Default: "-createdAt", PerPage: 10,
		FilterKeys: []string{"status", "verdict"}, Fetch: fetch,
		Cols: []listCol[R]{
			{Key: "id", Cell: func(r R) string { return r.ID }},
			{Key: "createdAt", Cell: func(r R) string { return iso(r.CreatedAt) }, SortKey: func(r R) string { return iso(r.CreatedAt) + r.ID }},
			{Key: "trigger", Cell: func(r R) string { return r.Trigger }},
			{Key: "status", Cell: func(r R) string { return r.Status }, SortKey: func(r R) string { return rank(browserRunStatuses, r.Status) + iso(r.CreatedAt) }},
			{Key: "evaluationStatus", Cell: func(r R) string { return deref(r.EvaluationStatus) }, SortKey: func(r R) string {
				return lastIfEmpty(deref(r.EvaluationStatus)) + iso(r.CreatedAt)
			}},
			{Key: "evaluationReason", Cell: func(r R) string { return deref(r.EvaluationReason) }},
			{Key: "durationMs", Cell: func(r R) string { return strconv.FormatInt(r.DurationMs, 10) }, SortKey: func(r R) string { return padInt(int(r.DurationMs)) + r.ID }},
			{Key: "screenshots", Cell: func(r R) string { return itoa(len(r.Screenshots)) }},
			{Key: "evidenceIds", Cell: func(r R) string { return strings.Join(r.EvidenceIDs, " ") }},
			{Key: "findingId", Cell: func(r R) string { return deref(r.FindingID) }},
			{Key: "error", Cell: func(r R) string { return deref(r.Error) }},
			{Key: "completedAt", Cell: func(r R) string { return optTime(r.CompletedAt) }},
		}}
}

func cloudFindingList(fetch func(app.Page) ([]app.CloudFinding, int, error)) listSpec[app.CloudFinding] {
	type F = app.CloudFinding
	return listSpec[F]{Name: "cloud-findings", Noun: "cloud finding", Plural: "cloud findings", Default: "severity", PerPage: 50,
		FilterKeys: []string{"connection", "severity", "service", "status"}, Fetch: fetch,
		Cols: []listCol[F]{
			{Key: "id", Cell: func(f F) string { return f.ID }},
			{Key: "resourceName", Cell: func(f F) string { return f.ResourceName }, SortKey: func(f F) string { return lower(f.ResourceName) + "\x00" + f.ID }},
			{Key: "resourceType", Cell: func(f F) string { return f.ResourceType }},
			{Key: "resourceId", Cell: func(f F) string { return f.ResourceID }},
			{Key: "checkId", Cell: func(f F) string { return f.CheckID }},
			{Key: "checkTitle", Cell: func(f F) string { return f.CheckTitle }, SortKey: func(f F) string { return lower(f.CheckTitle) + "\x00" + lower(f.ResourceName) }},
			{Key: "service", Cell: func(f F) string { return f.Service }, SortKey: func(f F) string { return lower(f.Service) + "\x00" + lower(f.ResourceName) }},
			// FindingSeverities run from the most severe down.
			{Key: "severity", Cell: func(f F) string { return f.Severity }, SortKey: func(f F) string {
				return rank(app.FindingSeverities, f.Severity) + lower(f.ResourceName)
			}},
			{Key: "status", Cell: func(f F) string { return f.Status }, SortKey: func(f F) string { return rank(app.CloudFindingStatuses, f.Status) + lower(f.ResourceName) }},
			{Key: "connectionId", Cell: func(f F) string { return f.ConnectionID }},
			{Key: "connectionName", Cell: func(f F) string { return f.ConnectionName }, SortKey: func(f F) string { return lower(f.ConnectionName) + "\x00" + lower(f.ResourceName) }},
			{Key: "message", Cell: func(f F) string { return f.Message }},
			{Key: "remediation", Cell: func(f F) string { return f.Remediation }},
			{Key: "lastResult", Cell: func(f F) string { return f.LastResult }},
			{Key: "exceptionExpiresAt", Cell: func(f F) string { return optTime(f.ExceptionUntil) }},
			{Key: "updatedAt", Cell: func(f F) string { return iso(f.UpdatedAt) }, SortKey: func(f F) string { return iso(f.UpdatedAt) + f.ID }},
		}}
}

func vendorAssessmentList(fetch func(app.Page) ([]app.VendorAssessment, int, error)) listSpec[app.VendorAssessment] {
	type A = app.VendorAssessment
	return listSpec[A]{Name: "vendor-assessments", Noun: "assessment", Plural: "assessments", Default: "-createdAt", PerPage: 10,
		FilterKeys: []string{"status"}, Fetch: fetch,
		Cols: []listCol[A]{
			{Key: "id", Cell: func(a A) string { return a.ID }},
			{Key: "createdAt", Cell: func(a A) string { return iso(a.CreatedAt) }, SortKey: func(a A) string { return iso(a.CreatedAt) + a.ID }},
			{Key: "status", Cell: func(a A) string { return a.Status }, SortKey: func(a A) string { return rank(assessmentStatuses, a.Status) + iso(a.CreatedAt) }},
			{Key: "website", Cell: func(a A) string { return a.Website }},
			{Key: "suggestedProbability", Cell: func(a A) string { return deref(a.SuggestedProbability) }, SortKey: func(a A) string {
				return rank(app.Probabilities, deref(a.SuggestedProbability)) + iso(a.CreatedAt)
			}},
			{Key: "suggestedImpact", Cell: func(a A) string { return deref(a.SuggestedImpact) }, SortKey: func(a A) string {
				return rank(app.Impacts, deref(a.SuggestedImpact)) + iso(a.CreatedAt)
			}},
			{Key: "reasons", Cell: func(a A) string { return strings.Join(a.Reasons, "; ") }},
			{Key: "error", Cell: func(a A) string { return deref(a.Error) }},
			{Key: "requestedBy", Cell: func(a A) string { return a.RequestedBy }},
			{Key: "finishedAt", Cell: func(a A) string { return optTime(a.FinishedAt) }},
			{Key: "acceptedAt", Cell: func(a A) string { return optTime(a.AcceptedAt) }, SortKey: func(a A) string { return lastIfEmpty(optTime(a.AcceptedAt)) + a.ID }},
		}}
}
