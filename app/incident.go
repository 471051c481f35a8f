package app

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Incident types, statuses and severities.
const (
	IncidentSecurity      = "security_incident"
	IncidentPersonalData  = "personal_data_breach"
	IncidentICT           = "ict_incident"
	IncidentVulnerability = "vulnerability"

	IncidentOpen      = "open"
	IncidentContained = "contained"
	IncidentResolved  = "resolved"
	IncidentClosed    = "closed"
)

// Incident enumerations.
var (
	IncidentTypes      = []string{IncidentSecurity, IncidentPersonalData, IncidentICT, IncidentVulnerability}
	IncidentStatuses   = []string{IncidentOpen, IncidentContained, IncidentResolved, IncidentClosed}
	IncidentSeverities = []string{"low", "medium", "high", "critical"}
	// IncidentLinkTypes are the resources an incident links to.
	IncidentLinkTypes = []string{EntityRisk, EntityFinding, EntityControl, EntityVendor, EntityEvidence}
	// TimelineKinds are the entries people add; the appliance adds status,
	// regimes, classification and report entries itself.
	TimelineKinds = []string{"note", "action", "communication", "decision", "evidence"}
)

// GDPR risk assessments (Art. 33(1), 34(1)).
const (
	RiskUnlikely = "unlikely"
	RiskPresent  = "risk"
	RiskHigh     = "high_risk"
)

// PersonalDataRisks lists the GDPR risk assessments.
var PersonalDataRisks = []string{RiskUnlikely, RiskPresent, RiskHigh}

// Incident events (DECISIONS: the groups still to build).
const (
	EventIncidentCreated             = "incident.created"
	EventIncidentStatusChanged       = "incident.status.changed"
	EventIncidentReportSent          = "incident.report.sent"
	EventIncidentDeadlineApproaching = "incident.deadline.approaching"
)

// Limits of incident input.
const (
	maxIncidentTitle   = 255
	maxIncidentText    = 20000
	maxIncidentItems   = 100
	maxIncidentItem    = 200
	maxIncidentLinks   = 200
	incidentClockSkew  = 5 * time.Minute
	maxTimelineContent = 10000
)

// IncidentFacts are the facts the reporting rules ask for. A nil field is
// unanswered: the rules then say so instead of guessing.
type IncidentFacts struct {
	// PersonalDataAffected: the breach destroyed, lost, altered, disclosed
	// or gave access to personal data (GDPR Art. 4(12)).
	PersonalDataAffected *bool `json:"personalDataAffected"`
	// SuspectedMalicious: suspected to be caused by unlawful or malicious
	// acts (NIS2 Art. 23(4)(a), CRA Art. 14(4)(a)).
	SuspectedMalicious *bool `json:"suspectedMalicious"`
	// SevereOperationalDisruption: caused or can cause severe operational
	// disruption of the services or financial loss (NIS2 Art. 23(3)(a)).
	SevereOperationalDisruption *bool `json:"severeOperationalDisruption"`
	// ConsiderableDamage: affected or can affect other persons by causing
	// considerable material or non-material damage (NIS2 Art. 23(3)(b)).
	ConsiderableDamage *bool `json:"considerableDamage"`
	// PersonalDataRisk: unlikely, risk or high_risk to the rights and
	// freedoms of natural persons (GDPR Art. 33(1), 34(1)).
	PersonalDataRisk *string `json:"personalDataRisk"`
	// DataSubjectsExemption: the Art. 34(3) condition that makes the
	// communication to data subjects unnecessary, in words.
	DataSubjectsExemption *string `json:"dataSubjectsExemption"`
	// ActivelyExploited: an actively exploited vulnerability in a product
	// with digital elements (CRA Art. 14(1)).
	ActivelyExploited *bool `json:"activelyExploitedVulnerability"`
	// SevereProductIncident: a severe incident having an impact on the
	// security of a product with digital elements (CRA Art. 14(3)).
	SevereProductIncident *bool   `json:"severeProductIncident"`
	ProductName           *string `json:"productName"`
	// CorrectiveMeasureAt: when a corrective or mitigating measure became
	// available (CRA Art. 14(2)(c)).
	CorrectiveMeasureAt *time.Time `json:"correctiveMeasureAvailableAt"`
	// IntermediateRequestedAt and IntermediateDueAt: a CSIRT's or
	// authority's request for an intermediate report (NIS2 Art. 23(4)(c)).
	IntermediateRequestedAt *time.Time `json:"nis2IntermediateRequestedAt"`
	IntermediateDueAt       *time.Time `json:"nis2IntermediateDueAt"`
	// Texts the drafts are filled from.
	RootCause              *string `json:"rootCause"`
	Impact                 *string `json:"impact"`
	MitigationMeasures     *string `json:"mitigationMeasures"`
	IndicatorsOfCompromise *string `json:"indicatorsOfCompromise"`
}

