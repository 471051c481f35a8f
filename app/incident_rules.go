package app

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The reporting rules of the four regimes, as pure functions of the
// incident record, the organization's reporting profile and the times
// reports were sent: which regimes apply (a proposal a person confirms),
// whether a DORA incident is major, and when each report is due. Every
// rule names the article it follows; docs/incidents.md lists them and what
// is not automated.

// Regimes.
const (
	RegimeNIS2 = "nis2"
	RegimeDORA = "dora"
	RegimeGDPR = "gdpr"
	RegimeCRA  = "cra"
)

// IncidentRegimes lists the regimes the appliance knows, in display order.
var IncidentRegimes = []string{RegimeNIS2, RegimeDORA, RegimeGDPR, RegimeCRA}

// Report kinds.
const (
	ReportEarlyWarning     = "early_warning"
	ReportNotification     = "notification"
	ReportIntermediate     = "intermediate"
	ReportProgress         = "progress"
	ReportFinal            = "final"
	ReportInitial          = "initial"
	ReportCommunication    = "communication"
	ReportControllerNotice = "controller_notification"
)

// Proposal and criterion results, and the start events clocks name.
const (
	reportKeySep               = "."
	craApplicationDateRFC3339  = "2026-09-11T00:00:00Z"
	proposalApplies            = "applies"
	proposalDoesNotApply       = "does_not_apply"
	proposalUndetermined       = "undetermined"
	criterionMet               = "met"
	criterionNotMet            = "not_met"
	criterionUnknown           = "unknown"
	startAwareness             = "awareness"
	startClassification        = "classification as major"
	startAuthorityRequest      = "request of the CSIRT or competent authority"
	startCorrectiveMeasure     = "corrective or mitigating measure available"
	startIncidentHandled       = "incident handled (resolved)"
	startNotificationSubmitted = "incident notification submitted"
	startNotificationDue       = "incident notification due (not yet submitted)"
)

// Report statuses.
const (
	ReportPending       = "pending"        // required, not sent
	ReportAwaitingFacts = "awaiting_facts" // the due time or the duty depends on a fact not recorded yet
	ReportOnRequest     = "on_request"     // only when an authority asks (NIS2 intermediate report)
	ReportNotRequired   = "not_required"
	ReportSent          = "sent"
)

// ReportStatuses lists every report status.
var ReportStatuses = []string{ReportPending, ReportAwaitingFacts, ReportOnRequest, ReportNotRequired, ReportSent}

// craApplicationDate is when CRA Article 14 starts to apply (Art. 71(2)).
var craApplicationDate, _ = time.Parse(time.RFC3339, craApplicationDateRFC3339)

// ReportKey names a report of an incident: regime + "." + kind.
func ReportKey(regime, kind string) string { return regime + reportKeySep + kind }

