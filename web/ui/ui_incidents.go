package ui

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

// uiIncidentRoutes registers the incident pages: the list, reporting an
// incident (everyone but auditors), the incident page with its clocks and
// timeline, the DORA classification form, the report editor and the
// reporting profile. The services decide who may do what, as in the API.
func (s *Server) uiIncidentRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/incidents", uiSignedIn, s.uiIncidents)
	page("GET", "/incidents/new", uiSelf, s.uiNewIncident)
	page("POST", "/incidents", uiSelf, s.uiCreateIncident)
	page("GET", "/incidents/profile", uiSignedIn, s.uiIncidentProfile)
	page("POST", "/incidents/profile", uiManage, s.uiSaveIncidentProfile)
	page("GET", "/incidents/{id}", uiSignedIn, s.uiIncident)
	page("POST", "/incidents/{id}", uiManage, s.uiUpdateIncident)
	page("POST", "/incidents/{id}/status", uiSelf, s.uiIncidentStatus)
	page("POST", "/incidents/{id}/timeline", uiSelf, s.uiIncidentTimeline)
	page("POST", "/incidents/{id}/regimes", uiManage, s.uiIncidentRegimes)
	page("GET", "/incidents/{id}/dora", uiSignedIn, s.uiIncidentDORA)
	page("POST", "/incidents/{id}/dora", uiManage, s.uiClassifyIncidentDORA)
	page("GET", "/incidents/{id}/reports/{reportId}", uiSignedIn, s.uiIncidentReport)
	page("POST", "/incidents/{id}/reports/{reportId}", uiManage, s.uiSaveIncidentReport)
	page("POST", "/incidents/{id}/reports/{reportId}/send", uiManage, s.uiSendIncidentReport)
	page("GET", "/incidents/{id}/reports/{reportId}/pdf", uiSignedIn, s.uiIncidentReportPDF)
}

func init() {
	flashes["incident-reported"] = "Incident recorded. Check which regimes apply below: the clocks start once they are confirmed."
	flashes["status-changed"] = "Status changed."
	flashes["timeline-added"] = "Timeline entry added."
	flashes["regimes-confirmed"] = "Regimes confirmed: the reports they ask for and their due times are listed under Reporting clocks."
	flashes["classified"] = "Classification saved; the DORA clocks follow it."
	flashes["draft-saved"] = "Draft saved as a new version."
	flashes["report-sent"] = "Recorded as sent. The version is kept as it was sent and can no longer change."
	flashes["profile-saved"] = "Reporting profile saved; the clocks of open incidents were recomputed."
}

// uiTimeZones are the UTC offsets the incident forms offer; app.js picks
// the browser's own when it runs.
var uiTimeZones = func() []string {
	var out []string
	for m := -12 * 60; m <= 14*60; m += 30 {
		sign := "+"
		if m < 0 {
			sign = "-"
		}
		a := m
		if a < 0 {
			a = -a
		}
		out = append(out, fmt.Sprintf("%s%02d:%02d", sign, a/60, a%60))
	}
	return out
}()

// instant joins a datetime-local value and the form's UTC offset into
// RFC 3339; "" stays "".
func instant(f url.Values, field string) string {
	v := strings.TrimSpace(f.Get(field))
	if v == "" {
		return ""
	}
	if len(v) == len("2006-01-02T15:04") {
		v += ":00"
	}
	tz := f.Get("tz")
	if tz == "" {
		tz = "+00:00"
	}
	if tz == "+00:00" {
		tz = "Z"
	}
	return v + tz
}

// localValue shows a UTC time in a datetime-local field (as UTC: the
// forms' offset starts at +00:00 and the page says so).
func localValue(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04")
}

// lines splits a textarea or comma list into items.
func lines(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ',' || r == '\r' })
}

// triState reads a yes/no/unknown select as a patch field.
func triState(f url.Values, name string) app.Opt[bool] {
	if _, ok := f[name]; !ok {
		return app.Opt[bool]{}
	}
	switch f.Get(name) {
	case "yes":
		return app.Some(true)
	case "no":
		return app.Some(false)
	}
	return app.Opt[bool]{Set: true, Null: true}
}

func boolPtr(f url.Values, name string) *bool {
	switch f.Get(name) {
	case "yes":
		return app.Ptr(true)
	case "no":
		return app.Ptr(false)
	}
	return nil
}

