package app

import (
	"strings"
	"testing"
	"time"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	ve := NewValidationError()
	v, ok := parseInstant(ve, "t", s)
	if !ok {
		t.Fatalf("parse %s: %v", s, ve)
	}
	return v
}

func tptr(t *testing.T, s string) *time.Time {
	v := mustTime(t, s)
	return &v
}

// planOf returns the plan of one report key, failing when absent.
func planOf(t *testing.T, plans []ReportPlan, key string) ReportPlan {
	t.Helper()
	for _, p := range plans {
		if p.Key() == key {
			return p
		}
	}
	t.Fatalf("no report %s among %d", key, len(plans))
	return ReportPlan{}
}

func TestParseInstantKeepsTheMomentInUTC(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"2026-03-02T10:00:00+01:00", "2026-03-02T09:00:00Z"},
		{"2026-03-02T10:00:00-05:00", "2026-03-02T15:00:00Z"},
		{"2026-03-29T03:30:00+02:00", "2026-03-29T01:30:00Z"}, // the night Europe/Berlin changes to summer time
		{"2026-03-02T09:00:00.1234Z", "2026-03-02T09:00:00.123Z"},
	} {
		got := mustTime(t, tc.in)
		if got.Location() != time.UTC || got.Format(time.RFC3339Nano) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got.Format(time.RFC3339Nano), tc.want)
		}
	}
	for _, bad := range []string{"2026-03-02", "2026-03-02T10:00:00", "yesterday", ""} {
		ve := NewValidationError()
		if _, ok := parseInstant(ve, "awareAt", bad); ok || ve.Fields["awareAt"] != CodeInvalid {
			t.Errorf("%q must be refused naming awareAt: %v", bad, ve.Fields)
		}
	}
}