// Incident is a security incident, personal data breach, ICT incident or
// vulnerability, with its reporting clocks.
type Incident struct {
	ID          string     `json:"id"`
	Title       string     `json:"title"`
	Description string     `json:"description"`
	Type        string     `json:"type"`
	Status      string     `json:"status"`
	Severity    string     `json:"severity"`
	OccurredAt  *time.Time `json:"occurredAt"`
	DetectedAt  time.Time  `json:"detectedAt"`
	// AwareAt is when the organization became aware: most clocks start here.
	AwareAt     time.Time  `json:"awareAt"`
	ContainedAt *time.Time `json:"containedAt"`
	ResolvedAt  *time.Time `json:"resolvedAt"`
	ClosedAt    *time.Time `json:"closedAt"`

	AffectedServices     []string      `json:"affectedServices"`
	AffectedSystems      []string      `json:"affectedSystems"`
	DataCategories       []string      `json:"dataCategories"`
	Countries            []string      `json:"countries"`
	CrossBorder          bool          `json:"crossBorder"`
	DataSubjectsAffected *int64        `json:"dataSubjectsAffected"`
	RecordsAffected      *int64        `json:"recordsAffected"`
	ClientsAffected      *int64        `json:"clientsAffected"`
	Facts                IncidentFacts `json:"facts"`

	DORAClassification *DORAClassification `json:"doraClassification"`
	ConfirmedRegimes   []string            `json:"confirmedRegimes"`
	RegimesConfirmedAt *time.Time          `json:"regimesConfirmedAt"`
	RegimesConfirmedBy *ActorRef           `json:"regimesConfirmedBy"`

	LinkedRiskIDs     []string `json:"linkedRiskIds"`
	LinkedFindingIDs  []string `json:"linkedFindingIds"`
	LinkedControlIDs  []string `json:"linkedControlIds"`
	LinkedVendorIDs   []string `json:"linkedVendorIds"`
	LinkedEvidenceIDs []string `json:"linkedEvidenceIds"`

	ReportedBy ActorRef `json:"reportedBy"`
	// Reports are the clocks: one per report the confirmed regimes ask for.
	Reports []IncidentReport `json:"reports"`
	// NextDueAt is the earliest due time of a report not yet sent.
	NextDueAt *time.Time `json:"nextDueAt"`
	// Overdue is true when a report not yet sent is past its due time.
	Overdue   bool      `json:"overdue"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Links returns the incident's links by entity type.
func (inc *Incident) Links() map[string][]string {
	return map[string][]string{EntityRisk: inc.LinkedRiskIDs, EntityFinding: inc.LinkedFindingIDs, EntityControl: inc.LinkedControlIDs,
		EntityVendor: inc.LinkedVendorIDs, EntityEvidence: inc.LinkedEvidenceIDs}
}

// SetLinks sets the incident's links from a map by entity type.
func (inc *Incident) SetLinks(m map[string][]string) {
	get := func(k string) []string {
		if v := m[k]; v != nil {
			return v
		}
		return []string{}
	}
	inc.LinkedRiskIDs, inc.LinkedFindingIDs, inc.LinkedControlIDs = get(EntityRisk), get(EntityFinding), get(EntityControl)
	inc.LinkedVendorIDs, inc.LinkedEvidenceIDs = get(EntityVendor), get(EntityEvidence)
}

func (inc *Incident) normalize() {
	for _, p := range []*[]string{&inc.AffectedServices, &inc.AffectedSystems, &inc.DataCategories, &inc.Countries, &inc.ConfirmedRegimes,
		&inc.LinkedRiskIDs, &inc.LinkedFindingIDs, &inc.LinkedControlIDs, &inc.LinkedVendorIDs, &inc.LinkedEvidenceIDs} {
		if *p == nil {
			*p = []string{}
		}
	}
	if inc.Reports == nil {
		inc.Reports = []IncidentReport{}
	}
}

// IncidentFactsInput patches the facts: an absent field stays, null clears.
type IncidentFactsInput struct {
	PersonalDataAffected        Opt[bool]   `json:"personalDataAffected"`
	SuspectedMalicious          Opt[bool]   `json:"suspectedMalicious"`
	SevereOperationalDisruption Opt[bool]   `json:"severeOperationalDisruption"`
	ConsiderableDamage          Opt[bool]   `json:"considerableDamage"`
	PersonalDataRisk            Opt[string] `json:"personalDataRisk"`
	DataSubjectsExemption       Opt[string] `json:"dataSubjectsExemption"`
	ActivelyExploited           Opt[bool]   `json:"activelyExploitedVulnerability"`
	SevereProductIncident       Opt[bool]   `json:"severeProductIncident"`
	ProductName                 Opt[string] `json:"productName"`
	CorrectiveMeasureAt         Opt[string] `json:"correctiveMeasureAvailableAt"`
	IntermediateRequestedAt     Opt[string] `json:"nis2IntermediateRequestedAt"`
	IntermediateDueAt           Opt[string] `json:"nis2IntermediateDueAt"`
	RootCause                   Opt[string] `json:"rootCause"`
	Impact                      Opt[string] `json:"impact"`
	MitigationMeasures          Opt[string] `json:"mitigationMeasures"`
	IndicatorsOfCompromise      Opt[string] `json:"indicatorsOfCompromise"`
}

// IncidentInput is the body of POST and PATCH /v1/incidents. Times are
// RFC 3339 with an offset; they are stored in UTC.
type IncidentInput struct {
	Title                *string             `json:"title"`
	Description          *string             `json:"description"`
	Type                 *string             `json:"type"`
	Severity             *string             `json:"severity"`
	OccurredAt           Opt[string]         `json:"occurredAt"`
	DetectedAt           *string             `json:"detectedAt"`
	AwareAt              *string             `json:"awareAt"`
	AffectedServices     *[]string           `json:"affectedServices"`
	AffectedSystems      *[]string           `json:"affectedSystems"`
	DataCategories       *[]string           `json:"dataCategories"`
	Countries            *[]string           `json:"countries"`
	CrossBorder          *bool               `json:"crossBorder"`
	DataSubjectsAffected Opt[int64]          `json:"dataSubjectsAffected"`
	RecordsAffected      Opt[int64]          `json:"recordsAffected"`
	ClientsAffected      Opt[int64]          `json:"clientsAffected"`
	Facts                *IncidentFactsInput `json:"facts"`
	LinkedRiskIDs        Opt[[]string]       `json:"linkedRiskIds"`
	LinkedFindingIDs     Opt[[]string]       `json:"linkedFindingIds"`
	LinkedControlIDs     Opt[[]string]       `json:"linkedControlIds"`
	LinkedVendorIDs      Opt[[]string]       `json:"linkedVendorIds"`
	LinkedEvidenceIDs    Opt[[]string]       `json:"linkedEvidenceIds"`
}

func (in *IncidentInput) links() map[string]Opt[[]string] {
	return map[string]Opt[[]string]{EntityRisk: in.LinkedRiskIDs, EntityFinding: in.LinkedFindingIDs, EntityControl: in.LinkedControlIDs,
		EntityVendor: in.LinkedVendorIDs, EntityEvidence: in.LinkedEvidenceIDs}
}

// linkField is the JSON field of a link type.
var linkField = map[string]string{EntityRisk: "linkedRiskIds", EntityFinding: "linkedFindingIds", EntityControl: "linkedControlIds",
	EntityVendor: "linkedVendorIds", EntityEvidence: "linkedEvidenceIds"}

// IncidentFilter holds the incident list's filters; they combine with AND.
type IncidentFilter struct {
	Status string
	Type   string
	Regime string
	// Overdue: true lists incidents with a report past due and not sent,
	// false those without.
	Overdue *bool
	// ReportedBy narrows to incidents a person or key reported (employees
	// and contractors see only their own).
	ReportedBy string
	Now        time.Time
	Page       Page
}

// IncidentStatusInput is the body of POST /v1/incidents/{id}/status.
type IncidentStatusInput struct {
	Status *string `json:"status"`
	// At is when the change happened, if not now (RFC 3339).
	At   *string `json:"at"`
	Note *string `json:"note"`
}

// TimelineEntry is one entry of an incident's timeline.
type TimelineEntry struct {
	ID         string    `json:"id"`
	IncidentID string    `json:"incidentId"`
	OccurredAt time.Time `json:"occurredAt"`
	Kind       string    `json:"kind"`
	Content    string    `json:"content"`
	Author     ActorRef  `json:"author"`
	CreatedAt  time.Time `json:"createdAt"`
}

// TimelineInput is the body of POST /v1/incidents/{id}/timeline.
type TimelineInput struct {
	Kind       *string `json:"kind"`
	Content    *string `json:"content"`
	OccurredAt *string `json:"occurredAt"`
}

// RegimesInput is the body of POST /v1/incidents/{id}/regimes: the regimes
// a person confirms apply (replacing any earlier confirmation).
type RegimesInput struct {
	Regimes *[]string `json:"regimes"`
	Note    *string   `json:"note"`
}

// IncidentStore persists incidents, their links, timeline, reports and
// versions, and the organization's reporting profile.
type IncidentStore interface {
	CreateIncident(ctx context.Context, orgID string, inc *Incident) error
	UpdateIncident(ctx context.Context, orgID string, inc *Incident) error
	GetIncident(ctx context.Context, orgID, id string) (*Incident, error)
	ListIncidents(ctx context.Context, orgID string, f IncidentFilter) (List[Incident], error)
	// OpenIncidentIDs lists the ids of the incidents that are not closed.
	OpenIncidentIDs(ctx context.Context, orgID string) ([]string, error)

	AddTimelineEntry(ctx context.Context, orgID string, e *TimelineEntry) error
	ListTimeline(ctx context.Context, orgID, incidentID string, p Page) (List[TimelineEntry], error)

	GetIncidentProfile(ctx context.Context, orgID string) (*IncidentProfile, error)
	SaveIncidentProfile(ctx context.Context, orgID string, p *IncidentProfile) error

	// ListIncidentReports returns the reports of the given incidents.
	ListIncidentReports(ctx context.Context, orgID string, incidentIDs []string) ([]IncidentReport, error)
	GetIncidentReport(ctx context.Context, orgID, incidentID, id string) (*IncidentReport, error)
	CreateIncidentReport(ctx context.Context, orgID string, r *IncidentReport) error
	UpdateIncidentReport(ctx context.Context, orgID string, r *IncidentReport) error
	AddReportVersion(ctx context.Context, orgID string, v *ReportVersion) error
	ListReportVersions(ctx context.Context, orgID, reportID string) ([]ReportVersion, error)
	// DueIncidentReports returns reports not yet sent whose due time is at
	// or before until.
	DueIncidentReports(ctx context.Context, orgID string, until time.Time) ([]IncidentReport, error)
	// RecordReminder stores a reminder; it reports false when one for the
	// report and threshold exists already.
	RecordReminder(ctx context.Context, orgID string, rm ReportReminder) (bool, error)
	// UpcomingIncidentReports lists the reports not yet sent that have a
	// due time, soonest first, with their incidents' titles.
	UpcomingIncidentReports(ctx context.Context, orgID string, limit int) ([]IncidentDeadline, int, error)
}

// ReportReminder is a reminder the scheduler sent for a report.
type ReportReminder struct {
	ReportID  string
	Threshold string
	DueAt     time.Time
	SentAt    time.Time
	Emitted   bool
}

// IncidentDeadline is a report not yet sent with its due time, for the
// dashboard.
type IncidentDeadline struct {
	IncidentID    string    `json:"incidentId"`
	IncidentTitle string    `json:"incidentTitle"`
	ReportID      string    `json:"reportId"`
	Regime        string    `json:"regime"`
	Kind          string    `json:"kind"`
	Title         string    `json:"title"`
	Status        string    `json:"status"`
	DueAt         time.Time `json:"dueAt"`
	Overdue       bool      `json:"overdue"`
}

// parseInstant reads an RFC 3339 time with an offset (a bare date is
// refused: a clock needs the time of day) into UTC at storage precision.
func parseInstant(ve *ValidationError, field, s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		ve.Add(field, CodeInvalid, s, field+" must be an RFC 3339 time with an offset, such as 2026-01-15T10:00:00+01:00")
		return time.Time{}, false
	}
	return t.UTC().Truncate(time.Millisecond), true
}

// cleanList trims, drops blanks and duplicates, and bounds a list of short texts.
func cleanList(ve *ValidationError, field string, in []string) []string {
	out := cleanIDs(in)
	if len(out) > maxIncidentItems {
		ve.Add(field, CodeTooLong, len(out), fmt.Sprintf("%s may list at most %d items", field, maxIncidentItems))
	}
	for _, s := range out {
		maxLen(ve, field, s, maxIncidentItem)
	}
	return out
}

func optCount(ve *ValidationError, field string, dst **int64, src Opt[int64]) {
	if !src.Set {
		return
	}
	*dst = nil
	if src.Null {
		return
	}
	if src.Value < 0 {
		ve.Add(field, CodeInvalid, src.Value, field+" must not be negative")
		return
	}
	*dst = Ptr(src.Value)
}

func optBool(dst **bool, src Opt[bool]) {
	if src.Set {
		*dst = nil
		if !src.Null {
			*dst = Ptr(src.Value)
		}
	}
}

func optInstant(ve *ValidationError, field string, dst **time.Time, src Opt[string]) {
	if !src.Set {
		return
	}
	*dst = nil
	if src.Null || strings.TrimSpace(src.Value) == "" {
		return
	}
	if t, ok := parseInstant(ve, field, src.Value); ok {
		*dst = &t
	}
}

// apply validates the input and copies it onto inc.
func (in *IncidentInput) apply(inc *Incident, now time.Time, ve *ValidationError) {
	if in.Title != nil {
		inc.Title = strings.TrimSpace(*in.Title)
		if inc.Title == "" {
			ve.Add("title", CodeRequired, nil, "title must not be empty")
		}
		maxLen(ve, "title", inc.Title, maxIncidentTitle)
	}
	if in.Description != nil {
		inc.Description = strings.TrimSpace(*in.Description)
		maxLen(ve, "description", inc.Description, maxIncidentText)
	}
	if in.Type != nil {
		inc.Type = normEnum(in.Type)
		enumIn(ve, "type", inc.Type, IncidentTypes)
	}
	if in.Severity != nil {
		inc.Severity = normEnum(in.Severity)
		enumIn(ve, "severity", inc.Severity, IncidentSeverities)
	}
	future := func(field string, t *time.Time) {
		if t != nil && t.After(now.Add(incidentClockSkew)) {
			ve.Add(field, CodeInvalid, t.Format(time.RFC3339), field+" must not be in the future")
		}
	}
	if in.AwareAt != nil {
		if t, ok := parseInstant(ve, "awareAt", *in.AwareAt); ok {
			inc.AwareAt = t
			future("awareAt", &t)
		}
	}
	if in.DetectedAt != nil {
		if t, ok := parseInstant(ve, "detectedAt", *in.DetectedAt); ok {
			inc.DetectedAt = t
			future("detectedAt", &t)
		}
	}
	optInstant(ve, "occurredAt", &inc.OccurredAt, in.OccurredAt)
	future("occurredAt", inc.OccurredAt)
	if !inc.AwareAt.IsZero() && !inc.DetectedAt.IsZero() && inc.AwareAt.Before(inc.DetectedAt) {
		ve.Add("awareAt", CodeInvalid, inc.AwareAt.Format(time.RFC3339), "awareAt must not be before detectedAt")
	}
	if inc.OccurredAt != nil && !inc.DetectedAt.IsZero() && inc.OccurredAt.After(inc.DetectedAt) {
		ve.Add("occurredAt", CodeInvalid, inc.OccurredAt.Format(time.RFC3339), "occurredAt must not be after detectedAt")
	}
	if in.AffectedServices != nil {
		inc.AffectedServices = cleanList(ve, "affectedServices", *in.AffectedServices)
	}
	if in.AffectedSystems != nil {
		inc.AffectedSystems = cleanList(ve, "affectedSystems", *in.AffectedSystems)
	}
	if in.DataCategories != nil {
		inc.DataCategories = cleanList(ve, "dataCategories", *in.DataCategories)
	}
	if in.Countries != nil {
		cs := cleanIDs(*in.Countries)
		for i, c := range cs {
			cs[i] = strings.ToUpper(c)
			if !ValidCountry(cs[i]) {
				ve.Add("countries", CodeInvalid, c, "countries must be ISO 3166-1 alpha-2 codes")
			}
		}
		inc.Countries = cleanIDs(cs)
	}
	if in.CrossBorder != nil {
		inc.CrossBorder = *in.CrossBorder
	}
	optCount(ve, "dataSubjectsAffected", &inc.DataSubjectsAffected, in.DataSubjectsAffected)
	optCount(ve, "recordsAffected", &inc.RecordsAffected, in.RecordsAffected)
	optCount(ve, "clientsAffected", &inc.ClientsAffected, in.ClientsAffected)
	if f := in.Facts; f != nil {
		x := &inc.Facts
		optBool(&x.PersonalDataAffected, f.PersonalDataAffected)
		optBool(&x.SuspectedMalicious, f.SuspectedMalicious)
		optBool(&x.SevereOperationalDisruption, f.SevereOperationalDisruption)
		optBool(&x.ConsiderableDamage, f.ConsiderableDamage)
		optBool(&x.ActivelyExploited, f.ActivelyExploited)
		optBool(&x.SevereProductIncident, f.SevereProductIncident)
		if f.PersonalDataRisk.Set {
			x.PersonalDataRisk = nil
			if !f.PersonalDataRisk.Null && strings.TrimSpace(f.PersonalDataRisk.Value) != "" {
				x.PersonalDataRisk = Ptr(normEnum(&f.PersonalDataRisk.Value))
				oneOf(ve, "facts.personalDataRisk", *x.PersonalDataRisk, PersonalDataRisks)
			}
		}
		optText(ve, &x.DataSubjectsExemption, f.DataSubjectsExemption, "facts.dataSubjectsExemption", maxIncidentText)
		optText(ve, &x.ProductName, f.ProductName, "facts.productName", maxIncidentTitle)
		optText(ve, &x.RootCause, f.RootCause, "facts.rootCause", maxIncidentText)
		optText(ve, &x.Impact, f.Impact, "facts.impact", maxIncidentText)
		optText(ve, &x.MitigationMeasures, f.MitigationMeasures, "facts.mitigationMeasures", maxIncidentText)
		optText(ve, &x.IndicatorsOfCompromise, f.IndicatorsOfCompromise, "facts.indicatorsOfCompromise", maxIncidentText)
		optInstant(ve, "facts.correctiveMeasureAvailableAt", &x.CorrectiveMeasureAt, f.CorrectiveMeasureAt)
		future("facts.correctiveMeasureAvailableAt", x.CorrectiveMeasureAt)
		optInstant(ve, "facts.nis2IntermediateRequestedAt", &x.IntermediateRequestedAt, f.IntermediateRequestedAt)
		future("facts.nis2IntermediateRequestedAt", x.IntermediateRequestedAt)
		optInstant(ve, "facts.nis2IntermediateDueAt", &x.IntermediateDueAt, f.IntermediateDueAt)
		if x.IntermediateDueAt != nil && x.IntermediateRequestedAt == nil {
			ve.Add("facts.nis2IntermediateDueAt", CodeInvalid, nil, "facts.nis2IntermediateDueAt needs facts.nis2IntermediateRequestedAt")
		}
	}
	for typ, o := range in.links() {
		if !o.Set {
			continue
		}
		ids := []string{}
		if !o.Null {
			ids = cleanIDs(o.Value)
		}
		if len(ids) > maxIncidentLinks {
			ve.Add(linkField[typ], CodeTooLong, len(ids), fmt.Sprintf("%s may list at most %d ids", linkField[typ], maxIncidentLinks))
		}
		m := inc.Links()
		m[typ] = ids
		inc.SetLinks(m)
	}
}

// checkIncidentLinks validates the link ids the input set: each must name
// a resource of the organization (that the principal may see).
func (a *App) checkIncidentLinks(ctx context.Context, p *Principal, inc *Incident, in *IncidentInput, ve *ValidationError) error {
	assignee := ""
	if p.SeesOnlyAssigned() {
		assignee = p.UserID
	}
	links := inc.Links()
	for typ, o := range in.links() {
		if !o.Set || len(links[typ]) > maxIncidentLinks {
			continue
		}
		var missing []string
		for _, id := range links[typ] {
			ok := false
			if !p.SeesOnlyAssigned() || assignee != "" {
				var err error
				if ok, err = a.store.EntityExists(ctx, p.OrgID, typ, id, assignee); err != nil {
					return fmt.Errorf("check %s %s: %w", typ, id, err)
				}
			}
			if !ok {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			f := linkField[typ]
			ve.Add(f, CodeUnknownReference, missing, f+" must name "+typ+" ids of this organization; unknown: "+strings.Join(missing, ", "))
		}
	}
	return nil
}

// findIncident loads an incident the principal may see; an unknown or
// hidden id is ErrNotFound before any input is judged.
func (a *App) findIncident(ctx context.Context, p *Principal, id string) (*Incident, error) {
	inc, err := a.store.GetIncident(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if err := visibleIncident(p, inc); err != nil {
		return nil, err
	}
	return inc, nil
}

// visibleIncident hides from employees and contractors the incidents they
// did not report.
func visibleIncident(p *Principal, inc *Incident) error {
	if p.SeesOnlyAssigned() && (inc.ReportedBy.Type != p.ActorType() || inc.ReportedBy.ID != p.ActorID()) {
		return ErrNotFound
	}
	return nil
}

// CreateIncident records an incident. Everyone but auditors may report
// one; its clocks start once a person confirms which regimes apply.
func (a *App) CreateIncident(ctx context.Context, in IncidentInput) (*Incident, error) {
	p, err := authorize(ctx, CapSelfService)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	inc := &Incident{ID: NewID(PrefixIncident), Status: IncidentOpen, Severity: "medium",
		ReportedBy: ActorRef{Type: p.ActorType(), ID: p.ActorID()}, CreatedAt: now, UpdatedAt: now}
	inc.normalize()
	ve := NewValidationError()
	if trimmed(in.Title) == "" {
		ve.Add("title", CodeRequired, nil, "title is required")
	}
	if trimmed(in.Type) == "" {
		ve.Add("type", CodeRequired, nil, "type is required: one of "+strings.Join(IncidentTypes, ", "))
	}
	if trimmed(in.AwareAt) == "" {
		ve.Add("awareAt", CodeRequired, nil, "awareAt is required: when the organization became aware of the incident (RFC 3339)")
	}
	in.apply(inc, now, ve)
	if trimmed(in.DetectedAt) == "" && !inc.AwareAt.IsZero() {
		inc.DetectedAt = inc.AwareAt
	}
	var out *Incident
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.checkIncidentLinks(ctx, p, inc, &in, ve); err != nil {
			return err
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.CreateIncident(ctx, p.OrgID, inc); err != nil {
			return err
		}
		if err := a.timeline(ctx, p, inc.ID, now, "reported", "Incident reported: "+inc.Title+" ("+strings.ReplaceAll(inc.Type, "_", " ")+
			"), aware since "+inc.AwareAt.Format(time.RFC3339)+"."); err != nil {
			return err
		}
		out = inc
		return a.record(ctx, Mutation{Action: "created", ResourceType: "incident", ResourceID: inc.ID, After: inc,
			Events: []Event{{Type: EventIncidentCreated, Data: inc}}})
	})
	if err != nil {
		return nil, fmt.Errorf("create incident: %w", err)
	}
	return out, nil
}

// UpdateIncident applies a patch (owners and admins) and recomputes the
// clocks from the changed facts.
func (a *App) UpdateIncident(ctx context.Context, id string, in IncidentInput) (*Incident, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	return a.changeIncident(ctx, p, id, "update incident %s", func(ctx context.Context, before *Incident) (*Incident, *Mutation, error) {
		inc := *before
		inc.SetLinks(before.Links())
		now := a.Now()
		ve := NewValidationError()
		in.apply(&inc, now, ve)
		if err := a.checkIncidentLinks(ctx, p, &inc, &in, ve); err != nil {
			return nil, nil, err
		}
		if err := ve.Err(); err != nil {
			return nil, nil, err
		}
		inc.UpdatedAt = now
		if err := a.store.UpdateIncident(ctx, p.OrgID, &inc); err != nil {
			return nil, nil, err
		}
		return &inc, &Mutation{Action: "updated"}, nil
	})
}

// SetIncidentStatus moves an incident to another status. Employees and
// contractors may move incidents they reported between open, contained and
// resolved; closing (and reopening a closed incident) is for owners and
// admins.
func (a *App) SetIncidentStatus(ctx context.Context, id string, in IncidentStatusInput) (*Incident, error) {
	p, err := authorize(ctx, CapSelfService)
	if err != nil {
		return nil, err
	}
	if _, err := a.findIncident(ctx, p, id); err != nil {
		return nil, err
	}
	ve := NewValidationError()
	status := ""
	if trimmed(in.Status) == "" {
		ve.Add("status", CodeRequired, nil, "status is required: one of "+strings.Join(IncidentStatuses, ", "))
	} else {
		status = normEnum(in.Status)
		oneOf(ve, "status", status, IncidentStatuses)
	}
	now := a.Now()
	at := now
	if trimmed(in.At) != "" {
		if t, ok := parseInstant(ve, "at", *in.At); ok {
			at = t
			if t.After(now.Add(incidentClockSkew)) {
				ve.Add("at", CodeInvalid, *in.At, "at must not be in the future")
			}
		}
	}
	note := trimmed(in.Note)
	maxLen(ve, "note", note, maxTimelineContent)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	return a.changeIncident(ctx, p, id, "set incident %s status", func(ctx context.Context, before *Incident) (*Incident, *Mutation, error) {
		if err := visibleIncident(p, before); err != nil {
			return nil, nil, err
		}
		if (status == IncidentClosed || before.Status == IncidentClosed) && !p.Can(CapManage) {
			return nil, nil, Errorf(ErrForbidden, "only owners and admins may close an incident or reopen a closed one")
		}
		if at.Before(before.AwareAt) {
			return nil, nil, Invalid("at", CodeInvalid, at.Format(time.RFC3339), "at must not be before the incident's awareAt")
		}
		inc := *before
		inc.SetLinks(before.Links())
		if status == before.Status {
			return nil, nil, nil
		}
		inc.Status = status
		switch status {
		case IncidentOpen:
			inc.ContainedAt, inc.ResolvedAt, inc.ClosedAt = nil, nil, nil
		case IncidentContained:
			if inc.ContainedAt == nil {
				inc.ContainedAt = &at
			}
			inc.ResolvedAt, inc.ClosedAt = nil, nil
		case IncidentResolved:
			if inc.ResolvedAt == nil {
				inc.ResolvedAt = &at
			}
			inc.ClosedAt = nil
		case IncidentClosed:
			if inc.ResolvedAt == nil {
				inc.ResolvedAt = &at
			}
			inc.ClosedAt = &at
		}
		inc.UpdatedAt = now
		if err := a.store.UpdateIncident(ctx, p.OrgID, &inc); err != nil {
			return nil, nil, err
		}
		text := "Status changed from " + before.Status + " to " + status + "."
		if note != "" {
			text += " " + note
		}
		if err := a.timeline(ctx, p, id, at, "status", text); err != nil {
			return nil, nil, err
		}
		return &inc, &Mutation{Action: "status_changed",
			Events: []Event{{Type: EventIncidentStatusChanged, Data: map[string]any{"incidentId": id, "previousStatus": before.Status,
				"status": status, "changedAt": at}}}}, nil
	})
}

// GetIncident returns an incident with its clocks.
func (a *App) GetIncident(ctx context.Context, id string) (*Incident, error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return nil, err
	}
	inc, err := a.store.GetIncident(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if err := visibleIncident(p, inc); err != nil {
		return nil, err
	}
	return a.withClocks(ctx, p, inc)
}

// changeIncident runs one change of an incident in a transaction: change
// gets the incident as stored, writes the new state (and any timeline entry)
// and returns it with its audit mutation, or nil when nothing changed; the
// mutation is recorded with the incident's before and after, the reports
// are re-derived from the new facts, and the incident comes back with its
// clocks. what names the change in errors ("update incident %s").
func (a *App) changeIncident(ctx context.Context, p *Principal, id, what string,
	change func(ctx context.Context, before *Incident) (*Incident, *Mutation, error)) (*Incident, error) {
	var out *Incident
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetIncident(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		inc, m, err := change(ctx, before)
		if err != nil {
			return err
		}
		if inc == nil {
			out = before
			return nil
		}
		m.ResourceType, m.ResourceID, m.Before, m.After = "incident", id, before, inc
		if err := a.record(ctx, *m); err != nil {
			return err
		}
		if err := a.syncReports(ctx, p.OrgID, inc); err != nil {
			return err
		}
		out = inc
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf(what+": %w", id, err)
	}
	return a.withClocks(ctx, p, out)
}

// withClocks attaches the reports and the derived deadline fields.
func (a *App) withClocks(ctx context.Context, p *Principal, inc *Incident) (*Incident, error) {
	rs, err := a.store.ListIncidentReports(ctx, p.OrgID, []string{inc.ID})
	if err != nil {
		return nil, err
	}
	attachClocks([]*Incident{inc}, rs, a.Now())
	return inc, nil
}

// attachClocks puts each incident's reports on it and derives nextDueAt
// and overdue at now.
func attachClocks(incs []*Incident, reports []IncidentReport, now time.Time) {
	by := map[string][]IncidentReport{}
	for _, r := range reports {
		r.derive(now)
		by[r.IncidentID] = append(by[r.IncidentID], r)
	}
	for _, inc := range incs {
		inc.Reports = by[inc.ID]
		inc.NextDueAt, inc.Overdue = nil, false
		for _, r := range inc.Reports {
			if r.Overdue {
				inc.Overdue = true
			}
			if r.open() && r.DueAt != nil && (inc.NextDueAt == nil || r.DueAt.Before(*inc.NextDueAt)) {
				inc.NextDueAt = Ptr(*r.DueAt)
			}
		}
		inc.normalize()
	}
}

// ListIncidents lists incidents matching every filter, newest first.
func (a *App) ListIncidents(ctx context.Context, f IncidentFilter) (List[Incident], error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return List[Incident]{}, err
	}
	ve := NewValidationError()
	f.Status, f.Type, f.Regime = strings.ToLower(f.Status), strings.ToLower(f.Type), strings.ToLower(f.Regime)
	oneOf(ve, "status", f.Status, IncidentStatuses)
	oneOf(ve, "type", f.Type, IncidentTypes)
	oneOf(ve, "regime", f.Regime, IncidentRegimes)
	if err := ve.Err(); err != nil {
		return List[Incident]{}, err
	}
	if p.SeesOnlyAssigned() {
		f.ReportedBy = p.ActorID()
	}
	f.Now = a.Now()
	l, err := a.store.ListIncidents(ctx, p.OrgID, f)
	if err != nil {
		return l, fmt.Errorf("list incidents: %w", err)
	}
	ids := make([]string, len(l.Items))
	ptrs := make([]*Incident, len(l.Items))
	for i := range l.Items {
		ids[i], ptrs[i] = l.Items[i].ID, &l.Items[i]
	}
	rs, err := a.store.ListIncidentReports(ctx, p.OrgID, ids)
	if err != nil {
		return l, fmt.Errorf("list incidents: %w", err)
	}
	attachClocks(ptrs, rs, f.Now)
	return l, nil
}

// timeline appends an entry the appliance writes itself.
func (a *App) timeline(ctx context.Context, p *Principal, incidentID string, at time.Time, kind, content string) error {
	return a.store.AddTimelineEntry(ctx, p.OrgID, &TimelineEntry{ID: NewID(PrefixIncidentTimeline), IncidentID: incidentID, OccurredAt: at,
		Kind: kind, Content: content, Author: ActorRef{Type: p.ActorType(), ID: p.ActorID()}, CreatedAt: a.Now()})
}

// AddTimelineEntry adds an entry to an incident's timeline. Entries are
// never changed or removed.
func (a *App) AddTimelineEntry(ctx context.Context, incidentID string, in TimelineInput) (*TimelineEntry, error) {
	p, err := authorize(ctx, CapSelfService)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	e := &TimelineEntry{ID: NewID(PrefixIncidentTimeline), IncidentID: incidentID, OccurredAt: now, Kind: "note",
		Author: ActorRef{Type: p.ActorType(), ID: p.ActorID()}, CreatedAt: now}
	ve := NewValidationError()
	if in.Kind != nil && strings.TrimSpace(*in.Kind) != "" {
		e.Kind = normEnum(in.Kind)
		oneOf(ve, "kind", e.Kind, TimelineKinds)
	}
	e.Content = trimmed(in.Content)
	if e.Content == "" {
		ve.Add("content", CodeRequired, nil, "content is required")
	}
	maxLen(ve, "content", e.Content, maxTimelineContent)
	if trimmed(in.OccurredAt) != "" {
		if t, ok := parseInstant(ve, "occurredAt", *in.OccurredAt); ok {
			e.OccurredAt = t
			if t.After(now.Add(incidentClockSkew)) {
				ve.Add("occurredAt", CodeInvalid, *in.OccurredAt, "occurredAt must not be in the future")
			}
		}
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		inc, err := a.store.GetIncident(ctx, p.OrgID, incidentID)
		if err != nil {
			return err
		}
		if err := visibleIncident(p, inc); err != nil {
			return err
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.AddTimelineEntry(ctx, p.OrgID, e); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "timeline_added", ResourceType: "incident", ResourceID: incidentID, After: map[string]any{"timelineEntry": e}})
	})
	if err != nil {
		return nil, fmt.Errorf("add timeline entry to incident %s: %w", incidentID, err)
	}
	return e, nil
}

// ListTimeline lists an incident's timeline in the order things happened.
func (a *App) ListTimeline(ctx context.Context, incidentID string, pg Page) (List[TimelineEntry], error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return List[TimelineEntry]{}, err
	}
	inc, err := a.store.GetIncident(ctx, p.OrgID, incidentID)
	if err != nil {
		return List[TimelineEntry]{}, err
	}
	if err := visibleIncident(p, inc); err != nil {
		return List[TimelineEntry]{}, err
	}
	return a.store.ListTimeline(ctx, p.OrgID, incidentID, pg)
}

// IncidentApplicability proposes which regimes apply to an incident, with
// the criteria used and the facts still missing.
func (a *App) IncidentApplicability(ctx context.Context, id string) ([]RegimeProposal, error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return nil, err
	}
	inc, err := a.store.GetIncident(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if err := visibleIncident(p, inc); err != nil {
		return nil, err
	}
	prof, err := a.incidentProfile(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	enabled, err := a.enabledSlugs(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	return ProposeRegimes(inc, prof, enabled), nil
}

// enabledSlugs returns which of the regimes' frameworks are enabled.
func (a *App) enabledSlugs(ctx context.Context, orgID string) (map[string]bool, error) {
	en, err := a.store.EnabledFrameworks(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("enabled frameworks: %w", err)
	}
	out := map[string]bool{}
	for _, slug := range IncidentRegimes {
		if _, ok := en[FrameworkIDFor(slug)]; ok {
			out[slug] = true
		}
	}
	return out, nil
}

// ConfirmIncidentRegimes stores the regimes a person confirms apply and
// starts (or stops) their clocks.
func (a *App) ConfirmIncidentRegimes(ctx context.Context, id string, in RegimesInput) (*Incident, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	if _, err := a.findIncident(ctx, p, id); err != nil {
		return nil, err
	}
	ve := NewValidationError()
	regimes := []string{}
	if in.Regimes == nil {
		ve.Add("regimes", CodeRequired, nil, "regimes is required: a list of "+strings.Join(IncidentRegimes, ", ")+" (empty when none applies)")
	} else {
		for _, r := range cleanIDs(*in.Regimes) {
			r = strings.ToLower(r)
			if !contains(IncidentRegimes, r) {
				ve.Add("regimes", CodeInvalidEnum, r, "regimes must list values of "+strings.Join(IncidentRegimes, ", "))
				continue
			}
			if !contains(regimes, r) {
				regimes = append(regimes, r)
			}
		}
	}
	note := trimmed(in.Note)
	maxLen(ve, "note", note, maxTimelineContent)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	return a.changeIncident(ctx, p, id, "confirm regimes of incident %s", func(ctx context.Context, before *Incident) (*Incident, *Mutation, error) {
		prof, err := a.incidentProfile(ctx, p.OrgID)
		if err != nil {
			return nil, nil, err
		}
		enabled, err := a.enabledSlugs(ctx, p.OrgID)
		if err != nil {
			return nil, nil, err
		}
		now := a.Now()
		inc := *before
		inc.SetLinks(before.Links())
		ordered := []string{}
		for _, r := range IncidentRegimes {
			if contains(regimes, r) {
				ordered = append(ordered, r)
			}
		}
		inc.ConfirmedRegimes = ordered
		inc.RegimesConfirmedAt, inc.RegimesConfirmedBy = &now, &ActorRef{Type: p.ActorType(), ID: p.ActorID()}
		inc.UpdatedAt = now
		if err := a.store.UpdateIncident(ctx, p.OrgID, &inc); err != nil {
			return nil, nil, err
		}
		// The timeline keeps what the appliance proposed when the person decided.
		var parts []string
		for _, pr := range ProposeRegimes(before, prof, enabled) {
			parts = append(parts, strings.ToUpper(pr.Regime)+" "+strings.ReplaceAll(pr.Proposal, "_", " "))
		}
		text := "Regimes confirmed: " + strings.ToUpper(strings.Join(ordered, ", ")) + "."
		if len(ordered) == 0 {
			text = "Confirmed that no reporting regime applies."
		}
		text += " The appliance proposed: " + strings.Join(parts, "; ") + "."
		if note != "" {
			text += " " + note
		}
		if err := a.timeline(ctx, p, id, now, "regimes", text); err != nil {
			return nil, nil, err
		}
		return &inc, &Mutation{Action: "regimes_confirmed"}, nil
	})
}

// ClassifyIncidentDORA records the DORA classification form and its
// result; a major incident starts the 4-hour clock.
func (a *App) ClassifyIncidentDORA(ctx context.Context, id string, in DORAInput) (*Incident, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	if _, err := a.findIncident(ctx, p, id); err != nil {
		return nil, err
	}
	ve := NewValidationError()
	now := a.Now()
	at := now
	if trimmed(in.ClassifiedAt) != "" {
		if t, ok := parseInstant(ve, "classifiedAt", *in.ClassifiedAt); ok {
			at = t
			if t.After(now.Add(incidentClockSkew)) {
				ve.Add("classifiedAt", CodeInvalid, *in.ClassifiedAt, "classifiedAt must not be in the future")
			}
		}
	}
	nonNeg := func(field string, v *int64) {
		if v != nil && *v < 0 {
			ve.Add(field, CodeInvalid, *v, field+" must not be negative")
		}
	}
	nonNegF := func(field string, v *float64) {
		if v != nil && *v < 0 {
			ve.Add(field, CodeInvalid, *v, field+" must not be negative")
		}
	}
	nonNeg("clientsAffected", in.ClientsAffected)
	nonNeg("clientsTotal", in.ClientsTotal)
	nonNeg("counterpartsAffected", in.CounterpartsAffected)
	nonNeg("counterpartsTotal", in.CounterpartsTotal)
	nonNeg("transactionsAffected", in.TransactionsAffected)
	nonNeg("dailyAverageTransactions", in.DailyAverageTransactions)
	nonNegF("transactionValueAffected", in.TransactionValueAffected)
	nonNegF("dailyAverageTransactionValue", in.DailyAverageTransactionValue)
	nonNegF("durationHours", in.DurationHours)
	nonNegF("downtimeHours", in.DowntimeHours)
	nonNegF("economicImpactEur", in.EconomicImpactEUR)
	if in.MemberStatesAffected != nil {
		ms := cleanIDs(in.MemberStatesAffected)
		for i, c := range ms {
			ms[i] = strings.ToUpper(c)
			if !InEEA(ms[i]) {
				ve.Add("memberStatesAffected", CodeInvalid, c, "memberStatesAffected must be ISO codes of EU/EEA member states")
			}
		}
		in.MemberStatesAffected = cleanIDs(ms)
	}
	if in.Note != nil {
		in.Note = Ptr(strings.TrimSpace(*in.Note))
		maxLen(ve, "note", *in.Note, maxIncidentText)
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	return a.changeIncident(ctx, p, id, "classify incident %s", func(ctx context.Context, before *Incident) (*Incident, *Mutation, error) {
		if at.Before(before.AwareAt) {
			return nil, nil, Invalid("classifiedAt", CodeInvalid, at.Format(time.RFC3339), "classifiedAt must not be before the incident's awareAt")
		}
		criteria, critical, met, major, reasoning := ClassifyDORA(in)
		in.ClassifiedAt = Ptr(at.Format(time.RFC3339Nano))
		c := &DORAClassification{Input: in, Criteria: criteria, CriticalServices: critical, ThresholdsMet: met, Major: major,
			Reasoning: reasoning, ClassifiedAt: at, ClassifiedBy: ActorRef{Type: p.ActorType(), ID: p.ActorID()}}
		if major != nil && *major {
			c.MajorSince = &at
			if prev := before.DORAClassification; prev != nil && prev.MajorSince != nil && prev.MajorSince.Before(at) {
				c.MajorSince = prev.MajorSince // the clock started at the first classification as major
			}
		}
		inc := *before
		inc.SetLinks(before.Links())
		inc.DORAClassification = c
		inc.UpdatedAt = a.Now()
		if err := a.store.UpdateIncident(ctx, p.OrgID, &inc); err != nil {
			return nil, nil, err
		}
		result := "undetermined"
		if major != nil {
			result = map[bool]string{true: "major", false: "not major"}[*major]
		}
		if err := a.timeline(ctx, p, id, at, "classification", "DORA classification: "+result+". "+strings.Join(reasoning, " ")); err != nil {
			return nil, nil, err
		}
		return &inc, &Mutation{Action: "classified"}, nil
	})
}