// countdown says how long until (or since) a due time, for people.
func countdown(due *time.Time, now time.Time) string {
	if due == nil {
		return "without undue delay"
	}
	d := due.Sub(now)
	past := d < 0
	if past {
		d = -d
	}
	d = d.Round(time.Minute)
	days, hours, mins := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	var s string
	switch {
	case days > 0:
		s = fmt.Sprintf("%d d %d h", days, hours)
	case hours > 0:
		s = fmt.Sprintf("%d h %d min", hours, mins)
	default:
		s = fmt.Sprintf("%d min", mins)
	}
	if past {
		return "overdue by " + s
	}
	return "in " + s
}

func init() {
	uiFuncs["countdown"] = countdown
	uiFuncs["utc"] = func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04 UTC")
		case *time.Time:
			if v != nil {
				return v.UTC().Format("2006-01-02 15:04 UTC")
			}
		}
		return ""
	}
	uiFuncs["iso"] = func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return v.UTC().Format(time.RFC3339)
		case *time.Time:
			if v != nil {
				return v.UTC().Format(time.RFC3339)
			}
		}
		return ""
	}
	uiFuncs["tri"] = func(b *bool) string {
		switch {
		case b == nil:
			return ""
		case *b:
			return "yes"
		}
		return "no"
	}
	uiFuncs["upper"] = strings.ToUpper
	uiFuncs["localValue"] = func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return localValue(&v)
		case *time.Time:
			return localValue(v)
		}
		return ""
	}
	uiFuncs["join"] = strings.Join
	uiFuncs["i64"] = func(p *int64) string {
		if p == nil {
			return ""
		}
		return fmt.Sprint(*p)
	}
	uiFuncs["f64"] = func(p *float64) string {
		if p == nil {
			return ""
		}
		return fmt.Sprint(*p)
	}
}

// --- list and new ---

func (s *Server) uiIncidents(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	v.Form = q
	f := app.IncidentFilter{Status: q.Get("status"), Type: q.Get("type"), Regime: q.Get("regime")}
	switch q.Get("overdue") {
	case "true":
		f.Overdue = app.Ptr(true)
	case "false":
		f.Overdue = app.Ptr(false)
	}
	lv, items, done, err := runList(w, r, v, incidentList(func(p app.Page) ([]app.Incident, int, error) {
		f.Page = p
		l, err := s.app.ListIncidents(r.Context(), f)
		return l.Items, l.Total, err
	}))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = q
	v.Title, v.Section = "Incidents", "incidents"
	lv.EmptyText = "No incidents recorded. When something happens, report it here: the reporting deadlines start from it."
	if v.Can("self") {
		lv.EmptyHref, lv.EmptyAction = "/incidents/new", "Report an incident"
	}
	v.Data = map[string]any{"Incidents": items, "List": lv, "Statuses": app.IncidentStatuses,
		"Types": app.IncidentTypes, "Regimes": app.IncidentRegimes, "Now": s.app.Now()}
	return s.page(w, r, "incidents", v)
}

func (s *Server) incidentForm(w http.ResponseWriter, r *http.Request, v *view) error {
	v.Title, v.Section = "Report an incident", "incidents"
	v.Data = map[string]any{"Types": app.IncidentTypes, "Severities": app.IncidentSeverities, "Zones": uiTimeZones,
		"Now": localValue(app.Ptr(s.app.Now()))}
	return s.page(w, r, "incident_new", v)
}

func (s *Server) uiNewIncident(w http.ResponseWriter, r *http.Request, v *view) error {
	return s.incidentForm(w, r, v)
}

func (s *Server) uiCreateIncident(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.IncidentInput{Title: app.Ptr(f.Get("title")), Description: app.Ptr(f.Get("description")), Type: app.Ptr(f.Get("type")),
		Severity: nonEmpty(f.Get("severity")), AwareAt: app.Ptr(instant(f, "awareAt")), DetectedAt: nonEmpty(instant(f, "detectedAt")),
		AffectedServices: app.Ptr(lines(f.Get("affectedServices"))), AffectedSystems: app.Ptr(lines(f.Get("affectedSystems"))),
		DataCategories: app.Ptr(lines(f.Get("dataCategories"))), Countries: app.Ptr(lines(strings.ReplaceAll(f.Get("countries"), " ", ","))),
		CrossBorder: app.Ptr(f.Get("crossBorder") == "on"),
		Facts:       &app.IncidentFactsInput{PersonalDataAffected: triState(f, "personalDataAffected"), SuspectedMalicious: triState(f, "suspectedMalicious")}}
	in.DataSubjectsAffected = countField(f, "dataSubjectsAffected")
	inc, err := s.app.CreateIncident(r.Context(), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.incidentForm(w, r, v)
	}
	return redirect(w, r, "/incidents/"+url.PathEscape(inc.ID)+"?done=incident-reported")
}