// addMonths adds n calendar months at the same clock time. A day the
// target month lacks (31 January + 1 month) becomes that month's last day:
// Regulation (EEC, Euratom) No 1182/71 Art. 3(2)(c) ends such a period on
// the last day of the month. The period ends at the same clock time, not at
// the end of that day as 1182/71 would allow: the earlier, safer moment.
func addMonths(t time.Time, n int) time.Time {
	t = t.UTC()
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(n), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	if d > last {
		d = last
	}
	return time.Date(first.Year(), first.Month(), d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// SentTimes is when a report was first and last sent.
type SentTimes struct {
	First *time.Time
	Last  *time.Time
}

// ReportPlan is one report a regime asks for, with its clock.
type ReportPlan struct {
	Regime      string
	Kind        string
	Status      string
	DueAt       *time.Time
	StartEvent  string
	StartAt     *time.Time
	Provisional bool
	Basis       string
	Reasoning   string
}

// Key is the plan's report key.
func (p ReportPlan) Key() string { return ReportKey(p.Regime, p.Kind) }

func tp(t time.Time) *time.Time { return &t }

// PlanReports returns every report the incident's confirmed regimes ask
// for, with due times computed from the right start event. sent holds when
// reports were sent (by report key). It depends on nothing else: the same
// facts give the same clocks.
func PlanReports(inc *Incident, prof *IncidentProfile, sent map[string]SentTimes) []ReportPlan {
	var out []ReportPlan
	for _, r := range IncidentRegimes {
		if !contains(inc.ConfirmedRegimes, r) {
			continue
		}
		out = append(out, regimePlanners[r](inc, prof, sent)...)
	}
	for i := range out {
		if s, ok := sent[out[i].Key()]; ok && s.First != nil {
			out[i].Status = ReportSent
		}
	}
	return out
}

// regimePlanners plan the reports of each regime.
var regimePlanners = map[string]func(*Incident, *IncidentProfile, map[string]SentTimes) []ReportPlan{
	RegimeNIS2: func(inc *Incident, _ *IncidentProfile, sent map[string]SentTimes) []ReportPlan {
		return planNIS2(inc, sent)
	},
	RegimeDORA: func(inc *Incident, _ *IncidentProfile, sent map[string]SentTimes) []ReportPlan {
		return planDORA(inc, sent)
	},
	RegimeGDPR: func(inc *Incident, prof *IncidentProfile, _ map[string]SentTimes) []ReportPlan {
		return planGDPR(inc, prof)
	},
	RegimeCRA: func(inc *Incident, _ *IncidentProfile, sent map[string]SentTimes) []ReportPlan {
		return planCRA(inc, sent)
	},
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// planNIS2 follows Directive (EU) 2022/2555 Art. 23(4).
func planNIS2(inc *Incident, sent map[string]SentTimes) []ReportPlan {
	aware := inc.AwareAt
	out := []ReportPlan{
		{Regime: RegimeNIS2, Kind: ReportEarlyWarning, Status: ReportPending, DueAt: tp(aware.Add(24 * time.Hour)),
			StartEvent: startAwareness, StartAt: tp(aware), Basis: "NIS2 Art. 23(4)(a)",
			Reasoning: "Early warning without undue delay and in any event within 24 hours of becoming aware of the significant incident; say whether it is suspected of being caused by unlawful or malicious acts or could have a cross-border impact."},
		{Regime: RegimeNIS2, Kind: ReportNotification, Status: ReportPending, DueAt: tp(aware.Add(72 * time.Hour)),
			StartEvent: startAwareness, StartAt: tp(aware), Basis: "NIS2 Art. 23(4)(b)",
			Reasoning: "Incident notification without undue delay and in any event within 72 hours of becoming aware: update the early warning, give an initial assessment (severity, impact) and, where available, the indicators of compromise."},
	}
	im := ReportPlan{Regime: RegimeNIS2, Kind: ReportIntermediate, Status: ReportOnRequest, Basis: "NIS2 Art. 23(4)(c)",
		Reasoning: "An intermediate report on relevant status updates is due only when the CSIRT or the competent authority asks for one: record the request (facts.nis2IntermediateRequestedAt and, if the authority set one, facts.nis2IntermediateDueAt)."}
	if f := inc.Facts.IntermediateRequestedAt; f != nil {
		im.Status, im.StartEvent, im.StartAt = ReportPending, startAuthorityRequest, tp(*f)
		im.Reasoning = "Requested by the CSIRT or competent authority; the directive sets no time limit, the authority's request does."
		if d := inc.Facts.IntermediateDueAt; d != nil {
			im.DueAt = tp(*d)
		} else {
			im.Reasoning += " No due time was recorded with the request."
		}
	}
	out = append(out, im)

	// Final report: one month after the incident notification was submitted
	// (Art. 23(4)(d)). An incident still ongoing then gets a progress report
	// at that time and the final report within one month of its handling
	// (Art. 23(4)(e)).
	base, provisional, start := aware.Add(72*time.Hour), true, startNotificationDue
	if s := sent[ReportKey(RegimeNIS2, ReportNotification)]; s.First != nil {
		base, provisional, start = *s.First, false, startNotificationSubmitted
	}
	nominal := addMonths(base, 1)
	final := ReportPlan{Regime: RegimeNIS2, Kind: ReportFinal, Basis: "NIS2 Art. 23(4)(d)"}
	progress := ReportPlan{Regime: RegimeNIS2, Kind: ReportProgress, Basis: "NIS2 Art. 23(4)(e)"}
	if inc.ResolvedAt != nil && !inc.ResolvedAt.After(nominal) {
		final.Status, final.DueAt, final.StartEvent, final.StartAt, final.Provisional = ReportPending, tp(nominal), start, tp(base), provisional
		final.Reasoning = "Final report not later than one month after the submission of the incident notification: a detailed description (severity, impact), the type of threat or root cause, applied and ongoing mitigation measures and, where applicable, the cross-border impact."
		if provisional {
			final.Reasoning += " Counted from the notification's due time until the notification is marked sent."
		}
		progress.Status = ReportNotRequired
		progress.Reasoning = fmt.Sprintf("The incident was handled (resolved %s) before the final report falls due, so no progress report is needed.", inc.ResolvedAt.Format(time.RFC3339))
	} else {
		progress.Status, progress.DueAt, progress.StartEvent, progress.StartAt, progress.Provisional = ReportPending, tp(nominal), start, tp(base), provisional
		progress.Reasoning = "The incident is still ongoing at the time the final report would be due: a progress report is due then instead."
		if provisional {
			progress.Reasoning += " Counted from the notification's due time until the notification is marked sent."
		}
		if inc.ResolvedAt != nil {
			final.Status, final.DueAt, final.StartEvent, final.StartAt = ReportPending, tp(addMonths(*inc.ResolvedAt, 1)), startIncidentHandled, tp(*inc.ResolvedAt)
			final.Reasoning = "The incident was handled after the progress report fell due: the final report is due within one month of its handling."
		} else {
			final.Status = ReportAwaitingFacts
			final.Reasoning = "Due within one month of the handling of the incident: the clock starts when the incident is marked resolved."
		}
	}
	return append(out, progress, final)
}

// planDORA follows Regulation (EU) 2022/2554 Art. 19(4) with Delegated
// Regulation (EU) 2025/301 Art. 5 (time limits) and the classification of
// Delegated Regulation (EU) 2024/1772 Art. 8.
func planDORA(inc *Incident, sent map[string]SentTimes) []ReportPlan {
	aware := inc.AwareAt
	initial := ReportPlan{Regime: RegimeDORA, Kind: ReportInitial, Basis: "DORA Art. 19(4)(a); RTS (EU) 2025/301 Art. 5"}
	intermediate := ReportPlan{Regime: RegimeDORA, Kind: ReportIntermediate, Basis: "DORA Art. 19(4)(b); RTS (EU) 2025/301 Art. 5"}
	final := ReportPlan{Regime: RegimeDORA, Kind: ReportFinal, Basis: "DORA Art. 19(4)(c); RTS (EU) 2025/301 Art. 5"}
	c := inc.DORAClassification
	switch {
	case c == nil || c.Major == nil:
		initial.Status, initial.DueAt, initial.StartEvent, initial.StartAt, initial.Provisional = ReportAwaitingFacts, tp(aware.Add(24*time.Hour)), startAwareness, tp(aware), true
		initial.Reasoning = "Classify the incident (RTS 2024/1772): if it is major, the initial notification is due within 4 hours of the classification and at the latest 24 hours after becoming aware. The 24-hour limit is shown until then."
		intermediate.Status, final.Status = ReportAwaitingFacts, ReportAwaitingFacts
		intermediate.Reasoning = "Due 72 hours after the initial notification is submitted, once the incident is classified as major."
		final.Reasoning = "Due one month after the latest updated intermediate report, once the incident is classified as major."
		return []ReportPlan{initial, intermediate, final}
	case !*c.Major:
		msg := "Classified as not major on " + c.ClassifiedAt.Format(time.RFC3339) + " (RTS 2024/1772 Art. 8): no report to the competent authority is due; the classification and its reasoning are kept."
		for _, p := range []*ReportPlan{&initial, &intermediate, &final} {
			p.Status, p.Reasoning = ReportNotRequired, msg
		}
		return []ReportPlan{initial, intermediate, final}
	}
	classified := c.ClassifiedAt
	if c.MajorSince != nil {
		classified = *c.MajorSince
	}
	fourHours, outer := classified.Add(4*time.Hour), aware.Add(24*time.Hour)
	initial.Status = ReportPending
	if fourHours.Before(outer) {
		initial.DueAt, initial.StartEvent, initial.StartAt = tp(fourHours), startClassification, tp(classified)
		initial.Reasoning = "Within 4 hours of the classification as major (" + classified.Format(time.RFC3339) + "), which is before the 24-hour limit after becoming aware."
	} else {
		initial.DueAt, initial.StartEvent, initial.StartAt = tp(outer), startAwareness, tp(aware)
		initial.Reasoning = "4 hours after the classification as major (" + classified.Format(time.RFC3339) + ") would pass the limit of 24 hours after becoming aware, which therefore applies."
	}
	base, provisional, start := *initial.DueAt, true, "initial notification due (not yet submitted)"
	if s := sent[ReportKey(RegimeDORA, ReportInitial)]; s.First != nil {
		base, provisional, start = *s.First, false, "initial notification submitted"
	}
	intermediate.Status, intermediate.DueAt, intermediate.StartEvent, intermediate.StartAt, intermediate.Provisional = ReportPending, tp(base.Add(72*time.Hour)), start, tp(base), provisional
	intermediate.Reasoning = "Within 72 hours of the submission of the initial notification, even where the status or handling has not changed; an updated intermediate report without undue delay once regular activities have been recovered."
	fbase, fprov, fstart := *intermediate.DueAt, true, "intermediate report due (not yet submitted)"
	if s := sent[ReportKey(RegimeDORA, ReportIntermediate)]; s.Last != nil {
		fbase, fprov, fstart = *s.Last, false, "latest intermediate report submitted"
	}
	final.Status, final.DueAt, final.StartEvent, final.StartAt, final.Provisional = ReportPending, tp(addMonths(fbase, 1)), fstart, tp(fbase), fprov
	final.Reasoning = "No later than one month after the submission of the latest updated intermediate report."
	return []ReportPlan{initial, intermediate, final}
}

// planGDPR follows Regulation (EU) 2016/679 Art. 33 and 34.
func planGDPR(inc *Incident, prof *IncidentProfile) []ReportPlan {
	aware := inc.AwareAt
	role := ""
	if prof != nil && prof.GDPRRole != nil {
		role = *prof.GDPRRole
	}
	var out []ReportPlan
	if role == GDPRProcessor || role == GDPRControllerAndProcessor {
		p := ReportPlan{Regime: RegimeGDPR, Kind: ReportControllerNotice, Status: ReportPending, StartEvent: startAwareness, StartAt: tp(aware),
			Basis: "GDPR Art. 33(2)", Reasoning: "As processor: notify the controller without undue delay after becoming aware of the breach. The regulation sets no hour count."}
		if role == GDPRControllerAndProcessor {
			p.Reasoning += " Applies to the personal data you process on behalf of other controllers."
		}
		out = append(out, p)
		if role == GDPRProcessor {
			return out
		}
	}
	risk := ""
	if inc.Facts.PersonalDataRisk != nil {
		risk = *inc.Facts.PersonalDataRisk
	}
	n := ReportPlan{Regime: RegimeGDPR, Kind: ReportNotification, Basis: "GDPR Art. 33(1)"}
	switch risk {
	case RiskUnlikely:
		n.Status = ReportNotRequired
		n.Reasoning = "Assessed as unlikely to result in a risk to the rights and freedoms of natural persons: no notification to the supervisory authority. Document the breach, its effects and the remedial action (Art. 33(5)); this record does."
	default:
		n.Status, n.DueAt, n.StartEvent, n.StartAt = ReportPending, tp(aware.Add(72*time.Hour)), startAwareness, tp(aware)
		n.Reasoning = "Notify the supervisory authority without undue delay and, where feasible, not later than 72 hours after becoming aware. A notification after 72 hours must give the reasons for the delay."
		if risk == "" {
			n.Reasoning += " The risk to data subjects is not assessed yet (facts.personalDataRisk), so the notification is treated as due."
		}
	}
	out = append(out, n)
	cm := ReportPlan{Regime: RegimeGDPR, Kind: ReportCommunication, Basis: "GDPR Art. 34"}
	switch {
	case risk == "":
		cm.Status = ReportAwaitingFacts
		cm.Reasoning = "Communication to the data subjects is due without undue delay where the breach is likely to result in a high risk: assess the risk (facts.personalDataRisk)."
	case risk != RiskHigh:
		cm.Status = ReportNotRequired
		cm.Reasoning = "Not assessed as a high risk to the rights and freedoms of natural persons: no communication to the data subjects is required (Art. 34(1))."
	case inc.Facts.DataSubjectsExemption != nil && strings.TrimSpace(*inc.Facts.DataSubjectsExemption) != "":
		cm.Status = ReportNotRequired
		cm.Reasoning = "High risk, but a condition of Art. 34(3) is recorded: " + *inc.Facts.DataSubjectsExemption
	default:
		cm.Status, cm.StartEvent, cm.StartAt = ReportPending, startAwareness, tp(aware)
		cm.Reasoning = "High risk: communicate the breach to the data subjects without undue delay, in clear and plain language (Art. 34(2)). The regulation sets no hour count."
	}
	return append(out, cm)
}

// planCRA follows Regulation (EU) 2024/2847 Art. 14(2) (actively exploited
// vulnerabilities) and Art. 14(4) (severe incidents).
func planCRA(inc *Incident, sent map[string]SentTimes) []ReportPlan {
	aware := inc.AwareAt
	vuln := inc.Type == IncidentVulnerability || (inc.Facts.ActivelyExploited != nil && *inc.Facts.ActivelyExploited)
	art := "CRA Art. 14(4)"
	if vuln {
		art = "CRA Art. 14(2)"
	}
	out := []ReportPlan{
		{Regime: RegimeCRA, Kind: ReportEarlyWarning, Status: ReportPending, DueAt: tp(aware.Add(24 * time.Hour)), StartEvent: startAwareness,
			StartAt: tp(aware), Basis: art + "(a)", Reasoning: "Early warning without undue delay and in any event within 24 hours of becoming aware, to the CSIRT designated as coordinator and ENISA through the single reporting platform."},
		{Regime: RegimeCRA, Kind: ReportNotification, Status: ReportPending, DueAt: tp(aware.Add(72 * time.Hour)), StartEvent: startAwareness,
			StartAt: tp(aware), Basis: art + "(b)", Reasoning: "Notification without undue delay and in any event within 72 hours of becoming aware."},
	}
	final := ReportPlan{Regime: RegimeCRA, Kind: ReportFinal, Basis: art + "(c)"}
	if vuln {
		if m := inc.Facts.CorrectiveMeasureAt; m != nil {
			final.Status, final.DueAt, final.StartEvent, final.StartAt = ReportPending, tp(m.Add(14*24*time.Hour)), startCorrectiveMeasure, tp(*m)
			final.Reasoning = "Final report no later than 14 days after a corrective or mitigating measure is available. Counted as 14 × 24 hours."
		} else {
			final.Status = ReportAwaitingFacts
			final.Reasoning = "Due 14 days after a corrective or mitigating measure is available: record when it was (facts.correctiveMeasureAvailableAt)."
		}
	} else {
		base, prov, start := aware.Add(72*time.Hour), true, startNotificationDue
		if s := sent[ReportKey(RegimeCRA, ReportNotification)]; s.First != nil {
			base, prov, start = *s.First, false, startNotificationSubmitted
		}
		final.Status, final.DueAt, final.StartEvent, final.StartAt, final.Provisional = ReportPending, tp(addMonths(base, 1)), start, tp(base), prov
		final.Reasoning = "Final report within one month after the submission of the incident notification."
	}
	return append(out, final)
}

// Criterion is one test a proposal or classification applied, with what
// it found and why.
type Criterion struct {
	Key    string `json:"key"`
	Label  string `json:"label"`
	Basis  string `json:"basis"`
	Result string `json:"result"` // met, not_met, unknown
	Detail string `json:"detail"`
	// Fact names the input that would settle an unknown criterion.
	Fact string `json:"fact,omitempty"`
}

// RegimeProposal says whether a regime applies to an incident, with the
// criteria used; a person confirms it.
type RegimeProposal struct {
	Regime    string      `json:"regime"`
	Name      string      `json:"name"`
	Proposal  string      `json:"proposal"` // applies, does_not_apply, undetermined
	Confirmed bool        `json:"confirmed"`
	Criteria  []Criterion `json:"criteria"`
	Reasoning string      `json:"reasoning"`
	// MissingFacts names the inputs (profile or incident) to answer.
	MissingFacts []string `json:"missingFacts"`
}

// RegimeNames are the regimes' display names.
var RegimeNames = map[string]string{
	RegimeNIS2: "NIS2 (Directive (EU) 2022/2555)",
	RegimeDORA: "DORA (Regulation (EU) 2022/2554)",
	RegimeGDPR: "GDPR (Regulation (EU) 2016/679)",
	RegimeCRA:  "Cyber Resilience Act (Regulation (EU) 2024/2847)",
}

func boolCriterion(v *bool, key, label, basis, fact, yes, no, unknown string) Criterion {
	c := Criterion{Key: key, Label: label, Basis: basis, Fact: fact}
	switch {
	case v == nil:
		c.Result, c.Detail = criterionUnknown, unknown
	case *v:
		c.Result, c.Detail, c.Fact = criterionMet, yes, ""
	default:
		c.Result, c.Detail, c.Fact = criterionNotMet, no, ""
	}
	return c
}

// ProposeRegimes applies each regime's scope test to the incident and the
// profile. enabled holds the slugs of the organization's enabled
// frameworks, which are shown as hints, never taken as answers.
func ProposeRegimes(inc *Incident, prof *IncidentProfile, enabled map[string]bool) []RegimeProposal {
	if prof == nil {
		prof = &IncidentProfile{}
	}
	hint := func(slug, text string) string {
		if enabled[slug] {
			return text + " The " + strings.ToUpper(slug) + " framework is enabled for this organization, which suggests it is in scope; answer in the reporting profile to confirm."
		}
		return text
	}
	var out []RegimeProposal

	// NIS2: an essential or important entity (Art. 3) with a significant
	// incident (Art. 23(3)); DORA replaces NIS2 reporting for financial
	// entities (NIS2 Art. 4, DORA recital 16).
	nis := []Criterion{}
	c := Criterion{Key: "entity", Label: "Essential or important entity", Basis: "NIS2 Art. 3", Fact: "profile.nis2EntityType"}
	switch {
	case prof.NIS2EntityType == nil:
		c.Result, c.Detail = criterionUnknown, hint("nis2", "The reporting profile does not say whether the organization is an essential or important entity.")
	case *prof.NIS2EntityType == NIS2NotInScope:
		c.Result, c.Detail, c.Fact = criterionNotMet, "The profile says the organization is neither an essential nor an important entity.", ""
	default:
		c.Result, c.Detail, c.Fact = criterionMet, "The profile says the organization is an "+*prof.NIS2EntityType+" entity.", ""
	}
	nis = append(nis, c)
	c = Criterion{Key: "lexSpecialis", Label: "Not a financial entity reporting under DORA", Basis: "NIS2 Art. 4; DORA recital 16"}
	if prof.FinancialEntity != nil && *prof.FinancialEntity {
		c.Result, c.Detail = criterionNotMet, "The organization is a financial entity under DORA: DORA's incident reporting applies instead of NIS2 Art. 23."
	} else {
		c.Result, c.Detail = criterionMet, "The profile does not name the organization a DORA financial entity."
	}
	nis = append(nis, c)
	f := inc.Facts
	switch {
	case f.SevereOperationalDisruption != nil && *f.SevereOperationalDisruption:
		nis = append(nis, Criterion{Key: "significant", Label: "Significant incident", Basis: "NIS2 Art. 23(3)(a)", Result: criterionMet,
			Detail: "Recorded as having caused, or being capable of causing, severe operational disruption of the services or financial loss."})
	case f.ConsiderableDamage != nil && *f.ConsiderableDamage:
		nis = append(nis, Criterion{Key: "significant", Label: "Significant incident", Basis: "NIS2 Art. 23(3)(b)", Result: criterionMet,
			Detail: "Recorded as having affected, or being capable of affecting, other natural or legal persons by causing considerable material or non-material damage."})
	case f.SevereOperationalDisruption != nil && f.ConsiderableDamage != nil:
		nis = append(nis, Criterion{Key: "significant", Label: "Significant incident", Basis: "NIS2 Art. 23(3)", Result: criterionNotMet,
			Detail: "Recorded as causing neither severe operational disruption or financial loss nor considerable damage to others."})
	default:
		nis = append(nis, Criterion{Key: "significant", Label: "Significant incident", Basis: "NIS2 Art. 23(3)", Result: criterionUnknown,
			Fact:   "facts.severeOperationalDisruption, facts.considerableDamage",
			Detail: "Say whether the incident caused or can cause severe operational disruption or financial loss, or considerable damage to others. The thresholds of Implementing Regulation (EU) 2024/2690 for digital infrastructure and digital providers, and national rules, are not applied automatically."})
	}
	if inc.Type == IncidentVulnerability {
		nis = append(nis, Criterion{Key: "incident", Label: "An incident, not only a vulnerability", Basis: "NIS2 Art. 6(6)", Result: criterionUnknown,
			Fact:   "type",
			Detail: "A vulnerability is an incident only where an event compromised the availability, authenticity, integrity or confidentiality of data or services."})
	}
	out = append(out, proposal(RegimeNIS2, nis))

	// DORA: a financial entity (Art. 2(1)) with an ICT-related incident
	// (Art. 3(8)); reports only for major incidents (Art. 19(1)).
	dora := []Criterion{boolCriterion(prof.FinancialEntity, "financialEntity", "Financial entity", "DORA Art. 2(1)", "profile.financialEntity",
		"The profile says the organization is a financial entity.", "The profile says the organization is not a financial entity.",
		hint("dora", "The reporting profile does not say whether the organization is a financial entity under DORA."))}
	c = Criterion{Key: "ictIncident", Label: "ICT-related incident", Basis: "DORA Art. 3(8)"}
	switch inc.Type {
	case IncidentICT, IncidentSecurity:
		c.Result, c.Detail = criterionMet, "The incident is recorded as an ICT or security incident."
	case IncidentPersonalData:
		c.Result, c.Detail, c.Fact = criterionUnknown, "A personal data breach is an ICT-related incident only where it came through network and information systems.", "type"
	default:
		c.Result, c.Detail = criterionNotMet, "A vulnerability that compromised nothing is not an ICT-related incident; the voluntary notification of significant cyber threats (Art. 19(2)) is not automated."
	}
	dora = append(dora, c)
	p := proposal(RegimeDORA, dora)
	if p.Proposal != proposalDoesNotApply {
		p.Reasoning += " Reports are due only if the incident is classified as major (RTS 2024/1772 Art. 8): use the classification form."
	}
	out = append(out, p)

	// GDPR: a personal data breach (Art. 4(12)) of a controller or processor.
	gdpr := []Criterion{}
	c = Criterion{Key: "personalData", Label: "Personal data breach", Basis: "GDPR Art. 4(12)", Fact: "facts.personalDataAffected"}
	switch {
	case f.PersonalDataAffected != nil && !*f.PersonalDataAffected:
		c.Result, c.Detail, c.Fact = criterionNotMet, "Recorded as not affecting personal data.", ""
	case f.PersonalDataAffected != nil, inc.Type == IncidentPersonalData:
		c.Result, c.Detail, c.Fact = criterionMet, "Recorded as a breach of security affecting personal data.", ""
	case len(inc.DataCategories) > 0 || (inc.DataSubjectsAffected != nil && *inc.DataSubjectsAffected > 0):
		c.Result, c.Detail, c.Fact = criterionMet, "Data categories or affected data subjects are recorded.", ""
	default:
		c.Result, c.Detail = criterionUnknown, "Say whether personal data was destroyed, lost, altered, disclosed or accessed without authorisation."
	}
	gdpr = append(gdpr, c)
	c = Criterion{Key: "role", Label: "Controller or processor of the data", Basis: "GDPR Art. 33(1), 33(2)", Fact: "profile.gdprRole"}
	if prof.GDPRRole == nil {
		c.Result, c.Detail = criterionUnknown, hint("gdpr", "The reporting profile does not say whether the organization acts as controller or processor; until it does, the controller's duties are shown.")
	} else {
		c.Result, c.Detail, c.Fact = criterionMet, "The profile says the organization acts as "+strings.ReplaceAll(*prof.GDPRRole, "_", " ")+".", ""
	}
	gdpr = append(gdpr, c)
	p = proposal(RegimeGDPR, gdpr)
	if p.Proposal != proposalDoesNotApply {
		p.Reasoning += " Whether the supervisory authority and the data subjects must be told depends on the assessed risk (facts.personalDataRisk)."
	}
	out = append(out, p)

	// CRA: a manufacturer (Art. 3(13)) aware of an actively exploited
	// vulnerability or a severe incident (Art. 14), from 11 September 2026.
	cra := []Criterion{boolCriterion(prof.CRAManufacturer, "manufacturer", "Manufacturer of a product with digital elements", "CRA Art. 3(13), 14", "profile.craManufacturer",
		"The profile says the organization is a manufacturer of products with digital elements.", "The profile says the organization is not a manufacturer of products with digital elements.",
		hint("cra", "The reporting profile does not say whether the organization manufactures products with digital elements."))}
	c = Criterion{Key: "applicationDate", Label: "Reporting obligations apply", Basis: "CRA Art. 71(2)"}
	if inc.AwareAt.Before(craApplicationDate) {
		c.Result, c.Detail = criterionNotMet, "Article 14 applies from 11 September 2026; the organization became aware before that date."
	} else {
		c.Result, c.Detail = criterionMet, "Article 14 applies from 11 September 2026."
	}
	cra = append(cra, c)
	switch {
	case f.ActivelyExploited != nil && *f.ActivelyExploited:
		cra = append(cra, Criterion{Key: "event", Label: "Actively exploited vulnerability or severe incident", Basis: "CRA Art. 14(1)", Result: criterionMet,
			Detail: "Recorded as an actively exploited vulnerability in a product with digital elements."})
	case f.SevereProductIncident != nil && *f.SevereProductIncident:
		cra = append(cra, Criterion{Key: "event", Label: "Actively exploited vulnerability or severe incident", Basis: "CRA Art. 14(3), 14(5)", Result: criterionMet,
			Detail: "Recorded as a severe incident having an impact on the security of a product with digital elements."})
	case f.ActivelyExploited != nil && f.SevereProductIncident != nil:
		cra = append(cra, Criterion{Key: "event", Label: "Actively exploited vulnerability or severe incident", Basis: "CRA Art. 14", Result: criterionNotMet,
			Detail: "Recorded as neither an actively exploited vulnerability nor a severe incident affecting a product's security."})
	default:
		cra = append(cra, Criterion{Key: "event", Label: "Actively exploited vulnerability or severe incident", Basis: "CRA Art. 14", Result: criterionUnknown,
			Fact:   "facts.activelyExploitedVulnerability, facts.severeProductIncident",
			Detail: "Say whether a vulnerability in a product is actively exploited, or whether the incident severely affects the security of a product."})
	}
	out = append(out, proposal(RegimeCRA, cra))

	for i := range out {
		out[i].Confirmed = contains(inc.ConfirmedRegimes, out[i].Regime)
	}
	return out
}

// proposal turns criteria into applies (all met), does not apply (one not
// met) or undetermined (unknowns, none failing).
func proposal(regime string, cs []Criterion) RegimeProposal {
	p := RegimeProposal{Regime: regime, Name: RegimeNames[regime], Criteria: cs, MissingFacts: []string{}}
	failed, unknown := []string{}, []string{}
	for _, c := range cs {
		switch c.Result {
		case criterionNotMet:
			failed = append(failed, c.Label+" ("+c.Basis+")")
		case criterionUnknown:
			unknown = append(unknown, c.Label)
			if c.Fact != "" {
				p.MissingFacts = append(p.MissingFacts, strings.Split(c.Fact, ", ")...)
			}
		}
	}
	switch {
	case len(failed) > 0:
		p.Proposal = proposalDoesNotApply
		p.Reasoning = "Does not apply: not met: " + strings.Join(failed, "; ") + "."
	case len(unknown) > 0:
		p.Proposal = proposalUndetermined
		p.Reasoning = "Cannot tell yet: answer " + strings.Join(unknown, "; ") + "."
	default:
		p.Proposal = proposalApplies
		p.Reasoning = "Applies: every criterion is met."
	}
	sort.Strings(p.MissingFacts)
	return p
}

// DORAInput is the body of PUT /v1/incidents/{id}/dora-classification:
// the facts of each classification criterion of Delegated Regulation (EU)
// 2024/1772. Every field is optional; an unanswered criterion stays
// unknown and can keep the result undetermined.
type DORAInput struct {
	// Art. 6: criticality of services affected.
	CriticalFunctionsAffected   *bool `json:"criticalFunctionsAffected"`
	AuthorisedServicesAffected  *bool `json:"authorisedServicesAffected"`
	MaliciousUnauthorisedAccess *bool `json:"maliciousUnauthorisedAccess"`
	// Art. 9(5)(b): that access may result in data losses.
	AccessMayCauseDataLoss *bool `json:"accessMayCauseDataLoss"`
	// Art. 9(1): clients, financial counterparts and transactions.
	ClientsAffected              *int64   `json:"clientsAffected"`
	ClientsTotal                 *int64   `json:"clientsTotal"`
	CounterpartsAffected         *int64   `json:"counterpartsAffected"`
	CounterpartsTotal            *int64   `json:"counterpartsTotal"`
	TransactionsAffected         *int64   `json:"transactionsAffected"`
	DailyAverageTransactions     *int64   `json:"dailyAverageTransactions"`
	TransactionValueAffected     *float64 `json:"transactionValueAffected"`
	DailyAverageTransactionValue *float64 `json:"dailyAverageTransactionValue"`
	RelevantClientsAffected      *bool    `json:"relevantClientsAffected"`
	// Art. 9(2): reputational impact.
	MediaCoverage          *bool `json:"mediaCoverage"`
	RepetitiveComplaints   *bool `json:"repetitiveComplaints"`
	RegulatoryBreachLikely *bool `json:"regulatoryBreachLikely"`
	ClientLossLikely       *bool `json:"clientLossLikely"`
	// Art. 9(3): duration and service downtime, in hours.
	DurationHours *float64 `json:"durationHours"`
	DowntimeHours *float64 `json:"downtimeHours"`
	// Art. 9(4): geographical spread, ISO codes of the member states with
	// an impact.
	MemberStatesAffected []string `json:"memberStatesAffected"`
	// Art. 9(5)(a): an impact on the availability, authenticity, integrity
	// or confidentiality of data with an adverse effect on business
	// objectives or regulatory requirements.
	DataLossAdverseImpact *bool `json:"dataLossAdverseImpact"`
	// Art. 9(6): costs and losses in euros.
	EconomicImpactEUR *float64 `json:"economicImpactEur"`
	// ClassifiedAt is when the classification was made, if not now
	// (RFC 3339); the 4-hour clock starts there.
	ClassifiedAt *string `json:"classifiedAt"`
	Note         *string `json:"note"`
}

// DORAClassification is the stored result of the classification form.
type DORAClassification struct {
	Input            DORAInput   `json:"input"`
	Criteria         []Criterion `json:"criteria"`
	CriticalServices *bool       `json:"criticalServicesAffected"`
	ThresholdsMet    int         `json:"thresholdsMet"`
	// Major is the result: true, false, or null while undetermined.
	Major        *bool     `json:"major"`
	Reasoning    []string  `json:"reasoning"`
	ClassifiedAt time.Time `json:"classifiedAt"`
	// MajorSince is when the incident was first classified as major (the
	// start of the 4-hour clock); null while it is not major.
	MajorSince   *time.Time `json:"majorSince"`
	ClassifiedBy ActorRef   `json:"classifiedBy"`
}

// ClassifyDORA applies Delegated Regulation (EU) 2024/1772 Art. 8 and the
// materiality thresholds of Art. 9 to the answers.
func ClassifyDORA(in DORAInput) (criteria []Criterion, critical *bool, met int, major *bool, reasoning []string) {
	yes := func(b *bool) bool { return b != nil && *b }
	answered := func(bs ...*bool) bool {
		for _, b := range bs {
			if b == nil {
				return false
			}
		}
		return true
	}
	add := func(c Criterion) { criteria = append(criteria, c) }

	// Art. 6: critical services affected (a necessary condition, Art. 8(1)).
	cs := Criterion{Key: "criticalServices", Label: "Critical services affected", Basis: "RTS 2024/1772 Art. 6"}
	switch {
	case yes(in.CriticalFunctionsAffected) || yes(in.AuthorisedServicesAffected) || yes(in.MaliciousUnauthorisedAccess):
		cs.Result, cs.Detail, critical = criterionMet, "ICT services supporting critical or important functions, authorised financial services, or a successful malicious unauthorised access were affected.", Ptr(true)
	case answered(in.CriticalFunctionsAffected, in.AuthorisedServicesAffected, in.MaliciousUnauthorisedAccess):
		cs.Result, cs.Detail, critical = criterionNotMet, "No critical or important function, no authorised financial service and no malicious unauthorised access was affected.", Ptr(false)
	default:
		cs.Result, cs.Detail = criterionUnknown, "Answer whether critical or important functions, authorised financial services, or a malicious unauthorised access are concerned."
	}
	add(cs)

	// Art. 9(5)(b): malicious unauthorised access that may cause data losses.
	m := Criterion{Key: "maliciousAccessDataLoss", Label: "Malicious unauthorised access that may result in data losses", Basis: "RTS 2024/1772 Art. 9(5)(b)"}
	switch {
	case yes(in.MaliciousUnauthorisedAccess) && yes(in.AccessMayCauseDataLoss):
		m.Result, m.Detail = criterionMet, "A successful, malicious and unauthorised access to network and information systems that may result in data losses."
	case in.MaliciousUnauthorisedAccess != nil && !*in.MaliciousUnauthorisedAccess, in.AccessMayCauseDataLoss != nil && !*in.AccessMayCauseDataLoss:
		m.Result, m.Detail = criterionNotMet, "No such access, or it cannot result in data losses."
	default:
		m.Result, m.Detail = criterionUnknown, "Answer whether there was a successful malicious unauthorised access and whether it may result in data losses."
	}
	add(m)

	pct := func(a *int64, b *int64, limit float64) (bool, bool) {
		if a == nil || b == nil || *b <= 0 {
			return false, false
		}
		return float64(*a) > limit*float64(*b), true
	}
	pctF := func(a, b *float64, limit float64) (bool, bool) {
		if a == nil || b == nil || *b <= 0 {
			return false, false
		}
		return *a > limit**b, true
	}
	unknownCount := 0
	threshold := func(c Criterion, hit bool, known bool, why string) {
		switch {
		case hit:
			c.Result, c.Detail = criterionMet, why
			met++
		case known:
			c.Result, c.Detail = criterionNotMet, why
		default:
			c.Result, c.Detail = criterionUnknown, why
			unknownCount++
		}
		add(c)
	}

	// Art. 9(1).
	var hits []string
	known := false
	if h, k := pct(in.ClientsAffected, in.ClientsTotal, 0.10); k {
		known = true
		if h {
			hits = append(hits, "more than 10 % of the clients using the service")
		}
	}
	if in.ClientsAffected != nil {
		known = true
		if *in.ClientsAffected > 100000 {
			hits = append(hits, "more than 100 000 clients")
		}
	}
	if h, k := pct(in.CounterpartsAffected, in.CounterpartsTotal, 0.30); k {
		known = true
		if h {
			hits = append(hits, "more than 30 % of the financial counterparts")
		}
	}
	if h, k := pct(in.TransactionsAffected, in.DailyAverageTransactions, 0.10); k {
		known = true
		if h {
			hits = append(hits, "more than 10 % of the daily average number of transactions")
		}
	}
	if h, k := pctF(in.TransactionValueAffected, in.DailyAverageTransactionValue, 0.10); k {
		known = true
		if h {
			hits = append(hits, "more than 10 % of the daily average value of transactions")
		}
	}
	if in.RelevantClientsAffected != nil {
		known = true
		if *in.RelevantClientsAffected {
			hits = append(hits, "relevant clients or financial counterparts (Art. 1(3))")
		}
	}
	why := "Affected: " + strings.Join(hits, "; ") + "."
	if len(hits) == 0 {
		why = "Below 10 % / 100 000 clients, 30 % of counterparts and 10 % of transactions (number or value), no relevant client affected."
		if !known {
			why = "Give the affected and total numbers of clients, counterparts or transactions."
		}
	}
	threshold(Criterion{Key: "clients", Label: "Clients, financial counterparts and transactions", Basis: "RTS 2024/1772 Art. 9(1)"}, len(hits) > 0, known, why)

	// Art. 9(2).
	rep := []*bool{in.MediaCoverage, in.RepetitiveComplaints, in.RegulatoryBreachLikely, in.ClientLossLikely}
	anyRep := yes(in.MediaCoverage) || yes(in.RepetitiveComplaints) || yes(in.RegulatoryBreachLikely) || yes(in.ClientLossLikely)
	why = "Reflected in the media, repetitive complaints, regulatory requirements at risk, or clients likely to be lost."
	if !anyRep && answered(rep...) {
		why = "None of the reputational conditions is met."
	} else if !anyRep {
		why = "Answer the four reputational questions."
	}
	threshold(Criterion{Key: "reputational", Label: "Reputational impact", Basis: "RTS 2024/1772 Art. 9(2)"}, anyRep, answered(rep...), why)

	// Art. 9(3).
	long := in.DurationHours != nil && *in.DurationHours > 24
	down := in.DowntimeHours != nil && *in.DowntimeHours > 2
	why = fmt.Sprintf("Duration over 24 hours or downtime over 2 hours of ICT services supporting critical or important functions.")
	if !long && !down {
		why = "Give the duration and the service downtime in hours."
		if in.DurationHours != nil && in.DowntimeHours != nil {
			why = "Duration up to 24 hours and downtime up to 2 hours."
		}
	}
	threshold(Criterion{Key: "duration", Label: "Duration and service downtime", Basis: "RTS 2024/1772 Art. 9(3)"}, long || down,
		in.DurationHours != nil && in.DowntimeHours != nil, why)

	// Art. 9(4).
	states := len(in.MemberStatesAffected)
	threshold(Criterion{Key: "geographical", Label: "Geographical spread", Basis: "RTS 2024/1772 Art. 9(4)"}, states >= 2, in.MemberStatesAffected != nil,
		fmt.Sprintf("Impact in %d member state(s); the threshold is two or more.", states))

	// Art. 9(5)(a).
	why = "An impact on the availability, authenticity, integrity or confidentiality of data with an adverse effect on business objectives or regulatory requirements."
	if in.DataLossAdverseImpact == nil {
		why = "Answer whether data availability, authenticity, integrity or confidentiality was affected with an adverse effect."
	} else if !*in.DataLossAdverseImpact {
		why = "No data loss with an adverse effect."
	}
	threshold(Criterion{Key: "dataLosses", Label: "Data losses", Basis: "RTS 2024/1772 Art. 9(5)(a)"}, yes(in.DataLossAdverseImpact), in.DataLossAdverseImpact != nil, why)

	// Art. 9(6).
	why = "Give the costs and losses in euros (or an estimate)."
	if in.EconomicImpactEUR != nil {
		why = fmt.Sprintf("Costs and losses of EUR %.0f; the threshold is more than EUR 100 000.", *in.EconomicImpactEUR)
	}
	threshold(Criterion{Key: "economic", Label: "Economic impact", Basis: "RTS 2024/1772 Art. 9(6)"}, in.EconomicImpactEUR != nil && *in.EconomicImpactEUR > 100000,
		in.EconomicImpactEUR != nil, why)

	// Art. 8(1): critical services and (9(5)(b) or two other thresholds).
	switch {
	case critical != nil && !*critical:
		major = Ptr(false)
		reasoning = append(reasoning, "Not major: no critical service was affected, which Art. 8(1) requires.")
	case critical != nil && m.Result == criterionMet:
		major = Ptr(true)
		reasoning = append(reasoning, "Major: critical services were affected and a malicious unauthorised access may result in data losses (Art. 8(1)(a)).")
	case critical != nil && met >= 2:
		major = Ptr(true)
		reasoning = append(reasoning, fmt.Sprintf("Major: critical services were affected and %d materiality thresholds are met (Art. 8(1)(b) asks for two).", met))
	case critical != nil && met+unknownCount < 2 && m.Result != criterionUnknown:
		major = Ptr(false)
		reasoning = append(reasoning, fmt.Sprintf("Not major: critical services were affected but only %d materiality threshold(s) is met and no malicious access may result in data losses.", met))
	default:
		reasoning = append(reasoning, "Undetermined: answer the criteria marked unknown; the result could still be major.")
	}
	reasoning = append(reasoning, "Recurring incidents (Art. 8(2)) and the voluntary notification of significant cyber threats are not assessed here.")
	return criteria, critical, met, major, reasoning
}