func TestAddMonths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"2026-03-05T09:00:00Z", "2026-04-05T09:00:00Z"},
		{"2026-01-31T22:15:00Z", "2026-02-28T22:15:00Z"}, // no 31 February: the month's last day
		{"2028-01-31T08:00:00Z", "2028-02-29T08:00:00Z"}, // leap year
		{"2026-12-15T00:00:00Z", "2027-01-15T00:00:00Z"},
	} {
		if got := addMonths(mustTime(t, tc.in), 1).Format(time.RFC3339); got != tc.want {
			t.Errorf("%s + 1 month = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestPlanReportsPerRegime computes the clocks of every regime from its
// start events.
func TestPlanReportsPerRegime(t *testing.T) {
	t.Parallel()
	aware := "2026-03-02T10:00:00+01:00" // 09:00 UTC
	type want struct {
		key, status, due, start string
		provisional             bool
	}
	cases := []struct {
		name  string
		inc   func(inc *Incident)
		prof  *IncidentProfile
		sent  map[string]SentTimes
		wants []want
		// absent lists report keys that must not be planned.
		absent []string
	}{
		{name: "NIS2 ongoing, nothing sent",
			inc: func(inc *Incident) { inc.ConfirmedRegimes = []string{RegimeNIS2} },
			wants: []want{
				{"nis2.early_warning", ReportPending, "2026-03-03T09:00:00Z", startAwareness, false},
				{"nis2.notification", ReportPending, "2026-03-05T09:00:00Z", startAwareness, false},
				{"nis2.intermediate", ReportOnRequest, "", "", false},
				// One month after the notification's due time, until it is sent; still ongoing: a progress report.
				{"nis2.progress", ReportPending, "2026-04-05T09:00:00Z", startNotificationDue, true},
				{"nis2.final", ReportAwaitingFacts, "", "", false},
			}},
		{name: "NIS2 notification sent, resolved before the month ends",
			inc: func(inc *Incident) {
				inc.ConfirmedRegimes = []string{RegimeNIS2}
				inc.ResolvedAt = tptr(t, "2026-03-10T12:00:00Z")
			},
			sent: map[string]SentTimes{"nis2.early_warning": {First: tptr(t, "2026-03-02T20:00:00Z")},
				"nis2.notification": {First: tptr(t, "2026-03-04T12:00:00Z"), Last: tptr(t, "2026-03-04T12:00:00Z")}},
			wants: []want{
				{"nis2.early_warning", ReportSent, "2026-03-03T09:00:00Z", startAwareness, false},
				{"nis2.notification", ReportSent, "2026-03-05T09:00:00Z", startAwareness, false},
				{"nis2.final", ReportPending, "2026-04-04T12:00:00Z", startNotificationSubmitted, false},
				{"nis2.progress", ReportNotRequired, "", "", false},
			}},
		{name: "NIS2 handled after the final report was due",
			inc: func(inc *Incident) {
				inc.ConfirmedRegimes = []string{RegimeNIS2}
				inc.ResolvedAt = tptr(t, "2026-05-20T08:00:00+02:00")
			},
			sent: map[string]SentTimes{"nis2.notification": {First: tptr(t, "2026-03-04T12:00:00Z")}},
			wants: []want{
				{"nis2.progress", ReportPending, "2026-04-04T12:00:00Z", startNotificationSubmitted, false},
				{"nis2.final", ReportPending, "2026-06-20T06:00:00Z", startIncidentHandled, false},
			}},
		{name: "NIS2 intermediate report requested",
			inc: func(inc *Incident) {
				inc.ConfirmedRegimes = []string{RegimeNIS2}
				inc.Facts.IntermediateRequestedAt = tptr(t, "2026-03-06T10:00:00Z")
				inc.Facts.IntermediateDueAt = tptr(t, "2026-03-09T10:00:00Z")
			},
			wants: []want{{"nis2.intermediate", ReportPending, "2026-03-09T10:00:00Z", startAuthorityRequest, false}}},
		{name: "DORA not classified yet: the 24-hour limit shows",
			inc: func(inc *Incident) { inc.ConfirmedRegimes = []string{RegimeDORA} },
			wants: []want{
				{"dora.initial", ReportAwaitingFacts, "2026-03-03T09:00:00Z", startAwareness, true},
				{"dora.intermediate", ReportAwaitingFacts, "", "", false},
				{"dora.final", ReportAwaitingFacts, "", "", false},
			}},
		{name: "DORA major 2 hours after awareness: 4 hours from classification",
			inc: func(inc *Incident) {
				inc.ConfirmedRegimes = []string{RegimeDORA}
				inc.DORAClassification = &DORAClassification{Major: Ptr(true), ClassifiedAt: mustTime(t, "2026-03-02T11:00:00Z"),
					MajorSince: tptr(t, "2026-03-02T11:00:00Z")}
			},
			wants: []want{
				{"dora.initial", ReportPending, "2026-03-02T15:00:00Z", startClassification, false},
				{"dora.intermediate", ReportPending, "2026-03-05T15:00:00Z", "initial notification due (not yet submitted)", true},
				{"dora.final", ReportPending, "2026-04-05T15:00:00Z", "intermediate report due (not yet submitted)", true},
			}},
		{name: "DORA major 22 hours after awareness: the 24-hour limit wins",
			inc: func(inc *Incident) {
				inc.ConfirmedRegimes = []string{RegimeDORA}
				inc.DORAClassification = &DORAClassification{Major: Ptr(true), ClassifiedAt: mustTime(t, "2026-03-03T07:00:00Z"),
					MajorSince: tptr(t, "2026-03-03T07:00:00Z")}
			},
			wants: []want{{"dora.initial", ReportPending, "2026-03-03T09:00:00Z", startAwareness, false}}},
		{name: "DORA reports sent: from the submission and the latest intermediate report",
			inc: func(inc *Incident) {
				inc.ConfirmedRegimes = []string{RegimeDORA}
				inc.DORAClassification = &DORAClassification{Major: Ptr(true), ClassifiedAt: mustTime(t, "2026-03-02T11:00:00Z"),
					MajorSince: tptr(t, "2026-03-02T11:00:00Z")}
			},
			sent: map[string]SentTimes{"dora.initial": {First: tptr(t, "2026-03-02T13:30:00Z"), Last: tptr(t, "2026-03-02T13:30:00Z")},
				"dora.intermediate": {First: tptr(t, "2026-03-04T10:00:00Z"), Last: tptr(t, "2026-03-12T16:00:00Z")}},
			wants: []want{
				{"dora.initial", ReportSent, "2026-03-02T15:00:00Z", startClassification, false},
				{"dora.intermediate", ReportSent, "2026-03-05T13:30:00Z", "initial notification submitted", false},
				{"dora.final", ReportPending, "2026-04-12T16:00:00Z", "latest intermediate report submitted", false},
			}},
		{name: "DORA not major",
			inc: func(inc *Incident) {
				inc.ConfirmedRegimes = []string{RegimeDORA}
				inc.DORAClassification = &DORAClassification{Major: Ptr(false), ClassifiedAt: mustTime(t, "2026-03-02T11:00:00Z")}
			},
			wants: []want{{"dora.initial", ReportNotRequired, "", "", false}, {"dora.final", ReportNotRequired, "", "", false}}},
		{name: "GDPR controller, risk not assessed: 72 hours",
			inc: func(inc *Incident) { inc.ConfirmedRegimes = []string{RegimeGDPR} },
			wants: []want{
				{"gdpr.notification", ReportPending, "2026-03-05T09:00:00Z", startAwareness, false},
				{"gdpr.communication", ReportAwaitingFacts, "", "", false},
			},
			absent: []string{"gdpr.controller_notification"}},
		{name: "GDPR unlikely to result in a risk",
			inc: func(inc *Incident) {
				inc.ConfirmedRegimes = []string{RegimeGDPR}
				inc.Facts.PersonalDataRisk = Ptr(RiskUnlikely)
			},
			wants: []want{{"gdpr.notification", ReportNotRequired, "", "", false}, {"gdpr.communication", ReportNotRequired, "", "", false}}},
		{name: "GDPR high risk: data subjects without undue delay",
			inc: func(inc *Incident) {
				inc.ConfirmedRegimes = []string{RegimeGDPR}
				inc.Facts.PersonalDataRisk = Ptr(RiskHigh)
			},
			prof: &IncidentProfile{GDPRRole: Ptr(GDPRController)},
			wants: []want{
				{"gdpr.notification", ReportPending, "2026-03-05T09:00:00Z", startAwareness, false},
				{"gdpr.communication", ReportPending, "", startAwareness, false},
			}},
		{name: "GDPR high risk with an Art. 34(3) condition",
			inc: func(inc *Incident) {
				inc.ConfirmedRegimes = []string{RegimeGDPR}
				inc.Facts.PersonalDataRisk = Ptr(RiskHigh)
				inc.Facts.DataSubjectsExemption = Ptr("The data was encrypted with a key that was not compromised.")
			},
			wants: []want{{"gdpr.communication", ReportNotRequired, "", "", false}}},
		{name: "GDPR processor: tell the controller",
			inc:    func(inc *Incident) { inc.ConfirmedRegimes = []string{RegimeGDPR} },
			prof:   &IncidentProfile{GDPRRole: Ptr(GDPRProcessor)},
			wants:  []want{{"gdpr.controller_notification", ReportPending, "", startAwareness, false}},
			absent: []string{"gdpr.notification", "gdpr.communication"}},
		{name: "CRA actively exploited vulnerability without a fix",
			inc: func(inc *Incident) {
				inc.Type = IncidentVulnerability
				inc.ConfirmedRegimes = []string{RegimeCRA}
			},
			wants: []want{
				{"cra.early_warning", ReportPending, "2026-03-03T09:00:00Z", startAwareness, false},
				{"cra.notification", ReportPending, "2026-03-05T09:00:00Z", startAwareness, false},
				{"cra.final", ReportAwaitingFacts, "", "", false},
			}},
		{name: "CRA vulnerability fixed: 14 days after the measure",
			inc: func(inc *Incident) {
				inc.Type = IncidentVulnerability
				inc.ConfirmedRegimes = []string{RegimeCRA}
				inc.Facts.CorrectiveMeasureAt = tptr(t, "2026-03-09T16:00:00+01:00")
			},
			wants: []want{{"cra.final", ReportPending, "2026-03-23T15:00:00Z", startCorrectiveMeasure, false}}},
		{name: "CRA severe incident: one month after the notification",
			inc: func(inc *Incident) {
				inc.ConfirmedRegimes = []string{RegimeCRA}
				inc.Facts.SevereProductIncident = Ptr(true)
			},
			sent:  map[string]SentTimes{"cra.notification": {First: tptr(t, "2026-03-03T08:00:00Z")}},
			wants: []want{{"cra.final", ReportPending, "2026-04-03T08:00:00Z", startNotificationSubmitted, false}}},
		{name: "no regime confirmed: no clock",
			inc:    func(inc *Incident) {},
			absent: []string{"nis2.early_warning", "dora.initial", "gdpr.notification", "cra.early_warning"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inc := &Incident{Type: IncidentSecurity, Status: IncidentOpen, AwareAt: mustTime(t, aware)}
			tc.inc(inc)
			plans := PlanReports(inc, tc.prof, tc.sent)
			for _, w := range tc.wants {
				p := planOf(t, plans, w.key)
				due := ""
				if p.DueAt != nil {
					due = p.DueAt.UTC().Format(time.RFC3339)
				}
				if p.Status != w.status || due != w.due || p.StartEvent != w.start || p.Provisional != w.provisional {
					t.Errorf("%s: status %s due %q start %q provisional %v; want %s %q %q %v (%s)", w.key, p.Status, due, p.StartEvent,
						p.Provisional, w.status, w.due, w.start, w.provisional, p.Reasoning)
				}
				if p.Basis == "" || p.Reasoning == "" {
					t.Errorf("%s: every clock names its basis and reasoning", w.key)
				}
			}
			for _, k := range tc.absent {
				for _, p := range plans {
					if p.Key() == k {
						t.Errorf("%s must not be planned", k)
					}
				}
			}
		})
	}
}

func TestProposeRegimes(t *testing.T) {
	t.Parallel()
	aware := mustTime(t, "2026-03-02T10:00:00+01:00")
	later := mustTime(t, "2026-10-01T10:00:00+02:00")
	cases := []struct {
		name    string
		inc     Incident
		prof    IncidentProfile
		enabled map[string]bool
		want    map[string]string
		missing map[string]string // regime -> a fact that must be asked for
	}{
		{name: "nothing known: every regime asks for facts",
			inc:     Incident{Type: IncidentSecurity, AwareAt: aware},
			enabled: map[string]bool{"nis2": true},
			want:    map[string]string{RegimeNIS2: proposalUndetermined, RegimeDORA: proposalUndetermined, RegimeGDPR: proposalUndetermined, RegimeCRA: proposalDoesNotApply},
			missing: map[string]string{RegimeNIS2: "profile.nis2EntityType", RegimeDORA: "profile.financialEntity", RegimeGDPR: "facts.personalDataAffected"}},
		{name: "essential entity, significant incident with personal data",
			inc: Incident{Type: IncidentPersonalData, AwareAt: aware, Facts: IncidentFacts{SevereOperationalDisruption: Ptr(true)}},
			prof: IncidentProfile{NIS2EntityType: Ptr(NIS2Essential), FinancialEntity: Ptr(false), GDPRRole: Ptr(GDPRController),
				CRAManufacturer: Ptr(false)},
			want: map[string]string{RegimeNIS2: proposalApplies, RegimeDORA: proposalDoesNotApply, RegimeGDPR: proposalApplies, RegimeCRA: proposalDoesNotApply}},
		{name: "financial entity: DORA instead of NIS2",
			inc:  Incident{Type: IncidentICT, AwareAt: aware, Facts: IncidentFacts{SevereOperationalDisruption: Ptr(true), PersonalDataAffected: Ptr(false)}},
			prof: IncidentProfile{NIS2EntityType: Ptr(NIS2Essential), FinancialEntity: Ptr(true), GDPRRole: Ptr(GDPRController)},
			want: map[string]string{RegimeNIS2: proposalDoesNotApply, RegimeDORA: proposalApplies, RegimeGDPR: proposalDoesNotApply}},
		{name: "not significant",
			inc:  Incident{Type: IncidentSecurity, AwareAt: aware, Facts: IncidentFacts{SevereOperationalDisruption: Ptr(false), ConsiderableDamage: Ptr(false)}},
			prof: IncidentProfile{NIS2EntityType: Ptr(NIS2Important)},
			want: map[string]string{RegimeNIS2: proposalDoesNotApply}},
		{name: "manufacturer with an actively exploited vulnerability after 11 September 2026",
			inc:  Incident{Type: IncidentVulnerability, AwareAt: later, Facts: IncidentFacts{ActivelyExploited: Ptr(true)}},
			prof: IncidentProfile{CRAManufacturer: Ptr(true)},
			want: map[string]string{RegimeCRA: proposalApplies, RegimeDORA: proposalDoesNotApply}},
		{name: "manufacturer before the CRA's reporting obligations apply",
			inc:  Incident{Type: IncidentVulnerability, AwareAt: aware, Facts: IncidentFacts{ActivelyExploited: Ptr(true)}},
			prof: IncidentProfile{CRAManufacturer: Ptr(true)},
			want: map[string]string{RegimeCRA: proposalDoesNotApply}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inc := tc.inc
			inc.ConfirmedRegimes = []string{RegimeGDPR}
			got := map[string]RegimeProposal{}
			for _, p := range ProposeRegimes(&inc, &tc.prof, tc.enabled) {
				got[p.Regime] = p
				if len(p.Criteria) == 0 || p.Reasoning == "" {
					t.Errorf("%s: a proposal shows its criteria and reasoning", p.Regime)
				}
				for _, c := range p.Criteria {
					if c.Basis == "" || c.Detail == "" || (c.Result != criterionMet && c.Result != criterionNotMet && c.Result != criterionUnknown) {
						t.Errorf("%s/%s: incomplete criterion %+v", p.Regime, c.Key, c)
					}
				}
			}
			if !got[RegimeGDPR].Confirmed || got[RegimeNIS2].Confirmed {
				t.Error("confirmed marks exactly the confirmed regimes")
			}
			for r, w := range tc.want {
				if got[r].Proposal != w {
					t.Errorf("%s: %s, want %s: %s", r, got[r].Proposal, w, got[r].Reasoning)
				}
			}
			for r, fact := range tc.missing {
				if !strings.Contains(strings.Join(got[r].MissingFacts, ","), fact) {
					t.Errorf("%s must ask for %s: %v", r, fact, got[r].MissingFacts)
				}
			}
			if tc.enabled["nis2"] && !strings.Contains(got[RegimeNIS2].Criteria[0].Detail, "framework is enabled") {
				t.Errorf("an enabled framework is shown as a hint: %s", got[RegimeNIS2].Criteria[0].Detail)
			}
		})
	}
}

func TestClassifyDORA(t *testing.T) {
	t.Parallel()
	yes, no := Ptr(true), Ptr(false)
	n := func(v int64) *int64 { return &v }
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name  string
		in    DORAInput
		major *bool
		met   int
	}{
		{"nothing answered", DORAInput{}, nil, 0},
		{"no critical service", DORAInput{CriticalFunctionsAffected: no, AuthorisedServicesAffected: no, MaliciousUnauthorisedAccess: no,
			ClientsAffected: n(500000), EconomicImpactEUR: f(1e6)}, no, 2},
		{"critical and malicious access that may lose data", DORAInput{MaliciousUnauthorisedAccess: yes, AccessMayCauseDataLoss: yes}, yes, 0},
		{"critical and two thresholds", DORAInput{CriticalFunctionsAffected: yes, ClientsAffected: n(120000), DowntimeHours: f(3), DurationHours: f(5)}, yes, 2},
		{"critical, 10 % of clients and two member states", DORAInput{AuthorisedServicesAffected: yes, ClientsAffected: n(2000), ClientsTotal: n(10000),
			MemberStatesAffected: []string{"DE", "AT"}}, yes, 2},
		{"critical, one threshold, the rest answered", DORAInput{CriticalFunctionsAffected: yes, MaliciousUnauthorisedAccess: no,
			ClientsAffected: n(10), ClientsTotal: n(1000), CounterpartsAffected: n(0), CounterpartsTotal: n(10),
			MediaCoverage: yes, RepetitiveComplaints: no, RegulatoryBreachLikely: no, ClientLossLikely: no, DurationHours: f(1), DowntimeHours: f(0.5),
			MemberStatesAffected: []string{"DE"}, DataLossAdverseImpact: no, EconomicImpactEUR: f(5000)}, no, 1},
		{"critical, one threshold, others unknown", DORAInput{CriticalFunctionsAffected: yes, EconomicImpactEUR: f(200000)}, nil, 1},
		{"thresholds are strict: exactly 100 000 clients and EUR 100 000", DORAInput{CriticalFunctionsAffected: yes, AccessMayCauseDataLoss: no,
			ClientsAffected: n(100000), EconomicImpactEUR: f(100000), DurationHours: f(24), DowntimeHours: f(2), MediaCoverage: no,
			RepetitiveComplaints: no, RegulatoryBreachLikely: no, ClientLossLikely: no, MemberStatesAffected: []string{"DE"}, DataLossAdverseImpact: no}, no, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			criteria, _, met, major, reasoning := ClassifyDORA(tc.in)
			if (major == nil) != (tc.major == nil) || (major != nil && *major != *tc.major) || met != tc.met {
				t.Fatalf("major %v met %d, want %v %d: %v", fmtBool(major), met, fmtBool(tc.major), tc.met, reasoning)
			}
			if len(criteria) != 8 || len(reasoning) == 0 {
				t.Fatalf("every criterion is shown with the reasoning: %d criteria", len(criteria))
			}
		})
	}
}

func fmtBool(b *bool) string {
	if b == nil {
		return "undetermined"
	}
	if *b {
		return "true"
	}
	return "false"
}

// Every regime a person can confirm has a planner for its reports.
func TestEveryRegimeHasAPlanner(t *testing.T) {
	for _, r := range IncidentRegimes {
		if regimePlanners[r] == nil {
			t.Errorf("regime %s has no report planner", r)
		}
	}
	if len(regimePlanners) != len(IncidentRegimes) {
		t.Errorf("%d planners for %d regimes", len(regimePlanners), len(IncidentRegimes))
	}
}