// countField reads an optional count: blank is null; what is not a whole
// number goes to the service as -1, which refuses it naming the field.
func countField(f url.Values, name string) app.Opt[int64] {
	s := strings.TrimSpace(f.Get(name))
	if s == "" {
		return app.Opt[int64]{Set: true, Null: true}
	}
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		return app.Some(int64(-1))
	}
	return app.Some(n)
}

// --- the incident page ---

// uiClock is a report with the link to its editor.
type uiClock struct {
	app.IncidentReport
	URL string
}

func (s *Server) incidentPage(w http.ResponseWriter, r *http.Request, v *view, inc *app.Incident) error {
	ctx := r.Context()
	tl, err := s.app.ListTimeline(ctx, inc.ID, app.Page{Page: 1, PerPage: app.MaxPerPage})
	if err != nil {
		return err
	}
	props, err := s.app.IncidentApplicability(ctx, inc.ID)
	if err != nil {
		return err
	}
	names, err := s.actorNames(r)
	if err != nil {
		return err
	}
	type uiEntry struct {
		app.TimelineEntry
		Author string
	}
	entries := make([]uiEntry, 0, len(tl.Items))
	for _, e := range tl.Items {
		entries = append(entries, uiEntry{TimelineEntry: e, Author: actorName(names, e.Author.Type, e.Author.ID)})
	}
	clocks := make([]uiClock, 0, len(inc.Reports))
	for _, rp := range inc.Reports {
		clocks = append(clocks, uiClock{IncidentReport: rp, URL: "/incidents/" + url.PathEscape(inc.ID) + "/reports/" + url.PathEscape(rp.ID)})
	}
	// Open clocks first, soonest first.
	sort.SliceStable(clocks, func(i, j int) bool {
		a, b := clocks[i], clocks[j]
		ao, bo := a.DueAt != nil && (a.Status == app.ReportPending || a.Status == app.ReportAwaitingFacts), b.DueAt != nil && (b.Status == app.ReportPending || b.Status == app.ReportAwaitingFacts)
		if ao != bo {
			return ao
		}
		return ao && a.DueAt.Before(*b.DueAt)
	})
	statuses := app.IncidentStatuses
	if !v.Can("manage") {
		statuses = []string{app.IncidentOpen, app.IncidentContained, app.IncidentResolved}
	}
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Title, v.Section = inc.Title, "incidents"
	v.Data = map[string]any{"I": inc, "Clocks": clocks, "Timeline": entries, "Proposals": props, "Now": s.app.Now(),
		"Statuses": statuses, "Kinds": app.TimelineKinds, "Types": app.IncidentTypes, "Severities": app.IncidentSeverities,
		"Risks": app.PersonalDataRisks, "Zones": uiTimeZones, "Regimes": app.IncidentRegimes, "Reporter": actorName(names, inc.ReportedBy.Type, inc.ReportedBy.ID),
		"MayChangeStatus": v.Can("manage") || (v.Can("self") && inc.Status != app.IncidentClosed)}
	if err := s.addComments(r, v, app.EntityIncident, "incidents", inc.ID); err != nil {
		return err
	}
	if err := s.addAttachments(r, v, app.EntityIncident, "incidents", inc.ID); err != nil {
		return err
	}
	return s.page(w, r, "incident", v)
}

func (s *Server) uiIncident(w http.ResponseWriter, r *http.Request, v *view) error {
	inc, err := s.app.GetIncident(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.incidentPage(w, r, v, inc)
}

// afterIncidentPost shows the incident again with the form's errors, or
// redirects to it with a confirmation.
func (s *Server) afterIncidentPost(w http.ResponseWriter, r *http.Request, v *view, err error, done string) error {
	if err == nil {
		return redirect(w, r, "/incidents/"+url.PathEscape(id(r))+"?done="+done)
	}
	if !formErrors(err, v, r) {
		return err
	}
	inc, gerr := s.app.GetIncident(r.Context(), id(r))
	if gerr != nil {
		return gerr
	}
	return s.incidentPage(w, r, v, inc)
}

func optStr(f url.Values, name string) app.Opt[string] {
	if _, ok := f[name]; !ok {
		return app.Opt[string]{}
	}
	if s := strings.TrimSpace(f.Get(name)); s != "" {
		return app.Some(s)
	}
	return app.Opt[string]{Set: true, Null: true}
}

func optInstant(f url.Values, name string) app.Opt[string] {
	if _, ok := f[name]; !ok {
		return app.Opt[string]{}
	}
	if s := instant(f, name); s != "" {
		return app.Some(s)
	}
	return app.Opt[string]{Set: true, Null: true}
}

func (s *Server) uiUpdateIncident(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.IncidentInput{Title: app.Ptr(f.Get("title")), Description: app.Ptr(f.Get("description")), Type: app.Ptr(f.Get("type")),
		Severity: app.Ptr(f.Get("severity")), AwareAt: app.Ptr(instant(f, "awareAt")), DetectedAt: app.Ptr(instant(f, "detectedAt")),
		OccurredAt:       optInstant(f, "occurredAt"),
		AffectedServices: app.Ptr(lines(f.Get("affectedServices"))), AffectedSystems: app.Ptr(lines(f.Get("affectedSystems"))),
		DataCategories: app.Ptr(lines(f.Get("dataCategories"))), Countries: app.Ptr(lines(strings.ReplaceAll(f.Get("countries"), " ", ","))),
		CrossBorder: app.Ptr(f.Get("crossBorder") == "on"),
		Facts: &app.IncidentFactsInput{PersonalDataAffected: triState(f, "personalDataAffected"), SuspectedMalicious: triState(f, "suspectedMalicious"),
			SevereOperationalDisruption: triState(f, "severeOperationalDisruption"), ConsiderableDamage: triState(f, "considerableDamage"),
			PersonalDataRisk: optStr(f, "personalDataRisk"), DataSubjectsExemption: optStr(f, "dataSubjectsExemption"),
			ActivelyExploited: triState(f, "activelyExploitedVulnerability"), SevereProductIncident: triState(f, "severeProductIncident"),
			ProductName: optStr(f, "productName"), CorrectiveMeasureAt: optInstant(f, "correctiveMeasureAvailableAt"),
			IntermediateRequestedAt: optInstant(f, "nis2IntermediateRequestedAt"), IntermediateDueAt: optInstant(f, "nis2IntermediateDueAt"),
			RootCause: optStr(f, "rootCause"), Impact: optStr(f, "impact"), MitigationMeasures: optStr(f, "mitigationMeasures"),
			IndicatorsOfCompromise: optStr(f, "indicatorsOfCompromise")}}
	for _, c := range []struct {
		name string
		dst  *app.Opt[int64]
	}{{"dataSubjectsAffected", &in.DataSubjectsAffected}, {"recordsAffected", &in.RecordsAffected}, {"clientsAffected", &in.ClientsAffected}} {
		if _, ok := f[c.name]; ok {
			*c.dst = countField(f, c.name)
		}
	}
	_, err := s.app.UpdateIncident(r.Context(), id(r), in)
	return s.afterIncidentPost(w, r, v, err, "saved")
}

func (s *Server) uiIncidentStatus(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	_, err := s.app.SetIncidentStatus(r.Context(), id(r), app.IncidentStatusInput{Status: app.Ptr(f.Get("status")), Note: nonEmpty(f.Get("note"))})
	return s.afterIncidentPost(w, r, v, err, "status-changed")
}

func (s *Server) uiIncidentTimeline(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	_, err := s.app.AddTimelineEntry(r.Context(), id(r), app.TimelineInput{Kind: nonEmpty(f.Get("kind")), Content: app.Ptr(f.Get("content")),
		OccurredAt: nonEmpty(instant(f, "occurredAt"))})
	return s.afterIncidentPost(w, r, v, err, "timeline-added")
}

func (s *Server) uiIncidentRegimes(w http.ResponseWriter, r *http.Request, v *view) error {
	regimes := r.PostForm["regime"]
	if regimes == nil {
		regimes = []string{}
	}
	_, err := s.app.ConfirmIncidentRegimes(r.Context(), id(r), app.RegimesInput{Regimes: &regimes, Note: nonEmpty(r.PostForm.Get("note"))})
	return s.afterIncidentPost(w, r, v, err, "regimes-confirmed")
}

// --- DORA classification ---

func (s *Server) doraPage(w http.ResponseWriter, r *http.Request, v *view, inc *app.Incident) error {
	in := app.DORAInput{}
	if c := inc.DORAClassification; c != nil {
		in = c.Input
	}
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Title, v.Section = "DORA classification: "+inc.Title, "incidents"
	v.Data = map[string]any{"I": inc, "In": in, "C": inc.DORAClassification, "States": strings.Join(in.MemberStatesAffected, ", "), "Zones": uiTimeZones}
	return s.page(w, r, "incident_dora", v)
}

func (s *Server) uiIncidentDORA(w http.ResponseWriter, r *http.Request, v *view) error {
	inc, err := s.app.GetIncident(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.doraPage(w, r, v, inc)
}

func (s *Server) uiClassifyIncidentDORA(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	num := func(name string) *int64 {
		t := strings.TrimSpace(f.Get(name))
		if t == "" {
			return nil
		}
		var n int64
		if _, err := fmt.Sscan(t, &n); err != nil {
			return app.Ptr(int64(-1))
		}
		return &n
	}
	flt := func(name string) *float64 {
		t := strings.TrimSpace(f.Get(name))
		if t == "" {
			return nil
		}
		var n float64
		if _, err := fmt.Sscan(t, &n); err != nil {
			return app.Ptr(-1.0)
		}
		return &n
	}
	in := app.DORAInput{CriticalFunctionsAffected: boolPtr(f, "criticalFunctionsAffected"), AuthorisedServicesAffected: boolPtr(f, "authorisedServicesAffected"),
		MaliciousUnauthorisedAccess: boolPtr(f, "maliciousUnauthorisedAccess"), AccessMayCauseDataLoss: boolPtr(f, "accessMayCauseDataLoss"),
		ClientsAffected: num("clientsAffected"), ClientsTotal: num("clientsTotal"), CounterpartsAffected: num("counterpartsAffected"),
		CounterpartsTotal: num("counterpartsTotal"), TransactionsAffected: num("transactionsAffected"), DailyAverageTransactions: num("dailyAverageTransactions"),
		TransactionValueAffected: flt("transactionValueAffected"), DailyAverageTransactionValue: flt("dailyAverageTransactionValue"),
		RelevantClientsAffected: boolPtr(f, "relevantClientsAffected"), MediaCoverage: boolPtr(f, "mediaCoverage"),
		RepetitiveComplaints: boolPtr(f, "repetitiveComplaints"), RegulatoryBreachLikely: boolPtr(f, "regulatoryBreachLikely"),
		ClientLossLikely: boolPtr(f, "clientLossLikely"), DurationHours: flt("durationHours"), DowntimeHours: flt("downtimeHours"),
		DataLossAdverseImpact: boolPtr(f, "dataLossAdverseImpact"), EconomicImpactEUR: flt("economicImpactEur"), Note: nonEmpty(f.Get("note")),
		ClassifiedAt: nonEmpty(instant(f, "classifiedAt"))}
	if ms := lines(strings.ReplaceAll(f.Get("memberStatesAffected"), " ", ",")); len(ms) > 0 || f.Get("memberStatesAffected") != "" {
		in.MemberStatesAffected = ms
	}
	inc, err := s.app.ClassifyIncidentDORA(r.Context(), id(r), in)
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		if inc, err = s.app.GetIncident(r.Context(), id(r)); err != nil {
			return err
		}
		return s.doraPage(w, r, v, inc)
	}
	return redirect(w, r, "/incidents/"+url.PathEscape(inc.ID)+"/dora?done=classified")
}

// --- the report editor ---

func reportID(r *http.Request) string { return mux.Vars(r)["reportId"] }

func (s *Server) reportPage(w http.ResponseWriter, r *http.Request, v *view, d *app.ReportDetail) error {
	inc, err := s.app.GetIncident(r.Context(), id(r))
	if err != nil {
		return err
	}
	names, err := s.actorNames(r)
	if err != nil {
		return err
	}
	type uiVersion struct {
		app.ReportVersion
		By string
	}
	versions := make([]uiVersion, 0, len(d.VersionHistory))
	for i := len(d.VersionHistory) - 1; i >= 0; i-- {
		x := d.VersionHistory[i]
		versions = append(versions, uiVersion{ReportVersion: x, By: actorName(names, x.CreatedBy.Type, x.CreatedBy.ID)})
	}
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Title, v.Section = d.Title, "incidents"
	v.Data = map[string]any{"I": inc, "R": d, "Versions": versions, "Now": s.app.Now(), "Zones": uiTimeZones,
		"Base": "/incidents/" + url.PathEscape(inc.ID) + "/reports/" + url.PathEscape(d.ID)}
	return s.page(w, r, "incident_report", v)
}

func (s *Server) uiIncidentReport(w http.ResponseWriter, r *http.Request, v *view) error {
	d, err := s.app.GetIncidentReport(r.Context(), id(r), reportID(r))
	if err != nil {
		return err
	}
	return s.reportPage(w, r, v, d)
}

// reportContent reads the editor's fields (c.<key>).
func reportContent(f url.Values) map[string]string {
	out := map[string]string{}
	for k, vs := range f {
		if key, ok := strings.CutPrefix(k, "c."); ok && len(vs) > 0 {
			out[key] = vs[0]
		}
	}
	return out
}

func (s *Server) afterReportPost(w http.ResponseWriter, r *http.Request, v *view, err error, done string) error {
	if err == nil {
		return redirect(w, r, "/incidents/"+url.PathEscape(id(r))+"/reports/"+url.PathEscape(reportID(r))+"?done="+done)
	}
	if !formErrors(err, v, r) {
		return err
	}
	d, gerr := s.app.GetIncidentReport(r.Context(), id(r), reportID(r))
	if gerr != nil {
		return gerr
	}
	return s.reportPage(w, r, v, d)
}

func (s *Server) uiSaveIncidentReport(w http.ResponseWriter, r *http.Request, v *view) error {
	_, err := s.app.SaveReportDraft(r.Context(), id(r), reportID(r), app.ReportDraftInput{Content: reportContent(r.PostForm),
		Note: nonEmpty(r.PostForm.Get("note"))})
	return s.afterReportPost(w, r, v, err, "draft-saved")
}

func (s *Server) uiSendIncidentReport(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	_, err := s.app.SendIncidentReport(r.Context(), id(r), reportID(r), app.ReportSendInput{Authority: nonEmpty(f.Get("authority")),
		Reference: nonEmpty(f.Get("reference")), SentAt: nonEmpty(instant(f, "sentAt")), Content: reportContent(f), Note: nonEmpty(f.Get("note"))})
	return s.afterReportPost(w, r, v, err, "report-sent")
}

func (s *Server) uiIncidentReportPDF(w http.ResponseWriter, r *http.Request, v *view) error {
	n := 0
	if q := r.URL.Query().Get("version"); q != "" {
		if _, err := fmt.Sscan(q, &n); err != nil || n < 1 {
			return app.ErrNotFound
		}
	}
	pdf, err := s.app.IncidentReportPDF(r.Context(), id(r), reportID(r), n)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="`+pdf.Filename+`"`)
	_, _ = w.Write(pdf.Content)
	return nil
}

// --- the reporting profile ---

func (s *Server) profilePage(w http.ResponseWriter, r *http.Request, v *view, p *app.IncidentProfile) error {
	if v.Flash == "" {
		v.Flash = flash(r)
	}
	v.Title, v.Section = "Incident reporting profile", "incidents"
	v.Data = map[string]any{"P": p, "EntityTypes": app.NIS2EntityTypes, "Roles": app.GDPRRoles}
	return s.page(w, r, "incident_profile", v)
}

func (s *Server) uiIncidentProfile(w http.ResponseWriter, r *http.Request, v *view) error {
	p, err := s.app.GetIncidentProfile(r.Context())
	if err != nil {
		return err
	}
	return s.profilePage(w, r, v, p)
}

func (s *Server) uiSaveIncidentProfile(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.IncidentProfileInput{LegalName: optStr(f, "legalName"), MemberState: optStr(f, "memberState"), NIS2EntityType: optStr(f, "nis2EntityType"),
		NIS2Sector: optStr(f, "nis2Sector"), FinancialEntity: triState(f, "financialEntity"), FinancialEntityType: optStr(f, "financialEntityType"),
		LEI: optStr(f, "lei"), GDPRRole: optStr(f, "gdprRole"), CRAManufacturer: triState(f, "craManufacturer"), ContactName: optStr(f, "contactName"),
		ContactEmail: optStr(f, "contactEmail"), ContactPhone: optStr(f, "contactPhone"), DPOContact: optStr(f, "dpoContact"),
		NIS2Authority: optStr(f, "nis2Authority"), DORAAuthority: optStr(f, "doraAuthority"), GDPRAuthority: optStr(f, "gdprAuthority"),
		CRAAuthority: optStr(f, "craAuthority")}
	if _, err := s.app.UpdateIncidentProfile(r.Context(), in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		p, gerr := s.app.GetIncidentProfile(r.Context())
		if gerr != nil {
			return gerr
		}
		return s.profilePage(w, r, v, p)
	}
	return redirect(w, r, "/incidents/profile?done=profile-saved")
}
